"""ODRP, compact exact formulation (ours; the same optimum as the paper's ILP, eqs. 22-32).

Model: maximise F (eq. 21) over placements, each operator i a multiset U_i of its candidate nodes
with a stable size 1 <= |U_i| <= k_i, within node capacities (eq. 23). The paper enumerates every
multiset per operator (x_{i,U}) and every pair of multisets per stream (y_{(i,j),(U,V)}). Every QoS
metric of eqs. (1)-(20) depends on a multiset U only through (a) its size |U|, (b) which nodes it
uses and (c) the share U(u)/|U| of replicas on each node, so one family of binaries suffices:

    h[i,u,k,m] = 1  iff  operator i has k replicas, m >= 1 of them on node u,
    w[i,k]     = 1  iff  operator i has k replicas                 (k among the stable counts),

with   sum_k w[i,k] = 1,   sum_m h[i,u,k,m] <= w[i,k],   sum_{u,m} m h[i,u,k,m] = k w[i,k]   (eq. 26),
and    capacity sum_{i,k,m} m Res_i h[i,u,k,m] <= Res_u   (eq. 23).
From these, o[i,u] = sum_{k,m} h (node used) and f[i,u] = sum_{k,m} (m/k) h (share of i's replicas
on u) are columns defined by one row each (operators with k_i = 1 use h[i,u,1,1] itself), so that
every later row holds one entry for each.

- Operator latency (eqs. 1, 10): rho_i = sum_k R_i(lambda_i/k) w[i,k] / S when i's candidates are
  equally fast; otherwise rho_i >= R_i(lambda_i/k)/S_u * sum_m h[i,u,k,m] for every u, k (exact:
  the slowest used node counts), plus the replica-weighted average of R_i(lambda_i/k)/S_u, which
  never exceeds the maximum and tightens the LP relaxation.
- Stream delay (eqs. 4, 11): delta_s >= d_uv (o[i,u] + o[j,v] - 1), exact because delta only
  raises the response time, which is minimised.
- Response time (eqs. 8, 9, 22): longest-path potentials t_j >= t_i + rho_i + delta_ij, one row per
  stream instead of one per source-sink path, and r >= t_i + rho_i at the sinks.
- Cost (eqs. 2, 5, 12-14) and network metric (eqs. 17-20) need the replica-pair shares
  P[s,u,v] = f[i,u] f[j,v] of each stream: :mod:`.pairs` writes them exactly linear (a coupling
  with both marginals where one end always sits on one node; otherwise the binaries of one end,
  merged by share m/k, times the distribution of the other). When only the inter-node traffic counts
  on a stream (pair weight b_ij for every u != v, no link cost) the diagonal alone is needed:
  T_ij = b_ij lambda_ij (1 - sum_u P[s,u,u]), and since it is maximised, upper bounds
  g <= h, sum_{k,m} g <= f[j,u] suffice.
- Availability (eqs. 15, 16): node and link activations z >= o[i,u] and z >= o[i,u] + o[j,v] - 1,
  exact because log A <= 0 is maximised.
- Objective: F of eq. (21), terms with zero weight left out.

Valid inequalities, each switched by a field of
:class:`~odrp.kinds.replication.exact.settings.OdrpSettings` (both on by default):

- Transport bound (``transport_delay_bound``): the largest delay between used nodes is at least
  the average delay under any coupling of the two replica distributions f[i,.] and f[j,.], in
  particular the cheapest one (an earth-mover bound; coupling variables per stream and node pair).
  Where a stream has pair shares P, P is that coupling (no further columns); where both its ends
  always sit on one node, P is 1 on the pair they use and the bound is the delay itself, so the
  stream's rows delta_s >= d_uv (o[i,u] + o[j,v] - 1) are left out.
- Round-trip bounds (``round_trip_bounds``): with latency-only potentials a (from the sources) and
  b (to the sinks), every operator i lies on a path of latency a_i + rho_i + b_i; if i has a
  replica on node u, that path's stream delays add up to at least RT(i,u) = (shortest delay from
  a candidate node of a source reaching i to u) + (shortest delay from u to a candidate node of a
  sink reached from i). Hence r >= a_i + rho_i + b_i + RT(i,u) o[i,u], and, when exactly one
  candidate p of i has RT(i,p) = 0 (pinned sources and sinks),
  r >= a_i + rho_i + b_i + min_{u != p} RT(i,u) (1 - sum_k h[i,p,k,k]): leaving p costs a round
  trip. They cut off the LP's mixtures of "everything on the pinned node" with "everything
  elsewhere", which capacity forbids but the relaxation allows.

Every term is exact at integer points and the inequalities hold at every placement, so the optimum
equals the paper's (tests check it against the paper's formulation and brute force).
"""

