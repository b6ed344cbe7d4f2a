"""Exact solution of every kind of the knapsack family through one general model.

``solve(instance, solver=..., time_limit=..., mip_gap=..., formulation=..., warm_start=..., settings=...,
threads=...)``:
the instance is mapped to the general :class:`~odrp.kinds.knapsack.family.Family` (:mod:`..mapping`),
tightened (:mod:`.bounds`), and solved by one of the formulations, whose counts are turned back into
the kind's solution. ``settings`` is a :class:`~odrp.kinds.knapsack.exact.settings.KnapsackSettings`
(``--param NAME=VALUE``); docs/methods/knapsack.md says why each default is what it is.

``formulation``: ``textbook`` (the plain model of :mod:`.textbook`, with none of the steps below),
``compact`` (the model of :mod:`.milp`, solved with HiGHS, CBC or CP-SAT through
:mod:`odrp.core.solvers`), ``patterns`` (the configuration model of :mod:`.patterns`, for identical
knapsacks), ``arcflow`` (the search of :mod:`.arcflow` for the multiple knapsack, HiGHS only),
``lagrangian`` (the search of :mod:`.gap_lagrangian` for the GAP, HiGHS only), ``configurations`` (the
bound of :mod:`.configurations` for a qm3dkp, then a local search for the time left, HiGHS only; raced
beside ``auto`` by default, :func:`_solve_configurations`) or ``auto``: the
arc-flow search for a multiple knapsack with two knapsacks or more, the Lagrangian search for a GAP
of at most ``lagrangian.auto_items`` items (with HiGHS, for ``lagrangian.auto_share`` of the limit;
then its bound and best assignment go to the compact model, and the result keeps the better of each),
the textbook model for any other GAP, else patterns when they pay (:func:`_model`), else the compact
model.

Steps before the model:

- **Search start** (``search_start``; default: for the kinds with pair profits, qkp, qmkp and
  qm3dkp): the local search of :mod:`odrp.heuristics.knapsack_search` from the run's start placement
  (``incumbent=``), else from its greedy (``search_share`` of the time limit, at most ``search_seconds``;
  with ``search_to_end``, a qm3dkp's default, its rounds to their end). The model gets the row
  objective >= its value, and a time-limited solver that finds nothing as good returns its solution
  (the bound stays the solver's). With pair profits HiGHS alone finds poor incumbents; without them
  it finds good ones by itself and the search only costs time.
- **QKP reduction** (``reduction``; default: a QKP of at least ``reduction_min_items`` items with a
  start): the tabu search of :mod:`.qkp_search` improves the start, the probing of
  :mod:`.qkp_reduction` fixes variables, and the model solves what is left (:func:`_run_reduced`).
- **Warm start** (``warm_start``: a feasible solution JSON of the kind, ``odrp solve --warm-start
  FILE|METHOD``; the contract of :mod:`odrp.core.exact`): it takes the place of the search start
  (the objective row and the fallback incumbent) and is handed to the solver as a MIP start by
  :func:`set_start`, which gives every integer variable of the built model (counts, one-hot levels,
  group counts, pattern multiplicities and, for CP-SAT, products and overloads) its value at the
  start. The contents of identical knapsacks are first permuted into the order of the symmetry rows,
  so that the start is feasible for the model, not only for the kind. The arc-flow and Lagrangian
  searches take a warm or search start as their first incumbent.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import asdict
from typing import Any

from odrp.core import progress
from odrp.core.colgen import GenerationSettings
from odrp.core.errors import InputError
from odrp.core.exact import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.core.memory import ModelTooLarge
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as solve_model
from odrp.core.solvers.run import c_stdout_silenced
from odrp.heuristics import knapsack_search as search
from odrp.kinds.knapsack.evaluator import evaluator_of
from odrp.kinds.knapsack.exact import (
    arcflow,
    bounds,
    configurations,
    gap_lagrangian,
    milp,
    patterns,
    qkp_reduction,
    qkp_search,
    textbook,
)
from odrp.kinds.knapsack.exact.milp import Options, infeasible_classes
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings, KnapsackSettings, LagrangianSettings
from odrp.kinds.knapsack.family import Family
from odrp.kinds.knapsack.mapping import counts_of_solution, family_of, solution_of

__all__ = ["FORMULATIONS", "set_start", "solve"]

FORMULATIONS = ("auto", "textbook", "compact", "patterns", "arcflow", "lagrangian", "configurations")


def solve(
    instance: Any,
    *,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    formulation: str = "auto",
    warm_start: dict[str, Any] | None = None,
    settings: KnapsackSettings | None = None,
    threads: int | None = None,
    incumbent: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Solve any instance of the family exactly; an instance that cannot be feasible is a result.

    ``warm_start``: a feasible solution JSON of the kind, handed to the solver as a MIP start;
    ``settings``: the method's settings (default :class:`KnapsackSettings()`); ``threads``: the thread count of
    every solver call, the arc-flow and Lagrangian searches' HiGHS runs included (None: each solver's default);
    ``incumbent``: the run's start placement (the kind's fast heuristics' best, a solution JSON of the kind),
    from which the search start's local search goes on (:func:`_search_start`).
    """
    settings = settings or KnapsackSettings()
    placement = incumbent
    if formulation not in FORMULATIONS:
        raise ValueError(f"formulation: expected {' or '.join(FORMULATIONS)}, got {formulation!r}")
    start_objective = checked_start(_evaluator(instance), instance, warm_start) if warm_start is not None else None
    start = time.perf_counter()
    if formulation == "textbook" or (formulation == "auto" and _textbook_is_auto(instance, solver, settings)):
        return _solve_textbook(instance, solver, time_limit, mip_gap, warm_start, start_objective, start, threads)
    family = family_of(instance, merge_identical=settings.merge_identical)
    if settings.tighten:
        family = bounds.reduce_capacities(family, settings.dp_limit)
    if warm_start is not None:
        incumbent = counts_of_solution(instance, family, warm_start, "warm start")
    else:
        searched = family.n_pairs > 0 if settings.search_start is None else settings.search_start
        to_end = formulation != "configurations" and _search_to_end(family, settings)
        incumbent = None
        if searched:
            incumbent = _search_start(instance, family, placement, time_limit, start, settings, to_end)
    if settings.reduction and (qkp_reduction.qkp_of(family) is None or incumbent is None):
        expected = "false for this instance: it needs a qkp and a start (search_start=true or --warm-start)"
        raise InputError("command line", "--param reduction", expected)
    if formulation == "configurations":
        return _solve_configurations(
            instance, family, solver, time_limit, mip_gap, incumbent, start_objective, start, settings
        )
    if formulation == "arcflow" or (formulation == "auto" and _arcflow_pays(family, solver, settings.arcflow)):
        return _solve_arcflow(
            instance, family, solver, time_limit, mip_gap, incumbent, start_objective, start, settings.arcflow, threads
        )
    floor = None if incumbent is None else _floor(family, incumbent)
    options = Options(
        objective_bound=bounds.surrogate_bound(family, settings.dp_limit) if settings.tighten else None,
        objective_floor=floor,
        linearisation=settings.linearisation,
        capacity_cuts=family.n_knapsacks > 1 if settings.capacity_cuts is None else settings.capacity_cuts,
        symmetry=settings.symmetry,
        integer_auxiliaries=solver == "cpsat",
    )
    stats: dict[str, Any] = {**_sizes(family), **asdict(options)}
    infeasible = _infeasible(family, solver, start, stats)
    if infeasible is not None:
        return infeasible
    handed: gap_lagrangian.HandOver | None = None
    if formulation == "lagrangian" or (formulation == "auto" and _lagrangian_pays(family, solver, settings.lagrangian)):
        share = 1.0 if formulation == "lagrangian" else settings.lagrangian.auto_share
        found = _solve_lagrangian(
            family, solver, time_limit, share, incumbent, start, stats, settings.lagrangian, threads
        )
        if not isinstance(found, gap_lagrangian.HandOver):
            return _lagrangian_outcome(instance, family, found, stats, start_objective, incumbent)
        handed = found
        options = dataclasses.replace(options, objective_bound=found.bound)  # the bound it proved
        stats["objective_bound"] = found.bound
    reduced, incumbent = _reduction(family, incumbent, settings, time_limit, start, stats)
    setup = _Setup(
        options, formulation, solver, time_limit, mip_gap, start, stats, instance, warm_start, settings, threads
    )
    if reduced is None:
        run, counts = _run_model(family, setup)
    else:
        run, counts = _run_reduced(family, reduced, incumbent, setup)
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    elif incumbent is not None:
        stats["search_start"] = family.objective(incumbent)
    if incumbent is not None:
        counts = _better(family, run, counts, incumbent, stats)
    if handed is not None:
        _take_bound(family, run, handed.bound, "lagrangian", stats)
        if handed.counts is not None:
            counts = _better(family, run, counts, handed.counts, stats, "lagrangian")
    if run.bound is None and run.status == "time_limit":
        run.bound = bounds.profit_bound(family)
        stats["bound_from"] = "profits alone"
    if counts is None:
        return ExactOutcome(run, None, stats)
    _rescore(run, family, counts, stats)
    return ExactOutcome(run, solution_of(instance, family, counts), stats)


