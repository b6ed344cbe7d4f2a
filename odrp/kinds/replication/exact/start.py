"""A quick primal start for the exact response-time model: beam search, then local search.

The exact model uses the start twice: its response time R0 prunes node choices before the model
is built (:mod:`.reduction`), and R0 is an upper bound on the model's response time. Neither
needs the start to be good for correctness (only feasible); a good start makes the proof shorter.

Placements considered: every operator at a stable replica count k on one candidate node, or
split over two candidate nodes.

1. Beam search: operators in topological order, each given every placement that fits the
   capacity left (the fewest replicas of pinned operators are reserved on their node); a
   partial placement is ranked by the largest "start + latency + T(i, u)" over its operators,
   T being the tail bound of :mod:`.reduction` (a lower bound on the response time of every
   completion), and the ``start_width`` best are kept.
2. Local search from the beam's placement, scored by F of eq. (21) for the response-time and
   availability terms (the only ones the response-time model serves), computed from the same
   definitions as the evaluator (eqs. 1, 4, 8-11, 15-16); ties are broken by the mean
   completion time of the sinks, which lets the search move off plateaus of equal maximum. Moves:

- relocate one operator to any placement that fits the free capacity;
- exchange the nodes of two operators that each sit on one node;
- exchange the whole contents of two nodes;

and, between descents, a kick (an exchange of two random operators' nodes and up to two random
relocations) from the current placement, returning to the best one every ``start_walk`` kicks. The
descents use one-node placements; a last descent uses all. Deterministic for a given ``start_seed``
as long as neither limit cuts it short. The tunables are fields of
:class:`~odrp.kinds.replication.exact.settings.OdrpSettings` (``start_*``).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

from odrp.core.budget import Budget
from odrp.kinds.replication.exact.reduction import heads_and_tails
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance, Placement

#: Two scores closer than this are equal (F lies in [0, 1]).
_TIE = 1e-12


@dataclass(frozen=True)
class Option:
    """One placement of an operator: nodes, replicas on each, and its latency (eq. 1)."""

    nodes: tuple[int, ...]
    replicas: tuple[int, ...]
    latency: float


class _Scorer:
    def __init__(self, inst: OdrpInstance) -> None:
        self.inst = inst
        self.options: list[list[Option]] = []
        self.index: list[dict[tuple, int]] = []
        for i in range(inst.n_operators):
            opts = []
            for k in inst.replica_counts(i):
                base = inst.latency(i, k)
                for u in inst.candidates[i]:
                    opts.append(Option((u,), (k,), base / inst.speedup[u]))
                for a in range(1, k // 2 + 1):
                    for u in inst.candidates[i]:
                        for v in inst.candidates[i]:
                            if u != v and (a < k - a or u < v):
                                opts.append(Option((u, v), (a, k - a), base / min(inst.speedup[u], inst.speedup[v])))
            self.options.append(opts)
            self.index.append({(o.nodes, o.replicas): n for n, o in enumerate(opts)})
        self.single = [[n for n, o in enumerate(opts) if len(o.nodes) == 1] for opts in self.options]
        self.log_node = [math.log(a) for a in inst.node_availability]
        self.log_link = [math.log(a) for a in inst.link_availability]
        self.with_availability = inst.weights["availability"] > 0

    def score(self, x: list[int]) -> tuple[float, float]:
        """(F, mean sink completion time) of the placement with option indices ``x``."""
        inst = self.inst
        opts = [self.options[i][x[i]] for i in range(len(x))]
        start = [0.0] * len(x)
        links: set[int] = set()
        for j in inst.topological_order:
            for s in inst.incoming[j]:
                i = inst.streams[s].source
                delay = 0.0
                for u in opts[i].nodes:
                    for v in opts[j].nodes:
                        if u != v:
                            delay = max(delay, inst.delay[u][v])
                            links.add(inst.link_id[u][v])
                start[j] = max(start[j], start[i] + opts[i].latency + delay)
        finish = [start[i] + opts[i].latency for i in inst.sinks]
        log_a = 0.0
        if self.with_availability:
            nodes = {u for o in opts for u in o.nodes}
            log_a = sum(self.log_node[u] for u in nodes) + sum(self.log_link[ell] for ell in links)
        return inst.utility(max(finish), log_a, 0.0, 0.0), sum(finish) / len(finish)

    def load(self, x: list[int]) -> list[float]:
        used = [0.0] * self.inst.n_nodes
        for i, n in enumerate(x):
            o = self.options[i][n]
            for u, c in zip(o.nodes, o.replicas, strict=True):
                used[u] += c * self.inst.resources[i]
        return used

    def fits(self, x: list[int], used: list[float], changes: dict[int, int]) -> list[float] | None:
        """The node loads after giving operator i option ``changes[i]``, or None if over capacity."""
        new = list(used)
        for i, n in changes.items():
            for opt, sign in ((self.options[i][x[i]], -1), (self.options[i][n], 1)):
                for u, c in zip(opt.nodes, opt.replicas, strict=True):
                    new[u] += sign * c * self.inst.resources[i]
        cap = self.inst.capacity
        return new if all(new[u] <= cap[u] * (1 + 1e-9) + 1e-9 for u in range(len(new))) else None


@dataclass
class _Limit:
    """When the start must stop: its wall-clock share of the exact method's time limit, or its CPU cap.

    The CPU cap (``time.process_time()``) keeps the start's work the same on a loaded machine, where
    wall-clock time runs faster than the process's own time.
    """

    wall: Budget
    cpu_end: float

    @classmethod
    def of(cls, wall: Budget, cpu_seconds: float) -> _Limit:
        return cls(wall, time.process_time() + cpu_seconds)

    def over(self) -> bool:
        return time.process_time() >= self.cpu_end or self.wall.expired()


def _better(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] > b[0] + _TIE or (a[0] >= b[0] - _TIE and a[1] < b[1] - _TIE)


def _swap(sc: _Scorer, x: list[int], i: int, j: int) -> dict[int, int] | None:
    """Options that put single-node operators i and j on each other's node, if allowed."""
    oi, oj = sc.options[i][x[i]], sc.options[j][x[j]]
    if len(oi.nodes) != 1 or len(oj.nodes) != 1 or oi.nodes == oj.nodes:
        return None
    ni = sc.index[i].get((oj.nodes, oi.replicas))
    nj = sc.index[j].get((oi.nodes, oj.replicas))
    return None if ni is None or nj is None else {i: ni, j: nj}


