"""Exact throughput against brute force (every placement of tiny instances, scored by the evaluator)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from odrp.kinds.throughput.evaluator import evaluate_counts
from odrp.kinds.throughput.exact.patterns import candidates, pareto_minimal, pattern_model
from odrp.kinds.throughput.generators import random_instance
from odrp.kinds.throughput.instance import ThroughputInstance, load
from odrp.registry import KINDS
from odrp.run import run_method

THROUGHPUT = KINDS["throughput"]
SHAPES = ("linear", "diamond", "star", "dag")


def feasible_placements(inst: ThroughputInstance, fixed: dict[int, int] | None = None):
    """(R, per-machine count vectors) of every feasible placement, written apart from the models.

    Every component gets every vector of per-machine counts with 0..max_tasks on each machine (at
    least one instance; exactly ``fixed[c]`` when given); the evaluator scores every combination.
    """
    per_component = []
    for c in range(inst.n_components):
        ranges = [range((inst.max_tasks[w] or 0) + 1) for w in range(inst.n_machines)]
        vectors = [v for v in itertools.product(*ranges) if sum(v) >= 1]
        if fixed is not None:
            vectors = [v for v in vectors if sum(v) == fixed[c]]
        per_component.append(vectors)
    for combo in itertools.product(*per_component):
        ev = evaluate_counts(inst, [{w: k for w, k in enumerate(v) if k} for v in combo])
        if ev.feasible:
            yield ev.objective, combo


def brute_force(inst: ThroughputInstance, fixed: dict[int, int] | None = None) -> tuple[float | None, int]:
    """(best R over every placement, number of feasible placements): :func:`feasible_placements`."""
    rates = [r for r, _ in feasible_placements(inst, fixed)]
    return (max(rates) if rates else None), len(rates)


def best_placement(inst: ThroughputInstance) -> tuple[float, list[dict[int, int]]]:
    """(R*, a best placement as {machine: count} per component): :func:`feasible_placements`."""
    optimum, combo = max(feasible_placements(inst))
    return optimum, [{w: k for w, k in enumerate(v) if k} for v in combo]


def tiny(seed: int) -> ThroughputInstance:
    """3 components on 2-3 machines with 2-3 task slots: up to 15^3 placements."""
    machines = 2 + seed % 2
    return load(
        random_instance(seed=seed, components=3, machines=machines, shape=SHAPES[seed % 4], max_tasks=5 - machines)
    )


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("formulation", ["patterns", "levels"])
def test_exact_equals_brute_force(seed, solver, formulation):
    inst = tiny(seed)
    optimum, feasible = brute_force(inst)
    assert feasible > 0
    result = run_method(THROUGHPUT, inst, "exact", solver=solver, formulation=formulation)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert result.bound >= result.objective and result.gap <= 1e-6


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_cbc_second_opinion(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    result = run_method(THROUGHPUT, inst, "exact", solver="cbc")
    assert result.solver.startswith("cbc") and result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(optimum, rel=1e-6)


@pytest.mark.parametrize("seed", [0, 3, 6])
@pytest.mark.parametrize("solver", ["cpsat", "highs"])
def test_warm_start_gives_the_brute_force_optimum(seed, solver):
    """A warm start (the contract of :mod:`odrp.core.exact`) is the rate search's incumbent when it beats the search's
    own start: without that start (search_start off) it always is; the optimum stays brute force's."""
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    start = run_method(THROUGHPUT, inst, "storm_default")
    assert start.verified and start.objective <= optimum + 1e-9
    result = run_method(
        THROUGHPUT, inst, "exact", solver=solver, warm_start=start.solution, options={"search_start": False}
    )
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    report = result.metrics["method_stats"]["warm_start"]
    assert report["accepted"] is True
    assert report["objective"] == pytest.approx(start.objective, rel=1e-12)


