"""The paper's mapping methods: message counts by hand, bound <= optimum <= heuristics, exhaustive = optimum."""

from __future__ import annotations

import copy

import pytest

from odrp.kinds.pathmap.generators import ba_instance, bimodal_instance
from odrp.kinds.pathmap.instance import load
from odrp.kinds.pathmap.kind import KIND
from odrp.run import run_method
from tests.pathmap_cases import HAND, brute_force, random_tiny

HEURISTICS = ("least_cost_map", "annealed_least_cost_map", "random_neighbor", "process_map2")

# A (source) -- B {a} -- D (sink) and A -- C {a} -- D; one component on B or C; direct links only.
# Costs A-B 1, A-C 2, B-D 1, C-D 1; delays A-B 1, A-C 1, B-D 1, C-D 5; every bandwidth 1.
DIAMOND = {
    "problem": "pathmap",
    "name": "diamond",
    "servers": [
        {"id": "A", "capacity": 0},
        {"id": "B", "capacity": 1, "services": ["a"]},
        {"id": "C", "capacity": 1, "services": ["a"]},
        {"id": "D", "capacity": 0},
    ],
    "links": [
        {"from": "A", "to": "B", "bandwidth": 1, "cost": 1, "delay": 1},
        {"from": "A", "to": "C", "bandwidth": 1, "cost": 2, "delay": 1},
        {"from": "B", "to": "D", "bandwidth": 1, "cost": 1, "delay": 1},
        {"from": "C", "to": "D", "bandwidth": 1, "cost": 1, "delay": 5},
    ],
    "task": {
        "source": "A",
        "sink": "D",
        "components": [{"id": "c1", "service": "a", "cpu": 1}],
        "bandwidth": [1, 1],
        "max_null": 0,
    },
}


def _run(inst, method, **options):
    return run_method(KIND, inst, method, seed=7, options=options or None)


def _messages(result) -> int:
    return result.metrics["method_stats"]["map_messages"]


def test_diamond_message_count_by_hand():
    # A sends the empty map to B and C (2). B places c1 and sends to A and D (2); so does C (2).
    # Nothing else moves: every path may have one link only. 6 messages; D stores A-B-D (cost 2)
    # and A-C-D (cost 3). LeastCostMap prunes nothing that had anywhere to go: also 6.
    inst = load(copy.deepcopy(DIAMOND), "diamond")
    exhaustive = _run(inst, "exhaustive_map")
    assert exhaustive.status == "optimal" and exhaustive.verified
    assert exhaustive.objective == pytest.approx(2.0) and exhaustive.bound == pytest.approx(2.0)
    assert _messages(exhaustive) == 6 and exhaustive.metrics["method_stats"]["feasible_maps"] == 2
    lcm = _run(inst, "least_cost_map")
    assert lcm.objective == pytest.approx(2.0) and _messages(lcm) == 6
    assert lcm.solution == {"nodes": {"c1": "B"}, "paths": [["A", "B"], ["B", "D"]]}


def test_hand_instance_bound_and_methods():
    inst = load(copy.deepcopy(HAND), "hand")
    # bandwidth relaxed: S1-S3-S2 costs 0 + 1 = 1 < 2, so 1 + 0 + 1 + 2 = 4 (tests/pathmap_cases.py)
    bound = _run(inst, "multistage_bound")
    assert bound.bound == pytest.approx(4.0) and bound.solution is None and bound.status == "no_solution"
    assert "bound only" in bound.message
    exhaustive = _run(inst, "exhaustive_map")
    assert exhaustive.status == "optimal" and exhaustive.objective == pytest.approx(5.0) and exhaustive.verified
    for method in HEURISTICS:
        result = _run(inst, method)
        assert result.verified and result.objective >= 5.0 - 1e-9


def test_infeasible_is_proven_by_exhaustive_and_by_the_bound():
    data = copy.deepcopy(HAND)
    data["task"]["components"][1]["service"] = "z"
    inst = load(data, "x")
    assert _run(inst, "exhaustive_map").status == "infeasible"
    assert _run(inst, "multistage_bound").status == "infeasible"
    result = _run(inst, "least_cost_map")
    assert result.status == "no_solution" and result.solution is None  # a heuristic finding nothing proves nothing


