"""Exact latency-aware placement (Ecker et al., eq. 1 and the constraints of section 4.2) as a MILP.

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
  where the plain x-relaxation spreads every operator evenly over the supervisors at no cut at all
  (on a 42-operator instance the root bound rises from 0.30 to 0.49, the optimum being 0.525). Of
  the n^3/2 triangle rows only those the LP relaxation violates are added, round after round
  (:func:`separate_triangles`, a few thousand at 42 operators).

Objective (eq. 1): w1 s + w2 sum_u y[u] / N + w3 sum_e z_e / |E| + w4 sum_e t_e z_e / T, multiplied
by ``scale`` = 1 / (its smallest positive coefficient, at most 1e6) so that the latency term is not
lost in the solver's tolerances when w1 = 1e-6 (objective and bound are divided back).

Further valid inequalities (none removes an optimal placement)

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

**Cut latency** (option ``cut_latency``): a cut edge is at least as long as the link from its tail's
supervisor u to the nearest other supervisor, m_u = min_{v != u} l_uv, so d[e] >= sum_u m_u g[e,u].
Valid: every placement keeps its score with the completion g[e,u] = (x_iu - x_ju)^+ (the smallest g
the other rows allow), under which the row reads d[e] >= m_{p(i)} <= l_{p(i)p(j)} on a cut edge and
d[e] >= 0 on any other.

**The tiny latency weight, lexicographically** (analysed and measured for the 60 s target; not used).
Write s = F + w1 s_lat with F the other three terms. Solve min F first (w1 = 0: every two supervisors
of equal capacity are interchangeable, so the symmetry rows apply): incumbent p0, bound b0. Every
optimal p* then lies in the window b0 <= F(p*) <= s(p0) - w1 L, L any lower bound of s_lat (since
F(p*) + w1 s_lat(p*) <= s(p0)), so min s over the window is the optimum. This is exact, but the second
stage is not cheaper: the window does not help the LP relaxation see the latency (its latency bound
stays near 0 because fractional x spreads every operator over all supervisors), and proving that only
the structure of p0 lies in the window (a no-good on p0's cut set, up to the twins' images) is a
second search as hard as the first. On T-R3 at load 0.4 the first stage takes 9.2 CPU s against 19.3
for the whole model, and the second did not close in 150 000 simplex iterations; on T-R7 at load 0.4
the first stage takes 46 CPU s (the whole model 123). See README, "Latency details".

**Knapsack tree rows** (option ``knapsack_trees``, on by default; the node-capacitated graph
partitioning inequalities of Ferreira, Martin, de Souza, Weismantel and Wolsey, per supervisor): for
a tree T of the undirected topology rooted at r and a supervisor u with C_u < d(T) (cpu or memory),
x[r,u] <= sum_{e in T} min(1, d(T_e) / (d(T) - C_u)) z_e, T_e the subtree that e cuts off; separated
with the triangle rows (:func:`violated_trees`). **Co-location per supervisor** (``per_supervisor``,
off: measured too large) multiplies the capacity rows by x[j,u].

**By supervisor classes** (option ``classes``, the default when the latency term is a tie-break):
:mod:`odrp.kinds.latency.exact.classes` solves this model at w1 = 0 on each multiset of supervisor classes
that no other multiset of as many supervisors dominates, and labels every partition it finds;
:func:`solve` falls back to the one model when a partition has too many labellings to enumerate.

**Warm start** (:func:`set_start`, the contract of :mod:`odrp.core.exact`): x and y at a placement. The
symmetry rows admit only one member of each orbit of placements, so the start is first moved, within
its orbit (same score, which the evaluator confirms), to a member they admit
(:func:`symmetric_representative`).

The alternatives measured in ``benchmarks/latency.py`` are :class:`Options`: per-edge latency from
both ends, pairwise, or by supervisor-pair flows (a transport plan per edge that defines its cut and
its latency together); the single-row cut; all triangle rows at once; bounds from the triangle
inequality of a metric latency; an objective cut-off at the hybrid heuristic's score.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from odrp.core.errors import InputError
from odrp.core.exact import ExactOutcome, checked_start, clear_values, model_size, warm_start_stats
from odrp.core.kind import require
from odrp.core.result import relative_gap
from odrp.core.solvers import DEFAULT_MIP_GAP, DEFAULT_SOLVER, SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.kinds.latency.evaluator import evaluate, evaluate_assignment
from odrp.kinds.latency.instance import LatencyInstance, parse_solution, solution_json


@dataclass(frozen=True)
class Options:
    """Switches of the model (defaults: the measured best, see ``benchmarks/latency.py``)."""

    cut: str = "tv"
    """``tv``: z_e = sum_u g[e,u], g >= x_iu - x_ju; ``max``: z_e >= x_iu - x_ju for every u."""
    edge_latency: str = "tail"
    """``aggregated``: rows per supervisor of either end; ``tail``: of the tail only; ``pairwise``:
    l_uv (x_iu + x_jv - 1) for every pair."""
    prune: bool = False
    """Drop the separated triangle rows that the last LP leaves slack."""
    spreading: str = "separate"
    """Co-location metric w with triangle inequalities: ``separate`` (the violated ones, by an LP
    cutting-plane loop), ``all``, or ``none`` (no w at all)."""
    connectivity: bool = True
    fewest_supervisors: bool = True
    cutoff: bool = False
    """Run the hybrid heuristic first (200 iterations, seed 0) and add objective <= its score."""
    nonempty: bool = False
    """y[u] <= sum_i x[i,u]: a supervisor counts as used only with an operator on it."""
    twins: bool = True
    metric_bounds: bool = False
    """When l is a metric: a_i >= l(p(s), p(i)) for every source s reaching i, and
    s_lat >= a_i + l(p(i), p(t)) for every sink t that i reaches (triangle inequality along paths)."""
    supervisor_symmetry: bool = True
    """Order interchangeable supervisors (equal capacities and, unless w1 = 0, equal latencies)."""
    per_supervisor: bool = False
    """Co-location split by supervisor, w[j,k] <= sum_u v[j,k,u] with v[j,k,u] <= x[j,u], x[k,u], and
    the part of j that shares u fits u: c_j x[j,u] + sum_k c_k v[j,k,u] <= C_u x[j,u] (the capacity
    rows multiplied by x[j,u]; they imply the aggregated part rows, which are then left out)."""
    knapsack_trees: bool = True
    """Separate knapsack tree rows per supervisor (:func:`violated_trees`) with the triangle rows."""
    classes: bool | None = None
    """Solve by supervisor classes (:mod:`odrp.kinds.latency.exact.classes`): the score without latency
    per multiset of supervisor classes, the latency by labelling each partition found. None: when
    the latency term is a tie-break (:func:`latency_classes.latency_is_tie_break`) and no warm start
    is given (the one model hands it to the solver as a MIP start; ``classes=True`` takes it as the
    first incumbent)."""
    cut_latency: bool = False
    """d[e] >= sum_u m_u g[e,u] with m_u = min_{v != u} l_uv: a cut edge has at least the latency to
    the nearest other supervisor (needs ``cut="tv"``)."""
    scale: float | None = None
    """Objective multiplier; None: 1 / (the smallest positive weight coefficient), at most 1e6."""


def build(inst: LatencyInstance, options: Options = Options()) -> pyo.ConcreteModel:
    """The MILP of ``inst`` (see the module docstring); triangle rows go to ``model.triangles``."""
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

    # ---- cut edges -----------------------------------------------------------------------
    m.z = pyo.Var(edges, bounds=(0, 1))
    flow = options.edge_latency == "flow"
    if flow:  # the transport plan of each latency edge defines its cut and its latency together
        flow_edges = inst.latency_edges
        m.f = pyo.Var(flow_edges, sups, sups, domain=pyo.NonNegativeReals)
        m.out_of = pyo.Constraint(
            flow_edges, sups, rule=lambda m, e, u: sum(m.f[e, u, v] for v in sups) == m.x[inst.edges[e][0], u]
        )
        m.into = pyo.Constraint(
            flow_edges, sups, rule=lambda m, e, v: sum(m.f[e, u, v] for u in sups) == m.x[inst.edges[e][1], v]
        )
        m.flow_cut = pyo.Constraint(flow_edges, rule=lambda m, e: m.z[e] >= 1 - sum(m.f[e, u, u] for u in sups))
    cut_edges = [e for e in edges if not flow or e in set(inst.back_edges)]
    if options.cut == "tv":
        m.g = pyo.Var(cut_edges, sups, domain=pyo.NonNegativeReals)
        m.leave = pyo.Constraint(
            cut_edges, sups, rule=lambda m, e, u: m.g[e, u] >= m.x[inst.edges[e][0], u] - m.x[inst.edges[e][1], u]
        )
        m.cut = pyo.Constraint(cut_edges, rule=lambda m, e: m.z[e] == sum(m.g[e, u] for u in sups))
    elif options.cut == "max":
        m.cut = pyo.Constraint(
            cut_edges, sups, rule=lambda m, e, u: m.z[e] >= m.x[inst.edges[e][0], u] - m.x[inst.edges[e][1], u]
        )
    else:
        raise ValueError(f"cut: expected tv or max, got {options.cut!r}")

    # ---- s_lat: edge latencies and longest-path potentials ---------------------------------
    lat_edges = inst.latency_edges
    m.d = pyo.Var(lat_edges, domain=pyo.NonNegativeReals)
    m.a = pyo.Var(ops, domain=pyo.NonNegativeReals)
    m.s_lat = pyo.Var(domain=pyo.NonNegativeReals)
    if options.edge_latency in ("aggregated", "tail"):
        m.from_tail = pyo.Constraint(
            lat_edges,
            sups,
            rule=lambda m, e, u: (
                m.d[e]
                >= sum(lat[u][v] * m.x[inst.edges[e][1], v] for v in sups)
                - max(lat[u]) * (1 - m.x[inst.edges[e][0], u])
            ),
        )
    if options.edge_latency == "aggregated":
        m.from_head = pyo.Constraint(
            lat_edges,
            sups,
            rule=lambda m, e, v: (
                m.d[e]
                >= sum(lat[u][v] * m.x[inst.edges[e][0], u] for u in sups)
                - max(lat[u][v] for u in sups) * (1 - m.x[inst.edges[e][1], v])
            ),
        )
    elif options.edge_latency == "pairwise":
        pairs = [(e, u, v) for e in lat_edges for u in sups for v in sups if u != v and lat[u][v] > 0]
        m.pair = pyo.Constraint(
            pairs,
            rule=lambda m, e, u, v: m.d[e] >= lat[u][v] * (m.x[inst.edges[e][0], u] + m.x[inst.edges[e][1], v] - 1),
        )
    elif flow:
        m.flow_latency = pyo.Constraint(
            lat_edges,
            rule=lambda m, e: m.d[e] >= sum(lat[u][v] * m.f[e, u, v] for u in sups for v in sups if lat[u][v] > 0),
        )
    elif options.edge_latency != "tail":
        raise ValueError(f"edge_latency: expected aggregated, tail, pairwise or flow, got {options.edge_latency!r}")
    if options.cut_latency:
        if options.cut != "tv":
            raise ValueError(f"cut_latency: needs cut=tv, got cut={options.cut!r}")
        nearest = [min((lat[u][v] for v in sups if v != u), default=0.0) for u in sups]
        with_g = set(cut_edges)
        m.cut_latency = pyo.Constraint(
            [e for e in lat_edges if e in with_g],
            rule=lambda m, e: m.d[e] >= sum(nearest[u] * m.g[e, u] for u in sups),
        )
    m.path = pyo.Constraint(lat_edges, rule=lambda m, e: m.a[inst.edges[e][1]] >= m.a[inst.edges[e][0]] + m.d[e])
    m.longest = pyo.Constraint(ops, rule=lambda m, i: m.s_lat >= m.a[i])
    if options.metric_bounds and is_metric(lat):
        sources, sinks = _reach(inst)
        reach = max(max(row) for row in lat)

        def far(i: int, u: int, k: int) -> Any:
            """l(u, p(k)) when i is on u (and at least 0 otherwise): an aggregated row."""
            return sum(lat[u][v] * m.x[k, v] for v in sups) - reach * (1 - m.x[i, u])

        from_source = [(s, i, u) for i in ops for s in sources[i] for u in sups]
        to_sink = [(i, t, u) for i in ops for t in sinks[i] for u in sups]
        m.from_source = pyo.Constraint(from_source, rule=lambda m, s, i, u: m.a[i] >= far(s, u, i))
        m.to_sink = pyo.Constraint(to_sink, rule=lambda m, i, t, u: m.s_lat >= m.a[i] + far(i, u, t))

    # ---- the co-location metric (spreading) ----------------------------------------------
    if options.spreading != "none":
        _add_spreading(m, inst, options.per_supervisor, options.knapsack_trees)
        if options.spreading == "all":
            for b, a, c in all_triangles(inst.n_operators):
                add_triangle(m, b, a, c)
        elif options.spreading != "separate":
            raise ValueError(f"spreading: expected separate, all or none, got {options.spreading!r}")

    # ---- valid inequalities --------------------------------------------------------------
    if options.connectivity and inst.edges:
        components = _components(inst)
        m.connectivity = pyo.Constraint(expr=sum(m.z[e] for e in edges) >= sum(m.y[u] for u in sups) - components)
    if options.nonempty:
        m.nonempty = pyo.Constraint(sups, rule=lambda m, u: m.y[u] <= sum(m.x[i, u] for i in ops))
    if options.fewest_supervisors:
        m.fewest = pyo.Constraint(expr=sum(m.y[u] for u in sups) >= fewest_supervisors(inst))
    if options.twins:
        order = [(i, k) for group in twin_groups(inst) for i, k in itertools.pairwise(group)]
        m.twins = pyo.Constraint(
            order,
            sups,
            rule=lambda m, i, k, u: sum(m.x[k, v] for v in range(u + 1)) <= sum(m.x[i, v] for v in range(u + 1)),
        )

    if options.supervisor_symmetry:
        order = [(u, v) for group in interchangeable_supervisors(inst) for u, v in itertools.pairwise(group)]
        m.supervisor_order = pyo.Constraint(order, rule=lambda m, u, v: m.y[v] <= m.y[u])
        m.first_operator = pyo.Constraint(
            order, ops, rule=lambda m, u, v, i: m.x[i, v] <= sum(m.x[k, u] for k in range(i))
        )

    # ---- objective (eq. 1) -------------------------------------------------------------------
    coefficients = objective_coefficients(inst)
    scale = options.scale or objective_scale(coefficients)
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


def _add_spreading(
    m: pyo.ConcreteModel, inst: LatencyInstance, per_supervisor: bool = False, knapsack_trees: bool = False
) -> None:
    """w[j,k] (j < k): j and k share a supervisor; the part of j fits on j's supervisor; z_e >= 1 - w_e."""
    n, sups = inst.n_operators, range(inst.n_supervisors)
    m.pairs = pyo.Set(dimen=2, initialize=[(j, k) for j in range(n) for k in range(j + 1, n)])
    m.w = pyo.Var(m.pairs, bounds=(0, 1))

    def w(j: int, k: int) -> Any:
        return m.w[min(j, k), max(j, k)]

    if per_supervisor:
        _add_per_supervisor(m, inst, w)
    for name, demand, limit in (
        ("part_cpu", inst.cpu, inst.cpu_limit),
        ("part_memory", inst.memory, inst.memory_limit),
    ):
        if per_supervisor:
            break
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


