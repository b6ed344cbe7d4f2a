"""Exact max-throughput placement: a rate search over fixed-rate integer programs.

The problem (Nasiri et al. 2023; see :mod:`odrp.kinds.throughput.instance`): choose N_c and the machine of
every instance to maximise R subject to, on every machine w,

    R sum_c e_cw l_c x_cw / N_c + sum_c MET_cw x_cw <= cap_w     (eq. 5 summed over w's tasks),

so R multiplies a ratio of integers and no single linear model states it. We search on R instead.

**Fixed-rate model.** For a fixed rate rho the same constraint is linear once N_c is chosen among
levels (binaries v_cn, counts y_cwn: :mod:`.rate_model`): P(rho) is feasible exactly when some
placement x sustains rho, i.e. R(x) >= rho. There is no product and no big-M; feasibility is monotone
in rho (a placement that sustains rho sustains every smaller rate).

**Search (a Dinkelbach-type iteration with an exact stopping proof).**

1. Upper bound: R_up = the fluid LP's optimum (:mod:`.bounds`), which every placement respects,
   lowered after the start by bisection on the pattern LP's Lagrangian bound
   (:mod:`.pattern_bound`: a rate it refutes is out of reach).
2. Incumbent: the best of ``hetero_greedy``'s placement and the fluid LP's optimum rounded to
   placements, improved by block ascent (:func:`.starts.warm_start`); above ``config_up_to``
   components x machines also the packing search above it (:func:`.starts.packing_start`; smaller
   instances get it only before their first level search, step 3, since a better start there moves the
   bisection's targets next to R*, where P(rho) stays undecided). Without a start, a solution of P(0)
   (P(0) infeasible: no placement fits the overheads, the instance is infeasible). Above ``config_up_to``
   the configuration LP's bisection (:mod:`.config_bound`) replaces the pattern LP and runs here, before
   any P(rho); under a time limit the time left then goes either to a ladder of level searches on the
   worker processes (:mod:`.ladder`) or to the configuration bound on a finer pricing grid
   (:func:`.config_bound.refine`) and the count descent (:func:`.starts.improved`), instead of P(rho)
   rounds, which decide nothing at that size within a minute.
3. Repeat: rho = R_inc (1 + g/2), g the relative gap asked for (``mip_gap``, 1e-6 by default).
   Solve P(rho) (CP-SAT maximising its smallest relative machine slack).
   - infeasible: no placement reaches rho, so R* < rho and R_inc is optimal within g/2 (R_up = rho);
   - a solution x: R(x) >= rho > R_inc (its exact rate is computed from the placement), the new
     incumbent; the slack objective makes it a placement well above rho, so that few rounds are
     needed (two or three at paper size).
   While the bound is far (more than ``wide``), rho bisects between incumbent and bound
   (:mod:`.targets`); the first time such a round ends undecided, the bound is lowered by bisection on
   the configuration LP (level form, up to ``config_up_to``), the incumbent is improved by the packing
   search and the count descent, and from then on every round is a *level search*
   (:mod:`.level_search`: branch and bound over the instance counts with the configuration LP at
   every node): it proves the target rate out of reach (the new bound) or raises the incumbent on the
   way and goes on at the target above it (all the time left). Its targets bisect between incumbent
   and bound while they are more than ``level_wide`` apart, then lie just above the incumbent.
   The incumbent rate strictly increases over a finite set of placements, so the search ends, and it
   ends only with an infeasibility proof: the answer is the optimum, not the best of a sweep.
4. On a time limit: the incumbent, the best proven bound (R_up, or the lowest rho proven
   infeasible) and their gap.

Two forms of P(rho), same feasible placements (``formulation``): the *pattern* form (:mod:`.patterns`:
one binary per Pareto-minimal placement pattern of a component; used by ``auto`` when every component
has at most ``pattern_limit`` candidate patterns, i.e. few machines, as at the paper's size) and the
*level* form (:mod:`.rate_model`: binaries for N_c, integer counts per level; any size). Identical
machines (same type, capacity and task limit) are ordered by load in both forms, which removes their
permutations. One round is :func:`.rounds.solve_round`. ``textbook`` is not this search but the model a
practitioner would write, bisection on R over the plain P(rho) (:mod:`.textbook`); measured side by side
(``benchmarks/throughput_textbook.py``), this search proved more instances, faster, at every size, so ``auto``
never hands over to it.

Solvers: ``cpsat`` (OR-Tools CP-SAT with coefficients rounded down, so that "infeasible" stays a proof;
the default, measured fastest at paper size), ``highs`` (highspy directly: the models are rebuilt for
every rho and Pyomo's translation would cost more than the solve) and ``cbc`` (the same matrix through
Pyomo, a second opinion). The reported objective is the exact rate of the incumbent placement (the
evaluator's formula). Every tunable is a field of :class:`.settings.ThroughputSettings`.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from typing import Any

from odrp.core.budget import Budget
from odrp.core.exact import ExactOutcome, checked_start
from odrp.core.memory import check_model
from odrp.core.result import relative_gap
from odrp.core.solvers import COMMERCIAL, DEFAULT_MIP_GAP, SolverRun, solver_version
from odrp.core.solvers.cpsat import version as cpsat_version
from odrp.kinds.throughput.evaluator import evaluate, rate
from odrp.kinds.throughput.exact import (
    bounds,
    config_bound,
    ladder,
    level_search,
    parallel,
    pattern_bound,
    patterns,
    report,
    textbook,
)
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.config_bound import HasColumns
from odrp.kinds.throughput.exact.polish import improve
from odrp.kinds.throughput.exact.rounds import box_solver, solve_round
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.starts import improved, packing_start, warm_start
from odrp.kinds.throughput.exact.targets import Targets, bisecting
from odrp.kinds.throughput.instance import Counts, ThroughputInstance, parse_solution, solution_json

SOLVERS = ("cpsat", "highs", "cbc", "scip", *COMMERCIAL)
"""CP-SAT and HiGHS on their own models; CBC, SCIP and the commercial solvers on the same P(rho) through Pyomo."""
FORMULATIONS = ("auto", "patterns", "levels", "textbook")
SOLVER = "cpsat"
"""The default solver (measured fastest at paper size; ``benchmarks/throughput.py --part paper``)."""
MIN_GAP = 1e-9
"""The smallest relative gap the search asks for (below it, rates differ by float rounding only)."""


def solve(
    inst: ThroughputInstance,
    solver: str = SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    fixed_instances: dict[int, int] | None = None,
    formulation: str = "auto",
    warm_start: dict[str, Any] | None = None,
    settings: ThroughputSettings | None = None,
    incumbent: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Maximise R exactly (to ``mip_gap`` relative); ``fixed_instances`` fixes N_c (mkp_view).

    ``formulation`` of P(rho): ``patterns`` (:mod:`.patterns`), ``levels`` (:mod:`.rate_model`) or ``auto``
    (patterns when every component has at most ``settings.pattern_limit`` candidates). ``warm_start``: a
    feasible solution JSON, the incumbent when it beats the search's own start (the search only ever needs a
    placement's exact rate). ``incumbent``: a feasible solution JSON found before the method (the run's fast
    heuristics, :func:`odrp.run.run_starts`), taken like a warm start after it (one that is not feasible is
    ignored; the textbook formulation, which stays the plain model, ignores it). ``settings``: every tunable (None: the
    defaults). Every improving placement and every bound of the problem the search proves is reported as it is
    found (:mod:`.report`). With ``settings.processes`` > 1
    the level searches run on worker processes (:mod:`.parallel`), started by the first level search (none
    when no level search runs) and killed when ``solve`` returns or raises.
    """
    settings = ThroughputSettings() if settings is None else settings
    if formulation == "textbook":  # the plain model as measured: no incumbent from outside
        if solver not in SOLVERS:
            raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
        return textbook.solve(inst, solver, time_limit, mip_gap, fixed_instances, warm_start)
    if settings.processes < 1:
        raise ValueError(f"processes must be at least 1, got {settings.processes}")
    nodes = parallel.Workers(inst, settings.processes, solver, settings) if settings.processes > 1 else None
    with nodes or contextlib.nullcontext():
        search = _RateSearch(inst, solver, time_limit, mip_gap, fixed_instances, formulation, settings, nodes)
        return search.run(warm_start, incumbent)


