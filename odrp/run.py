"""Run a method (the exact model or a heuristic) on an instance and have the evaluator judge it.

This is the single path from a method's answer to a :class:`~odrp.core.result.Result`: the solution is
re-scored by the problem's evaluator, and ``verified`` is true only when the evaluator finds it
feasible and its objective agrees with the method's own (:func:`odrp.core.result.agrees`).

:func:`run_method` runs in the calling process. :func:`run_within_limits`, which the CLI and the
grid use, runs it in a child process under the time limit and the memory budget
(:mod:`odrp.core.limits`), with a warm-start heuristic, if any, inside the same limit.

**An exact run is never worse than the fast heuristics.** Every exact run (but the textbook model's,
which stays the plain model it is measured as) first runs its kind's fast heuristics
(``ProblemKind.starts``) on :data:`START_SHARE` of its time limit (the first of them, the kind's
one-pass construction, may take longer, up to the run's limit: see :func:`run_starts`), hands the best
verified placement to the exact method as its incumbent (``incumbent=``, where the method takes it),
and returns the better of the exact method's answer and that placement (:func:`floored`): a run that
ends without a solution of its own still returns the heuristics' one, with the exact method's bound
and a message saying so.

**What a run finds leaves it as it is found.** Inside :func:`run_within_limits` every incumbent and
bound a method reports (:mod:`odrp.core.progress`: the start heuristics' placements, the solvers'
improving solutions through their callbacks, the kinds' stages) is scored by the evaluator in the
child and sent to the parent; a run the watchdog kills at its limit returns the last of them as a
``time_limit`` Result, judged by the evaluator like any other.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from odrp.core import progress
from odrp.core.errors import InputError
from odrp.core.kind import ProblemKind
from odrp.core.limits import MethodDied, TimeLimitKilled, report_to_parent, run_limited
from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.race import race
from odrp.core.result import Result, Sense, Status, agrees, relative_gap
from odrp.core.settings import settings_for
from odrp.core.solvers import DEFAULT_MIP_GAP, SOLVERS, availability, require
from odrp.registry import KINDS, heuristics


class UnknownMethod(ValueError):
    """A method, solver, formulation or warm start that does not apply; ``flag`` names the option at fault."""

    def __init__(self, message: str, flag: str = "--method") -> None:
        super().__init__(message)
        self.flag = flag


START_SHARE = 0.1
"""The share of an exact run's time limit that its kind's fast heuristics (``ProblemKind.starts``) take
first, all of them together; the exact method gets the rest."""

START_SECONDS = 10.0
"""Without a time limit, the seconds the fast heuristics take first, all of them together."""

WARM_START_SHARE = START_SHARE
"""The share of the time limit a warm-start heuristic may use; the exact method gets the rest."""

SEARCH_MEMORY = 0.125
"""A raced search's part of the memory budget against an exact member's 1 (:func:`odrp.core.race.race`'s
``weights``): a search holds the instance and a few placements, the exact member its model. A process that
has run ODRP's local search on 32 x 20 holds 263 MB of data (``VmData``, the package and its solvers
imported), against 1.3 GB that this part gives under the default budget (half of 24 GB). A search refused
its memory leaves the exact member to answer alone."""

TEXTBOOK = ("textbook", "paper")
"""Formulations that are the plain model a practitioner writes: no start heuristics run before them."""


def available_methods(kind: str | None = None) -> dict[str, dict[str, Any]]:
    """Every method with the kinds it applies to (``odrp methods``); the exact method's ``solvers`` say, for
    each solver, whether it runs here and which kinds take it."""
    solvers = [s for s in SOLVERS if any(s in k.solvers for k in KINDS.values())]
    out: dict[str, dict[str, Any]] = {
        "exact": {
            "kinds": [k for k in KINDS if kind in (None, k)],
            "description": "exact optimum (MILP): --solver "
            + "|".join(solvers)
            + " (default: "
            + ", ".join(f"{k.name} {k.default_solver}" for k in KINDS.values() if k.default_solver != "highs")
            + ", else highs); formulations per kind: "
            + "; ".join(f"{k.name}: {'|'.join(k.formulations)}" for k in KINDS.values() if k.formulations),
            "solvers": {
                s: {
                    "status": availability(s),
                    "kinds": [k.name for k in KINDS.values() if s in k.solvers and kind in (None, k.name)],
                }
                for s in solvers
            },
        }
    }
    for name, h in sorted(heuristics().items()):
        if kind is None or kind in h.kinds:
            out[name] = {"kinds": list(h.kinds), "description": h.description, "randomized": h.randomized}
    return out


def checked_threads(threads: Any, source: str, field: str) -> int:
    """A thread count: ``threads`` when it is a positive whole number, the machine's cores when None; bad input
    naming ``source`` and ``field`` otherwise."""
    if threads is None:
        return os.cpu_count() or 1
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(source, field, f"a positive whole number of threads, got {threads!r}")
    return threads


def check_solver(kind: ProblemKind, solver: str) -> None:
    """Bad input unless ``solver`` applies to ``kind`` and can run here (a commercial solver's package and
    licence: :func:`odrp.core.solvers.require`)."""
    if solver not in kind.solvers:
        raise UnknownMethod(
            f"solver {solver!r} does not apply to {kind.name!r}; expected {'|'.join(kind.solvers)}", "--solver"
        )
    require(solver)


def heuristic_for(method: str, kind: ProblemKind) -> Heuristic:
    known_heuristics = heuristics()
    if method not in known_heuristics:
        known = ", ".join(["exact", *sorted(known_heuristics)])
        raise UnknownMethod(f"unknown method {method!r}; known: {known}")
    heuristic = known_heuristics[method]
    if kind.name not in heuristic.kinds:
        raise UnknownMethod(
            f"method {method!r} does not apply to {kind.name!r} (it solves {', '.join(heuristic.kinds)})"
        )
    return heuristic


def run_method(
    kind: ProblemKind,
    instance: Any,
    method: str = "exact",
    *,
    solver: str | None = None,
    formulation: str | None = None,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    warm_start: dict[str, Any] | None = None,
    threads: int | None = None,
    starts: bool = True,
) -> Result:
    """Run ``method`` on ``instance`` (the kind's compiled instance, or its JSON) and return the
    evaluator-checked Result.

    An exact run takes the kind's fast heuristics first (``starts``; see the module docstring); with
    ``starts=False`` the exact method runs alone (benchmarks that measure a formulation by itself).

    ``options`` are the method's settings: a ``name -> value`` mapping (``--param NAME=VALUE``, a grid's
    ``options:``) turned into the method's settings dataclass by :func:`odrp.core.settings.settings_for`, or that
    dataclass itself. ``warm_start`` (exact only) is a solution JSON handed to the solver as a MIP
    start (see :func:`warm_start_solution`). ``threads`` (exact only; None: each solver's own default) goes to
    the kind's exact method when it takes that keyword, and ``method_stats.threads`` records what the solver
    was given.
    """
    start = time.perf_counter()
    if isinstance(instance, Mapping):  # instance JSON: validated and compiled first
        instance = kind.load(dict(instance), "<dict>")
    if warm_start is not None and method != "exact":
        raise UnknownMethod(f"a warm start applies to --method exact, not to {method!r}", "--warm-start")
    if warm_start is not None and not _takes_keyword(kind.exact, "warm_start"):
        raise UnknownMethod(f"the exact method of {kind.name!r} takes no warm start", "--warm-start")
    if method == "exact":
        chosen = formulation not in (None, "auto") or bool(options)  # the user said how the method runs
        _check_exact(kind, solver, formulation)
        if kind.settings is not None:  # bad options are refused before any time is spent
            options = settings_for(kind.settings, options)
        else:
            _refuse_options(options, f"the exact method of {kind.name}")
        floor: list[Result] = []
        if starts and formulation not in TEXTBOOK:
            floor = run_starts(kind, instance, time_limit=time_limit, seed=seed)
        if warm_start is not None:  # the user's start is a floor too (a feasible one: the method checks it)
            given = judge_solution(kind, instance, warm_start, "warm start")
            floor += [given] if given is not None else []
        left = None if time_limit is None else max(0.0, time_limit - (time.perf_counter() - start))
        raced = not kind.race_solvers or (solver or kind.default_solver) in kind.race_solvers
        racers = [] if chosen or not raced else [f for f in kind.race if f in kind.formulations]
        searched = _searches(kind) and not chosen and not racers and left is not None
        cores = threads if threads is not None else _cores()
        if (racers or searched) and cores >= 2:
            share = None if threads is None else max(1, threads // (1 + len(racers) + searched))
            call = (solver, left, mip_gap, options, warm_start, share)
            members = [(f or "auto", _exact_member(kind, instance, f, *call, floor)) for f in [formulation, *racers]]
            weights = [1.0] * len(members)
            if searched:
                members.append(_search_member(kind, instance, left, seed, floor))
                weights.append(SEARCH_MEMORY)
            result = _race(kind, instance, members, left, mip_gap, share, weights)
        else:
            call = (solver, left, mip_gap, options, warm_start, threads)
            result = _run_exact(kind, instance, formulation, *call, floor)
        result = floored(kind, instance, result, floor)
        if floor:
            result.metrics.setdefault("method_stats", {})["starts"] = [_start_record(r) for r in floor]
        result.runtime_s = time.perf_counter() - start
        if result.status == "time_limit" and not result.message:
            result.message = _stopped(time_limit, result)
        return result
    return _run_heuristic(kind, instance, method, time_limit, seed, options, start)


def _stopped(time_limit: float | None, result: Result) -> str:
    """Why a time-limited exact run ended without a proof: its limit, and how far it got."""
    limit = "its time limit" if time_limit is None else f"the time limit of {time_limit:g} s"
    if result.objective is None:
        return f"{limit} came before any solution was found"
    if result.gap is None:
        return f"{limit} came before a bound on the optimum was found"
    return f"{limit} came before the optimum was proven: gap {result.gap:.2%} to the best bound"


def _check_exact(kind: ProblemKind, solver: str | None, formulation: str | None) -> None:
    """Refuse a solver or formulation that does not apply to the kind (before any time is spent)."""
    check_solver(kind, solver or kind.default_solver)
    if formulation is not None and formulation not in kind.formulations:
        expected = "|".join(kind.formulations) or "none"
        raise UnknownMethod(
            f"formulation {formulation!r} does not apply to {kind.name!r}; expected {expected}", "--formulation"
        )


def _run_exact(
    kind: ProblemKind,
    instance: Any,
    formulation: str | None,
    solver: str | None,
    time_limit: float | None,
    mip_gap: float,
    options: Any,
    warm_start: dict[str, Any] | None,
    threads: int | None,
    floor: list[Result],
) -> Result:
    """The kind's exact method, judged; ``floor``'s best placement is its incumbent where it takes one."""
    start = time.perf_counter()
    solver = solver or kind.default_solver
    call: dict[str, Any] = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
    if threads is not None and _takes_keyword(kind.exact, "threads"):
        call["threads"] = threads
    if formulation is not None:
        call["formulation"] = formulation
    if warm_start is not None:
        call["warm_start"] = warm_start
    best = best_of(kind, instance, floor)
    if best is not None and _takes_keyword(kind.exact, "incumbent"):
        call["incumbent"] = best.solution
    if kind.settings is not None:
        call["settings"] = settings_for(kind.settings, options)
    outcome = kind.exact(instance, **call)
    runtime = time.perf_counter() - start
    run = outcome.run
    if "threads" in call:
        outcome.stats["threads"] = threads if run.threads is None else run.threads
    return judge(
        kind,
        instance,
        method="exact",
        solver=run.solver,
        status=run.status,
        solution=outcome.solution,
        own_objective=run.objective,
        bound=run.bound,
        runtime_s=runtime,
        stats=outcome.stats,
        message=run.message,
    )


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _exact_member(
    kind: ProblemKind,
    instance: Any,
    formulation: str | None,
    solver: str | None,
    time_limit: float | None,
    mip_gap: float,
    options: Any,
    warm_start: dict[str, Any] | None,
    threads: int | None,
    floor: list[Result],
) -> Callable[[], Result]:
    """A race member: the exact method with ``formulation`` (the textbook model without the starts)."""
    starts = floor if formulation not in TEXTBOOK else []
    call = (solver, time_limit, mip_gap, options, warm_start, threads)
    return lambda: _run_exact(kind, instance, formulation, *call, starts)


def _searches(kind: ProblemKind) -> bool:
    """The kind has a ``race_search`` whose heuristic is registered for it."""
    if kind.race_search is None:
        return False
    known = heuristics().get(kind.race_search[0])
    return known is not None and kind.name in known.kinds


def _search_member(
    kind: ProblemKind, instance: Any, time_limit: float, seed: int, floor: list[Result]
) -> tuple[str, Callable[[], Result]]:
    """The kind's ``race_search`` as a race member: its heuristic with its options, for ``time_limit``
    seconds, from the best placement of ``floor`` where its settings take a ``start`` and its options name
    none."""
    assert kind.race_search is not None
    name, given = kind.race_search
    heuristic = heuristic_for(name, kind)
    options: dict[str, Any] = dict(given)
    best = best_of(kind, instance, floor)
    fields = set() if heuristic.settings is None else {f.name for f in dataclasses.fields(heuristic.settings)}
    if best is not None and "start" in fields and "start" not in given:
        options["start"] = best.solution
    settings = None if heuristic.settings is None else dataclasses.replace(heuristic.settings(), **options)
    return name, lambda: _run_heuristic(kind, instance, name, time_limit, seed, settings, time.perf_counter())


def _race(
    kind: ProblemKind,
    instance: Any,
    members: list[tuple[str, Callable[[], Result]]],
    time_limit: float | None,
    mip_gap: float,
    threads: int | None,
    weights: list[float] | None = None,
) -> Result:
    """The named ``members`` at once (:mod:`odrp.core.race`), combined: the first member's Result (the
    exact method's), with the best verified incumbent and the best bound of all, optimal when one of
    them proves it (or when incumbent and bound meet within ``mip_gap``). ``method_stats.race`` records
    each member by its formulation (``auto`` for the default) or, for ``race_search``, its heuristic."""
    began = time.perf_counter()
    refusal = (InputError, UnknownMethod)
    outcomes = race(
        [member for _, member in members],
        decided=_decided,
        refused=lambda error: isinstance(error, refusal),
        time_limit=time_limit,
        weights=weights,
    )
    refused = next((o for o in outcomes if isinstance(o, refusal)), None)
    if refused is not None:  # bad input (a licence too small for the model) is refused at once, by any member
        raise refused
    searches = [o for o in outcomes if isinstance(o, Result) and o.method != "exact"]
    results = [o for o in outcomes if isinstance(o, Result) and o.method == "exact"]
    if not results:  # every formulation failed: raise the first's error (or say that it died)
        first = next((o for o in outcomes if isinstance(o, BaseException)), None)
        raise first if first is not None else MethodDied("every raced formulation died without an answer")
    sense = getattr(instance, "sense", kind.sense)
    decided = next((r for r in results if _decided(r)), None)
    primary = decided or (outcomes[0] if outcomes[0] in results else results[0])
    best = best_of(kind, instance, results) or primary
    bounds = [r.bound for r in results if r.bound is not None and r.status != "infeasible"]
    bound = (min(bounds) if sense == "max" else max(bounds)) if bounds else None
    if decided is not None and decided.status == "optimal":
        bound = decided.bound
    gap = relative_gap(best.objective, bound, sense) if best.objective is not None else None
    status = primary.status
    if decided is None and gap is not None and gap <= max(mip_gap, 1e-9) and best.verified:
        status = "optimal"
    stats = dict(primary.metrics.get("method_stats", {}))
    given = [_threads_of(o, threads) for o in outcomes]
    if "threads" in stats and None not in given:  # the run's threads are its members' together
        stats["threads"] = sum(given)
    names = [name for name, _ in members]
    stats["race"] = [
        {
            "formulation": f,
            "status": o.status if isinstance(o, Result) else ("stopped" if o is None else type(o).__name__),
            "objective": o.objective if isinstance(o, Result) else None,
            "bound": o.bound if isinstance(o, Result) else None,
            "runtime_s": round(o.runtime_s, 3) if isinstance(o, Result) else None,
            "threads": t,
        }
        for f, o, t in zip(names, outcomes, given, strict=True)
    ]
    metrics = dict(best.metrics, method_stats=stats)
    won = next((name for name, o in zip(names, outcomes, strict=True) if o is decided), "")
    note = f"raced {', '.join(names)}; decided by {won}" if won else ""
    message = "; ".join(m for m in (best.message, note) if m)
    combined = dataclasses.replace(
        best,
        method="exact",
        solver=primary.solver,
        status=status,
        bound=bound,
        gap=gap,
        runtime_s=time.perf_counter() - began,
        metrics=metrics,
        message=message,
    )
    answer = floored(kind, instance, combined, searches, source="raced search")
    proven = answer.gap is not None and answer.gap <= max(mip_gap, 1e-9) and answer.verified
    if proven and answer.status in ("time_limit", "feasible"):  # the search's placement meets the exact bound
        answer = dataclasses.replace(answer, status="optimal")
    return answer


def _threads_of(outcome: Result | BaseException | None, given: int | None) -> int | None:
    """The threads a raced member's solver ran on: what it recorded, else what it was given."""
    if isinstance(outcome, Result):
        return outcome.metrics.get("method_stats", {}).get("threads", given)
    return given


def _decided(result: Result) -> bool:
    """A racer's answer that ends the race: an exact method's verified optimum, or its proof of infeasibility."""
    if result.method != "exact":
        return False
    return (result.status == "optimal" and result.verified) or result.status == "infeasible"


def run_starts(kind: ProblemKind, instance: Any, *, time_limit: float | None, seed: int = 0) -> list[Result]:
    """The kind's fast heuristics (``ProblemKind.starts``), in their order, on :data:`START_SHARE` of
    ``time_limit`` (:data:`START_SECONDS` without one) together: each gets an equal part of what is left
    when its turn comes, so that a quick one leaves its time to the next. The first, the kind's one-pass
    construction, may use the run's whole ``time_limit`` instead (None: no limit): on a short limit and
    a large instance its share would end it before it places anything, and then the run would have no
    incumbent at all (a construction stops at its limit). Every verified placement is reported as an
    incumbent (:mod:`odrp.core.progress`). Returns their Results."""
    share = START_SECONDS if time_limit is None else START_SHARE * time_limit
    began = time.perf_counter()
    names = [name for name in kind.starts if name in heuristics() and kind.name in heuristics()[name].kinds]
    results = []
    for position, name in enumerate(names):
        left = share - (time.perf_counter() - began)
        if position == 0:
            limit = time_limit
        elif left > 0:
            limit = left / (len(names) - position)
        else:
            break
        result = run_method(kind, instance, name, time_limit=limit, seed=seed)
        if result.verified and result.solution is not None:
            progress.incumbent(result.solution, name)
        results.append(result)
    return results


def judge_solution(kind: ProblemKind, instance: Any, solution: dict[str, Any], source: str) -> Result | None:
    """A given solution (a user's warm start) as a Result of the evaluator's; None if it is not feasible."""
    evaluation = kind.evaluate(instance, solution, source)
    if not evaluation.feasible or evaluation.objective is None:
        return None
    progress.incumbent(solution, source)
    return judge(
        kind,
        instance,
        method=source,
        solver=None,
        status="feasible",
        solution=solution,
        own_objective=float(evaluation.objective),
        bound=None,
        runtime_s=0.0,
        stats={},
    )


def _better(a: float, b: float, sense: Sense) -> bool:
    """``a`` strictly better than ``b`` (beyond :func:`odrp.core.result.agrees`)."""
    return not agrees(a, b) and (a > b if sense == "max" else a < b)


def best_of(kind: ProblemKind, instance: Any, results: list[Result]) -> Result | None:
    """The verified Result with the best objective (the first of equals), None if none is verified."""
    sense = getattr(instance, "sense", kind.sense)
    best = None
    for result in results:
        usable = result.verified and result.objective is not None and result.solution is not None
        if usable and (best is None or _better(result.objective, best.objective, sense)):
            best = result
    return best


def floored(kind: ProblemKind, instance: Any, result: Result, floor: list[Result], source: str = "start") -> Result:
    """``result`` (an exact run's), or, where it has no verified solution as good, the best of ``floor``'s
    (the start heuristics', or the raced search's: ``source`` names them in the message).

    The exact method's bound stays when it is consistent with the placement taken over (a bound that a
    verified placement beats is wrong, and is dropped with a message); so does its status (``error``
    included: the solver failed, and the placement is the start's), except that ``optimal`` or
    ``infeasible`` contradicted by a better verified placement becomes ``feasible``, with a message.
    """
    best = best_of(kind, instance, floor)
    sense = getattr(instance, "sense", kind.sense)
    own = result.objective if result.verified and result.solution is not None else None
    if best is None or (own is not None and not _better(best.objective, own, sense)):
        return result
    notes = [result.message] if result.message else []
    status = result.status
    if status in ("optimal", "infeasible"):
        notes.append(f"the exact method's {status} answer is contradicted by {best.method}'s verified placement")
        status = "feasible"
    elif status not in ("time_limit", "feasible", "error"):
        status = "time_limit"
    bound = result.bound
    if bound is not None and _better(best.objective, bound, sense):
        notes.append(f"the exact method's bound {bound!r} is beaten by a verified placement, so it is dropped")
        bound = None
    if own is None:
        notes.append(f"the incumbent is the {source} {best.method!r}'s: the exact method found no verified solution")
    else:
        notes.append(f"the incumbent is the {source} {best.method!r}'s: the exact method's was worse ({own!r})")
    metrics = dict(best.metrics)
    metrics["method_objective"] = result.metrics.get("method_objective")
    if "method_stats" in result.metrics:
        metrics["method_stats"] = dict(result.metrics["method_stats"], incumbent_from=best.method)
    else:
        metrics["method_stats"] = {"incumbent_from": best.method}
    return Result(
        problem=result.problem,
        instance=result.instance,
        method=result.method,
        solver=result.solver,
        status=status,
        objective=best.objective,
        bound=bound,
        gap=relative_gap(best.objective, bound, sense),
        runtime_s=result.runtime_s,
        verified=True,
        solution=best.solution,
        metrics=metrics,
        message="; ".join(notes),
    )


def _start_record(result: Result) -> dict[str, Any]:
    """What an exact run's stats keep of one start heuristic's run."""
    return {
        "method": result.method,
        "status": result.status,
        "objective": result.objective,
        "verified": result.verified,
        "runtime_s": round(result.runtime_s, 4),
    }


def _run_heuristic(
    kind: ProblemKind,
    instance: Any,
    method: str,
    time_limit: float | None,
    seed: int,
    options: dict[str, Any] | None,
    start: float,
) -> Result:
    """A heuristic's run, judged."""
    heuristic = heuristic_for(method, kind)
    context: dict[str, Any] = {"adapter": kind.taskview} if heuristic.on_task_view else {}
    if heuristic.settings is not None:
        context["settings"] = settings_for(heuristic.settings, options)
    else:
        _refuse_options(options, method)
    out = heuristic.run(instance, seed=seed, time_limit=time_limit, **context)
    runtime = time.perf_counter() - start
    return judge(
        kind,
        instance,
        method=method,
        solver=None,
        status=heuristic_status(out, kind.sense),
        solution=out.solution,
        own_objective=out.objective,
        bound=out.bound,
        runtime_s=runtime,
        stats={"seed": seed, **out.stats},
        message=out.message or ("" if out.solution is not None else "no feasible solution found"),
        scores_itself=heuristic.scores_itself and out.objective is not None,  # None: the evaluator scores it
    )


def _refuse_options(options: Any, what: str, *, source: str = "command line", where: str = "--param") -> None:
    """Bad input when options are given to a method that has no settings."""
    if options:
        first = next(iter(options)) if isinstance(options, Mapping) else type(options).__name__
        raise InputError(source, f"{where} {first}", f"no option: {what} has no settings")


def heuristic_status(out: HeuristicOutcome, sense: Sense) -> Status:
    """The status of a heuristic's answer before the evaluator sees it.

    - a solution whose own objective meets the method's own proven bound: ``optimal``;
    - any other solution: ``feasible``;
    - no solution and an infinite bound (+inf for min, -inf for max): ``infeasible`` (proven);
    - no solution otherwise: ``no_solution`` (nothing found, which proves nothing; a bound-only
      method says so in its message and still reports its bound).
    """
    if out.solution is not None:
        if out.bound is not None and out.objective is not None and agrees(out.objective, out.bound):
            return "optimal"
        return "feasible"
    if out.bound is not None and out.bound == (math.inf if sense == "min" else -math.inf):
        return "infeasible"
    return "no_solution"


def judge(
    kind: ProblemKind,
    instance: Any,
    *,
    method: str,
    solver: str | None,
    status: Status,
    solution: dict[str, Any] | None,
    own_objective: float | None,
    bound: float | None,
    runtime_s: float,
    stats: dict[str, Any],
    message: str = "",
    scores_itself: bool = True,
) -> Result:
    """Re-score a method's solution with the evaluator and build the Result.

    - ``verified`` is true only when the evaluator finds the solution feasible and its objective
      agrees with the method's own (or, for a method that does not score itself, such as a heuristic
      whose outcome's objective is None, when the evaluator finds it feasible; its objective is then
      the evaluator's).
    - A heuristic whose placement the evaluator finds infeasible gets ``status: no_solution`` and
      no objective (its solution is kept for inspection; ``infeasible`` is kept for proofs); an exact
      method keeps its solver status and is simply not verified: a model whose optimum the evaluator
      rejects is a bug to see.
    """
    notes = [message] if message else []
    metrics: dict[str, Any] = {}
    objective = own_objective
    verified = False
    if solution is not None:
        evaluation = kind.evaluate(instance, solution, "<method solution>")
        metrics = dict(evaluation.metrics)
        if not evaluation.feasible:
            notes.append("evaluator: infeasible: " + "; ".join(evaluation.violations))
            if method != "exact":
                status, objective = "no_solution", None
        elif not scores_itself:
            verified = True
            objective = evaluation.objective
            notes.append("objective from the evaluator (the method reported none of its own)")
        elif own_objective is None or evaluation.objective is None:
            notes.append("no objective to compare with the evaluator's")
        elif agrees(evaluation.objective, own_objective):
            verified = True
            objective = evaluation.objective
        else:
            notes.append(f"evaluator objective {evaluation.objective!r} != method objective {own_objective!r}")
    metrics["method_objective"] = own_objective
    if stats:
        metrics["method_stats"] = stats
    return Result(
        problem=kind.name,
        instance=getattr(instance, "name", "unnamed"),
        method=method,
        solver=solver,
        status=status,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, getattr(instance, "sense", kind.sense)),
        runtime_s=runtime_s,
        verified=verified,
        solution=solution,
        metrics=metrics,
        message="; ".join(notes),
    )