@dataclasses.dataclass(frozen=True)
class _Setup:
    """How :func:`solve` was asked to run a model."""

    options: Options
    formulation: str
    solver: str
    time_limit: float | None
    mip_gap: float
    start: float
    stats: dict[str, Any]
    instance: Any
    warm_start: dict[str, Any] | None
    settings: KnapsackSettings
    threads: int | None = None


def _run_model(family: Family, setup: _Setup) -> tuple[SolverRun, Any]:
    """Build the model of ``family``, solve it and read the counts of its solution (None if none)."""
    stats = setup.stats
    model, read_counts = _model(family, setup.options, setup.formulation, stats, setup.settings)
    if setup.warm_start is not None:
        set_start(model, setup.instance, setup.warm_start)
    stats["build_s"] = time.perf_counter() - setup.start
    stats.update(model_size(model))
    left = _solver_time(setup.time_limit, stats["build_s"], setup.solver, stats)
    if left == 0.0:
        return _no_time(setup.solver, setup.start), None
    started = setup.warm_start is not None
    run = _trusted(solve_model(model, setup.solver, left, setup.mip_gap, warm_start=started, threads=setup.threads))
    return run, read_counts(model) if run.has_solution else None


def _reduction(
    family: Family,
    incumbent: Any,
    settings: KnapsackSettings,
    time_limit: float | None,
    start: float,
    stats: dict[str, Any],
) -> tuple[qkp_reduction.Reduction | None, Any]:
    """The QKP reduction of :mod:`.qkp_reduction` and the start it used: the given one improved by the
    tabu search of :mod:`.qkp_search`. (None, the start) where it does not run: ``reduction=false``,
    or by default a family that is no QKP or has fewer than ``reduction_min_items`` items. Both may
    run until ``reduction_share`` of the time limit."""
    if settings.reduction is False:
        return None, incumbent
    q = qkp_reduction.qkp_of(family)
    if settings.reduction is None and (q is None or incumbent is None or q.n < settings.reduction_min_items):
        return None, incumbent
    if q is None or incumbent is None:  # only with reduction=true, which solve() has refused already
        return None, incumbent
    deadline = None if time_limit is None else start + settings.reduction_share * time_limit
    given = family.objective(incumbent)
    chosen, known = qkp_search.improve(q, incumbent[:, 0], deadline, settings.tabu)
    if known > given:
        incumbent = chosen[:, None]
    reduced = qkp_reduction.reduce(q, max(known, given), deadline, settings.qkp_reduction)
    stats["reduction"] = {
        "items": q.n,
        "start": given,
        "tabu_search": known,
        "fixed_one": len(reduced.fixed_one),
        "fixed_zero": len(reduced.fixed_zero),
        "free": len(reduced.free),
        "bound": reduced.bound,
        **reduced.stats,
    }
    return reduced, incumbent