def test_replication_and_a_machine_with_spare_capacity_by_hand():
    # one spout on A (e 1, MET 10) and B (e 2, MET 10), capacity 100, 4 task slots each.
    # A alone: R = 90; A2 + B1 (N = 3): A 2 (R/3) + 20 <= 100 -> R <= 120, B 2 (R/3) + 10 <= 100 -> 135:
    # R = 120; A3 + B1: A 3 R/4 + 30 -> 93.3; A1 + B1: B R + 10 -> 90; A2 + B2: B R + 20 -> 80;
    # A3 + B2: B 0.8 R + 20 -> 100; larger counts only add overhead. The optimum is 120 (A2 + B1).
    inst = load(SPOUT_AB)
    result = run_method(THROUGHPUT, inst, "exact")
    assert result.objective == pytest.approx(120.0, rel=1e-9)
    assert result.solution == {"instances": {"spout": {"A": 2, "B": 1}}}
    assert brute_force(inst)[0] == pytest.approx(120.0, rel=1e-12)


SPOUT_AB = {
    "problem": "throughput",
    "name": "spout-ab",
    "components": [{"id": "spout"}],
    "machines": [{"id": "A", "type": "a", "max_tasks": 4}, {"id": "B", "type": "b", "max_tasks": 4}],
    "profile": {"spout": {"a": {"exec_time": 1, "overhead": 10}, "b": {"exec_time": 2, "overhead": 10}}},
}


def test_identical_machines_are_ordered_without_losing_the_optimum():
    # 2 components on 4 machines of 2 types (pairs of identical machines), 2 slots each
    inst = load(random_instance(seed=11, components=2, machines=4, types="i3,i5", max_tasks=2))
    assert any(len(group) > 1 for group in inst.machine_classes)
    optimum, _ = brute_force(inst)
    for solver in ("highs", "cpsat"):
        for formulation in ("patterns", "levels"):
            result = run_method(THROUGHPUT, inst, "exact", solver=solver, formulation=formulation)
            assert result.objective == pytest.approx(optimum, rel=1e-6), (solver, formulation)


def test_pareto_minimal_patterns_by_hand():
    # rows (load on m1, load on m2, tasks): b = (1, 2, 1) dominates d = (1, 3, 1); a and c are
    # incomparable with everything; e repeats b and goes, the first of equal rows stays
    points = np.array([[2, 1, 1], [1, 2, 1], [3, 0, 2], [1, 3, 1], [1, 2, 1]], dtype=float)
    assert list(pareto_minimal(points)) == [0, 1, 2]


def test_pattern_model_keeps_the_pareto_minimal_patterns_by_hand():
    # SPOUT_AB at rho = 60: an instance costs A 60/N + 10 and B 2*60/N + 10 (capacity 100); a
    # pattern (x_A, x_B) is the row (load A, load B, tasks A, tasks B).
    #   (1,0) N=1: (70, 0, 1, 0)     (1,1) N=2: (40, 70, 1, 1)     (2,1) N=3: (60, 50, 2, 1)
    #   (1,2) N=3: (30, 100, 1, 2)   (3,1) N=4: (75, 40, 3, 1)     (2,2) N=4: (50, 80, 2, 2)
    #   (3,2) N=5: (66, 68, 3, 2)    (3,3) N=6: (60, 90, 3, 3)
    # Out (B over 100): every (0, N), (1,3), (2,3), ... Dominated: (1,0) dominates every pattern with
    # load A >= 70 ((2,0), (3,1), (4,1), ...); (1,1) dominates (2,2); (2,1) dominates (3,2), (3,3).
    inst = load(SPOUT_AB)
    pm = pattern_model(inst, 60.0, [(1, 8)], [candidates(inst, 0)])
    kept = {tuple(int(k) for k in x) for x in pm.counts[0]}
    assert kept == {(1, 0), (1, 1), (2, 1), (1, 2)}
    loads = {tuple(int(k) for k in x): list(load) for x, load in zip(pm.counts[0], pm.loads[0], strict=True)}
    assert loads[(2, 1)] == pytest.approx([60.0, 50.0], rel=1e-12)


def test_fixed_instance_counts_equal_brute_force_over_those_counts():
    inst = tiny(3)
    fixed = {0: 1, 1: 2, 2: 1}
    optimum, _ = brute_force(inst, fixed)
    from odrp.kinds.throughput.exact.solve import solve

    outcome = solve(inst, fixed_instances=fixed)
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6)


