"""The one place that knows the solvers: HiGHS (default) and CBC for Pyomo models.

``solve(model, solver=...)`` runs a Pyomo model with a time limit and a relative MIP gap and
returns a :class:`SolverRun` with a status from the Result vocabulary (optimal, feasible,
infeasible, time_limit, error), the incumbent objective, the proven bound and the gap. When a
solution exists it is loaded into the model's variables.

- HiGHS through Pyomo's ``pyomo.contrib.solver`` interface (highspy underneath).
- CBC is the binary that PuLP bundles, driven through Pyomo's CBC shell interface
  (``executable=``); no system package is needed.

**MIP starts** (``warm_start=True``): the values the caller gave the model's integer variables
(see the contract in :mod:`odrp.models`) go to the solver as a starting incumbent. HiGHS gets them
through ``Highs.setSolution`` (sparse: the integer columns only) and completes the continuous
columns itself by solving the LP with the integers fixed; its log then says "MIP start solution is
feasible, objective value is F". CBC gets them through Pyomo's ``warmstart=True`` (a ``-mipstart``
file of the nonzero integer values); its log says "MIPStart values read for N variables" and
"MIPStart provided solution with cost F". :attr:`SolverRun.warm_start` reports what the log said.
Two CBC 2.10 caveats, both visible in its log: the cost it prints for the start can leave out the
objective's constant term (Pyomo writes it as a fixed column), and its preprocessing may cut off a
feasible but non-optimal start ("mipstart values could not be used to build a solution",
coin-or/Cbc#282), which ``accepted: false`` reports.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo
from pyomo.opt import SolverStatus, TerminationCondition

from odrp.result import Status, relative_gap

SOLVERS = ("highs", "cbc")
DEFAULT_SOLVER = "highs"
DEFAULT_MIP_GAP = 1e-6


@dataclass
class SolverRun:
    """What a solver said about one model."""

    solver: str
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    message: str = ""
    warm_start: dict[str, Any] | None = None
    """With a MIP start: ``accepted`` (the solver took it as an incumbent; None if its log does
    not say), the start's ``objective`` as the solver computed it, and the solver's ``log`` lines
    about it."""

    @property
    def has_solution(self) -> bool:
        return self.objective is not None


def solve(
    model: pyo.ConcreteModel,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: bool = False,
) -> SolverRun:
    """Solve ``model`` (one active objective) and load the incumbent, if any, into it.

    With ``warm_start``, the current values of the model's integer variables are the MIP start.
    """
    if solver == "highs":
        return _solve_highs(model, time_limit, mip_gap, warm_start)
    if solver == "cbc":
        return _solve_cbc(model, time_limit, mip_gap, warm_start)
    raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")


def solver_version(solver: str) -> str:
    """The name and version of a solver, as recorded in Results and datasets."""
    if solver == "highs":
        import highspy

        h = highspy.Highs()
        return f"highs {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"
    if solver == "cbc":
        version = _cbc().version()
        return "cbc " + ".".join(str(p) for p in version) if version else "cbc"
    raise ValueError(f"unknown solver {solver!r}")


def _sense(model: pyo.ConcreteModel) -> str:
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    return "max" if objective.sense == pyo.maximize else "min"


# --------------------------------------------------------------------------------------- HiGHS


def integer_start(model: pyo.ConcreteModel) -> dict[int, float]:
    """id(variable) -> value for every integer variable of ``model`` that has a value."""
    return {
        id(var): float(var.value)
        for var in model.component_data_objects(pyo.Var, active=True)
        if var.value is not None and not var.fixed and (var.is_integer() or var.is_binary())
    }


def _highs_interface(warm_start: bool):
    """Pyomo's HiGHS interface; with ``warm_start`` one that passes the integer values as a MIP start.

    Pyomo's ``pyomo.contrib.solver`` HiGHS interface has no warm start (the older appsi one has);
    the subclass hands the values to ``Highs.setSolution`` after Pyomo has built the HiGHS model
    and before it runs (``_solve``, ``_solver_model`` and ``_pyomo_var_to_solver_var_map`` are that
    interface's own names in Pyomo 6.9-6.10; tests/test_warm_start.py checks the log line).
    """
    from pyomo.contrib.solver.common.factory import SolverFactory

    if not warm_start:
        return SolverFactory("highs")
    import numpy as np
    from pyomo.contrib.solver.solvers.highs import Highs

    class HighsWithMipStart(Highs):
        def _solve(self):
            values = integer_start(self._model)
            columns = {self._pyomo_var_to_solver_var_map[v]: x for v, x in values.items()}
            self._solver_model.setSolution(
                len(columns), np.array(list(columns), dtype=np.int32), np.array(list(columns.values()), dtype=float)
            )
            return super()._solve()

    return HighsWithMipStart()


_HIGHS_START = re.compile(r"MIP start solution is feasible, objective value is ([-+0-9.eE]+)")


def _highs_start_report(log: str) -> dict[str, Any]:
    lines = [line for line in log.splitlines() if "mip start" in line.lower() or "user-supplied" in line.lower()]
    found = _HIGHS_START.search(log)
    accepted = True if found else (False if any("infeasible" in line.lower() for line in lines) else None)
    return {"accepted": accepted, "objective": float(found.group(1)) if found else None, "log": lines}


def _solve_highs(model: pyo.ConcreteModel, time_limit: float | None, mip_gap: float, warm_start: bool) -> SolverRun:
    from pyomo.contrib.solver.common.results import SolutionStatus
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    highs = _highs_interface(warm_start)
    start = time.perf_counter()
    results = highs.solve(
        model,
        time_limit=time_limit,
        rel_gap=mip_gap,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
    )
    runtime = time.perf_counter() - start
    has_solution = results.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    if has_solution:
        results.solution_loader.load_vars()
    objective = results.incumbent_objective if has_solution else None
    bound = results.objective_bound
    bound = bound if bound is not None and math.isfinite(bound) else None
    tc = results.termination_condition
    if tc == TC.convergenceCriteriaSatisfied:
        status: Status = "optimal"
        if bound is None:  # a pure LP: the optimum is its own bound
            bound = objective
    elif tc in (TC.provenInfeasible, TC.infeasibleOrUnbounded):
        status = "infeasible"
    elif tc == TC.maxTimeLimit:
        status = "time_limit"
    elif has_solution:
        status = "feasible"
    else:
        status = "error"
    sense = _sense(model)
    return SolverRun(
        solver=solver_version("highs"),
        status=status,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, sense),
        runtime_s=runtime,
        message="" if status != "error" else f"HiGHS ended with {tc.name}",
        warm_start=_highs_start_report(results.solver_log or "") if warm_start else None,
    )


# ----------------------------------------------------------------------------------------- CBC


@functools.cache
def cbc_executable() -> str:
    """Path of the CBC binary bundled with PuLP (made executable if the wheel lost the bit)."""
    from pulp.apis import coin_api

    path = os.path.realpath(coin_api.COIN_CMD.executableExtension(coin_api.pulp_cbc_path))
    if not os.access(path, os.X_OK):
        os.chmod(path, os.stat(path).st_mode | 0o111)
    return path


def _cbc():
    return pyo.SolverFactory("cbc", executable=cbc_executable())


def _solve_cbc(model: pyo.ConcreteModel, time_limit: float | None, mip_gap: float, warm_start: bool) -> SolverRun:
    cbc = _cbc()
    options: dict[str, float] = {"ratio": mip_gap}
    if time_limit is not None:
        options["sec"] = max(1.0, float(time_limit))
    with tempfile.TemporaryDirectory() as tmp:
        logfile = os.path.join(tmp, "cbc.log")
        start = time.perf_counter()
        with _quiet_pyomo():
            results = cbc.solve(model, options=options, load_solutions=False, logfile=logfile, warmstart=warm_start)
        runtime = time.perf_counter() - start
        with open(logfile) as handle:
            log = handle.read()
    tc = results.solver.termination_condition
    sense = _sense(model)
    has_solution = len(results.solution) > 0 and tc not in (
        TerminationCondition.infeasible,
        TerminationCondition.infeasibleOrUnbounded,
    )
    # CBC 2.10 sometimes ends a time-limited search with "Search completed ... Result - Optimal
    # solution found" although its last "best possible" bound is far from the incumbent. A run
    # that used up its time limit is therefore never taken as a proof of optimality.
    timed_out = tc == TerminationCondition.maxTimeLimit or (
        time_limit is not None and _cbc_seconds(log) >= options["sec"] - 0.05
    )
    objective = bound = None
    if has_solution:
        with _quiet_pyomo():
            model.solutions.load_from(results)
        objective = pyo.value(next(model.component_data_objects(pyo.Objective, active=True)))
        raw = results.problem.upper_bound if sense == "max" else results.problem.lower_bound
        bound = float(raw) if raw is not None and math.isfinite(float(raw)) else None
        if timed_out:
            bound = _cbc_best_possible(log)
    if tc == TerminationCondition.optimal and has_solution and not timed_out:
        status: Status = "optimal"
        bound = objective if bound is None else bound
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status = "infeasible"
    elif timed_out:
        status = "time_limit"
    elif has_solution and results.solver.status in (SolverStatus.ok, SolverStatus.aborted):
        status = "feasible"
    else:
        status = "error"
    return SolverRun(
        solver=solver_version("cbc"),
        status=status,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, sense),
        runtime_s=runtime,
        message="" if status != "error" else f"CBC ended with {tc}",
        warm_start=_cbc_start_report(log) if warm_start else None,
    )


_CBC_TIME = re.compile(r"\(([0-9.]+) seconds\)")
_CBC_BEST_POSSIBLE = re.compile(r"best possible ([-+0-9.eE]+)")


_CBC_START = re.compile(r"MIPStart provided solution with cost ([-+0-9.eE]+)")


def _cbc_start_report(log: str) -> dict[str, Any]:
    lines = [
        line.strip() for line in log.splitlines() if "mipstart" in line.lower() and "command line" not in line.lower()
    ]
    found = _CBC_START.search(log)
    accepted = True if found else (False if lines else None)
    return {"accepted": accepted, "objective": float(found.group(1)) if found else None, "log": lines}


def _cbc_seconds(log: str) -> float:
    """The longest elapsed time CBC printed in its branch-and-bound log."""
    return max((float(t) for t in _CBC_TIME.findall(log)), default=0.0)


def _cbc_best_possible(log: str) -> float | None:
    """The last proven bound CBC printed ("best possible ..."), if any."""
    found = _CBC_BEST_POSSIBLE.findall(log)
    return float(found[-1]) if found else None


@contextlib.contextmanager
def _quiet_pyomo():
    """Silence Pyomo's warning about loading a solution from an aborted (time-limited) run."""
    logger = logging.getLogger("pyomo.core")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