def _add_per_supervisor(m: pyo.ConcreteModel, inst: LatencyInstance, w: Any) -> None:
    """v[j,k,u]: j and k both on u (x[j,u] x[k,u] relaxed); the capacity rows times x[j,u]."""
    n, sups = inst.n_operators, range(inst.n_supervisors)
    m.v = pyo.Var(m.pairs, sups, bounds=(0, 1))

    def v(j: int, k: int, u: int) -> Any:
        return m.v[min(j, k), max(j, k), u]

    m.v_first = pyo.Constraint(m.pairs, sups, rule=lambda m, j, k, u: m.v[j, k, u] <= m.x[j, u])
    m.v_second = pyo.Constraint(m.pairs, sups, rule=lambda m, j, k, u: m.v[j, k, u] <= m.x[k, u])
    m.v_split = pyo.Constraint(m.pairs, rule=lambda m, j, k: m.w[j, k] <= sum(m.v[j, k, u] for u in sups))
    for name, demand, limit in (
        ("share_cpu", inst.cpu, inst.cpu_limit),
        ("share_memory", inst.memory, inst.memory_limit),
    ):
        rows = pyo.Constraint(
            range(n),
            sups,
            rule=lambda m, j, u, demand=demand, limit=limit: (
                demand[j] * m.x[j, u] + sum(demand[k] * v(j, k, u) for k in range(n) if k != j) <= limit[u] * m.x[j, u]
            ),
        )
        m.add_component(name, rows)


