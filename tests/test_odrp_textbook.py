"""ODRP's textbook formulation (the paper's ILP) and the default ``auto``: brute force, agreement, sizes, limits."""

from __future__ import annotations

import time

import pytest

from odrp.core.budget import Budget
from odrp.core.exact import model_size
from odrp.core.memory import ModelTooLarge, memory_budget
from odrp.core.solvers.timing import BuildClock, OutOfTime, solver_limit
from odrp.kinds.replication.exact import compact, paper, response, size
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.generators import random_instance
from odrp.kinds.replication.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.bruteforce import odrp_optimum
from tests.test_odrp_exact import tiny

ODRP = KINDS["odrp"]


@pytest.mark.parametrize(
    ("seed", "profile", "metric", "solver"),
    [
        (11, "balanced", "traffic", "highs"),
        (12, "response_time", "traffic", "highs"),
        (13, "cost", "traffic", "cbc"),
        (14, "network", "usage", "highs"),
        (15, "availability", "traffic", "cbc"),
    ],
)
def test_textbook_equals_brute_force(seed, profile, metric, solver):
    inst = load(tiny(seed, profile, metric, operators=4))
    best, feasible = odrp_optimum(inst)
    assert feasible > 0
    result = run_method(ODRP, inst, "exact", solver=solver, formulation="textbook")
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert result.metrics["method_stats"]["formulation"] == "textbook"


def test_a_node_no_replica_can_use_gets_no_capacity_row():
    """operators 3, nodes 2, seed 3: node n1 serves no operator; its capacity row (23) was a trivial True
    that Pyomo refuses, so the textbook model (and auto, which takes it at this size) raised."""
    inst = load(random_instance(seed=3, operators=3, nodes=2))
    best, _ = odrp_optimum(inst)
    for formulation in ("textbook", "auto"):
        result = run_method(ODRP, inst, "exact", formulation=formulation)
        assert result.status == "optimal" and result.verified
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


