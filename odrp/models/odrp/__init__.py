"""Exact ODRP: two formulations with the same optimum, solved with HiGHS or CBC.

``compact`` (default, :mod:`.compact`) is our replica-level formulation; ``paper`` (:mod:`.paper`)
is the paper's ILP as written (eqs. 22-32). Both return the placement as solution JSON, and both
take a warm start (a feasible solution JSON) through their ``set_start`` (see :mod:`odrp.models`).
"""

from __future__ import annotations

import time
from typing import Any

from odrp.models import ExactOutcome, checked_start, model_size, warm_start_stats
from odrp.models.odrp import compact, paper
from odrp.problems.odrp import OdrpInstance, evaluate, parse_solution, solution_json
from odrp.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.solvers import solve as run_solver

FORMULATIONS = ("compact", "paper")
DEFAULT_FORMULATION = "compact"


def solve(
    inst: OdrpInstance,
    solver: str = DEFAULT_SOLVER,
    formulation: str = DEFAULT_FORMULATION,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Solve an ODRP instance exactly with the given formulation and solver.

    ``warm_start``: a feasible solution JSON handed to the solver as a MIP start.
    """
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
    module = compact if formulation == "compact" else paper
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    start = time.perf_counter()
    model = module.build(inst)
    if warm_start is not None:
        module.set_start(model, inst, parse_solution(inst, warm_start, "warm start"))
    build_s = time.perf_counter() - start
    run = run_solver(model, solver=solver, time_limit=time_limit, mip_gap=mip_gap, warm_start=warm_start is not None)
    solution = solution_json(inst, module.placement(model, inst)) if run.has_solution else None
    stats = {"formulation": formulation, "build_s": build_s, "solve_s": run.runtime_s, **model_size(model)}
    if start_objective is not None:
        stats["warm_start"] = warm_start_stats(start_objective, run)
    return ExactOutcome(run, solution, stats)
