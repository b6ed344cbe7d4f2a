"""The exact latency method against brute force (both solvers, both methods, every model switch).

The brute force is independent of the model: it enumerates every assignment of operators to
supervisors and asks the evaluator; the tiny instances are drawn here, not by the kind's generators.
"""

from __future__ import annotations

import itertools
import json
import random

import numpy as np
import pyomo.environ as pyo
import pytest

from odrp.core.solvers import solve
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact.classes import best_labelling, dominates, supervisor_classes
from odrp.kinds.latency.exact.separation import violated_trees
from odrp.kinds.latency.generators import random_topology
from odrp.kinds.latency.instance import LatencyInstance, load
from odrp.registry import KINDS
from odrp.run import run_method

LATENCY = KINDS["latency"]


def tiny(
    seed: int,
    operators: int = 6,
    supervisors: int = 3,
    latency_weight: float = 1e-6,
    metric: bool = True,
    cycle: bool = False,
    twins: bool = False,
) -> dict:
    """A random DAG (every operator fed by one or two earlier ones) on random supervisors."""
    rng = random.Random(seed)
    ops = [{"id": "o0", "cpu": round(rng.uniform(0.1, 0.4), 3), "memory": rng.randint(50, 300), "rate": 100}]
    edges = []
    for k in range(1, operators):
        ops.append({"id": f"o{k}", "cpu": round(rng.uniform(0.1, 0.5), 3), "memory": rng.randint(50, 300)})
        for parent in sorted(rng.sample(range(k), min(k, rng.choice((1, 1, 2))))):
            edges.append({"from": f"o{parent}", "to": f"o{k}"})
        if rng.random() < 0.4:
            ops[-1]["selectivity"] = round(rng.uniform(0.3, 3.0), 2)
    if twins:  # o_last and a copy of it: same demands, same neighbours
        last = ops[-1]
        ops.append({**last, "id": "twin"})
        edges += [{"from": e["from"], "to": "twin"} for e in edges if e["to"] == last["id"]]
    if cycle:
        edges.append({"from": f"o{operators - 1}", "to": "o1"})
    sups = [
        {"id": f"s{u}", "cpu": round(rng.uniform(0.6, 1.4), 2), "memory": rng.randint(400, 1000)}
        for u in range(supervisors)
    ]
    if metric:
        points = [(rng.uniform(0, 5), rng.uniform(0, 5)) for _ in sups]
        for sup, point in zip(sups, points, strict=True):
            sup["coordinates"] = list(point)
        latency = None
    else:  # asymmetric, no triangle inequality
        latency = [[0 if u == v else rng.randint(1, 9) for v in range(supervisors)] for u in range(supervisors)]
    data = {
        "problem": "latency",
        "name": f"tiny-{seed}",
        "operators": ops,
        "edges": edges,
        "supervisors": sups,
        "utilisation_limit": 0.95,
        "weights": {"latency": latency_weight, "supervisors": 1, "colocation": 1, "events": 1},
    }
    if latency is not None:
        data["latency"] = latency
    return data


def brute_force(inst: LatencyInstance) -> tuple[float | None, list[int] | None]:
    """The best evaluator score over every assignment (None when no assignment is feasible)."""
    best: tuple[float | None, list[int] | None] = (None, None)
    for p in itertools.product(range(inst.n_supervisors), repeat=inst.n_operators):
        ev = evaluate_assignment(inst, list(p))
        if ev.feasible and (best[0] is None or ev.objective < best[0]):
            best = (ev.objective, list(p))
    return best


# (seed, latency weight, metric latency, cycle, twins)
CASES = [
    (1, 1e-6, True, False, False),
    (2, 1e-6, False, False, False),
    (3, 0.05, True, False, False),
    (4, 0.05, False, False, True),
    (5, 1.0, True, True, False),
    (6, 0.0, True, False, True),
    (7, 1e-6, True, True, True),
    (8, 0.2, False, True, False),
]


@pytest.mark.parametrize(("seed", "weight", "metric", "cycle", "twins"), CASES)
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_exact_equals_brute_force(seed, weight, metric, cycle, twins, solver):
    inst = load(tiny(seed, latency_weight=weight, metric=metric, cycle=cycle, twins=twins))
    best, _ = brute_force(inst)
    assert best is not None
    result = run_method(LATENCY, inst, "exact", solver=solver)
    assert result.status == "optimal", result.message
    assert result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-12)
    assert result.bound == pytest.approx(best, rel=1e-6, abs=1e-12)