def add_triangle(m: pyo.ConcreteModel, b: int, a: int, c: int) -> None:
    """w_ab + w_bc - w_ac <= 1: a with b and b with c puts a with c."""
    m.triangles.add(m.w[min(a, b), max(a, b)] + m.w[min(b, c), max(b, c)] - m.w[min(a, c), max(a, c)] <= 1)


def all_triangles(n: int) -> list[tuple[int, int, int]]:
    return [(b, a, c) for b in range(n) for a in range(n) for c in range(a + 1, n) if b not in (a, c)]


def separate_triangles(
    m: pyo.ConcreteModel,
    inst: LatencyInstance,
    *,
    per_round: int = 400,
    rounds: int = 50,
    deadline: float | None = None,
    prune: bool = False,
    trees: bool = True,
    stop_above: float | None = None,
) -> dict[str, Any]:
    """Add the triangle rows that the LP relaxation violates, round after round, until none is.

    The LP relaxation is solved by HiGHS (persistent, warm-started) whichever solver then solves the
    MILP: the rows are valid for every integer placement, so how they are found does not matter.
    With the model's ``knapsack_trees`` rows (and ``trees``), violated knapsack tree rows are added in
    the same rounds. ``stop_above``: stop once the LP bound (unscaled) exceeds it.
    """
    from pyomo.contrib.solver.common.factory import SolverFactory

    n = inst.n_operators
    binaries = [v for v in m.component_data_objects(pyo.Var) if v.is_binary()]
    for v in binaries:
        v.domain = pyo.UnitInterval
    highs = SolverFactory("highs")
    added: set[tuple[int, int, int]] = set()
    bound, done, tree_rows = None, 0, 0
    try:
        for _ in range(rounds):
            done += 1
            results = highs.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False)
            if results.incumbent_objective is None:
                break
            bound = results.incumbent_objective / m.scale
            if stop_above is not None and bound > stop_above:
                break
            fresh = []
            if hasattr(m, "w"):  # without the co-location metric (spreading="none"): the LP bound only
                results.solution_loader.load_vars(list(m.w.values()))
                w = np.eye(n)
                for (j, k), var in m.w.items():
                    w[j, k] = w[k, j] = var.value
                fresh = [t for t in _violated_triangles(w) if t not in added][:per_round]
            for b, a, c in fresh:
                add_triangle(m, b, a, c)
            added.update(fresh)
            fresh_trees = []
            if trees and hasattr(m, "knapsack_trees"):
                results.solution_loader.load_vars(list(m.x.values()) + list(m.z.values()))
                x = np.array([[m.x[i, u].value for u in range(inst.n_supervisors)] for i in range(n)])
                z = np.array([m.z[e].value for e in range(len(inst.edges))])
                fresh_trees = violated_trees(inst, x, z)[:per_round]
                for row in fresh_trees:
                    add_tree(m, *row)
                tree_rows += len(fresh_trees)
            if (not fresh and not fresh_trees) or (deadline is not None and time.perf_counter() > deadline):
                break
        if prune:  # keep only the rows the last LP needs
            for row in m.triangles.values():
                if pyo.value(row.body) < pyo.value(row.upper) - 1e-6:
                    row.deactivate()
    finally:
        for v in binaries:
            v.domain = pyo.Binary
    stats = {"triangles": len(added), "separation_rounds": done, "lp_bound": bound}
    return stats | ({"tree_rows": tree_rows} if hasattr(m, "knapsack_trees") else {})