def _exchange(sc: _Scorer, x: list[int], u: int, v: int) -> dict[int, int] | None:
    """Options that exchange everything on nodes u and v, if every operator may move."""
    changes = {}
    for i, n in enumerate(x):
        o = sc.options[i][n]
        if u in o.nodes or v in o.nodes:
            nodes = tuple(v if w == u else u if w == v else w for w in o.nodes)
            key = (nodes, o.replicas) if (nodes, o.replicas) in sc.index[i] else (nodes[::-1], o.replicas[::-1])
            if key not in sc.index[i]:
                return None
            changes[i] = sc.index[i][key]
    return changes


def _descend(sc: _Scorer, x: list[int], rng: random.Random, allowed: list[list[int]], limit: _Limit) -> tuple:
    """First-improvement descent over the three moves until none improves."""
    used = sc.load(x)
    best = sc.score(x)
    n_ops, n_nodes = len(x), sc.inst.n_nodes

    def neighbours():
        for i in rng.sample(range(n_ops), n_ops):
            for n in allowed[i]:
                if n != x[i]:
                    yield {i: n}
        for i in range(n_ops):
            for j in range(i + 1, n_ops):
                yield _swap(sc, x, i, j)
        for u in range(n_nodes):
            for v in range(u + 1, n_nodes):
                yield _exchange(sc, x, u, v)

    improved = True
    while improved and not limit.over():
        improved = False
        for changes in neighbours():
            if not changes:
                continue
            new_used = sc.fits(x, used, changes)
            if new_used is None:
                continue
            old = {i: x[i] for i in changes}
            for i, n in changes.items():
                x[i] = n
            value = sc.score(x)
            if _better(value, best):
                best, used, improved = value, new_used, True
            else:
                for i, n in old.items():
                    x[i] = n
    return x, best


def _first_fit(sc: _Scorer, rng: random.Random) -> list[int] | None:
    """Each operator at its fewest stable replicas on a random candidate node with room."""
    inst = sc.inst
    x = [0] * inst.n_operators
    used = [0.0] * inst.n_nodes
    for i in sorted(range(inst.n_operators), key=lambda i: len(inst.candidates[i])):
        k = inst.replica_counts(i)[0]
        room = [
            n
            for n in sc.single[i]
            if sc.options[i][n].replicas[0] == k
            and used[sc.options[i][n].nodes[0]] + k * inst.resources[i] <= inst.capacity[sc.options[i][n].nodes[0]]
        ]
        if not room:
            return None
        x[i] = rng.choice(room)
        used[sc.options[i][x[i]].nodes[0]] += k * inst.resources[i]
    return x