SWITCHES = [
    {"connectivity": False, "fewest_supervisors": False, "twins": False, "supervisor_symmetry": False},
    {"classes": False, "knapsack_trees": False},
    {"classes": True, "knapsack_trees": False, "find_gap": 0.0},
    {"classes": False, "rows_per_round": 1, "separation_rounds": 2},
]


@pytest.mark.parametrize("switches", SWITCHES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()))
@pytest.mark.parametrize(("seed", "weight", "metric", "cycle"), [(11, 0.1, True, False), (12, 1e-6, False, True)])
def test_every_model_switch_is_exact(switches, seed, weight, metric, cycle):
    inst = load(tiny(seed, operators=5, latency_weight=weight, metric=metric, cycle=cycle, twins=True))
    best, _ = brute_force(inst)
    result = run_method(LATENCY, inst, "exact", options=switches)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-12)


def test_identical_supervisors_with_latency_weight_zero():
    """Interchangeable supervisors are ordered only when the swap leaves every score unchanged."""
    data = tiny(21, operators=6, supervisors=4, latency_weight=0.0)
    for sup in data["supervisors"]:
        sup.update({"cpu": 0.8, "memory": 700})
    inst = load(data)
    best, _ = brute_force(inst)
    for solver in ("highs", "cbc"):
        result = run_method(LATENCY, inst, "exact", solver=solver)
        assert result.status == "optimal" and result.verified
        assert result.objective == pytest.approx(best, rel=1e-6)


def test_infeasible_instance_is_a_result():
    data = tiny(31)
    data["operators"][2]["cpu"] = 5.0  # fits on no supervisor
    inst = load(data)
    assert brute_force(inst)[0] is None
    for solver in ("highs", "cbc"):
        result = run_method(LATENCY, inst, "exact", solver=solver)
        assert result.status == "infeasible" and result.solution is None


def test_time_limit_returns_incumbent_and_bound():
    inst = load(random_topology(seed=3, operations=22))
    result = run_method(LATENCY, inst, "exact", time_limit=4)
    assert result.status in ("time_limit", "optimal")
    if result.status == "time_limit" and result.objective is not None:
        assert result.verified and result.bound is not None and result.bound <= result.objective + 1e-12


@pytest.mark.parametrize(("param", "name"), [("cut_latency=true", "cut_latency"), ("find_gap=-1", "find_gap")])
def test_a_bad_setting_is_a_one_line_error(run_cli, tmp_path, param, name):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny(41, operators=4)))
    proc = run_cli("solve", str(path), "--param", param)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert name in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_classes_and_one_model_both_equal_brute_force():
    """Both paths forced, whatever the default picks (latency_is_tie_break), on four cases above."""
    for (seed, weight, metric, cycle, twins), classes in itertools.product(CASES[:2] + CASES[5:7], (True, False)):
        inst = load(tiny(seed, latency_weight=weight, metric=metric, cycle=cycle, twins=twins))
        best, _ = brute_force(inst)
        result = run_method(LATENCY, inst, "exact", options={"classes": classes})
        assert result.status == "optimal" and result.verified, result.message
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize(("seed", "weight"), [(51, 1e-6), (52, 0.05), (53, 0.5)])
def test_classes_with_interchangeable_supervisors_and_latency(seed, weight):
    """Two classes of two equal supervisors at different places: the restricted models (w1 = 0) order
    the members of a class, the labelling of each partition must still pick the right members."""
    for result in classes_against_brute_force(seed, weight, [(1.0, 700), (1.0, 700), (0.6, 500), (0.6, 500)]):
        assert result.metrics["method_stats"]["method"] == "classes"


