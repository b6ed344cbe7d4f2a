"""Gurobi, CPLEX and FICO Xpress through Pyomo's direct interfaces, when their Python package is installed.

One table (:data:`SOLVERS`) says, for each, its package, Pyomo interface (``gurobi_direct``, ``cplex_direct``,
``xpress_direct``: the same call and the same results for the three) and the names of its options:

=========  ============  ============  =======================  =========  =========================
solver     package       time limit    relative gap             threads    memory (the run's budget)
=========  ============  ============  =======================  =========  =========================
gurobi     gurobipy      TimeLimit     MIPGap                   Threads    SoftMemLimit (GB)
cplex      cplex         timelimit     mip_tolerances_mipgap    threads    mip_limits_treememory (MB)
xpress     xpress        timelimit     miprelstop               threads    maxmemoryhard (MB)
=========  ============  ============  =======================  =========  =========================

**Availability** (:func:`availability`, asked once per process): ``not installed`` when the package cannot be
found (nothing is imported), ``installed without a licence`` when the solver refuses a one-variable model,
``available (size-limited licence)`` when it refuses a model just over the free licence's size (Gurobi 2,000
variables, CPLEX Community Edition 1,000, Xpress Community 5,000 rows and columns), else ``available``.
:func:`require` turns the first two into :class:`SolverUnavailable` (bad input naming ``--solver``), and a
model over a size-limited licence is the same kind of error (:class:`LicenceTooSmall`), never a traceback.

**A run** (:func:`solve`): the solver's log goes to a file (to stderr afterwards under ``--log``), its own
console output nowhere (``odrp solve --json`` prints one object). Status: Pyomo's termination ``optimal`` is
``optimal``, ``infeasible`` (or infeasible-or-unbounded) ``infeasible``, ``maxTimeLimit`` ``time_limit``, and a
run that used up its time limit without a decision is ``time_limit`` too (Xpress reports a time limit without
an incumbent as an error); the incumbent is the finite side of Pyomo's bounds (the lower one when maximising)
and the bound the other. **MIP starts** (``warm_start=True``): Pyomo's ``warmstart`` hands over every variable
that has a value; the continuous variables' values are hidden during the call, so the start is the integer
variables' values, which each solver completes; :attr:`SolverRun.warm_start` reports its log line ("User MIP
start produced solution with objective F" or "Loaded user MIP start with objective F", "MIP start 'm1' defined
initial solution with objective F", "User solution () accepted").
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import importlib.util
import math
import os
import re
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyomo.environ as pyo
from pyomo.opt import TerminationCondition

from odrp.core.errors import InputError
from odrp.core.limits import data_size
from odrp.core.memory import GB, budget
from odrp.core.result import Status
from odrp.core.solvers.run import SolverRun, c_stdout_silenced, log_enabled, model_sense

MB = 1024**2
NUMBER = r"([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
"""A number in a solver's log (without a sentence's closing full stop)."""
INFINITE = 1e20
"""A bound at or beyond this magnitude is no bound (Xpress reports 1e40 where it has none)."""

AVAILABLE = "available"
LIMITED = "available (size-limited licence)"
NOT_INSTALLED = "not installed"
NO_LICENCE = "installed without a licence"


@dataclass(frozen=True)
class Commercial:
    """One commercial solver: its package, Pyomo interface, option names and MIP-start log lines."""

    name: str
    title: str
    package: str
    interface: str
    time_limit: str
    mip_gap: str
    threads: str
    memory: str
    memory_unit: int
    """Bytes per unit of the memory option (GB for Gurobi, MB for the others)."""
    feasibility: tuple[str, str]
    """The options of the row and the integrality tolerance."""
    start_accepted: re.Pattern[str]
    """The log line of a start taken as an incumbent; group 1, when there is one, is its objective."""
    start_lines: re.Pattern[str]
    """Every log line about the start."""
    probe: Callable[[int], None]
    """Solve a model of that many binary variables; raises when the licence refuses it."""
    free_size: int
    """One variable more than the free licence allows."""


def _probe_gurobi(variables: int) -> None:
    import gurobipy

    env = gurobipy.Env(empty=True)
    env.setParam("OutputFlag", 0)
    env.start()
    try:
        model = gurobipy.Model(env=env)
        model.addVars(variables, vtype=gurobipy.GRB.BINARY, obj=1.0)
        model.optimize()
        model.dispose()
    finally:
        env.dispose()


def _probe_cplex(variables: int) -> None:
    import cplex

    problem = cplex.Cplex()
    try:
        for stream in (problem.set_log_stream, problem.set_results_stream, problem.set_warning_stream):
            stream(None)
        problem.set_error_stream(None)
        problem.variables.add(obj=[1.0] * variables, ub=[1.0] * variables, types="B" * variables)
        problem.solve()
    finally:
        problem.end()


def _probe_xpress(variables: int) -> None:
    import xpress

    problem = xpress.problem()
    problem.controls.outputlog = 0
    columns = problem.addVariables(variables, vartype=xpress.binary)
    problem.setObjective(xpress.Sum(columns))
    problem.optimize()


SOLVERS: dict[str, Commercial] = {
    "gurobi": Commercial(
        "gurobi",
        "Gurobi",
        "gurobipy",
        "gurobi_direct",
        "TimeLimit",
        "MIPGap",
        "Threads",
        "SoftMemLimit",
        GB,
        ("FeasibilityTol", "IntFeasTol"),
        re.compile(r"(?:User MIP start produced solution|Loaded user MIP start) with objective " + NUMBER),
        re.compile(r"user MIP start", re.IGNORECASE),
        _probe_gurobi,
        2001,
    ),
    "cplex": Commercial(
        "cplex",
        "CPLEX",
        "cplex",
        "cplex_direct",
        "timelimit",
        "mip_tolerances_mipgap",
        "threads",
        "mip_limits_treememory",
        MB,
        ("simplex_tolerances_feasibility", "mip_tolerances_integrality"),
        re.compile(r"MIP start '[^']*' defined initial solution with objective " + NUMBER),
        re.compile(r"MIP start"),
        _probe_cplex,
        1001,
    ),
    "xpress": Commercial(
        "xpress",
        "Xpress",
        "xpress",
        "xpress_direct",
        "timelimit",
        "miprelstop",
        "threads",
        "maxmemoryhard",
        MB,
        ("feastol", "miptol"),
        re.compile(r"User solution \(.*\) accepted()"),
        re.compile(r"User solution \("),
        _probe_xpress,
        5001,
    ),
}


class SolverUnavailable(InputError):
    """A commercial solver that is not installed or has no licence here (bad input naming ``--solver``)."""


class LicenceTooSmall(InputError):
    """A model larger than the solver's licence allows (bad input naming ``--solver``)."""