def _run_reduced(
    family: Family, reduced: qkp_reduction.Reduction, incumbent: Any, setup: _Setup
) -> tuple[SolverRun, Any]:
    """Solve what the reduction left: optimum = max(start, constant + optimum of the reduced problem).

    The start is optimal when the reduction proved it, and when the reduced model, with the row
    objective >= the start's value, is infeasible. A warm start becomes the reduced model's MIP start
    only when it is still the start (the tabu search found nothing better) and satisfies the fixings
    (which hold for better solutions only)."""
    known = family.objective(incumbent)
    if reduced.stats["proven"] or not len(reduced.free):
        fixed = qkp_reduction.lift(family, reduced, None)
        best = fixed if not family.violations(fixed) and family.objective(fixed) > known else incumbent
        value = family.objective(best)
        run = SolverRun(solver_version(setup.solver), "optimal", value, value, 0.0, time.perf_counter() - setup.start)
        return run, best
    small = bounds.reduce_capacities(qkp_reduction.reduced_family(family, reduced), setup.settings.dp_limit)
    options = dataclasses.replace(setup.options, objective_floor=_floor(family, incumbent) - reduced.constant)
    warm_start = setup.warm_start
    if warm_start is not None:
        counts = counts_of_solution(setup.instance, family, warm_start, "warm start")
        if family.objective(counts) < known or not qkp_reduction.respects(reduced, counts):
            setup.stats["reduction"]["warm_start"] = "improved on or breaks a fixing: no MIP start"
            warm_start = None
    run, counts = _run_model(small, dataclasses.replace(setup, options=options, warm_start=warm_start))
    if run.status == "infeasible":  # nothing as good as the start satisfies the fixings
        run.status, run.objective, run.bound, run.gap = "optimal", known, known, 0.0
        return run, incumbent
    if run.objective is not None:
        run.objective += reduced.constant
    if run.bound is not None:
        run.bound = min(reduced.bound, max(known, run.bound + reduced.constant))
    elif math.isfinite(reduced.bound):  # stopped before the solver had a bound: the reduction's still holds
        run.bound = reduced.bound
    return run, None if counts is None else qkp_reduction.lift(family, reduced, counts)


