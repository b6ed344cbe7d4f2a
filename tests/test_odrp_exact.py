"""Exact ODRP against brute force: both formulations, both solvers, every weight profile."""

from __future__ import annotations

import copy
import json

import pytest

from odrp.kinds.replication.generators import debs2015, random_instance
from odrp.kinds.replication.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.bruteforce import odrp_optimum
from tests.test_odrp_evaluator import TINY

ODRP = KINDS["odrp"]

# (seed, weights profile, network metric): tiny random instances that brute force can enumerate
CASES = [
    (1, "response_time", "traffic"),
    (2, "cost", "traffic"),
    (3, "availability", "traffic"),
    (4, "network", "traffic"),
    (5, "network", "usage"),
    (6, "network", "elastic_energy"),
    (7, "balanced", "traffic"),
    (8, "balanced", "usage"),
]


def tiny(
    seed: int, profile: str, metric: str, max_replicas: int = 2, pinned: str = "source", operators: int = 5
) -> dict:
    return random_instance(
        seed=seed,
        operators=operators,
        nodes=3,
        max_replicas=max_replicas,
        slots=4,
        load=1.0,
        weights_profile=profile,
        network_metric=metric,
        pinned=pinned,
    )


@pytest.mark.parametrize(("seed", "profile", "metric"), CASES)
@pytest.mark.parametrize(("formulation", "solver"), [("compact", "highs"), ("compact", "cbc"), ("paper", "highs")])
def test_exact_equals_brute_force(seed, profile, metric, formulation, solver):
    inst = load(tiny(seed, profile, metric))
    best, feasible = odrp_optimum(inst)
    assert feasible > 0
    result = run_method(ODRP, inst, "exact", solver=solver, formulation=formulation)
    assert result.status == "optimal", result.message
    assert result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert result.bound == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(("seed", "profile"), [(31, "response_time"), (32, "balanced"), (33, "cost")])
def test_three_replicas_and_pinned_sinks(seed, profile):
    """k = 3 (replica levels 1..3 of the compact model), sources and sinks pinned."""
    inst = load(tiny(seed, profile, "traffic", max_replicas=3, pinned="endpoints", operators=4))
    best, _ = odrp_optimum(inst)
    for formulation in ("compact", "paper"):
        result = run_method(ODRP, inst, "exact", formulation=formulation)
        assert result.status == "optimal" and result.verified
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", [11, 12])
def test_paper_formulation_with_cbc(seed):
    inst = load(tiny(seed, "balanced", "traffic"))
    best, _ = odrp_optimum(inst)
    result = run_method(ODRP, inst, "exact", solver="cbc", formulation="paper")
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("seed", [21, 22, 23, 24, 25, 26])
def test_odp_special_case(seed):
    """ODP (every k_i = 1) comes out of the same code and never beats ODRP on the same instance."""
    odrp_data = tiny(seed, "response_time", "traffic", max_replicas=2)
    odp_data = copy.deepcopy(odrp_data)
    for op in odp_data["operators"]:
        op["max_replicas"] = 1
    odp = load(odp_data)
    best, _ = odrp_optimum(odp)
    result = run_method(ODRP, odp, "exact")
    if best is None:  # some operator cannot be stable on one replica, or capacity is short
        assert result.status == "infeasible"
        return
    assert result.status == "optimal" and result.verified
    assert all(count == 1 for count in result.metrics["replicas"].values())
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    with_replication = run_method(ODRP, load(odrp_data), "exact")
    assert with_replication.objective >= result.objective - 1e-9


def test_tiny_hand_instance_optimum():
    """The evaluator test's instance: its optimum by brute force, and the model agrees."""
    inst = load(TINY)
    best, feasible = odrp_optimum(inst)
    for formulation in ("compact", "paper"):
        result = run_method(ODRP, inst, "exact", formulation=formulation)
        assert result.status == "optimal" and result.verified
        assert result.objective == pytest.approx(best, rel=1e-9)
    # src sits on a; op in {a}: snk on b; {b}: snk on a or b; {a,b}: snk on b; {b,b}: snk on a;
    # {a,a} overfills a. Five feasible placements.
    assert feasible == 5


@pytest.mark.parametrize("solver", ["highs", "cbc"])
@pytest.mark.parametrize("formulation", ["compact", "paper"])
def test_infeasible_capacity_is_a_result(solver, formulation):
    data = copy.deepcopy(TINY)
    data["nodes"][0]["capacity"] = 1
    data["nodes"][1]["capacity"] = 1  # three operators, two slots
    result = run_method(ODRP, load(data), "exact", solver=solver, formulation=formulation)
    assert result.status == "infeasible"
    assert result.objective is None and result.solution is None and not result.verified


def test_unstable_operator_is_infeasible_without_a_solve():
    data = copy.deepcopy(TINY)
    data["operators"][1]["service_rate"] = 4  # 10 t/s over at most 2 replicas of mu = 4
    result = run_method(ODRP, load(data), "exact")
    assert result.status == "infeasible"
    assert "op" in result.message


def test_debs_compact_proves_the_optimum_of_a_small_case():
    """DEBS at 80 t/s, response time: the optimum replicates partialRank (2480 t/s > mu = 2371)."""
    result = run_method(ODRP, load(debs2015(80, "response_time")), "exact")
    assert result.status == "optimal" and result.verified
    assert result.gap <= 1e-6
    assert result.metrics["replicas"]["partialRank"] >= 2
    json.dumps(result.to_dict())  # the envelope is valid JSON