def add_tree(m: pyo.ConcreteModel, root: int, u: int, edges: list[tuple[int, float]]) -> None:
    """x[root,u] <= sum_e a_e z[e] over the edges of a knapsack tree (see :func:`violated_trees`)."""
    m.knapsack_trees.add(m.x[root, u] <= sum(a * m.z[e] for e, a in edges))


def violated_trees(
    inst: LatencyInstance, x: np.ndarray, z: np.ndarray, tolerance: float = 1e-4
) -> list[tuple[int, int, list[tuple[int, float]]]]:
    """Knapsack tree rows per supervisor that the LP point (x, z) violates, most violated first.

    For a tree T of the (undirected) topology rooted at r, with demands d (cpu or memory) and a
    supervisor u whose capacity C_u < d(T): when r is on u, the operators whose tree path from r has
    no cut edge share u, so d(T) - sum_{e in T} d(T_e) z_e <= C_u, with T_e the subtree that e cuts
    off. Hence x[r,u] <= sum_e min(1, d(T_e) / (d(T) - C_u)) z_e (a coefficient can be cut to 1: an
    integer point with a cut edge of coefficient >= 1 satisfies the row anyway). The trees are grown
    from every root by Prim's rule on z (cheapest cut first), every prefix tried for every u.
    """
    n, sups = inst.n_operators, inst.n_supervisors
    neighbours: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e, (i, j) in enumerate(inst.edges):
        neighbours[i].append((j, e))
        neighbours[j].append((i, e))
    best: dict[tuple[int, int], tuple[float, list[tuple[int, float]]]] = {}
    for demand, limit in ((inst.cpu, inst.cpu_limit), (inst.memory, inst.memory_limit)):
        capacity = np.array(limit)
        for r in range(n):
            candidates = [u for u in range(sups) if x[r, u] > tolerance]
            if not candidates:
                continue
            order, parent, via = [r], [-1] * n, [-1] * n
            key = {j: (z[e], e, r) for j, e in neighbours[r] if j != r}
            total = demand[r]
            while key:
                j = min(key, key=lambda k: key[k][:2])
                _, e, p = key.pop(j)
                order.append(j)
                parent[j], via[j] = p, e
                total += demand[j]
                for k, f in neighbours[j]:
                    if k not in order and (k not in key or z[f] < key[k][0]):
                        key[k] = (z[f], f, j)
                over = [u for u in candidates if total > capacity[u] * (1 + 1e-9) + 1e-9]
                if not over:
                    continue
                sub = {k: demand[k] for k in order}
                for k in reversed(order[1:]):
                    sub[parent[k]] += sub[k]
                for u in over:
                    excess = total - capacity[u]
                    row = [(via[k], min(1.0, sub[k] / excess)) for k in order[1:]]
                    violation = x[r, u] - sum(a * z[f] for f, a in row)
                    if violation > tolerance and violation > best.get((r, u), (0.0,))[0]:
                        best[r, u] = (violation, [(f, a) for f, a in row if a > 0])
    ranked = sorted(best.items(), key=lambda item: -item[1][0])
    return [(r, u, row) for (r, u), (_, row) in ranked]