def classes_against_brute_force(seed: int, weight: float, capacities: list[tuple[float, int]]) -> list:
    """The classes method (HiGHS and CBC) on a 6-operator tiny instance whose 4 supervisors get ``capacities``:
    each result optimal, verified and equal to the brute-force optimum; returns the results."""
    data = tiny(seed, operators=6, supervisors=4, latency_weight=weight)
    for sup, (cpu, memory) in zip(data["supervisors"], capacities, strict=True):
        sup.update({"cpu": cpu, "memory": memory})
    inst = load(data)
    best, _ = brute_force(inst)
    results = []
    for solver in ("highs", "cbc"):
        result = run_method(LATENCY, inst, "exact", solver=solver, options={"classes": True})
        assert result.status == "optimal" and result.verified, result.message
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-12)
        results.append(result)
    return results


def test_knapsack_tree_rows_hold_at_every_placement():
    """No knapsack tree row is violated by the (x, z) of any feasible placement (validity)."""
    data = tiny(61, operators=6, supervisors=3)
    for op in data["operators"]:
        op["cpu"] = 0.3  # 18 cores' worth of rows: trees exceed every supervisor quickly
    inst = load(data)
    checked = 0
    for p in itertools.product(range(inst.n_supervisors), repeat=inst.n_operators):
        if not evaluate_assignment(inst, list(p)).feasible:
            continue
        x = np.zeros((inst.n_operators, inst.n_supervisors))
        x[range(inst.n_operators), p] = 1.0
        z = np.array([float(p[i] != p[j]) for i, j in inst.edges])
        assert violated_trees(inst, x, z) == []
        checked += 1
    assert checked > 10


def test_knapsack_tree_row_by_hand():
    """A star a -> b, a -> c (cpu 0.5, 0.1, 0.5) on a supervisor of usable cpu 0.95, and one of 1.9.

    Rooted at a on the small supervisor (x = 1) with no cut (z = 0): Prim adds b (edge 0 first on a
    tie), a + b = 0.6 fits; then c, d(T) = 1.1, excess 1.1 - 0.95 = 0.15. Edge a-b cuts off {b}:
    0.1 / 0.15 = 0.667; edge a-c cuts off {c}: 0.5 / 0.15 >= 1, so 1. Row: x[a,small] <= 0.667 z_ab
    + z_ac, violated by 1. The big supervisor holds the whole star: no row for it.
    """
    cpu = {"a": 0.5, "b": 0.1, "c": 0.5}
    data = {
        "problem": "latency",
        "name": "star",
        "operators": [{"id": o, "cpu": cpu[o], "memory": 10, **({"rate": 1} if o == "a" else {})} for o in "abc"],
        "edges": [{"from": "a", "to": "b"}, {"from": "a", "to": "c"}],
        "supervisors": [
            {"id": "small", "cpu": 1.0, "memory": 100, "coordinates": [0, 0]},
            {"id": "big", "cpu": 2.0, "memory": 100, "coordinates": [1, 0]},
        ],
        "utilisation_limit": 0.95,
        "weights": {"latency": 0, "supervisors": 1, "colocation": 1, "events": 1},
    }
    inst = load(data)
    x = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    rows = violated_trees(inst, x, np.zeros(2))
    by_root = {(r, u): dict(row) for r, u, row in rows}
    assert by_root[0, 0] == pytest.approx({0: 0.1 / 0.15, 1: 1.0})
    assert all(u == 0 for _, u, _ in rows)


def test_best_labelling_equals_brute_force_over_labellings():
    inst = load(tiny(71, operators=6, supervisors=4, latency_weight=0.3, metric=False))
    groups = [[0, 1], [2, 3], [4, 5]]
    expected = None
    for hosts in itertools.permutations(range(inst.n_supervisors), len(groups)):
        p = [0] * inst.n_operators
        for g, u in zip(groups, hosts, strict=True):
            for i in g:
                p[i] = u
        ev = evaluate_assignment(inst, p)
        if ev.feasible and (expected is None or ev.objective < expected):
            expected = ev.objective
    found = best_labelling(inst, groups)
    assert expected is not None and found is not None
    assert found[0] == pytest.approx(expected, rel=1e-12)
    assert evaluate_assignment(inst, found[1]).objective == pytest.approx(expected, rel=1e-12)


