"""The solver backends, one module each: HiGHS (default), CBC, OR-Tools CP-SAT and SCIP, and the commercial ones.

``solve(model, solver=...)`` runs a Pyomo model with a time limit and a relative MIP gap and
returns a :class:`SolverRun` with a status from the Result vocabulary (optimal, feasible,
infeasible, time_limit, error), the incumbent objective, the proven bound and the gap. When a
solution exists it is loaded into the model's variables.

- HiGHS through Pyomo's ``pyomo.contrib.solver`` interface (highspy underneath).
- CBC is the binary that PuLP bundles, driven through Pyomo's CBC shell interface
  (``executable=``); no system package is needed.
- CP-SAT (OR-Tools) gets the same Pyomo model, translated row by row, when its variables are integers
  with finite bounds and its coefficients can be scaled to integers exactly (:mod:`odrp.core.solvers.cpsat`).
- SCIP (PySCIPOpt) gets the model through the same row-by-row reading (:mod:`odrp.core.solvers.linear`,
  :mod:`odrp.core.solvers.scip`).
- Gurobi, CPLEX and Xpress run through Pyomo's direct interfaces when their package is installed and
  licensed (:mod:`odrp.core.solvers.commercial`); otherwise a run is bad input naming ``--solver``.

MIP starts (``warm_start=True``): the values the caller gave the model's integer variables (see the
contract in :mod:`odrp.core.exact`) go to the solver as a starting incumbent; each backend's module
says how, and :attr:`SolverRun.warm_start` reports what the solver's log said of it.

Threads (``threads=N``; None: the solver's own default): HiGHS's and CBC's ``threads``, CP-SAT's
``num_workers``, the commercial solvers' thread option; SCIP runs on one thread
(:mod:`odrp.core.solvers.scip` says why). :attr:`SolverRun.threads` records what the solver was given.
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from odrp.core.progress import ModelWatch
from odrp.core.solvers import cbc, commercial, cpsat, highs, scip
from odrp.core.solvers.run import (
    COMMERCIAL,
    DEFAULT_MIP_GAP,
    DEFAULT_SOLVER,
    MILP_SOLVERS,
    SOLVERS,
    SolverRun,
)


def solve(
    model: pyo.ConcreteModel,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: bool = False,
    highs_options: dict[str, Any] | None = None,
    watch: ModelWatch | None = None,
    threads: int | None = None,
    feasibility_tolerance: float | None = None,
) -> SolverRun:
    """Solve ``model`` (one active objective) and load the incumbent, if any, into it.

    With ``warm_start``, the current values of the model's integer variables are the MIP start.
    ``highs_options``: further HiGHS options (name -> value) for this solve; the other solvers ignore them.
    ``watch``: inside a watched run, how the solver's improving solutions and bounds become the problem's
    (:mod:`odrp.core.progress`); HiGHS and CP-SAT report them from their callbacks, the others only at
    their end.
    ``threads``: the solver's thread count (None: its own default). ``feasibility_tolerance``: how far a row
    and an integer variable may be off in a solution the solver accepts (None: its default; CP-SAT is exact).
    """
    tolerance = feasibility_tolerance
    if solver == "highs":
        if tolerance is not None:
            tight = {"primal_feasibility_tolerance": tolerance, "mip_feasibility_tolerance": tolerance}
            highs_options = {**tight, **(highs_options or {})}
        return highs.solve(model, time_limit, mip_gap, warm_start, highs_options, watch, threads)
    if solver == "cbc":
        return cbc.solve(model, time_limit, mip_gap, warm_start, threads, tolerance)
    if solver == "cpsat":
        return cpsat.solve(model, time_limit, mip_gap, warm_start, watch, threads)
    if solver == "scip":
        return scip.solve(model, time_limit, mip_gap, warm_start, threads, tolerance)
    if solver in COMMERCIAL:
        return commercial.solve(solver, model, time_limit, mip_gap, warm_start, threads, tolerance)
    raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")


def solver_version(solver: str) -> str:
    """The name and version of a solver, as recorded in Results and datasets."""
    if solver in COMMERCIAL:
        return commercial.version(solver)
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}")
    return {"highs": highs.version, "cbc": cbc.version, "cpsat": cpsat.version, "scip": scip.version}[solver]()


def availability(solver: str) -> str:
    """``available`` for the open-source solvers (dependencies of the toolkit); for the commercial ones what
    :func:`odrp.core.solvers.commercial.availability` finds (``not installed``, ``installed without a licence``,
    ``available (size-limited licence)``, ``available``)."""
    if solver in COMMERCIAL:
        return commercial.availability(solver)
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}")
    return commercial.AVAILABLE


def why_not(solver: str) -> str | None:
    """Why ``solver`` cannot run here (a commercial solver not installed or without a licence, and what to do),
    None when it can."""
    return commercial.why_not(solver) if solver in COMMERCIAL else None


def usable(solver: str) -> bool:
    """Whether ``solver`` can run here (installed and licensed, perhaps for small models only)."""
    return why_not(solver) is None


def require(solver: str) -> None:
    """Raise :class:`odrp.core.solvers.commercial.SolverUnavailable` (bad input naming ``--solver``) unless
    ``solver`` can run here."""
    if solver in COMMERCIAL:
        commercial.require(solver)


__all__ = [
    "COMMERCIAL",
    "DEFAULT_MIP_GAP",
    "DEFAULT_SOLVER",
    "MILP_SOLVERS",
    "SOLVERS",
    "SolverRun",
    "availability",
    "require",
    "solve",
    "solver_version",
    "usable",
    "why_not",
]