def test_paper_is_the_textbook_model():
    inst = load(tiny(16, "balanced", "traffic", operators=4))
    result = run_method(ODRP, inst, "exact", formulation="paper")
    assert result.metrics["method_stats"]["formulation"] == "textbook"
    assert result.objective == pytest.approx(odrp_optimum(inst)[0], rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", [21, 22, 23])
@pytest.mark.parametrize("profile", ["balanced", "response_time"])
def test_default_equals_the_textbook_optimum(seed, profile):
    inst = load(random_instance(seed=seed, operators=5, nodes=3, weights_profile=profile))
    textbook = run_method(ODRP, inst, "exact", formulation="textbook")
    default = run_method(ODRP, inst, "exact")
    assert textbook.status == default.status == "optimal"
    assert default.verified and textbook.verified
    assert default.metrics["method_stats"]["formulation"] == "auto"
    assert default.objective == pytest.approx(textbook.objective, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("formulation", ["textbook", "auto", "compact"])
def test_a_model_over_the_memory_budget_is_refused_before_it_is_built(formulation):
    inst = load(random_instance(seed=1, operators=6, nodes=4))
    with memory_budget(100_000), pytest.raises(ModelTooLarge, match="--memory-limit"):
        run_method(ODRP, inst, "exact", formulation=formulation)


def test_a_textbook_model_of_gigabytes_is_refused_in_no_time():
    """20 operators x 12 nodes: the paper's ILP has 2.8 M variables and 55 M nonzeros (9.4 GB resident
    when it was built); under a 4 GB budget it is refused before any of it is built."""
    inst = load(random_instance(seed=1, operators=20, nodes=12))
    started = time.perf_counter()
    with memory_budget(4 * 1024**3), pytest.raises(ModelTooLarge) as refused:
        run_method(ODRP, inst, "exact", formulation="textbook")
    assert time.perf_counter() - started < 2.0
    assert "textbook" in str(refused.value) and "variables" in str(refused.value)


@pytest.mark.parametrize(
    ("seed", "operators", "nodes", "profile"),
    [(1, 4, 3, "balanced"), (2, 5, 3, "network"), (3, 8, 5, "response_time"), (4, 12, 8, "availability")],
)
def test_size_estimates_are_near_the_built_models(seed, operators, nodes, profile):
    """The closed-form sizes are at or above the built model, and never more than twice it."""
    inst = load(random_instance(seed=seed, operators=operators, nodes=nodes, weights_profile=profile))
    settings = OdrpSettings()
    pairs = [(compact.build(inst, settings), size.compact_size(inst, settings))]
    if response.serves(inst):
        pairs.append((response.build(inst, settings), size.response_size(inst, settings)))
    if operators <= 5:
        pairs.append((paper.build(inst), size.paper_size(inst)))
    for model, (variables, constraints, nonzeros) in pairs:
        built = model_size(model, nonzeros=True)
        assert built["variables"] <= variables <= 2 * built["variables"]
        assert built["constraints"] <= constraints <= 2 * built["constraints"]
        assert 0.85 * built["nonzeros"] <= nonzeros <= 2.5 * built["nonzeros"]


def test_paper_size_counts_the_multisets_by_hand():
    """Two candidate nodes, k = 2 (both counts stable): multisets {a}, {b}, {aa}, {ab}, {bb} = 5."""
    inst = load(tiny(1, "response_time", "traffic", operators=4))
    many, nodes = size.multiset_counts(inst)
    for i in range(inst.n_operators):
        assert many[i] == len(paper.multisets(inst, i))
        assert nodes[i] == sum(len(set(ms)) for ms in paper.multisets(inst, i))


def test_textbook_build_stops_at_the_time_limit():
    """16 x 10: the paper's ILP takes longer to build than a 1 s limit; the run says so, in time."""
    inst = load(random_instance(seed=2, operators=16, nodes=10))
    started = time.perf_counter()
    result = run_method(ODRP, inst, "exact", formulation="textbook", time_limit=1.0)
    assert time.perf_counter() - started < 3.0
    assert result.status == "time_limit" and result.solution is None
    assert "building the textbook ODRP model" in result.message


def test_auto_on_cbc_returns_the_local_search_incumbent():
    """A 30 x 12 balanced instance: CBC finds no incumbent within 3 s; auto returns the local search's
    (the method alone, without the run's fast heuristics, whose placement would replace its start)."""
    inst = load(random_instance(seed=1, operators=30, nodes=12))
    result = run_method(ODRP, inst, "exact", solver="cbc", time_limit=3.0, starts=False)
    assert result.status == "time_limit" and result.verified
    assert result.metrics["method_stats"]["start_source"] == "local search"
    if result.bound is not None:
        assert result.bound >= result.objective - 1e-9


def test_the_solver_gets_what_the_hand_over_leaves():
    """10 s left, a 1 s build: HiGHS's hand-over is estimated at 2.5 s and its overrun at 0.2 s, CBC's
    at 2 s and 1 s."""
    budget = Budget(10.0, started=time.perf_counter())
    assert solver_limit(budget.left(), "highs", 1.0) == pytest.approx(10.0 - 2.5 - 0.2, abs=0.05)
    assert solver_limit(budget.left(), "cbc", 1.0) == pytest.approx(10.0 - 2.0 - 1.0, abs=0.05)
    assert solver_limit(budget.left(), "cbc", 4.1) == 0.0  # 10 - 8.2 - 1 < 1 s, CBC's least: do not start it
    assert solver_limit(budget.left(), "highs", 3.5) > 0.2  # 10 - 8.75 - 0.2 > 0.2: HiGHS may start
    assert solver_limit(None, "highs", 1.0) is None


def test_a_build_clock_past_its_deadline_stops_the_building():
    clock = BuildClock(time.perf_counter() - 1.0, "the model")
    with pytest.raises(OutOfTime, match="building the model"):
        clock.stage()
    BuildClock(None).stage()  # no deadline: never
