"""Exact pathmap: ``auto`` (the layered flow of :mod:`.model`) or ``textbook`` (:mod:`.textbook`).

Both take the hop-limited least-cost routes between the servers where each pair may start
(:func:`odrp.kinds.pathmap.routes.pair_routes`), then build their model, after checking its size
in closed form against the memory budget (:func:`odrp.core.memory.check_model`), and solve it with
the time left after the estimated hand-over to the solver (:mod:`.timing`). ``auto`` is the layered
flow: its LP relaxation is the shortest path through the stages, exact without capacities, where
the textbook model's pairwise rows relax every pair on its own; ``docs/methods/pathmap.md`` has the
measurements. An infeasible instance (no chain of servers connected within the limits) is a Result
without a solver call.
"""

from __future__ import annotations

import time
from typing import Any

from odrp.core.exact import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.core.memory import check_model
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.core.solvers.timing import OutOfTime, solver_limit
from odrp.kinds.pathmap.evaluator import evaluate
from odrp.kinds.pathmap.exact import model, textbook
from odrp.kinds.pathmap.instance import PathmapInstance
from odrp.kinds.pathmap.routes import pair_routes

FORMULATIONS = ("auto", "textbook")
DEFAULT_FORMULATION = "auto"


def solve(
    inst: PathmapInstance,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: dict[str, Any] | None = None,
    formulation: str = DEFAULT_FORMULATION,
    threads: int | None = None,
) -> ExactOutcome:
    """The proven least-cost mapping, or ``infeasible``.

    ``warm_start``: a feasible solution JSON handed to the solver as a MIP start (:func:`.model.set_start`).
    ``threads``: the solver's thread count (None: its own default).
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    textbook_model = formulation == "textbook"
    what = "the textbook pathmap model" if textbook_model else "the layered-flow pathmap model"
    check_model(*(textbook.size(inst) if textbook_model else model.size(inst)), what)
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    stats: dict[str, Any] = {"formulation": formulation}
    starts = [(inst.source,), *(inst.candidates(i) for i in range(inst.n_components))]
    try:
        tables = pair_routes(inst, rows=starts, deadline=deadline)
    except OutOfTime as stop:
        stats["routes_s"] = time.perf_counter() - started
        return ExactOutcome(_ended(solver, "time_limit", f"no solution: {stop}"), None, stats)
    layers = model.stages(inst, tables)
    stats["routes_s"] = time.perf_counter() - started
    if not layers[0]:
        why = "no chain of servers hosting the services is connected within the bandwidth and hop limits"
        return ExactOutcome(_ended(solver, "infeasible", why), None, {**stats, "arcs": 0})
    built = time.perf_counter()
    built_model = textbook.build(inst, tables) if textbook_model else model.build(inst, tables, layers)
    if warm_start is not None:
        model.set_start(built_model, inst, warm_start)
    stats["build_s"] = time.perf_counter() - built
    stats.update(model_size(built_model))
    left = None if deadline is None else deadline - time.perf_counter()
    limit = solver_limit(left, solver, stats["build_s"])
    if limit == 0.0:
        return ExactOutcome(_ended(solver, "time_limit", f"no solution: no time left to solve {what}"), None, stats)
    started = warm_start is not None
    run = run_solver(built_model, solver=solver, time_limit=limit, mip_gap=mip_gap, warm_start=started, threads=threads)
    stats["solve_s"] = run.runtime_s
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    solution = model.mapping(built_model, inst, tables) if run.has_solution else None
    return ExactOutcome(run, solution, stats)


def _ended(solver: str, status: str, message: str) -> SolverRun:
    return SolverRun(solver_version(solver), status, None, None, None, 0.0, message=message)  # type: ignore[arg-type]