def set_start(model: Any, instance: Any, solution: dict[str, Any]) -> None:
    """Give every integer variable of a family model (either formulation) its value at ``solution``.

    The warm-start contract of :mod:`odrp.core.exact`: the solution (feasible, checked by the caller)
    is read as counts of the model's family, permuted over identical knapsacks into the order of the
    symmetry rows, and the model's builder sets its variables.
    """
    builder = model.family_builder
    counts = counts_of_solution(instance, builder.f, solution, "warm start")
    builder.set_start(builder.in_symmetric_order(counts))


def _floor(family: Family, counts: Any) -> float:
    """The objective row's right-hand side: a micro-unit worse than the start's value (rounding never
    cuts the start off; a decimal CP-SAT can scale)."""
    value = family.objective(counts)
    return (math.floor(value * 1e6) - 1) / 1e6 if family.sense == "max" else (math.ceil(value * 1e6) + 1) / 1e6


def _evaluator(instance: Any):
    return evaluator_of(instance.kind)


def _search_to_end(family: Family, settings: KnapsackSettings) -> bool:
    """Whether the search start runs to its end (``search_to_end``; None: where the configuration bound
    applies, a qm3dkp, whose compact model's bound is too weak past a few components to improve on it)."""
    return configurations.applies(family) if settings.search_to_end is None else settings.search_to_end