class _RateSearch:
    """One run of :func:`solve`: the incumbent, the bound and what the search keeps between rounds."""

    def __init__(
        self,
        inst: ThroughputInstance,
        solver: str,
        time_limit: float | None,
        mip_gap: float,
        fixed_instances: dict[int, int] | None,
        formulation: str,
        settings: ThroughputSettings,
        nodes: parallel.Workers | None,
    ) -> None:
        if solver not in SOLVERS:
            raise ValueError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
        if formulation not in FORMULATIONS:
            raise ValueError(f"unknown formulation {formulation!r}; expected one of {', '.join(FORMULATIONS)}")
        self.budget = Budget(time_limit=None if time_limit is None else float(time_limit))
        self.deadline = self.budget.deadline
        self.inst, self.solver, self.settings, self.nodes = inst, solver, settings, nodes
        self.fixed = fixed_instances
        self.gap = max(float(mip_gap), MIN_GAP)
        self.cache = Cache.of(settings)
        use_patterns = formulation == "patterns" or (
            formulation == "auto" and patterns.applies(inst, settings.pattern_limit)
        )
        if not use_patterns:  # every P(rho) of the level form is at most the plain model's size
            check_model(*textbook.model_size(inst, fixed_instances), "the fixed-rate model P(rho)")
        self.pool = [patterns.candidates(inst, c) for c in range(inst.n_components)] if use_patterns else None
        self.large = not use_patterns and inst.n_components * inst.n_machines > settings.config_up_to
        self.stats: dict[str, Any] = {"rounds": [], "solver": solver, "form": "patterns" if use_patterns else "levels"}
        self.stats["stage_s"] = {}

    def _round(self, rho: float, deadline: float | None, fluid_levels: bool, **kwargs: Any):
        return solve_round(
            self.inst, rho, self.solver, deadline, self.settings, self.cache.fluid, self.stats,
            fluid_levels=fluid_levels, fixed=self.fixed, pool=self.pool, **kwargs,
        )  # fmt: skip

    @contextlib.contextmanager
    def _stage(self, name: str) -> Iterator[None]:
        """Record the wall seconds of a stage in ``stats["stage_s"][name]`` (for the benchmarks)."""
        began = time.perf_counter()
        try:
            yield
        finally:
            self.stats["stage_s"][name] = time.perf_counter() - began

    def _workers_worth(self) -> bool:
        """Whether worker processes may start (or are running): without a limit, or with at least
        ``settings.workers_least`` seconds left (they take about a second to import their modules)."""
        if self.nodes is not None and self.nodes.procs:
            return True
        left = self.budget.left()
        return left is None or left >= self.settings.workers_least

    def _share(self, share: float) -> float | None:
        """The deadline ``share`` of the time left from now (None: no limit)."""
        left = self.budget.left()
        return None if left is None else time.perf_counter() + share * left

    def _bound(self, upper: float) -> float:
        """``upper``, reported as a bound of the problem (:mod:`.report`; not with counts fixed: a bound of the
        packing at those counts only)."""
        if self.fixed is None:
            report.bound(upper)
        return upper

    def _offered(self, incumbent: Counts | None, given: dict[str, Any] | None, source: str) -> Counts | None:
        """The better of ``incumbent`` and the solution ``given`` from outside (a warm start, or the run's
        incumbent: ``source``), recorded in ``stats[source]``; with counts fixed, ``incumbent``."""
        if given is None:
            return incumbent
        if source == "incumbent" and not evaluate(self.inst, given, source).feasible:
            return incumbent  # a warm start that is not feasible is bad input (below), the run's incumbent is skipped
        given_rate = checked_start(evaluate, self.inst, given)
        used = self.fixed is None and (incumbent is None or given_rate > rate(self.inst, incumbent))
        self.stats[source] = {
            "objective": given_rate,
            "accepted": used,
            "solver_objective": None,
            "solver_log": ["the incumbent of the rate search" if used else "not used: the search's start was better"],
        }
        return parse_solution(self.inst, given, source.replace("_", " ")) if used else incumbent

    def _side(self) -> bool:
        """Whether the portfolio's primal side has started (:meth:`_beside`)."""
        return self.nodes is not None and self.nodes.descent is not None

    def _beside(self, incumbent: Counts | None, upper: float) -> None:
        """The portfolio: above ``portfolio_above`` components x machines, with worker processes, a time limit and
        the level form, the packing search above ``incumbent`` (up to the bound ``upper``) and the count descent
        from its placement start now on a worker (:meth:`.parallel.Workers.descend`) and run beside the bounds, their
        placements taken as they come (:meth:`_collect`, the level searches and the ladder), instead of in this
        process between the bounds."""
        inst, settings, nodes = self.inst, self.settings, self.nodes
        if (
            nodes is None
            or incumbent is None
            or self.deadline is None
            or self.pool is not None
            or not settings.branching
            or inst.n_components * inst.n_machines <= settings.portfolio_above
            or not self._workers_worth()
        ):
            return
        nodes.descend(incumbent, rate(inst, incumbent), self.budget.left(), settings.rungs.patience, upper)

    def _collect(self, incumbent: Counts, best: float) -> tuple[Counts, float]:
        """The incumbent raised by the placements the portfolio's descent has sent so far (:meth:`_beside`)."""
        for found, counts in self.nodes.drain() if self.nodes is not None else []:
            if found > best:
                incumbent, best = counts, found
                report.incumbent(self.inst, counts, "count descent")
        return incumbent, best

    def run(self, given: dict[str, Any] | None, outside: dict[str, Any] | None = None) -> ExactOutcome:
        """The search, offered the warm start ``given`` and the run's incumbent ``outside`` (solution JSONs)."""
        inst, settings, stats, deadline = self.inst, self.settings, self.stats, self.deadline
        upper = bounds.fluid_bound(inst)
        if upper is None:
            return self._outcome("infeasible", None, None, None, "the fluid relaxation is infeasible")
        stats["fluid_bound"] = self._bound(upper)

        nodes, large = self.nodes, self.large
        climbing = (
            settings.ladder and large and settings.branching and nodes is not None and deadline is not None
        ) and not self.fixed
        incumbent: Counts | None = None
        if settings.search_start and self.fixed is None:
            with self._stage("start"):
                incumbent, stats["hetero_greedy"], stats["fluid_rounding"] = warm_start(
                    inst, settings, self._share(settings.start_box)
                )
                report.incumbent(inst, incumbent, "start")
                incumbent, given = self._offered(incumbent, given, "warm_start"), None
                incumbent, outside = self._offered(incumbent, outside, "incumbent"), None
                self._beside(incumbent, upper)
                if incumbent is not None and large and not self._side():
                    box = self._share(settings.packing_box)
                    incumbent, stats["packing"] = packing_start(inst, incumbent, upper, settings, box)
                    report.incumbent(inst, incumbent, "packing")
        incumbent = self._offered(self._offered(incumbent, given, "warm_start"), outside, "incumbent")
        best = rate(inst, incumbent) if incumbent is not None else None
        stats["start_rate"] = best
        if incumbent is None:
            feasible = self._round(0.0, deadline, False)
            if feasible.status == "infeasible":
                return self._outcome("infeasible", None, None, None, "no placement fits the overheads")
            if feasible.counts is None:
                return self._outcome(feasible.status, None, None, upper, feasible.message)
            incumbent, best = feasible.counts, rate(inst, feasible.counts)
            report.incumbent(inst, incumbent, "P(0)")
        assert best is not None
        incumbent, best = self._collect(incumbent, best)
        if settings.pattern_lp and best > 0 and not large:
            box = self._share(settings.bound_box)
            upper = min(
                upper, pattern_bound.upper_bound(inst, best, upper, box, max_iterations=settings.pattern_lp_iterations)
            )
        stats["pattern_bound"] = self._bound(upper)
        config_lp = settings.config_lp
        if large and config_lp is None and best > 0:  # large: the configuration LP first, P(rho) rarely decides
            config_lp = False
            now = time.perf_counter()
            lowered = config_bound.bisect(
                inst, best, upper, self._share(settings.large_config_box), precision=settings.config_precision,
                first=settings.large_config_first, tables=self.cache.tables,
            )  # fmt: skip
            upper = self._bound(min(upper, lowered[0]))
            stats["config_coarse"], stats["config_coarse_s"] = upper, time.perf_counter() - now
            incumbent, best = self._collect(incumbent, best)
            if climbing and self._workers_worth():  # the time left: the ladder and the count descent on the workers
                stats["config_bound"] = upper
                climbed = ladder.climb(inst, best, incumbent, upper, lowered[1], deadline, nodes, self.gap)  # type: ignore[arg-type]
                stats["ladder"] = climbed.as_dict()
                stats["count_descent"] = climbed.descent or {}
                if climbed.best > best:
                    incumbent, best = climbed.counts, rate(inst, climbed.counts)
                upper = self._bound(min(upper, climbed.bound))
            else:
                upper = self._bound(self._fine_config_bound(best, upper, lowered[1]))
                if deadline is not None:  # P(rho) decides no round at this size: the time left improves the incumbent
                    incumbent, best = self._collect(incumbent, best)
                    incumbent, best = improved(inst, incumbent, deadline, stats, settings)
        if config_lp is None:
            config_lp = self.pool is None and inst.n_components * inst.n_machines <= settings.config_up_to
        stats.setdefault("config_bound", upper)  # the configuration LP's (the ladder's bound is under "ladder")
        return self._rounds(incumbent, best, upper, config_lp)

    def _rounds(self, incumbent: Counts, best: float, upper: float, config_lp: bool) -> ExactOutcome:
        """Step 3: P(rho) rounds, and level searches once the configuration bound has run."""
        inst, settings, stats, deadline = self.inst, self.settings, self.stats, self.deadline
        status = "optimal"
        message = ""
        spurious = 0
        reach = settings.bisect
        branching_now = False
        columns: HasColumns | None = None  # the last configuration LP: its columns start the next
        while True:
            incumbent, best = self._collect(incumbent, best)
            if best > 0 and relative_gap(best, upper, "max") <= self.gap:  # type: ignore[operator]
                break
            now = time.perf_counter()
            if deadline is not None and now >= deadline:
                status, message = "time_limit", "time limit reached"
                break
            if branching_now:  # a level search: proves its target out of reach, raising the incumbent on the way
                searched = self.level_round(best, incumbent, upper, reach, columns)
                columns = searched.last
                if searched.best > best:
                    incumbent, best, reach = searched.counts, searched.best, settings.bisect  # type: ignore[assignment]
                if searched.proven:
                    upper, reach = self._bound(min(upper, searched.rho)), settings.bisect
                    continue
                if deadline is not None:  # the deadline, or a leaf's P(rho) stopped by its time limit just before it
                    status, message = "time_limit", "time limit reached"
                else:  # a leaf ended without a decision and without a deadline (a solver error or tolerance)
                    status, message = "feasible", "level search: a leaf P(rho) was not decided"
                break
            bisect_now = bisecting(best, upper, reach, settings.wide)
            if bisect_now:  # far from the bound: bisect (rates well above R* are refuted fast)
                target = best + reach * (upper - best)
                box = settings.box * (deadline - now) if deadline is not None else None
                work = None
                if box is not None and config_lp:  # the level search follows an undecided round: keep it short
                    box, work = min(box, settings.first_box), settings.first_work
            else:
                # rho a little above the incumbent, within the gap; after a "solution" the solver accepted
                # within its tolerance but whose exact rate is not above the incumbent, step a bit higher
                target = max(best * (1 + self.gap * (spurious + 1) / (spurious + 2)), upper * MIN_GAP)
                box = work = None
            limit = deadline if box is None else min(now + max(box, settings.min_box), deadline)  # type: ignore[operator]
            result = self._round(target, limit, settings.fluid_levels, hint=incumbent, work=work)
            if result.status == "infeasible":
                upper, reach = self._bound(min(upper, target)), settings.bisect
                if best == 0:
                    break
                continue
            if result.counts is None:
                if bisect_now and result.status == "time_limit":  # undecided: try a rate nearer the incumbent
                    if config_lp and best > 0:  # first, once: the configuration LP may refute rates here
                        config_lp = False
                        upper, columns, branching_now = self._config_bound(best, upper)
                        if branching_now and settings.search_start and not self._side():  # targets from the best
                            with self._stage("descent"):
                                box = self._share(settings.packing_box)
                                incumbent, stats["packing"] = packing_start(inst, incumbent, upper, settings, box)
                                report.incumbent(inst, incumbent, "packing")
                                incumbent, best = improved(
                                    inst, incumbent, self._share(settings.descent_box), stats, settings,
                                    settings.descent_starts, settings.descent_patience,
                                )  # fmt: skip
                    reach = settings.bisect if upper <= target else reach / 2
                    continue
                status = "time_limit" if result.status == "time_limit" else "error"
                message = result.message or f"P(rho) ended with {result.status}"
                break
            found = rate(inst, result.counts)
            if found > best:
                incumbent, best, spurious, reach = result.counts, found, 0, settings.bisect
                report.incumbent(inst, incumbent, "P(rho)")
            else:  # a solution within the solver's tolerance of rho, not above the incumbent: step past it
                spurious += 1
                if spurious > 3:  # the solver's tolerance cannot separate rho from the incumbent
                    status, message = "feasible", "solver tolerance: could not separate rho from the incumbent"
                    break
        return self._outcome(status, solution_json(inst, incumbent), best, max(upper, best), message)

    def _config_bound(self, best: float, upper: float) -> tuple[float, HasColumns | None, bool]:
        """The bound lowered by bisection on the configuration LP, after an undecided bisection round; its last LP
        (its columns start the first level search) and whether level searches follow."""
        settings = self.settings
        branching = settings.branching and self.fixed is None
        with self._stage("config"):
            lowered, columns = config_bound.bisect(
                self.inst, best, upper, self._share(settings.config_box), precision=settings.config_precision,
                tables=self.cache.tables,
            )  # fmt: skip
        upper = self.stats["config_bound"] = self._bound(min(upper, lowered))
        return upper, columns, branching

    def level_round(
        self, best: float, incumbent: Counts | None, upper: float, reach: float, columns: HasColumns | None
    ) -> level_search.LevelSearch:
        """:func:`level_round` with this search's instance, solver, deadline, settings, cache and workers."""
        return level_round(
            self.inst, best, incumbent, Targets(upper, reach, self.gap, self.settings.level_wide), self.solver,
            self.deadline, self.settings, self.cache, self.stats, columns,
            self.nodes if self._workers_worth() else None,
        )  # fmt: skip

    def _fine_config_bound(self, best: float, upper: float, last: config_bound.ConfigurationLP | None) -> float:
        """The configuration bound ``upper`` (coarse grid) lowered on the grid ``fine_grid`` by
        :func:`.config_bound.refine`, within ``fine_box`` of the time left; ``last``: the coarse bisection's
        last LP, whose columns start the fine one."""
        settings, stats = self.settings, self.stats
        now = time.perf_counter()
        stats["config_fine"] = []
        refined, _ = config_bound.refine(
            self.inst, best, upper, self._share(settings.fine_box), settings.fine_grid, settings.fine_step,
            settings.fine_precision, last, stats["config_fine"], tables=self.cache.tables,
        )  # fmt: skip
        stats["config_fine_s"] = time.perf_counter() - now
        return min(upper, refined)

    def _outcome(
        self, status: str, solution: dict[str, Any] | None, objective: float | None, bound: float | None, message: str
    ) -> ExactOutcome:
        if self.nodes is not None and self.nodes.descent is not None:
            self.stats.setdefault("count_descent", self.nodes.descent)
        if status == "optimal" and objective is not None:
            bound = max(objective, bound) if bound is not None else objective
        run = SolverRun(
            solver=cpsat_version() if self.solver == "cpsat" else solver_version(self.solver),
            status=status,  # type: ignore[arg-type]
            objective=objective,
            bound=bound if objective is not None or status != "infeasible" else None,
            gap=relative_gap(objective, bound, "max"),
            runtime_s=self.budget.elapsed(),
            message=message,
        )
        self.stats["iterations"] = len(self.stats["rounds"])
        return ExactOutcome(run, solution, self.stats)


