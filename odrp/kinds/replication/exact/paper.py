"""ODRP, the paper's ILP as written (Cardellini et al. 2017, section 4.3, eqs. 22-32): the textbook model.

This is the model a practitioner writes from the paper, and the toolkit's ``textbook`` formulation
(``paper`` is accepted as another name for it): no starts, no valid inequalities, no reductions.

Variables: x_{i,U} for every operator i and every multiset U of its candidate nodes with
|U| <= k_i (eq. 29); y_{(i,j),(U,V)} for every stream and every pair of multisets of its two
operators (eq. 30); z_u per node (eq. 31) and z_l per link (eq. 32); r, the response time.

    max F'(x, y, z, r)                                               (eq. 21 with R replaced by r)
    r >= sum_p sum_U R_{i_p,U} x_{i_p,U} + sum_p sum_{U,V} d_(U,V) y_{(i_p,i_p+1),(U,V)}
                                                      for every source-sink path pi  (eq. 22)
    Res_u >= sum_i sum_U U(u) Res_i x_{i,U}                              for every node (eq. 23)
    M z_u >= sum_i sum_{U : u in U} x_{i,U}                                              (eq. 24)
    N z_l >= sum_(i,j) sum_{(U,V) using l} y_{(i,j),(U,V)}                               (eq. 25)
    sum_U x_{i,U} = 1                                                                     (eq. 26)
    x_{i,U} = sum_V y_{(i,j),(U,V)},   x_{j,V} = sum_U y_{(i,j),(U,V)}               (eqs. 27-28)

with R_{i,U} (eq. 1), d_(U,V) (eq. 4), the stream cost (eq. 5), and the network metric (eqs.
18-20) evaluated per multiset (pair) when the model is built. Our readings: multisets whose
replicas would be unstable (lambda_i/|U| >= mu_i) get no variable (R_{i,U} is infinite); z_l is
one variable per link of the instance (a link given once serves both directions); M is the number
of operators and N the number of streams. The model exists to reproduce the paper and to
cross-check the compact formulation; it grows as (multisets)^2 per stream and suits small cases.
Its size is known before it is built (:func:`odrp.kinds.replication.exact.size.paper_size`), and
its building looks at the clock (:class:`~odrp.core.solvers.timing.BuildClock`).
"""

from __future__ import annotations

import itertools
import logging
import math
from collections import Counter

import networkx as nx
import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.core.solvers.timing import BuildClock
from odrp.kinds.replication.instance import OdrpInstance, Placement

Multiset = tuple[int, ...]
"""A multiset of nodes as a sorted tuple with repetitions: (0, 0, 3) = two replicas on 0, one on 3."""


def multisets(inst: OdrpInstance, i: int) -> list[Multiset]:
    """P(V_res^i; k_i) restricted to stable sizes."""
    return [ms for k in inst.replica_counts(i) for ms in itertools.combinations_with_replacement(inst.candidates[i], k)]


def source_sink_paths(inst: OdrpInstance) -> list[tuple[list[int], list[int]]]:
    """Every source-to-sink path of the application graph (Pi_dsp): its operators and its streams.

    Sources by index, each one's paths depth first, streams in their order.
    """
    graph, sinks = inst.graph, set(inst.sinks)
    paths: list[tuple[list[int], list[int]]] = []
    for i in range(inst.n_operators):
        if not inst.incoming[i]:
            for edges in nx.all_simple_edge_paths(graph, i, sinks):
                paths.append(([i, *(v for _, v in edges)], [graph.edges[e]["index"] for e in edges]))
    return paths


def build(inst: OdrpInstance, clock: BuildClock | None = None) -> pyo.ConcreteModel:
    """The ILP above; ``clock`` (None: no deadline) stops the building with OutOfTime past its deadline."""
    # the clock may stop the building inside a constraint's rule: Pyomo would log that as an error
    logger = logging.getLogger("pyomo.core")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        return _build(inst, clock or BuildClock(None))
    finally:
        logger.setLevel(level)


