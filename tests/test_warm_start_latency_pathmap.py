"""Warm starts (MIP starts) for the exact latency and pathmap models, with HiGHS and CBC.

A warm-started solve must prove the optimum that brute force gives independently, from a good start
(the kind's heuristic) and from a poor one (the worst feasible placement); the solver's log must
show that it read the start; a placement mapped into the model's integer variables must be worth,
with them fixed, what the evaluator says (latency) or what the least-cost routes between its servers
cost (pathmap, worked out by hand).
"""

from __future__ import annotations

import copy
import itertools
import json

import pyomo.environ as pyo
import pytest

from odrp.core.solvers import solve
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact import model as latency_model
from odrp.kinds.latency.instance import load as load_latency
from odrp.kinds.latency.instance import solution_json
from odrp.kinds.pathmap.exact import model as pathmap_model
from odrp.kinds.pathmap.generators import ba_instance
from odrp.kinds.pathmap.instance import load as load_pathmap
from odrp.kinds.pathmap.routes import pair_routes
from odrp.registry import KINDS
from odrp.run import run_method
from tests.pathmap_cases import HAND, OPTIMAL, VIA_PUBLIC, random_tiny
from tests.pathmap_cases import brute_force as pathmap_brute_force
from tests.test_latency_exact import tiny

LATENCY = KINDS["latency"]
PATHMAP = KINDS["pathmap"]


def feasible_placements(inst) -> list[tuple[float, list[int]]]:
    """Every feasible latency placement with its evaluator score, best first (brute force)."""
    found = []
    for p in itertools.product(range(inst.n_supervisors), repeat=inst.n_operators):
        evaluation = evaluate_assignment(inst, list(p))
        if evaluation.feasible:
            found.append((evaluation.objective, list(p)))
    return sorted(found)


def assert_start_read(report: dict, solver: str, start_objective: float) -> None:
    """The solver's log shows the start: HiGHS found it feasible; CBC read it (and took it, or said why not)."""
    assert report["objective"] == pytest.approx(start_objective, rel=1e-12)
    if solver == "highs":
        assert report["accepted"] is True, report["solver_log"]
        return
    assert any(line.startswith("MIPStart values read for") for line in report["solver_log"]), report["solver_log"]
    if report["accepted"] is not True:  # CBC's preprocessing may cut off a non-optimal start (coin-or/Cbc#282)
        assert "Cbc0045I Warning: mipstart values could not be used to build a solution." in report["solver_log"]


# ----------------------------------------------------------------------------------- latency

# (seed, latency weight, metric latency, cycle, twins): cases of tests/test_latency_exact.py
LATENCY_CASES = [(1, 1e-6, True, False, False), (4, 0.05, False, False, True), (7, 1e-6, True, True, True)]


@pytest.mark.parametrize(("seed", "weight", "metric", "cycle", "twins"), LATENCY_CASES)
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_latency_warm_start_proves_the_brute_force_optimum(seed, weight, metric, cycle, twins, solver):
    inst = load_latency(tiny(seed, latency_weight=weight, metric=metric, cycle=cycle, twins=twins))
    placements = feasible_placements(inst)
    best, (worst, worst_placement) = placements[0][0], placements[-1]
    climbed = run_method(LATENCY, inst, "hill_climbing")
    assert climbed.verified
    starts = [(climbed.solution, climbed.objective), (solution_json(inst, worst_placement), worst)]
    for start, start_objective in starts:
        warm = run_method(LATENCY, inst, "exact", solver=solver, warm_start=start)
        assert warm.status == "optimal" and warm.verified, warm.message
        assert warm.objective == pytest.approx(best, rel=1e-6, abs=1e-12)
        report = warm.metrics["method_stats"]["warm_start"]
        assert_start_read(report, solver, start_objective)
        if report["accepted"] and solver == "highs":  # HiGHS logs the start's (scaled) objective; we unscale it
            assert report["solver_objective"] == pytest.approx(start_objective, rel=1e-6)


