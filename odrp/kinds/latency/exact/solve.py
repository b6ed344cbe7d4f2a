"""The exact latency method: by supervisor classes or as one MILP, whichever applies.

:func:`solve` answers by supervisor classes (:mod:`odrp.kinds.latency.exact.classes`) when the
setting ``classes`` asks for it, or, left at None, when the latency term is a tie-break
(:func:`~odrp.kinds.latency.exact.classes.latency_is_tie_break`) and no warm start is given; when a
partition has too many labellings for that method it falls back to the one MILP. The one MILP is
:func:`odrp.kinds.latency.exact.model.build` with its triangle and knapsack tree rows separated
first (:mod:`odrp.kinds.latency.exact.separation`), then handed to the solver with the warm start,
if any, as a MIP start.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from odrp.core.exact import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun
from odrp.core.solvers import solve as run_solver
from odrp.kinds.latency.evaluator import evaluate
from odrp.kinds.latency.exact import classes
from odrp.kinds.latency.exact.model import assignment, build, set_start
from odrp.kinds.latency.exact.separation import separate_triangles
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, solution_json


def solve(
    inst: LatencyInstance,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: dict[str, Any] | None = None,
    settings: LatencySettings | None = None,
) -> ExactOutcome:
    """The proven optimal placement (or the best found within ``time_limit``, with a bound).

    ``warm_start``: a feasible solution JSON, handed to the one MILP's solver as a MIP start
    (:func:`~odrp.kinds.latency.exact.model.set_start`), or the classes method's first incumbent.
    """
    settings = settings or LatencySettings()
    by_classes = settings.classes
    if by_classes is None:  # a warm start is a solver's MIP start in the one model, an incumbent there
        by_classes = warm_start is None and classes.latency_is_tie_break(inst)
    if by_classes:
        try:
            return classes.solve(inst, settings, solver, time_limit, mip_gap, warm_start)
        except classes.TooManyGroups:  # a partition with too many labellings: the one MILP
            settings = dataclasses.replace(settings, classes=False)
    return solve_one_model(inst, solver, time_limit, mip_gap, warm_start, settings)


def solve_one_model(
    inst: LatencyInstance,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    warm_start: dict[str, Any] | None,
    settings: LatencySettings,
) -> ExactOutcome:
    """The one MILP: build, separate for at most ``separation_share`` of the time limit, solve."""
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    start = time.perf_counter()
    model = build(inst, settings)
    build_s = time.perf_counter() - start
    deadline = None if time_limit is None else start + time_limit * settings.separation_share
    separation = separate_triangles(model, inst, settings, deadline=deadline)
    if warm_start is not None:  # after the separation, whose LP solves load values into the model
        set_start(model, inst, warm_start)
    remaining = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - start))
    raw = run_solver(model, solver=solver, time_limit=remaining, mip_gap=mip_gap, warm_start=warm_start is not None)
    run = _unscaled(raw, model.scale)
    solution = solution_json(inst, assignment(model, inst)) if run.has_solution else None
    stats = {
        "build_s": build_s,
        **separation,
        "solve_s": raw.runtime_s,
        "scale": model.scale,
        **dataclasses.asdict(settings),
        **model_size(model),
    }
    if start_objective is not None:
        report = warm_start_stats(start_objective, raw)
        if report["solver_objective"] is not None:  # the solver's log reads the scaled objective
            report["solver_objective"] /= model.scale
        stats["warm_start"] = report
    return ExactOutcome(run, solution, stats)


def _unscaled(run: SolverRun, scale: float) -> SolverRun:
    def back(value: float | None) -> float | None:
        return None if value is None else value / scale

    return dataclasses.replace(run, objective=back(run.objective), bound=back(run.bound))
