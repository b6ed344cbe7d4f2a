"""HiGHS: Pyomo models through ``pyomo.contrib.solver`` (highspy underneath), and highspy models directly.

**MIP starts** (``warm_start=True``): the values the caller gave the model's integer variables go to
``Highs.setSolution`` (sparse: the integer columns only); HiGHS completes the continuous columns by
solving the LP with the integers fixed, and its log then says "MIP start solution is feasible,
objective value is F". :attr:`SolverRun.warm_start` reports what the log said.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import sys
import time
from typing import Any

import pyomo.environ as pyo

from odrp.core import progress
from odrp.core.progress import ModelWatch
from odrp.core.result import Status
from odrp.core.solvers.run import DEFAULT_MIP_GAP, SolverRun, c_stdout_silenced, log_enabled, model_sense


@functools.cache
def version() -> str:
    """HiGHS's name and version, as recorded in Results (asked once per process: building a ``Highs()``
    on every call is slow)."""
    import highspy

    h = highspy.Highs()
    return f"highs {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"


def use_threads(threads: int | None) -> None:
    """Make HiGHS's scheduler ready for a run with ``threads`` threads (None: leave it as it is)."""
    if threads is not None:
        import highspy

        highspy.Highs.resetGlobalScheduler(True)


def _reset_after_fork() -> None:
    """In a forked child: drop the scheduler whose worker threads stayed in the parent (HiGHS would wait for
    them forever), if HiGHS is loaded at all."""
    highspy = sys.modules.get("highspy")
    if highspy is not None:
        highspy.Highs.resetGlobalScheduler(True)


os.register_at_fork(after_in_child=_reset_after_fork)


def integer_start(model: pyo.ConcreteModel) -> dict[int, float]:
    """id(variable) -> value for every integer variable of ``model`` that has a value."""
    return {
        id(var): float(var.value)
        for var in model.component_data_objects(pyo.Var, active=True)
        if var.value is not None and not var.fixed and (var.is_integer() or var.is_binary())
    }


def _highs_interface(warm_start: bool, watch: ModelWatch | None = None):
    """Pyomo's HiGHS interface; with ``warm_start`` one that passes the integer values as a MIP start,
    and inside a watched run (:mod:`odrp.core.progress`) with ``watch`` one that reports every improving
    solution and bound as HiGHS finds them.

    Pyomo's ``pyomo.contrib.solver`` HiGHS interface has no warm start (the older appsi one has) and no
    callbacks; the subclass hands the values to ``Highs.setSolution`` and subscribes to HiGHS's callbacks
    after Pyomo has built the HiGHS model and before it runs (``_solve``, ``_solver_model``,
    ``_pyomo_var_to_solver_var_map`` and ``_vars`` are that interface's own names in Pyomo 6.9-6.10;
    tests/test_warm_start.py checks the log line, tests/test_progress.py the reports).
    """
    from pyomo.contrib.solver.common.factory import SolverFactory

    watch = watch if progress.active() else None
    if not warm_start and watch is None:
        return SolverFactory("highs")
    import numpy as np
    from pyomo.contrib.solver.solvers.highs import Highs

    class HighsWithStartAndWatch(Highs):
        def _solve(self):
            if warm_start:
                values = integer_start(self._model)
                columns = {self._pyomo_var_to_solver_var_map[v]: x for v, x in values.items()}
                self._solver_model.setSolution(
                    len(columns), np.array(list(columns), dtype=np.int32), np.array(list(columns.values()), dtype=float)
                )
            if watch is not None:
                _subscribe(self._solver_model, watch, self._column_vars())
            return super()._solve()

        def _column_vars(self) -> list[tuple[int, Any]]:
            return [(column, self._vars[v][0]) for v, column in self._pyomo_var_to_solver_var_map.items()]

    return HighsWithStartAndWatch()


