"""Exact max-throughput placement: a rate search over fixed-rate integer programs.

The problem (see :mod:`odrp.kinds.throughput.instance`): choose N_c and the machine of every instance to
maximise R subject to, on every machine w,

    R sum_c e_cw l_c x_cw / N_c + sum_c MET_cw x_cw <= cap_w     (eq. 5 summed over w's tasks),

so R multiplies a ratio of integers and no single linear model states it. We search on R instead.

**Fixed-rate model.** For a fixed rate rho the same constraint is linear once N_c is chosen among
levels (binaries v_cn, counts y_cwn: :mod:`.rate_model`): P(rho) is feasible exactly when some
placement x sustains rho, i.e. R(x) >= rho. There is no product and no big-M; feasibility is monotone
in rho (a placement that sustains rho sustains every smaller rate).

**Search (a Dinkelbach-type iteration with an exact stopping proof).**

1. Upper bound: R_up = the fluid LP's optimum (:mod:`.bounds`), which every placement respects,
   lowered after the warm start by bisection on the pattern LP's Lagrangian bound
   (:mod:`.pattern_bound`: a rate it refutes is out of reach).
2. Incumbent: the better of ``hetero_greedy``'s placement (the paper's heuristic) and the fluid
   LP's optimum rounded to a placement (:func:`.polish.round_fluid`), each improved by block ascent
   (:func:`.polish.reinsert`: each component in turn re-placed with its best count and spread), then,
   above ``CONFIG_UP_TO`` components x machines, the packing search above it (:mod:`.packing`:
   best-fit decreasing inside a bisection on the rate; at 10 x 10 it raised seed 1's start from 104.886
   to 106.719, which moved the bisection's targets next to R* where P(rho) stays undecided: seed 1
   took 56.7 s instead of 11.2 s on the quiet machine, so smaller instances keep the old start and
   get the packing search only before their first level search, step 3),
   as the warm start, or, without one, a solution of P(0) (P(0) infeasible: no placement fits the
   overheads, the instance is infeasible). Above ``CONFIG_UP_TO`` components x machines the
   configuration LP's bisection replaces the pattern LP and runs here, before any P(rho), then steps its
   bound down on a finer pricing grid (``FINE_GRID``: :func:`.config_bound.refine`); under a time
   limit the time left then goes to the improvement searches (:mod:`.count_descent`: descents on the
   instance counts scored by the configuration LP at fixed counts, placements by diving on it, in one
   random move order after another) instead of P(rho) rounds, which decide nothing at that size within a
   minute; with worker processes, a ladder of level searches lowers the bound meanwhile (:mod:`.ladder`).
3. Repeat: rho = R_inc (1 + g/2), g the relative gap asked for (``mip_gap``, 1e-6 by default).
   Solve P(rho) maximising its smallest relative machine slack.
   - infeasible: no placement reaches rho, so R* < rho and R_inc is optimal within g/2 (R_up = rho);
   - a solution x: R(x) >= rho > R_inc (its exact rate is computed from the placement), the new
     incumbent; the slack objective makes it a placement well above rho, so that few rounds are
     needed (two or three at paper size).
   While the bound is far (more than ``WIDE``), rho bisects between incumbent and bound; the first
   time such a round ends undecided, the bound is lowered by bisection on the configuration LP
   (:mod:`.config_bound`: whole instances per machine; level form, up to ``CONFIG_UP_TO``), the incumbent
   is improved by the packing search and the count descent (``DESCENT_BOX``, stop 23), and
   from then on every round is a *level search* (:mod:`.level_search`: branch and bound over the
   instance counts with the configuration LP at every node, the big components' counts split first and
   checked by P(rho) on them alone): it proves the target rate out of reach
   (the new bound) or raises the incumbent on the way and goes on at the target above it (all the
   time left). Its targets bisect between incumbent and bound while they are more than
   ``LEVEL_WIDE`` apart, then lie just above the incumbent; the tree is rebuilt only when the target
   falls after a proof.
   The incumbent rate strictly increases over a finite set of placements, so the search ends, and it
   ends only with an infeasibility proof: the answer is the optimum, not the best of a sweep.
4. On a time limit: the incumbent, the best proven bound (R_up, or the lowest rho proven
   infeasible) and their gap.

Two forms of P(rho), same feasible placements: the *pattern* form (:mod:`.patterns`: one binary per
Pareto-minimal placement pattern of a component; used when every component has at most
``patterns.PATTERN_LIMIT`` candidate patterns, i.e. few machines, as at the paper's size) and the
*level* form (:mod:`.rate_model`: binaries for N_c, integer counts per level; any size). For the
level form the instance counts worth trying are bounded before each P(rho)
(:func:`.bounds.count_range`, and the fluid LP at R = rho): a level outside them cannot sustain
rho. Identical machines (same type, capacity and task limit) are ordered by load in both forms,
which removes their permutations.

Solvers: ``highs`` (highspy directly: the models are rebuilt for every rho and Pyomo's translation
would cost more than the solve), ``cbc`` (the same matrix through Pyomo, a second opinion), and
``cpsat`` (OR-Tools CP-SAT with coefficients rounded down, so that "infeasible" stays a proof).
The reported objective is the exact rate of the incumbent placement (the evaluator's formula).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from odrp.core.exact import ExactOutcome, checked_start
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, SolverRun, solver_version
from odrp.core.solvers import solve as solve_pyomo
from odrp.core.solvers.cpsat import run_cpsat
from odrp.core.solvers.cpsat import version as cpsat_version
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.throughput.evaluator import evaluate, rate
from odrp.kinds.throughput.exact import (
    bounds,
    config_bound,
    count_descent,
    highs_child,
    ladder,
    level_search,
    packing,
    parallel,
    pattern_bound,
    patterns,
    polish,
    rate_model,
)
from odrp.kinds.throughput.exact.matrix import pyomo_values
from odrp.kinds.throughput.instance import Counts, ThroughputInstance, parse_solution, solution_json

SOLVERS = ("highs", "cbc", "cpsat")
FORMULATIONS = ("auto", "patterns", "levels")
SOLVER = "cpsat"
"""The default solver (measured fastest at paper size; ``benchmarks/throughput.py --part paper``)."""
MIN_GAP = 1e-9
SUBPROBLEM_GAP = 0.05
"""Relative gap at which a feasible P(rho) stops improving its slack (a better rho follows anyway)."""
SLACK_OBJECTIVE = False
"""HiGHS and CBC solve P(rho) as a feasibility problem (measured faster than maximising the slack)."""
SUBPROBLEM_SOLUTIONS = 1
"""A feasible P(rho) stops after this many improving solutions: the next round starts higher anyway."""
BOUND_BOX = 0.1
"""Share of the time limit the pattern LP bound may take (its bisection stops there)."""
CONFIG_BOX = 0.15
"""Share of the time left the configuration LP bound may take (its bisection stops there). It is computed
only when a bisection round of P(rho) ends undecided: where P(rho) decides quickly (10 x 10 seed 1,
proven in 9 CPU s) the LP's time would only delay the proof (measured: not proven in 60 s when the LP
ran first)."""
LARGE_CONFIG_BOX = 0.7
"""Above ``CONFIG_UP_TO`` components x machines the configuration LP's bisection runs first, with this share
of the time left (instead of the pattern LP, which did not finish one LP in its share at 20 x 30); P(rho)
gets the rest (at 20 x 30 it decided no round in 60 s, undecided rounds at 1,300-2,900 levels)."""
LARGE_CONFIG_FIRST = 0.75
"""The first rate that bisection tries, as a fraction of the way from the incumbent to the bound (measured at
20 x 30 seeds 0-2: the configuration bound 2.3-2.9% below the fluid bound, 5-7% above the incumbent)."""
FINE_GRID = 20_000
"""Pricing grid of the configuration bound's refinement above ``CONFIG_UP_TO`` (the bisection runs on
``config_bound.GRID``, 2,000 units: up to about 0.5% of a machine's capacity lost to rounding at 10 tasks).
Measured (``python -m benchmarks.config_grid --part threshold``, 20 x 30 seeds 0-2): the lowest rate refuted
falls by 0.04-0.09% (seed 2: 151.584 -> 151.520, within 1% of its incumbent 150.045); one LP from scratch
costs 2-4 times the coarse one, so the bisection stays coarse and only its last steps are fine."""
FINE_BOX = 0.3
"""Share of the time left after the coarse bisection that the fine grid's refinement may take (measured at
20 x 30 with 60 CPU s: it took 2.1-5.9 s, 3-10% of that time, and the improvement search after it reached the
same incumbents as without it)."""
FINE_STEP = 1e-3
"""First step (relative) of the refinement below the coarse bound."""
FINE_PRECISION = 1e-4
"""The refinement stops when its step is below this (relative)."""
DESCENT_BOX = 0.15
"""Up to ``CONFIG_UP_TO`` components x machines, before the first level search, the count descent
(:func:`_improved`) runs for at most this share of the time left, ``DESCENT_STARTS`` descents, and
``DESCENT_PATIENCE`` seconds after its last better placement (stop 23). The level search finds placements too,
but later: 10 x 10 seed 5 (R* = 174.102) came to its first level search at 170.207, and the search, its big
components split first, met the optimum only after 2 to 4 rungs above R* (25-45 s of the minute); the descent
reaches 174.102 in 0.7 CPU s, and seed 2's 195.283 from 190.419 in 3.1 s."""
DESCENT_STARTS = 30
DESCENT_PATIENCE = 2.0
IMPROVE_SEED = 0
"""Seed of the first move order of the count descent (:mod:`.count_descent`) that takes the time left above
``CONFIG_UP_TO`` under a time limit, instead of P(rho) rounds that decided nothing there (20 x 30: 1,300-2,900
levels)."""
CONFIG_PRECISION = 2e-3
"""The configuration bound's bisection stops when its interval is this narrow (relative): P(rho) takes over."""
CONFIG_UP_TO = 400
"""Use the configuration bound (by default) up to this many components x machines. At 20 x 30 one LP
took 15-25 s of column generation under load and its bound stayed within 0.5% of the pattern bound
(seed 1: above 150.8 against 151.5)."""
ROUNDING_SCALES = (1.0, 1.5, 2.0, 3.0)
"""Scales of the fluid LP's instance counts rounded to warm starts (measured: 3 often best at 10-30 machines)."""
PAIR_BOUNDS_UP_TO = 400
"""Bound every x_cw by the fluid LP (one LP per pair) when components x machines is at most this."""
WIDE = 0.01
LEVEL_WIDE = 0.005
"""A level search's target bisects between incumbent and bound while they are more than this apart
(relative; P(rho) rounds use ``WIDE``). 0.005 since stop 23: with the count descent finding the optimum early, the
rungs between 0.2% and 0.5% above it only cost time; ``benchmarks.throughput_10x10 --seeds 0 1 2 3 4 5 6 7 8 9``
(quiet machine, 2 processes) proved all ten seeds (29.6 / 16.3 / 16.6 / 23.8 / 19.0 / 53.9 / 18.2 / 20.0 / 20.0 /
20.3 s; seed 5 also 48.5 s), where 0.002 left seed 5 at 0.35% in three runs (a 6.0 s rung at 174.718 before its
proof). 0.02 (no rungs within 2%) proved seed 5 in 51.3 s but lost seed 2, whose descent stopped at 193.457 that
run: the search just above it ended at 3.74%. Earlier measurements (0.002 against 0.01; 10 x 10, 60 s of CPU clock,
``benchmarks.throughput_10x10 --cpu-clock``): seed 0 found R* = 217.479 and proved 218.274 (0.37%), seed 2 found
195.283 and proved 196.633 (0.69%), where targets just above the incumbent once the bound was within 1% (``WIDE``,
the rule before) reached 215.040 / 220.656 (2.61%) and 195.089 / 200.684 (2.87%). Time-boxing the bisecting searches
(30% of the time left without a new incumbent, then a nearer target) lost seed 2's proof (2.77%): a restarted tree
throws its work away. (An earlier measurement, 240 s at load 6 with nodes half as fast,
had found nothing at 0.2%.)"""
BISECT = 0.5
"""While the bound is more than WIDE above the incumbent, rho = incumbent + BISECT (bound - incumbent)."""
BOX = 0.25
MIN_BOX = 1.0
"""Under a time limit a bisection round gets BOX of the time left (at least MIN_BOX s); an undecided
one halves the step. The final round, just above the incumbent, gets all the time left."""
FIRST_BOX = 8.0
"""While the configuration bound is still to come (level form, up to ``CONFIG_UP_TO``), a bisection round
gets at most this many seconds: an undecided round only leads to the configuration bound and the level
search, which then get the time. Measured (10 x 10, CPU s, no time limit): seed 1's bisection rounds
decide in 2.4 and 0.4 s, its last round (no box) in 5.1 s; seeds 0 and 2 spent BOX of the time left
(15 s of 60) on an undecided first round. At 5 s, seed 1's first round was cut at load 6 (the cap is
wall time) and seed 1 went through the level search, unproven in 60 s: 8 s leaves a margin."""
FIRST_WORK = 2.0
"""Such a round also stops after this many of CP-SAT's deterministic seconds (level form; stop 22): a budget that
does not depend on the machine's load, where ``FIRST_BOX`` is wall clock. Measured (10 x 10, the exact method with
2 processes): seed 1's first round decides with 0.90 deterministic seconds in 1.6 s; the undecided first rounds of
seeds 0 and 5 ran 6.6-6.7 s (4.1-4.3 deterministic seconds) before their level searches."""
QUICK_BOX: dict[str, object] = {}
"""A level search's box (:func:`_box_solver`) is first solved with these CP-SAT parameters, and only if that is
undecided with CP-SAT's defaults (empty: the defaults at once). Stop 22 set it to no probing
(``cp_model_probing_level`` 0) for at most 0.1 deterministic seconds; stop 23 emptied it when that answered
INFEASIBLE on a feasible P(575.80) on 10 x 10 seed 8's big components high6, mid2, mid3, low9 at counts 4, 2, 2, 1
(the counts of a placement at 575.876), and the exact method "proved" 575.743 optimal. The cause was CP-SAT 9.15's
presolve (inclusion detection), which later called another subset model infeasible with the defaults too: it is
off for every run (``odrp.core.solvers.cpsat.CPSAT_PARAMETERS``),
and that fixes both cases (``tests/test_throughput_big.py``).
What stop 22 measured for the first stage, on the leaves of the first 1,500 nodes of the proof at R* (1 + 5e-7),
one process, CPU s of CP-SAT alone: 10 x 10 seed 5, 204 vectors, 6.87 s with the defaults, 4.36 s without probing
(99% under 0.05 deterministic seconds); seed 0, 55 vectors, 2.56 / 2.01 s; seed 2 with whole nodes, 354 boxes,
54.3 / 29.3 s."""
FEASIBILITY = 1e-9
"""HiGHS's feasibility tolerances for P(rho) (rows are scaled to capacity 1): far below the gap, so that
a solution HiGHS accepts at rho sustains rho to within 1e-9 of a machine's capacity."""
ITEM_SECONDS = 1e-4
"""Seconds to build P(rho) per item y_cwn before any round has measured it (CP-SAT's Python model building,
about 5,000 items/s at load 7): a round that cannot be built before the deadline is not started (20 x 30
CP-SAT runs overshot 60 s by 12-14 s building P(rho) after the solver's share of time was gone)."""
CHILD_NONZEROS = 100_000
"""A time-limited HiGHS P(rho) with more nonzeros runs in a child process stopped at the deadline."""
LADDER = True
"""Above ``CONFIG_UP_TO`` under a time limit, with worker processes (``processes`` > 1): after the coarse
configuration bound, the time left goes to a ladder of level searches (:mod:`.ladder`) whose nodes the
workers evaluate, the last worker running the count descent first (instead of the fine grid's refinement
and the count descent in this process)."""


