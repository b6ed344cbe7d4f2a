"""The settings of the exact throughput method (``odrp solve --param NAME=VALUE``).

:class:`ThroughputSettings` holds every tunable of :func:`odrp.kinds.throughput.exact.solve.solve`. Its
top-level fields are the rate search's switches and shares of time (``--param NAME=VALUE`` and a grid's
``options:``); the sub-searches keep theirs in nested frozen dataclasses (:class:`ConfigurationSettings`,
:class:`LevelSearchSettings`, :class:`LadderSettings`, :class:`DescentSettings`, :class:`PackingSettings`),
reached by dotted names (``--param level_search.branch=product``) or, from Python, with
:func:`dataclasses.replace`. Fields of tuple type (``rounding_scales``, ``packing.orders``) are set from
Python only. The whole object is pickled as it is to the level search's worker processes. Every default
keeps the optimum: the settings choose how the search spends its time, never what it proves.
``docs/methods/throughput.md`` says why each default is what it is; the 10 x 10 defaults were tuned on
seeds 0-9 of ``benchmarks.throughput_10x10``, seeds 10-19 are held out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Branch = Literal["spread", "product", "width", "size", "mass"]
"""How a split of the level search picks its component (:func:`.level_search.score`)."""
BigMode = Literal["both", "first", "refute", "off"]
"""What the level search does with its big components (:mod:`.big`)."""


@dataclass(frozen=True)
class ConfigurationSettings:
    """The configuration LP (:mod:`.config_bound`): the bound's bisection and every node LP of the level search."""

    grid: int = field(default=2000, metadata={"ge": 1})
    """Capacity units of the pricing knapsack (weights rounded down: every grid keeps the proof; 2,000 units lose
    at most about 0.5% of a machine at 10 tasks)."""
    max_iterations: int = field(default=300, metadata={"ge": 1})
    """Column generation steps of one LP before it is left undecided."""
    pool: bool = True
    """Every LP starts from the configurations priced so far at its rate in its process, besides its parent's
    (halved the nodes and CPU of a 20 x 30 rung)."""
    carried: int = field(default=5000, metadata={"ge": 0})
    """A new rate's pool starts with at most this many configurations per class from the rate used last."""
    tables_kept: int = field(default=8, metadata={"ge": 1})
    """Rates whose pricing tables (and pools) a process keeps (the one used least recently is forgotten first)."""
    fluid_kept: int = field(default=4, metadata={"ge": 1})
    """Rates whose fluid LP (the count ranges of the node LPs and of P(rho)) a process keeps (the oldest is
    forgotten first)."""


@dataclass(frozen=True)
class LevelSearchSettings:
    """The level search (:mod:`.level_search`): branch and bound over the instance counts."""

    big: BigMode = "both"
    """``first``: split the biggest big component first while one has more than one level left; ``refute``: refute
    a node that fixes a tier of big components when P(rho) on that tier alone is infeasible; ``both``; ``off``."""
    big_share: float = field(default=1 / 3, metadata={"gt": 0})
    """A component is big when its whole input on one instance would take more than this share of every machine
    (no machine holds three such instances); chosen on the proofs of 10 x 10 seeds 0, 2, 3, 4 and 5."""
    big_seconds: float = field(default=0.5, metadata={"ge": 0})
    """Seconds for P(rho) on a node's big components; undecided, the node goes on as without the check."""
    big_kept: int = field(default=100_000, metadata={"ge": 1})
    """A process forgets the answers of its big checks when they hold more than this many."""
    branch: Branch = "spread"
    """How a split picks its component among those the LP spreads over several levels (``spread``: the widest
    range of levels used; the other rules proved fewer 10 x 10 seeds in 60 s)."""
    stall_nodes: int = field(default=400, metadata={"ge": 1})
    """A search whose rate has not changed for this many nodes asks its targets to raise it
    (:meth:`.targets.Targets.stalled`: a bisection target halfway to the bound)."""


