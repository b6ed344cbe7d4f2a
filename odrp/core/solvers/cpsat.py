"""OR-Tools CP-SAT: Pyomo models translated row by row, and CP-SAT models directly.

A Pyomo model is read by :func:`odrp.core.solvers.linear.linear_model` (as for SCIP), and accepted when it
has integer variables with finite bounds and integer coefficients only: each row and the objective are
multiplied by the least common denominator of their coefficients (every value read as a fraction with
denominator <= 10**6, e.g. 0.1 as 1/10; :func:`integer_scale`).
A model with a continuous variable, a nonlinear row or a coefficient that is no such fraction is not
solved: the run ends with status ``error`` and a message saying why. A MIP start becomes CP-SAT hints.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
import time
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

import pyomo.environ as pyo

from odrp.core import progress
from odrp.core.progress import ModelWatch
from odrp.core.result import Status, relative_gap
from odrp.core.solvers.linear import NotLinear, linear_model
from odrp.core.solvers.run import SolverRun, log_enabled, model_sense


@functools.cache
def version() -> str:
    """CP-SAT's name and version (OR-Tools), as recorded in Results."""
    import ortools

    return f"cpsat {ortools.__version__}"


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
    """Translate ``model`` into CP-SAT: (CpModel, [(pyomo var, cp var)], objective scale, objective constant)."""
    from ortools.sat.python import cp_model

    try:
        lin = linear_model(model)
    except NotLinear as error:
        raise NotIntegral(str(error)) from None
    cp = cp_model.CpModel()
    cpvars = []
    for j, var in enumerate(lin.variables):
        lb, ub = lin.bounds(j)
        if not lin.is_integer(j) or not (math.isfinite(lb) and math.isfinite(ub)):
            raise NotIntegral(f"variable {var.name} is not an integer variable with finite bounds")
        cpvars.append(cp.new_int_var(math.ceil(lb - 1e-9), math.floor(ub + 1e-9), var.name))
    for row in lin.rows:
        try:
            scale = integer_scale([*row.coefficients, *(b for b in (row.lower, row.upper) if b is not None)])
        except NotIntegral as error:
            raise NotIntegral(f"constraint {row.name}: {error}") from None
        terms = [(c, cpvars[j]) for c, j in zip(_scaled(row.coefficients, scale), row.columns, strict=True) if c]
        low = -cp_model.INT_MAX if row.lower is None else round(row.lower * scale)
        high = cp_model.INT_MAX if row.upper is None else round(row.upper * scale)
        if not terms:  # every coefficient zero: a constant row
            if not low <= 0 <= high:
                cp.add_bool_or([])  # infeasible
            continue
        cp.add_linear_constraint(sum(c * x for c, x in terms), low, high)
    if lin.violated:
        cp.add_bool_or([])  # a row without variables that its constant violates: infeasible
    try:
        scale = integer_scale(lin.objective_coefficients)
    except NotIntegral as error:
        raise NotIntegral(f"objective: {error}") from None
    scaled = _scaled(lin.objective_coefficients, scale)
    expr = sum(c * cpvars[j] for c, j in zip(scaled, lin.objective_columns, strict=True) if c)
    if lin.sense == "max":
        cp.maximize(expr)
    else:
        cp.minimize(expr)
    return cp, list(zip(lin.variables, cpvars, strict=True)), scale, lin.objective_constant


def solve(
    model: pyo.ConcreteModel,
    time_limit: float | None,
    mip_gap: float,
    warm_start: bool = False,
    watch: ModelWatch | None = None,
    threads: int | None = None,
) -> SolverRun:
    """``threads``: CP-SAT's ``num_workers`` (None: CP-SAT's own choice, one worker per core)."""
    began = time.perf_counter()
    try:
        cp, variables, scale, constant = _cpsat_model(model)
    except NotIntegral as error:
        message = f"CP-SAT needs integer variables and coefficients it can scale exactly: {error}"
        return SolverRun(version(), "error", None, None, None, time.perf_counter() - began, message)
    hinted = 0
    if warm_start:  # CP-SAT takes a start as hints, completed and repaired by its own search
        for var, cpv in variables:
            if var.value is not None:
                cp.add_hint(cpv, round(var.value))
                hinted += 1
    left = None if time_limit is None else max(0.01, float(time_limit) - (time.perf_counter() - began))
    on_solution = None
    if watch is not None and progress.active():

        def on_solution(found) -> None:  # CP-SAT's improving solution, into the Pyomo model, decoded
            for var, cpv in variables:
                var.set_value(found.Value(cpv), skip_validation=True)
            progress.solver_incumbent(watch)
            progress.solver_bound(watch, found.BestObjectiveBound() / scale + constant)

    workers = 0 if threads is None else int(threads)  # 0: CP-SAT's own worker count
    run, solver = run_cpsat(cp, model_sense(model), left, mip_gap, workers=workers, on_solution=on_solution)
    if run.has_solution:
        for var, cpv in variables:
            var.set_value(solver.value(cpv), skip_validation=True)
    objective = None if run.objective is None else run.objective / scale + constant
    bound = None if run.bound is None else run.bound / scale + constant
    return dataclasses.replace(
        run,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, model_sense(model)),  # type: ignore[arg-type]
        runtime_s=time.perf_counter() - began,
        warm_start={"accepted": None, "objective": None, "log": [f"{hinted} hints"]} if warm_start else None,
        threads=threads,
    )