def solve(
    inst: ThroughputInstance,
    solver: str = SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    fixed_instances: dict[int, int] | None = None,
    search_start: bool = True,
    symmetry: bool = True,
    fluid_levels: bool = True,
    workers: int = 1,
    formulation: str = "auto",
    pattern_lp: bool = True,
    config_lp: bool | None = None,
    warm_start: dict[str, Any] | None = None,
    branching: bool = True,
    processes: int = parallel.PROCESSES,
) -> ExactOutcome:
    """Maximise R exactly (to ``mip_gap`` relative); ``fixed_instances`` fixes N_c (mkp_view).

    ``formulation`` of P(rho): ``patterns`` (:mod:`.patterns`), ``levels`` (:mod:`.rate_model`) or ``auto``
    (patterns when every component has at most ``patterns.PATTERN_LIMIT`` candidates). ``pattern_lp``:
    tighten the fluid bound first with :mod:`.pattern_bound`; ``config_lp``: with :mod:`.config_bound` once
    the first bisection round is undecided (None: with the level form up to ``CONFIG_UP_TO`` components x
    machines); ``branching``: after the configuration LP, the rounds are level searches
    (:mod:`.level_search`). ``search_start``: start from the best of
    hetero_greedy and the rounded fluid LP (:func:`_warm_start`); ``warm_start``: a feasible solution
    JSON, the incumbent when it beats that start (the search only ever needs a placement's exact rate).
    ``processes``: worker processes of the level searches (:mod:`.parallel`; 1: in this process). They
    start when the first level search becomes likely and are killed when ``solve`` returns or raises.
    """
    if processes < 1:
        raise ValueError(f"processes must be at least 1, got {processes}")
    nodes = parallel.Workers(inst, processes, (solver, symmetry, workers)) if processes > 1 else None
    with nodes or contextlib.nullcontext():
        return _solve(
            inst,
            solver=solver,
            time_limit=time_limit,
            mip_gap=mip_gap,
            fixed_instances=fixed_instances,
            search_start=search_start,
            symmetry=symmetry,
            fluid_levels=fluid_levels,
            workers=workers,
            formulation=formulation,
            pattern_lp=pattern_lp,
            config_lp=config_lp,
            warm_start=warm_start,
            branching=branching,
            nodes=nodes,
        )


