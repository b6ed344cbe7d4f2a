"""Replica-pair shares of the streams, exactly linear, for the compact ODRP model (:mod:`.compact`).

The cost (eqs. 5, 12-14) and network metric (eqs. 17-20) of a stream (i, j) weigh each node pair
(u, v) by the share of the stream's tuples that go from a replica on u to one on v,

    P[s,u,v] = f[i,u] f[j,v],     f[i,u] = U_i(u) / |U_i|   (the share of i's replicas on u),

a product of two placement-dependent quantities. With the replica-level binaries h[i,u,k,m] of
:mod:`.compact` ("i has k replicas, m of them on u"), f[i,u] = sum_{k,m} (m/k) h[i,u,k,m]. Two exact
linear forms, chosen per stream:

- **One end on one node** (an operator with a single candidate node, or with k_i = 1, always has all
  its replicas on one node: f is a point mass). P is then the only coupling of the two
  distributions: variables P[s,u,v] >= 0 with both marginals

      sum_v P[s,u,v] = f[i,u],    sum_u P[s,u,v] = f[j,v].

  If j sits on v* alone, the second row forces P[s,u,v] = 0 for v != v*, and the first
  P[s,u,v*] = f[i,u] = f[i,u] f[j,v*]; likewise with i alone. |V_i| |V_j| variables.
- **Both ends may spread.** Multiply the binaries of one end a by the distribution of the other end b.
  Levels with the same share m/k are merged into one binary g[a,u,q] = sum_{m/k = q} h[a,u,k,m]
  (at most one is 1, since an operator has one count and one level per node), and
  x[s,u,q,v] = g[a,u,q] f[b,v] through

      sum_v x[s,u,q,v] = g[a,u,q],    sum_q x[s,u,q,v] <= f[b,v],

  exact at integer points (when a has share q on u, the x[s,u,q,.] sum to 1 = sum_v f[b,v] and are
  bounded by f[b,.], so they equal it; otherwise they are 0). Then P = sum_q q x, and the second
  marginal sum_{u} P[s,u,v] = f[b,v] (sum_u f[a,u] = 1, multiplied by f[b,v]) is added: it holds at
  every placement and tightens the relaxation. The end with fewer distinct shares is a.

Either way P is a joint distribution of the two ends' replica shares, so it also serves as the
coupling of the transport bound on the stream delay (:mod:`.compact`), and when both ends are point
masses the transport bound sum_{u != v} d_uv P[s,u,v] is the stream delay itself (eq. 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pyomo.environ as pyo

from odrp.core.solvers.timing import BuildClock
from odrp.kinds.replication.instance import OdrpInstance


@dataclass
class PairShares:
    """P[s,u,v] per stream (an expression per node pair of its two ends' candidates)."""

    share: dict[int, dict[tuple[int, int], Any]] = field(default_factory=dict)
    point_to_point: set[int] = field(default_factory=set)
    """Streams whose two ends are point masses: P is 1 on the one pair they use."""


def point_mass(inst: OdrpInstance, i: int) -> bool:
    """True when operator i always has all its replicas on one node (one candidate, or k_i = 1)."""
    return len(inst.candidates[i]) == 1 or max(inst.replica_counts(i)) == 1


def pair_streams(inst: OdrpInstance) -> tuple[list[int], list[int]]:
    """The streams whose cost or network metric needs the replica-pair shares P, and
    those whose inter-node traffic (eq. 18, no link cost on the stream) needs the co-located share only."""
    with_cost, with_network = inst.weights["cost"] > 0, inst.weights["network"] > 0
    full, diagonal = [], []
    for s, st in enumerate(inst.streams):
        i, j = st.source, st.target
        needs_cost = with_cost and any(inst.link_cost[u][v] > 0 for u in inst.candidates[i] for v in inst.candidates[j])
        if with_network and inst.network_metric == "traffic" and not needs_cost:
            diagonal.append(s)
        elif needs_cost or with_network:
            full.append(s)
    return full, diagonal


def share_classes(levels: list[tuple[int, int]]) -> dict[Fraction, list[tuple[int, int]]]:
    """The levels (k, m) of an operator grouped by their share m/k."""
    out: dict[Fraction, list[tuple[int, int]]] = {}
    for k, c in levels:
        out.setdefault(Fraction(c, k), []).append((k, c))
    return out


def orientation(inst: OdrpInstance, s: int, levels) -> tuple[int, int, dict[Fraction, list[tuple[int, int]]]] | None:
    """None when an end of stream s is a point mass (the coupling form); else (a, b, the share classes of
    a): the end a whose binaries multiply the distribution of the other end b, the one with fewer shares."""
    i, j = inst.streams[s].source, inst.streams[s].target
    if point_mass(inst, i) or point_mass(inst, j):
        return None
    first, second = share_classes(levels[i]), share_classes(levels[j])
    return (i, j, first) if len(first) <= len(second) else (j, i, second)


def build(m: pyo.ConcreteModel, inst: OdrpInstance, streams: list[int], levels, share, clock: BuildClock) -> PairShares:
    """P for ``streams`` on model ``m`` (which holds h); ``share(i, u)`` is f[i,u] as an expression."""
    out = PairShares()
    m.pair = pyo.VarList(domain=pyo.NonNegativeReals)
    m.pair_rows = pyo.ConstraintList()
    for s in streams:
        clock.stage()
        st = inst.streams[s]
        i, j = st.source, st.target
        oriented = orientation(inst, s, levels)
        if oriented is None:
            p = {(u, v): m.pair.add() for u in inst.candidates[i] for v in inst.candidates[j]}
            for u in inst.candidates[i]:
                m.pair_rows.add(sum(p[u, v] for v in inst.candidates[j]) == share(i, u))
            for v in inst.candidates[j]:
                m.pair_rows.add(sum(p[u, v] for u in inst.candidates[i]) == share(j, v))
            out.share[s] = p
            if point_mass(inst, i) and point_mass(inst, j):
                out.point_to_point.add(s)
            continue
        a, b, classes = oriented
        pair: dict[tuple[int, int], Any] = {}
        for u in inst.candidates[a]:
            x = {(q, v): m.pair.add() for q in classes for v in inst.candidates[b]}
            for q, members in classes.items():
                g = sum(m.h[a, u, k, c] for k, c in members)
                m.pair_rows.add(sum(x[q, v] for v in inst.candidates[b]) == g)
            for v in inst.candidates[b]:
                m.pair_rows.add(sum(x[q, v] for q in classes) <= share(b, v))
                pair[u, v] = sum(float(q) * x[q, v] for q in classes)
        for v in inst.candidates[b]:
            m.pair_rows.add(sum(pair[u, v] for u in inst.candidates[a]) == share(b, v))
        out.share[s] = pair if a == i else {(u, v): pair[v, u] for v, u in pair}
    return out
