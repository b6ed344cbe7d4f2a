"""The textbook MILP of latency-aware placement (Ecker et al., eq. 1 and section 4.2), written plainly.

The model a practitioner writes from the paper in an afternoon: assignment binaries, capacity rows,
one row per supervisor for a cut edge, the pairwise linearisation of the link latency, and the
paper's recursion for the accumulated latency. No valid inequalities, no symmetry rows, no cutting
planes, no objective scaling, no starts (the ``auto`` method, :mod:`.model` with
:mod:`.separation` and :mod:`.classes`, has those).

Data as in :mod:`odrp.kinds.latency.exact.model`: operators i with cpu c_i and memory m_i;
supervisors u with usable capacities C_u, M_u; edges e = (i, j) with events t_e (total T), N
supervisors; the latency edges (a DAG) and the latency l_uv (l_uu = 0).

    x[i,u] in {0,1}   operator i on supervisor u        y[u] in {0,1}   supervisor u used
    z[e] in [0,1]     edge e is cut                     d[e] >= 0       latency of a latency edge
    a[i] >= 0         accumulated latency at i          s >= 0          s_lat

    min  w1 s + (w2 / N) sum_u y[u] + sum_e (w3 / |E| + w4 t_e / T) z[e]                  (eq. 1)
    s.t. sum_u x[i,u] = 1                                       every operator
         x[i,u] <= y[u]                                         every operator and supervisor
         sum_i c_i x[i,u] <= C_u,   sum_i m_i x[i,u] <= M_u     every supervisor
         z[e] >= x[i,u] - x[j,u]                                every edge e = (i, j), supervisor u
         d[e] >= l_uv (x[i,u] + x[j,v] - 1)                     every latency edge, u != v
         a[j] >= a[i] + d[e]                                    every latency edge e = (i, j)
         s >= a[i]                                              every operator

Every row is exact at integer points because z, d, a and s only appear with non-negative weights in
a minimised objective (a cut edge with both weights 0 may show z = 1 at no cost; the evaluator scores
the placement, not z).
"""

from __future__ import annotations

import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.kinds.latency.instance import LatencyInstance

Size = tuple[int, int, int]
"""(variables, constraints, nonzeros)."""


def size(inst: LatencyInstance) -> Size:
    """The model's size in closed form (before it is built)."""
    n, k = inst.n_operators, inst.n_supervisors
    edges, lat_edges = len(inst.edges), len(inst.latency_edges)
    pairs = sum(1 for u in range(k) for v in range(k) if u != v and inst.latency[u][v] > 0)
    variables = n * k + k + edges + lat_edges + n + 1
    constraints = n + n * k + 2 * k + edges * k + lat_edges * pairs + lat_edges + n
    nonzeros = n * k + 2 * n * k + 2 * (n * k + k) + 3 * edges * k + 3 * lat_edges * pairs + 3 * lat_edges + 2 * n
    return variables, constraints, nonzeros


def build(inst: LatencyInstance) -> pyo.ConcreteModel:
    """The MILP of the module docstring."""
    m = pyo.ConcreteModel(name=f"latency-textbook-{inst.name}")
    ops, sups = range(inst.n_operators), range(inst.n_supervisors)
    edges, lat_edges = range(len(inst.edges)), inst.latency_edges
    lat = inst.latency
    m.x = pyo.Var(ops, sups, domain=pyo.Binary)
    m.y = pyo.Var(sups, domain=pyo.Binary)
    m.z = pyo.Var(edges, bounds=(0, 1))
    m.d = pyo.Var(lat_edges, domain=pyo.NonNegativeReals)
    m.a = pyo.Var(ops, domain=pyo.NonNegativeReals)
    m.s_lat = pyo.Var(domain=pyo.NonNegativeReals)

    m.assign = pyo.Constraint(ops, rule=lambda m, i: sum(m.x[i, u] for u in sups) == 1)
    m.used = pyo.Constraint(ops, sups, rule=lambda m, i, u: m.x[i, u] <= m.y[u])
    m.cpu = pyo.Constraint(sups, rule=lambda m, u: sum(inst.cpu[i] * m.x[i, u] for i in ops) <= inst.cpu_limit[u])
    m.memory = pyo.Constraint(
        sups, rule=lambda m, u: sum(inst.memory[i] * m.x[i, u] for i in ops) <= inst.memory_limit[u]
    )
    m.cut = pyo.Constraint(
        edges, sups, rule=lambda m, e, u: m.z[e] >= m.x[inst.edges[e][0], u] - m.x[inst.edges[e][1], u]
    )
    m.link = pyo.Constraint(
        [(e, u, v) for e in lat_edges for u in sups for v in sups if u != v and lat[u][v] > 0],
        rule=lambda m, e, u, v: m.d[e] >= lat[u][v] * (m.x[inst.edges[e][0], u] + m.x[inst.edges[e][1], v] - 1),
    )
    m.path = pyo.Constraint(lat_edges, rule=lambda m, e: m.a[inst.edges[e][1]] >= m.a[inst.edges[e][0]] + m.d[e])
    m.longest = pyo.Constraint(ops, rule=lambda m, i: m.s_lat >= m.a[i])

    w = inst.weights
    colocation = w["colocation"] / len(inst.edges) if inst.edges else 0.0
    events = w["events"] / inst.total_events if inst.total_events > 0 else 0.0
    m.objective = pyo.Objective(
        expr=w["latency"] * m.s_lat
        + w["supervisors"] / inst.n_supervisors * sum(m.y[u] for u in sups)
        + sum((colocation + events * inst.events[e]) * m.z[e] for e in edges),
        sense=pyo.minimize,
    )
    return m


def assignment(m: pyo.ConcreteModel, inst: LatencyInstance) -> list[int]:
    """The supervisor of every operator in the model's (loaded) solution."""
    return [max(range(inst.n_supervisors), key=lambda u: pyo.value(m.x[i, u])) for i in range(inst.n_operators)]


def set_start(m: pyo.ConcreteModel, inst: LatencyInstance, given: list[int]) -> None:
    """x and y at a placement (the warm-start contract of :mod:`odrp.core.exact`)."""
    clear_values(m)
    for i, u in enumerate(given):
        m.x[i, u].set_value(1)
        m.y[u].set_value(1)
