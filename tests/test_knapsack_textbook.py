"""The textbook formulation of the knapsack family: brute force, its plain shape, its size estimate, the
default against it, and the memory budget."""

from __future__ import annotations

import math

import numpy as np
import pytest

from odrp.core.exact import model_size
from odrp.core.memory import ModelTooLarge, memory_budget
from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.exact import gap_lagrangian, textbook
from odrp.kinds.knapsack.exact.solve import solve
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force
from tests.test_knapsack_kinds import QKP, QM3DKP, TINY, agrees_with_brute_force, load


@pytest.mark.parametrize("kind", sorted(TINY))
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_textbook_equals_brute_force(kind, seed):
    instance = load(TINY[kind](seed))
    result = run_method(KINDS[kind], instance, "exact", formulation="textbook")
    agrees_with_brute_force(result, brute_force(kind, instance))
    if result.objective is not None:
        assert result.metrics["method_stats"]["formulation"] == "textbook"


@pytest.mark.parametrize("kind", ["gap", "qmkp", "qm3dkp"])
@pytest.mark.parametrize("solver", ["cbc", "cpsat"])
def test_textbook_with_other_solvers_equals_brute_force(kind, solver):
    instance = load(TINY[kind](5))
    result = run_method(KINDS[kind], instance, "exact", formulation="textbook", solver=solver)
    agrees_with_brute_force(result, brute_force(kind, instance))


def test_hand_example_qm3dkp_textbook():
    instance = load(QM3DKP)
    result = run_method(KINDS["qm3dkp"], instance, "exact", formulation="textbook")
    assert result.objective == pytest.approx(brute_force("qm3dkp", instance)) and result.verified


def test_one_binary_per_task_and_node_and_one_product_per_task_pair():
    # QM3DKP: A (2 tasks) - B (1 task), 3 nodes in racks {n1, n2} and {n3}. The textbook family has
    # one class per task (3), pairs A#0-B#0 and A#1-B#0 (2), each worth 10 / (2 * 1) = 5 on one node.
    f = textbook.family(load(QM3DKP))
    assert f.classes == (("A#0",), ("A#1",), ("B#0",))
    assert sorted(zip(f.pair_a.tolist(), f.pair_b.tolist(), strict=True)) == [(0, 2), (1, 2)]
    assert f.pair_knapsack.tolist() == [5.0, 5.0]
    model = textbook.build(f)
    assert all(model.n[c, k].is_binary() for c, k in model.n)
    assert len(model.n) == 3 * 3  # every task fits every node alone (memory 400 or 500 <= 1000)
    # node-level products: 2 pairs x 3 nodes; rack-level: 2 pairs x 1 rack of two nodes
    assert len(model.z) == 2 * 3 + 2 * 1
    for name in ("symmetry", "capacity_cut", "objective_cut", "objective_floor"):
        assert model.component(name) is None
    assert len(model.v) == 0  # no one-hot levels: every count is a binary


def test_gap_textbook_is_the_assignment_model():
    # 3 agents x 6 jobs: one binary per (agent, job) where the job fits the agent alone, 6 assignment
    # rows and at most 3 capacity rows, nothing else.
    data = gen.gap(seed=1, agents=3, jobs=6, gap_type="c")
    instance = load(data)
    fits = sum(w <= c for row, c in zip(data["weights"], data["capacities"], strict=True) for w in row)
    assert 12 <= fits < 18  # this seed has jobs too heavy for an agent: their variable is left out
    model = textbook.build(textbook.family(instance))
    size = model_size(model)
    assert size["variables"] == size["integer_variables"] == fits
    assert size["constraints"] <= 6 + 3
    estimate = textbook.size(textbook.family(instance))
    assert estimate[0] >= size["variables"] and estimate[1] >= size["constraints"]


@pytest.mark.parametrize("kind", ["qkp", "qmkp", "qm3dkp"])
def test_size_estimate_is_an_upper_bound(kind):
    instance = load(TINY[kind](1))
    f = textbook.family(instance)
    size = model_size(textbook.build(f), nonzeros=True)
    variables, constraints, nonzeros = textbook.size(f)
    assert variables >= size["variables"] and constraints >= size["constraints"] and nonzeros >= size["nonzeros"]


def test_identical_items_are_not_merged():
    # four identical items: the default merges them into one class, the textbook keeps four binaries
    data = {"problem": "mkp", "profits": [3, 3, 3, 3], "weights": [2, 2, 2, 2], "capacities": [4, 3]}
    instance = load(data)
    assert family_of(instance).n_classes == 1
    f = textbook.family(instance)
    assert f.n_classes == 4 and f.count.tolist() == [1, 1, 1, 1]
    result = run_method(KINDS["mkp"], instance, "exact", formulation="textbook")
    assert result.objective == 9  # two items in the first knapsack, one in the second


MEDIUM = {
    "kp": lambda: gen.kp(seed=11, items=40),
    "mkp": lambda: gen.mkp(seed=11, items=20, knapsacks=3),
    "gap": lambda: gen.gap(seed=11, agents=5, jobs=20, gap_type="c"),
    "mdkp": lambda: gen.mdkp(seed=11, items=25, dimensions=3),
    "qkp": lambda: gen.qkp(seed=11, items=25),
    "qmkp": lambda: gen.qmkp(seed=11, items=12, knapsacks=3),
    "qm3dkp": lambda: gen.qm3dkp(seed=11, components=5, max_parallelism=3, racks=2, nodes_per_rack=2, load=0.8),
}