def warm_start_solution(
    kind: ProblemKind, instance: Any, source: Any, *, seed: int = 0, time_limit: float | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A warm start for ``kind``'s exact method, and a record of where it came from.

    ``source`` is a solution JSON (or a Result JSON, whose ``solution`` is taken) or the name of a
    heuristic that applies to the kind, which is run first (with ``seed`` and ``time_limit``) and
    must return a placement the evaluator verifies.
    """
    if isinstance(source, dict):
        solution = source["solution"] if "solution" in source and "status" in source else source
        if not isinstance(solution, dict):
            raise UnknownMethod("the warm-start Result has no solution", "--warm-start")
        return solution, {"source": "solution"}
    result = run_method(kind, instance, str(source), seed=seed, time_limit=time_limit)
    if result.solution is None or result.status not in ("feasible", "optimal") or not result.verified:
        raise UnknownMethod(
            f"warm-start method {source!r} found no verified solution ({result.message})", "--warm-start"
        )
    return result.solution, {"source": str(source), "runtime_s": result.runtime_s, "objective": result.objective}


def run_within_limits(
    kind: ProblemKind,
    instance: Any,
    method: str = "exact",
    *,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    warm_start: dict[str, Any] | str | None = None,
    seed: int = 0,
    **keywords: Any,
) -> Result:
    """:func:`run_method` in a child process that the limits hold whatever the method does.

    The exact method's solver is checked here first (:func:`check_solver`), so that a commercial solver's
    licence is probed once in this process, not in every child.

    - ``time_limit``: the method's limit, and the watchdog's (:data:`odrp.core.limits.GRACE` seconds
      later). A run killed there is a Result with status ``time_limit``: the last incumbent and bound
      the method reported before (:mod:`odrp.core.progress`), judged by the evaluator, or no solution
      and a message saying why.
    - ``memory_limit``: bytes (None: the budget in force); a run past it raises
      :class:`odrp.core.limits.MemoryLimitExceeded`.
    - ``warm_start``: a solution JSON, or the name of a heuristic that runs first on
      :data:`WARM_START_SHARE` of the time limit; the exact method gets the time that is left, so
      the two share one limit. Where the start came from is in ``method_stats.warm_start``.
    - Anything the method raises is raised here; a ``BaseException`` that is no ``Exception`` (a
      plugin's ``SystemExit``) and a process that dies raise :class:`odrp.core.limits.MethodDied`.
    """
    started = time.perf_counter()
    if isinstance(instance, Mapping):  # compiled here, so that the parent can judge what a killed run reported
        instance = kind.load(dict(instance), "<dict>")
    sense = getattr(instance, "sense", kind.sense)
    if method == "exact":
        check_solver(kind, keywords.get("solver") or kind.default_solver)

    def limited() -> Result:
        with progress.watching(kind.evaluate, instance, sense, report_to_parent):
            start, origin = None, {}
            left = time_limit
            if warm_start is not None:
                if method != "exact":
                    raise UnknownMethod(f"a warm start applies to --method exact, not to {method!r}", "--warm-start")
                share = None if time_limit is None else WARM_START_SHARE * time_limit
                start, origin = warm_start_solution(kind, instance, warm_start, seed=seed, time_limit=share)
                left = None if time_limit is None else max(0.01, time_limit - (time.perf_counter() - started))
            result = run_method(kind, instance, method, time_limit=left, seed=seed, warm_start=start, **keywords)
            if origin:
                result.metrics.setdefault("method_stats", {}).setdefault("warm_start", {}).update(origin)
            result.runtime_s = time.perf_counter() - started
            return result

    try:
        return run_limited(limited, time_limit=time_limit, memory_limit=memory_limit)
    except TimeLimitKilled as stopped:
        return _reported(kind, instance, method, keywords.get("solver"), stopped, time.perf_counter() - started)
    except (SystemExit, KeyboardInterrupt, GeneratorExit) as error:
        raise MethodDied(f"the method raised {type(error).__name__}({error})") from None


def _reported(
    kind: ProblemKind, instance: Any, method: str, solver: str | None, stopped: TimeLimitKilled, runtime_s: float
) -> Result:
    """The Result of a run the watchdog killed: what it reported before, judged by the evaluator."""
    from odrp.core.solvers import solver_version

    found = stopped.found
    name = None
    if method == "exact":
        solver = solver or kind.default_solver
        try:
            name = solver_version(solver)
        except (ValueError, ImportError):
            name = solver
    if found.solution is None:
        why = f"no solution: {stopped}" + ("" if found.bound is None else "; the bound is the last one it reported")
        return Result(
            problem=kind.name,
            instance=getattr(instance, "name", "unnamed"),
            method=method,
            solver=name,
            status="time_limit",
            objective=None,
            bound=found.bound,
            gap=None,
            runtime_s=runtime_s,
            verified=False,
            solution=None,
            message=why,
        )
    return judge(
        kind,
        instance,
        method=method,
        solver=name,
        status="time_limit",
        solution=found.solution,
        own_objective=found.objective,
        bound=found.bound,
        runtime_s=runtime_s,
        stats={"incumbent_from": found.source, "incumbent_at_s": found.at_s},
        message=f"{stopped}; the incumbent and bound are the last ones it reported (from {found.source})",
    )


def _takes_keyword(function: Callable[..., Any], name: str) -> bool:
    parameters = inspect.signature(function).parameters.values()
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