def twins_on_identical_supervisors():
    """Two pairs of twins (o5 + twin; o1 + o2, both fed by o0 alone and feeding nothing) on four
    identical supervisors, latency weight 0: every supervisor swap and every twin swap is a symmetry."""
    data = tiny(21, operators=6, supervisors=4, latency_weight=0.0, twins=True)
    data["edges"] = [e for e in data["edges"] if e["from"] not in ("o1", "o2") and e["to"] not in ("o1", "o2")]
    data["edges"] += [{"from": "o0", "to": "o1"}, {"from": "o0", "to": "o2"}]
    for op in ("o1", "o2"):
        spec = next(o for o in data["operators"] if o["id"] == op)
        spec.update({"cpu": 0.2, "memory": 100})
        spec.pop("selectivity", None)
    for sup in data["supervisors"]:
        sup.update({"cpu": 0.9, "memory": 700})
    return load_latency(data)


def test_symmetric_representative_is_in_the_orbit_and_obeys_the_symmetry_rows():
    inst = twins_on_identical_supervisors()
    twins = latency_model.twin_groups(inst)
    supervisors = latency_model.interchangeable_supervisors(inst)
    assert sorted(map(sorted, twins)) == [[1, 2], [5, 6]] and supervisors == [[0, 1, 2, 3]]
    checked = 0
    for _, p in feasible_placements(inst)[::7]:  # a seventh of the feasible placements, spread over all scores
        q = latency_model.symmetric_representative(inst, p)
        # the orbit of p, by brute force: every relabelling of the supervisors, every order of each twin pair
        orbit = set()
        for relabel in itertools.permutations(range(4)):
            moved = [relabel[u] for u in p]
            for swap_a, swap_b in itertools.product((False, True), repeat=2):
                r = list(moved)
                if swap_a:
                    r[1], r[2] = r[2], r[1]
                if swap_b:
                    r[5], r[6] = r[6], r[5]
                orbit.add(tuple(r))
        assert tuple(q) in orbit
        assert q[1] <= q[2] and q[5] <= q[6]  # twins in order
        first = [min((i for i, u in enumerate(q) if u == v), default=len(q)) for v in range(4)]
        assert all(first[v] > first[v - 1] or first[v] == len(q) for v in range(1, 4))  # supervisors in order
        assert evaluate_assignment(inst, q).objective == evaluate_assignment(inst, p).objective
        checked += 1
    assert checked > 50


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_latency_start_against_the_symmetry_rows_is_moved_into_them(solver):
    inst = twins_on_identical_supervisors()
    placements = feasible_placements(inst)
    # the worst placement that breaks both orders: twins reversed, the first operator on the last supervisor
    score, p = next((s, p) for s, p in reversed(placements) if p[1] > p[2] and p[0] == 3)
    warm = run_method(LATENCY, inst, "exact", solver=solver, warm_start=solution_json(inst, p))
    assert warm.status == "optimal" and warm.objective == pytest.approx(placements[0][0], rel=1e-9)
    report = warm.metrics["method_stats"]["warm_start"]
    assert_start_read(report, solver, score)
    assert report["accepted"] is True, report["solver_log"]  # as given, both solvers reject it (rows broken)


@pytest.mark.parametrize("seed", [3, 8])
def test_a_latency_placement_mapped_into_the_model_is_worth_its_evaluator_score(seed):
    """Fix the integers at set_start's values and solve what is left (an LP): its optimum is the score."""
    inst = load_latency(tiny(seed, latency_weight=0.1, twins=True))
    _, p = feasible_placements(inst)[-1]
    model = latency_model.build(inst)
    latency_model.set_start(model, inst, solution_json(inst, p))
    for var in model.component_data_objects(pyo.Var):
        if var.is_binary():
            var.fix()
    run = solve(model, "highs")
    assert run.status == "optimal"
    assert run.objective / model.scale == pytest.approx(evaluate_assignment(inst, p).objective, rel=1e-9)


def test_latency_cli_warm_start_from_hill_climbing(run_cli, tmp_path):
    instance = tmp_path / "tiny.json"
    instance.write_text(json.dumps(tiny(4, latency_weight=0.05, metric=False, twins=True)))
    best = feasible_placements(load_latency(tiny(4, latency_weight=0.05, metric=False, twins=True)))[0][0]
    for solver in ("highs", "cbc"):
        out = json.loads(
            run_cli(
                "solve", str(instance), "--warm-start", "hill_climbing", "--solver", solver, "--json", check=True
            ).stdout
        )
        assert out["status"] == "optimal" and out["verified"] and out["objective"] == pytest.approx(best, rel=1e-6)
        origin = out["metrics"]["method_stats"]["warm_start"]
        assert origin["source"] == "hill_climbing" and origin["accepted"] is True