def _solve(
    inst: ThroughputInstance,
    solver: str = SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    fixed_instances: dict[int, int] | None = None,
    search_start: bool = True,
    symmetry: bool = True,
    fluid_levels: bool = True,
    workers: int = 1,
    formulation: str = "auto",
    pattern_lp: bool = True,
    config_lp: bool | None = None,
    warm_start: dict[str, Any] | None = None,
    branching: bool = True,
    nodes: parallel.Workers | None = None,
) -> ExactOutcome:
    """:func:`solve`, the nodes of its level searches on the worker processes ``nodes`` (None: in this process)."""
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
    start = time.perf_counter()
    deadline = None if time_limit is None else start + float(time_limit)
    gap = max(float(mip_gap), MIN_GAP)
    use_patterns = formulation == "patterns" or (formulation == "auto" and patterns.applies(inst))
    pool = [patterns.candidates(inst, c) for c in range(inst.n_components)] if use_patterns else None
    stats: dict[str, Any] = {"rounds": [], "solver": solver, "form": "patterns" if use_patterns else "levels"}

    upper = bounds.fluid_bound(inst)
    if upper is None:
        return _outcome(solver, "infeasible", None, None, None, start, stats, "the fluid relaxation is infeasible")
    stats["fluid_bound"] = upper

    large = not use_patterns and inst.n_components * inst.n_machines > CONFIG_UP_TO
    climbing = LADDER and large and branching and nodes is not None and deadline is not None and not fixed_instances
    if climbing:
        nodes.start()  # type: ignore[union-attr]  # the ladder's workers import while the configuration bound runs
    incumbent: Counts | None = None
    if search_start and fixed_instances is None:
        incumbent, stats["hetero_greedy"], stats["fluid_rounding"] = _warm_start(inst)
        if incumbent is not None and large:
            incumbent, stats["packing"] = _packing_start(inst, incumbent, upper)
    best = rate(inst, incumbent) if incumbent is not None else None
    stats["start_rate"] = best
    if warm_start is not None:
        given_rate = checked_start(evaluate, inst, warm_start)
        used = fixed_instances is None and (best is None or given_rate > best)
        if used:
            incumbent, best = parse_solution(inst, warm_start, "warm start"), given_rate
        stats["warm_start"] = {
            "objective": given_rate,
            "accepted": used,
            "solver_objective": None,
            "solver_log": [
                "the incumbent of the rate search" if used else "not used: the search's own start was better"
            ],
        }
    if incumbent is None:
        feasible = _round(inst, 0.0, solver, deadline, fixed_instances, symmetry, False, workers, None, stats, pool)
        if feasible.status == "infeasible":
            return _outcome(solver, "infeasible", None, None, None, start, stats, "no placement fits the overheads")
        if feasible.counts is None:
            return _outcome(solver, feasible.status, None, None, upper, start, stats, feasible.message)
        incumbent, best = feasible.counts, rate(inst, feasible.counts)
    assert best is not None
    if pattern_lp and best > 0 and not large:
        box = None if deadline is None else time.perf_counter() + BOUND_BOX * (deadline - time.perf_counter())
        upper = min(upper, pattern_bound.upper_bound(inst, best, upper, box))
    stats["pattern_bound"] = upper
    if large and config_lp is None and best > 0:  # large: the configuration LP first, P(rho) rarely decides
        config_lp = False
        now = time.perf_counter()
        box = None if deadline is None else now + LARGE_CONFIG_BOX * (deadline - now)
        lowered = config_bound.bisect(inst, best, upper, box, precision=CONFIG_PRECISION, first=LARGE_CONFIG_FIRST)
        upper = min(upper, lowered[0])
        stats["config_coarse"], stats["config_coarse_s"] = upper, time.perf_counter() - now
        if climbing:  # the time left: the ladder of level searches and the count descent on the workers
            stats["config_bound"] = upper
            climbed = ladder.climb(inst, best, incumbent, upper, lowered[1], deadline, nodes, gap)  # type: ignore[arg-type]
            stats["ladder"] = climbed.as_dict()
            stats["count_descent"] = climbed.descent or {}
            if climbed.best > best:
                incumbent, best = climbed.counts, rate(inst, climbed.counts)
            upper = min(upper, climbed.bound)
        else:
            upper = _fine_config_bound(inst, best, upper, lowered[1], deadline, stats)
            if deadline is not None:  # P(rho) decides no round at this size: the time left improves the incumbent
                incumbent, best = _improved(inst, incumbent, deadline, stats)
    if config_lp is None:
        config_lp = not use_patterns and inst.n_components * inst.n_machines <= CONFIG_UP_TO
    stats.setdefault("config_bound", upper)  # the configuration LP's (the ladder's bound is under "ladder")

    status = "optimal"
    message = ""
    spurious = 0
    reach = BISECT
    branching_now = False
    columns: level_search.HasColumns | None = None  # the last configuration LP: its columns start the next
    while True:
        if best > 0 and relative_gap(best, upper, "max") <= gap:  # type: ignore[operator]
            break
        now = time.perf_counter()
        if deadline is not None and now >= deadline:
            status, message = "time_limit", "time limit reached"
            break
        if branching_now:  # a level search: proves its target out of reach, raising the incumbent on the way
            searched = _level_round(
                inst, best, incumbent, upper, reach, gap, solver, deadline, symmetry, workers, stats, columns, nodes
            )
            columns = searched.last
            if searched.best > best:
                incumbent, best, reach = searched.counts, searched.best, BISECT
            if searched.proven:
                upper, reach = min(upper, searched.rho), BISECT
                continue
            if deadline is not None and time.perf_counter() >= deadline:
                status, message = "time_limit", "time limit reached"
            else:  # a leaf ended without a decision and without a deadline (a solver error or tolerance)
                status, message = "feasible", "level search: a leaf P(rho) was not decided"
            break
        bisecting = _bisecting(best, upper, reach)
        if bisecting:  # far from the bound: bisect (rates well above R* are refuted fast)
            target = best + reach * (upper - best)
            box = BOX * (deadline - now) if deadline is not None else None
            work = None
            if box is not None and config_lp:  # the level search follows an undecided round: keep it short
                box, work = min(box, FIRST_BOX), FIRST_WORK
        else:
            # rho a little above the incumbent, within the gap; after a "solution" the solver accepted
            # within its tolerance but whose exact rate is not above the incumbent, step a bit higher
            target = max(best * (1 + gap * (spurious + 1) / (spurious + 2)), upper * MIN_GAP)
            box = work = None
        limit = deadline if box is None else min(now + max(box, MIN_BOX), deadline)  # type: ignore[operator]
        result = _round(
            inst, target, solver, limit, fixed_instances, symmetry, fluid_levels, workers, incumbent, stats, pool,
            work=work,
        )  # fmt: skip
        if result.status == "infeasible":
            upper, reach = min(upper, target), BISECT
            if best == 0:
                break
            continue
        if result.counts is None:
            if bisecting and result.status == "time_limit":  # undecided: try a rate nearer the incumbent
                if config_lp and best > 0:  # first, once: the configuration LP may refute rates here
                    config_lp = False
                    if nodes is not None and branching and fixed_instances is None:
                        nodes.start()  # the level searches follow: the workers import meanwhile
                    now = time.perf_counter()
                    box = None if deadline is None else now + CONFIG_BOX * (deadline - now)
                    lowered, columns = config_bound.bisect(inst, best, upper, box, precision=CONFIG_PRECISION)
                    upper = stats["config_bound"] = min(upper, lowered)
                    branching_now = branching and fixed_instances is None
                    if branching_now and search_start:  # the level search's targets start from the best known
                        incumbent, stats["packing"] = _packing_start(inst, incumbent, upper)
                        now = time.perf_counter()
                        cap = None if deadline is None else now + DESCENT_BOX * (deadline - now)
                        incumbent, best = _improved(inst, incumbent, cap, stats, DESCENT_STARTS, DESCENT_PATIENCE)
                reach = BISECT if upper <= target else reach / 2
                continue
            status = "time_limit" if result.status == "time_limit" else "error"
            message = result.message or f"P(rho) ended with {result.status}"
            break
        found = rate(inst, result.counts)
        if found > best:
            incumbent, best, spurious, reach = result.counts, found, 0, BISECT
        else:  # a solution within the solver's tolerance of rho, not above the incumbent: step past it
            spurious += 1
            if spurious > 3:
                status, message = "feasible", "solver tolerance: could not separate rho from the incumbent"
                break
    return _outcome(solver, status, solution_json(inst, incumbent), best, max(upper, best), start, stats, message)


