"""Hop-limited least-cost routes between every two servers of a pathmap instance, per bandwidth class.

Because the pathmap semantics check each consecutive pair's path on its own (bandwidth per pair, not
summed; see :mod:`odrp.kinds.pathmap.instance`), the best path of a pair depends only on where its two ends
are placed, on the pair's bandwidth requirement and on the hop limit. For a requirement b and a hop
limit H the least cost D_b(u, v) of a path from u to v with at most H links, every one carrying b,
is H rounds of the Bellman-Ford recursion in min-plus form:

    D^0 = 0 on the diagonal, +inf elsewhere;
    D^h(s, v) = min(D^{h-1}(s, v), min_a D^{h-1}(s, a) + W_b(a, v)),

where W_b(a, v) is the cheapest link between a and v whose bandwidth is >= b (+inf if none). The
exact model and the paper's lower bound (with W over every link: bandwidth relaxed) use these tables.
numpy runs the recursion over the links, in chunks of start servers, for the start servers asked for.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from odrp.core.solvers.timing import OutOfTime
from odrp.kinds.pathmap.instance import PathmapInstance

_CELLS = 4_000_000
"""Start servers times arcs relaxed at once (32 MB of floats)."""


@dataclass(frozen=True)
class Routes:
    """Least costs with at most h links (``levels[h]``) and the hop that achieved each improvement."""

    levels: tuple[np.ndarray, ...]
    via: tuple[np.ndarray, ...]

    @property
    def cost(self) -> np.ndarray:
        """D(u, v) with the full hop limit; +inf where no path carries the requirement."""
        return self.levels[-1]

    def path(self, u: int, v: int) -> tuple[int, ...]:
        """A least-cost path from u to v as a server sequence (``(u,)`` when u == v)."""
        if not np.isfinite(self.levels[-1][u, v]):
            raise ValueError(f"no path from {u} to {v}")
        reverse = [v]
        node = v
        for h in range(len(self.levels) - 1, 0, -1):
            if self.levels[h][u, node] < self.levels[h - 1][u, node]:
                node = int(self.via[h][u, node])
                reverse.append(node)
        assert node == u
        return tuple(reversed(reverse))


def weights(instance: PathmapInstance, requirement: float | None) -> np.ndarray:
    """W_b: the cheapest link between two servers carrying ``requirement`` (None: any link)."""
    n = instance.n_servers
    w = np.full((n, n), np.inf)
    for link in instance.links:
        if (requirement is None or link.bandwidth >= requirement) and link.cost < w[link.u, link.v]:
            w[link.u, link.v] = w[link.v, link.u] = link.cost
    return w


def routes(w: np.ndarray, hops: int, rows: Iterable[int] | None = None, deadline: float | None = None) -> Routes:
    """Hop-limited least-cost routes for the link-cost matrix ``w`` (+inf: no usable link).

    ``rows``: the start servers whose routes are needed (None: every server; the other rows stay
    +inf off the diagonal). The recursion runs over the links (arcs a -> v with finite W), sorted by
    their end v: min_a D(s, a) + W(a, v) is a segmented minimum over the arcs into v, ties going to
    the smallest a. ``deadline`` (a ``time.perf_counter()`` value): :exc:`OutOfTime` past it.
    """
    n = w.shape[0]
    sources = np.arange(n) if rows is None else np.array(sorted(set(rows)), dtype=np.int64)
    heads, tails = np.nonzero(np.isfinite(w.T))  # sorted by head v, then tail a
    cost = w[tails, heads]
    current = np.full((n, n), np.inf)
    current[sources, sources] = 0.0
    levels = [current]
    via = [np.zeros((n, n), dtype=np.int64)]
    starts = np.flatnonzero(np.r_[True, heads[1:] != heads[:-1]]) if len(heads) else np.zeros(0, dtype=np.int64)
    segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(heads)]))
    targets = heads[starts]
    chunk = max(1, _CELLS // max(1, len(heads)))
    for _ in range(hops):
        nxt = current.copy()
        arg = np.zeros((n, n), dtype=np.int64)
        for first in range(0, len(sources) if len(heads) else 0, chunk):
            if deadline is not None and time.perf_counter() > deadline:
                raise OutOfTime("the time limit came while computing the hop-limited routes")
            rows_here = sources[first : first + chunk]
            relaxed = current[rows_here][:, tails] + cost[None, :]  # (r, arcs): D(s, a) + W(a, v)
            value = np.minimum.reduceat(relaxed, starts, axis=1)  # (r, targets)
            hit_row, hit_arc = np.nonzero(relaxed == value[:, segment])
            best = np.zeros((len(rows_here), n), dtype=np.int64)
            best[hit_row[::-1], heads[hit_arc[::-1]]] = tails[hit_arc[::-1]]  # the last write is the first arc
            block = nxt[rows_here][:, targets]
            improved = value < block
            block[improved] = value[improved]
            nxt[np.ix_(rows_here, targets)] = block
            arg[rows_here] = best
        levels.append(nxt)
        via.append(arg)
        current = nxt
    return Routes(tuple(levels), tuple(via))


def pair_routes(
    instance: PathmapInstance,
    relax_bandwidth: bool = False,
    rows: list[Iterable[int]] | None = None,
    deadline: float | None = None,
) -> list[Routes]:
    """Routes for each consecutive pair p = 0..m (one computation per distinct requirement).

    ``rows[p]``: the servers where pair p may start (None: every server); pairs of one requirement
    share the union of theirs. ``deadline``: see :func:`routes`.
    """
    keys = [None if relax_bandwidth else requirement for requirement in instance.bandwidth]
    wanted: dict[float | None, set[int] | None] = {}
    for p, key in enumerate(keys):
        if rows is None:
            wanted[key] = None
        elif key not in wanted:
            wanted[key] = set(rows[p])
        elif wanted[key] is not None:
            wanted[key] |= set(rows[p])
    by_class = {
        key: routes(weights(instance, key), instance.max_hops, rows_, deadline) for key, rows_ in wanted.items()
    }
    return [by_class[key] for key in keys]