from __future__ import annotations

import math

import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.core.solvers.timing import BuildClock
from odrp.kinds.replication.exact import pairs
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance, Placement


def build(
    inst: OdrpInstance, settings: OdrpSettings | None = None, clock: BuildClock | None = None
) -> pyo.ConcreteModel:
    """The compact ODRP model of ``inst``; every operator must have a stable replica count.

    ``settings`` chooses the valid inequalities (``transport_delay_bound``, ``round_trip_bounds``;
    None: the defaults); ``clock`` (None: no deadline) stops the building with OutOfTime past its
    deadline.
    """
    settings = settings or OdrpSettings()
    clock = clock or BuildClock(None)
    m = pyo.ConcreteModel(name=f"odrp-compact-{inst.name}")
    ops = range(inst.n_operators)
    counts = {i: inst.replica_counts(i) for i in ops}
    levels = {i: [(k, c) for k in counts[i] for c in range(1, k + 1)] for i in ops}

    # ---- placement variables (h, w) and their structure ---------------------------------
    m.H = pyo.Set(dimen=4, initialize=[(i, u, k, c) for i in ops for u in inst.candidates[i] for k, c in levels[i]])
    m.W = pyo.Set(dimen=2, initialize=[(i, k) for i in ops for k in counts[i]])
    m.h = pyo.Var(m.H, domain=pyo.Binary)
    m.w = pyo.Var(m.W, domain=pyo.Binary)

    m.one_count = pyo.Constraint(ops, rule=lambda m, i: sum(m.w[i, k] for k in counts[i]) == 1)
    m.one_level = pyo.Constraint(
        [(i, u, k) for i in ops for u in inst.candidates[i] for k in counts[i] if k > 1],
        rule=lambda m, i, u, k: sum(m.h[i, u, k, c] for c in range(1, k + 1)) <= m.w[i, k],
    )
    m.replicas = pyo.Constraint(
        m.W,
        rule=lambda m, i, k: (
            sum(c * m.h[i, u, k, c] for u in inst.candidates[i] for c in range(1, k + 1)) == k * m.w[i, k]
        ),
    )

    # o[i,u] (node used) and f[i,u] (share of i's replicas on u) as columns defined by one row each,
    # so that the many rows below hold one entry for each instead of the sum over i's levels
    spread = [(i, u) for i in ops if len(levels[i]) > 1 for u in inst.candidates[i]]
    m.o = pyo.Var(spread, bounds=(0, 1))
    m.f = pyo.Var(spread, bounds=(0, 1))
    m.o_def = pyo.Constraint(spread, rule=lambda m, i, u: m.o[i, u] == sum(m.h[i, u, k, c] for k, c in levels[i]))
    m.f_def = pyo.Constraint(
        spread, rule=lambda m, i, u: m.f[i, u] == sum((c / k) * m.h[i, u, k, c] for k, c in levels[i])
    )

    def used(i: int, u: int):
        return m.h[i, u, 1, 1] if len(levels[i]) == 1 else m.o[i, u]

    def share(i: int, u: int):
        return m.h[i, u, 1, 1] if len(levels[i]) == 1 else m.f[i, u]

    def slots(i: int, u: int):
        return sum(c * m.h[i, u, k, c] for k, c in levels[i])

    hosts = {u: [i for i in ops if u in inst.candidates[i]] for u in range(inst.n_nodes)}
    m.capacity = pyo.Constraint(
        [u for u in hosts if sum(inst.resources[i] * max(counts[i]) for i in hosts[u]) > inst.capacity[u]],
        rule=lambda m, u: sum(inst.resources[i] * slots(i, u) for i in hosts[u]) <= inst.capacity[u],
    )

    clock.stage()
    terms = []
    w = inst.weights
    cost_weight = w["cost"] > 0
    network_weight = w["network"] > 0
    full, diagonal = pairs.pair_streams(inst)
    pair_shares = pairs.build(m, inst, full, levels, share, clock)
    m.pair_shares = pair_shares
    if w["response_time"] > 0:
        r = _response_time(m, inst, counts, levels, used, share, settings, clock, pair_shares)
        terms.append(w["response_time"] * inst.normalised("response_time", r))
    clock.stage()
    if w["availability"] > 0:
        terms.append(w["availability"] * inst.normalised("availability", log_availability(m, inst, used)))
    clock.stage()
    if cost_weight or network_weight:
        link_cost, network = _pair_terms(inst, pair_shares, cost_weight, network_weight)
        if diagonal:
            network += _colocated_traffic(m, inst, diagonal, levels, share, clock)
        if cost_weight:
            node_cost = sum(inst.op_cost[i] * inst.resources[i] * k * m.w[i, k] for i in ops for k in counts[i])
            terms.append(w["cost"] * inst.normalised("cost", node_cost + link_cost))
        if network_weight:
            terms.append(w["network"] * inst.normalised("network", network))
    m.utility = pyo.Objective(expr=sum(terms) if terms else 0.0, sense=pyo.maximize)
    return m


