"""The pathmap kind's textbook model and the default ``auto`` (layered flow): brute force, agreement, routes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from odrp.core.memory import ModelTooLarge, memory_budget
from odrp.kinds.pathmap.generators import ba_instance, bimodal_instance
from odrp.kinds.pathmap.instance import load
from odrp.kinds.pathmap.routes import OutOfTime, routes, weights
from odrp.registry import KINDS
from odrp.run import run_method
from tests.pathmap_cases import brute_force, random_tiny

PATHMAP = KINDS["pathmap"]


@pytest.mark.parametrize("seed", range(12))
def test_textbook_equals_brute_force(seed):
    inst = load(random_tiny(seed, servers=4 + seed % 2, components=2 + seed % 2))
    expected = brute_force(inst)
    solver = "cbc" if seed % 4 == 0 else "highs"
    result = run_method(PATHMAP, inst, "exact", solver=solver, formulation="textbook")
    if expected is None:
        assert result.status == "infeasible"
    else:
        assert result.status == "optimal" and result.verified, result.message
        assert result.objective == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    "data",
    [ba_instance(seed=41, servers=30, components=5), bimodal_instance(seed=42, servers=40, components=5)],
)
def test_default_equals_the_textbook_optimum(data):
    inst = load(data)
    default = run_method(PATHMAP, inst, "exact")
    textbook_run = run_method(PATHMAP, inst, "exact", formulation="textbook")
    assert default.status == textbook_run.status
    if default.status == "optimal":
        assert default.verified and textbook_run.verified
        assert default.objective == pytest.approx(textbook_run.objective, abs=1e-9)


@pytest.mark.parametrize("formulation", ["auto", "textbook"])
def test_a_model_over_the_memory_budget_is_refused(formulation):
    inst = load(ba_instance(seed=43, servers=30, components=5))
    with memory_budget(10_000), pytest.raises(ModelTooLarge, match="--memory-limit"):
        run_method(PATHMAP, inst, "exact", formulation=formulation)


def naive_routes(w: np.ndarray, hops: int, start: int) -> np.ndarray:
    """Least costs from ``start`` with at most ``hops`` links, by plain Bellman-Ford rounds."""
    n = w.shape[0]
    best = np.full(n, np.inf)
    best[start] = 0.0
    for _ in range(hops):
        nxt = best.copy()
        for a in range(n):
            for v in range(n):
                nxt[v] = min(nxt[v], best[a] + w[a, v])
        best = nxt
    return best


@pytest.mark.parametrize("seed", [1, 2])
def test_routes_from_some_start_servers_equal_plain_bellman_ford(seed):
    inst = load(ba_instance(seed=seed, servers=25, components=4))
    w = weights(inst, inst.bandwidth[1])
    rows = [0, 3, 7]
    table = routes(w, inst.max_hops, rows)
    for s in rows:
        assert np.array_equal(table.cost[s], naive_routes(w, inst.max_hops, s))
        for v in np.flatnonzero(np.isfinite(table.cost[s])):
            path = table.path(s, int(v))
            assert path[0] == s and path[-1] == v and len(path) - 1 <= inst.max_hops
            assert sum(w[a, b] for a, b in itertools.pairwise(path)) == pytest.approx(table.cost[s, v])
    assert np.isinf(table.cost[1, 2])  # a start server not asked for: no routes


def test_routes_stop_at_the_deadline():
    inst = load(ba_instance(seed=1, servers=25, components=4))
    with pytest.raises(OutOfTime):
        routes(weights(inst, None), inst.max_hops, deadline=0.0)