def test_time_limit_returns_incumbent_bound_and_gap():
    inst = load(random_instance(seed=3, operators=16, nodes=12, max_replicas=3, weights_profile="response_time"))
    result = run_method(ODRP, inst, "exact", time_limit=2)
    assert result.status == "time_limit"
    assert result.runtime_s < 30
    if result.objective is not None:  # an incumbent was found in time
        assert result.verified
        # the solver's bound, unless the time ran out before the model reached the solver
        assert result.bound is None or result.bound >= result.objective - 1e-9
        assert result.bound is None or result.gap > 0  # no bound, no gap


def test_cbc_time_limit_without_an_incumbent_returns_no_solution_and_its_bound():
    """CBC stopped by its time limit before any incumbent still hands Pyomo the LP relaxation's
    values (termination intermediateNonInteger); they are no placement and must not come back as
    one. 20 operators on 12 nodes, balanced weights: CBC's preprocessing alone outlasts 1 s, and when
    the limit strikes inside it CBC says "Pre-processing says infeasible" of this feasible model (with
    2 s it ends with a bound and no incumbent): no proof of infeasibility either."""
    inst = load(random_instance(seed=1, operators=20, nodes=12, max_replicas=3, weights_profile="balanced"))
    result = run_method(ODRP, inst, "exact", solver="cbc", time_limit=1)
    assert result.status == "time_limit", result.message
    if result.objective is None:
        assert result.solution is None
    else:  # an incumbent after all (a much faster machine): then it is a real placement
        assert result.verified
    if result.bound is not None:  # a bound on F, at least the incumbent's value
        assert result.bound >= (result.objective or 0.0) - 1e-9


def debs_on_four_nodes(rate: float, profile: str) -> dict:
    data = debs2015(rate, profile)
    keep = {"w1", "w2", "w3", "w4"}
    data["nodes"] = [n for n in data["nodes"] if n["id"] in keep]
    data["links"] = [link for link in data["links"] if link["from"] in keep and link["to"] in keep]
    for op in data["operators"]:
        op.setdefault("max_replicas", 1)
    return data


@pytest.mark.parametrize("profile", ["response_time", "cost", "balanced"])
def test_compact_equals_paper_on_debs_with_four_nodes(profile):
    """The paper's DEBS application (8 operators, k = 3) on four of its nodes: both models agree."""
    inst = load(debs_on_four_nodes(120, profile))
    compact = run_method(ODRP, inst, "exact", formulation="compact")
    paper = run_method(ODRP, inst, "exact", formulation="paper")
    assert compact.status == paper.status == "optimal"
    assert compact.verified and paper.verified
    assert compact.objective == pytest.approx(paper.objective, rel=1e-6)


# ------------------------------------------------------------------ the run's incumbent, progress

COMPACT = {"textbook_nonzeros": 0}  # auto: the compact model even on tiny instances


@pytest.mark.parametrize(("seed", "profile"), [(7, "balanced"), (1, "response_time")])
def test_an_incumbent_replaces_the_start_and_the_optimum_stays(seed, profile):
    """The caller's incumbent is the compact model's start (no local search of its own) and the
    response-time model's ceiling; an infeasible one is ignored. The optimum is brute force's."""
    inst = load(tiny(seed, profile, "traffic"))
    best, _ = odrp_optimum(inst)
    greedy = run_method(ODRP, inst, "odrp_greedy")
    assert greedy.verified
    settings = ODRP.settings(**COMPACT)
    outcome = ODRP.exact(inst, incumbent=greedy.solution, settings=settings)
    assert outcome.run.status == "optimal" and outcome.run.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert outcome.stats["start_source"] == "incumbent" or outcome.stats["start_objective"] >= greedy.objective
    if profile == "balanced":
        assert outcome.stats["start_source"] == "incumbent" and "start_s" not in outcome.stats
    crowded = {"placement": {op: {inst.nodes[0]: 1} for op in inst.operators}}  # every operator on one node
    assert not ODRP.evaluate(inst, crowded, "test").feasible
    ignored = ODRP.exact(inst, incumbent=crowded, settings=settings)
    assert ignored.run.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert ignored.stats.get("start_source") != "incumbent"


@pytest.mark.parametrize(("seed", "profile"), [(7, "balanced"), (8, "balanced"), (1, "response_time")])
def test_the_models_incumbents_and_bounds_leave_the_run(seed, profile):
    """Inside a watched run every incumbent the exact method reports is feasible, they only improve,
    the last is the optimum, and every bound reported is a bound of the brute-force optimum."""
    from odrp.core import progress

    inst = load(tiny(seed, profile, "traffic"))
    best, _ = odrp_optimum(inst)
    messages: list[tuple[str, object]] = []
    with progress.watching(ODRP.evaluate, inst, "max", messages.append):
        outcome = ODRP.exact(inst, settings=ODRP.settings(**COMPACT))
    assert outcome.run.status == "optimal"
    incumbents = [payload[1] for kind, payload in messages if kind == "incumbent"]
    bounds = [payload for kind, payload in messages if kind == "bound"]
    assert incumbents and incumbents == sorted(incumbents)
    assert incumbents[-1] == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert bounds and all(b >= best - 1e-6 for b in bounds)
