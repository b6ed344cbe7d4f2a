"""Incremental evaluation of ODRP's utility F for search heuristics.

The evaluator (:func:`odrp.kinds.replication.evaluator.evaluate_placement`) recomputes everything
from a whole placement; a local search changes one or two operators at a time, and only a few terms
of F move with them. :class:`PlacementState` keeps a placement together with every quantity of the paper's
QoS model (eqs. 1-21) that depends on it, split so that changing operator i touches only

- i's latency R_{i,U_i} (eq. 1) and its node cost |U_i| C_i Res_i (eq. 2),
- the streams entering and leaving i: their delay d_(U,V) (eq. 4), link cost (eq. 5), network
  metric (eqs. 18-20) and the links they use (eq. 16, kept as reference counts),
- the resources used and replicas held on the nodes of the old and new multisets (eqs. 15, 23),

and then the response time R (eqs. 8-11) by one longest-path pass over the operator DAG (linear in
operators + streams). F (eq. 21) is affine in R, log A, C and Z once the bounds are fixed, so it
is c_0 + c_r R + c_a log A + c_c C + c_z Z; terms whose weight is 0 are never computed.

An operator may be *unplaced* (empty multiset): it then adds no latency, no cost and no links, and
its streams carry nothing. F of such a partial placement is what the greedy compares when it places
replicas one by one. ``planned[i]``, when positive, is the replica count at which i's latency is
taken while fewer replicas are placed (the greedy's target count); it is 0 for a complete placement.

Tests check every value against the evaluator after random sequences of changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from odrp.kinds.replication.instance import OdrpInstance, Placement

Undo = tuple[list[tuple[int, dict[int, int]]], dict[int, tuple[float, float, float, tuple[int, ...]]]]
"""What :meth:`PlacementState.apply` returns and :meth:`PlacementState.revert` takes."""

CAPACITY_TOLERANCE = 1e-9
"""Relative and absolute slack of the capacity check, the evaluator's."""


class Tables:
    """Per-instance constants of the QoS model, precomputed once for fast lookups."""

    def __init__(self, inst: OdrpInstance) -> None:
        self.inst = inst
        n_ops, n_nodes = inst.n_operators, inst.n_nodes
        self.n_ops, self.n_nodes = n_ops, n_nodes
        # R_i(lambda_i / k) for k = 0..k_i (index 0 unused: an unplaced operator has no latency)
        self.latency = [[0.0] + [inst.latency(i, k) for k in range(1, inst.max_replicas[i] + 1)] for i in range(n_ops)]
        self.stable = [[False] + [math.isfinite(x) for x in self.latency[i][1:]] for i in range(n_ops)]
        self.replica_cost = [inst.op_cost[i] * inst.resources[i] for i in range(n_ops)]
        self.resources = inst.resources
        self.capacity = [c * (1 + CAPACITY_TOLERANCE) + CAPACITY_TOLERANCE for c in inst.capacity]
        self.candidates = inst.candidates
        self.candidate_set = [frozenset(c) for c in inst.candidates]
        self.max_replicas = inst.max_replicas
        self.speedup = inst.speedup
        self.delay = inst.delay
        self.streams = [(st.source, st.target) for st in inst.streams]
        self.incident = [tuple(sorted(set(inst.incoming[i]) | set(inst.outgoing[i]))) for i in range(n_ops)]
        self.neighbours = [
            tuple(sorted({a if b == i else b for a, b in (self.streams[s] for s in self.incident[i])}))
            for i in range(n_ops)
        ]
        # per stream and node pair: rate x link cost (eq. 5) and rate x b x pair weight (eqs. 18-20)
        self.cost_rate = [
            [[st.rate * inst.link_cost[u][v] for v in range(n_nodes)] for u in range(n_nodes)] for st in inst.streams
        ]
        self.network_rate = [
            [[st.rate * st.bytes_per_tuple * inst.pair_weight(u, v) for v in range(n_nodes)] for u in range(n_nodes)]
            for st in inst.streams
        ]
        # links whose availability is below 1: only they move log A (eq. 16)
        self.link_log = [math.log(a) for a in inst.link_availability]
        self.lossy_link = [
            [inst.link_id[u][v] if u != v and self.link_log[inst.link_id[u][v]] < 0 else -1 for v in range(n_nodes)]
            for u in range(n_nodes)
        ]
        self.node_log = [math.log(a) for a in inst.node_availability]
        # the longest-path pass: operators in topological order with their incoming (stream, source)
        self.topological = [
            (j, tuple((s, inst.streams[s].source) for s in inst.incoming[j])) for j in inst.topological_order
        ]
        self.reverse_topological = [
            (i, tuple((s, inst.streams[s].target) for s in inst.outgoing[i])) for i in reversed(inst.topological_order)
        ]
        self.sinks = inst.sinks

        # F = c0 + c_r R + c_a log A + c_c C + c_z Z (eq. 21 with the bounds folded in)
        w = inst.weights
        self.c0 = 0.0
        self.c_r = self.c_a = self.c_c = self.c_z = 0.0
        if w["response_time"] > 0:
            lo, hi = inst.bounds["response_time"]
            self.c0 += w["response_time"] * hi / (hi - lo)
            self.c_r = -w["response_time"] / (hi - lo)
        if w["availability"] > 0:
            lo, hi = (math.log(x) for x in inst.bounds["availability"])
            self.c0 -= w["availability"] * lo / (hi - lo)
            self.c_a = w["availability"] / (hi - lo)
        if w["cost"] > 0:
            lo, hi = inst.bounds["cost"]
            self.c0 += w["cost"] * hi / (hi - lo)
            self.c_c = -w["cost"] / (hi - lo)
        if w["network"] > 0:
            lo, hi = inst.bounds["network"]
            self.c0 += w["network"] * hi / (hi - lo)
            self.c_z = -w["network"] / (hi - lo)
        self.with_delay = self.c_r != 0.0
        self.with_availability = self.c_a != 0.0
        self.with_cost = self.c_c != 0.0 and any(c > 0 for rows in self.cost_rate for row in rows for c in row)
        self.with_network = self.c_z != 0.0

    def fits(self, load: float, u: int) -> bool:
        return load <= self.capacity[u]


