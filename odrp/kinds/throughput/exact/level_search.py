"""Branch and bound over instance counts, with the configuration bound at every node.

The configuration LP (:mod:`.config_bound`) may mix a component's count levels fractionally (half of
c at N_c = 2, half at N_c = 5): its instances then come in two sizes, which is an uneven split of
c's input that no placement has (eq. 5 splits IR_c evenly). Branching on the levels removes that,
and its leaves, P(rho) with few levels per component, are small integer programs that decide fast.

**Decision at a rate rho.** A *node* is a range [lo_c, hi_c] of N_c for every component; the root
holds every count (1 to :func:`.bounds.count_range`'s maximum). At a node:

- the configuration LP with lambda restricted to the node's levels refutes rho (``refutes() is
  True``): no placement whose counts lie in the node sustains rho, the node is *pruned*. This is a
  proof: with fewer levels D(u) is a minimum over fewer terms, and P(u) still bounds
  sum_w phi(q_w) for every placement in the node (see :class:`.config_bound.ConfigurationLP`); the
  node's ranges are also narrowed by the closed-form ranges and the fluid LP at R = rho with the
  ranges imposed (a relaxation of the node's placements, :func:`.bounds.fluid_count_ranges`);
- else, when the node fixes the count of every component of a tier of *big* components and of no other big one
  (:func:`big_tiers`: those that must be replicated, then every component whose whole input on one instance would
  take more than ``BIG_SHARE`` (a third) of any machine; ``BIG``, stop 23), P(rho) on that tier alone, the other
  components left out with their least CPU and task slots reserved on the cluster (:func:`.rate_model.rate_model`
  with ``kept``; a yes-or-no model, no objective), is
  a relaxation of the node's placements: infeasible, the node is pruned (:class:`BigChecks`, which remembers
  the answers by the tier's counts);
- else, at a leaf (below) and at a node of few count vectors, P(rho) may first be solved on the whole node
  under a short time limit (``NODE_SECONDS``, adapted by :class:`NodeBoxes`; stop 21): infeasible, the node
  is decided with no children; a placement, the new incumbent; undecided, the node goes on as follows;
- if the LP's lambda puts every component at one level n_c (a *leaf*), P(rho) is solved on the
  box n_c +- ``RADIUS`` within the node (``solve_box``: the level form with those ranges, at most
  ``BOX_SECONDS``), and if that is undecided, on the vector n alone (exact, no limit but the
  deadline). A placement found sustains rho: the new incumbent. Infeasible: the box is out, and the
  node minus the box is split into disjoint children (:func:`_outside`: N_1 below or above the
  box's range; N_1 inside and N_2 below or above; ...);
- else the biggest big component with more than one level left, if any (``BIG``), or a component the LP spreads
  over several levels (``BRANCH``: by default the one whose used levels spread widest) is split at its
  lambda-weighted mean level into two disjoint ranges, the child with more lambda weight explored first.

Children partition their parent's counts minus what was decided, so when the stack is empty every
count vector was refuted: no placement sustains rho, and R* < rho. After a new incumbent R(x) the
rate rises to max(rho, next_rho(R(x))) (the caller's bisection target or R(x) (1 + g/2)); nodes
pruned at rho stay pruned at a higher rate (feasibility is monotone in the rate, and the narrowed
ranges only shrink as the rate grows), the node being processed is evaluated again.

**Search.** Depth first: memory stays small and leaves, hence incumbents, come early. Each node's LP
starts from its parent's columns that still fit; the root from the caller's (the configuration
bound's last LP, or the previous search's).

**Two drivers, one node** (stop 16). :func:`evaluate` decides one node at a rate and :class:`Tree` applies
the decision (open nodes, incumbent, rate); :func:`search` alternates them in this process, and
:func:`.parallel.search` hands the nodes to worker processes, where a node may be decided at a rate
below the current one (the argument that this keeps the proof is in :mod:`.parallel`).

**Node work** (stop 15). The pricing knapsack drops every option that another option of the same
component dominates (no more instances, no more grid weight, at least the profit; before, only options
with the same instance count were compared): about 1,050 options per class and pricing fell to 220 at
10 x 10 seed 0, the same optimum (the dominated option is never needed: swapping it for its dominator
keeps every configuration feasible and its value no lower). The node's fluid level ranges skip
components already fixed to one count and, like the masters, run HiGHS without the per-call wrapper.
A leaf's box model gets no fluid caps on x_cw (100 LPs per leaf cost more than they saved CP-SAT).
Measured on the proof of 218 at seed 0 (load 3-7, profiled): 17.6 -> 8.1 CPU s, same verdict.

**Measured** (10 x 10 seeds 0 and 2 of ``benchmarks/throughput.py``; machine load 4-10, so CPU
seconds): the incumbent was the weak side. From the start 201.535 (seed 0) the search found
217.48 (+7.9%; 600 s of CP-SAT on P(rho) had reached 204.76), from 190.419 (seed 2) 194.67; and it
proves rates the configuration LP alone cannot refute: seed 0 at 218 (125 nodes, 17 CPU s; the
configuration bound is 220.3), seed 2 at 198 (59 nodes, 13 CPU s; bound 200.5). From the placement at
217.479 the search at 217.479 (1 + 5e-7) empties its tree: 1,303 nodes (735 pruned by the LP, 56 leaves,
80 boxes), 121 CPU s, so **seed 0's R* = 217.479** (to 1e-6). Where that time goes (a 40 CPU s profile of
the same search): node LPs 14 s (pricing DP 9 s, HiGHS masters 5 s), the node's fluid level ranges 8 s
(without them: 629 nodes in 150 CPU s, not proven: they pay), the pricing options 3 s, leaves 12.5 s
(CP-SAT 7.5 s, the fluid caps of the box model 3.5 s). Reduced-cost level fixing from the duals of a
fewest-machines configuration LP was tried and removed (same search: 133 CPU s, 1,668 nodes; the duals
are degenerate, n u_cn = min_m m u_cm for most levels, so it narrowed 170 nodes and pruned none).
"""

