"""The one place that knows the solvers: HiGHS (default), CBC and OR-Tools CP-SAT for Pyomo models.

``solve(model, solver=...)`` runs a Pyomo model with a time limit and a relative MIP gap and
returns a :class:`SolverRun` with a status from the Result vocabulary (optimal, feasible,
infeasible, time_limit, error), the incumbent objective, the proven bound and the gap. When a
solution exists it is loaded into the model's variables.

- HiGHS through Pyomo's ``pyomo.contrib.solver`` interface (highspy underneath).
- CBC is the binary that PuLP bundles, driven through Pyomo's CBC shell interface
  (``executable=``); no system package is needed.
- CP-SAT (OR-Tools) gets the same Pyomo model, translated row by row (:func:`_solve_cpsat`). It
  accepts integer variables with finite bounds and integer coefficients only: each row and the
  objective are multiplied by the least common denominator of their coefficients (every value read
  as a fraction with denominator <= 10**6, e.g. 0.1 as 1/10; :func:`integer_scale`). A model with a
  continuous variable, a nonlinear row or a coefficient that is no such fraction is not solved: the
  run ends with status ``error`` and a message saying why.

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
import dataclasses
import functools
import logging
import math
import os
import re
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pyomo.environ as pyo
from pyomo.opt import SolverStatus, TerminationCondition

from odrp.result import Status, relative_gap

SOLVERS = ("highs", "cbc", "cpsat")
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
    highs_options: dict[str, Any] | None = None,
) -> SolverRun:
    """Solve ``model`` (one active objective) and load the incumbent, if any, into it.

    With ``warm_start``, the current values of the model's integer variables are the MIP start.
    ``highs_options``: further HiGHS options (name -> value) for this solve; the other solvers ignore them.
    """
    if solver == "highs":
        return _solve_highs(model, time_limit, mip_gap, warm_start, highs_options)
    if solver == "cbc":
        return _solve_cbc(model, time_limit, mip_gap, warm_start)
    if solver == "cpsat":
        return _solve_cpsat(model, time_limit, mip_gap, warm_start)
    raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")


@functools.cache
def solver_version(solver: str) -> str:
    """The name and version of a solver, as recorded in Results and datasets (asked once per process:
    building a ``Highs()`` on every call cost 2.5 s of a 60 s throughput search)."""
    if solver == "highs":
        import highspy

        h = highspy.Highs()
        return f"highs {h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"
    if solver == "cbc":
        version = _cbc().version()
        return "cbc " + ".".join(str(p) for p in version) if version else "cbc"
    if solver == "cpsat":
        import ortools

        return f"cpsat {ortools.__version__}"
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


def _solve_highs(
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool,
    highs_options: dict[str, Any] | None = None,
) -> SolverRun:
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
    options: dict[str, float | str] = {"ratio": mip_gap}
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
    tc = results.solver.termination_condition
    sense = _sense(model)
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


# -------------------------------------------------------------------------------------- CP-SAT

CPSAT_MAX_DENOMINATOR = 10**6


class NotIntegral(ValueError):
    """A model CP-SAT cannot take exactly (continuous variable, nonlinear row, irrational coefficient)."""


def integer_scale(values: Iterable[float], max_denominator: int = CPSAT_MAX_DENOMINATOR) -> int:
    """The least L such that L * v is an integer for every value, each value read as the fraction
    with denominator <= ``max_denominator`` it equals to 1e-12 (0.1 as 1/10, 2/3 as 2/3)."""
    lcm = 1
    for v in values:
        frac = Fraction(float(v)).limit_denominator(max_denominator)
        if abs(float(frac) - float(v)) > 1e-12 * max(1.0, abs(float(v))):
            raise NotIntegral(f"{v!r} is no fraction with a denominator <= {max_denominator}")
        lcm = math.lcm(lcm, frac.denominator)
    return lcm


def _scaled(coefs: list[float], scale: int) -> list[int]:
    return [round(c * scale) for c in coefs]


def _cpsat_model(model: pyo.ConcreteModel):
    """Translate ``model`` into CP-SAT: (CpModel, {pyomo var: cp var}, objective scale, objective constant)."""
    from ortools.sat.python import cp_model
    from pyomo.repn import generate_standard_repn

    cp = cp_model.CpModel()
    cpvar: dict[int, tuple[object, object]] = {}

    def variable(var):
        if id(var) not in cpvar:
            lb, ub = var.bounds
            if not (var.is_integer() or var.is_binary()) or lb is None or ub is None:
                raise NotIntegral(f"variable {var.name} is not an integer variable with finite bounds")
            cpvar[id(var)] = (var, cp.new_int_var(math.ceil(lb - 1e-9), math.floor(ub + 1e-9), var.name))
        return cpvar[id(var)][1]

    def linear(expr, what: str):
        repn = generate_standard_repn(expr, compute_values=True, quadratic=False)
        if not repn.is_linear():
            raise NotIntegral(f"{what} is not linear")
        return list(repn.linear_vars), [float(c) for c in repn.linear_coefs], float(repn.constant or 0.0)

    for con in model.component_data_objects(pyo.Constraint, active=True):
        xs, coefs, constant = linear(con.body, f"constraint {con.name}")
        lo = None if con.lower is None else pyo.value(con.lower) - constant
        up = None if con.upper is None else pyo.value(con.upper) - constant
        try:
            scale = integer_scale([*coefs, *(b for b in (lo, up) if b is not None)])
        except NotIntegral as error:
            raise NotIntegral(f"constraint {con.name}: {error}") from None
        terms = sum(c * variable(x) for c, x in zip(_scaled(coefs, scale), xs, strict=True) if c)
        low = -cp_model.INT_MAX if lo is None else round(lo * scale)
        high = cp_model.INT_MAX if up is None else round(up * scale)
        if isinstance(terms, int):  # no variable left: a constant row
            if not low <= 0 <= high:
                cp.add_bool_or([])  # infeasible
            continue
        cp.add_linear_constraint(terms, low, high)
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    xs, coefs, constant = linear(objective.expr, "the objective")
    try:
        scale = integer_scale(coefs)
    except NotIntegral as error:
        raise NotIntegral(f"objective: {error}") from None
    expr = sum(c * variable(x) for c, x in zip(_scaled(coefs, scale), xs, strict=True) if c)
    if objective.sense == pyo.maximize:
        cp.maximize(expr)
    else:
        cp.minimize(expr)
    for var in model.component_data_objects(pyo.Var, active=True):
        if not var.fixed:
            variable(var)
    return cp, list(cpvar.values()), scale, constant


def _solve_cpsat(
    model: pyo.ConcreteModel, time_limit: float | None, mip_gap: float, warm_start: bool = False
) -> SolverRun:
    began = time.perf_counter()
    try:
        cp, variables, scale, constant = _cpsat_model(model)
    except NotIntegral as error:
        message = f"CP-SAT needs integer variables and coefficients it can scale exactly: {error}"
        return SolverRun(solver_version("cpsat"), "error", None, None, None, time.perf_counter() - began, message)
    hinted = 0
    if warm_start:  # CP-SAT takes a start as hints, completed and repaired by its own search
        for var, cpv in variables:
            if var.value is not None:
                cp.add_hint(cpv, round(var.value))
                hinted += 1
    left = None if time_limit is None else max(0.01, float(time_limit) - (time.perf_counter() - began))
    run, solver = run_cpsat(cp, _sense(model), left, mip_gap, workers=0)  # 0: CP-SAT's own worker count
    if run.has_solution:
        for var, cpv in variables:
            var.set_value(solver.value(cpv), skip_validation=True)
    objective = None if run.objective is None else run.objective / scale + constant
    bound = None if run.bound is None else run.bound / scale + constant
    return dataclasses.replace(
        run,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, _sense(model)),  # type: ignore[arg-type]
        runtime_s=time.perf_counter() - began,
        warm_start={"accepted": None, "objective": None, "log": [f"{hinted} hints"]} if warm_start else None,
    )


# ------------------------------------------------------------------ highspy and CP-SAT directly


@contextlib.contextmanager
def c_stdout_silenced():
    """Send the C-level stdout to /dev/null: HiGHS prints some MIP messages there even when silent,
    which would break ``odrp solve --json`` (one JSON object on stdout)."""
    import sys

    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def run_highspy(
    highs,
    sense: str,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    mip: bool = True,
    max_solutions: int | None = None,
) -> SolverRun:
    """Run a ``highspy.Highs`` that holds a model; status, incumbent, bound and gap as a :class:`SolverRun`.

    For a model that is infeasible HiGHS proves it (status ``infeasible``); the column values of an
    incumbent are ``highs.getSolution().col_value``.
    """
    import highspy

    highs.setOptionValue("output_flag", False)
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
    return SolverRun(
        solver=solver_version("highs"),
        status=status,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, sense),
        runtime_s=runtime,
        message="" if status != "error" else f"HiGHS ended with {highs.modelStatusToString(model_status)}",
    )


CPSAT_PARAMETERS: dict[str, object] = {"presolve_inclusion_work_limit": 0}
"""Extra CP-SAT parameters (name -> value) for every :func:`run_cpsat`.

