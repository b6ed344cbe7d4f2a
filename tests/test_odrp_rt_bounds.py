"""The response-time model, its valid inequalities and the start-based reduction, against brute force.

Every check enumerates placements and asks the evaluator (never the model) for their response
time and F. The instances are tiny random ones with pinned endpoints (so the round-trip and path
bounds bind) and tight capacities (so the reduction and the pair conflicts do something).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import Counter

import pyomo.environ as pyo
import pytest

from odrp.core.solvers import solve as run_solver
from odrp.kinds.replication.evaluator import evaluate_placement
from odrp.kinds.replication.exact import reduction, response
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.generators import debs2015, random_instance
from odrp.kinds.replication.instance import OdrpInstance, load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.bruteforce import odrp_optimum

ODRP = KINDS["odrp"]

# (seed, operators, max_replicas, slots): pinned endpoints on 3 nodes; chosen so that the
# reduction at the optimum drops candidate nodes or forbids stream node pairs (checked below)
TIGHT = [(41, 5, 3, 3), (44, 6, 2, 3), (46, 6, 2, 3), (47, 6, 2, 3), (49, 5, 3, 3), (50, 5, 3, 3)]


def tiny(seed: int, operators: int, max_replicas: int, slots: int, profile: str = "response_time") -> dict:
    data = random_instance(
        seed=seed,
        operators=operators,
        nodes=3,
        max_replicas=max_replicas,
        slots=slots,
        weights_profile="response_time" if profile == "rt_availability" else profile,
        pinned="endpoints",
    )
    if profile == "rt_availability":  # both terms of the response-time model at once
        data["objective"]["weights"] = {"response_time": 0.6, "availability": 0.4, "cost": 0.0, "network": 0.0}
    return data


def placements(inst: OdrpInstance):
    """Every placement (feasible or not): for each operator a multiset of 1..k_i candidates."""
    choices = [
        [
            dict(Counter(ms))
            for k in range(1, inst.max_replicas[i] + 1)
            for ms in itertools.combinations_with_replacement(inst.candidates[i], k)
        ]
        for i in range(inst.n_operators)
    ]
    return (list(p) for p in itertools.product(*choices))


def feasible_placements(inst: OdrpInstance):
    """(placement, evaluation) for every feasible placement."""
    for p in placements(inst):
        ev = evaluate_placement(inst, p)
        if ev.feasible:
            yield p, ev


@pytest.mark.parametrize(("seed", "operators", "max_replicas", "slots"), TIGHT)
@pytest.mark.parametrize("profile", ["response_time", "availability", "rt_availability"])
def test_response_model_equals_brute_force(seed, operators, max_replicas, slots, profile):
    inst = load(tiny(seed, operators, max_replicas, slots, profile))
    best, _ = odrp_optimum(inst)
    result = run_method(ODRP, inst, "exact")
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert result.bound == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(("seed", "operators", "max_replicas", "slots"), TIGHT[:3])
@pytest.mark.parametrize(
    ("solver", "options"),
    [
        ("cbc", {}),
        ("highs", {"local_search": False}),  # the model without start, reduction or ceiling
        ("cbc", {"local_search": False}),
    ],
)
def test_response_model_other_paths(seed, operators, max_replicas, slots, solver, options):
    inst = load(tiny(seed, operators, max_replicas, slots))
    best, _ = odrp_optimum(inst)
    result = run_method(ODRP, inst, "exact", solver=solver, options=options)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


def test_the_reduction_binds_on_the_test_instances():
    """At the optimum's response time the reduction drops nodes or pairs (so the tests above use it)."""
    removed = conflicts = excluded = 0
    for seed, operators, max_replicas, slots in TIGHT:
        inst = load(tiny(seed, operators, max_replicas, slots))
        best = min(ev.metrics["response_time"] for _, ev in feasible_placements(inst))
        out = reduction.reduce(inst, best)
        removed += out.removed
        conflicts += len(out.conflicts)
        excluded += len(out.excluded)
    assert removed > 0 and conflicts > 0 and excluded > 0