from __future__ import annotations

import bisect
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact.bounds import count_range
from odrp.kinds.throughput.exact.config_bound import ConfigurationLP
from odrp.kinds.throughput.exact.rate_model import cluster_room, cluster_use
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

Ranges = list[tuple[int, int]]


class BoxSolver(Protocol):
    """solve_box(rho, box, deadline) -> (status, placement): P(rho) with N_c in box[c] for all c; with ``kept``,
    P(rho) on those components alone, the others' least needs reserved (a relaxation: the placement it finds, if
    any, places the kept components only)."""

    def __call__(
        self, rho: float, box: Ranges, deadline: float | None, kept: list[int] | None = None
    ) -> tuple[str, Counts | None]: ...


RADIUS = 0
"""At a leaf vector v, P(rho) is first solved on the box v +- RADIUS (within the node); 0: on v alone.
Measured (issue 3k, the proof at R* (1 + 5e-7) on 10 x 10 seed 0, ``benchmarks.throughput_10x10 --proof``,
load 0.3-2.4): radius 1 took 1,153 nodes and 88.9 CPU s (52 boxes, CP-SAT 0.74 s each: 38% of the time),
radius 0 1,499 nodes and 58.0 CPU s (a vector's P(rho) decides fast; the extra children fall to the
node LP); radius 2 1,261 nodes, 88.9 CPU s. The 60 s runs of seeds 0 and 2 end at the same incumbents
and bounds."""
BOX_SECONDS = 3.0
"""Time for that box; undecided, the vector v alone is decided (no time limit but the deadline)."""
NODE_SECONDS = (0.0, 0.0)
"""At a leaf, and at a node of few count vectors, P(rho) is first solved on the whole node (its levels narrowed at
rho) for a time between these bounds (0: never; :class:`NodeBoxes` adapts it). Infeasible: the node is decided
with no children; a placement: the new incumbent; undecided: the node goes on as without it. Stop 21 set it to
(0.05, 1.0) for 10 x 10 seed 2's band of count vectors next to R*; the big components' checks (``BIG``) decide
that band now, and at stop 23 the 60 s runs of seeds 0-5 (``benchmarks.throughput_10x10``, quiet machine) took
35.4 / 9.6 / 17.9 / 19.2 / 15.0 / 55.5 s with it and 28.6 / 8.3 / 17.8 / 17.4 / 13.2 / 49.0 s without, so it is
off (and the trees no longer depend on timing)."""
NODE_VECTORS = (1, 65536)
"""Bounds on how many count vectors a node that is not a leaf may hold to be solved whole (adapted likewise)."""
SPACING = 64
"""After undecided whole nodes, at least one eligible node in this many is still tried."""
BIG = "both"
"""What the level search does with the *big* components (:func:`big_tiers`: one instance carrying a big component's
whole input at rho would take more than ``BIG_SHARE`` of any machine; stop 23): ``first`` (they are split first, the
biggest first, while one has more than one level left), ``refute`` (at a node the LP does not refute and that fixes
the counts of a tier of big components, P(rho) on that tier alone, the others left out with their least needs
reserved, refutes the node when it is infeasible: :class:`BigChecks`), ``both`` or ``off`` (the search before stop
23). The split order of ``first`` finds placements later than ``BRANCH`` does (10 x 10 seed 5, when its search
had to find the optimum: 2 to 4 rungs above R* before it met it); the count descent before the first level search
(``DESCENT_BOX`` in :mod:`odrp.kinds.throughput.exact.solve`)
now finds it instead. Tried and not kept: ``first`` only at nodes
whose rate is within 0.2% (or 1%) of the incumbent, ``refute`` above: with the descent, the same 60 s runs within
their noise (seeds 2 and 5: 16.0 and 54.3 s with ``both`` everywhere, 19.9 and 54.5 s within 1%), and within 0.2%
seed 2 was not proven (its rungs 0.3-1.7% above R* need ``first``)."""
BIG_SHARE = 1 / 3
"""A component is big when its whole input on one instance would take more than this share of every machine (no
machine holds three such instances). Measured (stop 23, the proofs at R* (1 + 5e-7) from the optimum, one process,
CPU clock; 10 x 10 seeds 0 / 2 / 3 / 4 / 5): 0.5 (the big items of bin packing) 35.0 / 12.3 / 7.1 / 11.6 / 70.6-86.8
s, 0.3 27.5 / 7.4 / 9.7 / 15.9 / 59.4-63.4 s, 1/3 the sets of 0.3 on seeds 0, 2 and 5 and 7.1 / 9.0 s on seeds 3
and 4; 0.7 took seed 5 145 s. (Measured before CP-SAT's inclusion presolve was switched off, while it still
refuted some feasible subset models: ``odrp.core.solvers.cpsat.CPSAT_PARAMETERS``.)"""
BIG_SECONDS = 0.5
"""Time for P(rho) on the big components at a node; undecided, the node goes on as without it."""


