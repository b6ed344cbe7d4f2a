"""The packing step of the arc-flow search (odrp/kinds/knapsack/exact/packing.py and arcflow.packing_step).

Every expected answer comes from outside the search: brute force over every assignment of the copies
to the knapsacks (written here, independent of the search), hand arithmetic, brute force over all
MKP solutions scored by the kind's evaluator (tests/knapsack_bruteforce.py), or Dell'Amico et al.'s
published optima.
"""

from __future__ import annotations

import csv
import itertools
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import packing
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings, KnapsackSettings
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum

DATA = Path(__file__).resolve().parent / "data" / "mkp_packing"
MKP = KINDS["mkp"]


def packable(weights: list[int], counts: list[int], capacities: list[int]) -> bool:
    """Brute force: some assignment of every copy to a knapsack keeps every load within its capacity."""
    copies = [w for w, q in zip(weights, counts, strict=True) for _ in range(q)]
    for choice in itertools.product(range(len(capacities)), repeat=len(copies)):
        loads = [0] * len(capacities)
        for w, k in zip(copies, choice, strict=True):
            loads[k] += w
        if all(load <= c for load, c in zip(loads, capacities, strict=True)):
            return True
    return False


def check_packing(result: packing.Packing, weights: list[int], counts: list[int], capacities: list[int]) -> None:
    """A packed answer places every copy once and keeps every knapsack within capacity (checked here)."""
    assert result.counts is not None
    assert result.counts.shape == (len(weights), len(capacities))
    assert result.counts.sum(axis=1).tolist() == list(counts)
    loads = np.asarray(weights) @ result.counts
    assert all(load <= c for load, c in zip(loads.tolist(), capacities, strict=True))


def random_cases() -> list[tuple[list[int], list[int], list[int]]]:
    """Tiny packings near the edge: total weight within a few units of the total capacity, repeated
    weights (counts > 1) and repeated capacities included."""
    rng = random.Random(11)
    cases = []
    for _ in range(60):
        m = rng.choice((2, 3, 3))
        weights = [rng.randint(1, 9) for _ in range(rng.randint(2, 4))]
        counts = [rng.choice((1, 1, 2)) for _ in weights]
        total = sum(w * q for w, q in zip(weights, counts, strict=True))
        target = total + rng.randint(-1, 3)  # the total capacity: from one unit short to three to spare
        cuts = sorted(rng.sample(range(1, max(target, m)), m - 1))
        capacities = [b - a for a, b in zip([0, *cuts], [*cuts, target], strict=True)]
        if rng.random() < 0.3:
            capacities[-1] = capacities[0]  # two equal capacities
        cases.append((weights, counts, capacities))
    return cases


@pytest.mark.parametrize("case", random_cases(), ids=lambda c: f"{c[0]}x{c[1]}->{c[2]}")
def test_pack_equals_brute_force(case):
    weights, counts, capacities = case
    expected = packable(weights, counts, capacities)
    values = [random.Random(sum(weights)).uniform(-3, 10) for _ in weights]  # any values keep it exact
    for result in (packing.pack(weights, counts, capacities), packing.pack(weights, counts, capacities, values)):
        assert result.status == ("packed" if expected else "impossible")
        if expected:
            check_packing(result, weights, counts, capacities)


def test_cases_cover_both_answers():
    answers = [packable(*case) for case in random_cases()]
    assert 10 <= sum(answers) <= len(answers) - 10


def test_hand_packings():
    # three copies of 4 in two knapsacks of 6: 12 <= 12 in all, but a knapsack of 6 holds one 4 only
    assert packing.pack([4], [3], [6, 6]).status == "impossible"
    # 3 + 3 | 4 + 2 fills 6 | 6 exactly
    result = packing.pack([3, 4, 2], [2, 1, 1], [6, 6])
    assert result.status == "packed"
    check_packing(result, [3, 4, 2], [2, 1, 1], [6, 6])
    # equal capacities and equal items: 5 + 2 + 1 | 5 + 2 + 1 is the only way to fill 8 | 8
    result = packing.pack([5, 2, 1], [2, 2, 2], [8, 8])
    assert result.status == "packed" and result.counts.tolist() == [[1, 1], [1, 1], [1, 1]]
    # a copy heavier than every knapsack, and an empty item set
    assert packing.pack([7, 1], [1, 1], [6, 6]).status == "impossible"
    assert packing.pack([3], [0], [2]).status == "packed"


def test_gap_budget_refutes_at_the_root():
    """Values 1 per copy of 4 in knapsacks 6, 6: each knapsack's best value is 1 (one copy fits), so
    every packing has gaps summing to 1 + 1 - 3 = -1 < 0: impossible with one node (the root)."""
    result = packing.pack([4], [3], [6, 6], values=[1.0])
    assert result.status == "impossible" and result.nodes == 1


def test_node_limit_leaves_it_undecided():
    # one node per knapsack filled plus the root: a packing of three knapsacks needs four nodes
    assert packing.pack([2, 3], [2, 1], [2, 2, 3], node_limit=2).status == "unknown"
    assert packing.pack([2, 3], [2, 1], [2, 2, 3], node_limit=4).status == "packed"


# ------------------------------------------------------------------- through the arc-flow search


@pytest.mark.parametrize("seed", [229, 231])
def test_packing_step_refutes_then_packs(seed):
    """Generated MKPs where the packing step first shows that no item set worth the threshold packs,
    then packs the best set worth a lower one; the optimum is the brute force's. (The refill search is
    switched off: on these it finds the optimum first, and the packing step then only refutes.)"""
    no_refill = replace(ArcFlowSettings(), quick_refill_seconds=0.0, refill_seconds=0.0)
    data = gen.mkp(seed=seed, items=8, knapsacks=3, correlation="uncorrelated", max_weight=20)
    instance = MKP.load(data, "tiny")
    result = run_method(MKP, instance, "exact", formulation="arcflow", options=KnapsackSettings(arcflow=no_refill))
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == optimum("mkp", instance)
    stages = result.metrics["method_stats"]["stages"]
    assert next(s["status"] for s in stages if "packing_sets" in s) == "infeasible"
    assert stages[-1]["status"] == "optimal" and "packing_sets" in stages[-1]


def published() -> dict[str, float]:
    return {r["instance"]: float(r["optimum"]) for r in csv.DictReader((DATA / "optima.csv").open())}


def solve_published(name: str):
    data = knapsack_io.read("dellamico-mkp", DATA / name)[0]
    result = run_method(MKP, MKP.load(data, data["name"]), "exact", formulation="arcflow", time_limit=120)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == published()[name]
    return result.metrics["method_stats"]["stages"]


def test_published_optimum_found_by_packing():
    """m = 10, n = 60: the bound equals the optimum and fixes the item set; the packing step packs it."""
    stages = solve_published("probT1_0U_R50_T002_M010_N0060_seed01.txt")
    assert len(stages) == 1 and stages[0]["packing_sets"] == 1 and stages[0]["status"] == "optimal"


def test_published_optimum_proven_by_refutations():
    """m = 10, n = 40: every threshold above the incumbent is refuted by the packing step."""
    stages = solve_published("probT1_1W_R50_T002_M010_N0040_seed09.txt")
    assert stages and all("packing_sets" in s and s["status"] == "infeasible" for s in stages)
