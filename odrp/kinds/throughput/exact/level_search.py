"""Branch and bound over instance counts, with the configuration bound at every node.

The configuration LP (:mod:`.config_bound`) may mix a component's count levels fractionally (half of
c at N_c = 2, half at N_c = 5): its instances then come in two sizes, which is an uneven split of
c's input that no placement has (eq. 5 splits IR_c evenly). Branching on the levels removes that,
and its leaves, P(rho) with one level per component, are small integer programs that decide fast.

**Decision at a rate rho.** A *node* is a range [lo_c, hi_c] of N_c for every component; the root
holds every count (1 to :func:`.bounds.count_range`'s maximum). At a node:

- the configuration LP with lambda restricted to the node's levels refutes rho (``refutes() is
  True``): no placement whose counts lie in the node sustains rho, the node is *pruned*. This is a
  proof: with fewer levels D(u) is a minimum over fewer terms, and P(u) still bounds
  sum_w phi(q_w) for every placement in the node (see :class:`.config_bound.ConfigurationLP`); the
  node's ranges are also narrowed by the closed-form ranges and the fluid LP at R = rho with the
  ranges imposed (a relaxation of the node's placements, :func:`.bounds.fluid_count_ranges`);
- else, when the node fixes the count of every component of a tier of *big* components and of no
  other big one (:mod:`.big`), P(rho) on that tier alone, the other components left out with their
  least CPU and task slots reserved on the cluster (a yes-or-no model), is a relaxation of the node's
  placements: infeasible, the node is pruned (:class:`.big.BigChecks`, which remembers the answers);
- if the LP's lambda puts every component at one level n_c (a *leaf*), P(rho) is solved on the
  vector n alone (``solve_box``: the level form with those ranges; no time limit but the deadline).
  A placement found sustains rho: the new incumbent. Infeasible: the node minus n is split into
  disjoint children (:func:`_outside`: N_1 below or above n_1; N_1 = n_1 and N_2 below or above
  n_2; ...);
- else the biggest big component with more than one level left, if any, or a component the LP
  spreads over several levels (:func:`score`: by default the one whose used levels spread widest) is
  split at its lambda-weighted mean level into two disjoint ranges, the child with more lambda weight
  explored first.

Children partition their parent's counts minus what was decided, so when the stack is empty every
count vector was refuted: no placement sustains rho, and R* < rho. After a new incumbent R(x) the
rate rises to max(rho, next_rho(R(x))) (the caller's bisection target or R(x) (1 + g/2)); nodes
pruned at rho stay pruned at a higher rate (feasibility is monotone in the rate, and the narrowed
ranges only shrink as the rate grows), the node being processed is evaluated again.

**Search.** Depth first: memory stays small and leaves, hence incumbents, come early. Each node's LP
starts from its parent's columns that still fit (and from the rate's pool of configurations); the
root from the caller's (the configuration bound's last LP, or the previous search's).

**Two drivers, one node.** :func:`evaluate` decides one node at a rate and :class:`Tree` applies the
decision (open nodes, incumbent, rate); :func:`search` alternates them in this process, and
:func:`.parallel.search` hands the nodes to worker processes, where a node may be decided at a rate
below the current one (the argument that this keeps the proof is in :mod:`.parallel`).

**A search that stalls.** A bisection target just below R* is the worst case of the level search: it
can only end by finding a placement in the thin band [rho, R*] (it cannot refute rho), and where depth
first search meets one depends on the LP's degenerate lambda shares. So a search whose rate has not
changed for ``settings.stall_nodes`` nodes asks its targets to raise the rate
(:meth:`.targets.Targets.stalled`); raised, it becomes a proof at a rate above R* (nothing decided is
lost, as after a new incumbent) and ends.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import report
from odrp.kinds.throughput.exact.bounds import count_range
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.config_bound import Columns, ConfigurationLP, HasColumns
from odrp.kinds.throughput.exact.rate_model import BoxSolver, Ranges
from odrp.kinds.throughput.exact.settings import LevelSearchSettings, ThroughputSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

__all__ = ["Columns", "HasColumns", "LevelSearch", "NodeResult", "SearchStats", "Tree", "evaluate", "search"]

SPREAD = 1e-6
"""A lambda share above this counts as a level the LP uses."""


@dataclass
class SearchStats:
    nodes: int = 0
    pruned: int = 0
    leaves: int = 0
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
    big: int = 0
    """Nodes refuted by P(rho) on the big components (also counted in ``pruned``)."""

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
    """``pruned`` (the LP, or P(rho) on the big components, refutes rho on the node), ``again`` (the deadline
    came before the LP's first master: the node is still to do), ``found`` (a leaf's P(rho) found a placement),
    ``refuted`` (a leaf's vector is infeasible: ``children`` cover the node minus the vector), ``undecided`` (a
    leaf's P(rho) ended without a decision) or ``split`` (``children``: two disjoint ranges)."""
    columns: HasColumns
    children: list[Ranges] = field(default_factory=list)
    """In stack order: the last is explored first."""
    found: Counts | None = None
    leaf: bool = False
    undecided_lp: bool = False
    big: bool = False
    """Pruned by P(rho) on the big components, not by the LP."""


def evaluate(
    inst: ThroughputInstance,
    rho: float,
    node: Ranges,
    parent: HasColumns | None,
    solve_box: BoxSolver,
    cache: Cache,
    settings: LevelSearchSettings = LevelSearchSettings(),
    improve: Callable[[Counts], Counts] | None = None,
    deadline: float | None = None,
) -> NodeResult:
    """The node LP at rho on ``node`` (columns from ``parent``; tables, pools and big checks from ``cache``), then
    the leaf's P(rho) or the split, as ``settings`` say (``big``, ``branch``); ``improve``: a local search applied
    to every placement a leaf finds (kept when its rate is higher)."""
    lp = ConfigurationLP(inst, rho, parent, node, tables=cache.tables)
    verdict = lp.refutes(deadline)
    if verdict is True:
        return NodeResult(rho, "pruned", lp)
    levels = [(r.start, r.stop - 1) for r in lp.pricing.levels]  # the node, narrowed at rho
    used = _used_levels(lp, inst.n_components)
    if not all(used):  # the LP stopped at the deadline before its first master
        return NodeResult(rho, "again", lp)
    if settings.big in ("refute", "both") and cache.big.refutes(inst, rho, levels, solve_box, deadline):
        return NodeResult(rho, "pruned", lp, big=True)
    undecided_lp = False
    if verdict is None and not all(len(u) == 1 for u in used):
        undecided_lp = True
        if all(lo == hi for lo, hi in levels):
            used = [[lo] for lo, _ in levels]
    if all(len(u) == 1 for u in used):  # a leaf: P(rho) on its vector
        point = [(u[0], u[0]) for u in used]
        status, found = solve_box(rho, point, deadline)
        found = _improved(inst, found, improve)
        if found is not None:
            return NodeResult(rho, "found", lp, found=found, leaf=True, undecided_lp=undecided_lp)
        if status != "infeasible":
            return NodeResult(rho, "undecided", lp, leaf=True, undecided_lp=undecided_lp)
        children = list(reversed(_outside(levels, point)))
        return NodeResult(rho, "refuted", lp, children, leaf=True, undecided_lp=undecided_lp)
    tiers = cache.big.tiers(inst, rho) if settings.big in ("first", "both") else []
    children = _split(lp, used, levels, _branch_component(inst, lp, used, tiers, settings.branch))
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


def _branch_component(
    inst: ThroughputInstance, lp: ConfigurationLP, used: list[list[int]], tiers: list[list[int]], branch: str
) -> int:
    """The component a split divides: the biggest big component (``tiers``, biggest first) with more than one
    level left, if any; else the best by the rule ``branch`` (:func:`score`)."""
    for c in tiers[-1] if tiers else []:  # every big component, biggest first
        if len(lp.pricing.levels[c]) > 1:
            return c
    return max(range(inst.n_components), key=lambda k: score(inst, lp, used, k, branch))


def score(inst: ThroughputInstance, lp: ConfigurationLP, used: list[list[int]], k: int, rule: str) -> float:
    """How much splitting component k is worth by ``rule`` (higher first), among the components the LP spreads
    over several levels n_min < ... < n_max (L: one instance's load at N_c = 1 on the cheapest machine,
    rho e_cw l_c / cap_w, so that L / n is the size of an instance at level n): ``spread`` (the largest
    n_max - n_min), ``product`` (the largest (L / n_min - L / n_max) (n_max - n_min)), ``width`` (the largest
    L / n_min - L / n_max: how far apart the instance sizes the LP mixes are), ``size`` (the largest
    lambda-weighted variance of L / n) or ``mass`` (the most lambda weight off the component's main level)."""
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


TreePath = tuple[int, ...]
"""A node's place in the tree: its parent's path and its index among the parent's children."""


class Tree:
    """The open nodes, the incumbent and the rate: what the search knows between nodes.

    The open nodes are kept in depth-first order by their paths (a child of p gets p + (i,), the last
    child explored first): :meth:`pop` takes the greatest path, which is the top of a depth-first stack.
    With one process this is that stack; with several, a node whose answer comes late still has its
    children explored where depth-first search would explore them, so the tree is searched in the same
    order whatever the timing (a worker takes the next node of that order: a look-ahead).

    ``next_rho`` gives the rate to decide from the incumbent's; if it has a method ``stalled(rho)``, the
    search asks it for a higher rate after ``settings.stall_nodes`` nodes without a change of rate."""

    def __init__(
        self,
        inst: ThroughputInstance,
        best: float,
        counts: Counts | None,
        next_rho: Callable[[float], float],
        columns: HasColumns | None,
        processes: int = 1,
        settings: LevelSearchSettings = LevelSearchSettings(),
    ) -> None:
        self.inst = inst
        self.best, self.counts = best, counts
        self.next_rho = next_rho
        self.rho = next_rho(best)
        self.last = columns
        self.stats = SearchStats(processes=processes)
        self.settings = settings
        self.stalled: Callable[[float], float | None] | None = getattr(next_rho, "stalled", None)
        self.quiet = 0
        """Nodes taken since the rate last changed."""
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
        if self.stalled is not None and self.quiet >= self.settings.stall_nodes:  # no new incumbent for long
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
        stats.leaves += result.leaf
        if result.verdict == "found":
            assert result.found is not None
            found = rate(self.inst, result.found)
            if found > self.best:
                self.best, self.counts = found, result.found
                report.incumbent(self.inst, result.found, "level search")
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
        report.incumbent(self.inst, counts, "count descent")
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
    settings: LevelSearchSettings = LevelSearchSettings(),
    cache: Cache | None = None,
) -> LevelSearch:
    """Prove that no placement reaches rho = ``next_rho(best)``, improving the incumbent on the way;
    after a placement better than the incumbent, the search goes on at max(rho, ``next_rho(best)``).
    ``columns``: an LP whose configurations start the root's (the configuration bound's last one);
    ``improve``: a local search applied to every placement a leaf finds (kept when its rate is higher);
    ``cache``: the solve's tables, pools and big checks (None: a new one for this search).
    One process; :func:`.parallel.search` runs the same nodes on worker processes."""
    cache = Cache.of(ThroughputSettings(level_search=settings)) if cache is None else cache
    tree = Tree(inst, best, counts, next_rho, columns, settings=settings)
    while tree.open:
        if deadline is not None and time.perf_counter() > deadline:
            return tree.outcome(False)
        path, node, parent = tree.pop()
        result = evaluate(inst, tree.rho, node, parent, solve_box, cache, settings, improve, deadline)
        if not tree.take(path, node, parent, result):
            return tree.outcome(False)
    return tree.outcome(True)
