"""Exact formulations, one module (or package) per problem kind, and what they return."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo
from pyomo.core.expr.visitor import identify_variables

from odrp.solvers import SolverRun


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
