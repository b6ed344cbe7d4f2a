"""Warm starts for the knapsack family: the start is a point of the model, and the optimum is unchanged.

- Every feasible assignment of tiny instances (enumerated independently of the models), given to
  ``set_start``, must satisfy every row of the built model (both formulations, both linearisations,
  with and without integer auxiliaries) and give the model's objective the evaluator's value.
- A warm-started solve with HiGHS, CBC and CP-SAT returns the brute-force optimum, and its stats
  record the start; HiGHS's log confirms it took the start at the evaluator's value. (On instances
  HiGHS's presolve solves outright, its log says nothing about the start.)
"""

from __future__ import annotations

import json
import math

import pyomo.environ as pyo
import pytest

from odrp.kinds.knapsack.exact import bounds, milp, patterns
from odrp.kinds.knapsack.exact.solve import set_start
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method, warm_start_solution
from tests.knapsack_bruteforce import optimum as brute_force
from tests.knapsack_bruteforce import solutions
from tests.test_knapsack_cli import one_line_error
from tests.test_knapsack_kinds import TINY, load

# Two identical knapsacks (capacity 4), items of weight 3, 2, 2 and profit 6, 5, 4. Among its feasible
# assignments, [1, 0, None] puts load 2 in knapsack 0 and load 3 in knapsack 1 while the compact
# model's symmetry rows ask load[0] >= load[1]: set_start must swap the two knapsacks' contents.
MKP = {"problem": "mkp", "profits": [6, 5, 4], "weights": [3, 2, 2], "capacities": [4, 4]}
CASES = {kind: TINY[kind](3) for kind in ("mkp", "gap", "mdkp", "qkp", "qmkp", "qm3dkp")} | {"mkp, identical": MKP}

MODELS = {
    "compact": lambda f: milp.build(f, milp.Options()),
    "compact, glover, no cuts": lambda f: milp.build(f, milp.Options(linearisation="glover", capacity_cuts=False)),
    "compact, integer auxiliaries": lambda f: milp.build(f, milp.Options(integer_auxiliaries=True)),
    "patterns, integer auxiliaries": lambda f: patterns.build(f, milp.Options(integer_auxiliaries=True))[0],
}


def violated_rows(model: pyo.ConcreteModel) -> list[str]:
    """Rows of ``model`` that its current variable values violate (every variable must have a value)."""
    out = []
    for row in model.component_data_objects(pyo.Constraint, active=True):
        value = pyo.value(row.body)
        lower, upper = pyo.value(row.lower), pyo.value(row.upper)
        if (lower is not None and value < lower - 1e-6) or (upper is not None and value > upper + 1e-6):
            out.append(f"{row.name}: {lower} <= {value} <= {upper}")
    for var in model.component_data_objects(pyo.Var, active=True):
        lb, ub = var.bounds
        if (lb is not None and var.value < lb - 1e-9) or (ub is not None and var.value > ub + 1e-9):
            out.append(f"{var.name} = {var.value} outside [{lb}, {ub}]")
        if (var.is_integer() or var.is_binary()) and abs(var.value - round(var.value)) > 1e-9:
            out.append(f"{var.name} = {var.value} not integer")
    return out


@pytest.mark.parametrize("model_name", sorted(MODELS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_feasible_assignment_is_a_point_of_the_model_with_its_value(case, model_name):
    kind, instance = CASES[case]["problem"], load(CASES[case])
    family = bounds.reduce_capacities(family_of(instance))
    model = MODELS[model_name](family)
    evaluate = KINDS[kind].evaluate
    feasible = [(s, e) for s in solutions(kind, instance) if (e := evaluate(instance, s, "<brute force>")).feasible]
    assert feasible
    for solution, evaluation in feasible[:: max(1, len(feasible) // 100)]:  # about 100, spread over all
        set_start(model, instance, solution)
        assert violated_rows(model) == [], solution
        assert pyo.value(model.objective) == pytest.approx(evaluation.objective, abs=1e-6), solution


@pytest.mark.parametrize("solver", ["highs", "cbc", "cpsat"])
@pytest.mark.parametrize("kind", sorted(TINY))
def test_warm_started_solve_returns_the_brute_force_optimum(kind, solver):
    instance = load(TINY[kind](1))
    start, _ = warm_start_solution(KINDS[kind], instance, "greedy")
    result = run_method(KINDS[kind], instance, "exact", solver=solver, warm_start=start)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(brute_force(kind, instance), abs=1e-6)
    report = result.metrics["method_stats"]["warm_start"]
    assert report["objective"] == pytest.approx(KINDS[kind].evaluate(instance, start, "<start>").objective)
    if solver == "cpsat":  # hints for every variable of the model
        assert report["solver_log"] and report["solver_log"][0].endswith("hints")


@pytest.mark.parametrize("formulation", ["compact", "patterns"])
@pytest.mark.parametrize("kind", ["qmkp", "qm3dkp"])
def test_highs_takes_the_start_at_its_value(kind, formulation):
    instance = load(TINY[kind](3))
    start, origin = warm_start_solution(KINDS[kind], instance, "greedy")
    result = run_method(KINDS[kind], instance, "exact", formulation=formulation, warm_start=start)
    report = result.metrics["method_stats"]["warm_start"]
    assert report["accepted"] is True and report["solver_objective"] == pytest.approx(origin["objective"])


def test_cli_warm_start_from_local_search_and_a_bad_start(run_cli, tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(TINY["qm3dkp"](2)))
    out = run_cli("solve", str(path), "--warm-start", "local_search", "--solver", "cbc", "--json", check=True).stdout
    result = json.loads(out)
    assert result["status"] == "optimal" and result["verified"]
    assert math.isclose(result["objective"], brute_force("qm3dkp", load(TINY["qm3dkp"](2))), abs_tol=1e-6)
    report = result["metrics"]["method_stats"]["warm_start"]
    assert report["source"] == "local_search" and report["objective"] <= result["objective"] + 1e-9
    mkp = tmp_path / "mkp.json"
    mkp.write_text(json.dumps(MKP))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"assignment": [0, 0, 0]}))  # load 3 + 2 + 2 = 7 > 4
    one_line_error(run_cli("solve", str(mkp), "--warm-start", str(bad)), "warm start", "feasible")
    one_line_error(run_cli("solve", str(mkp), "--param", "warm_start=false"), "--param warm_start", "search_start")