# ------------------------------------------------------------------------------------ rounds


class _RoundResult:
    def __init__(self, status: str, counts: Counts | None, message: str = "") -> None:
        self.status = status
        self.counts = counts
        self.message = message


def _levels(
    inst: ThroughputInstance,
    rho: float,
    fixed: dict[int, int] | None,
    fluid_levels: bool,
    within: list[tuple[int, int]] | None = None,
) -> tuple[list[list[int]], list[list[int]] | None] | None:
    """The instance counts worth trying at rho, and caps on the instances of c on w (None: no caps).

    ``fixed``: N_c = fixed[c]; ``within``: N_c in the range within[c] (a box of the level search). A box
    gets no caps: 100 LPs per box cost more than they save CP-SAT (measured, 10 x 10 seed 2, a level search
    at 195.0 for 40 s wall: 298 nodes / 113 leaves in 14.6 CPU s without caps, 344 / 133 in 23.8 CPU s
    with caps from the fluid LP with the box imposed; leaves 7.3 s against 17.8 s; both found 195.283)."""
    ranges = [bounds.count_range(inst, c, rho) for c in range(inst.n_components)]
    if fixed is not None:
        ranges = [(fixed[c], fixed[c]) if lo <= fixed[c] <= hi else (1, 0) for c, (lo, hi) in enumerate(ranges)]
    if within is not None:
        ranges = [(max(lo, a), min(hi, b)) for (lo, hi), (a, b) in zip(ranges, within, strict=True)]
    caps = None
    if fluid_levels and all(lo <= hi for lo, hi in ranges):
        if any(lo < hi for lo, hi in ranges):
            ranges = bounds.fluid_count_ranges(inst, rho, ranges)
        if within is None and inst.n_components * inst.n_machines <= PAIR_BOUNDS_UP_TO:
            caps = bounds.fluid_pair_bounds(inst, rho)
            if caps is None:
                return None
    if any(lo > hi for lo, hi in ranges):
        return None
    return [list(range(lo, hi + 1)) for lo, hi in ranges], caps


