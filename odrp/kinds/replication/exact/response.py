"""ODRP, response-time formulation: the compact model's idea with per-node replica counts.

Used (by :func:`odrp.kinds.replication.exact.solve.solve`, formulation ``compact``) when only the
response time and availability carry weight in F (eq. 21; the cost and network weights are 0):
neither depends on how replicas pair up across a stream, so the pair-share variables of
:mod:`.compact` are not needed, and one count per node replaces the binaries per replica level.
The objective is F restricted to those two terms; every term below is exact at integer points.

Variables (k over the stable replica counts of operator i, u over its candidate nodes):

    w[i,k] = 1  iff  operator i has k replicas,
    n[i,u,k] in {0..k}  replicas of i on u when i has k replicas,
    o[i,u] = 1  iff  i has a replica on u (node used),

with   sum_k w[i,k] = 1,   sum_u n[i,u,k] = k w[i,k]   (eq. 26),   capacity
sum_{i,k} Res_i n[i,u,k] <= Res_u   (eq. 23),   the share f[i,u] = sum_k n[i,u,k] / k of i's
replicas on u, and o[i,u] >= f[i,u] (a replica on u marks u as used; o only appears in lower
bounds of quantities that are minimised, so it is exact).

- Operator latency (eqs. 1, 10): rho_i = sum_k R_i(lambda_i/k) w[i,k] / S when i's candidates are
  equally fast; otherwise rho_i >= R_i(lambda_i/k)/S_u (w[i,k] + o[i,u] - 1) for every u, k (the
  slowest used node counts) and rho_i >= sum_{u,k} R_i(lambda_i/k)/(k S_u) n[i,u,k] (the
  replica-weighted average of the per-node latencies never exceeds the slowest).
- Stream delay (eqs. 4, 11): delta_s >= d_uv (o[i,u] + o[j,v] - 1), exact as in :mod:`.compact`.
- Response time (eqs. 8, 9, 22): potentials t_j >= t_i + rho_i + delta_ij, r >= t_i + rho_i at the
  sinks.
- Availability (eqs. 15, 16): node and link activations as in :mod:`.compact`.

Valid inequalities (each holds at every integer point, so the optimum is unchanged; the first
three are switched by fields of :class:`~odrp.kinds.replication.exact.settings.OdrpSettings`):

- Transport bound (``transport_delay_bound``, as in :mod:`.compact`): the largest delay between
  used nodes is at least the delay of any coupling of the two replica distributions f[i,.] and
  f[j,.], in particular of the cheapest one (coupling variables per stream and node pair).
- Round-trip bounds (``round_trip_bounds``, those of :mod:`.compact`: a path through a replica of i
  on u pays the delays from the sources' nodes to u and from u to the sinks' nodes), and their
  replica-weighted average r >= a_i + rho_i + b_i + sum_u RT(i,u) f[i,u], valid because r exceeds
  the bound of every used node and the shares sum to 1.
- Path bounds (``path_bounds``, from :mod:`.reduction`): r >= LB(i,u) o[i,u] and
  r >= sum_u LB(i,u) f[i,u], valid because every placement using (i, u) has response time at
  least LB(i, u).
- With a ceiling R0 on the response time of every placement at least as good as a known one
  (the start of :mod:`.start`; R0 is its response time when w_a = 0): r <= R0, and
  o[i,u] + o[j,v] <= 1 for the stream node pairs and n[i,u,k] = 0 for the replica counts of
  :func:`.reduction.reduce`; they keep every such placement, the known one included.
"""

from __future__ import annotations

import pyomo.environ as pyo

from odrp.core.solvers.timing import BuildClock
from odrp.kinds.replication.exact.compact import log_availability, response_time_rows, round_trip_rows, round_trips
from odrp.kinds.replication.exact.reduction import lower_bounds
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.instance import OdrpInstance, Placement


def serves(inst: OdrpInstance) -> bool:
    """True when only the response time and availability carry weight (this model's objective)."""
    return inst.weights["cost"] == 0 and inst.weights["network"] == 0