def test_dominated_multisets_by_hand():
    """Classes A (1.2 cores, 900 MB), B (0.8, 600), C (0.5, 400), D (0.4, 1000). A covers every class,
    B covers C, D is incomparable with B and C (less cpu, more memory)."""
    data = tiny(81, operators=3, supervisors=5)
    capacities = [(1.2, 900), (0.8, 600), (0.8, 600), (0.5, 400), (0.4, 1000)]
    for sup, (cpu, memory) in zip(data["supervisors"], capacities, strict=True):
        sup.update({"cpu": cpu, "memory": memory})
    inst = load(data)
    classes = supervisor_classes(inst)
    assert classes == [[0], [1, 2], [3], [4]]  # counts below: (A, B, C, D)
    assert dominates(classes, inst, (1, 1, 0, 0), (0, 1, 1, 0))  # A >= B, B >= C
    assert dominates(classes, inst, (1, 1, 0, 0), (0, 2, 0, 0))  # A >= B, B >= B
    assert dominates(classes, inst, (0, 2, 0, 0), (0, 1, 1, 0))  # B >= B, B >= C
    assert not dominates(classes, inst, (0, 1, 1, 0), (1, 1, 0, 0))  # nothing of B or C covers A
    assert not dominates(classes, inst, (0, 2, 0, 0), (0, 1, 0, 1))  # B has less memory than D
    assert not dominates(classes, inst, (1, 1, 0, 0), (0, 1, 0, 1))  # D's 1000 MB fit neither A (900) nor B
    assert not dominates(classes, inst, (0, 1, 1, 0), (0, 1, 1, 0))  # a multiset does not dominate itself
    assert not dominates(classes, inst, (1, 1, 1, 0), (1, 1, 0, 0))  # different sizes


def test_classes_with_dominated_multisets_equal_brute_force():
    """Supervisors whose classes form a chain (each covers the next): at every level only the
    largest multiset is solved, the others are skipped as dominated; the optimum is unchanged."""
    for seed, weight in ((91, 1e-6), (92, 1e-6), (93, 0.05)):
        for result in classes_against_brute_force(seed, weight, [(1.6, 1000), (1.0, 700), (1.0, 700), (0.7, 500)]):
            pruned = [entry.get("pruned") for entry in result.metrics["method_stats"]["multisets"]]
            assert "dominated" in pruned


def test_highs_options_reach_the_solver():
    """min x + y s.t. 2x + 3y >= 7 over the integers: x + y = 2 reaches at most 3 x 2 = 6 < 7, x = 2,
    y = 1 gives 3. With HiGHS's objective_bound 2.5 (nothing below 2.5 wanted) the model is infeasible;
    with 3.5 the optimum 3 stands. (The classes method hands its setting mip_pscost_minreliable this way.)"""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.cover = pyo.Constraint(expr=2 * m.x + 3 * m.y >= 7)
    m.objective = pyo.Objective(expr=m.x + m.y)
    assert solve(m, highs_options={"objective_bound": 2.5}).status == "infeasible"
    run = solve(m, highs_options={"objective_bound": 3.5})
    assert run.status == "optimal" and run.objective == pytest.approx(3.0)
    assert solve(m).objective == pytest.approx(3.0)  # default: no options


def test_a_multiset_solve_stopped_without_a_placement_bounds_in_the_score_units(monkeypatch):
    """The classes method's restricted models are scaled (their objective times ``scale``, thousands here). A
    solve that stops without a placement (stubbed: the real solve's answer with its solution taken away)
    ends the method with that model's bound, which must be read back in the score's units: the run's bound
    then stays at or below the brute-force optimum. Read as it is, it put the multiset out of the least."""
    import dataclasses

    from odrp.kinds.latency.exact import classes
    from odrp.kinds.latency.exact.settings import LatencySettings

    real = classes.run_solver

    def no_placement(model, **keywords):
        return dataclasses.replace(real(model, **keywords), status="time_limit", objective=None)

    monkeypatch.setattr(classes, "run_solver", no_placement)
    # the bound read as it was: 2.075, 1.564, 1.357 and 1.55 where brute force finds 1.783, 1.270, 1.012, 1.300
    for seed, supervisors in ((14, 3), (15, 3), (22, 3), (4, 4)):
        inst = load(tiny(seed, supervisors=supervisors))
        best, _ = brute_force(inst)
        outcome = classes.solve(inst, LatencySettings(), "highs", None, 1e-6)
        assert outcome.run.status == "time_limit"
        assert outcome.run.bound <= best * (1 + 1e-9)