def _search_start(
    instance: Any,
    family: Family,
    placement: dict[str, Any] | None,
    time_limit: float | None,
    started: float,
    settings: KnapsackSettings,
    to_end: bool,
) -> Any:
    """The search start's counts (None if the greedy places nothing in its time): the local search of
    :mod:`odrp.heuristics.knapsack_search` (``search`` settings, seed 0) from the run's start placement
    where there is one, else from the greedy. It runs for ``search_share`` of the time limit (at most
    ``search_seconds``), or, ``to_end``, for its ``search.iterations`` rounds within the model's time."""
    if to_end:
        seconds = math.inf if time_limit is None else (1.0 - SOLVER_MARGIN_SHARE) * time_limit
        seconds -= time.perf_counter() - started
    else:
        seconds = _search_seconds(time_limit, settings)
    if placement is None:
        return search.warm_start(family, seconds, settings.search)
    counts = counts_of_solution(instance, family, placement, "the run's start placement")
    return search.search_from(family, counts, 0, settings.search, time.perf_counter() + seconds)


def _search_seconds(time_limit: float | None, settings: KnapsackSettings) -> float:
    """The search start's time: ``search_share`` of the time limit, at most ``search_seconds``."""
    most = settings.search_seconds
    return most if time_limit is None else min(most, settings.search_share * time_limit)


def _better(
    family: Family, run: SolverRun, counts: Any, incumbent: Any, stats: dict[str, Any], source: str = "warm start"
) -> Any:
    """The solver's counts, or ``incumbent`` (the warm start, or what an earlier stage found) where a
    time-limited solver found nothing as good."""
    if run.status not in ("time_limit", "feasible"):
        return counts  # optimal (never below the floor), infeasible or error: the solver's word
    if counts is None or family.sign * (family.objective(incumbent) - family.objective(counts)) > 0:
        stats["solution_from"] = source
        if run.status == "feasible":
            run.status = "time_limit"
        return incumbent
    return counts


def _rescore(run: SolverRun, family: Family, counts: Any, stats: dict[str, Any]) -> None:
    """Report the objective of the counts themselves.

    A product variable is only bounded from the side the objective pushes, so an incumbent that is
    not optimal (a time limit) may carry product variables below their products: the model then
    undervalues its own assignment. The family objective of the counts is the assignment's true
    value (never above the solver's bound); the model's figure is kept in the stats.
    """
    value = family.objective(counts)
    if run.objective is not None and abs(value - run.objective) > 1e-9 * max(1.0, abs(value)):
        stats["model_objective"] = run.objective
    run.objective = value
    run.gap = relative_gap(value, run.bound, family.sense)


def _arcflow_pays(family: Family, solver: str, settings: ArcFlowSettings) -> bool:
    """``auto`` takes the arc-flow search for a multiple knapsack (two knapsacks or more) solved with HiGHS."""
    return solver == "highs" and family.n_knapsacks > 1 and arcflow.applies(family, settings) is None


def _search_time_left(
    formulation: str, reason: str | None, solver: str, time_limit: float | None, started: float
) -> float | None:
    """The time left for one of the package's own searches (arc-flow, Lagrangian), which run on HiGHS only and
    apply to some families: a one-line error otherwise (``reason``: what the family lacks, None if nothing)."""
    if reason is not None:
        raise InputError("command line", f"--formulation {formulation}", f"an instance with {reason}")
    if solver != "highs":
        raise InputError(
            "command line", "--solver", f"highs with --formulation {formulation} (its stages run on HiGHS)"
        )
    return None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - started))


def _record_start(family: Family, stats: dict[str, Any], start_objective: float | None, incumbent: Any) -> None:
    """A warm or search start is an own search's first incumbent, not a MIP start: record which it was."""
    if start_objective is not None:
        stats["warm_start"] = {
            "objective": start_objective,
            "accepted": True,
            "solver_objective": None,
            "solver_log": [],
        }
    elif incumbent is not None:
        stats["search_start"] = family.objective(incumbent)


