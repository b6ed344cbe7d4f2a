"""Exact ODRP: the textbook model (the paper's ILP) and the compact models, solved with HiGHS or CBC.

Tunables are the fields of :class:`~odrp.kinds.replication.exact.settings.OdrpSettings`
(``--param NAME=VALUE``); ``formulation`` is a keyword of its own:

- ``textbook`` (:mod:`.paper`, also accepted as ``paper``): the paper's ILP as written (eqs. 22-32),
  the model a practitioner writes from the paper; nothing else runs.
- ``compact`` (:mod:`.compact`): our replica-level formulation. When only the response time and
  availability carry weight it solves the smaller response-time model (:mod:`.response`) instead,
  after a quick local search (:mod:`.start`) whose placement bounds the response time from above and
  prunes node choices that cannot beat it (:mod:`.reduction`). Both steps keep every optimal
  placement, so the optimum is the same.
- ``auto`` (the default): the textbook model when it is small (at most ``textbook_nonzeros``
  nonzeros, by its closed-form size) and no warm start is given, where it is solved before the
  compact models' start has run;
  else ``compact``, and on the full compact model (cost or network weighted) the local search
  ``odrp_local_search`` first, on ``start_share`` of the time limit: its placement is the
  incumbent that the run returns if the solver finds none better (CBC found no incumbent of a
  30 x 12 instance in 5 s without it). It is not a MIP start: the solvers process one without
  looking at their time limit. The textbook model is never the
  better choice where the compact model has no incumbent (``docs/methods/odrp.md``: it is refused
  by the memory budget or has no incumbent either), so ``auto`` does not hand over to it.

Every model's size is estimated in closed form (:mod:`.size`) and checked against the memory budget
(:func:`odrp.core.memory.check_model`) before it is built; the building looks at the clock, and the
solver gets the time left after the estimated hand-over (:mod:`.timing`). The result carries the best
incumbent of every stage (start, warm start, solver) and the solver's bound.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from odrp.core import progress
from odrp.core.budget import Budget
from odrp.core.exact import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.core.memory import check_model
from odrp.core.progress import ModelWatch
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.core.solvers.timing import OutOfTime, build_clock, solver_limit
from odrp.heuristics.replication import LocalSearchSettings, run_local_search
from odrp.kinds.replication.evaluator import evaluate
from odrp.kinds.replication.exact import compact, paper, reduction, response, size, start
from odrp.kinds.replication.exact.ideal import ideal_bound
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance, Placement, parse_solution, solution_json

FORMULATIONS = ("auto", "compact", "textbook", "paper")
DEFAULT_FORMULATION = "auto"
ALIASES = {"paper": "textbook"}
"""Other names of a formulation: ``paper`` is the textbook model (the paper's ILP)."""

Known = tuple[Placement, float]
"""A placement and its F (by the evaluator or the heuristics' incremental evaluator)."""

MIP_START_SECONDS = 5.0
"""A known placement (not a user's warm start) is the solver's MIP start only when the solver gets at
least this many seconds: HiGHS completes a MIP start by one LP without looking at its time limit."""


def solve(
    inst: OdrpInstance,
    *,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    formulation: str = DEFAULT_FORMULATION,
    warm_start: dict[str, Any] | None = None,
    settings: OdrpSettings | None = None,
    incumbent: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Solve an ODRP instance exactly with the given formulation and solver.

    ``warm_start``: a feasible solution JSON handed to the solver as a MIP start (the incumbent of
    the response-time model). ``incumbent``: a solution JSON already found (the run's start
    heuristics): it replaces the compact model's own local-search start, is HiGHS's MIP start there,
    and, like a warm start, sets the response-time model's ceiling; an infeasible one is ignored.
    ``settings``: the method's tunables (None: the defaults).
    """
    budget = Budget(time_limit)
    settings = settings or OdrpSettings()
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
    formulation = ALIASES.get(formulation, formulation)
    unstable = [inst.operators[i] for i in range(inst.n_operators) if not inst.replica_counts(i)]
    if unstable:
        run = SolverRun(
            solver=solver_version(solver),
            status="infeasible",
            objective=None,
            bound=None,
            gap=None,
            runtime_s=0.0,
            message=f"no stable replica count within max_replicas for: {', '.join(unstable)}",
        )
        return ExactOutcome(run, None, {"formulation": formulation})
    progress.bound(ideal_bound(inst))  # a bound from the first moment: a run stopped by the watchdog keeps it
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    given = None if warm_start is None else (parse_solution(inst, warm_start, "warm start"), start_objective)
    found = _incumbent(inst, incumbent)
    textbook_size = size.paper_size(inst)
    # auto's own choice; a warm start keeps its uses in the compact models (MIP start, response-time ceiling)
    small = formulation == "auto" and given is None and textbook_size[2] <= settings.textbook_nonzeros
    if formulation == "textbook" or small:
        check_model(*textbook_size, "the textbook ODRP model (the paper's ILP)")
        known = _better(given, found)
        outcome = _solve_model(inst, "textbook", solver, budget, mip_gap, known, given, settings, warm=given)
        outcome.stats["formulation"], outcome.stats["model"] = formulation, "textbook"
        return outcome
    if settings.response_model and response.serves(inst):
        check_model(*size.response_size(inst, settings), "the response-time ODRP model")
        outcome = _solve_response(inst, solver, budget, mip_gap, settings, given, found)
        outcome.stats["formulation"] = formulation
        if start_objective is not None:
            used = outcome.stats.get("start_source") == "warm start"
            outcome.stats["warm_start"] = {
                "objective": start_objective,
                "accepted": used,
                "solver_objective": None,
                "solver_log": [
                    "used as the incumbent and response-time ceiling"
                    if used
                    else "not used: the local search's placement was at least as good"
                ],
            }
        return outcome
    check_model(*size.compact_size(inst, settings), "the compact ODRP model")
    known, stats = _better(given, found), {}
    if found is not None:
        stats["start_objective"], stats["start_source"] = found[1], "incumbent"
        if known is given:
            stats["start_source"] = "warm start"
    elif formulation == "auto" and settings.local_search:
        known, stats = _heuristic_start(inst, settings, budget, given)
    # the user's warm start is the MIP start; without one, HiGHS takes the known placement: it
    # completes the continuous columns of the compact model by one LP (0.2 s at 24 x 16), where CBC's
    # MIP start can take longer than its time limit
    mip_start = given if given is not None or solver != "highs" else known
    outcome = _solve_model(inst, formulation, solver, budget, mip_gap, known, mip_start, settings, warm=given)
    outcome.stats.update(stats)
    return outcome


def _incumbent(inst: OdrpInstance, solution: dict[str, Any] | None) -> Known | None:
    """The caller's incumbent as a placement and its F by the evaluator; None if none or infeasible."""
    if solution is None:
        return None
    evaluation = evaluate(inst, solution, "incumbent")
    if not evaluation.feasible or evaluation.objective is None:
        return None
    return parse_solution(inst, solution, "incumbent"), float(evaluation.objective)


def _better(first: Known | None, second: Known | None) -> Known | None:
    """The better of two known placements (the first of equals); None if neither."""
    if first is None or (second is not None and second[1] > first[1]):
        return second
    return first


def _heuristic_start(
    inst: OdrpInstance, settings: OdrpSettings, budget: Budget, given: Known | None
) -> tuple[Known | None, dict[str, Any]]:
    """``odrp_local_search`` on ``start_share`` of the time left (at most ``start_cpu_seconds`` wall
    seconds); the better of its placement and ``given``."""
    left = budget.left()
    share = settings.start_cpu_seconds if left is None else min(settings.start_cpu_seconds, settings.start_share * left)
    found = run_local_search(inst, seed=settings.start_seed, time_limit=share, settings=LocalSearchSettings())
    stats: dict[str, Any] = {"start_s": budget.elapsed()}
    if found.solution is None:
        return given, stats
    known = (parse_solution(inst, found.solution, "local search"), float(found.objective))
    progress.incumbent(found.solution, "local search")
    stats["start_objective"], stats["start_source"] = known[1], "local search"
    if given is not None and given[1] > known[1]:
        known, stats["start_source"] = given, "warm start"
    return known, stats


def _solve_model(
    inst: OdrpInstance,
    formulation: str,
    solver: str,
    budget: Budget,
    mip_gap: float,
    known: Known | None,
    mip_start: Known | None,
    settings: OdrpSettings,
    warm: Known | None = None,
) -> ExactOutcome:
    """Build the textbook or compact model, solve it (MIP start: ``mip_start``, when the solver gets at
    least :data:`MIP_START_SECONDS`), keep the better of its incumbent and ``known``; ``warm`` is the
    user's warm start, whose fate the stats record."""
    module = paper if formulation == "textbook" else compact
    what = "the textbook ODRP model" if formulation == "textbook" else "the compact ODRP model"
    stats: dict[str, Any] = {"formulation": formulation}
    started = time.perf_counter()
    clock = build_clock(budget.left(), solver, what)
    try:
        model = paper.build(inst, clock) if formulation == "textbook" else compact.build(inst, settings, clock)
    except OutOfTime as stop:
        stats["build_s"] = time.perf_counter() - started
        return _without_solver(inst, solver, budget, known, str(stop), stats)
    stats["build_s"] = time.perf_counter() - started
    stats.update(model_size(model))
    limit = solver_limit(budget.left(), solver, stats["build_s"])
    if limit == 0.0:
        return _without_solver(inst, solver, budget, known, f"no time left to solve {what}", stats)
    # the solvers process a MIP start without looking at their time limit (on a 30 x 12 instance at a
    # 1 s limit, CBC 2.10 took 6.4 s, HiGHS 1.12 0.8 s past it): a user's warm start is always one, a
    # known placement only with time to spare; it stays the incumbent when the solver finds nothing better
    if mip_start is not None and mip_start is not warm and (limit is not None and limit < MIP_START_SECONDS):
        mip_start = warm
    if mip_start is not None:
        module.set_start(model, inst, mip_start[0])
    options = _highs_options(settings) if module is compact and known is not None else None
    watch = ModelWatch(decode=lambda: solution_json(inst, module.placement(model, inst)), bound=float)
    run = run_solver(
        model,
        solver=solver,
        time_limit=limit,
        mip_gap=mip_gap,
        warm_start=mip_start is not None,
        highs_options=options,
        watch=watch,
    )
    stats["solve_s"] = run.runtime_s
    if warm is not None:
        stats["warm_start"] = warm_start_stats(warm[1], run)
    found = (module.placement(model, inst), run.objective) if run.has_solution else None
    return _merged(inst, run, found, known, stats)


def _highs_options(settings: OdrpSettings) -> dict[str, Any]:
    """HiGHS's options for the compact model when a placement is known (``solver_heuristics``,
    ``strong_branching``); other solvers ignore them."""
    options: dict[str, Any] = {}
    if not settings.solver_heuristics:
        options.update(
            mip_heuristic_effort=0.0,
            mip_heuristic_run_rins=False,
            mip_heuristic_run_rens=False,
            mip_heuristic_run_root_reduced_cost=False,
            mip_heuristic_run_feasibility_jump=False,
        )
    if not settings.strong_branching:
        options["mip_pscost_minreliable"] = 0
    return options


def _merged(
    inst: OdrpInstance, run: SolverRun, found: Known | None, known: Known | None, stats: dict[str, Any]
) -> ExactOutcome:
    """The solver's run with the better of its incumbent ``found`` and ``known``; its bound, never below either."""
    best = found
    if known is not None and (best is None or known[1] > best[1]):
        best = known
    bound = run.bound
    if bound is None and run.status != "infeasible":  # no bound from the solver: the ideal point's
        bound, stats["bound_from"] = ideal_bound(inst), "ideal point"
    if best is None:
        return ExactOutcome(dataclasses.replace(run, bound=bound), None, stats)
    bound = None if bound is None else max(bound, best[1])
    if run.status in ("optimal", "time_limit", "infeasible"):
        status = "time_limit" if run.status == "infeasible" else run.status
    else:
        status = "feasible"
    merged = dataclasses.replace(
        run, status=status, objective=best[1], bound=bound, gap=relative_gap(best[1], bound, "max")
    )
    if best is not found:
        stats["incumbent_from"] = stats.get("start_source", "start")
    solution = solution_json(inst, best[0])
    progress.incumbent(solution, "exact")
    if merged.bound is not None:
        progress.bound(merged.bound)
    return ExactOutcome(merged, solution, stats)


def _without_solver(
    inst: OdrpInstance, solver: str, budget: Budget, known: Known | None, why: str, stats: dict[str, Any]
) -> ExactOutcome:
    """A run that ended before its solver started: the known placement, if any, and the ideal point's
    bound (:mod:`.ideal`)."""
    found = "no solution" if known is None else "the incumbent is the start's placement"
    run = SolverRun(
        solver=solver_version(solver),
        status="time_limit",
        objective=None,
        bound=None,
        gap=None,
        runtime_s=0.0,
        message=f"{why}; {found}, the bound the ideal point's (each QoS term at its best alone)",
    )
    return _merged(inst, run, None, known, stats)


def _solve_response(
    inst: OdrpInstance,
    solver: str,
    budget: Budget,
    mip_gap: float,
    settings: OdrpSettings,
    given: Known | None = None,
    found: Known | None = None,
) -> ExactOutcome:
    """The response-time model, pruned by the best of a local-search placement, ``given`` (the user's
    warm start) and ``found`` (the caller's incumbent)."""
    stats: dict[str, Any] = {"model": "response"}
    known = None
    if settings.local_search and inst.weights["response_time"] > 0:
        # at most settings.start_share of the time limit (wall clock) goes to the start
        known = start.local_search(inst, settings, budget.share(settings.start_share))
    if known is not None:
        stats["start_source"] = "local search"
    if known is not None:
        progress.incumbent(solution_json(inst, known[0]), "local search")
    for other, source in ((given, "warm start"), (found, "incumbent")):
        if other is not None and inst.weights["response_time"] > 0 and (known is None or other[1] > known[1]):
            known = other
            stats["start_source"] = source
    stats["start_s"] = budget.elapsed()
    model_inst, conflicts, excluded, ceiling = inst, (), (), None
    if known is not None:
        stats["start_objective"] = known[1]
        ceiling = _response_time_ceiling(inst, known[1])
        reduced = reduction.reduce(inst, ceiling)
        model_inst, conflicts, excluded = reduced.instance, reduced.conflicts, reduced.excluded
        stats["removed_candidates"], stats["conflicts"] = reduced.removed, len(conflicts)
        stats["excluded_counts"] = len(excluded)
    started = time.perf_counter()
    try:
        model = response.build(
            model_inst,
            settings,
            conflicts=conflicts,
            excluded=excluded,
            max_response_time=ceiling,
            clock=build_clock(budget.left(), solver, "the response-time ODRP model"),
        )
    except OutOfTime as stop:
        stats["build_s"] = time.perf_counter() - started
        return _without_solver(inst, solver, budget, known, str(stop), stats)
    stats["build_s"] = time.perf_counter() - started
    stats.update(model_size(model))
    limit = solver_limit(budget.left(), solver, stats["build_s"])
    if limit == 0.0:
        return _without_solver(inst, solver, budget, known, "no time left to solve the response-time model", stats)
    # with a known placement the model keeps every placement at least as good: its bound, raised to the
    # known F, is a bound of the whole problem
    floor = None if known is None else known[1]
    watch = ModelWatch(
        decode=lambda: solution_json(inst, response.placement(model, model_inst)),
        bound=(lambda b: b) if floor is None else (lambda b: max(b, floor)),
    )
    run = run_solver(model, solver=solver, time_limit=limit, mip_gap=mip_gap, watch=watch)
    stats["solve_s"] = run.runtime_s
    if known is None:
        solution = solution_json(inst, response.placement(model, model_inst)) if run.has_solution else None
        progress.incumbent(solution, "exact")
        if run.bound is not None:
            progress.bound(run.bound)
        return ExactOutcome(run, solution, stats)
    if run.status == "infeasible" and not budget.expired():
        # cannot happen in exact arithmetic (the known placement satisfies every added row);
        # rather than trust a numerical verdict, solve the unpruned model
        unpruned = dataclasses.replace(settings, local_search=False)
        return _solve_response(inst, solver, budget, mip_gap, unpruned)
    # the model keeps every placement at least as good as the known one, which it contains:
    # its bound is a bound of the whole problem, and never below the known objective
    found = (response.placement(model, model_inst), run.objective) if run.has_solution else None
    if found is not None and known[1] > found[1]:
        found = None
    return _merged(inst, run, found, known, stats)


def _response_time_ceiling(inst: OdrpInstance, objective: float) -> float:
    """The largest response time of a placement whose F (eq. 21) can reach ``objective``.

    F = w_r (Rmax - R)/(Rmax - Rmin) + w_a A_norm, and A_norm is at most its value when only the
    nodes that some operator is pinned to are used (every placement uses them, eqs. 15-16).
    """
    w_r, w_a = inst.weights["response_time"], inst.weights["availability"]
    availability = 0.0
    if w_a > 0:
        pinned = {c[0] for c in inst.candidates if len(c) == 1}
        availability = w_a * inst.normalised("availability", sum(math.log(inst.node_availability[u]) for u in pinned))
    lo, hi = inst.bounds["response_time"]
    return hi - (objective - availability) * (hi - lo) / w_r
