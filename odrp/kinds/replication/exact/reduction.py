"""Node choices that cannot beat a known placement's response time (exact domain reduction).

For a candidate node u of operator i, two dynamic programmes over the operator graph give lower
bounds on any placement in which i has a replica on u:

    H(i, u) = max over streams (j, i) of  min over v in V_j of  H(j, v) + l(j, v) + d_vu,
    T(i, u) = max over streams (i, j) of  min over v in V_j of  d_uv + l(j, v) + T(j, v),

with H = 0 at the sources, T = 0 at the sinks, V_j the remaining candidates of j and
l(j, v) = min_k R_j(lambda_j / k) / S_v the least latency of j with a replica on v.

- H(i, u) bounds the start of i (eqs. 8-11): by induction, if j has a replica on v then j starts
  no earlier than H(j, v); j's latency is at least l(j, v) (eq. 1: the slowest used node counts)
  and the stream delay to a replica of i on u is at least d_vu (eq. 4: the largest pair counts);
  as j has *some* replica, the minimum over v applies, and the start of i is the maximum over its
  incoming streams. T(i, u) bounds, likewise, the time from the end of i to the end of the
  latest sink it reaches.
- Hence every placement using (i, u) has response time R >= LB(i, u) = H(i, u) + l(i, u) +
  T(i, u); with k replicas of i, R >= H(i, u) + R_i(lambda_i/k)/S_u + T(i, u); and every
  placement using (i, u) and (j, v) for a stream (i, j) has R >= H(i, u) + l(i, u) + d_uv +
  l(j, v) + T(j, v).

Given a placement with response time R0, a node (a replica count on a node, a pair of nodes on
a stream) whose bound exceeds R0 cannot appear in a placement at least as good, so dropping it
keeps every optimal placement. Dropped nodes shrink the candidate sets V_j, which raises H and T: the reduction is
repeated until nothing changes. The known placement itself is never dropped (its own bounds are
at most R0), so the reduced problem keeps a placement as good as it.
"""

from __future__ import annotations

import dataclasses

from odrp.kinds.replication.instance import OdrpInstance

#: Bounds are compared with R0 plus this margin (seconds), far below any solver tolerance.
MARGIN = 1e-9


@dataclasses.dataclass(frozen=True)
class Reduction:
    """The instance with reduced candidate sets, and node pairs that no stream may use together."""

    instance: OdrpInstance
    conflicts: tuple[tuple[int, int, int, int], ...]  # (i, u, j, v): not both i on u and j on v
    excluded: tuple[tuple[int, int, int], ...]  # (i, u, k): no replica of i on u when i has k replicas
    removed: int  # candidate nodes dropped


def least_latency(inst: OdrpInstance, i: int, u: int) -> float:
    """l(i, u): the smallest latency of operator i with a replica on node u."""
    return min(inst.latency(i, k) for k in inst.replica_counts(i)) / inst.speedup[u]


def heads_and_tails(inst: OdrpInstance, candidates) -> tuple[dict, dict]:
    """H(i, u) and T(i, u) of the module docstring for the given candidate sets."""
    head: dict[tuple[int, int], float] = {}
    for i in inst.topological_order:
        for u in candidates[i]:
            head[i, u] = max(
                (
                    min(head[j, v] + least_latency(inst, j, v) + inst.delay[v][u] for v in candidates[j])
                    for j in (inst.streams[s].source for s in inst.incoming[i])
                ),
                default=0.0,
            )
    tail: dict[tuple[int, int], float] = {}
    for i in reversed(inst.topological_order):
        for u in candidates[i]:
            tail[i, u] = max(
                (
                    min(inst.delay[u][v] + least_latency(inst, j, v) + tail[j, v] for v in candidates[j])
                    for j in (inst.streams[s].target for s in inst.outgoing[i])
                ),
                default=0.0,
            )
    return head, tail


def lower_bounds(inst: OdrpInstance) -> dict[tuple[int, int], float]:
    """LB(i, u): the least response time of any placement with a replica of i on u."""
    head, tail = heads_and_tails(inst, inst.candidates)
    return {(i, u): head[i, u] + least_latency(inst, i, u) + tail[i, u] for (i, u) in head}


def reduce(inst: OdrpInstance, response_time: float) -> Reduction:
    """Drop every node choice that forces a response time above ``response_time`` (a known R0)."""
    limit = response_time + MARGIN
    candidates = [list(c) for c in inst.candidates]
    while True:
        head, tail = heads_and_tails(inst, candidates)
        kept = [
            [u for u in candidates[i] if head[i, u] + least_latency(inst, i, u) + tail[i, u] <= limit]
            for i in range(inst.n_operators)
        ]
        if kept == candidates or not all(kept):
            break
        candidates = kept
    conflicts = tuple(
        (st.source, u, st.target, v)
        for st in inst.streams
        for u in candidates[st.source]
        for v in candidates[st.target]
        if head[st.source, u]
        + least_latency(inst, st.source, u)
        + inst.delay[u][v]
        + least_latency(inst, st.target, v)
        + tail[st.target, v]
        > limit
    )
    excluded = tuple(
        (i, u, k)
        for i in range(inst.n_operators)
        for u in candidates[i]
        for k in inst.replica_counts(i)
        if head[i, u] + inst.latency(i, k) / inst.speedup[u] + tail[i, u] > limit
    )
    removed = sum(map(len, inst.candidates)) - sum(map(len, candidates))
    reduced = dataclasses.replace(inst, candidates=tuple(tuple(c) for c in candidates))
    return Reduction(reduced, conflicts, excluded, removed)