def _response_time(
    m, inst: OdrpInstance, counts, levels, used, share, settings: OdrpSettings, clock: BuildClock, pair_shares
):
    ops = range(inst.n_operators)
    m.rho = pyo.Var(ops, domain=pyo.NonNegativeReals)
    m.latency = pyo.ConstraintList()
    for i in ops:
        speeds = {inst.speedup[u] for u in inst.candidates[i]}
        if len(speeds) == 1:
            speed = speeds.pop()
            m.latency.add(m.rho[i] >= sum(inst.latency(i, k) / speed * m.w[i, k] for k in counts[i]))
        else:
            # the slowest used node sets the latency (eq. 1); its replica-weighted average is a
            # lower bound that is much tighter in the LP relaxation than the per-node rows alone
            m.latency.add(
                m.rho[i]
                >= sum(
                    (c / k) * inst.latency(i, k) / inst.speedup[u] * m.h[i, u, k, c]
                    for u in inst.candidates[i]
                    for k, c in levels[i]
                )
            )
            for u in inst.candidates[i]:
                for k in counts[i]:
                    coefficient = inst.latency(i, k) / inst.speedup[u]
                    if coefficient > 0:
                        m.latency.add(m.rho[i] >= coefficient * sum(m.h[i, u, k, c] for c in range(1, k + 1)))

    streams = range(len(inst.streams))
    m.delta = pyo.Var(streams, domain=pyo.NonNegativeReals)
    m.delay = pyo.ConstraintList()
    # the pair shares of two point masses make the transport bound below the stream delay itself
    exact = pair_shares.point_to_point if settings.transport_delay_bound else set()
    for s, st in enumerate(inst.streams):
        clock.stage()
        if s in exact:
            continue
        i, j = st.source, st.target
        for u in inst.candidates[i]:
            for v in inst.candidates[j]:
                d = inst.delay[u][v]
                if u != v and d > 0:
                    m.delay.add(m.delta[s] >= d * (used(i, u) + used(j, v) - 1))
    clock.stage()
    if settings.transport_delay_bound:  # the cheapest coupling's delay (module docstring)
        m.delay_bound = pyo.ConstraintList()
        for s, p in pair_shares.share.items():  # the pair shares are a coupling already
            m.delay_bound.add(m.delta[s] >= sum(inst.delay[u][v] * x for (u, v), x in p.items() if u != v))
        others = [s for s in streams if s not in pair_shares.share]
        pairs_ = [
            (s, u, v)
            for s in others
            for u in inst.candidates[inst.streams[s].source]
            for v in inst.candidates[inst.streams[s].target]
        ]
        m.coupling = pyo.Var(pairs_, domain=pyo.NonNegativeReals)
        m.coupling_out = pyo.Constraint(
            [(s, u) for s in others for u in inst.candidates[inst.streams[s].source]],
            rule=lambda m, s, u: (
                sum(m.coupling[s, u, v] for v in inst.candidates[inst.streams[s].target])
                == share(inst.streams[s].source, u)
            ),
        )
        m.coupling_in = pyo.Constraint(
            [(s, v) for s in others for v in inst.candidates[inst.streams[s].target]],
            rule=lambda m, s, v: (
                sum(m.coupling[s, u, v] for u in inst.candidates[inst.streams[s].source])
                == share(inst.streams[s].target, v)
            ),
        )
        for s in others:
            i, j = inst.streams[s].source, inst.streams[s].target
            m.delay_bound.add(
                m.delta[s]
                >= sum(
                    inst.delay[u][v] * m.coupling[s, u, v]
                    for u in inst.candidates[i]
                    for v in inst.candidates[j]
                    if u != v
                )
            )

    clock.stage()
    response_time_rows(m, inst)
    if settings.round_trip_bounds:
        _round_trip_bounds(m, inst, counts, used)
    return m.r