@dataclass(frozen=True)
class LadderSettings:
    """The ladder of level searches above ``config_up_to`` components x machines (:mod:`.ladder`)."""

    lift: float = field(default=0.0099, metadata={"ge": 0})
    """A rung is at least this far (relative) above the incumbent: its proof leaves a gap below 1%."""
    step: float = field(default=0.005, metadata={"gt": 0, "lt": 1})
    """A rung is at least this far (relative) below the last bound proven."""
    bisect: float = field(default=0.5, metadata={"gt": 0, "lt": 1})
    """Once incumbent (1 + lift) reaches the bound, rungs lie at incumbent + bisect (bound - incumbent)."""
    last_call: float = field(default=0.4, metadata={"ge": 0, "le": 1})
    """In this last share of the ladder's time a rung still open is raised once halfway to the bound (20 x 30
    seed 0: the minute then ends with a proof at 1.11% instead of the configuration bound's 1.48%)."""
    branch: Branch = "spread"
    """The split rule of the ladder's nodes (20 x 30 seed 1: its 1% rung in 13 nodes, 45 with ``product``)."""
    restart: float = field(default=1e-4, metadata={"ge": 0})
    """A better placement from the count descent that raises the rung's rate by more than this (relative) starts
    the rung again from a new tree at that rate (a tree split at a lower rate is a worse tree for the higher one)."""
    tail: int = field(default=250, metadata={"ge": 1})
    """A rung open after this many nodes (and not raised) starts once more from a new tree at the same rate (the
    search is heavy-tailed: first rungs that met 1% took 15-240 nodes, the others 330-1,300)."""
    leaf_seconds: float = field(default=3.0, metadata={"ge": 0})
    """CP-SAT's time on a leaf the dive did not place before the leaf is set aside (decided again at the end)."""
    patience: float = field(default=10.0, metadata={"ge": 0})
    """The count descent on the last worker stops this many of its CPU seconds after its last better placement (at
    20 x 30 it reached its best within 9-16 s on a quiet machine), then that worker takes nodes too."""


@dataclass(frozen=True)
class DiveSettings:
    """The configuration LP at fixed counts and its dive (:mod:`.dive`)."""

    grid: int = field(default=2000, metadata={"ge": 1})
    """Capacity units of the pricing knapsack (weights rounded to the nearest unit; 4,000 reached no better
    placements at 20 x 30)."""
    max_iterations: int = field(default=200, metadata={"ge": 1})
    """Column generation steps per LP (then the LP is taken as it is)."""


@dataclass(frozen=True)
class DescentSettings:
    """The descent on the instance counts (:mod:`.count_descent`)."""

    step: float = field(default=0.005, metadata={"gt": 0})
    """The first target is R_best (1 + step); after a success the same step, after a failure half of it."""
    min_step: float = field(default=0.0005, metadata={"gt": 0})
    """A search ends when its step falls below this."""
    pairs: int = field(default=6, metadata={"ge": 0})
    """When no single move lowers the LP's value, the pairs of moves among this many best are tried (0: none)."""
    dive: DiveSettings = DiveSettings()
    """The LP that scores counts and the dive that places them."""


@dataclass(frozen=True)
class PackingSettings:
    """The packing start above ``config_up_to`` components x machines (:mod:`.packing`)."""

    orders: tuple[Literal["smallest", "mean"], ...] = ("smallest", "mean")
    """Orders of the components tried, by their instances' relative size (smallest over the machines, or mean);
    each wins on some 20 x 30 seeds."""
    steps: int = field(default=14, metadata={"ge": 0})
    """Bisection steps on the rate per order (the interval shrinks by 2^-steps)."""
    max_raises: int = field(default=2000, metadata={"ge": 1})
    """At most this many count raises per rate (a guard: every raise adds an instance)."""


