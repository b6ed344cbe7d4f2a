"""SCIP (PySCIPOpt's wheel, SCIP 10, Apache 2.0): Pyomo models translated row by row.

The wheel ships the SCIP library and no ``scip`` program, so Pyomo's shell interface to SCIP cannot run;
Pyomo's own PySCIPOpt interface (``scip_direct``) builds an objective variable and one more row, and takes
a MIP start only with every integer variable set. The model is therefore read by
:func:`odrp.core.solvers.linear.linear_model` (the reading CP-SAT uses too) and built in PySCIPOpt here:
one column per variable with its bounds and type, one linear row per constraint, the objective with its
constant as SCIP's objective offset.

- **Limits**: ``limits/time`` (wall seconds, SCIP's default clock), ``limits/gap`` (the relative MIP gap)
  and ``limits/memory``: the run's memory budget (:func:`odrp.core.memory.budget`) less what the process
  holds already (:func:`odrp.core.limits.data_size`), in MB. SCIP counts only its own memory against it
  and stops cleanly there: with an incumbent the run is ``feasible`` (a message says why it stopped),
  without one it raises :class:`MemoryError`, which the run's limits report as over the budget.
- **Status**: ``optimal`` and ``gaplimit`` are ``optimal`` (proven within the gap asked for), ``infeasible``
  and ``inforunbd`` ``infeasible``, ``timelimit`` ``time_limit``; any other stop is ``feasible`` with an
  incumbent and ``error`` without.
- **MIP starts** (``warm_start=True``): the integer variables' values become a partial solution, which
  SCIP's ``completesol`` heuristic completes before presolving; its log then says "feasible solution found
  by completesol heuristic ... objective value F", or "completion of a partial solution failed".
  :attr:`SolverRun.warm_start` reports that line.
- **Log**: SCIP writes its log to a file always (for the MIP-start report) and, under
  :func:`odrp.core.solvers.run.solver_log` (``--log``), to stderr; never to stdout.
- **Threads**: SCIP's branch and bound runs on one thread. Its concurrent mode (``parallel/maxnthreads``,
  :meth:`pyscipopt.Model.solveConcurrent`) races whole copies of the problem, one per thread, with the
  memory that takes, and has open reports of crashes and hangs, so it is not used: every run records
  ``threads`` 1.
"""

from __future__ import annotations

import functools
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from odrp.core.limits import data_size
from odrp.core.memory import budget
from odrp.core.result import Status
from odrp.core.solvers.linear import NotLinear, linear_model
from odrp.core.solvers.run import SolverRun, c_stdout_silenced, log_enabled

MB = 1024**2

LEAST_MEMORY_MB = 16.0
"""SCIP's memory limit is never set below this (a budget that small is refused before any run starts)."""


@functools.cache
def version() -> str:
    """SCIP's name and version (the library inside PySCIPOpt), as recorded in Results."""
    import pyscipopt

    model = pyscipopt.Model()
    return f"scip {model.getMajorVersion()}.{model.getMinorVersion()}.{model.getTechVersion()}"


def memory_limit_mb() -> float:
    """``limits/memory`` for a run: the memory budget less this process's data segment, in MB."""
    return max(LEAST_MEMORY_MB, (budget() - data_size()) / MB)