def _round_trip_bounds(m, inst: OdrpInstance, counts, used) -> None:
    trip = round_trips(inst)
    through = round_trip_rows(m, inst, trip, used)
    for i in range(inst.n_operators):
        home = [u for u, rt in trip[i].items() if rt == 0]
        if len(home) == 1 and len(trip[i]) > 1:
            p = home[0]
            at_home = sum(m.h[i, p, k, k] for k in counts[i])
            m.round_trip.add(m.r >= through[i] + min(rt for rt in trip[i].values() if rt > 0) * (1 - at_home))


def response_time_rows(m, inst: OdrpInstance) -> None:
    """Response time R (eqs. 8, 9, 22) as longest-path potentials: t_j >= t_i + rho_i + delta_ij per
    stream, r >= t_i + rho_i at the sinks (one row per stream instead of one per path); needs
    ``m.rho`` and ``m.delta``. Shared by this model and :mod:`.response`."""
    m.start = pyo.Var(range(inst.n_operators), domain=pyo.NonNegativeReals)
    m.r = pyo.Var(domain=pyo.NonNegativeReals)
    m.path = pyo.Constraint(
        range(len(inst.streams)),
        rule=lambda m, s: (
            m.start[inst.streams[s].target]
            >= m.start[inst.streams[s].source] + m.rho[inst.streams[s].source] + m.delta[s]
        ),
    )
    m.sink = pyo.Constraint(inst.sinks, rule=lambda m, i: m.r >= m.start[i] + m.rho[i])


def round_trip_rows(m, inst: OdrpInstance, trip: list[dict[int, float]], used) -> list:
    """Round-trip bounds r >= a_i + rho_i + b_i + RT(i, u) used(i, u), with a_i and b_i the
    latency-only longest paths from the sources to i and from i to the sinks (variables
    ``m.before``, ``m.after``); returns a_i + rho_i + b_i per operator for further rows, which go to
    ``m.round_trip`` like these. Shared by this model and :mod:`.response`."""
    ops = range(inst.n_operators)
    m.before = pyo.Var(ops, domain=pyo.NonNegativeReals)  # a_i: latency-only potential from the sources
    m.after = pyo.Var(ops, domain=pyo.NonNegativeReals)  # b_i: latency-only potential to the sinks
    m.latency_paths = pyo.ConstraintList()
    for st in inst.streams:
        m.latency_paths.add(m.before[st.target] >= m.before[st.source] + m.rho[st.source])
        m.latency_paths.add(m.after[st.source] >= m.rho[st.target] + m.after[st.target])
    m.round_trip = pyo.ConstraintList()
    through = [m.before[i] + m.rho[i] + m.after[i] for i in ops]
    for i in ops:
        for u, rt in trip[i].items():
            if rt > 0:
                m.round_trip.add(m.r >= through[i] + rt * used(i, u))
    return through


def round_trips(inst: OdrpInstance) -> list[dict[int, float]]:
    """RT(i, u): least total stream delay of a source-to-sink path through a replica of i on u."""
    n = inst.n_nodes
    sp = [list(row) for row in inst.delay]
    for k in range(n):  # Floyd-Warshall on the node delays
        for a in range(n):
            for b in range(n):
                if sp[a][k] + sp[k][b] < sp[a][b]:
                    sp[a][b] = sp[a][k] + sp[k][b]
    ops = range(inst.n_operators)
    sources: list[set[int]] = [set() for _ in ops]  # the sources that reach i
    for i in inst.topological_order:
        if not inst.incoming[i]:
            sources[i].add(i)
        for s in inst.outgoing[i]:
            sources[inst.streams[s].target] |= sources[i]
    sinks: list[set[int]] = [set() for _ in ops]  # the sinks that i reaches
    for i in reversed(inst.topological_order):
        if not inst.outgoing[i]:
            sinks[i].add(i)
        for s in inst.incoming[i]:
            sinks[inst.streams[s].source] |= sinks[i]
    out = []
    for i in ops:
        trip = {}
        for u in inst.candidates[i]:
            arrive = min(sp[c][u] for s in sources[i] for c in inst.candidates[s])
            leave = min(sp[u][c] for t in sinks[i] for c in inst.candidates[t])
            trip[u] = arrive + leave
        out.append(trip)
    return out


