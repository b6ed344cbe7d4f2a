"""The columns, rows and objective of a linear Pyomo model, read once for the backends that build their own model.

CP-SAT (:mod:`odrp.core.solvers.cpsat`) and SCIP (:mod:`odrp.core.solvers.scip`) take a Pyomo model
through this one reading: every active constraint ``lower <= sum_j a_j x_j + constant <= upper`` becomes a
:class:`Row` over column indices, with the constant moved into its bounds and fixed variables read as
constants (Pyomo's ``generate_standard_repn``); the objective becomes the same with its constant kept.
Columns are numbered in the order the rows first name them, then the objective, then the model's remaining
free variables (a variable in no row still gets a value). A row or objective that is not linear raises
:class:`NotLinear`; a row left without a variable is checked at once and, when its constant violates its
bounds, named in :attr:`LinearModel.violated`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pyomo.environ as pyo

CONSTANT_TOLERANCE = 1e-9
"""A row without variables holds when its constant is within this (relative, unit floor) of its bounds."""


class NotLinear(ValueError):
    """A constraint or an objective that is not linear in the model's variables."""


@dataclass
class Row:
    """``lower <= sum_k coefficients[k] * x[columns[k]] <= upper`` (None: no such side)."""

    columns: list[int]
    coefficients: list[float]
    lower: float | None
    upper: float | None
    name: str


@dataclass
class LinearModel:
    """A linear Pyomo model as columns, rows and one objective, with the Pyomo variable of every column."""

    variables: list = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    objective_columns: list[int] = field(default_factory=list)
    objective_coefficients: list[float] = field(default_factory=list)
    objective_constant: float = 0.0
    sense: str = "min"
    violated: list[str] = field(default_factory=list)
    """Rows without variables whose constant violates their bounds: the model is infeasible as it stands."""

    def bounds(self, j: int) -> tuple[float, float]:
        """Column ``j``'s bounds, -inf / +inf where it has none."""
        lower, upper = self.variables[j].bounds
        return (-math.inf if lower is None else float(lower), math.inf if upper is None else float(upper))

    def is_integer(self, j: int) -> bool:
        var = self.variables[j]
        return bool(var.is_integer() or var.is_binary())


def linear_model(model: pyo.ConcreteModel) -> LinearModel:
    """Read ``model`` (one active objective) into a :class:`LinearModel`; :class:`NotLinear` if it is not linear."""
    from pyomo.repn import generate_standard_repn

    out = LinearModel()
    column: dict[int, int] = {}

    def index(var) -> int:
        key = id(var)
        if key not in column:
            column[key] = len(out.variables)
            out.variables.append(var)
        return column[key]

    def linear(expr, what: str) -> tuple[list[int], list[float], float]:
        repn = generate_standard_repn(expr, compute_values=True, quadratic=False)
        if not repn.is_linear():
            raise NotLinear(f"{what} is not linear")
        columns = [index(v) for v in repn.linear_vars]
        return columns, [float(c) for c in repn.linear_coefs], float(repn.constant or 0.0)

    for con in model.component_data_objects(pyo.Constraint, active=True):
        columns, coefficients, constant = linear(con.body, f"constraint {con.name}")
        lower = None if con.lower is None else float(pyo.value(con.lower)) - constant
        upper = None if con.upper is None else float(pyo.value(con.upper)) - constant
        if not columns:
            if not _holds(lower, upper):
                out.violated.append(con.name)
            continue
        out.rows.append(Row(columns, coefficients, lower, upper, con.name))
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    out.objective_columns, out.objective_coefficients, out.objective_constant = linear(objective.expr, "the objective")
    out.sense = "max" if objective.sense == pyo.maximize else "min"
    for var in model.component_data_objects(pyo.Var, active=True):
        if not var.fixed:
            index(var)
    return out


def _holds(lower: float | None, upper: float | None) -> bool:
    """Whether 0 lies within [lower, upper], up to :data:`CONSTANT_TOLERANCE`."""
    low_ok = lower is None or lower <= CONSTANT_TOLERANCE * max(1.0, abs(lower))
    high_ok = upper is None or upper >= -CONSTANT_TOLERANCE * max(1.0, abs(upper))
    return low_ok and high_ok