def level_round(
    inst: ThroughputInstance,
    best: float,
    incumbent: Counts | None,
    next_rho: Callable[[float], float],
    solver: str,
    deadline: float | None,
    settings: ThroughputSettings,
    cache: Cache,
    stats: dict[str, Any],
    columns: HasColumns | None = None,
    nodes: parallel.Workers | None = None,
) -> level_search.LevelSearch:
    """One level search (:mod:`.level_search`) from the incumbent (rate ``best``) at the rates ``next_rho`` gives
    (in the rate search, :class:`.targets.Targets`), its leaves P(rho) on boxes of levels
    (:func:`.rounds.box_solver`), recorded as a round in ``stats["rounds"]``; with worker processes ``nodes``,
    its nodes on them (:mod:`.parallel`)."""
    if nodes is not None:
        searched = parallel.search(inst, best, incumbent, nodes, next_rho, deadline, columns)
        boxes = None
    else:
        scratch: dict[str, Any] = {"rounds": []}
        solve_box = box_solver(inst, solver, settings, cache.fluid, scratch)
        searched = level_search.search(
            inst, best, incumbent, solve_box, next_rho, deadline, columns,
            improve=functools.partial(improve, inst), settings=settings.level_search, cache=cache,
        )  # fmt: skip
        boxes = sum("kept" not in box for box in scratch["rounds"])  # P(rho) on boxes, not on subsets
    record = {"rho": searched.rho, "level_search": searched.stats.as_dict(), "boxes": boxes}
    record["status"] = "infeasible" if searched.proven else "time_limit"
    stats["rounds"].append(record)
    return searched
