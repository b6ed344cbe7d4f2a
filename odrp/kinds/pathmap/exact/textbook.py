"""The textbook pathmap model: assignment binaries, and each pair's routing cost linearised plainly.

The model a practitioner writes: place each component on a server, pay for each consecutive pair
the least cost D_p(u, v) of a path within the bandwidth and hop limits between the servers of its
two ends (the tables of :mod:`odrp.kinds.pathmap.routes`, the problem's data), and linearise the
product of two placements with the usual rows. No stage pruning, no flow formulation (the ``auto``
model, :mod:`.model`, is the layered flow, whose LP relaxation is exact for a chain without
capacities).

Ends e = 0..m+1 of the chain: e = 0 the source s_R (pinned), e = 1..m the components, e = m+1 the
sink t_R (pinned); V_e the servers end e may use (a component: the servers hosting its service
with room for it alone; the source and sink: their own server). Pair p joins ends p and p + 1.

    x[e,u] in {0,1}    end e on server u in V_e            (x of the pinned ends is the constant 1)
    y[p,u,v] >= 0      pair p runs from u to v              (p = 1..m-1, the pairs of two components)

    min  sum_{v} D_0(s_R, v) x[1,v] + sum_{u} D_m(u, t_R) x[m,u] + sum_{p=1..m-1} sum_{u,v} D_p(u,v) y[p,u,v]
    s.t. sum_{u in V_e} x[e,u] = 1                                  every component e
         sum_e C_req(e) x[e,u] <= C_av(u)                           every server (section 3.1)
         y[p,u,v] >= x[p,u] + x[p+1,v] - 1                          D_p(u, v) finite
         x[p,u] + x[p+1,v] <= 1                                     D_p(u, v) infinite
         x[1,v] = 0 when D_0(s_R, v) is infinite, x[m,u] = 0 when D_m(u, t_R) is

(with a single component, m = 1, both pinned pairs bound x[1,.]). Exact because y appears with a
non-negative cost in a minimised objective. The solution is read, and a warm start set, on x alone,
as for the layered flow (:func:`.model.mapping`, :func:`.model.set_start`).
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from odrp.kinds.pathmap.instance import PathmapInstance
from odrp.kinds.pathmap.routes import Routes

Size = tuple[int, int, int]
"""(variables, constraints, nonzeros)."""


def size(inst: PathmapInstance) -> Size:
    """The model's size in closed form (before it is built): every pair of servers of two components."""
    cand = [len(inst.candidates(i)) for i in range(inst.n_components)]
    pairs = [cand[i] * cand[i + 1] for i in range(inst.n_components - 1)]
    servers = inst.n_servers
    variables = sum(cand) + sum(pairs)
    constraints = inst.n_components + servers + sum(pairs) + 2 * servers
    nonzeros = sum(cand) + sum(cand) + 3 * sum(pairs) + 2 * servers
    return variables, constraints, nonzeros


def build(inst: PathmapInstance, tables: list[Routes]) -> pyo.ConcreteModel:
    """The model of the module docstring (``tables``: :func:`~odrp.kinds.pathmap.routes.pair_routes`)."""
    m_components = inst.n_components
    comps = range(m_components)
    cand = [inst.candidates(i) for i in comps]
    model = pyo.ConcreteModel(name=f"pathmap-textbook-{inst.name}")
    model.x = pyo.Var([(i, u) for i in comps for u in cand[i]], domain=pyo.Binary)
    pairs = [(i, u, v) for i in range(m_components - 1) for u in cand[i] for v in cand[i + 1]]
    finite = [(i, u, v) for i, u, v in pairs if np.isfinite(tables[i + 1].cost[u, v])]
    model.y = pyo.Var(finite, domain=pyo.NonNegativeReals)

    model.assign = pyo.Constraint(comps, rule=lambda m, i: sum(m.x[i, u] for u in cand[i]) == 1)
    hosted: dict[int, list[int]] = {}
    for i in comps:
        for u in cand[i]:
            hosted.setdefault(u, []).append(i)
    model.capacity = pyo.Constraint(
        sorted(hosted), rule=lambda m, u: sum(inst.cpu[i] * m.x[i, u] for i in hosted[u]) <= inst.capacity[u]
    )
    model.pair = pyo.Constraint(finite, rule=lambda m, i, u, v: m.y[i, u, v] >= m.x[i, u] + m.x[i + 1, v] - 1)
    model.forbidden = pyo.Constraint(
        [(i, u, v) for i, u, v in pairs if not np.isfinite(tables[i + 1].cost[u, v])],
        rule=lambda m, i, u, v: m.x[i, u] + m.x[i + 1, v] <= 1,
    )
    first, last = tables[0].cost, tables[m_components].cost
    for u in cand[0]:
        if not np.isfinite(first[inst.source, u]):
            model.x[0, u].fix(0)
    for u in cand[-1]:
        if not np.isfinite(last[u, inst.sink]):
            model.x[m_components - 1, u].fix(0)
    model.cost = pyo.Objective(
        expr=sum(float(first[inst.source, u]) * model.x[0, u] for u in cand[0] if np.isfinite(first[inst.source, u]))
        + sum(
            float(last[u, inst.sink]) * model.x[m_components - 1, u]
            for u in cand[-1]
            if np.isfinite(last[u, inst.sink])
        )
        + sum(float(tables[i + 1].cost[u, v]) * model.y[i, u, v] for i, u, v in finite),
        sense=pyo.minimize,
    )
    return model
