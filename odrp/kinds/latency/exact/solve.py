"""The exact latency method: ``auto`` (column generation, by supervisor classes or as one MILP) or ``textbook``.

``textbook`` (:mod:`odrp.kinds.latency.exact.textbook`) is the plain MILP of the paper, solved as it
is. ``auto``, the default, solves that MILP too when it is small (at most ``textbook_nonzeros``
nonzeros by its closed-form size, unless the setting ``classes`` names a method or a warm start is
given). Where both the column generation (:mod:`odrp.kinds.latency.exact.colgen`) and the classes
method answer (HiGHS, a tie-break latency term, no warm start, neither named by a setting), a run of
two threads or more races them below ``colgen_operators`` operators (``race_classes``); from
``colgen_operators`` operators on it answers by column generation, its exact pricings on the run's
threads (the setting ``colgen`` overrides the choice). Otherwise it answers
by supervisor classes (:mod:`odrp.kinds.latency.exact.classes`) when the setting ``classes`` asks for it, or, left at
None, when the latency term is a tie-break (:func:`~odrp.kinds.latency.exact.classes.latency_is_tie_break`)
and no warm start is given; when a partition has too many labellings for that method it falls back
to the one MILP. The one MILP is :func:`odrp.kinds.latency.exact.model.build` with its triangle and
knapsack tree rows separated first (:mod:`odrp.kinds.latency.exact.separation`), then handed to the
solver with the warm start, if any, as a MIP start; the hybrid heuristic's placement (the classes
method's first incumbent) is its incumbent when the solver finds none better.

Every model's size is estimated in closed form and checked against the memory budget
(:func:`odrp.core.memory.check_model`) before it is built; the solver gets the time left after the
estimated hand-over (:mod:`odrp.core.solvers.timing`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from odrp.core.errors import InputError
from odrp.core.exact import ExactOutcome, best_outcome, checked_start, model_size, warm_start_stats
from odrp.core.memory import check_model
from odrp.core.race import race
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.core.solvers.timing import solver_limit
from odrp.kinds.latency.evaluator import evaluate
from odrp.kinds.latency.exact import classes, colgen, textbook
from odrp.kinds.latency.exact.model import assignment, build, estimated_size, set_start, unscaled
from odrp.kinds.latency.exact.separation import separate_triangles
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, parse_solution, solution_json

FORMULATIONS = ("auto", "textbook")
DEFAULT_FORMULATION = "auto"


def solve(
    inst: LatencyInstance,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: dict[str, Any] | None = None,
    settings: LatencySettings | None = None,
    formulation: str = DEFAULT_FORMULATION,
    threads: int | None = None,
    incumbent: dict[str, Any] | None = None,
) -> ExactOutcome:
    """The proven optimal placement (or the best found within ``time_limit``, with a bound).

    ``threads``: with two or more (None: this machine's cores), the column generation races the classes
    method wherever both apply below ``colgen_operators`` operators (one process each, :mod:`odrp.core.race`),
    and the answer is the better incumbent with the better bound of the two
    (:func:`odrp.core.exact.best_outcome`); from ``colgen_operators`` on, the column generation prices its
    classes on that many threads at once.

    ``warm_start``: a feasible solution JSON, handed to the one MILP's solver as a MIP start
    (:func:`~odrp.kinds.latency.exact.model.set_start`), or the classes method's first incumbent.
    ``incumbent``: a feasible placement (the run's start heuristics' best, :mod:`odrp.run`), the first
    incumbent of the classes method and of the column generation where better than the hybrid
    heuristic's: it prunes their multisets and groups from the start. It is no MIP start (the one MILP
    and the textbook model leave it to the run's floor).
    """
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
    settings = settings or LatencySettings()
    textbook_size = textbook.size(inst)
    # auto's own choice; a warm start goes to the one MILP, whose MIP start CBC 2.10 accepts where its
    # preprocessing rejects the textbook model's (coin-or/Cbc#282)
    small = (
        settings.classes is None
        and settings.colgen is None
        and warm_start is None
        and textbook_size[2] <= settings.textbook_nonzeros
    )
    if formulation == "textbook" or small:
        check_model(*textbook_size, "the textbook latency MILP")
        outcome = solve_textbook(inst, solver, time_limit, mip_gap, warm_start)
        outcome.stats["formulation"], outcome.stats["model"] = formulation, "textbook"
        return outcome
    cores = threads if threads is not None else len(os.sched_getaffinity(0))
    colgen_by_size = inst.n_operators >= settings.colgen_operators
    if settings.race_classes and cores >= 2 and not colgen_by_size and _both_apply(inst, settings, solver, warm_start):
        # a model over the budget is refused here, before the members take their parts of it
        check_model(*colgen.estimated_size(inst, settings), "the latency column generation")
        check_model(*estimated_size(inst, settings), "the latency MILP")
        return _colgen_and_classes(inst, settings, solver, time_limit, mip_gap, incumbent)
    if use_colgen(inst, settings, solver, warm_start):
        return colgen.solve(inst, settings, time_limit, mip_gap, warm_start, incumbent, threads=cores)
    check_model(*estimated_size(inst, settings), "the latency MILP")
    by_classes = settings.classes
    if by_classes is None:  # a warm start is a solver's MIP start in the one model, an incumbent there
        by_classes = warm_start is None and classes.latency_is_tie_break(inst)
    if by_classes:
        try:
            return classes.solve(inst, settings, solver, time_limit, mip_gap, warm_start, incumbent)
        except classes.TooManyGroups:  # a partition with too many labellings: the one MILP
            settings = dataclasses.replace(settings, classes=False)
    return solve_one_model(inst, solver, time_limit, mip_gap, warm_start, settings)


def _colgen_and_classes(
    inst: LatencyInstance,
    settings: LatencySettings,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    incumbent: dict[str, Any] | None,
) -> ExactOutcome:
    """The column generation and the classes method at once, one process each: the better incumbent and the
    better bound (their bounds differ in kind: the set-partitioning master's Lagrangian bound, the least LP
    bound of the multisets left; at 58 operators either may be the higher)."""

    if time_limit is not None:  # the members' answers travel back and are combined within the limit
        time_limit = max(0.0, time_limit - min(1.0, 0.05 * time_limit))

    def by_classes() -> ExactOutcome:
        try:
            return classes.solve(inst, settings, solver, time_limit, mip_gap, start_solution=incumbent)
        except classes.TooManyGroups:
            one_model = dataclasses.replace(settings, classes=False)
            return solve_one_model(inst, solver, time_limit, mip_gap, None, one_model)

    outcomes = race(
        [lambda: colgen.solve(inst, settings, time_limit, mip_gap, start_solution=incumbent), by_classes],
        decided=lambda o: o.run.status in ("optimal", "infeasible"),
        time_limit=time_limit,
    )
    answered = [o for o in outcomes if isinstance(o, ExactOutcome)]
    if not answered:
        raise next((o for o in outcomes if isinstance(o, BaseException)), RuntimeError("both methods died"))
    combined = best_outcome(answered, "min", mip_gap)
    combined.stats["method"] = "colgen and classes, raced"
    return combined


def use_colgen(
    inst: LatencyInstance, settings: LatencySettings, solver: str, warm_start: dict[str, Any] | None
) -> bool:
    """``auto``'s choice of the column generation (the setting ``colgen``; None: by size, for HiGHS,
    when the latency term is a tie-break, no warm start is given and ``classes`` is left at None)."""
    if settings.colgen is not None:
        if settings.colgen and solver != "highs":
            raise InputError("command line", "--param colgen", f"HiGHS as the solver (got {solver!r})")
        return settings.colgen
    return inst.n_operators >= settings.colgen_operators and _both_apply(inst, settings, solver, warm_start)


def _both_apply(
    inst: LatencyInstance, settings: LatencySettings, solver: str, warm_start: dict[str, Any] | None
) -> bool:
    """Both the column generation and the classes method answer ``auto`` exactly, and the settings name neither:
    the solver is HiGHS, the latency term a tie-break, and no warm start is given."""
    return (
        solver == "highs"
        and settings.colgen is None
        and settings.classes is None
        and warm_start is None
        and classes.latency_is_tie_break(inst)
    )


def solve_textbook(
    inst: LatencyInstance, solver: str, time_limit: float | None, mip_gap: float, warm_start: dict[str, Any] | None
) -> ExactOutcome:
    """The textbook MILP, built and solved (with the warm start, if any, as a MIP start)."""
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    start = time.perf_counter()
    model = textbook.build(inst)
    if warm_start is not None:
        given = parse_solution(inst, warm_start, "warm start")
        textbook.set_start(model, inst, [u for u in given if u is not None])
    build_s = time.perf_counter() - start
    left = None if time_limit is None else time_limit - build_s
    limit = solver_limit(left, solver, build_s)
    stats: dict[str, Any] = {"formulation": "textbook", "build_s": build_s, **model_size(model)}
    if limit == 0.0:
        return ExactOutcome(_no_time(solver, "no time left to solve the textbook MILP"), None, stats)
    run = run_solver(model, solver=solver, time_limit=limit, mip_gap=mip_gap, warm_start=warm_start is not None)
    stats["solve_s"] = run.runtime_s
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    solution = solution_json(inst, textbook.assignment(model, inst)) if run.has_solution else None
    return ExactOutcome(run, solution, stats)


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
    known = classes.upper_bound(inst, settings.incumbent_iterations)
    if warm_start is not None:
        given = [u for u in parse_solution(inst, warm_start, "warm start") if u is not None]
        if known is None or start_objective < known[0]:
            known = (start_objective, given)
    built = time.perf_counter()
    model = build(inst, settings)
    build_s = time.perf_counter() - built
    deadline = None if time_limit is None else start + time_limit * settings.separation_share
    separation = separate_triangles(model, inst, settings, deadline=deadline)
    # only the user's warm start is a MIP start: the solvers process a MIP start without looking at
    # their time limit; the heuristic's placement stays the incumbent when the solver finds none better
    mip_start = warm_start
    if mip_start is not None:  # after the separation, whose LP solves load values into the model
        set_start(model, inst, mip_start)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    limit = solver_limit(left, solver, build_s)
    stats = {
        "build_s": build_s,
        **separation,
        "scale": model.scale,
        **dataclasses.asdict(settings),
        **model_size(model),
    }
    if limit == 0.0:
        return _with_known(inst, _no_time(solver, "no time left to solve the latency MILP"), known, stats)
    raw = run_solver(model, solver=solver, time_limit=limit, mip_gap=mip_gap, warm_start=mip_start is not None)
    run = unscaled(raw, model.scale)
    stats["solve_s"] = raw.runtime_s
    if start_objective is not None:
        report = warm_start_stats(start_objective, raw)
        if report["solver_objective"] is not None:  # the solver's log reads the scaled objective
            report["solver_objective"] /= model.scale
        stats["warm_start"] = report
    if run.has_solution and (known is None or run.objective <= known[0]):
        return ExactOutcome(run, solution_json(inst, assignment(model, inst)), stats)
    return _with_known(inst, run, known, stats)


def _with_known(
    inst: LatencyInstance, run: SolverRun, known: tuple[float, list[int]] | None, stats: dict[str, Any]
) -> ExactOutcome:
    """``run`` with the known placement as its incumbent (the solver's was worse or missing)."""
    if known is None:
        return ExactOutcome(run, None, stats)
    bound = None if run.bound is None else min(run.bound, known[0])
    status = run.status if run.status in ("optimal", "time_limit") else "feasible"
    merged = dataclasses.replace(
        run, status=status, objective=known[0], bound=bound, gap=relative_gap(known[0], bound, "min")
    )
    stats["incumbent_from"] = "hybrid heuristic or warm start"
    return ExactOutcome(merged, solution_json(inst, known[1]), stats)


def _no_time(solver: str, why: str) -> SolverRun:
    return SolverRun(solver_version(solver), "time_limit", None, None, None, 0.0, message=why)
