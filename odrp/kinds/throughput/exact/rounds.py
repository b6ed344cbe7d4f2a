"""One P(rho): build the fixed-rate model at one rate and solve it (a *round* of the rate search).

:func:`solve_round` decides P(rho) once, in pattern form (:mod:`.patterns`) or in level form
(:mod:`.rate_model`), with CP-SAT, HiGHS (highspy directly, in a child process when the model is large
and the time limited: :mod:`.solver_child`) or CBC (through Pyomo, the same). In level form the instance counts
worth trying are bounded first (:func:`levels`: the closed-form ranges, the fluid LP at R = rho, and
caps on x_cw from the fluid LP); a level outside them cannot sustain rho. A round that could not be
built before its deadline (at the pace of the last round's building, per item) is not started.

:func:`box_solver` is the level search's leaf: P(rho) with N_c in a box of levels, or on a subset of
the components (the big ones, :mod:`.big`), as a yes-or-no question (no slack objective).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers.cpsat import run_cpsat
from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import bounds, patterns, rate_model, solver_child
from odrp.kinds.throughput.exact.bounds import FluidModels
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.exact.rate_model import BoxSolver, Ranges
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance


@dataclass
class RoundResult:
    """What one P(rho) decided: ``feasible`` (``counts``: the placement), ``infeasible``, or the solver's status."""

    status: str
    counts: Counts | None
    message: str = ""


def levels(
    inst: ThroughputInstance,
    rho: float,
    settings: ThroughputSettings,
    fluid: FluidModels,
    fixed: dict[int, int] | None,
    fluid_levels: bool,
    within: Ranges | None = None,
) -> tuple[list[list[int]], list[list[int]] | None] | None:
    """The instance counts worth trying at rho, and caps on the instances of c on w (None: no caps); None: no
    count vector sustains rho.

    ``fixed``: N_c = fixed[c]; ``within``: N_c in the range within[c] (a box of the level search);
    ``fluid_levels``: narrow the ranges by the fluid LP at R = rho (kept in ``fluid``), and cap x_cw by it up
    to ``settings.pair_bounds_up_to`` components x machines. A box gets no caps: one LP per pair costs a box
    more than it saves CP-SAT."""
    ranges = [bounds.count_range(inst, c, rho) for c in range(inst.n_components)]
    if fixed is not None:
        ranges = [(fixed[c], fixed[c]) if lo <= fixed[c] <= hi else (1, 0) for c, (lo, hi) in enumerate(ranges)]
    if within is not None:
        ranges = [(max(lo, a), min(hi, b)) for (lo, hi), (a, b) in zip(ranges, within, strict=True)]
    caps = None
    if fluid_levels and all(lo <= hi for lo, hi in ranges):
        if any(lo < hi for lo, hi in ranges):
            ranges = bounds.fluid_count_ranges(inst, rho, ranges, fluid)
        if within is None and inst.n_components * inst.n_machines <= settings.pair_bounds_up_to:
            caps = bounds.fluid_pair_bounds(inst, rho)
            if caps is None:
                return None
    if any(lo > hi for lo, hi in ranges):
        return None
    return [list(range(lo, hi + 1)) for lo, hi in ranges], caps