def _round(
    inst: ThroughputInstance,
    rho: float,
    solver: str,
    deadline: float | None,
    fixed: dict[int, int] | None,
    symmetry: bool,
    fluid_levels: bool,
    workers: int,
    hint: Counts | None,
    stats: dict[str, Any],
    pool: list | None = None,
    within: list[tuple[int, int]] | None = None,
    work: float | None = None,
    kept: list[int] | None = None,
) -> _RoundResult:
    """Solve P(rho) once; the placement it finds, or its status (``within``: level form, N_c in within[c];
    ``work``: at most this many of CP-SAT's deterministic seconds, level form; ``kept``: P(rho) on these
    components alone, a relaxation (:func:`.rate_model.rate_model`): what it finds places those components only)."""
    begin = time.perf_counter()
    record: dict[str, Any] = {"rho": rho}
    if kept is not None:
        record["kept"] = list(kept)
    stats["rounds"].append(record)
    if pool is not None:
        return _pattern_round(inst, rho, solver, deadline, fixed, symmetry, workers, hint, pool, record, begin)
    pruned = _levels(inst, rho, fixed, fluid_levels, within)
    if pruned is None:
        record.update(status="infeasible", why="no instance count sustains rho", seconds=time.perf_counter() - begin)
        return _RoundResult("infeasible", None)
    rm = rate_model.rate_model(inst, rho, *pruned, kept=kept)
    record["levels"] = rm.n_levels
    if deadline is not None and _build_estimate(stats, len(rm.items)) > deadline - time.perf_counter():
        record.update(status="time_limit", why="too little time left to build P(rho)")
        return _RoundResult("time_limit", None, "time limit reached (too little time left to build P(rho))")
    built = time.perf_counter()
    if solver == "cpsat":
        form = rate_model.build_cpsat(inst, rm, symmetry, hint, slack=within is None)  # a box: yes or no
        record.update(items=len(rm.items), model_s=time.perf_counter() - built)
        run = None
        if within is not None and QUICK_BOX:  # a level search's box: first briefly without probing
            run, cp = run_cpsat(
                form.model, "max", _left(deadline), SUBPROBLEM_GAP, workers, SUBPROBLEM_SOLUTIONS, QUICK_BOX
            )
            if run.status == "time_limit":  # undecided (a box has no objective): CP-SAT with its defaults
                run = None
        if run is None:
            budget = None if work is None else {"max_deterministic_time": work}
            run, cp = run_cpsat(
                form.model, "max", _left(deadline), SUBPROBLEM_GAP, workers, SUBPROBLEM_SOLUTIONS, budget
            )
        found = run.objective is not None or run.status in ("optimal", "feasible")
        counts = rate_model.decode_cpsat(form, cp, inst.n_components) if found else None
    else:
        matrix = rate_model.build_matrix(inst, rm, symmetry, slack=SLACK_OBJECTIVE)
        record.update(matrix.model.size())
        record.update(items=len(rm.items), model_s=time.perf_counter() - built)
        run, values = _solve_matrix(matrix.model, solver, _left(deadline))
        counts = rate_model.decode_matrix(matrix, values, inst.n_components) if values is not None else None
    record.update(status=run.status, seconds=time.perf_counter() - begin)
    if rm.subset:  # a relaxation: what it places is the kept components only
        return _RoundResult("feasible" if counts is not None else run.status, counts, run.message)
    if counts is not None:
        record["rate"] = rate(inst, counts)
        return _RoundResult("feasible", counts)
    return _RoundResult(run.status, None, run.message)