def _beam(sc: _Scorer, width: int, limit: _Limit) -> list[int] | None:
    """The best complete placement of a beam search ranked by the tail bound (step 1)."""
    inst = sc.inst
    _, tail = heads_and_tails(inst, inst.candidates)
    reserved = {
        i: inst.replica_counts(i)[0] * inst.resources[i]
        for i in range(inst.n_operators)
        if len(inst.candidates[i]) == 1
    }
    loads = [0.0] * inst.n_nodes
    for i, amount in reserved.items():
        loads[inst.candidates[i][0]] += amount
    beam = [(0.0, 0.0, {}, {}, loads)]  # (bound, total load, option of each op, start of each op, node loads)
    for j in inst.topological_order:
        if limit.over():
            return None
        grown = []
        for bound, _total, x, began, loads in beam:
            for n, opt in enumerate(sc.options[j]):
                new_loads = list(loads)
                if j in reserved:
                    new_loads[inst.candidates[j][0]] -= reserved[j]
                for u, c in zip(opt.nodes, opt.replicas, strict=True):
                    new_loads[u] += c * inst.resources[j]
                if any(new_loads[u] > inst.capacity[u] * (1 + 1e-9) + 1e-9 for u in opt.nodes):
                    continue
                start_j = 0.0
                for s in inst.incoming[j]:
                    i = inst.streams[s].source
                    before = sc.options[i][x[i]]
                    delay = max(inst.delay[u][v] for u in before.nodes for v in opt.nodes)
                    start_j = max(start_j, began[i] + before.latency + delay)
                reach = start_j + opt.latency + max(tail[j, u] for u in opt.nodes)
                grown.append((max(bound, reach), sum(new_loads), {**x, j: n}, {**began, j: start_j}, new_loads))
        grown.sort(key=lambda state: state[:2])
        beam = grown[:width]
        if not beam:
            return None
    return [beam[0][2][i] for i in range(inst.n_operators)]


def local_search(
    inst: OdrpInstance, settings: OdrpSettings | None = None, wall: Budget | None = None
) -> tuple[Placement, float] | None:
    """A good placement and its F (response time and availability terms), or None if none found.

    ``settings.start_width`` is the beam's width, ``settings.start_kicks`` the number of kicks of the
    local search, ``settings.start_walk`` the kicks between returns to the best placement;
    ``settings.start_cpu_seconds`` (CPU time) and ``wall`` (wall clock; None: no limit) cap the whole
    search, and the last descent may take a quarter more of each. Every operator must have a stable
    replica count. ``settings`` None: the defaults.
    """
    settings = settings or OdrpSettings()
    wall = wall or Budget()
    rng = random.Random(settings.start_seed)
    sc = _Scorer(inst)
    limit = _Limit.of(wall, settings.start_cpu_seconds)
    x = _beam(sc, settings.start_width, limit)
    for _ in range(settings.start_first_fit_tries):
        if x is not None:
            break
        x = _first_fit(sc, rng)
    if x is None:
        return None
    x, best = _descend(sc, x, rng, sc.single, limit)
    best_x = list(x)
    current = list(x)
    for kick in range(settings.start_kicks):
        if limit.over():
            break
        y = list(best_x if kick % settings.start_walk == 0 else current)
        moves = [_swap(sc, y, *rng.sample(range(len(y)), 2))] if len(y) > 1 else []
        moves += [{i: rng.choice(sc.single[i])} for i in rng.sample(range(len(y)), min(len(y), rng.choice((0, 1, 2))))]
        used = sc.load(y)
        for changes in moves:
            new_used = sc.fits(y, used, changes) if changes else None
            if new_used is not None:
                for op, n in changes.items():
                    y[op] = n
                used = new_used
        y, value = _descend(sc, y, rng, sc.single, limit)
        current = y
        if _better(value, best):
            best, best_x = value, list(y)
    all_options = [list(range(len(opts))) for opts in sc.options]
    quarter = Budget(None if wall.time_limit is None else wall.time_limit / 4)
    last = _Limit.of(quarter, settings.start_cpu_seconds / 4)
    best_x, best = _descend(sc, best_x, rng, all_options, last)
    placement = [
        dict(zip(sc.options[i][n].nodes, sc.options[i][n].replicas, strict=True)) for i, n in enumerate(best_x)
    ]
    return placement, best[0]