@pytest.mark.parametrize("seed", range(24))
def test_bound_optimum_heuristics_and_exhaustive_on_tiny_graphs(seed):
    inst = load(random_tiny(100 + seed, servers=5, components=3), "tiny")
    optimum = brute_force(inst)
    exhaustive = _run(inst, "exhaustive_map")
    lcm = _run(inst, "least_cost_map")
    assert _messages(lcm) <= _messages(exhaustive)
    bound = _run(inst, "multistage_bound")
    if optimum is None:
        assert exhaustive.status == "infeasible"
        assert all(_run(inst, m).solution is None for m in HEURISTICS)
        return
    assert exhaustive.status == "optimal" and exhaustive.objective == pytest.approx(optimum, abs=1e-9)
    assert bound.bound <= optimum + 1e-9
    for method in HEURISTICS:
        result = _run(inst, method)
        if result.solution is not None:
            assert result.verified, result.message
            assert result.objective >= optimum - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_bound_optimum_heuristics_on_generated_networks(seed):
    inst = load(ba_instance(seed=seed, servers=30 + 10 * seed), "ba")
    exact = run_method(KIND, inst)
    bound = _run(inst, "multistage_bound")
    if exact.status == "infeasible":
        return
    assert exact.status == "optimal"
    assert bound.bound <= exact.objective + 1e-9
    for method in HEURISTICS:
        result = _run(inst, method)
        if result.solution is not None:
            assert result.verified and result.objective >= exact.objective - 1e-9


def test_variants_reduce_to_each_other_at_their_limits():
    inst = load(random_tiny(7, servers=5, components=3), "tiny")
    exhaustive, lcm = _run(inst, "exhaustive_map"), _run(inst, "least_cost_map")
    # annealing that always extends is the exhaustive run; annealing that never does is LeastCostMap
    always = _run(inst, "annealed_least_cost_map", anneal_start=1.0, anneal_rate=0.0)
    never = _run(inst, "annealed_least_cost_map", anneal_start=0.0)
    assert _messages(always) == _messages(exhaustive) and _messages(never) == _messages(lcm)
    # k at least the largest degree: RandomNeighbor draws nothing and is LeastCostMap
    assert _messages(_run(inst, "random_neighbor", k=10)) == _messages(lcm)
    # no public link: ProcessMap2 is LeastCostMap
    dedicated = load(bimodal_instance(seed=2, servers=20, dedicated_links=30, network="dedicated"), "d")
    assert _messages(_run(dedicated, "process_map2")) == _messages(_run(dedicated, "least_cost_map"))


def test_seeded_and_deterministic():
    inst = load(ba_instance(seed=5, servers=40), "ba")
    for method in ("annealed_least_cost_map", "random_neighbor"):
        first, second = _run(inst, method), _run(inst, method)
        assert first.solution == second.solution and _messages(first) == _messages(second)
    seeds = {_messages(run_method(KIND, inst, "annealed_least_cost_map", seed=s)) for s in range(4)}
    assert len(seeds) > 1  # the seed matters


def test_bimodal_variant_uses_public_links_and_few_messages():
    inst = load(bimodal_instance(seed=6, servers=30, dedicated_links=29, network="bimodal"), "b")
    pm2, lcm = _run(inst, "process_map2"), _run(inst, "least_cost_map")
    assert pm2.verified and lcm.verified
    assert pm2.metrics["public_hops"] > 0
    assert _messages(pm2) < _messages(lcm)  # LeastCostMap floods every public link
    exact = run_method(KIND, inst)
    assert exact.objective <= min(pm2.objective, lcm.objective) + 1e-9


def test_message_budget_stops_and_says_so():
    inst = load(ba_instance(seed=0, servers=30), "ba")
    result = _run(inst, "exhaustive_map", max_messages=500)
    stats = result.metrics["method_stats"]
    assert stats["complete"] is False and result.bound is None
    assert "budget" in result.message and result.status in ("feasible", "no_solution")