def _pattern_round(
    inst: ThroughputInstance,
    rho: float,
    solver: str,
    deadline: float | None,
    fixed: dict[int, int] | None,
    symmetry: bool,
    workers: int,
    hint: Counts | None,
    pool: list,
    record: dict[str, Any],
    begin: float,
) -> _RoundResult:
    """P(rho) in pattern form (:mod:`.patterns`)."""
    ranges = [bounds.count_range(inst, c, rho) for c in range(inst.n_components)]
    if fixed is not None:
        ranges = [(max(lo, fixed[c]), min(hi, fixed[c])) for c, (lo, hi) in enumerate(ranges)]
    pm = patterns.pattern_model(inst, rho, ranges, pool)
    record["patterns"] = pm.n_patterns
    if any(len(x) == 0 for x in pm.counts):
        record.update(status="infeasible", why="a component has no pattern at rho", seconds=time.perf_counter() - begin)
        return _RoundResult("infeasible", None)
    if solver == "cpsat":
        form = patterns.build_cpsat(inst, pm, symmetry, hint)
        run, cp = run_cpsat(form.model, "max", _left(deadline), SUBPROBLEM_GAP, workers, SUBPROBLEM_SOLUTIONS)
        counts = patterns.decode_cpsat(form, pm, cp) if run.objective is not None else None
    else:
        matrix = patterns.build_matrix(inst, pm, symmetry)
        record.update(matrix.model.size())
        run, values = _solve_matrix(matrix.model, solver, _left(deadline))
        counts = patterns.decode_matrix(matrix, pm, values) if values is not None else None
    record.update(status=run.status, seconds=time.perf_counter() - begin)
    if counts is not None:
        record["rate"] = rate(inst, counts)
        return _RoundResult("feasible", counts)
    return _RoundResult(run.status, None, run.message)


def _bisecting(best: float, upper: float, reach: float, wide: float = WIDE) -> bool:
    """Whether the bound is far enough (more than ``wide``) to bisect between incumbent and bound."""
    return upper > best * (1 + wide) and reach * (upper - best) > wide * best


def _target(best: float, upper: float, reach: float, gap: float) -> float:
    """The next rate a level search decides: bisection while the bound is more than ``LEVEL_WIDE`` away,
    else within the gap."""
    bisect = _bisecting(best, upper, reach, LEVEL_WIDE)
    return best + reach * (upper - best) if bisect else best * (1 + gap / 2)


