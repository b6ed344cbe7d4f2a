"""A MILP in matrix form (columns, sparse rows) and its hand-over to HiGHS (highspy) or to Pyomo.

The throughput models are rebuilt for every input rate the search tries; building them as arrays
and passing them to highspy directly takes milliseconds where a Pyomo model takes tenths of a
second. CBC gets the same matrix through a Pyomo model (``to_pyomo``) and :func:`odrp.core.solvers.solve`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import highspy
import numpy as np
import pyomo.environ as pyo


@dataclass
class MatrixModel:
    """Columns with bounds, integrality and objective coefficients; rows ``lower <= a x <= upper``."""

    sense: str = "max"
    lower: list[float] = field(default_factory=list)
    upper: list[float] = field(default_factory=list)
    cost: list[float] = field(default_factory=list)
    integer: list[bool] = field(default_factory=list)
    rows: list[tuple[dict[int, float], float, float]] = field(default_factory=list)

    def column(self, lower: float = 0.0, upper: float = math.inf, integer: bool = False, cost: float = 0.0) -> int:
        self.lower.append(lower)
        self.upper.append(upper)
        self.integer.append(integer)
        self.cost.append(cost)
        return len(self.lower) - 1

    def row(self, coefficients: dict[int, float], lower: float = -math.inf, upper: float = math.inf) -> int:
        self.rows.append((coefficients, lower, upper))
        return len(self.rows) - 1

    @property
    def n_columns(self) -> int:
        return len(self.lower)

    def size(self) -> dict[str, int]:
        return {
            "variables": self.n_columns,
            "integer_variables": sum(self.integer),
            "constraints": len(self.rows),
            "nonzeros": sum(len(r[0]) for r in self.rows),
        }

    def to_highs(self, relax: bool = False):
        """A ``highspy.Highs`` holding this model (``relax``: drop integrality)."""
        inf = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_ = self.n_columns
        lp.num_row_ = len(self.rows)
        lp.col_cost_ = np.array(self.cost, dtype=float)
        lp.col_lower_ = np.clip(np.array(self.lower, dtype=float), -inf, inf)
        lp.col_upper_ = np.clip(np.array(self.upper, dtype=float), -inf, inf)
        lp.row_lower_ = np.clip(np.array([r[1] for r in self.rows], dtype=float), -inf, inf)
        lp.row_upper_ = np.clip(np.array([r[2] for r in self.rows], dtype=float), -inf, inf)
        starts, index, value = [0], [], []
        for coefficients, _, _ in self.rows:
            for col, coef in coefficients.items():
                if coef != 0:
                    index.append(col)
                    value.append(coef)
            starts.append(len(index))
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value, dtype=float)
        lp.a_matrix_.num_col_ = self.n_columns
        lp.a_matrix_.num_row_ = len(self.rows)
        lp.sense_ = highspy.ObjSense.kMaximize if self.sense == "max" else highspy.ObjSense.kMinimize
        if not relax and any(self.integer):
            kinds = highspy.HighsVarType
            lp.integrality_ = [kinds.kInteger if i else kinds.kContinuous for i in self.integer]
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.passModel(lp)
        return highs

    def to_pyomo(self) -> pyo.ConcreteModel:
        """The same model in Pyomo (for CBC through :func:`odrp.core.solvers.solve`)."""
        m = pyo.ConcreteModel()
        cols = range(self.n_columns)

        def bounds(_, j):
            lo, hi = self.lower[j], self.upper[j]
            return (None if lo == -math.inf else lo, None if hi == math.inf else hi)

        def domain(_, j):
            return pyo.Integers if self.integer[j] else pyo.Reals

        m.x = pyo.Var(cols, bounds=bounds, domain=domain)
        m.rows = pyo.ConstraintList()
        for coefficients, lo, hi in self.rows:
            if not coefficients:  # an empty row is a constant, which Pyomo refuses as a constraint
                if not lo <= 0.0 <= hi:  # a violated one makes the model infeasible: say so with a row
                    m.zero = pyo.Var(bounds=(0, 0)) if not hasattr(m, "zero") else m.zero
                    m.rows.add(m.zero >= 1)
                continue
            body = sum(coef * m.x[j] for j, coef in coefficients.items())
            m.rows.add((None if lo == -math.inf else lo, body, None if hi == math.inf else hi))
        sense = pyo.maximize if self.sense == "max" else pyo.minimize
        m.objective = pyo.Objective(expr=sum(c * m.x[j] for j, c in enumerate(self.cost) if c), sense=sense)
        return m


def pyomo_values(model: pyo.ConcreteModel) -> list[float]:
    """Column values of a solved :meth:`MatrixModel.to_pyomo` model."""
    return [pyo.value(model.x[j], exception=False) or 0.0 for j in model.x]
