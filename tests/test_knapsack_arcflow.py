"""The arc-flow search for the multiple knapsack (odrp/kinds/knapsack/exact/arcflow.py).

Every expected number comes from outside the model: brute force over all assignments scored by the
kind's evaluator (tests/knapsack_bruteforce.py), hand arithmetic, or Dell'Amico et al.'s published optima.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import arcflow, bounds
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum, solutions
from tests.test_knapsack_cli import one_line_error

DATA = Path(__file__).resolve().parent / "data" / "external" / "mkp_dellamico_small"
MKP = KINDS["mkp"]

# Hand example: weights 5, 4, 3, 3 (total 15) do not all fit in 6 + 7 = 13. Leaving out the item of
# profit 5 packs 5 | 4 + 3 = 7 for 10 + 7 + 6 = 23; leaving out 6 (also weight 3) gives 22, leaving
# out 7 gives 5 | 3 + 3 for 21, leaving out 10 gives 18: the optimum is 23.
HAND = {"problem": "mkp", "name": "hand", "profits": [10, 7, 6, 5], "weights": [5, 4, 3, 3], "capacities": [6, 7]}


def load(data: dict):
    return MKP.load(data, data.get("name", "test"))


def tiny_cases() -> list[dict]:
    cases = [
        gen.mkp(seed=seed, items=6 + seed % 3, knapsacks=2 + seed % 2, correlation=corr, max_weight=20)
        for seed in range(1, 7)
        for corr in ("uncorrelated", "weak", "strong")
    ]
    cases += [
        # identical items (one class of three copies), a zero-weight item, a non-positive profit, an item
        # heavier than every knapsack, equal capacities
        {"problem": "mkp", "profits": [4, 4, 4, 3, 2, -1, 9], "weights": [3, 3, 3, 0, 2, 1, 9], "capacities": [5, 5]},
        # fractional profits: the stages stop at the incumbent itself, not one unit above it
        {"problem": "mkp", "profits": [2.5, 1.25, 3.75, 0.5], "weights": [4, 2, 5, 1], "capacities": [6, 3]},
        {"problem": "kp", "profits": [5, 4, 3, 7], "weights": [4, 3, 2, 5], "capacity": 9},
    ]
    return cases


@pytest.mark.parametrize("data", tiny_cases(), ids=lambda d: d.get("name", d["problem"]))
def test_arcflow_equals_brute_force(data):
    kind = KINDS[data["problem"]]
    instance = kind.load(data, "tiny")
    result = run_method(kind, instance, "exact", formulation="arcflow")
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(optimum(data["problem"], instance), abs=1e-9)
    assert result.metrics["method_stats"]["formulation"] == "arcflow"


def test_hand_example():
    result = run_method(MKP, load(HAND), "exact", formulation="arcflow")
    assert result.status == "optimal" and result.objective == 23
    assert result.solution["assignment"][3] is None  # the item of profit 5 stays out


def test_the_bound_holds_for_any_multipliers():
    """(LR) is an upper bound whatever beta and gamma are (lambda >= 0, N >= the most items packed)."""
    rng = np.random.default_rng(7)
    for seed in range(1, 6):
        instance = load(gen.mkp(seed=seed, items=7, knapsacks=3, correlation="weak", max_weight=20))
        best = optimum("mkp", instance)
        most = max(
            sum(k is not None for k in s["assignment"])
            for s in solutions("mkp", instance)
            if MKP.evaluate(instance, s, "<brute force>").feasible
        )
        mkp = arcflow.mkp_of(family_of(instance))
        for _ in range(20):
            beta, gamma = rng.normal(0, 20, mkp.n), rng.normal(0, 20, mkp.n)
            bound = arcflow.lagrangian_bound(mkp, beta, gamma, float(rng.uniform(0, 30)), most)
            assert bound.value >= best - 1e-9


def test_every_pattern_is_one_path():
    """Unreduced (delta = inf), the layered graph has one path per pattern of weight <= the largest capacity."""
    data = {"problem": "mkp", "profits": [3, 5, 4, 6, 2], "weights": [4, 3, 3, 5, 2], "capacities": [7, 9]}
    mkp = arcflow.mkp_of(family_of(load(data)))
    flat = arcflow.lagrangian_bound(mkp, np.zeros(mkp.n), np.zeros(mkp.n), 0.0, mkp.n)
    graph = arcflow.build_graph(mkp, flat, math.inf)
    paths = np.zeros(graph.n_nodes)
    paths[0] = 1
    ends = graph.cls < 0
    for a in np.argsort(graph.tail, kind="stable"):  # node ids grow along every arc
        if graph.tail[a] not in graph.terminal_weight:  # leave the loss arcs between terminals out
            paths[graph.head[a]] += paths[graph.tail[a]]
    by_weight = {graph.terminal_weight[v]: paths[v] for v in graph.terminal_weight}
    subsets = [s for s in itertools.product((0, 1), repeat=5) if np.dot(s, data["weights"]) <= 9]
    expected = {u: sum(1 for s in subsets if np.dot(s, data["weights"]) == u) for u in range(10)}
    assert {u: n for u, n in by_weight.items() if n} == {u: n for u, n in expected.items() if n}
    assert ends.any()


def test_thresholds():
    assert arcflow.thresholds(100, 90, True) == [100, 99, 96, 90]
    assert arcflow.thresholds(100, 100, True) == [100]
    assert arcflow.thresholds(10.5, 9.25, False) == [10.5, 9.25]


def published() -> dict[str, float]:
    return {r["instance"]: float(r["optimum"]) for r in csv.DictReader((DATA / "optima.csv").open())}


@pytest.mark.parametrize(
    "name", ["probT1_0U_R50_T002_M010_N0020_seed01.txt", "probT1_0U_R50_T002_M020_N0040_seed06.txt"]
)
def test_published_optima(name):
    data = knapsack_io.read("dellamico-mkp", DATA / name)[0]
    result = run_method(MKP, load(data), "exact", formulation="arcflow", time_limit=120)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == published()[name]


def test_time_limit_keeps_a_valid_bound():
    name = "probT1_0U_R50_T002_M020_N0040_seed06.txt"
    data = knapsack_io.read("dellamico-mkp", DATA / name)[0]
    result = run_method(MKP, load(data), "exact", formulation="arcflow", time_limit=0.01)
    assert result.status in ("time_limit", "optimal") and result.verified
    assert result.objective <= published()[name] <= result.bound + 1e-9


def test_surrogate_fixing_keeps_the_optimum():
    """All profit on the surrogate part: the bound is the surrogate knapsack of the items that fit some
    knapsack, and at the published optimum's slack the class bounds still admit an optimal packing."""
    name = "probT1_0U_R50_T002_M010_N0020_seed01.txt"
    data = knapsack_io.read("dellamico-mkp", DATA / name)[0]
    family = bounds.reduce_capacities(family_of(load(data)))
    fitting = [j for j, w in enumerate(data["weights"]) if w <= max(family.capacity[0])]
    light = {**data, "profits": [data["profits"][j] for j in fitting], "weights": [data["weights"][j] for j in fitting]}
    light["capacities"] = family.capacity[0].tolist()
    mkp = arcflow.mkp_of(family)
    bound = arcflow.lagrangian_bound(mkp, mkp.profit.copy(), np.zeros(mkp.n), 0.0, mkp.n)
    assert bound.value == bounds.surrogate_bound(family_of(load(light)))  # bounds.py's own dynamic programme
    assert published()[name] <= bound.value < bounds.surrogate_bound(family)  # the heavy items made it 9 406
    result = run_method(MKP, load(data), "exact", formulation="compact")
    allowed = arcflow.class_bounds(mkp, bound, bound.value - published()[name])
    packed = np.array([result.solution["assignment"][int(c)] is not None for c in mkp.family_class])
    assert np.all(allowed[:, 0] <= packed) and np.all(packed <= allowed[:, 1])