class _Targets:
    """The rates a level search decides: :func:`_target` from the incumbent's rate, and :meth:`stalled`."""

    def __init__(self, upper: float, reach: float, gap: float) -> None:
        self.upper, self.reach, self.gap = upper, reach, gap
        self.bisecting = True
        """Whether the last target was a bisection target (not the last one, within the gap)."""

    def __call__(self, rate_now: float) -> float:
        self.bisecting = _bisecting(rate_now, self.upper, self.reach, LEVEL_WIDE)
        return _target(rate_now, self.upper, self.reach, self.gap)

    def stalled(self, rho: float) -> float | None:
        """The rate a search that found nothing in ``level_search.STALL_NODES`` nodes rises to: halfway to the
        bound, when its target was a bisection target (:func:`_target`) and the bound is more than
        ``LEVEL_WIDE`` above rho; else None (the last target, within the gap, is never raised: a first try
        raised it too, and 10 x 10 seeds 0 and 3 then proved the midpoint before the same last proof).

        Why (stop 17): a bisection target just below R* is the worst case of the level search. It can only
        end by finding a placement in the thin band [rho, R*] (it cannot refute rho), and where depth-first
        search meets one depends on the LP's degenerate lambda shares, i.e. on the column order of the
        master. 10 x 10 seed 2 (R* in [195.283, 196.633)): the search at 195.264 found no leaf in 1,873 nodes
        with the kept master (main) and 195.283 in 130-893 nodes when the master was rebuilt in other orders.
        Raised, the search becomes a proof at a rate above R* (it ends; nothing decided is lost, as after a
        new incumbent: nodes refuted at a rate stay refuted at a higher one) and the next search bisects
        below the new bound."""
        if not self.bisecting or self.upper <= rho * (1 + LEVEL_WIDE):
            return None
        return rho + 0.5 * (self.upper - rho)


def _level_round(
    inst: ThroughputInstance,
    best: float,
    incumbent: Counts | None,
    upper: float,
    reach: float,
    gap: float,
    solver: str,
    deadline: float | None,
    symmetry: bool,
    workers: int,
    stats: dict[str, Any],
    columns: level_search.HasColumns | None,
    nodes: parallel.Workers | None = None,
) -> level_search.LevelSearch:
    """One level search (:mod:`.level_search`) at the rate :func:`_target` gives, its leaves P(rho) on
    boxes of levels (:func:`_round` with ``within``); with ``nodes``, its nodes on those worker
    processes (:mod:`.parallel`)."""

    next_rho = _Targets(upper, reach, gap)
    if nodes is not None:
        searched = parallel.search(inst, best, incumbent, nodes, next_rho, deadline, columns)
        boxes = None
    else:
        scratch: dict[str, Any] = {"rounds": []}
        solve_box = _box_solver(inst, solver, symmetry, workers, scratch)
        searched = level_search.search(
            inst, best, incumbent, solve_box, next_rho, deadline, columns, improve=_improver(inst)
        )
        boxes = sum("kept" not in box for box in scratch["rounds"])  # P(rho) on boxes, not on subsets
    record = {"rho": searched.rho, "level_search": searched.stats.as_dict(), "boxes": boxes}
    record["status"] = "infeasible" if searched.proven else "time_limit"
    stats["rounds"].append(record)
    return searched


def _box_solver(
    inst: ThroughputInstance, solver: str, symmetry: bool, workers: int, scratch: dict[str, Any] | None = None
) -> level_search.BoxSolver:
    """The level search's leaf: P(rho) with N_c in box[c] (:func:`_round` with ``within``), its rounds
    recorded in ``scratch``."""
    boxes: dict[str, Any] = {"rounds": []} if scratch is None else scratch

    def solve_box(
        rho: float, box: list[tuple[int, int]], limit: float | None, kept: list[int] | None = None
    ) -> tuple[str, Counts | None]:
        # P(rho) on a subset gets the node's levels as they are (no fluid LP): its answer then depends on the kept
        # components' levels and the others' least counts only, which is how the level search remembers it
        fluid = kept is None
        result = _round(inst, rho, solver, limit, None, symmetry, fluid, workers, None, boxes, None, box, kept=kept)
        return result.status, result.counts

    return solve_box


def _improver(inst: ThroughputInstance):
    """The local search applied to every placement a leaf finds (polish, then block ascent)."""

    def improve(counts: Counts) -> Counts:
        return polish.reinsert(inst, polish.polish(inst, counts))

    return improve


def _build_estimate(stats: dict[str, Any], items: int) -> float:
    """Seconds building a P(rho) of ``items`` items will take: at the last round's pace, else ``ITEM_SECONDS``."""
    for record in reversed(stats["rounds"]):
        if record.get("items"):
            return items * record["model_s"] / record["items"]
    return items * ITEM_SECONDS


