"""The cutting-plane loop of the latency MILP: triangle rows and knapsack tree rows the LP violates.

The model of :mod:`odrp.kinds.latency.exact.model` starts with no triangle rows of its co-location
metric (w_ab + w_bc - w_ac <= 1; n^3/2 of them) and no knapsack tree rows. :func:`separate_triangles`
solves the LP relaxation, adds the rows it violates, most violated first, and repeats until none is
violated (or a round limit, a deadline, or a bound above the incumbent stops it). Every row is valid
for every integer placement, so the rows found change no optimum, only the LP bound.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory

from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance


def separate_triangles(
    m: pyo.ConcreteModel,
    inst: LatencyInstance,
    settings: LatencySettings,
    *,
    deadline: float | None = None,
    stop_above: float | None = None,
) -> dict[str, Any]:
    """Add the triangle rows that the LP relaxation violates, round after round, until none is.

    The LP relaxation is solved by HiGHS (persistent, warm-started) whichever solver then solves the
    MILP: the rows are valid for every integer placement, so how they are found does not matter.
    With the model's ``knapsack_trees`` rows, violated knapsack tree rows are added in the same
    rounds. At most ``settings.rows_per_round`` rows of each family per round and
    ``settings.separation_rounds`` rounds; ``deadline`` (a ``time.perf_counter()`` value): no new
    round after it; ``stop_above``: stop once the LP bound (unscaled) exceeds it.
    """
    n = inst.n_operators
    per_round = settings.rows_per_round
    binaries = [v for v in m.component_data_objects(pyo.Var) if v.is_binary()]
    for v in binaries:
        v.domain = pyo.UnitInterval
    highs = SolverFactory("highs")
    added: set[tuple[int, int, int]] = set()
    bound, done, tree_rows = None, 0, 0
    try:
        for _ in range(settings.separation_rounds):
            done += 1
            results = highs.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False)
            if results.incumbent_objective is None:
                break
            bound = results.incumbent_objective / m.scale
            if stop_above is not None and bound > stop_above:
                break
            results.solution_loader.load_vars(list(m.w.values()))
            w = np.eye(n)
            for (j, k), var in m.w.items():
                w[j, k] = w[k, j] = var.value
            fresh = [t for t in violated_triangles(w) if t not in added][:per_round]
            for b, a, c in fresh:
                add_triangle(m, b, a, c)
            added.update(fresh)
            fresh_trees = []
            if hasattr(m, "knapsack_trees"):
                results.solution_loader.load_vars(list(m.x.values()) + list(m.z.values()))
                x = np.array([[m.x[i, u].value for u in range(inst.n_supervisors)] for i in range(n)])
                z = np.array([m.z[e].value for e in range(len(inst.edges))])
                fresh_trees = violated_trees(inst, x, z)[:per_round]
                for row in fresh_trees:
                    add_tree(m, *row)
                tree_rows += len(fresh_trees)
            if (not fresh and not fresh_trees) or (deadline is not None and time.perf_counter() > deadline):
                break
    finally:
        for v in binaries:
            v.domain = pyo.Binary
    stats = {"triangles": len(added), "separation_rounds": done, "lp_bound": bound}
    return stats | ({"tree_rows": tree_rows} if hasattr(m, "knapsack_trees") else {})


def add_triangle(m: pyo.ConcreteModel, b: int, a: int, c: int) -> None:
    """w_ab + w_bc - w_ac <= 1: a with b and b with c puts a with c."""
    m.triangles.add(m.w[min(a, b), max(a, b)] + m.w[min(b, c), max(b, c)] - m.w[min(a, c), max(a, c)] <= 1)


def violated_triangles(w: np.ndarray, tolerance: float = 1e-6) -> list[tuple[int, int, int]]:
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
