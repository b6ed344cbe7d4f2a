"""The solver backends, one module each: HiGHS (default), CBC and OR-Tools CP-SAT for Pyomo models.

``solve(model, solver=...)`` runs a Pyomo model with a time limit and a relative MIP gap and
returns a :class:`SolverRun` with a status from the Result vocabulary (optimal, feasible,
infeasible, time_limit, error), the incumbent objective, the proven bound and the gap. When a
solution exists it is loaded into the model's variables.

- HiGHS through Pyomo's ``pyomo.contrib.solver`` interface (highspy underneath).
- CBC is the binary that PuLP bundles, driven through Pyomo's CBC shell interface
  (``executable=``); no system package is needed.
- CP-SAT (OR-Tools) gets the same Pyomo model, translated row by row, when its variables are integers
  with finite bounds and its coefficients can be scaled to integers exactly (:mod:`odrp.core.solvers.cpsat`).

MIP starts (``warm_start=True``): the values the caller gave the model's integer variables (see the
contract in :mod:`odrp.core.exact`) go to the solver as a starting incumbent; each backend's module
says how, and :attr:`SolverRun.warm_start` reports what the solver's log said of it.
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from odrp.core.progress import ModelWatch
from odrp.core.solvers import cbc, cpsat, highs
from odrp.core.solvers.run import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SOLVERS, SolverRun


def solve(
    model: pyo.ConcreteModel,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: bool = False,
    highs_options: dict[str, Any] | None = None,
    watch: ModelWatch | None = None,
) -> SolverRun:
    """Solve ``model`` (one active objective) and load the incumbent, if any, into it.

    With ``warm_start``, the current values of the model's integer variables are the MIP start.
    ``highs_options``: further HiGHS options (name -> value) for this solve; the other solvers ignore them.
    ``watch``: inside a watched run, how the solver's improving solutions and bounds become the problem's
    (:mod:`odrp.core.progress`); HiGHS and CP-SAT report them from their callbacks, CBC (a separate
    program, driven through files) only at its end.
    """
    if solver == "highs":
        return highs.solve(model, time_limit, mip_gap, warm_start, highs_options, watch)
    if solver == "cbc":
        return cbc.solve(model, time_limit, mip_gap, warm_start)
    if solver == "cpsat":
        return cpsat.solve(model, time_limit, mip_gap, warm_start, watch)
    raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")


def solver_version(solver: str) -> str:
    """The name and version of a solver, as recorded in Results and datasets."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}")
    return {"highs": highs.version, "cbc": cbc.version, "cpsat": cpsat.version}[solver]()


__all__ = ["DEFAULT_MIP_GAP", "DEFAULT_SOLVER", "SOLVERS", "SolverRun", "solve", "solver_version"]