SOLVER_MARGIN_SHARE = 0.05
"""A solver run is given the time left minus this share of the time limit ..."""
SOLVER_MARGIN_S = {"highs": 0.0, "cbc": 1.0, "cpsat": 0.0, "scip": 0.5}
"""... minus these seconds (CBC, a separate program, passed a 4.7 s limit by about 1 s on a
200 x 10 mdkp on a loaded machine: writing the model, its preprocessing, reading the solution; SCIP
is imported in about 0.4 s by its first run in a process and takes up to 0.3 s to hand a solution
back; a solver not named here gets the largest margin) ..."""
SOLVER_MARGIN_PER_ROW_S = {"highs": 1e-4, "cbc": 1e-4, "cpsat": 4e-4}
"""... and minus this many seconds per constraint: handing a Pyomo model to the solver and reading the
solution back happen outside the solver's own clock (HiGHS: 1.4 s for 7 000 rows on a loaded machine;
CP-SAT's row-by-row translation: 6.5 s for 20 000 rows), and HiGHS's root cut loop passes its limit
by up to a second. A solver that would get no time at all is not called."""


def _solver_time(time_limit: float | None, used: float, solver: str, stats: dict[str, Any]) -> float | None:
    """The time limit to hand the solver: what is left after ``used`` seconds, less a margin for what
    happens outside the solver's clock (:data:`SOLVER_MARGIN_SHARE`, :data:`SOLVER_MARGIN_PER_ROW_S`);
    0 when nothing is left past the margin."""
    if time_limit is None:
        return None
    per_row = SOLVER_MARGIN_PER_ROW_S.get(solver, max(SOLVER_MARGIN_PER_ROW_S.values()))
    fixed = SOLVER_MARGIN_S.get(solver, max(SOLVER_MARGIN_S.values()))
    margin = SOLVER_MARGIN_SHARE * time_limit + fixed + per_row * stats.get("constraints", 0)
    return max(0.0, time_limit - used - margin)


def _trusted(run: SolverRun) -> SolverRun:
    """``run`` without a CP-SAT bound given before any solution: CP-SAT 9.15 answered UNKNOWN with the
    bound 0 on a qm3dkp model (one worker, 3 s) whose optimum is above 392, so such a bound is dropped
    (the profit bound of :func:`.bounds.profit_bound` or an earlier stage's bound takes its place)."""
    if run.solver.lower().startswith(("cp-sat", "cpsat", "ortools", "or-tools")) and not run.has_solution:
        run.bound = None
        run.gap = None
    return run


def _no_time(solver: str, start: float) -> SolverRun:
    """The run of a model whose solver had no time left."""
    message = "time limit: no time left to solve the model after the earlier steps"
    return SolverRun(solver_version(solver), "time_limit", None, None, None, time.perf_counter() - start, message)


def _textbook_is_auto(instance: Any, solver: str, settings: KnapsackSettings) -> bool:
    """``auto`` is the textbook model for a GAP where the Lagrangian search does not run (more than
    ``lagrangian.auto_items`` items, or a solver other than HiGHS): there the compact model adds only the
    capacity tightening, which no measurement showed to help (docs/methods/knapsack.md)."""
    if getattr(instance, "kind", None) != "gap":
        return False
    return solver != "highs" or instance.n_items > settings.lagrangian.auto_items


def _lagrangian_pays(family: Family, solver: str, settings: LagrangianSettings) -> bool:
    """``auto`` takes the Lagrangian search of :mod:`.gap_lagrangian` for a GAP solved with HiGHS with at
    most ``auto_items`` items (where it was measured to help; docs/methods/knapsack.md)."""
    return (
        solver == "highs"
        and int(family.count.sum()) <= settings.auto_items
        and gap_lagrangian.applies(family, settings) is None
    )


def _solve_lagrangian(
    family: Family,
    solver: str,
    time_limit: float | None,
    share: float,
    incumbent: Any,
    started: float,
    stats: dict[str, Any],
    settings: LagrangianSettings,
    threads: int | None = None,
) -> tuple[SolverRun, Any] | gap_lagrangian.HandOver:
    """The search of :mod:`.gap_lagrangian` for ``share`` of the time left, or what it hands over to the
    compact model (the bound it proved and its best assignment)."""
    left = _search_time_left("lagrangian", gap_lagrangian.applies(family, settings), solver, time_limit, started)
    stats["lagrangian"] = {}
    limit = None if left is None else share * left
    found = gap_lagrangian.solve(family, limit, incumbent, stats["lagrangian"], settings, threads=threads)
    if not isinstance(found, gap_lagrangian.HandOver):
        stats["formulation"] = "lagrangian"
    return found