CPSAT_PARAMETERS: dict[str, object] = {"presolve_inclusion_work_limit": 0}
"""Extra CP-SAT parameters (name -> value) for every :func:`run_cpsat`.

``presolve_inclusion_work_limit`` 0 switches off the presolve's inclusion detection, which in CP-SAT 9.15.6755 (the
newest on PyPI) answers INFEASIBLE on feasible models (google/or-tools#5274, #5293: fixed after that release). A
throughput rate model that a known placement satisfies was called infeasible with every other setting tried (probing
off, one or eight workers, symmetry detection off), and the exact method then proved a rate below the optimum; with
this parameter, or with no presolve, the model is feasible. ``tests/test_throughput_exact.py`` keeps the case."""


def run_cpsat(
    model,
    sense: str,
    time_limit: float | None = None,
    gap_limit: float = 0.0,
    workers: int = 1,
    max_solutions: int | None = None,
    parameters: dict[str, object] | None = None,
    on_solution: Callable[[Any], None] | None = None,
):
    """Solve an OR-Tools CP-SAT model; returns (SolverRun, the CpSolver that holds the values).

    ``gap_limit`` is CP-SAT's relative gap limit (0: prove the optimum); ``max_solutions`` stops the
    search after that many improving solutions (status ``feasible``); ``parameters``: CP-SAT parameters for
    this run (after ``CPSAT_PARAMETERS``); ``on_solution(callback)`` is called with CP-SAT's solution
    callback at each improving solution (read values with ``callback.Value``). A run stopped by a limit
    without a decision (wall clock or ``max_deterministic_time``) has status ``time_limit``.
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = int(workers)
    solver.parameters.relative_gap_limit = float(gap_limit)
    if time_limit is not None:
        solver.parameters.max_time_in_seconds = max(0.0, float(time_limit))
    for key, value in {**CPSAT_PARAMETERS, **(parameters or {})}.items():
        setattr(solver.parameters, key, value)
    if log_enabled():
        solver.parameters.log_search_progress = True
        solver.parameters.log_to_stdout = False
        solver.log_callback = lambda line: print(line, file=sys.stderr)
    limited = time_limit is not None or "max_deterministic_time" in (parameters or {})
    callback = _Improving(max_solutions, on_solution) if max_solutions is not None or on_solution else None
    start = time.perf_counter()
    code = solver.Solve(model, callback)
    runtime = time.perf_counter() - start
    has_solution = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    with_objective = model.HasObjective()
    objective = solver.ObjectiveValue() if has_solution and with_objective else None
    # without a solution CP-SAT's BestObjectiveBound is no proof (0.0 was seen on a maximisation whose
    # optimum is at least 392): a bound is reported with a solution only
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
    run = SolverRun.ended(
        version(), status, objective, bound, sense, runtime, error=f"CP-SAT ended with {solver.StatusName(code)}"
    )
    return run, solver


def _Improving(count: int | None, on_solution: Callable[[Any], None] | None):  # ortools is imported lazily
    from ortools.sat.python import cp_model

    class Improving(cp_model.CpSolverSolutionCallback):
        """At each improving solution: ``on_solution(self)``; stop CP-SAT after ``count`` of them."""

        def __init__(self) -> None:
            super().__init__()
            self.found = 0
            self.stopped = False

        def on_solution_callback(self) -> None:
            self.found += 1
            if on_solution is not None:
                on_solution(self)
            if count is not None and self.found >= count:
                self.stopped = True
                self.StopSearch()

    return Improving()
