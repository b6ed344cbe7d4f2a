"""CBC: the binary that PuLP bundles, driven through Pyomo's CBC shell interface (``executable=``).

No system package is needed. MIP starts go through Pyomo's ``warmstart=True`` (a ``-mipstart`` file
of the nonzero integer values); CBC's log says "MIPStart values read for N variables" and "MIPStart
provided solution with cost F". Two CBC 2.10 caveats, both visible in its log: the cost it prints for
the start can leave out the objective's constant term (Pyomo writes it as a fixed column), and its
preprocessing may cut off a feasible but non-optimal start ("mipstart values could not be used to
build a solution", coin-or/Cbc#282), which ``accepted: false`` reports.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import re
import sys
import tempfile
import time
from typing import Any

import pyomo.environ as pyo
from pyomo.opt import SolverStatus, TerminationCondition

from odrp.core.result import Status
from odrp.core.solvers.run import SolverRun, log_enabled, model_sense


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


def solve(
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool,
    threads: int | None = None,
    feasibility_tolerance: float | None = None,
) -> SolverRun:
    """``threads``: CBC's ``threads`` (None: CBC's default, one); ``feasibility_tolerance``: its
    ``primalTolerance`` and ``integerTolerance`` (None: CBC's defaults)."""
    cbc = _cbc()
    options: dict[str, float | str] = {"ratio": mip_gap}
    if threads is not None:
        options["threads"] = int(threads)
    if feasibility_tolerance is not None:
        options["primalTolerance"] = options["integerTolerance"] = float(feasibility_tolerance)
    if time_limit is not None:  # wall-clock seconds, as for HiGHS and CP-SAT (CBC's default is CPU time)
        options["timeMode"] = "elapsed"
        options["sec"] = max(1.0, float(time_limit))
    with tempfile.TemporaryDirectory() as tmp:
        logfile = os.path.join(tmp, "cbc.log")
        start = time.perf_counter()
        with _quiet_pyomo():
            results = cbc.solve(model, options=options, load_solutions=False, logfile=logfile, warmstart=warm_start)
        runtime = time.perf_counter() - start
        with open(logfile) as handle:
            log = handle.read()
    if log_enabled():
        sys.stderr.write(log)
    tc = results.solver.termination_condition
    sense = model_sense(model)
    # After a time limit without an incumbent CBC 2.10 still hands Pyomo a "solution" (the LP
    # relaxation's values, termination intermediateNonInteger): its log says there is none.
    no_incumbent = "No feasible solution found" in log or tc == TerminationCondition.intermediateNonInteger
    has_solution = (
        len(results.solution) > 0
        and not no_incumbent
        and tc not in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded)
    )
    # CBC 2.10 sometimes ends a time-limited search with "Search completed ... Result - Optimal
    # solution found" although its last "best possible" bound is far from the incumbent, and when the
    # limit strikes inside its preprocessing it says "Pre-processing says infeasible" of a feasible
    # model. A run that used up its time limit is therefore never taken as a proof of optimality or
    # of infeasibility.
    timed_out = (
        tc == TerminationCondition.maxTimeLimit
        or "Stopped on time limit" in log
        or (time_limit is not None and _cbc_seconds(log) >= float(options["sec"]) - 0.05)
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
        if bound is not None and sense == "max":  # CBC minimises -objective and logs that bound
            bound = -bound
    if tc == TerminationCondition.optimal and has_solution and not timed_out:
        status: Status = "optimal"
        bound = objective if bound is None else bound
    elif timed_out:
        status = "time_limit"
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status = "infeasible"
    elif has_solution and results.solver.status in (SolverStatus.ok, SolverStatus.aborted):
        status = "feasible"
    else:
        status = "error"
    return SolverRun.ended(
        version(),
        status,
        objective,
        bound,
        sense,
        runtime,
        error=f"CBC ended with {tc}",
        warm_start=_cbc_start_report(log) if warm_start else None,
        threads=threads,
    )


_CBC_TIME = re.compile(r"\(([0-9.]+) seconds\)|Wallclock seconds\):\s*([0-9.]+)")
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
    """The longest elapsed time CBC printed: in its branch-and-bound log or its closing wall-clock line."""
    return max((float(a or b) for a, b in _CBC_TIME.findall(log)), default=0.0)


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


@functools.cache
def version() -> str:
    """CBC's name and version, as recorded in Results."""
    found = _cbc().version()
    return "cbc " + ".".join(str(p) for p in found) if found else "cbc"