@dataclass(frozen=True)
class ThroughputSettings:
    """Settings of the exact throughput method; ``formulation`` and ``fixed_instances`` stay keywords of ``solve``."""

    search_start: bool = True
    """Start from the best of hetero_greedy and the rounded fluid LP, each improved by block ascent, and run the
    packing search and the count descent before the first level search; false: the start is a solution of P(0)
    (or the warm start given)."""
    symmetry: bool = True
    """Order the loads of identical machines in P(rho) (removes their permutations)."""
    fluid_levels: bool = True
    """Narrow the levels of P(rho) by the fluid LP at R = rho (and cap x_cw by it up to ``pair_bounds_up_to``)."""
    workers: int = field(default=1, metadata={"ge": 1})
    """CP-SAT worker threads per P(rho)."""
    pattern_lp: bool = True
    """Lower the fluid bound by bisection on the pattern LP's Lagrangian bound (up to ``config_up_to``)."""
    config_lp: bool | None = None
    """Lower the bound by bisection on the configuration LP once a bisection round of P(rho) is undecided, and
    search by levels from then on (None: with the level form up to ``config_up_to`` components x machines)."""
    branching: bool = True
    """After the configuration bound, every round is a level search (false: P(rho) rounds only)."""
    processes: int = field(default=2, metadata={"ge": 1})
    """Processes of the level searches: the nodes go to this many worker processes (1: in this process)."""
    workers_least: float = field(default=2.0, metadata={"ge": 0})
    """Worker processes are not started with less time left than this (seconds): they take about a second to
    import their modules; the level search then runs in this process."""
    portfolio_above: int = field(default=100, metadata={"ge": 0})
    """Above this many components x machines (the level form, worker processes, a time limit), the count descent
    runs on a worker process from the first start on, beside the bounds, and its placements are taken as they
    come (the portfolio); at or below it the descent runs in this process before the first level search, as the
    10 x 10 defaults were measured (docs/methods/throughput.md)."""
    ladder: bool = True
    """Above ``config_up_to``, under a time limit, with worker processes: the time after the configuration
    bound goes to a ladder of level searches (:mod:`.ladder`) instead of the fine grid and the count descent."""
    subproblem_gap: float = field(default=0.05, metadata={"ge": 0})
    """Relative gap at which a feasible P(rho) stops improving its slack (a better rho follows anyway)."""
    subproblem_solutions: int = field(default=1, metadata={"ge": 1})
    """A feasible P(rho) stops after this many improving solutions (the next round starts higher anyway)."""
    bound_box: float = field(default=0.1, metadata={"ge": 0, "le": 1})
    """Share of the time limit the pattern LP's bisection may take."""
    config_up_to: int = field(default=400, metadata={"ge": 0})
    """Components x machines up to which the configuration LP follows an undecided P(rho) round; above, its
    bisection runs first (at 20 x 30 one LP took 15-25 s and P(rho) decided no round in a minute)."""
    config_box: float = field(default=0.15, metadata={"ge": 0, "le": 1})
    """Share of the time left the configuration LP's bisection may take after an undecided P(rho) round."""
    config_precision: float = field(default=2e-3, metadata={"gt": 0})
    """The configuration LP's bisection stops when its interval is this narrow (relative)."""
    large_config_box: float = field(default=0.7, metadata={"ge": 0, "le": 1})
    """Above ``config_up_to``: share of the time left the configuration LP's bisection may take, run first."""
    large_config_first: float = field(default=0.75, metadata={"gt": 0, "lt": 1})
    """Above ``config_up_to``: the first rate of that bisection, as a fraction of the way from the incumbent to
    the bound (at 20 x 30 the configuration bound lay 2.3-2.9% below the fluid bound, 5-7% above the start)."""
    fine_grid: int = field(default=20_000, metadata={"ge": 1})
    """Pricing grid of the configuration bound's refinement above ``config_up_to`` without the ladder (it lowers
    the coarse bound by 0.04-0.09% at 20 x 30; one LP from scratch costs 2-4 times a coarse one)."""
    fine_box: float = field(default=0.3, metadata={"ge": 0, "le": 1})
    """Share of the time left the refinement on the fine grid may take."""
    fine_step: float = field(default=1e-3, metadata={"gt": 0})
    """First step (relative) of the refinement below the coarse bound."""
    fine_precision: float = field(default=1e-4, metadata={"gt": 0})
    """The refinement stops when its step is below this (relative)."""
    start_box: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """Share of the time limit the starts may take (past it, the rounded fluid starts not yet begun are skipped and
    block ascent stops): 1.7-4.7 s at 20 x 30 depending on the load, under a second up to 10 x 10."""
    packing_box: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    """Share of the time left the packing search may take (at 20 x 30 it takes 5-7 s of a minute; under a limit of a
    few seconds it stops with the best placement found so far)."""
    descent_box: float = field(default=0.15, metadata={"ge": 0, "le": 1})
    """Up to ``config_up_to``: share of the time left the count descent may take before the first level search
    (10 x 10 seed 5 reaches R* = 174.102 in 0.7 s this way, where the level search met it rungs later)."""
    descent_starts: int = field(default=30, metadata={"ge": 1})
    """Descents (move orders) of that count descent at most."""
    descent_patience: float = field(default=2.0, metadata={"ge": 0})
    """That count descent starts no new descent this many seconds after its last better placement."""
    improve_seed: int = 0
    """Seed of the first move order of every count descent."""
    pair_bounds_up_to: int = field(default=400, metadata={"ge": 0})
    """Cap every x_cw of P(rho) by the fluid LP (one LP per pair) up to this many components x machines."""
    wide: float = field(default=0.01, metadata={"ge": 0})
    """P(rho) rounds bisect between incumbent and bound while they are more than this apart (relative)."""
    level_wide: float = field(default=0.005, metadata={"ge": 0})
    """A level search's target bisects between incumbent and bound while they are more than this apart
    (relative): rungs closer than 0.5% to the incumbent cost more time than they saved on 10 x 10 seeds 0-9."""
    bisect: float = field(default=0.5, metadata={"gt": 0, "lt": 1})
    """A bisection target is incumbent + bisect (bound - incumbent); an undecided round halves the step."""
    box: float = field(default=0.25, metadata={"ge": 0, "le": 1})
    """Under a time limit a bisecting P(rho) round gets this share of the time left."""
    min_box: float = field(default=1.0, metadata={"ge": 0})
    """... and at least this many seconds."""
    first_box: float = field(default=8.0, metadata={"ge": 0})
    """While the configuration bound is still to come, a bisecting P(rho) round gets at most this many seconds
    (10 x 10 seed 1's rounds decide in 2.4 and 0.4 s; 5 s cut its first round at load 6)."""
    first_work: float = field(default=2.0, metadata={"ge": 0})
    """... and at most this many of CP-SAT's deterministic seconds, a budget the machine's load does not change
    (seed 1's first round decides with 0.90)."""
    item_seconds: float = field(default=1e-4, metadata={"ge": 0})
    """Seconds to build P(rho) per item y_cwn before a round has measured it: a round that cannot be built
    before the deadline is not started."""
    child_nonzeros: int = field(default=100_000, metadata={"ge": 0})
    """A time-limited HiGHS or CBC P(rho) with more nonzeros runs in a child process stopped at the deadline
    (:mod:`.solver_child`: HiGHS's presolve does not watch the clock, nor does Pyomo writing a model for CBC)."""
    child_below: float = field(default=10.0, metadata={"ge": 0})
    """... and so does one with less time left than this (seconds): HiGHS's presolve took 2.3 s of a 10 x 10 plain
    P(rho) (32,000 nonzeros) on a 1 s limit; with more time left it ends before the deadline."""
    child_below_nonzeros: int = field(default=5000, metadata={"ge": 0})
    """... if it has more nonzeros than this (a level search's leaves, a few hundred, stay in this process)."""
    child_grace: float = field(default=0.25, metadata={"ge": 0})
    """Seconds past the deadline that child may take to answer before it is killed."""
    cbc_least: float = field(default=1.0, metadata={"ge": 0})
    """CBC is not started with less time left than this (its time limit is at least a second)."""
    pattern_limit: int = field(default=20_000, metadata={"ge": 0})
    """``auto`` uses the pattern form of P(rho) when every component has at most this many candidate patterns."""
    pattern_lp_iterations: int = field(default=200, metadata={"ge": 1})
    """Column generation steps of one pattern LP."""
    rounding_scales: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0)
    """Scales of the fluid LP's instance counts rounded to starts (3 was often best at 10-30 machines)."""
    configuration: ConfigurationSettings = ConfigurationSettings()
    """The configuration LP."""
    level_search: LevelSearchSettings = LevelSearchSettings()
    """The level search."""
    rungs: LadderSettings = LadderSettings()
    """The ladder's rungs."""
    descent: DescentSettings = DescentSettings()
    """The count descent and its dive."""
    packing: PackingSettings = PackingSettings()
    """The packing start."""