def _take_bound(family: Family, run: SolverRun, bound: float, source: str, stats: dict[str, Any]) -> None:
    """The run's bound is the better of the solver's and ``bound``, which an earlier stage proved."""
    if run.status in ("optimal", "infeasible", "error"):
        return
    if run.bound is None or family.sign * (run.bound - bound) > 0:
        run.bound = bound
        stats["bound_from"] = source


def _solve_configurations(
    instance: Any,
    family: Family,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    incumbent: Any,
    start_objective: float | None,
    started: float,
    settings: KnapsackSettings,
) -> ExactOutcome:
    """``--formulation configurations``: the bound of :mod:`.configurations`, generated until both its parts
    are proven or ``configuration_share`` of the limit, then the local search from the best start for the
    time left (without a limit, ``search.iterations`` rounds). Raced beside ``auto`` by default (qm3dkp,
    HiGHS)."""
    reason = None if configurations.applies(family) else "pair profits and exactly one knapsack per copy (qm3dkp)"
    _search_time_left("configurations", reason, solver, time_limit, started)
    stats: dict[str, Any] = {"formulation": "configurations", **_sizes(family)}
    infeasible = _infeasible(family, solver, started, stats)
    if infeasible is not None:
        return infeasible
    deadline = None if time_limit is None else started + (1.0 - SOLVER_MARGIN_SHARE) * time_limit
    bounded_by = None if time_limit is None else started + settings.configuration_share * time_limit
    generation = GenerationSettings(exact_time_limit=settings.configuration_pricing_seconds)
    try:
        with c_stdout_silenced():  # HiGHS prints some MIP messages to the C stdout even when silent
            found = configurations.configuration_bound(family, bounded_by, incumbent, generation)
    except ModelTooLarge as error:  # the bound is refused; the search below still runs
        stats["configurations"] = {"skipped": error.expected}
        bound = None
    else:
        stats["configurations"] = {"bound": found.bound, **found.stats}
        bound = found.bound if math.isfinite(found.bound) else None
        progress.bound(bound)  # a maximisation (configurations.applies)
    _record_start(family, stats, start_objective, incumbent)
    if incumbent is not None:
        clock = time.perf_counter()
        rounds = settings.search.iterations if deadline is None else 2**31
        found_counts = search.search_from(
            family, incumbent, 1, dataclasses.replace(settings.search, iterations=rounds), deadline
        )
        if family.objective(found_counts) > family.objective(incumbent):
            incumbent = found_counts
            progress.incumbent(solution_of(instance, family, incumbent), "local search")
        stats["search_s"] = round(time.perf_counter() - clock, 3)
    runtime = time.perf_counter() - started
    objective = None if incumbent is None else family.objective(incumbent)
    if bound is not None and objective is not None:
        if bound < objective - 1e-6 * max(1.0, abs(objective)):
            raise RuntimeError(f"the configuration bound {bound} is below a feasible objective {objective}")
        bound = max(bound, objective)  # equal within the pricing's tolerance
    gap = relative_gap(objective, bound, family.sense) if objective is not None else None
    stopped = "time_limit" if time_limit is not None else "feasible"
    status = "optimal" if gap is not None and gap <= mip_gap else stopped
    message = "" if incumbent is not None else "no placement: the search start placed none within its time"
    run = SolverRun(solver_version("highs"), status, objective, bound, gap, runtime, message)
    return ExactOutcome(run, None if incumbent is None else solution_of(instance, family, incumbent), stats)


def _infeasible(family: Family, solver: str, start: float, stats: dict[str, Any]) -> ExactOutcome | None:
    """The outcome of a family with a class that fits in no knapsack (None when every class fits)."""
    stuck = infeasible_classes(family)
    if not stuck:
        return None
    names = ", ".join(str(family.classes[c][0]) for c in stuck[:5])
    message = f"infeasible: {names} ... fit in no knapsack" if len(stuck) > 5 else f"infeasible: {names} fit nowhere"
    run = SolverRun(solver_version(solver), "infeasible", None, None, None, time.perf_counter() - start, message)
    return ExactOutcome(run, None, stats)


