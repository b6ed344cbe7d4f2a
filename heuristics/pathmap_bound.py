"""The paper's lower bound on the pathmap optimum (section 4.2): a least-cost multistage path.

"We relaxed the bandwidth constraints and transformed the problem into finding an optimal cost path
in a multi-stage graph. The first and last stages resemble the source and the terminal nodes. Each of
the internal stages have n vertices, resembling the choice of any of the n servers for the processing
components of the task. Then we compute the lowest cost path from source to the terminal vertex,
subject to the node-capacity constraints only."

Our reading:

- the arc from server u in stage p to server v in stage p + 1 costs D(u, v), the least cost of a path
  from u to v with at most ``max_null`` + 1 links over *every* link whatever its bandwidth (bandwidth
  relaxed; the hop limit is not a bandwidth constraint and stays);
- "subject to the node-capacity constraints": stage i keeps the servers that host component i's
  service and whose capacity holds component i on its own. Summing the cpu of several components on
  one server would couple the stages and make the bound as hard as the problem itself (it is then the
  exact model's side constraint); dropping the coupling relaxes further, so the value is still a
  lower bound, computed by one dynamic programme over the stages in O(m n^2).

Every feasible mapping is a path of this multistage graph of no smaller cost, so the least-cost path
is a lower bound; +inf (no path) proves the instance infeasible. When the least-cost path also
respects the summed capacities and its pairs can be routed at the same cost with their bandwidths,
it is an optimal mapping, and :func:`multistage_bound` returns it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from odrp.kinds.pathmap.instance import PathmapInstance
from odrp.kinds.pathmap.routes import pair_routes


@dataclass(frozen=True)
class MultistageBound:
    """The bound, the multistage path that attains it, and the mapping when that path is optimal."""

    bound: float
    nodes: tuple[int, ...] | None
    optimal_paths: tuple[tuple[int, ...], ...] | None


def multistage_bound(inst: PathmapInstance) -> MultistageBound:
    """Least-cost path through the stages with bandwidth relaxed (see the module docstring)."""
    relaxed = pair_routes(inst, relax_bandwidth=True)[0]  # one table: every pair has the same relaxation
    cost = relaxed.cost
    layers = [(inst.source,), *(inst.candidates(i) for i in range(inst.n_components)), (inst.sink,)]
    best = {inst.source: 0.0}
    back: list[dict[int, int]] = []
    for p in range(inst.n_pairs):
        reached: dict[int, float] = {}
        came: dict[int, int] = {}
        for v in layers[p + 1]:
            for u, value in best.items():
                total = value + cost[u, v]
                if np.isfinite(total) and total < reached.get(v, math.inf):
                    reached[v], came[v] = float(total), u
        best = reached
        back.append(came)
    if inst.sink not in best:
        return MultistageBound(math.inf, None, None)
    bound = best[inst.sink]
    chain = [inst.sink]
    for p in range(inst.n_pairs - 1, -1, -1):
        chain.append(back[p][chain[-1]])
    ends = tuple(reversed(chain))
    nodes = ends[1:-1]

    used: dict[int, float] = {}
    for i, u in enumerate(nodes):
        used[u] = used.get(u, 0.0) + inst.cpu[i]
    tables = pair_routes(inst)
    routed = sum(float(tables[p].cost[ends[p], ends[p + 1]]) for p in range(inst.n_pairs))
    if routed <= bound and all(load <= inst.capacity[u] for u, load in used.items()):
        paths = tuple(tables[p].path(ends[p], ends[p + 1]) for p in range(inst.n_pairs))
        return MultistageBound(bound, nodes, paths)
    return MultistageBound(bound, nodes, None)