``presolve_inclusion_work_limit`` 0 switches off the presolve's inclusion detection, which in CP-SAT 9.15.6755 (the
newest on PyPI) answers INFEASIBLE on feasible models (google/or-tools#5274, #5293: fixed after that release). Seen
here (stop 23): a P(rho) on a subset of 10 x 10 seed 8 at 575.743 (below R* = 575.876) that a placement satisfies was
called infeasible with every other setting tried (probing off, one or eight workers, symmetry detection off); with
this parameter, or with no presolve, it is feasible. The exact method had then proved 575.743 optimal. The same
parameter also fixes the wrong INFEASIBLE of stop 22's ``QUICK_BOX`` (probing off), first blamed on probing."""


def run_cpsat(
    model,
    sense: str,
    time_limit: float | None = None,
    gap_limit: float = 0.0,
    workers: int = 1,
    max_solutions: int | None = None,
    parameters: dict[str, object] | None = None,
):
    """Solve an OR-Tools CP-SAT model; returns (SolverRun, the CpSolver that holds the values).

    ``gap_limit`` is CP-SAT's relative gap limit (0: prove the optimum); ``max_solutions`` stops the
    search after that many improving solutions (status ``feasible``); ``parameters``: CP-SAT parameters for
    this run (after ``CPSAT_PARAMETERS``). A run stopped by a limit without a decision (wall clock or
    ``max_deterministic_time``) has status ``time_limit``.
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers)
    solver.parameters.relative_gap_limit = float(gap_limit)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
    for key, value in {**CPSAT_PARAMETERS, **(parameters or {})}.items():
        setattr(solver.parameters, key, value)
    limited = time_limit is not None or "max_deterministic_time" in (parameters or {})
    callback = _StopAfter(max_solutions) if max_solutions is not None else None
    start = time.perf_counter()
    code = solver.Solve(model, callback)
    runtime = time.perf_counter() - start
    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    with_objective = model.HasObjective()
    objective = solver.ObjectiveValue() if has_solution and with_objective else None
    bound = solver.BestObjectiveBound() if has_solution and with_objective else None
    gap = relative_gap(objective, bound, sense)  # type: ignore[arg-type]
    if code == cp_model.OPTIMAL or (code == cp_model.FEASIBLE and gap is not None and gap <= gap_limit):
        status: Status = "optimal"  # proven, or within the gap limit asked for
    elif code == cp_model.FEASIBLE and callback is not None and callback.stopped:
        status = "feasible"
    elif code == cp_model.INFEASIBLE:
        status = "infeasible"
    elif code in (cp_model.FEASIBLE, cp_model.UNKNOWN) and limited:
        status = "time_limit"
    elif has_solution:
        status = "feasible"
    else:
        status = "error"
    run = SolverRun(
        solver=cpsat_version(),
        status=status,
        objective=objective,
        bound=bound,
        gap=gap,
        runtime_s=runtime,
        message="" if status != "error" else f"CP-SAT ended with {solver.StatusName(code)}",
    )
    return run, solver


@functools.cache
def cpsat_version() -> str:
    """CP-SAT's name and version (OR-Tools), as recorded in Results."""
    return solver_version("cpsat")


def _StopAfter(count: int):  # a class factory: ortools is imported lazily
    from ortools.sat.python import cp_model

    class StopAfter(cp_model.CpSolverSolutionCallback):
        """Stop CP-SAT after ``count`` improving solutions."""

        def __init__(self) -> None:
            super().__init__()
            self.found = 0
            self.stopped = False

        def on_solution_callback(self) -> None:
            self.found += 1
            if self.found >= count:
                self.stopped = True
                self.StopSearch()

    return StopAfter()