def _violated_triangles(w: np.ndarray, tolerance: float = 1e-6) -> list[tuple[int, int, int]]:
    """(b, a, c) with w_ab + w_bc - w_ac > 1, a < c, most violated first."""
    n = len(w)
    found: list[tuple[float, int, int, int]] = []
    for b in range(n):
        excess = w[:, b][:, None] + w[b, :][None, :] - w - 1.0
        excess[b, :] = excess[:, b] = -1.0
        np.fill_diagonal(excess, -1.0)
        for a, c in np.argwhere(np.triu(excess, 1) > tolerance):
            found.append((float(excess[a, c]), b, int(a), int(c)))
    found.sort(key=lambda t: (-t[0], t[1], t[2], t[3]))
    return [(b, a, c) for _, b, a, c in found]


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


def is_metric(lat: tuple[tuple[float, ...], ...]) -> bool:
    """Symmetric, zero diagonal, triangle inequality (up to 1e-9 relative)."""
    n = len(lat)
    return all(
        lat[u][v] == lat[v][u] and lat[u][v] <= (lat[u][k] + lat[k][v]) * (1 + 1e-9)
        for u in range(n)
        for v in range(n)
        for k in range(n)
    )


def _reach(inst: LatencyInstance) -> tuple[list[list[int]], list[list[int]]]:
    """Over the latency edges: the sources (no incoming latency edge) that reach each operator
    (other than itself), and the sinks (no outgoing latency edge) that each operator reaches."""
    n = inst.n_operators
    succ: list[list[int]] = [[] for _ in range(n)]
    for e in inst.latency_edges:
        i, j = inst.edges[e]
        succ[i].append(j)
    order = inst.latency_order
    reach = [set() for _ in range(n)]
    for i in reversed(order):
        for j in succ[i]:
            reach[i] |= {j} | reach[j]
    sources = [i for i in range(n) if not inst.latency_predecessors[i]]
    sinks = [i for i in range(n) if not succ[i]]
    from_sources = [[s for s in sources if i in reach[s]] for i in range(n)]
    to_sinks = [[t for t in sinks if t in reach[i]] for i in range(n)]
    return from_sources, to_sinks


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


