"""Exact formulations, one module (or package) per problem kind, and what they return.

**Warm starts (MIP starts): the contract for every kind.** A kind's exact method accepts
``warm_start``: a solution JSON of the kind (as ``odrp solve --warm-start FILE|METHOD`` and the
benchmark runner provide it), or None. To support it, a kind's model module provides one function

    set_start(model, instance, solution) -> None

that gives **every integer variable** of the built model its value at that solution (continuous
variables may stay unset; :func:`clear_values` first, then the nonzero ones). The exact method then
calls ``odrp.core.solvers.solve(model, ..., warm_start=True)``, which hands the integer values to the
solver as a MIP start: HiGHS completes the continuous variables by an LP with the integers fixed,
CBC by its own mipstart procedure. Before that the exact method asks the kind's evaluator whether
the solution is feasible (:func:`checked_start`): an infeasible start is bad input, never passed
on. ``ExactOutcome.stats["warm_start"]`` records the start's objective (evaluator) and what the
solver's log said about it (``SolverRun.warm_start``). ODRP's ``odrp.kinds.replication.exact.compact.set_start``
and ``odrp.kinds.replication.exact.paper.set_start`` are the reference implementations.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables

from odrp.core.errors import InputError
from odrp.core.solvers import SolverRun


@dataclass
class ExactOutcome:
    """An exact method's answer before the evaluator re-scores it."""

    run: SolverRun
    solution: dict[str, Any] | None
    stats: dict[str, Any] = field(default_factory=dict)


def model_size(model: pyo.ConcreteModel, nonzeros: bool = False) -> dict[str, int]:
    """Variables (and how many are integer), constraints and, on request, nonzeros of a model."""
    variables = list(model.component_data_objects(pyo.Var, active=True))
    constraints = list(model.component_data_objects(pyo.Constraint, active=True))
    size = {
        "variables": len(variables),
        "integer_variables": sum(1 for v in variables if v.is_integer() or v.is_binary()),
        "constraints": len(constraints),
    }
    if nonzeros:
        size["nonzeros"] = sum(len(set(map(id, identify_variables(c.body)))) for c in constraints)
    return size


def clear_values(model: pyo.ConcreteModel) -> None:
    """Forget every variable value of ``model`` and set its integer variables to 0 (a start's base)."""
    for var in model.component_data_objects(pyo.Var, active=True):
        if not var.fixed:
            var.set_value(0 if var.is_integer() or var.is_binary() else None, skip_validation=True)


def checked_start(evaluate: Any, instance: Any, solution: dict[str, Any]) -> float:
    """The objective of a warm-start solution by the kind's evaluator; InputError if infeasible."""
    evaluation = evaluate(instance, solution, "warm start")
    if not evaluation.feasible:
        raise InputError("warm start", "solution", "a feasible solution: " + "; ".join(evaluation.violations))
    return float(evaluation.objective)


def warm_start_stats(objective: float, run: SolverRun) -> dict[str, Any]:
    """What an exact method records about its MIP start (``stats["warm_start"]``)."""
    report = run.warm_start or {}
    return {
        "objective": objective,
        "accepted": report.get("accepted"),
        "solver_objective": report.get("objective"),
        "solver_log": report.get("log", []),
    }


def best_outcome(outcomes: list[ExactOutcome], sense: str, mip_gap: float) -> ExactOutcome:
    """Several exact methods' answers on one instance as one: the best incumbent with the best bound.

    Every method's bound is a bound of the problem, so the tightest of them holds (the smallest for a
    maximisation, the largest for a minimisation); the answer is ``optimal`` when one method proved it or
    when the best incumbent meets the best bound within ``mip_gap``. The stats are the incumbent's
    method's, with ``combined`` recording each method's status, objective and bound.
    """
    from odrp.core.result import agrees, relative_gap

    if not outcomes:
        raise ValueError("no outcome to combine")
    better = (lambda a, b: a > b) if sense == "max" else (lambda a, b: a < b)
    with_solution = [o for o in outcomes if o.solution is not None and o.run.objective is not None]
    best = outcomes[0]
    for outcome in with_solution:
        if best.solution is None or best.run.objective is None or better(outcome.run.objective, best.run.objective):
            best = outcome
    objective = best.run.objective
    bounds = [o.run.bound for o in outcomes if o.run.bound is not None and o.run.status != "infeasible"]
    if objective is not None:  # a bound beaten by a verified incumbent is wrong (dropped); one that agrees
        # with it is the incumbent's value, rounded (clamped)
        consistent = [b for b in bounds if agrees(b, objective) or better(b, objective)]
        bounds = [objective if agrees(b, objective) else b for b in consistent]
    bound = (min(bounds) if sense == "max" else max(bounds)) if bounds else None
    gap = relative_gap(objective, bound, sense)  # type: ignore[arg-type]
    proven = any(o.run.status == "optimal" for o in outcomes) or (gap is not None and gap <= mip_gap)
    status = "optimal" if proven and objective is not None else best.run.status
    if status != "optimal" and any(o.run.status == "infeasible" for o in outcomes) and objective is None:
        status = "infeasible"
    run = dataclasses.replace(best.run, status=status, bound=bound, gap=gap)
    stats = dict(best.stats)
    stats["combined"] = [
        {"status": o.run.status, "objective": o.run.objective, "bound": o.run.bound, "method": o.stats.get("method")}
        for o in outcomes
    ]
    return ExactOutcome(run, best.solution, stats)
