"""The moves of the ODRP search heuristics: neighbourhoods of a placement, each move feasible.

A move is a tuple of changes ``(operator i, its new multiset {node: replicas})``; applying it to a
:class:`~heuristics.odrp_state.PlacementState` keeps every operator at a stable replica count
1..k_i on its candidate nodes and every node within capacity.

- :func:`single_moves`: add one replica, remove one, or move one to another node;
- :func:`swap_moves`: exchange a replica of operator i on u with one of operator j on v;
- :func:`node_swaps`: exchange nodes u and v for every operator that may run on both.
"""

from __future__ import annotations

from collections.abc import Iterator

from heuristics.odrp_state import PlacementState

Change = tuple[int, dict[int, int]]
"""Operator i gets the multiset (node -> replicas)."""
Move = tuple[Change, ...]


def shifted(counts: dict[int, int], u: int, delta: int) -> dict[int, int]:
    new = dict(counts)
    c = new.get(u, 0) + delta
    if c:
        new[u] = c
    else:
        del new[u]
    return new


def relocated(counts: dict[int, int], u: int, v: int) -> dict[int, int]:
    return shifted(shifted(counts, u, -1), v, 1)


def single_moves(state: PlacementState) -> Iterator[Move]:
    """Add, remove or move one replica of one operator, keeping the placement feasible."""
    t = state.t
    for i in range(t.n_ops):
        counts, total = state.counts[i], state.total[i]
        if total < t.max_replicas[i]:
            for v in t.candidates[i]:
                if state.fits(i, v):
                    yield ((i, shifted(counts, v, 1)),)
        if total > 1 and t.stable[i][total - 1]:
            for u in counts:
                yield ((i, shifted(counts, u, -1)),)
        for u in counts:
            for v in t.candidates[i]:
                if v != u and state.fits(i, v):
                    yield ((i, relocated(counts, u, v)),)


def swap_moves(state: PlacementState) -> Iterator[Move]:
    """Exchange a replica of i on u with a replica of j on v (i != j, u != v), within capacity."""
    t = state.t
    res = t.resources
    for i in range(t.n_ops):
        for j in range(i + 1, t.n_ops):
            for u in state.counts[i]:
                if u not in t.candidate_set[j]:
                    continue
                for v in state.counts[j]:
                    if v == u or v not in t.candidate_set[i]:
                        continue
                    if state.fits(i, v, freed=res[j]) and state.fits(j, u, freed=res[i]):
                        yield ((i, relocated(state.counts[i], u, v)), (j, relocated(state.counts[j], v, u)))


def node_swaps(state: PlacementState) -> Iterator[Move]:
    """Exchange nodes u and v for every operator that may run on both: its replicas on u go to v
    and those on v go to u (operators pinned elsewhere stay), within capacity."""
    t = state.t
    res = t.resources
    for u in range(t.n_nodes):
        for v in range(u + 1, t.n_nodes):
            move = []
            load_u, load_v = state.load[u], state.load[v]
            for i in range(t.n_ops):
                counts = state.counts[i]
                cu, cv = counts.get(u, 0), counts.get(v, 0)
                if cu == cv or u not in t.candidate_set[i] or v not in t.candidate_set[i]:
                    continue
                new = dict(counts)
                new.pop(u, None)
                new.pop(v, None)
                if cv:
                    new[u] = cv
                if cu:
                    new[v] = cu
                move.append((i, new))
                load_u += (cv - cu) * res[i]
                load_v += (cu - cv) * res[i]
            if move and load_u <= t.capacity[u] and load_v <= t.capacity[v]:
                yield tuple(move)


def neighbourhood(state: PlacementState) -> list[Move]:
    return [*single_moves(state), *swap_moves(state), *node_swaps(state)]


LEVELS = (single_moves, swap_moves, node_swaps)
"""The neighbourhoods of the descent, smallest first (variable neighbourhood descent)."""


def attributes(state: PlacementState, move: Move) -> list[tuple[int, int, int]]:
    """(operator, node, +1 | -1) for every replica count a move raises or lowers."""
    out = []
    for i, new in move:
        old = state.counts[i]
        for u in set(old) | set(new):
            diff = new.get(u, 0) - old.get(u, 0)
            if diff:
                out.append((i, u, 1 if diff > 0 else -1))
    return out
