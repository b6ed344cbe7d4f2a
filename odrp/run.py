"""Run a method (the exact model or a heuristic) on an instance and have the evaluator judge it.

This is the single path from a method's answer to a :class:`~odrp.core.result.Result`: the solution is
re-scored by the problem's evaluator, and ``verified`` is true only when the evaluator finds it
feasible and its objective agrees with the method's own (:func:`odrp.core.result.agrees`).

:func:`run_method` runs in the calling process. :func:`run_within_limits`, which the CLI and the
grid use, runs it in a child process under the time limit and the memory budget
(:mod:`odrp.core.limits`), with a warm-start heuristic, if any, inside the same limit.
"""

from __future__ import annotations

import inspect
import math
import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from odrp.core.errors import InputError
from odrp.core.kind import ProblemKind
from odrp.core.limits import MethodDied, TimeLimitKilled, run_limited
from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.result import Result, Sense, Status, agrees, relative_gap
from odrp.core.settings import settings_for
from odrp.core.solvers import DEFAULT_MIP_GAP, SOLVERS, availability, require
from odrp.registry import KINDS, heuristics


class UnknownMethod(ValueError):
    """A method, solver, formulation or warm start that does not apply; ``flag`` names the option at fault."""

    def __init__(self, message: str, flag: str = "--method") -> None:
        super().__init__(message)
        self.flag = flag


WARM_START_SHARE = 0.5
"""The share of the time limit a warm-start heuristic may use; the exact method gets the rest."""


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
) -> Result:
    """Run ``method`` on ``instance`` (the kind's compiled instance, or its JSON) and return the
    evaluator-checked Result.

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
        solver = solver or kind.default_solver
        check_solver(kind, solver)
        call: dict[str, Any] = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap}
        if threads is not None and _takes_keyword(kind.exact, "threads"):
            call["threads"] = threads
        if formulation is not None:
            if formulation not in kind.formulations:
                expected = "|".join(kind.formulations) or "none"
                raise UnknownMethod(
                    f"formulation {formulation!r} does not apply to {kind.name!r}; expected {expected}", "--formulation"
                )
            call["formulation"] = formulation
        if warm_start is not None:
            call["warm_start"] = warm_start
        if kind.settings is not None:
            call["settings"] = settings_for(kind.settings, options)
        else:
            _refuse_options(options, f"the exact method of {kind.name}")
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
        scores_itself=heuristic.scores_itself,
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
      agrees with the method's own (or, for a method that does not score itself, when the
      evaluator finds it feasible).
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
            notes.append("objective from the evaluator (this method has no objective of its own)")
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
      later). A run killed there is a Result with status ``time_limit``, no solution and a message.
    - ``memory_limit``: bytes (None: the budget in force); a run past it raises
      :class:`odrp.core.limits.MemoryLimitExceeded`.
    - ``warm_start``: a solution JSON, or the name of a heuristic that runs first on
      :data:`WARM_START_SHARE` of the time limit; the exact method gets the time that is left, so
      the two share one limit. Where the start came from is in ``method_stats.warm_start``.
    - Anything the method raises is raised here; a ``BaseException`` that is no ``Exception`` (a
      plugin's ``SystemExit``) and a process that dies raise :class:`odrp.core.limits.MethodDied`.
    """
    started = time.perf_counter()
    if method == "exact":
        check_solver(kind, keywords.get("solver") or kind.default_solver)

    def limited() -> Result:
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
        return Result(
            problem=kind.name,
            instance=getattr(instance, "name", "unnamed"),
            method=method,
            solver=keywords.get("solver") or (kind.default_solver if method == "exact" else None),
            status="time_limit",
            objective=None,
            bound=None,
            gap=None,
            runtime_s=time.perf_counter() - started,
            verified=False,
            solution=None,
            message=f"no solution: {stopped}",
        )
    except (SystemExit, KeyboardInterrupt, GeneratorExit) as error:
        raise MethodDied(f"the method raised {type(error).__name__}({error})") from None


def _takes_keyword(function: Callable[..., Any], name: str) -> bool:
    parameters = inspect.signature(function).parameters.values()
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