def installed(package: str) -> bool:
    """Whether ``package`` can be imported (found on the path, or imported already), without importing it."""
    if package in sys.modules:
        return sys.modules[package] is not None  # None: a package whose import is refused
    return importlib.util.find_spec(package) is not None


@functools.cache
def availability(name: str) -> str:
    """``available``, ``available (size-limited licence)``, ``not installed`` or ``installed without a licence``.

    Asked once per process (a licence check may take a second); the package is only imported when it is installed.
    """
    entry = SOLVERS[name]
    if not installed(entry.package):
        return NOT_INSTALLED
    with _quiet():
        try:
            entry.probe(1)
        except Exception:
            return NO_LICENCE
        try:
            entry.probe(entry.free_size)
        except Exception:
            return LIMITED
    return AVAILABLE


def why_not(name: str) -> str | None:
    """Why ``name`` cannot run here (not installed, no licence, with what to do), None when it can."""
    state = availability(name)
    if state not in (NOT_INSTALLED, NO_LICENCE):
        return None
    how = f"pip install 'odrp-toolkit[{name}]'" if state == NOT_INSTALLED else f"a {SOLVERS[name].title} licence"
    return f"{name} is {state} ({how})"


def require(name: str) -> None:
    """Raise :class:`SolverUnavailable` unless ``name`` can run here."""
    reason = why_not(name)
    if reason is not None:
        raise SolverUnavailable("command line", "--solver", f"a solver that runs here: {reason}; or another solver")


def version(name: str) -> str:
    """The solver's name and the version of its Python package, as recorded in Results."""
    entry = SOLVERS[name]
    try:
        return f"{name} {importlib.metadata.version(entry.package)}"
    except importlib.metadata.PackageNotFoundError:
        return f"{name} ({NOT_INSTALLED})"


def solve(
    name: str,
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool = False,
    threads: int | None = None,
    feasibility_tolerance: float | None = None,
) -> SolverRun:
    """Solve ``model`` with the commercial solver ``name`` and load its incumbent, if any, into the model.

    ``feasibility_tolerance``: the solver's row and integrality tolerances (None: its defaults)."""
    require(name)
    entry = SOLVERS[name]
    options: dict[str, Any] = {entry.mip_gap: float(mip_gap)}
    if feasibility_tolerance is not None:
        options.update(dict.fromkeys(entry.feasibility, float(feasibility_tolerance)))
    if time_limit is not None:
        options[entry.time_limit] = max(0.01, float(time_limit))
    if threads is not None:
        options[entry.threads] = int(threads)
    memory = max(16 * MB, budget() - data_size()) / entry.memory_unit
    options[entry.memory] = memory if entry.memory_unit == GB else int(memory)  # MB options are integers
    opt = pyo.SolverFactory(entry.interface)
    sense = model_sense(model)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"odrp-{name}-") as folder:
        logfile = os.path.join(folder, f"{name}.log")
        where: dict[str, Any] = {}
        if name == "gurobi":  # Pyomo's Gurobi interface writes its log file only through Gurobi's own option
            options["LogFile"] = logfile
        else:
            where["logfile"] = logfile
        try:
            with _quiet(), _integer_values_only(model, warm_start):
                results = opt.solve(model, load_solutions=False, warmstart=warm_start, options=options, **where)
        except Exception as error:
            return _failed(entry, error, time.perf_counter() - began)
        runtime = time.perf_counter() - began
        log = Path(logfile).read_text() if os.path.exists(logfile) else ""
    if log_enabled():
        sys.stderr.write(log)
    return _outcome(entry, opt, model, results, sense, runtime, time_limit, log, warm_start, threads)


