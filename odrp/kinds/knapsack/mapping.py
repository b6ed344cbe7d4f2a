"""Every kind of the knapsack family as a special case of :class:`~odrp.kinds.knapsack.family.Family`.

| kind   | classes          | knapsacks (groups) | dimensions                   | pairs                  | assignment  |
|--------|------------------|--------------------|------------------------------|------------------------|-------------|
| kp     | items            | 1                  | weight (hard)                | -                      | at most one |
| mkp    | items            | m                  | weight (hard)                | -                      | at most one |
| gap    | items            | m, values[k][j]    | weights[k][j] (hard)         | -                      | exactly one |
| mdkp   | items            | 1                  | d weights (hard)             | -                      | at most one |
| qkp    | items            | 1                  | weight (hard)                | p_ij, one knapsack     | at most one |
| qmkp   | items            | m                  | weight (hard)                | p_ij, one knapsack     | at most one |
| qm3dkp | components (x p) | nodes (racks)      | cpu, bandwidth soft; memory  | w/(pA pB) node/rack    | exactly one |

Items of a pair-free kind that are identical (same profit and weight in every knapsack) are merged
into one class: their copies are interchangeable, so a count per knapsack replaces one binary per
item (``merge_identical=False`` keeps one class per item).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from odrp.kinds.knapsack import instance as classic
from odrp.kinds.knapsack import qm3dkp
from odrp.kinds.knapsack.family import Family


def family_of(instance: Any, merge_identical: bool = True) -> Family:
    """The general form of an instance of any kind of the family."""
    if isinstance(instance, qm3dkp.Qm3dkpInstance):
        return _qm3dkp(instance)
    return _classic(instance, merge_identical)


def solution_of(instance: Any, family: Family, counts: np.ndarray) -> dict[str, Any]:
    """The kind's solution JSON for the counts of ``family`` (as returned by :func:`family_of`)."""
    where = family.assignment(np.asarray(counts))
    if isinstance(instance, qm3dkp.Qm3dkpInstance):
        return qm3dkp.solution_json({str(task): family.knapsacks[k] for task, k in where.items()})
    return classic.solution_json([where.get(j) for j in range(instance.n_items)])


def counts_of_solution(instance: Any, family: Family, solution: dict[str, Any], source: str) -> np.ndarray:
    """The counts of ``family`` at a solution JSON of the kind (the inverse of :func:`solution_of`)."""
    if isinstance(instance, qm3dkp.Qm3dkpInstance):
        node = {name: k for k, name in enumerate(family.knapsacks)}
        placed = qm3dkp.parse_solution(instance, solution, source)
        where: dict[Hashable, int] = {task: node[n] for task, n in placed.items() if n is not None}
    else:
        items = classic.parse_assignment(instance, solution, source)
        where = {j: k for j, k in enumerate(items) if k is not None}
    return family.counts_of(where)


# ------------------------------------------------------------------------------- classic kinds


