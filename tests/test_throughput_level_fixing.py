"""Reduced-cost level fixing (``ConfigurationLP.fixed_levels``) against brute force on tiny instances:
a level it removes is one that no placement with counts in the node sustains rho with."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from odrp.models.throughput import config_bound, level_search
from odrp.problems.throughput import evaluate_counts
from tests.test_throughput_exact import tiny


def _best_by_vector(inst) -> dict[tuple[int, ...], float]:
    """The best rate of every count vector (N_1..N_C), over every placement, scored by the evaluator
    (written apart from the models: every per-machine count vector of every component)."""
    ranges = [range((inst.max_tasks[w] or 0) + 1) for w in range(inst.n_machines)]
    vectors = [v for v in itertools.product(*ranges) if sum(v) >= 1]
    best: dict[tuple[int, ...], float] = {}
    for combo in itertools.product(vectors, repeat=inst.n_components):
        ev = evaluate_counts(inst, [{w: k for w, k in enumerate(v) if k} for v in combo])
        if ev.feasible:
            key = tuple(sum(v) for v in combo)
            best[key] = max(best.get(key, -math.inf), ev.objective)
    return best


def _sustained(best: dict[tuple[int, ...], float], rho: float, box: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """(c, n) for every level n of c that some placement with counts in ``box`` has at rate >= rho."""
    return {
        (c, n)
        for vector, rate in best.items()
        if rate >= rho and all(a <= m <= b for m, (a, b) in zip(vector, box, strict=True))
        for c, n in enumerate(vector)
    }


@pytest.mark.parametrize("seed", range(8))
def test_fixing_never_removes_a_level_some_placement_sustains(seed):
    inst = tiny(seed)
    best = _best_by_vector(inst)
    optimum = max(best.values())
    rng = random.Random(seed)
    for scale in (1.0, 1 - 1e-3, 0.97, 0.9, 0.8):
        rho = optimum * scale
        for box in [None, [(rng.randint(1, 2), rng.randint(2, 5)) for _ in range(inst.n_components)]]:
            lp = config_bound.ConfigurationLP(inst, rho, within=box)
            if lp.refutes() is not False:
                continue
            kept = lp.fixed_levels()
            node = [(1, 99)] * inst.n_components if box is None else box
            alive = _sustained(best, rho, node)
            for c, levels in enumerate(lp.pricing.levels):
                for n in levels:
                    if n not in kept[c]:
                        assert (c, n) not in alive, (seed, rho, box, c, n)


def test_fixing_removes_a_level_inside_a_range():
    """tiny(5) at R*: the configuration LP does not refute the root, and the fixing removes N_2 = 3 from
    the range 2..4 (so the test above checks a removal); brute force: no placement with N_2 = 3 reaches R*."""
    inst = tiny(5)
    best = _best_by_vector(inst)
    optimum = max(best.values())
    lp = config_bound.ConfigurationLP(inst, optimum)
    assert lp.refutes() is False
    assert [list(levels) for levels in lp.pricing.levels][1] == [2, 3, 4]
    assert lp.fixed_levels()[1] == [2, 4]
    assert max(rate for vector, rate in best.items() if vector[1] == 3) < optimum


def test_runs_split_levels_into_consecutive_ranges():
    assert level_search._runs([1, 2, 3, 5, 7, 8]) == [(1, 3), (5, 5), (7, 8)]
    assert level_search._runs([4]) == [(4, 4)]