def _components(inst: LatencyInstance) -> int:
    parent = list(range(inst.n_operators))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in inst.edges:
        parent[root(i)] = root(j)
    return len({root(i) for i in range(inst.n_operators)})


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


def solve(
    inst: LatencyInstance,
    solver: str = DEFAULT_SOLVER,
    time_limit: float | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    warm_start: dict[str, Any] | None = None,
    **switches: Any,
) -> ExactOutcome:
    """Solve exactly; ``switches`` are fields of :class:`Options` (``odrp solve --param cut=max``).

    ``warm_start``: a feasible solution JSON handed to the solver as a MIP start (:func:`set_start`).
    """
    known = Options.__dataclass_fields__
    unknown = sorted(set(switches) - set(known))
    require(not unknown, "command line", "--param", f"model options among {', '.join(known)}; got {unknown}")
    options = Options(**switches)
    from odrp.kinds.latency.exact import classes as latency_classes

    auto = options.classes is None and warm_start is None and latency_classes.latency_is_tie_break(inst)
    if options.classes or auto:  # a warm start is a solver's MIP start in the one model, an incumbent here
        try:
            return latency_classes.solve(inst, options, solver, time_limit, mip_gap, warm_start)
        except latency_classes.TooManyGroups:  # a partition with too many groups: the one-model MILP
            options = dataclasses.replace(options, classes=False)
        except ValueError as error:  # a switch that build() refuses
            raise InputError("command line", "--param", str(error)) from None
    start_objective = checked_start(evaluate, inst, warm_start) if warm_start is not None else None
    start = time.perf_counter()
    try:
        model = build(inst, options)
    except ValueError as error:
        raise InputError("command line", "--param", str(error)) from None
    build_s = time.perf_counter() - start
    separation: dict[str, Any] = {}
    if options.spreading == "separate":
        deadline = None if time_limit is None else start + time_limit / 2
        separation = separate_triangles(model, inst, deadline=deadline, prune=options.prune)
    incumbent = upper_bound(inst) if options.cutoff else None
    if incumbent is not None:
        score, _ = incumbent
        model.cutoff = pyo.Constraint(expr=model.objective.expr <= model.scale * score * (1 + 1e-7) + 1e-9)
    if warm_start is not None:  # after the separation, whose LP solves load values into the model
        set_start(model, inst, warm_start)
    remaining = None if time_limit is None else max(1.0, time_limit - (time.perf_counter() - start))
    raw = run_solver(model, solver=solver, time_limit=remaining, mip_gap=mip_gap, warm_start=warm_start is not None)
    run = _unscaled(raw, model.scale)
    solution = solution_json(inst, assignment(model, inst)) if run.has_solution else None
    if incumbent is not None and solution is None and run.status == "time_limit":
        score, placement = incumbent  # the solver found nothing in time: the heuristic's placement
        solution = solution_json(inst, placement)
        run = dataclasses.replace(run, objective=score, gap=relative_gap(score, run.bound, "min"))
    stats = {
        "build_s": build_s,
        **separation,
        "solve_s": raw.runtime_s,
        "scale": model.scale,
        **dataclasses.asdict(options),
        **model_size(model),
    }
    if start_objective is not None:
        report = warm_start_stats(start_objective, raw)
        if report["solver_objective"] is not None:  # the solver's log reads the scaled objective
            report["solver_objective"] /= model.scale
        stats["warm_start"] = report
    return ExactOutcome(run, solution, stats)


def upper_bound(inst: LatencyInstance) -> tuple[float, list[int]] | None:
    """The hybrid heuristic's feasible placement and score (deterministic), or None."""
    from odrp.heuristics.latency import AntParameters, Budget, Scorer, ant_system, climb  # heuristics import odrp

    scorer = Scorer(inst)
    p, _ = ant_system(scorer, random.Random(0), Budget(100, None), AntParameters())
    p, _ = climb(scorer, p, Budget(100, None))
    return None if scorer.violations(p) else (scorer.score(p), p)


def _unscaled(run: SolverRun, scale: float) -> SolverRun:
    def back(value: float | None) -> float | None:
        return None if value is None else value / scale

    return dataclasses.replace(run, objective=back(run.objective), bound=back(run.bound))


__all__ = ["Options", "build", "set_start", "solve", "solver_version", "symmetric_representative"]
