"""The Lagrangian search for the GAP (odrp/kinds/knapsack/exact/gap_lagrangian.py).

Every expected number comes from outside the search: brute force over all assignments scored by the
kind's evaluator (tests/knapsack_bruteforce.py), brute force over subsets and choices written here,
hand arithmetic, or the OR-Library's published optima.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import gap_lagrangian as gl
from odrp.kinds.knapsack.exact.settings import KnapsackSettings, LagrangianSettings
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum, solutions
from tests.test_knapsack_cli import one_line_error

GAP = KINDS["gap"]
DATA = Path(__file__).resolve().parent / "data" / "external" / "gap_orlib"

# Hand example, maximised: two agents of capacity 5, three items of weight 3 (agent 0) / 2 (agent 1),
# values 6, 5, 4 at agent 0 and 3, 3, 3 at agent 1. Agent 0 takes one item (two weigh 6 > 5), agent 1
# the other two (2 + 2 = 4 <= 5): the best is item 0 at agent 0, 6 + 3 + 3 = 12.
HAND = {
    "problem": "gap",
    "name": "hand",
    "sense": "max",
    "values": [[6, 5, 4], [3, 3, 3]],
    "weights": [[3, 3, 3], [2, 2, 2]],
    "capacities": [5, 5],
}


def tiny_cases() -> list[dict]:
    cases = [
        {**gen.gap(seed=seed, agents=2 + seed % 2, jobs=5 + seed % 2, gap_type=t, sense=sense), "name": f"s{seed}{t}"}
        for seed in range(1, 6)
        for t in ("c", "d")
        for sense in ("min", "max")
    ]
    cases += [
        HAND,
        # identical items (one class of three copies), a zero weight, a negative value
        {
            "problem": "gap",
            "name": "copies",
            "sense": "max",
            "values": [[4, 4, 4, 1, -2], [2, 2, 2, 5, 3]],
            "weights": [[3, 3, 3, 0, 1], [2, 2, 2, 4, 1]],
            "capacities": [6, 7],
        },
        # every item fits somewhere, but not all at once (3 + 3 + 3 > 4 + 4): infeasible
        {
            "problem": "gap",
            "name": "infeasible",
            "sense": "min",
            "values": [[1, 2, 3], [3, 2, 1]],
            "weights": [[3, 3, 3], [3, 3, 3]],
            "capacities": [4, 4],
        },
    ]
    return cases


@pytest.mark.parametrize("data", tiny_cases(), ids=lambda d: d["name"])
def test_lagrangian_equals_brute_force(data):
    instance = GAP.load(data, "tiny")
    best = optimum("gap", instance)
    result = run_method(GAP, instance, "exact", formulation="lagrangian")
    if best is None:
        assert result.status == "infeasible"
        return
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, abs=1e-9)


def test_hand_example():
    result = run_method(GAP, GAP.load(HAND, "hand"), "exact", threads=1)  # auto takes the Lagrangian search, unraced
    assert result.metrics["method_stats"]["formulation"] == "lagrangian"
    assert result.status == "optimal" and result.objective == 12
    assert result.solution["assignment"] == [0, 1, 1]


def test_handing_over_to_the_compact_model():
    """With no set allowed the search hands over at once; the compact model gets the bound floor(L)."""
    settings = KnapsackSettings(lagrangian=replace(LagrangianSettings(), set_limit=0))
    for seed in (1, 2):
        instance = GAP.load(gen.gap(seed=seed, agents=3, jobs=6, gap_type="d", sense="max"), "tiny")
        result = run_method(GAP, instance, "exact", formulation="lagrangian", options=settings)
        stats = result.metrics["method_stats"]
        assert stats["formulation"] == "compact" and stats["lagrangian"]["handed_over"] == "too many sets"
        assert stats["objective_bound"] == math.floor(stats["lagrangian"]["lagrangian_bound"] + gl.TOL)
        assert result.status == "optimal" and result.objective == optimum("gap", instance)


def test_the_bound_holds_for_any_multipliers():
    """L(u) >= every assignment's value, whatever u (brute force over all assignments)."""
    rng = np.random.default_rng(5)
    for seed in range(1, 5):
        instance = GAP.load(gen.gap(seed=seed, agents=3, jobs=6, gap_type="d", sense="max"), "tiny")
        gap = gl.gap_of(family_of(instance))
        best = optimum("gap", instance)
        assert best is not None
        for _ in range(5):
            u = rng.uniform(-30, 60, gap.n)
            bound, _ = gl.lagrangian_bound(gap, u)
            assert bound >= best - 1e-9
        found = gl.multipliers(gap, math.inf)
        assert found.bound >= best - 1e-9


