"""The MILP of latency-aware placement (Ecker et al., eq. 1 and the constraints of section 4.2).

Data: operators i with cpu c_i and memory m_i; supervisors u with usable capacities C_u, M_u
(``utilisation_limit`` times capacity); edges e = (i, j) with events t_e (total T); the edges kept
for s_lat (:attr:`LatencyInstance.latency_edges`, a DAG); the latency l_uv (l_uu = 0).

Variables

- x[i,u] in {0,1}: operator i on supervisor u;           y[u] in {0,1}: supervisor u used;
- g[e,u] >= 0: the share of edge e = (i, j) that leaves u, g[e,u] >= x[i,u] - x[j,u]; the edge is
  cut iff z_e = sum_u g[e,u] = 1 (at integer points z_e = [p(i) != p(j)]; in the LP relaxation
  sum_u (x_iu - x_ju)^+ is the total-variation distance of the two rows, tighter than the single-row
  bound z_e >= x_iu - x_ju);
- w[j,k] in [0,1] for every pair j < k: j and k share a supervisor (the co-location metric);
- d[e] >= 0: the link latency of a latency edge; a[i] >= 0: the accumulated latency at i (s_lat(i)
  of section 4.2); s >= 0: s_lat.

Constraints (eq. 1's terms and section 4.2's constraints)

- sum_u x[i,u] = 1 (every operator on one supervisor);  x[i,u] <= y[u];
- sum_i c_i x[i,u] <= C_u y[u],  sum_i m_i x[i,u] <= M_u y[u] (capacity within the limit);
- d[e] >= sum_v l_uv x[j,v] - max_v l_uv (1 - x[i,u]) for every u: with i on u this is the exact
  latency sum_v l_uv x[j,v] (in the LP a weighted average, tighter than the pairwise rows
  l_uv (x_iu + x_jv - 1)); exact because d only raises s, which is minimised;
- a[j] >= a[i] + d[e] for every latency edge, s >= a[i]: the longest path as potentials, one row per
  edge instead of one per source-sink path (the paper's recursion over predecessors);
- **spreading metric** (valid for the co-location of any placement): the part of each operator j
  fits on j's supervisor, c_j + sum_k c_k w[j,k] <= sum_u C_u x[j,u] (and memory), an edge is cut
  unless its ends share a supervisor, z_e >= 1 - w_e, and co-location is transitive,
  w_ab + w_bc - w_ac <= 1 (triangle rows). The capacity rows in w make the LP pay for cut edges
  where the plain x-relaxation spreads every operator evenly over the supervisors at no cut at all.
  Of the n^3/2 triangle rows only those the LP relaxation violates are added, round after round
  (:mod:`odrp.kinds.latency.exact.separation`).

Objective (eq. 1): w1 s + w2 sum_u y[u] / N + w3 sum_e z_e / |E| + w4 sum_e t_e z_e / T, multiplied
by ``scale`` = 1 / (its smallest positive coefficient, at most 1e6) so that the latency term is not
lost in the solver's tolerances when w1 = 1e-6 (objective and bound are divided back).

Further valid inequalities (none removes an optimal placement; each has a switch in
:class:`~odrp.kinds.latency.exact.settings.LatencySettings`)

- **Connectivity**: the supervisors used, joined by the cut edges, form a graph with at most as
  many components as the topology (undirected), so sum_e z_e >= sum_u y[u] - components.
- **Fewest supervisors**: sum_u y[u] >= k_min, the smallest k whose k largest cpu capacities and k
  largest memory capacities each cover the total demand.
- **Twin operators** (symmetry): operators with equal demands and equal edges to every other
  operator (same events, same treatment for s_lat) can trade places without changing the score; the
  instances of one operation are twins. For twins i < i' the supervisor index of i is at most that
  of i': sum_{v <= u} x[i',v] <= sum_{v <= u} x[i,v] for every u.
- **Interchangeable supervisors** (symmetry, only when a swap changes no score: equal capacities and,
  unless w1 = 0, a latency matrix that the swap maps onto itself): y ordered, and the first operator
  on the later supervisor comes after the first on the earlier one. Rows (twins) and columns
  (supervisors) are then both in decreasing lexicographic order, which every orbit of placements
  contains (the lexicographically largest member), so the two orderings are compatible.
- **Knapsack tree rows** (the node-capacitated graph partitioning inequalities of Ferreira, Martin,
  de Souza, Weismantel and Wolsey, per supervisor): for a tree T of the undirected topology rooted at
  r and a supervisor u with C_u < d(T) (cpu or memory), x[r,u] <= sum_{e in T} min(1, d(T_e) /
  (d(T) - C_u)) z_e, T_e the subtree that e cuts off; separated with the triangle rows.

**Warm start** (:func:`set_start`, the contract of :mod:`odrp.core.exact`): x and y at a placement. The
symmetry rows admit only one member of each orbit of placements, so the start is first moved, within
its orbit (same score, which the evaluator confirms), to a member they admit
(:func:`symmetric_representative`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import Any

import networkx as nx
import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.core.graph import digraph
from odrp.core.kind import require
from odrp.core.solvers import SolverRun
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, parse_solution


def build(inst: LatencyInstance, settings: LatencySettings | None = None) -> pyo.ConcreteModel:
    """The MILP of ``inst`` (see the module docstring); triangle rows go to ``model.triangles``.

    ``settings`` switches the valid inequalities (default: :class:`LatencySettings`'s defaults).
    """
    settings = settings or LatencySettings()
    m = pyo.ConcreteModel(name=f"latency-{inst.name}")
    ops, sups = range(inst.n_operators), range(inst.n_supervisors)
    edges = range(len(inst.edges))
    lat = inst.latency
    m.x = pyo.Var(ops, sups, domain=pyo.Binary)
    m.y = pyo.Var(sups, domain=pyo.Binary)

    m.assign = pyo.Constraint(ops, rule=lambda m, i: sum(m.x[i, u] for u in sups) == 1)
    m.used = pyo.Constraint(ops, sups, rule=lambda m, i, u: m.x[i, u] <= m.y[u])
    m.cpu = pyo.Constraint(
        sups, rule=lambda m, u: sum(inst.cpu[i] * m.x[i, u] for i in ops) <= inst.cpu_limit[u] * m.y[u]
    )
    m.memory = pyo.Constraint(
        sups, rule=lambda m, u: sum(inst.memory[i] * m.x[i, u] for i in ops) <= inst.memory_limit[u] * m.y[u]
    )

    # ---- cut edges: total variation of the two ends' rows ---------------------------------
    m.z = pyo.Var(edges, bounds=(0, 1))
    m.g = pyo.Var(edges, sups, domain=pyo.NonNegativeReals)
    m.leave = pyo.Constraint(
        edges, sups, rule=lambda m, e, u: m.g[e, u] >= m.x[inst.edges[e][0], u] - m.x[inst.edges[e][1], u]
    )
    m.cut = pyo.Constraint(edges, rule=lambda m, e: m.z[e] == sum(m.g[e, u] for u in sups))

    # ---- s_lat: edge latencies from the tail's supervisor, longest-path potentials -----------
    lat_edges = inst.latency_edges
    m.d = pyo.Var(lat_edges, domain=pyo.NonNegativeReals)
    m.a = pyo.Var(ops, domain=pyo.NonNegativeReals)
    m.s_lat = pyo.Var(domain=pyo.NonNegativeReals)
    m.from_tail = pyo.Constraint(
        lat_edges,
        sups,
        rule=lambda m, e, u: (
            m.d[e]
            >= sum(lat[u][v] * m.x[inst.edges[e][1], v] for v in sups) - max(lat[u]) * (1 - m.x[inst.edges[e][0], u])
        ),
    )
    m.path = pyo.Constraint(lat_edges, rule=lambda m, e: m.a[inst.edges[e][1]] >= m.a[inst.edges[e][0]] + m.d[e])
    m.longest = pyo.Constraint(ops, rule=lambda m, i: m.s_lat >= m.a[i])

    # ---- the co-location metric (spreading) ----------------------------------------------
    _add_spreading(m, inst, settings.knapsack_trees)

    # ---- valid inequalities --------------------------------------------------------------
    if settings.connectivity and inst.edges:
        m.connectivity = pyo.Constraint(expr=sum(m.z[e] for e in edges) >= sum(m.y[u] for u in sups) - components(inst))
    if settings.fewest_supervisors:
        m.fewest = pyo.Constraint(expr=sum(m.y[u] for u in sups) >= fewest_supervisors(inst))
    if settings.twins:
        order = [(i, k) for group in twin_groups(inst) for i, k in itertools.pairwise(group)]
        m.twins = pyo.Constraint(
            order,
            sups,
            rule=lambda m, i, k, u: sum(m.x[k, v] for v in range(u + 1)) <= sum(m.x[i, v] for v in range(u + 1)),
        )
    if settings.supervisor_symmetry:
        pairs = [(u, v) for group in interchangeable_supervisors(inst) for u, v in itertools.pairwise(group)]
        m.supervisor_order = pyo.Constraint(pairs, rule=lambda m, u, v: m.y[v] <= m.y[u])
        m.first_operator = pyo.Constraint(
            pairs, ops, rule=lambda m, u, v, i: m.x[i, v] <= sum(m.x[k, u] for k in range(i))
        )

    # ---- objective (eq. 1) -------------------------------------------------------------------
    coefficients = objective_coefficients(inst)
    scale = settings.scale or objective_scale(coefficients)
    m.scale = scale
    m.objective = pyo.Objective(
        expr=scale
        * (
            coefficients["latency"] * m.s_lat
            + coefficients["supervisors"] * sum(m.y[u] for u in sups)
            + sum((coefficients["colocation"] + coefficients["events"] * inst.events[e]) * m.z[e] for e in edges)
        ),
        sense=pyo.minimize,
    )
    return m


def estimated_size(inst: LatencyInstance, settings: LatencySettings | None = None) -> tuple[int, int, int]:
    """(variables, constraints, nonzeros) of :func:`build`'s model in closed form, before it is built.

    The rows the cutting-plane loop may add are counted at their most (``rows_per_round`` of each
    family per round, ``separation_rounds`` rounds); the symmetry rows at their most (every operator a
    twin, every supervisor interchangeable).
    """
    settings = settings or LatencySettings()
    n, k = inst.n_operators, inst.n_supervisors
    edges, lat_edges = len(inst.edges), len(inst.latency_edges)
    pairs = n * (n - 1) // 2
    variables = n * k + k + edges + edges * k + lat_edges + n + 1 + pairs
    constraints = n + n * k + 2 * k + edges * k + edges + lat_edges * k + lat_edges + n + 2 * n + edges + 3
    nonzeros = n * k + 2 * n * k + 2 * (n * k + k) + 3 * edges * k + edges * (k + 1)
    nonzeros += lat_edges * k * (k + 2) + 3 * lat_edges + 2 * n + 2 * (n * n + n * k) + 2 * edges + 2 * (edges + k)
    families = 2 if settings.knapsack_trees else 1
    separated = families * settings.rows_per_round * settings.separation_rounds
    constraints += separated
    nonzeros += separated * (3 + (n if settings.knapsack_trees else 0)) // families
    if settings.twins:
        constraints += n * k
        nonzeros += n * k * (k + 1)
    if settings.supervisor_symmetry:
        constraints += k * (n + 1)
        nonzeros += k * (n * (n + 1) // 2 + n + 2)
    return variables, constraints, nonzeros


def _add_spreading(m: pyo.ConcreteModel, inst: LatencyInstance, knapsack_trees: bool) -> None:
    """w[j,k] (j < k): j and k share a supervisor; the part of j fits on j's supervisor; z_e >= 1 - w_e.

    The triangle rows (and, with ``knapsack_trees``, the knapsack tree rows) start empty; the
    cutting-plane loop of :mod:`odrp.kinds.latency.exact.separation` fills them.
    """
    n, sups = inst.n_operators, range(inst.n_supervisors)
    m.pairs = pyo.Set(dimen=2, initialize=[(j, k) for j in range(n) for k in range(j + 1, n)])
    m.w = pyo.Var(m.pairs, bounds=(0, 1))

    def w(j: int, k: int) -> Any:
        return m.w[min(j, k), max(j, k)]

    for name, demand, limit in (
        ("part_cpu", inst.cpu, inst.cpu_limit),
        ("part_memory", inst.memory, inst.memory_limit),
    ):
        rows = pyo.Constraint(
            range(n),
            rule=lambda m, j, demand=demand, limit=limit: (
                demand[j] + sum(demand[k] * w(j, k) for k in range(n) if k != j)
                <= sum(limit[u] * m.x[j, u] for u in sups)
            ),
        )
        m.add_component(name, rows)
    m.colocated = pyo.Constraint(range(len(inst.edges)), rule=lambda m, e: m.z[e] >= 1 - w(*inst.edges[e]))
    m.triangles = pyo.ConstraintList()
    if knapsack_trees:
        m.knapsack_trees = pyo.ConstraintList()


def objective_coefficients(inst: LatencyInstance) -> dict[str, float]:
    """Eq. (1) as coefficients of s_lat, supervisors used, cut edges and cut events."""
    w = inst.weights
    return {
        "latency": w["latency"],
        "supervisors": w["supervisors"] / inst.n_supervisors,
        "colocation": w["colocation"] / len(inst.edges) if inst.edges else 0.0,
        "events": w["events"] / inst.total_events if inst.total_events > 0 else 0.0,
    }


def objective_scale(coefficients: dict[str, float]) -> float:
    """1 / the smallest positive coefficient of a term, capped to [1, 1e6]."""
    positive = [c for c in coefficients.values() if c > 0]
    return min(1e6, max(1.0, 1.0 / min(positive))) if positive else 1.0


def unscaled(run: SolverRun, scale: float) -> SolverRun:
    """A solver's run on a model built with ``scale`` (its objective multiplied by it), in the score's units."""

    def back(value: float | None) -> float | None:
        return None if value is None else value / scale

    return dataclasses.replace(run, objective=back(run.objective), bound=back(run.bound))


def fewest_supervisors(inst: LatencyInstance) -> int:
    """The smallest k such that the k largest usable cpu and memory capacities cover the demand."""
    need_cpu, need_memory = math.fsum(inst.cpu), math.fsum(inst.memory)
    cpu = sorted(inst.cpu_limit, reverse=True)
    memory = sorted(inst.memory_limit, reverse=True)
    for k in range(1, inst.n_supervisors + 1):
        if math.fsum(cpu[:k]) >= need_cpu * (1 - 1e-12) and math.fsum(memory[:k]) >= need_memory * (1 - 1e-12):
            return k
    return inst.n_supervisors


def twin_groups(inst: LatencyInstance) -> list[list[int]]:
    """Classes (of two or more) of operators that can trade places without changing any score."""
    kept = set(inst.latency_edges)
    signature: dict[int, tuple[Any, ...]] = {}
    for i in range(inst.n_operators):
        out = sorted((j, inst.events[e], e in kept) for e, (a, j) in enumerate(inst.edges) if a == i)
        into = sorted((a, inst.events[e], e in kept) for e, (a, j) in enumerate(inst.edges) if j == i)
        signature[i] = (inst.cpu[i], inst.memory[i], tuple(out), tuple(into))
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, sig in signature.items():
        groups.setdefault(sig, []).append(i)
    # equal signatures already exclude edges between the twins (an edge i -> i' is in i's signature
    # but not in i''s, which would need i' -> i'); operators without any edge are twins too.
    return [g for g in groups.values() if len(g) > 1]


def interchangeable_supervisors(inst: LatencyInstance) -> list[list[int]]:
    """Classes of supervisors whose pairwise swaps leave every score unchanged.

    Equal cpu and memory capacity, and, when latency counts (w1 > 0), a swap of u and v that maps
    the latency matrix onto itself (l_uk = l_vk and l_ku = l_kv for every other k, l_uv = l_vu).
    """
    latency_counts = inst.weights["latency"] > 0
    lat = inst.latency

    def swappable(u: int, v: int) -> bool:
        if (inst.supervisor_cpu[u], inst.supervisor_memory[u]) != (inst.supervisor_cpu[v], inst.supervisor_memory[v]):
            return False
        if not latency_counts:
            return True
        others = [k for k in range(inst.n_supervisors) if k not in (u, v)]
        return lat[u][v] == lat[v][u] and all(lat[u][k] == lat[v][k] and lat[k][u] == lat[k][v] for k in others)

    groups: list[list[int]] = []
    for u in range(inst.n_supervisors):
        for group in groups:
            if all(swappable(u, v) for v in group):
                group.append(u)
                break
        else:
            groups.append([u])
    return [g for g in groups if len(g) > 1]


def components(inst: LatencyInstance) -> int:
    """Connected components of the topology, edges taken undirected."""
    return nx.number_weakly_connected_components(digraph(inst.n_operators, inst.edges))


def assignment(model: pyo.ConcreteModel, inst: LatencyInstance) -> list[int]:
    """The supervisor index of every operator in the model's (loaded) solution."""
    return [max(range(inst.n_supervisors), key=lambda u: pyo.value(model.x[i, u])) for i in range(inst.n_operators)]


def symmetric_representative(inst: LatencyInstance, assignment: list[int]) -> list[int]:
    """A placement of the same orbit as ``assignment`` that the symmetry rows of :func:`build` admit.

    The rows ask (a) twins i < i' to sit on supervisors p(i) <= p(i') and (b) consecutive
    interchangeable supervisors u < v to be used in order of their first operator (v unused, or
    its first operator after u's). Sorting the supervisors of each twin class gives (a), relabelling
    each class of interchangeable supervisors by first operator gives (b); each step that changes the
    placement makes the sequence (p(0), ..., p(n-1)) lexicographically smaller, so alternating them
    ends, at a placement that both leave unchanged.
    """
    p = list(assignment)
    twins = twin_groups(inst)
    supervisors = interchangeable_supervisors(inst)
    changed = True
    while changed:
        changed = False
        for group in twins:
            ordered = sorted(p[i] for i in group)
            if [p[i] for i in group] != ordered:
                for i, u in zip(group, ordered, strict=True):
                    p[i] = u
                changed = True
        for group in supervisors:
            first = {u: next((i for i, v in enumerate(p) if v == u), len(p)) for u in group}
            relabel = dict(zip(sorted(group, key=first.__getitem__), group, strict=True))
            if any(relabel[u] != u for u in group):
                p = [relabel.get(u, u) for u in p]
                changed = True
    return p


def set_start(m: pyo.ConcreteModel, inst: LatencyInstance, solution: dict[str, Any]) -> None:
    """Give x and y their values at the placement of ``solution`` (the warm-start contract).

    The placement is first replaced by its :func:`symmetric_representative`; x[i,u] = 1 for u the
    supervisor of i, y[u] = 1 for the supervisors it uses, every other x and y 0. The continuous
    variables (cuts, co-location, latencies) are left to the solver.
    """
    given = parse_solution(inst, solution, "warm start")
    require(all(u is not None for u in given), "warm start", "assignment", "a supervisor for every operator")
    p = symmetric_representative(inst, [u for u in given if u is not None])
    before, after = evaluate_assignment(inst, given), evaluate_assignment(inst, p)
    same = after.feasible and math.isclose(after.objective, before.objective, rel_tol=1e-12, abs_tol=1e-15)
    if not same:  # the symmetries leave every score unchanged: a bug if not
        raise AssertionError(f"symmetric representative scores {after.objective}, the start {before.objective}")
    clear_values(m)
    for i, u in enumerate(p):
        m.x[i, u].set_value(1)
        m.y[u].set_value(1)
