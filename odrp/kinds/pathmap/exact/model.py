"""Exact pathmap: a layered-graph flow over precomputed hop-limited least-cost routes, with capacity rows.

The semantics are those of :mod:`odrp.kinds.pathmap.instance` (the paper's section 3.1). Because each
consecutive pair's path is checked on its own (bandwidth per pair, not summed), the cheapest path of
pair p between servers u and v is D_p(u, v), the least cost of a path with at most ``max_null`` + 1
links that all carry B_req(p) (:mod:`odrp.kinds.pathmap.routes`; one table per bandwidth class).
What remains is the choice of a server per component: a least-cost source-sink path through the
multistage graph whose stage i holds the servers able to run component i (the paper's section 4.2
construction), plus the node-capacity constraint of section 3.1, which couples the stages:

    stages   V_0 = {s_R}, V_i = {u : service(i) in S(u), C_req(i) <= C_av(u)}, V_{m+1} = {t_R}
    arcs     A_p = {(u, v) in V_p x V_{p+1} : D_p(u, v) < inf}, p = 0..m
    x[i, u]  in {0, 1}     component i on server u (u in V_i)
    y[p,u,v] in [0, 1]     pair p carried from u to v

    min  sum_p sum_{(u,v) in A_p} D_p(u, v) y[p, u, v]
    s.t. sum_v y[0, s_R, v] = 1
         sum_w y[i-1, w, u] = x[i, u] = sum_v y[i, u, v]          i = 1..m, u in V_i
         sum_{i : u in V_i} C_req(i) x[i, u] <= C_av(u)           every server u (section 3.1)

With x integral exactly one server of each stage carries the unit flow, so y is integral too; y is
continuous. Servers that cannot be reached from the source or cannot reach the sink through the
stages are removed first; if none is left the instance is infeasible without a solver call (an
infeasible instance is a Result). The solution's paths are the routes behind the chosen arcs.

**Warm start** (:func:`set_start`, the contract of :mod:`odrp.core.exact`): x at the start's servers. The
solver completes y by the cheapest arcs, so the start it reports costs sum_p D_p over the start's
chain of servers, which is at most the evaluator's cost of the start's own paths (equal when they
are least-cost routes).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.kinds.pathmap.instance import PathmapInstance, parse_solution, solution_json
from odrp.kinds.pathmap.routes import Routes

Arc = tuple[int, int, int]
"""(pair p, server u of stage p, server v of stage p + 1)."""


def stages(inst: PathmapInstance, tables: list[Routes]) -> list[tuple[int, ...]]:
    """V_0..V_{m+1}, keeping only servers on some source-sink path through the stages."""
    layers = [(inst.source,), *(inst.candidates(i) for i in range(inst.n_components)), (inst.sink,)]
    forward = [set(layers[0])]
    for p in range(inst.n_pairs):
        cost = tables[p].cost
        forward.append({v for v in layers[p + 1] if any(np.isfinite(cost[u, v]) for u in forward[p])})
    alive = [set() for _ in layers]
    alive[-1] = forward[-1]
    for p in range(inst.n_pairs - 1, -1, -1):
        cost = tables[p].cost
        alive[p] = {u for u in forward[p] if any(np.isfinite(cost[u, v]) for v in alive[p + 1])}
    return [tuple(sorted(layer)) for layer in alive]


def size(inst: PathmapInstance) -> tuple[int, int, int]:
    """(variables, constraints, nonzeros) at most, in closed form: every pair of servers of two
    consecutive stages an arc (before the routes and the pruning of the stages are known)."""
    layers = [1, *(len(inst.candidates(i)) for i in range(inst.n_components)), 1]
    arcs = sum(a * b for a, b in itertools.pairwise(layers))
    places = sum(layers[1:-1])
    return places + arcs, 1 + 2 * places + inst.n_servers, 2 * arcs + 2 * places + 2 * places


def arcs(inst: PathmapInstance, tables: list[Routes], layers: list[tuple[int, ...]]) -> list[Arc]:
    return [
        (p, u, v)
        for p in range(inst.n_pairs)
        for u in layers[p]
        for v in layers[p + 1]
        if np.isfinite(tables[p].cost[u, v])
    ]


def build(inst: PathmapInstance, tables: list[Routes], layers: list[tuple[int, ...]]) -> pyo.ConcreteModel:
    """The layered-flow MILP above (the layers must be non-empty)."""
    arc_list = arcs(inst, tables, layers)
    places = [(i, u) for i in range(inst.n_components) for u in layers[i + 1]]
    model = pyo.ConcreteModel(name=f"pathmap_{inst.name}")
    model.x = pyo.Var(places, domain=pyo.Binary)
    model.y = pyo.Var(arc_list, domain=pyo.NonNegativeReals, bounds=(0, 1))

    out_arcs: dict[tuple[int, int], list[Arc]] = {}
    in_arcs: dict[tuple[int, int], list[Arc]] = {}
    for arc in arc_list:
        p, u, v = arc
        out_arcs.setdefault((p, u), []).append(arc)
        in_arcs.setdefault((p + 1, v), []).append(arc)

    model.leave_source = pyo.Constraint(expr=sum(model.y[a] for a in out_arcs[(0, inst.source)]) == 1)
    model.enter = pyo.Constraint(
        places, rule=lambda m, i, u: sum(m.y[a] for a in in_arcs.get((i + 1, u), [])) == m.x[i, u]
    )
    model.leave = pyo.Constraint(
        places, rule=lambda m, i, u: sum(m.y[a] for a in out_arcs.get((i + 1, u), [])) == m.x[i, u]
    )

    by_server: dict[int, list[int]] = {}
    for i, u in places:
        by_server.setdefault(u, []).append(i)
    binding = [u for u, comps in by_server.items() if sum(inst.cpu[i] for i in comps) > inst.capacity[u]]
    model.capacity = pyo.Constraint(
        sorted(binding),
        rule=lambda m, u: sum(inst.cpu[i] * m.x[i, u] for i in by_server[u]) <= inst.capacity[u],
    )
    model.cost = pyo.Objective(
        expr=sum(float(tables[p].cost[u, v]) * model.y[p, u, v] for p, u, v in arc_list), sense=pyo.minimize
    )
    return model


def mapping(model: pyo.ConcreteModel, inst: PathmapInstance, tables: list[Routes]) -> dict[str, Any]:
    """The solution JSON of a solved model: x for the servers, the routes behind them for the paths."""
    nodes = [-1] * inst.n_components
    for (i, u), var in model.x.items():
        if var.value is not None and var.value > 0.5:
            nodes[i] = u
    ends = (inst.source, *nodes, inst.sink)
    paths = tuple(tables[p].path(ends[p], ends[p + 1]) for p in range(inst.n_pairs))
    return solution_json(inst, tuple(nodes), paths)


def set_start(model: pyo.ConcreteModel, inst: PathmapInstance, solution: dict[str, Any]) -> None:
    """Give x its values at the mapping of ``solution`` (the warm-start contract of :mod:`odrp.core.exact`).

    x[i, u] = 1 for the server u of component i, every other x 0; the flow y is left to the solver.
    A feasible mapping's servers are all in the stages (its own paths connect them within the
    bandwidth and hop limits), so each x[i, u] it names exists.
    """
    nodes, _ = parse_solution(inst, solution, "warm start")
    clear_values(model)
    for i, u in enumerate(nodes):
        model.x[i, u].set_value(1)