def solve_round(
    inst: ThroughputInstance,
    rho: float,
    solver: str,
    deadline: float | None,
    settings: ThroughputSettings,
    fluid: FluidModels,
    stats: dict[str, Any],
    *,
    fluid_levels: bool,
    fixed: dict[int, int] | None = None,
    hint: Counts | None = None,
    pool: list | None = None,
    within: Ranges | None = None,
    work: float | None = None,
    kept: list[int] | None = None,
) -> RoundResult:
    """Solve P(rho) once; the placement it finds, or its status. The round is recorded in ``stats["rounds"]``.

    ``pool``: the pattern form's candidates (None: the level form); ``fixed``: N_c = fixed[c]; ``hint``: a
    placement CP-SAT starts from; ``within``: level form, N_c in within[c], a yes-or-no model (a box of the
    level search); ``work``: at most this many of CP-SAT's deterministic seconds; ``kept``: P(rho) on these
    components alone, a relaxation (:func:`.rate_model.rate_model`): what it finds places those components only.
    """
    begin = time.perf_counter()
    record: dict[str, Any] = {"rho": rho}
    if kept is not None:
        record["kept"] = list(kept)
    stats["rounds"].append(record)
    if pool is not None:
        return _pattern_round(inst, rho, solver, deadline, settings, fixed, hint, pool, record, begin)
    pruned = levels(inst, rho, settings, fluid, fixed, fluid_levels, within)
    if pruned is None:
        record.update(status="infeasible", why="no instance count sustains rho", seconds=time.perf_counter() - begin)
        return RoundResult("infeasible", None)
    rm = rate_model.rate_model(inst, rho, *pruned, kept=kept)
    record["levels"] = rm.n_levels
    if deadline is not None and _build_estimate(stats, len(rm.items), settings) > deadline - time.perf_counter():
        record.update(status="time_limit", why="too little time left to build P(rho)")
        return RoundResult("time_limit", None, "time limit reached (too little time left to build P(rho))")
    if solver == "cpsat":
        from ortools.sat.python import cp_model  # noqa: F401  # imported before the clock starts: the pace is the model's
    built = time.perf_counter()
    if solver == "cpsat":
        form = rate_model.build_cpsat(inst, rm, settings.symmetry, hint, slack=within is None)  # a box: yes or no
        record.update(items=len(rm.items), model_s=time.perf_counter() - built)
        budget = None if work is None else {"max_deterministic_time": work}
        run, cp = run_cpsat(
            form.model,
            "max",
            _left(deadline),
            settings.subproblem_gap,
            settings.workers,
            settings.subproblem_solutions,
            budget,
        )
        found = run.objective is not None or run.status in ("optimal", "feasible")
        counts = rate_model.decode_cpsat(form, cp, inst.n_components) if found else None
    else:
        matrix = rate_model.build_matrix(inst, rm, settings.symmetry)
        record.update(matrix.model.size())
        record.update(items=len(rm.items), model_s=time.perf_counter() - built)
        run, values = solve_matrix(matrix.model, solver, _left(deadline), settings)
        counts = rate_model.decode_matrix(matrix, values, inst.n_components) if values is not None else None
    record.update(status=run.status, seconds=time.perf_counter() - begin)
    if rm.subset:  # a relaxation: what it places is the kept components only
        return RoundResult("feasible" if counts is not None else run.status, counts, run.message)
    if counts is not None:
        record["rate"] = rate(inst, counts)
        return RoundResult("feasible", counts)
    return RoundResult(run.status, None, run.message)


def _pattern_round(
    inst: ThroughputInstance,
    rho: float,
    solver: str,
    deadline: float | None,
    settings: ThroughputSettings,
    fixed: dict[int, int] | None,
    hint: Counts | None,
    pool: list,
    record: dict[str, Any],
    begin: float,
) -> RoundResult:
    """P(rho) in pattern form (:mod:`.patterns`)."""
    ranges = [bounds.count_range(inst, c, rho) for c in range(inst.n_components)]
    if fixed is not None:
        ranges = [(max(lo, fixed[c]), min(hi, fixed[c])) for c, (lo, hi) in enumerate(ranges)]
    pm = patterns.pattern_model(inst, rho, ranges, pool)
    record["patterns"] = pm.n_patterns
    if any(len(x) == 0 for x in pm.counts):
        record.update(status="infeasible", why="a component has no pattern at rho", seconds=time.perf_counter() - begin)
        return RoundResult("infeasible", None)
    if solver == "cpsat":
        form = patterns.build_cpsat(inst, pm, settings.symmetry, hint)
        run, cp = run_cpsat(
            form.model, "max", _left(deadline), settings.subproblem_gap, settings.workers, settings.subproblem_solutions
        )
        counts = patterns.decode_cpsat(form, pm, cp) if run.objective is not None else None
    else:
        matrix = patterns.build_matrix(inst, pm, settings.symmetry)
        record.update(matrix.model.size())
        run, values = solve_matrix(matrix.model, solver, _left(deadline), settings)
        counts = patterns.decode_matrix(matrix, pm, values) if values is not None else None
    record.update(status=run.status, seconds=time.perf_counter() - begin)
    if counts is not None:
        record["rate"] = rate(inst, counts)
        return RoundResult("feasible", counts)
    return RoundResult(run.status, None, run.message)