def test_near_optimal_sets_are_every_set_within_the_budget():
    """Against brute force over every subset of the items: fits, and KP - value <= budget."""
    rng = random.Random(3)
    for _ in range(20):
        n, cap = rng.randint(3, 7), rng.randint(4, 15)
        values = np.array([[rng.choice([-2.5, -1, 0, 1, 2, 3.5, 4]) for _ in range(n)]])
        weights = np.array([[rng.randint(0, 7) for _ in range(n)]])
        budget = rng.choice([0.0, 0.5, 1.0, 2.5])
        table = gl.suffix_tables(values, weights, np.array([cap]))
        fitting = [
            s for r in range(n + 1) for s in itertools.combinations(range(n), r) if weights[0, list(s)].sum() <= cap
        ]
        kp = max(values[0, list(s)].sum() for s in fitting)
        assert table[0, 0, cap] == pytest.approx(kp)
        expected = {s for s in fitting if kp - values[0, list(s)].sum() <= budget + 1e-9}
        listed = gl.near_optimal_sets(table, values, weights, 0, cap, budget, 10**6)
        assert {s for _, s in listed} == expected
        assert all(g == pytest.approx(kp - values[0, list(s)].sum()) for g, s in listed)
        assert gl.near_optimal_sets(table, values, weights, 0, cap, budget, len(expected) - 1) is None


def test_exact_cover_against_brute_force():
    """One set per agent, every item once, gaps within the budget: brute force over every choice."""
    rng = random.Random(8)
    for _ in range(60):
        m, n = rng.randint(2, 3), rng.randint(3, 6)
        sets = []
        for _ in range(m):
            chosen = {tuple(sorted(rng.sample(range(n), rng.randint(0, 3)))) for _ in range(rng.randint(1, 6))}
            sets.append(sorted((rng.choice([0.0, 0.5, 1.0, 1.5]), s) for s in chosen))
        budget = rng.choice([0.0, 1.0, 2.0])
        feasible = [
            pick
            for pick in itertools.product(*sets)
            if sorted(j for _, s in pick for j in s) == list(range(n)) and sum(g for g, _ in pick) <= budget + 1e-9
        ]
        how, chosen = gl.exact_cover(sets, n, budget, 10**6)
        assert how == ("found" if feasible else "none")
        if chosen is not None:
            assert sorted(j for _, s in chosen for j in s) == list(range(n))
            assert [i for i, _ in chosen] == sorted(i for i, _ in chosen) or len({i for i, _ in chosen}) == m
            gaps = {(i, s): g for i, agent in enumerate(sets) for g, s in agent}
            assert sum(gaps[(i, s)] for i, s in chosen) <= budget + 1e-9


def test_partition_is_the_best_choice():
    """The set-partitioning MILP (the fallback of the exact cover) finds the best assignment when every
    set is listed (budget large): brute force over all assignments."""
    instance = GAP.load(gen.gap(seed=3, agents=3, jobs=5, gap_type="d", sense="max"), "tiny")
    gap = gl.gap_of(family_of(instance))
    table = gl.suffix_tables(gap.value, gap.weight, gap.capacity)
    listed = [gl.near_optimal_sets(table, gap.value, gap.weight, i, int(gap.capacity[i]), 1e9, 10**6) for i in range(3)]
    run, _ = gl.partition(gap, listed, None)
    assert run.status == "optimal" and run.objective == pytest.approx(optimum("gap", instance))
    assert len(list(solutions("gap", instance))) == 4**5  # the brute force saw every assignment


def published() -> dict[tuple[str, str], float]:
    with open(DATA / "optima.csv", newline="") as handle:
        return {(r["instance"], r["sense"]): float(r["optimum"]) for r in csv.DictReader(handle)}


@pytest.mark.parametrize("sense", ["max", "min"])
def test_published_optima(sense):
    """gap12 #1-#2 (OR-Library): the search reproduces the published optima."""
    optima = published()
    for data in knapsack_io.read("orlib-gap", DATA / "gap12.txt", sense=sense)[:2]:
        result = run_method(GAP, GAP.load(data, "gap12"), "exact", threads=1)  # the default alone, unraced
        assert result.metrics["method_stats"]["formulation"] == "lagrangian"
        assert result.status == "optimal" and result.verified
        assert result.objective == optima[(data["name"], sense)]


def test_cli_refuses_what_it_cannot_solve(run_cli, tmp_path):
    """A fractional value (the thresholds step by one) or another solver: one line, exit code 2."""
    path = tmp_path / "gap.json"
    data = {**HAND, "values": [[6.5, 5, 4], [3, 3, 3]]}
    path.write_text(json.dumps(data))
    one_line_error(run_cli("solve", str(path), "--formulation", "lagrangian"), "--formulation lagrangian", "integer")
    path.write_text(json.dumps(HAND))
    one_line_error(run_cli("solve", str(path), "--formulation", "lagrangian", "--solver", "cbc"), "--solver", "highs")
    assert json.loads(run_cli("solve", str(path), "--json").stdout)["objective"] == 12