# ----------------------------------------------------------------------------------- pathmap


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_pathmap_poor_start_still_proves_the_hand_optimum(solver):
    inst = load_pathmap(copy.deepcopy(HAND), "hand")
    warm = run_method(PATHMAP, inst, "exact", solver=solver, warm_start=VIA_PUBLIC)
    assert warm.status == "optimal" and warm.verified and warm.objective == pytest.approx(5.0)  # pathmap_cases.py
    report = warm.metrics["method_stats"]["warm_start"]
    assert report["objective"] == pytest.approx(11.0)  # VIA_PUBLIC's cost, pathmap_cases.py
    # HiGHS's presolve solves this MIP outright, so its log never rates the start; it did read it
    assert report["solver_log"][0].startswith(
        "Attempting to find feasible solution by solving LP for user-supplied values"
        if solver == "highs"
        else "opening mipstart file"
    )


@pytest.mark.parametrize(("start", "cost"), [(OPTIMAL, 5.0), (VIA_PUBLIC, 10.0)])
def test_a_pathmap_mapping_in_the_model_costs_its_least_cost_routes(start, cost):
    """x fixed at set_start's values: the flow takes the least-cost route of each pair. OPTIMAL's
    routes are least-cost (5); VIA_PUBLIC's servers S2, S3, S4 cost S1-S2 (2) + public S2-S3 (4) +
    S3-S2-S4 (dedicated 1 + 1 = 2 < direct S3-S4 at 3, within max_null + 1 = 2 links) + S4-S5 (2) = 10,
    one less than its own paths (11)."""
    inst = load_pathmap(copy.deepcopy(HAND), "hand")
    tables = pair_routes(inst)
    model = pathmap_model.build(inst, tables, pathmap_model.stages(inst, tables))
    pathmap_model.set_start(model, inst, start)
    model.x.fix()
    run = solve(model, "highs")
    assert run.status == "optimal" and run.objective == pytest.approx(cost)


@pytest.mark.parametrize("seed", [1, 2, 6, 8, 9, 11])
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_pathmap_warm_start_from_least_cost_map_proves_the_brute_force_optimum(seed, solver):
    inst = load_pathmap(random_tiny(seed, servers=5, components=3), "tiny")
    start = run_method(PATHMAP, inst, "least_cost_map")
    best = pathmap_brute_force(inst)
    assert start.verified and best is not None
    warm = run_method(PATHMAP, inst, "exact", solver=solver, warm_start=start.solution)
    assert warm.status == "optimal" and warm.verified
    assert warm.objective == pytest.approx(best, abs=1e-9)
    assert warm.metrics["method_stats"]["warm_start"]["objective"] == pytest.approx(start.objective)


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_pathmap_warm_start_is_taken_on_a_generated_instance(solver):
    """40 servers: presolve leaves a MIP, and the solver's log rates the start."""
    inst = load_pathmap(ba_instance(seed=3, servers=40), "ba")
    start = run_method(PATHMAP, inst, "least_cost_map")
    cold = run_method(PATHMAP, inst, "exact", solver=solver)
    warm = run_method(PATHMAP, inst, "exact", solver=solver, warm_start=start.solution)
    assert cold.status == warm.status == "optimal" and warm.verified
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)
    report = warm.metrics["method_stats"]["warm_start"]
    assert_start_read(report, solver, start.objective)
    if report["accepted"]:  # the solver rates the start by its least-cost routes: between optimum and the start
        assert cold.objective - 1e-9 <= report["solver_objective"] <= start.objective + 1e-9


def test_pathmap_cli_warm_start_from_least_cost_map(run_cli, tmp_path):
    instance = tmp_path / "ba.json"
    instance.write_text(json.dumps(ba_instance(seed=3, servers=40)))
    cold = json.loads(run_cli("solve", str(instance), "--json", check=True).stdout)
    warm = json.loads(run_cli("solve", str(instance), "--warm-start", "least_cost_map", "--json", check=True).stdout)
    assert warm["status"] == "optimal" and warm["verified"] and warm["objective"] == pytest.approx(cold["objective"])
    origin = warm["metrics"]["method_stats"]["warm_start"]
    assert origin["source"] == "least_cost_map" and origin["accepted"] is True