def _solve_textbook(
    instance: Any,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    warm_start: dict[str, Any] | None,
    start_objective: float | None,
    start: float,
    threads: int | None = None,
) -> ExactOutcome:
    """The textbook model of :mod:`.textbook`, solved by ``solver`` as it is (a warm start is its MIP start)."""
    family = textbook.family(instance)
    stats: dict[str, Any] = {"formulation": "textbook", **_sizes(family)}
    infeasible = _infeasible(family, solver, start, stats)
    if infeasible is not None:
        return infeasible
    model = textbook.build(family, integer_auxiliaries=solver == "cpsat")
    if warm_start is not None:
        set_start(model, instance, warm_start)
    stats["build_s"] = time.perf_counter() - start
    stats.update(model_size(model))
    left = _solver_time(time_limit, stats["build_s"], solver, stats)
    if left == 0.0:
        return ExactOutcome(_no_time(solver, start), None, stats)
    run = _trusted(solve_model(model, solver, left, mip_gap, warm_start=warm_start is not None, threads=threads))
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    if not run.has_solution:
        return ExactOutcome(run, None, stats)
    counts = milp.counts(model, family)
    _rescore(run, family, counts, stats)
    return ExactOutcome(run, solution_of(instance, family, counts), stats)


def _lagrangian_outcome(
    instance: Any, family: Family, found: tuple[SolverRun, Any], stats: dict[str, Any], start_objective, incumbent
) -> ExactOutcome:
    run, counts = found
    _record_start(family, stats, start_objective, incumbent)
    return ExactOutcome(run, None if counts is None else solution_of(instance, family, counts), stats)


def _solve_arcflow(
    instance: Any,
    family: Family,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    incumbent: Any,
    start_objective: float | None,
    started: float,
    settings: ArcFlowSettings,
    threads: int | None = None,
) -> ExactOutcome:
    """The arc-flow search of :mod:`.arcflow`; a warm or search start is its first incumbent."""
    left = _search_time_left("arcflow", arcflow.applies(family, settings), solver, time_limit, started)
    run, counts, stats = arcflow.solve(family, left, mip_gap, incumbent, settings, threads=threads)
    _record_start(family, stats, start_objective, incumbent)
    stats["build_s"] = time.perf_counter() - started - run.runtime_s
    return ExactOutcome(run, solution_of(instance, family, counts), stats)


def _model(family: Family, options: Options, formulation: str, stats: dict[str, Any], settings: KnapsackSettings):
    """The model of the chosen formulation and a function reading the counts of its solution.

    ``auto`` takes the configuration model when identical knapsacks are the rule (at most half as
    many knapsack types as knapsacks: R-Storm's racks of equal machines) and their patterns number at
    most ``auto_pattern_limit``, the compact model otherwise (two equal capacities among ten
    different ones, as in some Dell'Amico et al. instances, do not pay). ``patterns`` enumerates up
    to ``pattern_limit`` patterns.
    """
    if formulation in ("patterns", "auto"):
        identical = 2 * len(milp.knapsack_types(family)) <= family.n_knapsacks
        if formulation == "patterns" or identical:
            limit = settings.pattern_limit if formulation == "patterns" else settings.auto_pattern_limit
            try:
                model, builder = patterns.build(family, options, limit)
            except patterns.TooManyPatterns as error:
                if formulation == "patterns":
                    raise ValueError(f"formulation patterns: {error}") from None
            else:
                stats.update(formulation="patterns", patterns=patterns.n_patterns(builder))
                return model, builder.counts
    stats["formulation"] = "compact"
    model = milp.build(family, options)
    return model, lambda m: milp.counts(m, family)


def _sizes(family: Family) -> dict[str, int]:
    """The family's size as every formulation records it in its stats."""
    return {"classes": family.n_classes, "knapsacks": family.n_knapsacks, "pairs": family.n_pairs}
