"""The moves of the ODRP search heuristics: neighbourhoods of a placement, each move feasible.

A move is a tuple of replica shifts ``(operator i, node u, change of i's replicas on u)``;
:func:`realise` turns it into the operators' new multisets, which
:meth:`~odrp.heuristics.replication_state.PlacementState.apply` takes. Every move generated keeps each
operator at a stable replica count 1..k_i on its candidate nodes and every node within capacity.
The generators yield these light tuples, so that a search pays for building multisets only for
the moves it evaluates.

- :func:`single_moves`: add one replica, remove one, or move one to another node;
- :func:`swap_moves`: exchange a replica of operator i on u with one of operator j on v;
- :func:`node_swaps`: exchange nodes u and v for every operator that may run on both.
"""

from __future__ import annotations

from collections.abc import Iterator

from odrp.heuristics.replication_state import PlacementState

Shift = tuple[int, int, int]
"""(operator i, node u, change in i's replicas on u)."""
Move = tuple[Shift, ...]
Change = tuple[int, dict[int, int]]
"""Operator i gets the multiset (node -> replicas)."""


def realise(state: PlacementState, move: Move) -> list[Change]:
    """The new multiset of every operator a move touches."""
    new: dict[int, dict[int, int]] = {}
    for i, u, delta in move:
        counts = new.get(i)
        if counts is None:
            counts = new[i] = dict(state.counts[i])
        c = counts.get(u, 0) + delta
        if c:
            counts[u] = c
        else:
            del counts[u]
    return list(new.items())


def shifted(counts: dict[int, int], u: int, delta: int) -> dict[int, int]:
    """``counts`` with ``delta`` more replicas on node u (a new dict)."""
    new = dict(counts)
    c = new.get(u, 0) + delta
    if c:
        new[u] = c
    else:
        del new[u]
    return new


def single_moves(state: PlacementState) -> Iterator[Move]:
    """Add, remove or move one replica of one operator, keeping the placement feasible."""
    t = state.t
    for i in range(t.n_ops):
        counts, total = state.counts[i], state.total[i]
        room = [v for v in t.candidates[i] if state.fits(i, v)]
        if total < t.max_replicas[i]:
            for v in room:
                yield ((i, v, 1),)
        if total > 1 and t.stable[i][total - 1]:
            for u in counts:
                yield ((i, u, -1),)
        for u in counts:
            for v in room:
                if v != u:
                    yield ((i, u, -1), (i, v, 1))


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
                        yield ((i, u, -1), (i, v, 1), (j, v, -1), (j, u, 1))


def node_swaps(state: PlacementState) -> Iterator[Move]:
    """Exchange nodes u and v for every operator that may run on both: its replicas on u go to v
    and those on v go to u (operators pinned elsewhere stay), within capacity."""
    t = state.t
    res = t.resources
    for u in range(t.n_nodes):
        for v in range(u + 1, t.n_nodes):
            move: list[Shift] = []
            load_u, load_v = state.load[u], state.load[v]
            for i in range(t.n_ops):
                counts = state.counts[i]
                cu, cv = counts.get(u, 0), counts.get(v, 0)
                if cu == cv or u not in t.candidate_set[i] or v not in t.candidate_set[i]:
                    continue
                move += [(i, u, cv - cu), (i, v, cu - cv)]
                load_u += (cv - cu) * res[i]
                load_v += (cu - cv) * res[i]
            if move and load_u <= t.capacity[u] and load_v <= t.capacity[v]:
                yield tuple(move)


def neighbourhood(state: PlacementState) -> list[Move]:
    return [*single_moves(state), *swap_moves(state), *node_swaps(state)]


LEVELS = (single_moves, swap_moves, node_swaps)
"""The neighbourhoods of the descent, smallest first (variable neighbourhood descent)."""


def attributes(move: Move) -> list[tuple[int, int, int]]:
    """(operator, node, +1 | -1) for every replica count a move raises or lowers."""
    return [(i, u, 1 if delta > 0 else -1) for i, u, delta in move]