@pytest.mark.parametrize("kind", sorted(MEDIUM))
def test_default_reaches_the_textbook_optimum(kind):
    instance = load(MEDIUM[kind]())
    plain = run_method(KINDS[kind], instance, "exact", formulation="textbook", time_limit=120)
    default = run_method(KINDS[kind], instance, "exact", time_limit=120)
    assert plain.status == default.status == "optimal"
    assert default.objective == pytest.approx(plain.objective, rel=1e-9, abs=1e-9)
    assert plain.verified and default.verified


def test_textbook_model_over_the_budget_is_refused():
    instance = load(gen.gap(seed=1, agents=5, jobs=30, gap_type="c"))
    with memory_budget(10_000), pytest.raises(ModelTooLarge, match="textbook model"):
        solve(instance, formulation="textbook")


def test_lagrangian_without_time_hands_over_a_valid_bound():
    # no time at all: the search stops after its first pricing and hands over a bound that still holds
    for seed, sense in ((1, "max"), (6, "min"), (8, "max")):
        instance = load(gen.gap(seed=seed, agents=3, jobs=6, gap_type="c", sense=sense))
        best = brute_force("gap", instance)
        f = family_of(instance)
        found = gap_lagrangian.solve(f, 0.0)
        assert isinstance(found, gap_lagrangian.HandOver)
        assert f.sign * (found.bound - best) >= -1e-9  # an upper bound of a max, a lower bound of a min
        assert math.isfinite(found.bound)


def test_default_gap_keeps_a_bound_when_the_lagrangian_hands_over():
    # set_limit 0: no set is ever listed, the search hands over at once; the result carries a bound
    import dataclasses

    from odrp.kinds.knapsack.exact.settings import KnapsackSettings, LagrangianSettings

    instance = load(gen.gap(seed=1, agents=3, jobs=6, gap_type="c", sense="max"))
    settings = KnapsackSettings(lagrangian=dataclasses.replace(LagrangianSettings(), set_limit=0))
    outcome = solve(instance, formulation="auto", settings=settings)
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(brute_force("gap", instance))
    assert outcome.stats["lagrangian"]["handed_over"] == "too many sets"
    assert np.isfinite(outcome.stats["objective_bound"])


@pytest.mark.parametrize("kind", ["mkp", "qkp", "qmkp", "qm3dkp"])
def test_compact_size_estimate_is_an_upper_bound(kind):
    from odrp.kinds.knapsack.exact import milp

    f = family_of(load(TINY[kind](1)))
    options = milp.Options(capacity_cuts=True)
    size = model_size(milp.build(f, options), nonzeros=True)
    variables, constraints, nonzeros = milp.size(f, options)
    assert variables >= size["variables"] and constraints >= size["constraints"] and nonzeros >= size["nonzeros"]


def test_compact_model_over_the_budget_is_refused():
    instance = load(gen.qmkp(seed=1, items=30, knapsacks=3))
    with memory_budget(10_000), pytest.raises(ModelTooLarge, match="compact knapsack model"):
        solve(instance, formulation="compact", settings=None)


def test_solver_time_keeps_a_margin_and_refuses_when_nothing_is_left():
    from odrp.kinds.knapsack.exact.solve import _solver_time

    # 60 s limit, 1 s used, 10 000 rows: margin 0.05 * 60 + 1e-4 * 10 000 = 3 + 1 = 4 s, so 55 s are left
    assert _solver_time(60.0, 1.0, "highs", {"constraints": 10_000}) == pytest.approx(55.0)
    # CP-SAT translates row by row: 4e-4 s a row, 3 + 4 = 7 s of margin
    assert _solver_time(60.0, 1.0, "cpsat", {"constraints": 10_000}) == pytest.approx(52.0)
    assert _solver_time(5.0, 4.9, "highs", {"constraints": 100}) == 0.0
    # CBC: one more second (5 - 1 - 0.25 - 1 - 0.01 = 2.74)
    assert _solver_time(5.0, 1.0, "cbc", {"constraints": 100}) == pytest.approx(2.74)
    assert _solver_time(None, 100.0, "highs", {}) is None


def test_profit_bound_by_hand():
    from odrp.kinds.knapsack.exact.bounds import profit_bound

    # QKP: linear 1 + 2 + 5 = 8, pairs p01 = 4 and p12 = 3: 15 (the optimum, capacity 2, is 10)
    assert profit_bound(family_of(load(QKP))) == 15
    # GAP min: item 0 at best 2 (agent 0), item 1 at best 1 (agent 1): 3, the optimum here
    gap = {"problem": "gap", "values": [[2, 9], [5, 1]], "weights": [[1, 1], [1, 1]], "capacities": [1, 1]}
    assert profit_bound(family_of(load(gap))) == 3
    # QM3DKP: two pairs of tasks (A#0, B#0), (A#1, B#0) worth 5 at best on one node, no linear profit
    assert profit_bound(family_of(load(QM3DKP))) == 10
    assert brute_force("qm3dkp", load(QM3DKP)) <= 10


def test_cpsat_bound_without_a_solution_is_dropped():
    from odrp.core.solvers import SolverRun, solver_version
    from odrp.kinds.knapsack.exact.solve import _trusted

    # CP-SAT answered UNKNOWN with bound 0 on a maximisation whose optimum is above 392: not a bound
    run = _trusted(SolverRun(solver_version("cpsat"), "time_limit", None, 0.0, None, 3.0))
    assert run.bound is None
    kept = _trusted(SolverRun(solver_version("cpsat"), "time_limit", 410.0, 802.0, 0.96, 3.0))
    assert kept.bound == 802.0
    assert _trusted(SolverRun(solver_version("highs"), "time_limit", None, 1080.0, None, 3.0)).bound == 1080.0