def _classic(inst: classic.KnapsackInstance, merge_identical: bool) -> Family:
    n, m = inst.n_items, inst.n_knapsacks
    profit = np.zeros((n, m))
    exactly_one = False
    sense = inst.sense
    pairs: list[tuple[int, int, float]] = []
    if isinstance(inst, classic.Gap):
        profit[:] = np.asarray(inst.values, dtype=float).T
        weight = np.asarray(inst.weights, dtype=float).T[None, :, :]
        capacity = np.asarray(inst.capacities, dtype=float)[None, :]
        exactly_one = True
    elif isinstance(inst, classic.Mdkp):
        profit[:, 0] = inst.profits
        weight = np.asarray(inst.weights, dtype=float)[:, :, None]
        capacity = np.asarray(inst.capacities, dtype=float)[:, None]
    else:
        quadratic = isinstance(inst, classic.Qkp | classic.Qmkp)
        linear = [inst.profits[j][j] for j in range(n)] if quadratic else inst.profits
        profit[:] = np.asarray(linear, dtype=float)[:, None]
        weight = np.repeat(np.asarray(inst.weights, dtype=float)[None, :, None], m, axis=2)
        caps = [inst.capacity] if isinstance(inst, classic.Kp | classic.Qkp) else inst.capacities
        capacity = np.asarray(caps, dtype=float)[None, :]
        if quadratic:
            pairs = [(i, j, inst.profits[i][j]) for i in range(n) for j in range(i + 1, n) if inst.profits[i][j]]
    members: list[tuple[Hashable, ...]] = [(j,) for j in range(n)]
    if merge_identical and not pairs:
        members, profit, weight = _merge_identical(profit, weight)
    pa = np.array([a for a, _, _ in pairs], dtype=int)
    pb = np.array([b for _, b, _ in pairs], dtype=int)
    return Family(
        name=inst.name,
        sense=sense,  # type: ignore[arg-type]
        classes=tuple(members),
        knapsacks=tuple(f"knapsack {k}" for k in range(m)),
        groups=(0,) * m,
        profit=profit,
        weight=weight,
        capacity=capacity,
        penalty=(None,) * capacity.shape[0],
        pair_a=pa,
        pair_b=pb,
        pair_knapsack=np.array([q for _, _, q in pairs], dtype=float),
        pair_group=np.zeros(len(pairs)),
        exactly_one=exactly_one,
        dimensions=tuple(f"dimension {d}" for d in range(capacity.shape[0])),
    )


def _merge_identical(
    profit: np.ndarray, weight: np.ndarray
) -> tuple[list[tuple[Hashable, ...]], np.ndarray, np.ndarray]:
    """Group items with equal profit row and equal weights; classes in order of their first item."""
    keys: dict[bytes, list[int]] = {}
    for j in range(profit.shape[0]):
        key = profit[j].tobytes() + weight[:, j, :].tobytes()
        keys.setdefault(key, []).append(j)
    firsts = [items[0] for items in keys.values()]
    return [tuple(items) for items in keys.values()], profit[firsts], weight[:, firsts, :]


# ------------------------------------------------------------------------------------- QM3DKP


def _qm3dkp(inst: qm3dkp.Qm3dkpInstance) -> Family:
    comps, nodes = inst.components, inst.nodes
    racks = {r: g for g, r in enumerate(inst.racks)}
    dims = ("cpu", "memory", "bandwidth")
    penalty = (inst.penalty_cpu, None, inst.penalty_bandwidth)
    weight = np.array([[[getattr(c, d)] * len(nodes) for c in comps] for d in dims], dtype=float)
    capacity = np.array([[getattr(n, d) for n in nodes] for d in dims], dtype=float)
    # a soft dimension without penalty constrains nothing: drop it
    keep = [d for d in range(3) if penalty[d] is None or penalty[d] > 0]
    share: dict[tuple[int, int], float] = {}
    for e in inst.edges:
        a, b = sorted((e.source, e.target))
        share[a, b] = share.get((a, b), 0.0) + e.weight / (comps[a].parallelism * comps[b].parallelism)
    keys = sorted(share)
    return Family(
        name=inst.name,
        sense="max",
        classes=tuple(c.tasks for c in comps),
        knapsacks=tuple(n.id for n in nodes),
        groups=tuple(racks[n.rack] for n in nodes),
        profit=np.zeros((len(comps), len(nodes))),
        weight=weight[keep],
        capacity=capacity[keep],
        penalty=tuple(penalty[d] for d in keep),
        pair_a=np.array([a for a, _ in keys], dtype=int),
        pair_b=np.array([b for _, b in keys], dtype=int),
        pair_knapsack=np.array([share[k] * inst.colocation_node for k in keys]),
        pair_group=np.array([share[k] * inst.colocation_rack for k in keys]),
        exactly_one=True,
        dimensions=tuple(dims[d] for d in keep),
    )