def _outcome(
    entry: Commercial,
    opt: Any,
    model: pyo.ConcreteModel,
    results: Any,
    sense: str,
    runtime: float,
    time_limit: float | None,
    log: str,
    warm_start: bool,
    threads: int | None,
) -> SolverRun:
    """Status, incumbent and bound of a finished run; the incumbent loaded into the model."""
    lower, upper = _finite(results.problem.lower_bound), _finite(results.problem.upper_bound)
    incumbent, bound = (lower, upper) if sense == "max" else (upper, lower)
    objective = None
    if incumbent is not None:
        with _quiet():
            opt.load_vars()
        objective = pyo.value(next(model.component_data_objects(pyo.Objective, active=True)))
    tc = results.solver.termination_condition
    used_up = time_limit is not None and runtime >= 0.99 * time_limit
    message = f"{entry.title} ended with {tc}"
    if tc == TerminationCondition.optimal and objective is not None:
        status: Status = "optimal"
        bound = objective if bound is None else bound
    elif tc in (TerminationCondition.infeasible, TerminationCondition.infeasibleOrUnbounded):
        status, objective, bound = "infeasible", None, None
    elif tc == TerminationCondition.maxTimeLimit or used_up:
        status = "time_limit"
    elif objective is None and "memory" in str(results.solver.message).lower():
        raise MemoryError(f"{entry.title} stopped at its memory limit: {results.solver.message}")
    elif objective is not None:
        status = "feasible"
    else:
        status = "error"
    return SolverRun.ended(
        version(entry.name),
        status,
        objective,
        bound,
        sense,
        runtime,
        error=message,
        warm_start=_start_report(entry, log) if warm_start else None,
        threads=threads,
    )


def _failed(entry: Commercial, error: Exception, runtime: float) -> SolverRun:
    """A run whose solver raised: over a size-limited licence is bad input, anything else an ``error`` run."""
    text = " ".join(str(error).split())
    if re.search(r"size.limit|licen[cs]e|community edition|too many rows and columns", text, re.IGNORECASE):
        raise LicenceTooSmall(
            "command line", "--solver", f"a solver whose licence covers this model ({entry.name}: {text})"
        ) from None
    if isinstance(error, MemoryError):
        raise error
    message = f"{entry.title} failed: {type(error).__name__}: {text}"
    return SolverRun(version(entry.name), "error", None, None, None, runtime, message[:900])


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and abs(number) < INFINITE else None


def _start_report(entry: Commercial, log: str) -> dict[str, Any]:
    """What the solver's log says of the MIP start (``accepted``, its ``objective``, the ``log`` lines)."""
    lines = [line.strip() for line in log.splitlines() if entry.start_lines.search(line)]
    found = entry.start_accepted.search(log)
    objective = float(found.group(1)) if found and found.group(1) else None
    accepted = True if found else (False if lines else None)
    return {"accepted": accepted, "objective": objective, "log": lines}


@contextlib.contextmanager
def _integer_values_only(model: pyo.ConcreteModel, warm_start: bool) -> Iterator[None]:
    """With ``warm_start``: hide the continuous variables' values during the call (Pyomo's direct interfaces
    pass every variable that has a value as the start) and give them back afterwards."""
    if not warm_start:
        yield
        return
    hidden = [
        (var, var.value)
        for var in model.component_data_objects(pyo.Var, active=True)
        if not var.fixed and not (var.is_integer() or var.is_binary()) and var.value is not None
    ]
    for var, _ in hidden:
        var.set_value(None, skip_validation=True)
    try:
        yield
    finally:
        for var, value in hidden:
            var.set_value(value, skip_validation=True)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No console output from the solver libraries (C or Python) and no warnings (Xpress's licence notice); their
    stderr (CPLEX's size-limit notices) only under :func:`odrp.core.solvers.run.solver_log`: an error they raise
    is reported once, by the caller."""
    with c_stdout_silenced(), _stderr_silenced(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Send the C-level stderr and Python's ``sys.stderr`` to /dev/null, unless the solver's log is asked for."""
    if log_enabled():
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):  # CPLEX writes to sys.stderr too
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