@pytest.mark.parametrize(("seed", "operators", "max_replicas", "slots"), TIGHT)
def test_path_bounds_and_reduction_keep_every_placement_as_good(seed, operators, max_replicas, slots):
    """LB(i, u) <= R of every placement using (i, u); reduce(R0) keeps every placement with R <= R0."""
    inst = load(tiny(seed, operators, max_replicas, slots))
    bound = reduction.lower_bounds(inst)
    found = list(feasible_placements(inst))
    assert found
    for p, ev in found:
        r = ev.metrics["response_time"]
        assert all(bound[i, u] <= r * (1 + 1e-12) for i, nodes in enumerate(p) for u in nodes)
        out = reduction.reduce(inst, r)  # R0 = this placement's own response time
        assert all(u in out.instance.candidates[i] for i, nodes in enumerate(p) for u in nodes)
        assert not any(u in p[i] and v in p[j] for i, u, j, v in out.conflicts)
        assert not any(u in p[i] and sum(p[i].values()) == k for i, u, k in out.excluded)


@pytest.mark.parametrize(("seed", "operators", "max_replicas", "slots"), [(41, 5, 3, 3), (47, 6, 2, 3)])
@pytest.mark.parametrize("transport_delay_bound", [True, False])
def test_model_is_exact_at_every_placement(seed, operators, max_replicas, slots, transport_delay_bound):
    """With a placement fixed, every valid inequality holds and the model's F is the evaluator's.

    The model is built with the ceiling R0 (the median response time) and the pair conflicts of
    reduce(R0): placements with R > R0 may be cut off, every other one must score exactly.
    """
    inst = load(tiny(seed, operators, max_replicas, slots, "rt_availability"))
    found = list(feasible_placements(inst))
    ceiling = sorted(ev.metrics["response_time"] for _, ev in found)[len(found) // 2]
    out = reduction.reduce(inst, ceiling)
    model = response.build(
        out.instance,
        dataclasses.replace(OdrpSettings(), transport_delay_bound=transport_delay_bound),
        conflicts=out.conflicts,
        excluded=out.excluded,
        max_response_time=ceiling,
    )
    checked = 0
    for p, ev in found:
        if ev.metrics["response_time"] <= ceiling:
            _fix(model, out.instance, p)
            run = run_solver(model)
            assert run.status == "optimal"
            assert run.objective == pytest.approx(ev.objective, rel=1e-7, abs=1e-9)
            checked += 1
    assert checked > len(found) // 3
    # a placement with stable replica counts but over a node's capacity has no completion
    over = next(p for p in placements(out.instance) if _stable(inst, p) and _overloaded(inst, p))
    _fix(model, out.instance, over)
    assert run_solver(model).status == "infeasible"


def _stable(inst: OdrpInstance, p) -> bool:
    return all(sum(nodes.values()) in inst.replica_counts(i) for i, nodes in enumerate(p))


def _overloaded(inst: OdrpInstance, p) -> bool:
    load_on = Counter()
    for i, nodes in enumerate(p):
        for u, c in nodes.items():
            load_on[u] += c * inst.resources[i]
    return any(load_on[u] > inst.capacity[u] for u in load_on)


def _fix(model: pyo.ConcreteModel, inst: OdrpInstance, p) -> None:
    for i in range(inst.n_operators):
        k = sum(p[i].values())
        for kk in inst.replica_counts(i):
            model.w[i, kk].fix(1 if kk == k else 0)
            for u in inst.candidates[i]:
                model.n[i, u, kk].fix(p[i].get(u, 0) if kk == k else 0)
        for u in inst.candidates[i]:
            model.o[i, u].fix(1 if u in p[i] else 0)


@pytest.mark.parametrize("rate", [20, 80, 120])
def test_debs_response_model_agrees_with_compact(rate):
    """DEBS 2015, w_r = 1: the response-time model and the full compact model prove the same optimum."""
    inst = load(debs2015(rate, "response_time"))
    fast = run_method(ODRP, inst, "exact")
    full = run_method(ODRP, inst, "exact", options={"response_model": False})
    assert fast.status == full.status == "optimal" and fast.verified and full.verified
    assert fast.objective == pytest.approx(full.objective, rel=1e-7)
