"""Exact ODRP: two formulations with the same optimum, solved with HiGHS or CBC.

Tunables are the fields of :class:`~odrp.kinds.replication.exact.settings.OdrpSettings`
(``--param NAME=VALUE``); ``formulation`` is a keyword of its own.

``compact`` (default, :mod:`.compact`) is our replica-level formulation; ``paper`` (:mod:`.paper`)
is the paper's ILP as written (eqs. 22-32). Both return the placement as solution JSON, and both
take a warm start (a feasible solution JSON) through their ``set_start`` (see :mod:`odrp.core.exact`).

When only the response time and availability carry weight, ``compact`` solves the smaller
response-time model (:mod:`.response`) instead, after a quick local search (:mod:`.start`) whose
placement bounds the response time from above and prunes node choices that cannot beat it
(:mod:`.reduction`). Both steps keep every optimal placement, so the optimum is the same. A warm
start given to that path is used the same way: the better of it and the local search's placement is
the incumbent whose response time prunes the model.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any

from odrp.core.budget import Budget
from odrp.core.exact import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.kinds.replication.evaluator import evaluate
from odrp.kinds.replication.exact import compact, paper, reduction, response, start
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance, Placement, parse_solution, solution_json

FORMULATIONS = ("compact", "paper")
DEFAULT_FORMULATION = "compact"


def solve(
    inst: OdrpInstance,
    *,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    formulation: str = DEFAULT_FORMULATION,
    warm_start: dict[str, Any] | None = None,
    settings: OdrpSettings | None = None,
) -> ExactOutcome:
    """Solve an ODRP instance exactly with the given formulation and solver.

    ``warm_start``: a feasible solution JSON handed to the solver as a MIP start (the incumbent of
    the response-time model). ``settings``: the method's tunables (None: the defaults).
    """
    settings = settings or OdrpSettings()
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
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
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    given = None if warm_start is None else (parse_solution(inst, warm_start, "warm start"), start_objective)
    if formulation == "compact" and settings.response_model and response.serves(inst):
        outcome = _solve_response(inst, solver, time_limit, mip_gap, settings, given)
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
    module = compact if formulation == "compact" else paper
    start_time = time.perf_counter()
    model = compact.build(inst, settings) if formulation == "compact" else paper.build(inst)
    if given is not None:
        module.set_start(model, inst, given[0])
    build_s = time.perf_counter() - start_time
    run = run_solver(model, solver=solver, time_limit=time_limit, mip_gap=mip_gap, warm_start=given is not None)
    solution = solution_json(inst, module.placement(model, inst)) if run.has_solution else None
    stats = {"formulation": formulation, "build_s": build_s, "solve_s": run.runtime_s, **model_size(model)}
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    return ExactOutcome(run, solution, stats)


def _solve_response(
    inst: OdrpInstance,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    settings: OdrpSettings,
    given: tuple[Placement, float] | None = None,
) -> ExactOutcome:
    """The response-time model, pruned by the better of a local-search placement and ``given``."""
    budget = Budget(time_limit)
    stats: dict[str, Any] = {"formulation": "compact", "model": "response"}
    known = None
    if settings.local_search and inst.weights["response_time"] > 0:
        # at most settings.start_share of the time limit (wall clock) goes to the start
        known = start.local_search(inst, settings, budget.share(settings.start_share))
    if known is not None:
        stats["start_source"] = "local search"
    if given is not None and inst.weights["response_time"] > 0 and (known is None or given[1] > known[1]):
        known = given
        stats["start_source"] = "warm start"
    stats["start_s"] = budget.elapsed()
    model_inst, conflicts, excluded, ceiling = inst, (), (), None
    if known is not None:
        stats["start_objective"] = known[1]
        ceiling = _response_time_ceiling(inst, known[1])
        reduced = reduction.reduce(inst, ceiling)
        model_inst, conflicts, excluded = reduced.instance, reduced.conflicts, reduced.excluded
        stats["removed_candidates"], stats["conflicts"] = reduced.removed, len(conflicts)
        stats["excluded_counts"] = len(excluded)
    model = response.build(model_inst, settings, conflicts=conflicts, excluded=excluded, max_response_time=ceiling)
    stats["build_s"] = budget.elapsed() - stats["start_s"]
    stats.update(model_size(model))
    left = budget.left()
    remaining = None if left is None else max(1.0, left)
    run = run_solver(model, solver=solver, time_limit=remaining, mip_gap=mip_gap)
    stats["solve_s"] = run.runtime_s
    if known is None:
        solution = solution_json(inst, response.placement(model, model_inst)) if run.has_solution else None
        return ExactOutcome(run, solution, stats)
    if run.status == "infeasible":
        # cannot happen in exact arithmetic (the known placement satisfies every added row);
        # rather than trust a numerical verdict, solve the unpruned model
        return _solve_response(inst, solver, time_limit, mip_gap, dataclasses.replace(settings, local_search=False))
    placement, objective = known
    if run.has_solution and run.objective >= objective:
        placement, objective = response.placement(model, model_inst), run.objective
    # the model keeps every placement at least as good as the known one, which it contains:
    # its bound is a bound of the whole problem, and never below the known objective
    bound = None if run.bound is None else max(run.bound, objective)
    status = run.status if run.status in ("optimal", "time_limit") else "feasible"
    run = SolverRun(
        solver=run.solver,
        status=status,
        objective=objective,
        bound=bound,
        gap=relative_gap(objective, bound, "max"),
        runtime_s=run.runtime_s,
        message=run.message,
    )
    return ExactOutcome(run, solution_json(inst, placement), stats)


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