def box_solver(
    inst: ThroughputInstance,
    solver: str,
    settings: ThroughputSettings = ThroughputSettings(),
    fluid: FluidModels | None = None,
    scratch: dict[str, Any] | None = None,
) -> BoxSolver:
    """The level search's leaf: P(rho) with N_c in box[c] (:func:`solve_round` with ``within``), its rounds
    recorded in ``scratch["rounds"]``; ``fluid``: the solve's fluid models (None: the box solver's own)."""
    boxes: dict[str, Any] = {"rounds": []} if scratch is None else scratch
    fluid = FluidModels(settings.configuration.fluid_kept) if fluid is None else fluid

    def solve_box(
        rho: float, box: Ranges, limit: float | None, kept: list[int] | None = None
    ) -> tuple[str, Counts | None]:
        # P(rho) on a subset gets the node's levels as they are (no fluid LP): its answer then depends on the kept
        # components' levels and the others' least counts only, which is how the level search remembers it
        result = solve_round(
            inst, rho, solver, limit, settings, fluid, boxes, fluid_levels=kept is None, within=box, kept=kept
        )
        return result.status, result.counts

    return solve_box


PACE_ITEMS = 1000
"""Only a model of at least this many items sets the building pace: a small model's time is mostly fixed costs
(a worker's first CP-SAT model of 20 items once took 0.7 s, its module import included; at that pace a 10 x 10
leaf of 300 items was not started with 8 s left, and the level search stopped unproven)."""


def _build_estimate(stats: dict[str, Any], items: int, settings: ThroughputSettings) -> float:
    """Seconds building a P(rho) of ``items`` items will take: at the pace of the last round of at least
    :data:`PACE_ITEMS` items, else ``settings.item_seconds`` per item."""
    for record in reversed(stats["rounds"]):
        if record.get("items", 0) >= PACE_ITEMS:
            return items * record["model_s"] / record["items"]
    return items * settings.item_seconds


def _left(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (None: no limit), taken after the model is built (a 20 x 30 model
    takes seconds to build) and just before the solver starts."""
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


def solve_matrix(
    model: MatrixModel, solver: str, left: float | None, settings: ThroughputSettings
) -> tuple[SolverRun, list[float] | None]:
    """One P(rho) in matrix form with HiGHS (highspy, tight feasibility tolerances) or CBC (Pyomo): the run and
    the column values of its solution, if any. A time-limited model is solved in a child process stopped at the
    deadline (:mod:`.solver_child`) when it has more than ``settings.child_nonzeros`` nonzeros, or more than
    ``settings.child_below_nonzeros`` with less than ``settings.child_below`` seconds left. CBC, which takes at
    least a second once started, is not started with less than ``settings.cbc_least`` seconds left."""
    gap, solutions = settings.subproblem_gap, settings.subproblem_solutions
    if solver == "cbc" and left is not None and left < settings.cbc_least:
        message = "time limit reached (too little time left to start CBC)"
        return SolverRun(solver_version("cbc"), "time_limit", None, None, None, 0.0, message), None
    nonzeros = model.size()["nonzeros"]
    near = left is not None and left < settings.child_below and nonzeros > settings.child_below_nonzeros
    if left is not None and (near or nonzeros > settings.child_nonzeros):
        return solver_child.solve(model, left, gap, solutions, settings.child_grace, solver)
    return solver_child.solve_here(model, solver, left, gap, solutions)