def _subscribe(highs, watch: ModelWatch, columns: list[tuple[int, Any]] | None) -> None:
    """Report HiGHS's improving solutions (decoded through ``columns``: column -> Pyomo variable, or, for a
    highspy model of the caller's, by ``watch.decode`` reading the column values itself) and its bounds."""

    def improving(event) -> None:
        values = event.data_out.mip_solution
        if columns is not None:
            for column, var in columns:
                var.set_value(float(values[column]), skip_validation=True)
            progress.solver_incumbent(watch)
        else:
            progress.solver_incumbent(dataclasses.replace(watch, decode=lambda: watch.decode(list(values))))
        progress.solver_bound(watch, event.data_out.mip_dual_bound)

    def logging(event) -> None:
        progress.solver_bound(watch, event.data_out.mip_dual_bound)

    highs.cbMipImprovingSolution.subscribe(improving)
    highs.cbMipLogging.subscribe(logging)


_HIGHS_START = re.compile(r"MIP start solution is feasible, objective value is ([-+0-9.eE]+)")


def _highs_start_report(log: str) -> dict[str, Any]:
    lines = [line for line in log.splitlines() if "mip start" in line.lower() or "user-supplied" in line.lower()]
    found = _HIGHS_START.search(log)
    accepted = True if found else (False if any("infeasible" in line.lower() for line in lines) else None)
    return {"accepted": accepted, "objective": float(found.group(1)) if found else None, "log": lines}


def solve(
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool,
    highs_options: dict[str, Any] | None = None,
    watch: ModelWatch | None = None,
    threads: int | None = None,
) -> SolverRun:
    from pyomo.contrib.solver.common.results import SolutionStatus
    from pyomo.contrib.solver.common.results import TerminationCondition as TC

    highs = _highs_interface(warm_start, watch)
    use_threads(threads)
    start = time.perf_counter()
    results = highs.solve(
        model,
        tee=[sys.stderr] if log_enabled() else False,
        time_limit=time_limit,
        rel_gap=mip_gap,
        threads=threads,
        load_solutions=False,
        raise_exception_on_nonoptimal_result=False,
        solver_options=dict(highs_options or {}),
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
    return SolverRun.ended(
        version(),
        status,
        objective,
        bound,
        model_sense(model),
        runtime,
        error=f"HiGHS ended with {tc.name}",
        warm_start=_highs_start_report(results.solver_log or "") if warm_start else None,
        threads=threads,
    )


def run_highspy(
    highs,
    sense: str,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    mip: bool = True,
    max_solutions: int | None = None,
    watch: ModelWatch | None = None,
    threads: int | None = None,
) -> SolverRun:
    """Run a ``highspy.Highs`` that holds a model; status, incumbent, bound and gap as a :class:`SolverRun`.

    For a model that is infeasible HiGHS proves it (status ``infeasible``); the column values of an
    incumbent are ``highs.getSolution().col_value``. ``threads``: HiGHS's ``threads`` (None: as set).
    Inside a watched run, ``watch.decode(values)`` gets the column values of each improving solution
    (:mod:`odrp.core.progress`).
    """
    import highspy

    if watch is not None and progress.active():
        _subscribe(highs, watch, None)

    highs.setOptionValue("output_flag", log_enabled())
    if threads is not None:
        use_threads(threads)
        highs.setOptionValue("threads", int(threads))
    highs.setOptionValue("mip_rel_gap", float(mip_gap))
    if time_limit is not None:
        highs.setOptionValue("time_limit", max(0.0, float(time_limit)))
    if max_solutions is not None:
        highs.setOptionValue("mip_max_improving_sols", int(max_solutions))
    start = time.perf_counter()
    with c_stdout_silenced():
        highs.run()
    runtime = time.perf_counter() - start
    model_status = highs.getModelStatus()
    info = highs.getInfo()
    status_codes = highspy.HighsModelStatus
    has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
    objective = info.objective_function_value if has_solution else None
    bound = info.mip_dual_bound if mip else objective
    bound = bound if bound is not None and math.isfinite(bound) else None
    if model_status == status_codes.kOptimal:
        status: Status = "optimal"
        bound = objective if bound is None else bound
    elif model_status in (status_codes.kInfeasible, status_codes.kUnboundedOrInfeasible):
        status, objective, bound = "infeasible", None, None
    elif model_status == status_codes.kTimeLimit:
        status = "time_limit"
    elif has_solution:  # including a stop after max_solutions improving solutions
        status = "feasible"
    else:
        status = "error"
    error = f"HiGHS ended with {highs.modelStatusToString(model_status)}"
    return SolverRun.ended(version(), status, objective, bound, sense, runtime, error=error, threads=threads)
