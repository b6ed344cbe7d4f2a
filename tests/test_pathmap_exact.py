"""Exact pathmap (layered-flow MILP) against hand-worked optima and a brute force on tiny graphs."""

from __future__ import annotations

import copy

import pytest

from odrp.kinds.pathmap.generators import ba_instance, bimodal_instance
from odrp.kinds.pathmap.instance import load
from odrp.kinds.pathmap.kind import KIND
from odrp.run import run_method
from tests.pathmap_cases import HAND, brute_force, random_tiny


def _load(data: dict):
    return load(copy.deepcopy(data), "test")


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_hand_instance(solver):
    result = run_method(KIND, _load(HAND), solver=solver)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(5.0)  # worked out in tests/pathmap_cases.py
    data = copy.deepcopy(HAND)
    # c1 and c2 no longer fit S2 together, so c2 -> S3: S1-S2 (2) + public S2-S3 (4, the pair needs 4)
    # + S3-S2-S4 (dedicated 1 + 1 = 2, cheaper than the direct S3-S4 at 3) + S4-S5 (2) = 10
    data["servers"][1]["capacity"] = 4.5
    result = run_method(KIND, _load(data), solver=solver)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(10.0)
    assert result.solution["nodes"]["c2"] == "S3"


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_infeasible_instances_are_results(solver):
    no_host = copy.deepcopy(HAND)
    no_host["task"]["components"][2]["service"] = "z"  # nobody hosts z: decided before any solver call
    result = run_method(KIND, _load(no_host), solver=solver)
    assert result.status == "infeasible" and result.solution is None
    no_room = copy.deepcopy(HAND)
    no_room["servers"][1]["capacity"] = 4.5
    no_room["servers"][2]["services"] = []  # c1 and c2 must share S2: 3 + 2 > 4.5, the solver proves it
    result = run_method(KIND, _load(no_room), solver=solver)
    assert result.status == "infeasible" and result.solution is None


@pytest.mark.parametrize("seed", range(30))
def test_exact_equals_brute_force_on_tiny_graphs(seed):
    inst = _load(random_tiny(seed, servers=4 + seed % 2, components=2 + seed % 2))
    expected = brute_force(inst)
    result = run_method(KIND, inst, solver="highs")
    if expected is None:
        assert result.status == "infeasible"
    else:
        assert result.status == "optimal" and result.verified
        assert result.objective == pytest.approx(expected, abs=1e-9)
    if seed % 3 == 0:
        cbc = run_method(KIND, inst, solver="cbc")
        assert cbc.status == result.status
        if expected is not None:
            assert cbc.objective == pytest.approx(expected, abs=1e-9) and cbc.verified


def test_generated_instances_solve_and_verify():
    for data in (ba_instance(seed=3, servers=40), bimodal_instance(seed=1, servers=25, dedicated_links=30)):
        result = run_method(KIND, load(data, "gen"))
        assert result.status in ("optimal", "infeasible")
        if result.status == "optimal":
            assert result.verified and result.gap == pytest.approx(0.0, abs=1e-6)


def test_time_limit_is_passed_to_the_solver():
    result = run_method(KIND, load(ba_instance(seed=1, servers=30), "gen"), time_limit=30)
    assert result.status == "optimal" and result.verified


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_more_links_never_cost_more(seed):
    # the bi-modal network holds every link of the dedicated-only and of the public-only network, and
    # the generator gives the three settings of a seed the same servers and (here) the same task
    optimum = {}
    tasks = []
    for network in ("dedicated", "public", "bimodal"):
        data = bimodal_instance(seed=seed, servers=30, dedicated_links=40, network=network)
        tasks.append(data["task"])
        optimum[network] = run_method(KIND, load(data, network)).objective
    assert tasks[0] == tasks[1] == tasks[2]
    assert optimum["bimodal"] <= min(optimum["dedicated"], optimum["public"]) + 1e-9