class PlacementState:
    """A (possibly partial) placement and every term of F that depends on it, kept up to date."""

    def __init__(self, tables: Tables, placement: Placement | None = None) -> None:
        t = self.t = tables
        self.counts: list[dict[int, int]] = [{} for _ in range(t.n_ops)]
        self.total = [0] * t.n_ops
        self.planned = [0] * t.n_ops
        self.load = [0.0] * t.n_nodes
        self.replicas_on = [0] * t.n_nodes
        self.op_latency = [0.0] * t.n_ops
        n_streams = len(t.streams)
        self.stream_delay = [0.0] * n_streams
        self.stream_cost = [0.0] * n_streams
        self.stream_network = [0.0] * n_streams
        self.stream_links: list[tuple[int, ...]] = [() for _ in range(n_streams)]
        self.link_users = [0] * len(t.link_log)
        self.log_availability = 0.0
        self.node_cost = 0.0
        if placement is not None:
            self.apply([(i, dict(p)) for i, p in enumerate(placement) if p])

    # -- changes ---------------------------------------------------------------------------
    def apply(self, changes: Iterable[tuple[int, dict[int, int]]]) -> Undo:
        """Give each operator i of ``changes`` its new multiset (node -> replicas, no zeros).

        Returns what :meth:`revert` needs to restore the state exactly: the old multisets and the
        old values of every stream touched (restored, not recomputed).
        """
        operators = []
        saved: dict[int, tuple[float, float, float, tuple[int, ...]]] = {}
        for i, new in changes:
            operators.append((i, self.counts[i]))
            self._assign(i, new)
            for s in self.t.incident[i]:
                if s not in saved:
                    saved[s] = (self.stream_delay[s], self.stream_cost[s], self.stream_network[s], self.stream_links[s])
        for s in saved:
            self._stream(s)
        return operators, saved

    def revert(self, undo: Undo) -> None:
        """Undo one :meth:`apply` (the most recent one not yet reverted)."""
        operators, saved = undo
        for i, old in reversed(operators):
            self._assign(i, old)
        for s, (delay, cost, network, links) in saved.items():
            if self.stream_links[s]:
                self._use_links(self.stream_links[s], -1)
            if links:
                self._use_links(links, 1)
            self.stream_delay[s], self.stream_cost[s], self.stream_network[s] = delay, cost, network
            self.stream_links[s] = links

    def set_operator(self, i: int, new: dict[int, int]) -> dict[int, int]:
        """Give operator i the multiset ``new``; return the old one."""
        old = self.counts[i]
        self.apply([(i, new)])
        return old

    def placement(self) -> Placement:
        return [dict(c) for c in self.counts]

    def _assign(self, i: int, new: dict[int, int]) -> None:
        """Operator i's own terms: node loads, nodes in use, replica cost, latency (eq. 1)."""
        t = self.t
        res = t.resources[i]
        load, on = self.load, self.replicas_on
        for u, c in self.counts[i].items():
            load[u] -= c * res
            on[u] -= c
            if on[u] == 0:
                self.log_availability -= t.node_log[u]
        for u, c in new.items():
            load[u] += c * res
            if on[u] == 0:
                self.log_availability += t.node_log[u]
            on[u] += c
        self.counts[i] = new
        total = sum(new.values())
        self.node_cost += (total - self.total[i]) * t.replica_cost[i]
        self.total[i] = total
        if total == 0:
            self.op_latency[i] = 0.0
            return
        latency = t.latency[i]
        count = total if total >= self.planned[i] else self.planned[i]
        if count >= len(latency):
            count = len(latency) - 1
        speedup = t.speedup
        slowest = min(speedup[u] for u in new) if len(new) > 1 else speedup[next(iter(new))]
        self.op_latency[i] = latency[count] / slowest

    def _use_links(self, links: tuple[int, ...], step: int) -> None:
        users, log = self.link_users, self.t.link_log
        for ell in links:
            if step < 0:
                users[ell] -= 1
                if users[ell] == 0:
                    self.log_availability -= log[ell]
            else:
                if users[ell] == 0:
                    self.log_availability += log[ell]
                users[ell] += 1

    def _stream(self, s: int) -> None:
        """Stream s's delay (eq. 4), link cost (eq. 5), network metric (eqs. 18-20), lossy links."""
        t = self.t
        i, j = t.streams[s]
        ui, vj = self.counts[i], self.counts[j]
        if self.stream_links[s]:
            self._use_links(self.stream_links[s], -1)
        if not ui or not vj:
            self.stream_delay[s] = self.stream_cost[s] = self.stream_network[s] = 0.0
            self.stream_links[s] = ()
            return
        with_delay, with_cost, with_network, with_links = t.with_delay, t.with_cost, t.with_network, t.with_availability
        delay = cost = network = 0.0
        links: set[int] = set()
        cost_rate, network_rate = t.cost_rate[s], t.network_rate[s]
        for u, cu in ui.items():
            delay_row, cost_row, network_row, lossy_row = t.delay[u], cost_rate[u], network_rate[u], t.lossy_link[u]
            for v, cv in vj.items():
                if with_delay and delay_row[v] > delay:
                    delay = delay_row[v]
                if with_cost:
                    cost += cu * cv * cost_row[v]
                if with_network:
                    network += cu * cv * network_row[v]
                if with_links and lossy_row[v] >= 0:
                    links.add(lossy_row[v])
        share = 1.0 / (self.total[i] * self.total[j])
        self.stream_delay[s] = delay
        self.stream_cost[s] = share * cost
        self.stream_network[s] = share * network
        if links:
            self.stream_links[s] = tuple(links)
            self._use_links(self.stream_links[s], 1)
        else:
            self.stream_links[s] = ()

    # -- the QoS values and F ------------------------------------------------------------------
    def response_time(self) -> float:
        """R (eqs. 8-11): the longest source-to-sink path of operator latencies and stream delays."""
        lat, dly = self.op_latency, self.stream_delay
        start = [0.0] * self.t.n_ops
        for j, incoming in self.t.topological:
            best = 0.0
            for s, i in incoming:
                x = start[i] + lat[i] + dly[s]
                if x > best:
                    best = x
            start[j] = best
        return max(start[i] + lat[i] for i in self.t.sinks)

    def plateau_measure(self) -> float:
        """A tie-breaker for plateaus of F (lower is better), 0 when it cannot help.

        F moves only when the *longest* path shortens or the *last* replica leaves a lossy node
        or link, so single moves often leave it flat. This measures progress towards both:
        |c_r| / n x (sum over operators of the longest source-to-sink path through them) plus
        c_a x (sum over nodes of replicas x -log A_u + sum over links of streams using it x -log A_l).
        """
        t = self.t
        measure = 0.0
        if t.with_delay:
            lat, dly = self.op_latency, self.stream_delay
            start = [0.0] * t.n_ops
            for j, incoming in t.topological:
                start[j] = max((start[i] + lat[i] + dly[s] for s, i in incoming), default=0.0)
            tail = [0.0] * t.n_ops
            for i, outgoing in t.reverse_topological:
                tail[i] = max((dly[s] + lat[j] + tail[j] for s, j in outgoing), default=0.0)
            measure += -t.c_r / t.n_ops * sum(start[i] + lat[i] + tail[i] for i in range(t.n_ops))
        if t.with_availability:
            lost = sum(-t.node_log[u] * r for u, r in enumerate(self.replicas_on))
            lost += sum(-t.link_log[ell] * n for ell, n in enumerate(self.link_users))
            measure += t.c_a * lost
        return measure

    def cost(self) -> float:
        return self.node_cost + sum(self.stream_cost)

    def network(self) -> float:
        return sum(self.stream_network)

    def utility(self) -> float:
        """F of eq. (21) for the current placement."""
        t = self.t
        f = t.c0
        if t.with_delay:
            f += t.c_r * self.response_time()
        if t.with_availability:
            f += t.c_a * self.log_availability
        if t.c_c:
            f += t.c_c * self.cost()
        if t.with_network:
            f += t.c_z * self.network()
        return f

    # -- feasibility -----------------------------------------------------------------------
    def fits(self, i: int, u: int, replicas: int = 1, freed: float = 0.0) -> bool:
        """Whether ``replicas`` more replicas of i fit on u once ``freed`` resources leave u."""
        return self.load[u] - freed + replicas * self.t.resources[i] <= self.t.capacity[u]

    def complete(self) -> bool:
        """Whether every operator has a stable replica count on its candidates within capacity."""
        t = self.t
        return all(
            1 <= self.total[i] <= t.max_replicas[i]
            and t.stable[i][self.total[i]]
            and all(u in t.candidate_set[i] for u in self.counts[i])
            for i in range(t.n_ops)
        ) and all(self.load[u] <= t.capacity[u] for u in range(t.n_nodes))