def test_infeasible_instance_is_a_result(run_cli, tmp_path):
    data = json.loads(json.dumps(SPOUT_AB))
    data["components"].append({"id": "bolt"})
    data["edges"] = [["spout", "bolt"]]
    data["profile"]["bolt"] = {"a": {"exec_time": 1, "overhead": 95}, "b": {"exec_time": 1, "overhead": 95}}
    # spout (MET 10) and bolt (MET 95) fit together nowhere, and each machine holds one of them at
    # most... but two machines: spout on A, bolt on B fits (R: A (100-10)/1, B (100-95)/1 = 5)
    path = tmp_path / "tight.json"
    path.write_text(json.dumps(data))
    result = json.loads(run_cli("solve", str(path), "--json", check=True).stdout)
    assert result["status"] == "optimal" and result["objective"] == pytest.approx(5.0, rel=1e-9)
    data["machines"].pop()  # one machine: 10 + 95 > 100, nothing fits
    path.write_text(json.dumps(data))
    result = json.loads(run_cli("solve", str(path), "--json", check=True).stdout)
    assert result["status"] == "infeasible" and result["solution"] is None


def test_time_limit_returns_incumbent_bound_and_gap():
    inst = load(random_instance(seed=3, components=12, machines=12, shape="dag"))
    result = run_method(THROUGHPUT, inst, "exact", solver="highs", time_limit=3)
    assert result.status in ("time_limit", "optimal")
    assert result.runtime_s < 3 + 10  # the limit plus building and the heuristic warm start
    assert result.verified and result.objective > 0
    assert result.bound >= result.objective * (1 - 1e-9)
    assert result.gap is not None and result.gap >= 0


def test_cpsat_deterministic_budget_ends_undecided_as_a_time_limit():
    # 9 pigeons in 8 holes: infeasible; with no deterministic time CP-SAT decides nothing, and the run is a time
    # limit (not an error) although no wall-clock limit was given
    from ortools.sat.python import cp_model

    from odrp.core.solvers.cpsat import run_cpsat

    model = cp_model.CpModel()
    x = {(p, h): model.NewBoolVar(f"x{p}_{h}") for p in range(9) for h in range(8)}
    for p in range(9):
        model.AddExactlyOne(x[p, h] for h in range(8))
    for h in range(8):
        model.AddAtMostOne(x[p, h] for p in range(9))
    model.Maximize(sum(x.values()))
    assert run_cpsat(model, "max", None, 0.0, 1, None, {"max_deterministic_time": 0.0})[0].status == "time_limit"
    assert run_cpsat(model, "max", None, 0.0, 1, None)[0].status == "infeasible"


@pytest.mark.parametrize("seed", range(6))
def test_box_solver_decides_as_brute_force(seed):
    # a level search's box (N_c within ranges) at a rate: feasible exactly when some placement (brute force) with
    # counts in the box sustains the rate
    import random

    from odrp.kinds.throughput.evaluator import rate
    from odrp.kinds.throughput.exact.rounds import box_solver

    inst = tiny(seed)
    placements = [(r, [sum(v) for v in combo]) for r, combo in feasible_placements(inst)]
    optimum = max(r for r, _ in placements)
    solve_box = box_solver(inst, "cpsat")
    rng = random.Random(seed)
    seen = set()
    for _ in range(12):
        rho = optimum * rng.choice([0.5, 0.8, 0.95, 1.0, 1.05])
        top = max(max(counts) for _, counts in placements)
        box = [tuple(sorted((rng.randint(1, top), rng.randint(1, top)))) for _ in range(inst.n_components)]
        expected = any(
            r >= rho * (1 + 1e-9) and all(lo <= n <= hi for n, (lo, hi) in zip(counts, box, strict=True))
            for r, counts in placements
        )
        if any(abs(r - rho) <= 1e-9 * rho for r, _ in placements):  # a placement at rho: either answer is right
            continue
        status, found = solve_box(rho, box, None)
        assert status == ("feasible" if expected else "infeasible")
        if found is not None:
            assert rate(inst, found) >= rho * (1 - 1e-9)
        seen.add(status)
    assert seen == {"feasible", "infeasible"}  # both answers occur