def _left(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (None: no limit), taken after the model is built (a 20 x 30 model
    takes seconds to build) and just before the solver starts."""
    return None if deadline is None else max(0.0, deadline - time.perf_counter())


def _solve_matrix(model, solver: str, left: float | None) -> tuple[SolverRun, list[float] | None]:
    """One P(rho) in matrix form with HiGHS (highspy, tight feasibility tolerances) or CBC (Pyomo):
    the run and the column values of its solution, if any.

    A time-limited HiGHS model with more than ``CHILD_NONZEROS`` nonzeros is solved in a child
    process stopped at the deadline (:mod:`.highs_child`: HiGHS's presolve overshoots time limits).
    """
    if solver == "highs":
        if left is not None and model.size()["nonzeros"] > CHILD_NONZEROS:
            return highs_child.solve(model, left)
        return _solve_highs(model, left)
    pyomo_model = model.to_pyomo()
    run = solve_pyomo(pyomo_model, "cbc", left, SUBPROBLEM_GAP)
    return run, pyomo_values(pyomo_model) if run.objective is not None else None


def _solve_highs(model, left: float | None) -> tuple[SolverRun, list[float] | None]:
    highs = model.to_highs()
    for option in ("mip_feasibility_tolerance", "primal_feasibility_tolerance"):
        highs.setOptionValue(option, FEASIBILITY)
    run = run_highspy(highs, "max", left, SUBPROBLEM_GAP, max_solutions=SUBPROBLEM_SOLUTIONS)
    return run, list(highs.getSolution().col_value) if run.objective is not None else None


def _warm_start(inst: ThroughputInstance) -> tuple[Counts | None, float | None, float | None]:
    """The best of several starts, each improved by block ascent (:func:`.polish.reinsert`).

    hetero_greedy's placement (the paper's heuristic), and the fluid LP's optimum rounded to a
    placement (:func:`.polish.round_fluid`, N_c scaled by each of ``ROUNDING_SCALES``). Returns the
    placement, the greedy rate and the best rounded start's rate after block ascent (None where
    every such start fails).
    """
    from odrp.heuristics.throughput import hetero_greedy
    from odrp.kinds.throughput.evaluator import evaluate_counts
    from odrp.kinds.throughput.instance import parse_solution

    starts: list[Counts] = []
    greedy_rate = rounded_rate = None
    outcome = hetero_greedy(inst)
    if outcome.solution is not None:
        counts = parse_solution(inst, outcome.solution)
        if evaluate_counts(inst, counts).feasible:
            starts.append(polish.reinsert(inst, counts))
            greedy_rate = rate(inst, counts)
    fluid = bounds.fluid_solution(inst)
    for scale in ROUNDING_SCALES if fluid is not None else ():
        rounded = polish.round_fluid(inst, fluid[1], fluid[2], scale)  # type: ignore[index]
        if rounded is not None and evaluate_counts(inst, rounded).feasible:
            starts.append(polish.reinsert(inst, rounded))
            rounded_rate = max(rounded_rate or 0.0, rate(inst, starts[-1]))
    if not starts:
        return None, greedy_rate, rounded_rate
    return max(starts, key=lambda counts: rate(inst, counts)), greedy_rate, rounded_rate


def _packing_start(inst: ThroughputInstance, incumbent: Counts, upper: float) -> tuple[Counts, float | None]:
    """The better of ``incumbent`` and the packing search above its rate (:mod:`.packing`, then block
    ascent), and the rate that search reached (None: no placement above the incumbent)."""
    found = packing.search(inst, rate(inst, incumbent), upper)
    if found is None:
        return incumbent, None
    found = polish.reinsert(inst, found)
    found_rate = rate(inst, found)
    return (found, found_rate) if found_rate > rate(inst, incumbent) else (incumbent, found_rate)


def _fine_config_bound(
    inst: ThroughputInstance,
    best: float,
    upper: float,
    last: config_bound.ConfigurationLP | None,
    deadline: float | None,
    stats: dict[str, Any],
) -> float:
    """The configuration bound ``upper`` (coarse grid) lowered on the fine grid ``FINE_GRID`` by
    :func:`.config_bound.refine`, within ``FINE_BOX`` of the time left; ``last``: the coarse bisection's
    last LP, whose columns start the fine one."""
    now = time.perf_counter()
    box = None if deadline is None else now + FINE_BOX * (deadline - now)
    stats["config_fine"] = []
    refined, _ = config_bound.refine(
        inst, best, upper, box, FINE_GRID, FINE_STEP, FINE_PRECISION, last, stats["config_fine"]
    )
    stats["config_fine_s"] = time.perf_counter() - now
    return min(upper, refined)


def _improved(
    inst: ThroughputInstance,
    incumbent: Counts,
    deadline: float | None,
    stats: dict[str, Any],
    starts: int | None = None,
    patience: float | None = None,
) -> tuple[Counts, float]:
    """The better of ``incumbent`` and the improvement search from it until ``deadline``, with its rate: the
    descent on instance counts scored by the configuration LP from ``incumbent`` in one random move order
    after another (:func:`.count_descent.multistart`, until the deadline, after ``starts`` descents or
    ``patience`` seconds after the last better placement; stop 16), then block ascent.
    Measured at 20 x 30 (from the packing start, 60 s each, load 9): the descent alone reached 406.632 /
    146.358 / 150.045 on seeds 0-2, where the packing at perturbed counts (``improve.search``, stop 14) reached
    402.608 / 144.950 / 150.045 on a quiet machine; since stop 16 the multistart left that search no time,
    and at stop 18 it was removed."""
    descended, stats["count_descent"] = count_descent.multistart(
        inst, incumbent, deadline, IMPROVE_SEED, starts, patience=patience
    )
    stats["count_descent"]["rate"] = rate(inst, descended)
    ascended = polish.reinsert(inst, descended)
    before, after = rate(inst, incumbent), rate(inst, ascended)
    stats["improve"] = {"start": before, "rate": after}
    return (ascended, after) if after > before else (incumbent, before)


def _outcome(
    solver: str,
    status: str,
    solution: dict[str, Any] | None,
    objective: float | None,
    bound: float | None,
    start: float,
    stats: dict[str, Any],
    message: str,
) -> ExactOutcome:
    runtime = time.perf_counter() - start
    if status == "optimal" and objective is not None:
        bound = max(objective, bound) if bound is not None else objective
    gap = relative_gap(objective, bound, "max")
    run = SolverRun(
        solver=cpsat_version() if solver == "cpsat" else solver_version(solver),
        status=status,  # type: ignore[arg-type]
        objective=objective,
        bound=bound if objective is not None or status != "infeasible" else None,
        gap=gap,
        runtime_s=runtime,
        message=message,
    )
    stats["iterations"] = len(stats["rounds"])
    return ExactOutcome(run, solution, stats)