def _build(inst: OdrpInstance, clock: BuildClock) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel(name=f"odrp-paper-{inst.name}")
    ops = range(inst.n_operators)
    U = {i: multisets(inst, i) for i in ops}
    counter = {(i, ms): Counter(ms) for i in ops for ms in U[i]}

    m.X = pyo.Set(dimen=2, initialize=[(i, q) for i in ops for q in range(len(U[i]))])
    m.x = pyo.Var(m.X, domain=pyo.Binary)
    pairs = []
    for s, st in enumerate(inst.streams):
        for a in range(len(U[st.source])):
            clock.check()
            pairs.extend((s, a, b) for b in range(len(U[st.target])))
    m.Y = pyo.Set(dimen=3, initialize=pairs)
    clock.stage()
    m.y = pyo.Var(m.Y, domain=pyo.Binary)
    clock.stage()
    m.z_node = pyo.Var(range(inst.n_nodes), domain=pyo.Binary)
    m.z_link = pyo.Var(range(len(inst.link_availability)), domain=pyo.Binary)
    m.r = pyo.Var(domain=pyo.NonNegativeReals)

    def op_latency(i: int, q: int) -> float:  # eq. (1)
        ms = U[i][q]
        return inst.latency(i, len(ms)) / min(inst.speedup[u] for u in ms)

    def stream_delay(s: int, a: int, b: int) -> float:  # eq. (4)
        st = inst.streams[s]
        return max(inst.delay[u][v] for u in U[st.source][a] for v in U[st.target][b])

    def pair_sum(s: int, a: int, b: int, weight) -> float:
        """sum over replica pairs (with multiplicity) of lambda_(U,V) * weight(u, v), eqs. (5), (7)."""
        clock.check()
        st = inst.streams[s]
        ua, vb = counter[st.source, U[st.source][a]], counter[st.target, U[st.target][b]]
        share = st.rate / (len(U[st.source][a]) * len(U[st.target][b]))
        return sum(share * cu * cv * weight(u, v) for u, cu in ua.items() for v, cv in vb.items())

    # (22) one row per source-sink path
    m.response = pyo.ConstraintList()
    for visited, path in source_sink_paths(inst):
        clock.stage()
        latency = sum(op_latency(i, q) * m.x[i, q] for i in visited for q in range(len(U[i])))
        delay = sum(
            stream_delay(s, a, b) * m.y[s, a, b]
            for s in path
            for a in range(len(U[inst.streams[s].source]))
            for b in range(len(U[inst.streams[s].target]))
        )
        m.response.add(m.r >= latency + delay)
    clock.stage()

    # (23) capacity
    def capacity(m: pyo.ConcreteModel, u: int):
        clock.stage()
        terms = [counter[i, ms][u] * inst.resources[i] * m.x[i, q] for i in ops for q, ms in enumerate(U[i]) if u in ms]
        return sum(terms) <= inst.capacity[u] if terms else pyo.Constraint.Skip  # no replica can use u

    m.capacity = pyo.Constraint(range(inst.n_nodes), rule=capacity)
    # (24), (25) activations with big constants M and N
    big_m, big_n = inst.n_operators, max(1, len(inst.streams))
    m.node_activation = pyo.Constraint(
        range(inst.n_nodes),
        rule=lambda m, u: (
            clock.stage() or big_m * m.z_node[u] >= sum(m.x[i, q] for i in ops for q, ms in enumerate(U[i]) if u in ms)
        ),
    )
    link_terms: dict[int, list] = {ell: [] for ell in range(len(inst.link_availability))}
    for s, a, b in m.Y:
        clock.check()
        st = inst.streams[s]
        links = {inst.link_id[u][v] for u in set(U[st.source][a]) for v in set(U[st.target][b]) if u != v}
        for ell in links:
            link_terms[ell].append(m.y[s, a, b])
    m.link_activation = pyo.Constraint(
        range(len(inst.link_availability)),
        rule=lambda m, ell: (
            clock.stage() or (big_n * m.z_link[ell] >= sum(link_terms[ell]) if link_terms[ell] else pyo.Constraint.Skip)
        ),
    )
    clock.stage()
    # (26) one multiset per operator
    m.assign = pyo.Constraint(ops, rule=lambda m, i: sum(m.x[i, q] for q in range(len(U[i]))) == 1)
    # (27), (28) y = x_i AND x_j
    m.link_out = pyo.Constraint(
        [(s, a) for s, st in enumerate(inst.streams) for a in range(len(U[st.source]))],
        rule=lambda m, s, a: (
            clock.check()
            or (m.x[inst.streams[s].source, a] == sum(m.y[s, a, b] for b in range(len(U[inst.streams[s].target]))))
        ),
    )
    clock.stage()
    m.link_in = pyo.Constraint(
        [(s, b) for s, st in enumerate(inst.streams) for b in range(len(U[st.target]))],
        rule=lambda m, s, b: (
            clock.check()
            or (m.x[inst.streams[s].target, b] == sum(m.y[s, a, b] for a in range(len(U[inst.streams[s].source]))))
        ),
    )

    clock.stage()
    terms = []
    w = inst.weights
    if w["response_time"] > 0:
        terms.append(w["response_time"] * inst.normalised("response_time", m.r))
    if w["availability"] > 0:
        log_a = sum(math.log(inst.node_availability[u]) * m.z_node[u] for u in range(inst.n_nodes))
        log_a += sum(math.log(a) * m.z_link[ell] for ell, a in enumerate(inst.link_availability))
        terms.append(w["availability"] * inst.normalised("availability", log_a))
    if w["cost"] > 0:  # eqs. (2), (5), (12)-(14)
        cost = sum(len(ms) * inst.op_cost[i] * inst.resources[i] * m.x[i, q] for i in ops for q, ms in enumerate(U[i]))
        cost += sum(
            coefficient * m.y[s, a, b]
            for s, a, b in m.Y
            if (coefficient := pair_sum(s, a, b, lambda u, v: inst.link_cost[u][v])) != 0
        )
        terms.append(w["cost"] * inst.normalised("cost", cost))
    if w["network"] > 0:  # eqs. (17)-(20)
        network = sum(
            coefficient * m.y[s, a, b]
            for s, a, b in m.Y
            if (coefficient := inst.streams[s].bytes_per_tuple * pair_sum(s, a, b, inst.pair_weight)) != 0
        )
        terms.append(w["network"] * inst.normalised("network", network))
    m.utility = pyo.Objective(expr=sum(terms) if terms else 0.0, sense=pyo.maximize)
    m.multisets = U  # kept for reading the solution
    return m