def test_auto_takes_arcflow_for_mkp_with_highs_only():
    # one thread: no race beside the textbook model, whose proof could come first and answer for the run
    instance = load(HAND)
    assert run_method(MKP, instance, "exact", threads=1).metrics["method_stats"]["formulation"] == "arcflow"
    with_cbc = run_method(MKP, instance, "exact", solver="cbc", threads=1)
    assert with_cbc.metrics["method_stats"]["formulation"] == "compact"


def test_cli(run_cli, tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(HAND))
    proc = run_cli("solve", str(path), "--formulation", "arcflow", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["status"], result["objective"], result["verified"]) == ("optimal", 23, True)
    one_line_error(run_cli("solve", str(path), "--formulation", "arcflow", "--solver", "cbc"), "--solver", "highs")
    fractional = tmp_path / "fractional.json"
    fractional.write_text(json.dumps({**HAND, "weights": [5, 4, 3, 2.5]}))
    one_line_error(run_cli("solve", str(fractional), "--formulation", "arcflow"), "--formulation arcflow", "integer")
    qkp = tmp_path / "qkp.json"
    qkp.write_text(json.dumps({"problem": "qkp", "profits": [[1, 2], [2, 3]], "weights": [1, 1], "capacity": 1}))
    one_line_error(run_cli("solve", str(qkp), "--formulation", "arcflow"), "arcflow", "does not apply")