def log_availability(m, inst: OdrpInstance, used):
    """log A of eqs. (15)-(16) as a linear expression: a node or link activation for every lossy node and link,
    at least ``used(i, u)`` (operator i on node u) for each operator on the node and each stream across the link."""
    ops = range(inst.n_operators)
    lossy_nodes = [u for u in range(inst.n_nodes) if inst.node_availability[u] < 1]
    m.node_on = pyo.Var(lossy_nodes, bounds=(0, 1))
    m.node_activation = pyo.Constraint(
        [(u, i) for u in lossy_nodes for i in ops if u in inst.candidates[i]],
        rule=lambda m, u, i: m.node_on[u] >= used(i, u),
    )
    lossy_links = sorted({ell for ell, a in enumerate(inst.link_availability) if a < 1})
    m.link_on = pyo.Var(lossy_links, bounds=(0, 1))
    m.link_activation = pyo.ConstraintList()
    for st in inst.streams:
        for u in inst.candidates[st.source]:
            for v in inst.candidates[st.target]:
                if u != v and inst.link_availability[inst.link_id[u][v]] < 1:
                    ell = inst.link_id[u][v]
                    m.link_activation.add(m.link_on[ell] >= used(st.source, u) + used(st.target, v) - 1)
    return sum(math.log(inst.node_availability[u]) * m.node_on[u] for u in lossy_nodes) + sum(
        math.log(inst.link_availability[ell]) * m.link_on[ell] for ell in lossy_links
    )


def _colocated_traffic(m, inst: OdrpInstance, streams: list[int], levels, share, clock: BuildClock):
    """Traffic T (eq. 18) of ``streams``: b lambda (1 - co-located share) per stream, the co-located
    share maximised, so upper bounds g <= h, sum g <= f[j,u] suffice."""
    network = 0.0
    m.colocated = pyo.VarList(domain=pyo.NonNegativeReals)
    m.colocated_rows = pyo.ConstraintList()
    for s in streams:
        clock.stage()
        st = inst.streams[s]
        i, j = st.source, st.target
        colocated = 0.0
        for u in set(inst.candidates[i]) & set(inst.candidates[j]):
            g = {lv: m.colocated.add() for lv in levels[i]}
            for (k, c), var in g.items():
                m.colocated_rows.add(var <= m.h[i, u, k, c])
            m.colocated_rows.add(sum(g.values()) <= share(j, u))
            colocated += sum((c / k) * var for (k, c), var in g.items())
        network += st.bytes_per_tuple * st.rate * (1 - colocated)
    return network


def _pair_terms(inst: OdrpInstance, pair_shares: pairs.PairShares, with_cost: bool, with_network: bool):
    """Link cost (eq. 5) and network metric (eqs. 18-20) from the replica-pair shares."""
    link_cost = 0.0
    network = 0.0
    for s, p in pair_shares.share.items():
        st = inst.streams[s]
        for (u, v), x in p.items():
            if with_cost and inst.link_cost[u][v] > 0:
                link_cost += st.rate * inst.link_cost[u][v] * x
            if with_network and u != v:
                network += st.bytes_per_tuple * st.rate * inst.pair_weight(u, v) * x
    return link_cost, network


def placement(m: pyo.ConcreteModel, inst: OdrpInstance) -> Placement:
    """Read the placement (replicas per operator and node) from a solved compact model."""
    out: Placement = [{} for _ in range(inst.n_operators)]
    for (i, u, _k, c), var in m.h.items():
        if var.value is not None and var.value > 0.5:
            out[i][u] = out[i].get(u, 0) + c
    return out


def set_start(m: pyo.ConcreteModel, inst: OdrpInstance, start: Placement) -> None:
    """Give h and w their values at a placement (the warm-start contract of :mod:`odrp.core.exact`).

    Operator i with k = |U_i| replicas, m of them on node u: w[i,k] = 1 and h[i,u,k,m] = 1; every
    other h and w is 0. The continuous variables are left to the solver.
    """
    clear_values(m)
    for i, counts in enumerate(start):
        k = sum(counts.values())
        m.w[i, k].set_value(1)
        for u, c in counts.items():
            m.h[i, u, k, c].set_value(1)