def placement(m: pyo.ConcreteModel, inst: OdrpInstance) -> Placement:
    out: Placement = [{} for _ in range(inst.n_operators)]
    for (i, q), var in m.x.items():
        if var.value is not None and var.value > 0.5:
            out[i] = dict(Counter(m.multisets[i][q]))
    return out


def set_start(m: pyo.ConcreteModel, inst: OdrpInstance, start: Placement) -> None:
    """Give x, y, z their values at a placement (the warm-start contract of :mod:`odrp.core.exact`).

    x[i,q] = 1 for the multiset q of U_i; y[s,a,b] = 1 for the pair of multisets of each stream;
    z_u = 1 for the nodes holding a replica; z_l = 1 for the links some stream's replica pair
    crosses (eq. 25 forces it); everything else 0. r is left to the solver.
    """
    clear_values(m)
    chosen = []
    for i, counts in enumerate(start):
        multiset = tuple(sorted(u for u, c in counts.items() for _ in range(c)))
        q = m.multisets[i].index(multiset)
        m.x[i, q].set_value(1)
        chosen.append(q)
    for s, st in enumerate(inst.streams):
        m.y[s, chosen[st.source], chosen[st.target]].set_value(1)
        for u in start[st.source]:
            for v in start[st.target]:
                if u != v:
                    m.z_link[inst.link_id[u][v]].set_value(1)
    for u in {u for counts in start for u in counts}:
        m.z_node[u].set_value(1)
