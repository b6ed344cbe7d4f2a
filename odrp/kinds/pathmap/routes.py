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
numpy does the min-plus products, in blocks of rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from odrp.kinds.pathmap.instance import PathmapInstance

_BLOCK = 32  # rows per min-plus block: 32 x n x n floats


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


def routes(w: np.ndarray, hops: int) -> Routes:
    """Hop-limited least-cost routes for the link-cost matrix ``w`` (+inf: no usable link)."""
    n = w.shape[0]
    current = np.full((n, n), np.inf)
    np.fill_diagonal(current, 0.0)
    levels = [current]
    via = [np.zeros((n, n), dtype=np.int64)]
    for _ in range(hops):
        nxt = current.copy()
        arg = np.zeros((n, n), dtype=np.int64)
        for start in range(0, n, _BLOCK):
            block = current[start : start + _BLOCK]  # (b, n): D(s, a)
            relaxed = block[:, :, None] + w[None, :, :]  # (b, n, n): D(s, a) + W(a, v)
            best = relaxed.argmin(axis=1)
            value = np.take_along_axis(relaxed, best[:, None, :], axis=1)[:, 0, :]
            improved = value < nxt[start : start + _BLOCK]
            nxt[start : start + _BLOCK][improved] = value[improved]
            arg[start : start + _BLOCK] = best
        levels.append(nxt)
        via.append(arg)
        current = nxt
    return Routes(tuple(levels), tuple(via))


def pair_routes(instance: PathmapInstance, relax_bandwidth: bool = False) -> list[Routes]:
    """Routes for each consecutive pair p = 0..m (one computation per distinct requirement)."""
    by_class: dict[float | None, Routes] = {}
    out = []
    for requirement in instance.bandwidth:
        key = None if relax_bandwidth else requirement
        if key not in by_class:
            by_class[key] = routes(weights(instance, key), instance.max_hops)
        out.append(by_class[key])
    return out