@dataclass
class NodeBoxes:
    """How long P(rho) may run on a whole node, on nodes of how many count vectors, and how often it is tried.
    After a node decided in under half the time: the time doubles, the node size may grow four times, and every
    eligible node is tried; after one left undecided: the time halves, the size is divided by four, and the next
    tries come at every second, fourth, ... eligible node (at most every ``SPACING``-th). CP-SAT decides some
    instances' nodes in milliseconds where the LP would split them many times (10 x 10 seed 2 near R*), and
    others' only in seconds (seeds 0, 3 and 5): each search finds out which."""

    seconds: float = 0.0
    vectors: int = 0
    every: int = 1
    """Try one eligible node in this many."""
    wait: int = 0
    """Eligible nodes to pass before the next try."""

    def reset(self) -> None:
        self.seconds, self.vectors, self.every, self.wait = NODE_SECONDS[0], NODE_VECTORS[0], 1, 0

    def due(self) -> bool:
        """Whether this eligible node is tried (counts it)."""
        if self.wait > 0:
            self.wait -= 1
            return False
        return True

    def tried(self, decided: bool, used: float) -> None:
        if decided and used < self.seconds / 2:
            self.seconds = min(2 * self.seconds, NODE_SECONDS[1])
            self.vectors = min(4 * self.vectors, NODE_VECTORS[1])
            self.every = 1
        elif not decided:
            self.seconds = max(self.seconds / 2, NODE_SECONDS[0])
            self.vectors = max(self.vectors // 4, NODE_VECTORS[0])
            self.every = min(2 * self.every, SPACING)
        self.wait = self.every - 1


NODE_BOXES = NodeBoxes()
"""This process's (a search resets it)."""


@dataclass
class BigChecks:
    """P(rho) on a tier of big components (:func:`big_tiers`) at the nodes that fix the count of each of them and of
    no other big component (``BIG`` ``refute`` or ``both``), remembered by (rho, those components and counts) for
    one instance. The relaxation's rows are the same at every node with the same
    fixed big counts but its two cluster rows, whose room (:func:`.rate_model.cluster_room`) depends on the least
    counts of the components left out: a placement of the kept components found at one node answers every later
    node with the same key where it still fits the room, a refutation every later node with no more room;
    otherwise CP-SAT is asked again."""

    found: dict[tuple, tuple[float, int]] = field(default_factory=dict)
    """key -> CPU and task slots a placement found there takes on the cluster."""
    refuted: dict[tuple, tuple[float, float]] = field(default_factory=dict)
    """key -> the room (CPU, slots; inf: no limit) at which P(rho) there was infeasible."""
    solved: int = 0
    """CP-SAT runs (the rest were answered from memory)."""
    inst: ThroughputInstance | None = None
    """The instance the answers are about (another one clears them)."""

    def refutes(
        self, inst: ThroughputInstance, rho: float, levels: Ranges, solve_box: BoxSolver, deadline: float | None
    ) -> bool:
        """Whether P(rho) on the big components that ``levels`` fixes (the others left out) is infeasible; False when
        they are not a tier."""
        tiers = big_tiers(inst, rho)
        kept = [c for c in (tiers[-1] if tiers else []) if levels[c][0] == levels[c][1]]  # biggest first
        if kept not in tiers or len(kept) == inst.n_components:
            return False
        if inst is not self.inst:
            self.found.clear()
            self.refuted.clear()
            self.inst = inst
        key = (rho, tuple((c, levels[c][0]) for c in sorted(kept)))
        cpu, slots = cluster_room(inst, rho, [lo for lo, _ in levels], kept)
        room = (cpu, math.inf if slots is None else slots)
        if key in self.found and self.found[key][0] <= room[0] and self.found[key][1] <= room[1]:
            return False
        if key in self.refuted and room[0] <= self.refuted[key][0] and room[1] <= self.refuted[key][1]:
            return True
        if len(self.found) + len(self.refuted) > BIG_KEPT:
            self.found.clear()
            self.refuted.clear()
        soon = time.perf_counter() + BIG_SECONDS
        status, placed = solve_box(rho, levels, soon if deadline is None else min(deadline, soon), kept)
        self.solved += 1
        if placed is not None:
            self.found[key] = cluster_use(inst, rho, placed)
        elif status == "infeasible":
            self.refuted[key] = room
        return status == "infeasible"


BIG_CHECKS = BigChecks()
"""This process's."""
BIG_KEPT = 100_000
"""A process forgets its :class:`BigChecks` when they hold more than this many answers."""
SPREAD = 1e-6
"""A lambda share above this counts as a level the LP uses."""
BRANCH = "spread"
"""How a split chooses its component among those the LP spreads over several levels n_min < ... < n_max (L: one
instance's load at N_c = 1 on the cheapest machine, rho e_cw l_c / cap_w, so that L / n is the size of an
instance at level n): ``product`` (the largest (L / n_min - L / n_max) (n_max - n_min)), ``spread`` (the
largest n_max - n_min, the rule before issue 3r), ``width`` (the largest L / n_min - L / n_max: how far apart
the instance sizes the LP mixes are), ``size`` (the largest lambda-weighted variance of L / n) or ``mass``
(the most lambda weight off the component's main level).

Measured (issue 3r: searches at a fixed rate from the saved placement, one process, CPU clock, as
``benchmarks.throughput_10x10 --proof DIR [--rate RHO] --processes 1 --branch RULE`` runs them; load 3-9, so
compare nodes): the proof at R* (1 + 5e-7) on 10 x 10 seed 0 took 1,561 nodes with ``spread``, 1,601 with
``product``, 1,739 ``mass``, 2,007 ``width``, 2,218 ``size`` (67 leaves with every rule); on seed 3 (R* =
173.762) 1,582 nodes and 59.0 CPU s with ``spread``, 941 and 41.8 s with ``product`` (82 leaves); seed 2's search at
196.2 (above R* = 195.283) 679 nodes with ``spread``, 279 ``product``, 171 ``size``, 173 ``width``, 245
``mass``; at 195.6 1,689 ``spread``, 637 ``product``, 419 ``width``. The 60 s runs (``benchmarks.throughput_10x10
--cpu-clock``, 2 processes, load 4-6): ``width`` left seeds 0 and 3 unproven (0.11%, 0.27%: both are proven
with ``spread``) and reached 0.35% / 0.33% on seeds 2 / 5; ``product`` proved seeds 0 and 3 (49.8 s, 46.0 s)
and reached 195.283 / 195.958 (0.35%) on seed 2 and 174.102 / 174.786 (0.39%) on seed 5, where ``spread``
(main) ends seed 2 at 0.60-1.53% (today 193.457 / 196.845, 1.75%). Seed 0 sits at the 60 s edge with both
rules (load 0.4-3.8): ``product`` proved it in 49.8, 59.2 and 58.8 s and once not (217.479 / 218.274, 0.37%),
``spread`` in 59.2, 55.2 and 54.0 s. Seeds 1 and 4 (8.4 s, 35.8 s with ``product``) and 3 (46.0, 50.7 s;
``spread`` 42.7 s) stay proven. The lead's check on merged main, quiet machine (load 1.6-2.0, wall clock,
``python -m benchmarks.throughput_10x10 --seeds 0 1 2 3 4 5`` then ``--seeds 0 3 2 --branch spread``):
``product`` left seed 0 unproven (0.37%) and proved seed 3 in 58.0 s, ``spread`` proved seed 0 in 55.4 s and
seed 3 in 33.5 s; seed 2 0.35% against 0.60%, seed 5 0.39% with ``product``. The default stays ``spread``: it
keeps every seed proven that either rule proves; ``product`` only narrows gaps that stay open.

What no rule changes (seed 2): near R* the LP is feasible at thousands of count vectors that P(rho) refutes,
so the proof is a count of leaves, not of splits. The proof at R* (1 + 5e-7) with ``spread`` and 2 processes
(``benchmarks.throughput_10x10 --proof``): unproven after 600 s of CPU clock (1,178 CPU s), 49,837 nodes,
5,789 leaves refuted by CP-SAT; with ``product``, after 300 s of CPU clock (587 CPU s, load 2-3): 29,315 nodes,
4,578 leaves, unproven. At 195.3 (R* + 0.009%) ``width`` took 19,214 nodes and 2,895 leaves in 400 CPU
s, unproven; with ``RADIUS`` 1, 9,746 nodes and 2,285 boxes, unproven."""
STRONG = 0
"""Strong branching: a split tries up to this many candidate components (the best by ``spread`` and by
``width``, alternately) and keeps the one whose children the LP refutes most (0: ``BRANCH`` alone). Tried and
left off (issue 3r, same searches as ``BRANCH``, before the kept children reused their LPs): seed 2 at 196.2,
64 nodes and 65 children refuted inside the splits in 29.9 CPU s with 3 candidates, 108 nodes in 37.4 s with 2
(``width`` alone: 173 nodes, 16.6 s); seed 0 at R* (1 + 5e-7), 815 nodes in 101.9 s with 3, 897 in 88.4 s
with 2 (``spread`` alone: 1,561 nodes, 52.2 s). Fewer nodes, more CPU: every candidate's two LPs cost about a
node each."""
SOLVED_KEPT = 200
"""A process keeps at most this many LPs of strong splits' children (``_SOLVED``) before it forgets them all."""
_SOLVED: dict[tuple[float, tuple[tuple[int, int], ...]], tuple[ConfigurationLP, bool | None]] = {}
"""The LPs a strong split solved for the children it kept, by (rho, node): evaluating such a child at the same
rate takes its LP from here (same rate, same ranges: the same LP) instead of solving it again."""
STALL_NODES: int | None = 400
"""A search that has taken this many nodes since its rate last changed raises the rate to what
``next_rho.stalled(rho)`` gives, if ``next_rho`` has that method and it gives a rate (None or 0: never).
Why and what it measured: :func:`odrp.kinds.throughput.exact._Targets.stalled`."""


class HasColumns(Protocol):
    """What a node passes to its children: the configurations of its LP (``ConfigurationLP.columns``)."""

    columns: list[list[dict[tuple[int, int], int]]]


@dataclass
class Columns:
    """The columns of a node's LP without the LP (what a worker process sends back for the children)."""

    columns: list[list[dict[tuple[int, int], int]]]
    fit_at: tuple[float, int] | None = None
    """(rho, grid) at which every column fits (``ConfigurationLP.fit_at``; None: not known)."""

    @classmethod
    def of(cls, lp: HasColumns) -> Columns:
        """``lp``'s columns, and the rate and grid at which they fit if it says."""
        return cls(lp.columns, getattr(lp, "fit_at", None))


@dataclass
class SearchStats:
    nodes: int = 0
    pruned: int = 0
    leaves: int = 0
    whole: int = 0
    """Nodes decided by P(rho) on the whole node (``NODE_SECONDS``; also counted as ``boxes_refuted``)."""
    boxes_refuted: int = 0
    undecided: int = 0
    incumbents: list[float] = field(default_factory=list)
    seconds: float = 0.0
    processes: int = 1
    again: int = 0
    """Nodes evaluated again: a worker's answer at a rate that had since risen, not a refutation (parallel)."""
    starved: float = 0.0
    """Seconds during which some worker had no node (none was open; parallel)."""
    raised: list[float] = field(default_factory=list)
    """Rates the search rose to without a new incumbent (``stalled``)."""
    strong: int = 0
    """Children refuted by their LP inside a strong split (``STRONG``; not counted in ``nodes``)."""
    big: int = 0
    """Nodes refuted by P(rho) on the big components (``BIG``: ``refute``, ``both``; also counted in
    ``pruned``)."""

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class LevelSearch:
    """The outcome: ``proven`` means no placement sustains ``rho`` (R* < rho; the incumbent is optimal
    within the gap), else the search stopped at the deadline with the incumbent it had."""

    best: float
    counts: Counts | None
    rho: float
    proven: bool
    stats: SearchStats
    last: HasColumns | None
    """The last LP solved, or its columns (they start the next search)."""


@dataclass
class NodeResult:
    """What the evaluation of one node at ``rho`` decided (:func:`evaluate`)."""

    rho: float
    verdict: str
    """``pruned`` (the LP refutes rho on the node), ``again`` (the deadline came before the LP's first
    master: the node is still to do), ``found`` (a leaf's P(rho) found a placement), ``refuted`` (a
    leaf's box is infeasible: ``children`` cover the node minus the box), ``undecided`` (a leaf's
    P(rho) ended without a decision) or ``split`` (``children``: two disjoint ranges)."""
    columns: HasColumns
    children: list[Ranges] = field(default_factory=list)
    """In stack order: the last is explored first."""
    found: Counts | None = None
    leaf: bool = False
    whole: bool = False
    """Decided by P(rho) on the whole node."""
    undecided_lp: bool = False
    strong_refuted: int = 0
    """Children of a strong split whose LP refuted rho (dropped from ``children``)."""
    big: bool = False
    """Pruned by P(rho) on the big components, not by the LP (``BIG``)."""


def evaluate(
    inst: ThroughputInstance,
    rho: float,
    node: Ranges,
    parent: HasColumns | None,
    solve_box: BoxSolver,
    improve: Callable[[Counts], Counts] | None = None,
    deadline: float | None = None,
    big: str | None = None,
) -> NodeResult:
    """The node LP at rho on ``node`` (columns from ``parent``), then the leaf's P(rho) or the split; ``big``: what
    to do with the big components (``BIG``'s values; None: ``BIG``)."""
    big = BIG if big is None else big
    lp, verdict = _SOLVED.pop((rho, tuple(node)), (None, None))  # a strong split's child: its LP is solved
    if lp is None:
        lp = ConfigurationLP(inst, rho, parent, node)  # type: ignore[arg-type]  # reads only parent.columns
        verdict = lp.refutes(deadline)
    if verdict is True:
        return NodeResult(rho, "pruned", lp)
    levels = [(r.start, r.stop - 1) for r in lp.pricing.levels]  # the node, narrowed at rho
    used = _used_levels(lp, inst.n_components)
    if not all(used):  # the LP stopped at the deadline before its first master
        return NodeResult(rho, "again", lp)
    if big in ("refute", "both") and BIG_CHECKS.refutes(inst, rho, levels, solve_box, deadline):
        return NodeResult(rho, "pruned", lp, big=True)
    undecided_lp = False
    if verdict is None and not all(len(u) == 1 for u in used):
        undecided_lp = True
        if all(lo == hi for lo, hi in levels):
            used = [[lo] for lo, _ in levels]
    leaf = all(len(u) == 1 for u in used)
    boxes = NODE_BOXES
    small = leaf or math.prod(hi - lo + 1 for lo, hi in levels) <= boxes.vectors
    if boxes.seconds > 0 and any(lo < hi for lo, hi in levels) and small and boxes.due():  # the whole node, briefly
        start = time.perf_counter()
        node_deadline = start + boxes.seconds
        status, found = solve_box(rho, levels, node_deadline if deadline is None else min(deadline, node_deadline))
        boxes.tried(status in ("infeasible", "feasible"), time.perf_counter() - start)
        found = _improved(inst, found, improve)
        if found is not None:
            return NodeResult(rho, "found", lp, found=found, leaf=leaf, whole=True, undecided_lp=undecided_lp)
        if status == "infeasible":
            return NodeResult(rho, "refuted", lp, [], leaf=leaf, whole=True, undecided_lp=undecided_lp)
    if leaf:
        vector = [u[0] for u in used]
        near = [(max(lo, n - RADIUS), min(hi, n + RADIUS)) for (lo, hi), n in zip(levels, vector, strict=True)]
        point = [(n, n) for n in vector]
        status, found = "time_limit", None
        if near != point:
            box_deadline = time.perf_counter() + BOX_SECONDS
            status, found = solve_box(rho, near, box_deadline if deadline is None else min(deadline, box_deadline))
        if status not in ("infeasible", "feasible"):  # undecided near v: decide v alone
            near = point
            status, found = solve_box(rho, point, deadline)
        found = _improved(inst, found, improve)
        if found is not None:
            return NodeResult(rho, "found", lp, found=found, leaf=True, undecided_lp=undecided_lp)
        if status != "infeasible":
            return NodeResult(rho, "undecided", lp, leaf=True, undecided_lp=undecided_lp)
        children = list(reversed(_outside(levels, near)))
        return NodeResult(rho, "refuted", lp, children, leaf=True, undecided_lp=undecided_lp)
    if STRONG:
        return _strong_split(inst, rho, lp, used, levels, undecided_lp, deadline)
    children = _split(lp, used, levels, _branch_component(inst, lp, used, big in ("first", "both")))
    return NodeResult(rho, "split", lp, children, undecided_lp=undecided_lp)


def _improved(
    inst: ThroughputInstance, found: Counts | None, improve: Callable[[Counts], Counts] | None
) -> Counts | None:
    """The better of ``found`` and ``improve(found)`` (``found`` itself if None or nothing improves)."""
    if found is None or improve is None:
        return found
    return max((found, improve(found)), key=lambda x: rate(inst, x))


def _split(lp: ConfigurationLP, used: list[list[int]], levels: Ranges, c: int) -> list[Ranges]:
    """The node's ``levels`` split on component c at its lambda-weighted mean level, in stack order (the
    child with more lambda weight last: explored first)."""
    mean = sum(n * lp.shares.get((c, n), 0.0) for n in used[c]) / sum(lp.shares.get((c, n), 0.0) for n in used[c])
    cut = min(max(math.floor(mean), levels[c][0]), levels[c][1] - 1)
    low = [*levels[:c], (levels[c][0], cut), *levels[c + 1 :]]
    high = [*levels[:c], (cut + 1, levels[c][1]), *levels[c + 1 :]]
    weight_low = sum(lp.shares.get((c, n), 0.0) for n in used[c] if n <= cut)
    first, second = (low, high) if weight_low >= 0.5 else (high, low)
    return [second, first]


def _strong_split(
    inst: ThroughputInstance,
    rho: float,
    lp: ConfigurationLP,
    used: list[list[int]],
    levels: Ranges,
    undecided_lp: bool,
    deadline: float | None,
) -> NodeResult:
    """Strong branching: the splits of up to ``STRONG`` candidate components (the best by ``spread`` and by
    ``width``, alternately) are tried, each child's LP solved at rho; the split with the most children refuted
    wins (ties: the first candidate), and its refuted children are dropped (decided: no placement in them
    sustains rho)."""
    ranked = []
    for rule in ("spread", "width"):
        ranked.append(sorted(range(inst.n_components), key=lambda k: -_score(inst, lp, used, k, rule)))
    candidates: list[int] = []
    for k in itertools.chain.from_iterable(zip(*ranked, strict=True)):
        if len(used[k]) > 1 and k not in candidates and len(candidates) < STRONG:
            candidates.append(k)
    best: tuple[int, list[Ranges]] | None = None
    for c in candidates:
        children = _split(lp, used, levels, c)
        kept = []
        for child in children:
            child_lp = ConfigurationLP(inst, rho, lp, child)
            verdict = child_lp.refutes(deadline)
            if verdict is not True:
                kept.append((child, child_lp, verdict))
        if best is None or len(kept) < len(best[1]):
            best = (len(children) - len(kept), kept)
        if not kept:
            break
    assert best is not None
    if len(_SOLVED) > SOLVED_KEPT:
        _SOLVED.clear()
    for child, child_lp, verdict in best[1]:  # the winner's children need not solve their LP again
        child_lp._master = None  # its shares, levels and columns are what evaluate reads
        _SOLVED[rho, tuple(child)] = (child_lp, verdict)
    return NodeResult(
        rho, "split", lp, [child for child, *_ in best[1]], undecided_lp=undecided_lp, strong_refuted=best[0]
    )


TreePath = tuple[int, ...]
"""A node's place in the tree: its parent's path and its index among the parent's children."""


class Tree:
    """The open nodes, the incumbent and the rate: what the search knows between nodes.

    The open nodes are kept in depth-first order by their paths (a child of p gets p + (i,), the last
    child explored first): :meth:`pop` takes the greatest path, which is the top of a depth-first stack.
    With one process this is that stack; with several, a node whose answer comes late still has its
    children explored where depth-first search would explore them, so the tree is searched in the same
    order whatever the timing (a worker takes the next node of that order: a look-ahead)."""

    def __init__(
        self,
        inst: ThroughputInstance,
        best: float,
        counts: Counts | None,
        next_rho: Callable[[float], float],
        columns: HasColumns | None,
        processes: int = 1,
    ) -> None:
        self.inst = inst
        self.best, self.counts = best, counts
        self.next_rho = next_rho
        self.rho = next_rho(best)
        self.last = columns
        self.stats = SearchStats(processes=processes)
        self.stalled: Callable[[float], float | None] | None = getattr(next_rho, "stalled", None)
        self.quiet = 0
        """Nodes taken since the rate last changed."""
        NODE_BOXES.reset()
        self.start = time.perf_counter()
        root = [(1, max(1, count_range(inst, c, self.rho)[1])) for c in range(inst.n_components)]
        self.open: list[tuple[TreePath, Ranges, HasColumns | None]] = [((), root, columns)]

    def pop(self) -> tuple[TreePath, Ranges, HasColumns | None]:
        return self.open.pop()

    def _push(self, path: TreePath, node: Ranges, parent: HasColumns | None) -> None:
        bisect.insort(self.open, (path, node, parent), key=lambda entry: entry[0])

    def take(self, path: TreePath, node: Ranges, parent: HasColumns | None, result: NodeResult) -> bool:
        """Apply what ``node`` (evaluated at ``result.rho`` <= ``self.rho``) decided; False: the search must
        stop unproven (a leaf undecided, or a placement the solver accepted at rho that is not above the
        incumbent). A refutation at a lower rate holds at this one (a placement that sustains rho
        sustains every lower rate); a found placement or an undecided leaf at a lower rate is looked at
        again at this one."""
        stats = self.stats
        stats.nodes += 1
        self.last = result.columns
        self.quiet += 1
        if self.stalled is not None and STALL_NODES and self.quiet >= STALL_NODES:  # no new incumbent for long
            raised = self.stalled(self.rho)
            self.quiet = 0
            if raised is not None and raised > self.rho:  # valid as after an incumbent: nothing decided is lost
                self.rho = raised
                stats.raised.append(raised)
        stale = result.rho < self.rho
        if result.verdict == "pruned":
            stats.pruned += 1
            stats.big += result.big
            return True
        if result.verdict == "again":
            self._push(path, node, parent)
            return True
        stats.undecided += result.undecided_lp
        stats.strong += result.strong_refuted
        stats.leaves += result.leaf
        stats.whole += result.whole
        if result.verdict == "found":
            assert result.found is not None
            found = rate(self.inst, result.found)
            if found > self.best:
                self.best, self.counts = found, result.found
                stats.incumbents.append(found)
                self.rho = max(self.rho, self.next_rho(found))
                self.quiet = 0
                self._push(path, node, result.columns)  # the same node at the higher rate
                return True
        if result.verdict in ("found", "undecided"):
            if stale:
                stats.again += 1
                self._push(path, node, result.columns)
                return True
            return False
        if result.verdict == "refuted":
            stats.boxes_refuted += 1
        for i, child in enumerate(result.children):
            self._push((*path, i), child, result.columns)
        return True

    def raise_incumbent(self, best: float, counts: Counts) -> bool:
        """Take a placement found elsewhere (rate ``best``) as the incumbent if it is better; the rate then
        rises to max(rho, next_rho(best)), as after a leaf's placement (nothing decided is lost: nodes
        refuted at rho stay refuted at a higher rate). Returns whether it was better."""
        if best <= self.best:
            return False
        self.best, self.counts = best, counts
        self.rho = max(self.rho, self.next_rho(best))
        self.quiet = 0
        return True

    def raise_rate(self, rho: float) -> None:
        """Decide ``rho`` from now on instead, if it is higher (valid as after a new incumbent, see :meth:`take`:
        the open nodes cover every count vector that may sustain the old rate, hence the higher one)."""
        if rho > self.rho:
            self.rho = rho
            self.quiet = 0
            self.stats.raised.append(rho)

    def outcome(self, proven: bool) -> LevelSearch:
        self.stats.seconds = time.perf_counter() - self.start
        return LevelSearch(self.best, self.counts, self.rho, proven, self.stats, self.last)


def search(
    inst: ThroughputInstance,
    best: float,
    counts: Counts | None,
    solve_box: BoxSolver,
    next_rho: Callable[[float], float],
    deadline: float | None = None,
    columns: HasColumns | None = None,
    improve: Callable[[Counts], Counts] | None = None,
) -> LevelSearch:
    """Prove that no placement reaches rho = ``next_rho(best)``, improving the incumbent on the way;
    after a placement better than the incumbent, the search goes on at max(rho, ``next_rho(best)``).
    ``columns``: an LP whose configurations start the root's (the configuration bound's last one);
    ``improve``: a local search applied to every placement a leaf finds (kept when its rate is higher).
    One process; :func:`.parallel.search` runs the same nodes on worker processes."""
    tree = Tree(inst, best, counts, next_rho, columns)
    while tree.open:
        if deadline is not None and time.perf_counter() > deadline:
            return tree.outcome(False)
        path, node, parent = tree.pop()
        result = evaluate(inst, tree.rho, node, parent, solve_box, improve, deadline)
        if not tree.take(path, node, parent, result):
            return tree.outcome(False)
    return tree.outcome(True)


def _branch_component(inst: ThroughputInstance, lp: ConfigurationLP, used: list[list[int]], big: bool) -> int:
    """The component a split divides: with ``big``, the biggest big component with more than one level left, if any;
    else the best by ``BRANCH``."""
    tiers = big_tiers(inst, lp.rho) if big else []
    for c in tiers[-1] if tiers else []:  # every big component, biggest first
        if len(lp.pricing.levels[c]) > 1:
            return c
    return max(range(inst.n_components), key=lambda k: _score(inst, lp, used, k, BRANCH))


_BIG: list[tuple[ThroughputInstance, float, float, list[list[int]]]] = []
"""This process's :func:`big_tiers` of the last instance, rate and ``BIG_SHARE``."""


def big_tiers(inst: ThroughputInstance, rho: float) -> list[list[int]]:
    """The big components at rho, biggest first, in tiers: those that must be replicated, then (if there are
    others) every big component. A component's share is what its whole input on one instance would take of a
    machine, (e_cw l_c rho + MET_cw) / cap_w, on the machine where that is least; it must be replicated when its
    share is above 1, and it is big when its share is above ``BIG_SHARE``: few such instances share a machine,
    the big items of bin packing.

    The configuration LP mixes the configurations of big items fractionally; P(rho) on a tier alone (the others
    left out, their least CPU and tasks reserved on the cluster: :func:`.rate_model.rate_model`) is a small integer
    program that knows which of their counts fit. Measured (stop 23; the proof at R* (1 + 5e-7) from the optimum,
    one process, CPU clock, whole nodes off):

    - 10 x 10 seed 2 (R* = 195.283, a star whose six bolts get 4 R): high9 and mid7 must be replicated (3.34 and
      1.20 machines' worth at R*); at N_9 = 6, N_7 = 3 the three i5 machines that hold a high9 and a mid7 instance
      each are full at R*, so above it no placement of those two fits, whatever the other eight do. The
      configuration LP is feasible there (at R* (1 + 0.005%) for some count vectors), and the search without this
      refuted such vectors one by one, by the thousand: unproven after 1,200 CPU s; with the replicated tier
      split first and checked, 179-235 nodes, 7-9 s. With the big components in one tier (five of them) it took
      1,009-3,104 nodes: the refutation of (6, 3) came once for every count of the three others.
    - 10 x 10 seed 5 (R* = 174.102, a diamond of eight bolts of 0.3-0.9 machines' worth each): nothing must be
      replicated, seven components are big; 3,191 nodes and 61 s with them split first and checked, against 6,743
      nodes and 98-103 s without.
    - seeds 0, 3, 4: 1,273 nodes and 31-33 s against 1,593 and 23-29 s; 333 and 6.4 s against 1,439 and 22 s; 712
      and 10 s against 828 and 13 s."""
    if _BIG and _BIG[0][0] is inst and _BIG[0][1:3] == (rho, BIG_SHARE):
        return _BIG[0][3]
    share = {}
    for c in range(inst.n_components):
        machines = [w for w in range(inst.n_machines) if inst.count_bound(c, w) > 0]
        share[c] = min((inst.coefficient(c, w) * rho + inst.overhead[c][w]) / inst.capacity[w] for w in machines)
    big = sorted((c for c in share if share[c] > BIG_SHARE), key=lambda c: (-share[c], c))
    tiers = [tier for tier in ([c for c in big if share[c] > 1.0], big) if tier]
    if len(tiers) == 2 and tiers[0] == tiers[1]:
        tiers.pop()
    _BIG[:] = [(inst, rho, BIG_SHARE, tiers)]
    return tiers


def _score(inst: ThroughputInstance, lp: ConfigurationLP, used: list[list[int]], k: int, rule: str) -> float:
    """How much splitting component k is worth by ``rule`` (see ``BRANCH``; higher first)."""
    if rule == "spread":
        return used[k][-1] - used[k][0] + len(used[k]) / 1000  # ties: more levels used
    if len(used[k]) < 2:
        return -1.0
    shares = [lp.shares.get((k, n), 0.0) for n in used[k]]
    total = sum(shares)
    load = min(inst.coefficient(k, w) / inst.capacity[w] for w in range(inst.n_machines)) * lp.rho
    if rule == "width":  # the range of one instance's load over the levels used (cheapest class)
        return load / used[k][0] - load / used[k][-1]
    if rule == "product":  # width times spread
        return (load / used[k][0] - load / used[k][-1]) * (used[k][-1] - used[k][0])
    if rule == "size":  # lambda-weighted variance of one instance's load (cheapest class, share of capacity)
        sizes = [load / n for n in used[k]]
        mean = sum(s * x for s, x in zip(shares, sizes, strict=True)) / total
        return sum(s * (x - mean) ** 2 for s, x in zip(shares, sizes, strict=True)) / total
    return 1.0 - max(shares) / total  # "mass": the lambda weight off the component's main level


def _used_levels(lp: ConfigurationLP, n_components: int) -> list[list[int]]:
    used: list[list[int]] = [[] for _ in range(n_components)]
    for (c, n), share in sorted(lp.shares.items()):
        if share > SPREAD:
            used[c].append(n)
    return used


def _outside(levels: Ranges, box: Ranges) -> list[Ranges]:
    """Disjoint ranges covering the count vectors of ``levels`` outside ``box`` (a sub-box of it):
    N_1 below or above box_1; N_1 in box_1 and N_2 below or above box_2; and so on."""
    children = []
    inside = list(levels)
    for c, ((lo, hi), (a, b)) in enumerate(zip(levels, box, strict=True)):
        if lo <= a - 1:
            children.append([*inside[:c], (lo, a - 1), *levels[c + 1 :]])
        if b + 1 <= hi:
            children.append([*inside[:c], (b + 1, hi), *levels[c + 1 :]])
        inside[c] = (a, b)
    return children