def build(
    inst: OdrpInstance,
    settings: OdrpSettings | None = None,
    *,
    conflicts: tuple[tuple[int, int, int, int], ...] = (),
    excluded: tuple[tuple[int, int, int], ...] = (),
    max_response_time: float | None = None,
    clock: BuildClock | None = None,
) -> pyo.ConcreteModel:
    """The response-time model of ``inst``; every operator must have a stable replica count.

    ``settings`` chooses the valid inequalities (None: the defaults); ``conflicts``, ``excluded``
    and ``max_response_time`` are the pruning rows of a known placement (see the module docstring).
    """
    settings = settings or OdrpSettings()
    clock = clock or BuildClock(None)
    m = pyo.ConcreteModel(name=f"odrp-response-{inst.name}")
    ops = range(inst.n_operators)
    cand = inst.candidates
    counts = {i: inst.replica_counts(i) for i in ops}

    # ---- placement: counts, replicas per node, nodes used --------------------------------
    m.w = pyo.Var([(i, k) for i in ops for k in counts[i]], domain=pyo.Binary)
    m.n = pyo.Var(
        [(i, u, k) for i in ops for u in cand[i] for k in counts[i]],
        domain=pyo.NonNegativeIntegers,
        bounds=lambda m, i, u, k: (0, k),
    )
    for i, u, k in excluded:
        m.n[i, u, k].setub(0)
    m.o = pyo.Var([(i, u) for i in ops for u in cand[i]], domain=pyo.Binary)
    share = {(i, u): sum(m.n[i, u, k] / k for k in counts[i]) for i in ops for u in cand[i]}

    m.one_count = pyo.Constraint(ops, rule=lambda m, i: sum(m.w[i, k] for k in counts[i]) == 1)
    m.replicas = pyo.Constraint(
        [(i, k) for i in ops for k in counts[i]],
        rule=lambda m, i, k: sum(m.n[i, u, k] for u in cand[i]) == k * m.w[i, k],
    )
    m.node_used = pyo.Constraint([(i, u) for i in ops for u in cand[i]], rule=lambda m, i, u: m.o[i, u] >= share[i, u])
    hosts = {u: [i for i in ops if u in cand[i]] for u in range(inst.n_nodes)}
    m.capacity = pyo.Constraint(
        [u for u in hosts if sum(inst.resources[i] * max(counts[i]) for i in hosts[u]) > inst.capacity[u]],
        rule=lambda m, u: (
            sum(inst.resources[i] * m.n[i, u, k] for i in hosts[u] for k in counts[i]) <= inst.capacity[u]
        ),
    )
    m.conflict = pyo.Constraint(
        range(len(conflicts)),
        rule=lambda m, c: m.o[conflicts[c][0], conflicts[c][1]] + m.o[conflicts[c][2], conflicts[c][3]] <= 1,
    )

    clock.stage()
    terms = []
    if inst.weights["response_time"] > 0:
        r = _response_time(m, inst, counts, share, settings, clock)
        if max_response_time is not None:
            m.r.setub(max_response_time)
        terms.append(inst.weights["response_time"] * inst.normalised("response_time", r))
    if inst.weights["availability"] > 0:
        terms.append(
            inst.weights["availability"]
            * inst.normalised("availability", log_availability(m, inst, lambda i, u: m.o[i, u]))
        )
    m.utility = pyo.Objective(expr=sum(terms) if terms else 0.0, sense=pyo.maximize)
    return m


def _response_time(m, inst: OdrpInstance, counts, share, settings: OdrpSettings, clock: BuildClock):
    ops = range(inst.n_operators)
    cand = inst.candidates
    m.rho = pyo.Var(ops, domain=pyo.NonNegativeReals)
    m.latency = pyo.ConstraintList()
    for i in ops:
        speeds = {inst.speedup[u] for u in cand[i]}
        if len(speeds) == 1:
            speed = speeds.pop()
            m.latency.add(m.rho[i] >= sum(inst.latency(i, k) / speed * m.w[i, k] for k in counts[i]))
            continue
        m.latency.add(
            m.rho[i]
            >= sum(inst.latency(i, k) / (k * inst.speedup[u]) * m.n[i, u, k] for u in cand[i] for k in counts[i])
        )
        for u in cand[i]:
            for k in counts[i]:
                m.latency.add(m.rho[i] >= inst.latency(i, k) / inst.speedup[u] * (m.w[i, k] + m.o[i, u] - 1))

    streams = range(len(inst.streams))
    m.delta = pyo.Var(streams, domain=pyo.NonNegativeReals)
    m.delay = pyo.ConstraintList()
    for s, st in enumerate(inst.streams):
        clock.stage()
        for u in cand[st.source]:
            for v in cand[st.target]:
                d = inst.delay[u][v]
                if u != v and d > 0:
                    m.delay.add(m.delta[s] >= d * (m.o[st.source, u] + m.o[st.target, v] - 1))
    if settings.transport_delay_bound:
        _coupling_bounds(m, inst, share)

    clock.stage()
    response_time_rows(m, inst)
    if settings.round_trip_bounds:
        _round_trip_bounds(m, inst, share)
    if settings.path_bounds:
        bound = lower_bounds(inst)
        m.path_bound = pyo.ConstraintList()
        for i in ops:
            if len(cand[i]) > 1:
                m.path_bound.add(m.r >= sum(bound[i, u] * share[i, u] for u in cand[i]))
            for u in cand[i]:
                m.path_bound.add(m.r >= bound[i, u] * m.o[i, u])
    return m.r


def _coupling_bounds(m, inst: OdrpInstance, share) -> None:
    cand = inst.candidates
    pairs = [(s, u, v) for s, st in enumerate(inst.streams) for u in cand[st.source] for v in cand[st.target]]
    m.coupling = pyo.Var(pairs, domain=pyo.NonNegativeReals)
    m.delay_bound = pyo.ConstraintList()
    for s, st in enumerate(inst.streams):
        i, j = st.source, st.target
        for u in cand[i]:
            m.delay_bound.add(sum(m.coupling[s, u, v] for v in cand[j]) == share[i, u])
        for v in cand[j]:
            m.delay_bound.add(sum(m.coupling[s, u, v] for u in cand[i]) == share[j, v])
        m.delay_bound.add(
            m.delta[s] >= sum(inst.delay[u][v] * m.coupling[s, u, v] for u in cand[i] for v in cand[j] if u != v)
        )


def _round_trip_bounds(m, inst: OdrpInstance, share) -> None:
    trip = round_trips(inst)
    through = round_trip_rows(m, inst, trip, lambda i, u: m.o[i, u])
    for i in range(inst.n_operators):
        if len(trip[i]) > 1 and any(rt > 0 for rt in trip[i].values()):
            m.round_trip.add(m.r >= through[i] + sum(rt * share[i, u] for u, rt in trip[i].items()))


def placement(m: pyo.ConcreteModel, inst: OdrpInstance) -> Placement:
    """Read the placement (replicas per operator and node) from a solved response-time model."""
    out: Placement = [{} for _ in range(inst.n_operators)]
    for (i, u, _k), var in m.n.items():
        if var.value is not None and var.value > 0.5:
            out[i][u] = out[i].get(u, 0) + round(var.value)
    return out