def solve(
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool = False,
    threads: int | None = None,
    feasibility_tolerance: float | None = None,
) -> SolverRun:
    """Solve ``model`` with SCIP and load its incumbent, if any, into the model's variables.

    ``threads`` is recorded only (one thread, see the module docstring); ``feasibility_tolerance``: SCIP's
    ``numerics/feastol``, for rows and integrality alike (None: SCIP's default, 1e-6)."""
    import pyscipopt

    began = time.perf_counter()
    try:
        lin = linear_model(model)
    except NotLinear as error:
        return SolverRun(version(), "error", None, None, None, time.perf_counter() - began, f"SCIP: {error}")
    if lin.violated:
        message = f"infeasible: constraint {lin.violated[0]} has no variable and its constant violates it"
        return SolverRun(version(), "infeasible", None, None, None, time.perf_counter() - began, message, threads=1)
    scip = pyscipopt.Model()
    columns = []
    for j in range(len(lin.variables)):
        lower, upper = lin.bounds(j)
        kind = ("B" if lower >= 0 and upper <= 1 else "I") if lin.is_integer(j) else "C"
        low, high = (lower if math.isfinite(lower) else None), (upper if math.isfinite(upper) else None)
        columns.append(scip.addVar(vtype=kind, lb=low, ub=high))
    for row in lin.rows:
        expr = pyscipopt.quicksum(c * columns[j] for c, j in zip(row.coefficients, row.columns, strict=True))
        scip.addCons(pyscipopt.scip.ExprCons(expr, lhs=row.lower, rhs=row.upper))
    objective = pyscipopt.quicksum(
        c * columns[j] for c, j in zip(lin.objective_coefficients, lin.objective_columns, strict=True)
    )
    scip.setObjective(objective + lin.objective_constant, "maximize" if lin.sense == "max" else "minimize")
    given = _partial_solution(scip, lin, columns) if warm_start else 0
    scip.setParam("limits/gap", float(mip_gap))
    scip.setParam("limits/memory", memory_limit_mb())
    if feasibility_tolerance is not None:
        scip.setParam("numerics/feastol", float(feasibility_tolerance))
    if time_limit is not None:
        scip.setParam("limits/time", max(0.0, float(time_limit)))
    if not log_enabled():
        scip.hideOutput()
    with tempfile.TemporaryDirectory(prefix="odrp-scip-") as folder:
        logfile = os.path.join(folder, "scip.log")
        scip.setLogfile(logfile)
        with c_stdout_silenced():
            try:
                scip.optimize()
            except Exception as error:  # SCIP's own allocation failed: the process is at its budget
                if "memory" in str(error).lower():
                    raise MemoryError(str(error)) from None
                raise
        scip.setLogfile(None)
        log = Path(logfile).read_text()
    runtime = time.perf_counter() - began
    return _outcome(scip, lin, columns, log, runtime, given if warm_start else None)


def _partial_solution(scip: Any, lin: Any, columns: list[Any]) -> int:
    """Hand SCIP the integer variables' values as a partial solution; how many were given."""
    sol = scip.createPartialSol()
    given = 0
    for j, var in enumerate(lin.variables):
        if lin.is_integer(j) and var.value is not None:
            scip.setSolVal(sol, columns[j], float(var.value))
            given += 1
    if given:
        scip.addSol(sol)
    return given


def _outcome(scip: Any, lin: Any, columns: list[Any], log: str, runtime: float, given: int | None) -> SolverRun:
    """The run's status, incumbent (loaded into the Pyomo variables) and bound."""
    code = scip.getStatus()
    has_solution = scip.getNSols() > 0
    objective = bound = None
    if has_solution:
        best = scip.getBestSol()
        for var, column in zip(lin.variables, columns, strict=True):
            var.set_value(scip.getSolVal(best, column), skip_validation=True)
        objective = float(scip.getSolObjVal(best))
    dual = scip.getDualbound()
    if code != "infeasible" and abs(dual) < scip.infinity():
        bound = float(dual)
    message = f"SCIP ended with {code}"
    if code in ("optimal", "gaplimit") and has_solution:
        status: Status = "optimal"
    elif code in ("infeasible", "inforunbd"):
        status, objective, bound = "infeasible", None, None
    elif code == "timelimit":
        status = "time_limit"
    elif code == "memlimit" and not has_solution:
        raise MemoryError(f"SCIP stopped at its memory limit ({scip.getParam('limits/memory'):.0f} MB)")
    elif has_solution:
        status = "feasible"
        if code == "memlimit":
            message = f"SCIP stopped at its memory limit ({scip.getParam('limits/memory'):.0f} MB): not proven optimal"
    else:
        status = "error"
    run = SolverRun.ended(
        version(),
        status,
        objective,
        bound,
        lin.sense,
        runtime,
        error=message,
        warm_start=None if given is None else _start_report(log, given),
        threads=1,
    )
    if status == "feasible" and code == "memlimit":
        run.message = message
    return run


def _start_report(log: str, given: int) -> dict[str, Any]:
    """What SCIP's log says of the partial solution (``accepted``, its ``objective``, the ``log`` lines)."""
    lines = [line.strip() for line in log.splitlines() if "completesol" in line or "partial solution" in line]
    completed = [line for line in lines if "feasible solution found by completesol" in line]
    objective = None
    if completed:
        text = completed[0].rsplit("objective value", 1)[-1].strip()
        try:
            objective = float(text)
        except ValueError:
            objective = None
    failed = any("failed" in line for line in lines)
    accepted = True if completed else (False if failed or not given else None)
    return {"accepted": accepted, "objective": objective, "log": lines or [f"{given} values given"]}
