"""Tabu search for the 0-1 quadratic knapsack problem: the known solution the QKP reduction starts from.

The reduction (:mod:`odrp.kinds.knapsack.exact.qkp_reduction`) fixes a variable when the LP bound with it
flipped falls below the value of a known solution, so every unit of that value counts: a start a few
swaps below the optimum can leave twice as many items free (docs/methods/knapsack.md).

Moves on the set S of packed items (Glover's tabu search, as used for the QKP by e.g. Yang, Wang and
Chu 2013): *add* i (if it fits), *drop* i, *swap* i in S for j outside (if it fits). With
g_i = c_i + sum_{j in S, j != i} p_ij the gains are g_i, -g_i and g_j - g_i - p_ij, all read off one
vector kept up to date in O(n) per move. Each iteration makes the best move that is not tabu (an item
moved in the last ``tenure`` + 0..2 iterations is tabu) even when it loses, unless a tabu move gives a
new best solution (aspiration). Several runs (one per tenure and seed of
:class:`~odrp.kinds.knapsack.exact.settings.TabuSettings`) start from the given solution; the best
solution found is returned. Deterministic for given settings.
"""

from __future__ import annotations

import time

import numpy as np

from odrp.kinds.knapsack.exact.qkp_reduction import Qkp
from odrp.kinds.knapsack.exact.settings import TabuSettings

EPS = 1e-9
"""Smallest gain that counts as a better solution; capacity slack relative to the capacity."""


def improve(
    q: Qkp, chosen: np.ndarray, deadline: float | None = None, settings: TabuSettings | None = None
) -> tuple[np.ndarray, float]:
    """The best solution (0-1 vector) and its value over tabu-search runs from the feasible ``chosen``."""
    settings = settings or TabuSettings()
    best, best_value = np.asarray(chosen, dtype=bool), q.value(chosen)
    for tenure in settings.tenures:
        for seed in settings.seeds:
            found, value = tabu_search(q, chosen, tenure, seed, settings.iterations, deadline)
            if value > best_value + EPS:
                best, best_value = found, value
    return best.astype(int), best_value


def tabu_search(
    q: Qkp, chosen: np.ndarray, tenure: int, seed: int, iterations: int, deadline: float | None = None
) -> tuple[np.ndarray, float]:
    """One tabu-search run from ``chosen``; returns the best solution met and its value."""
    rng = np.random.default_rng(seed)
    p, w, capacity = q.pairs, q.weight, q.capacity + EPS * max(1.0, abs(q.capacity))
    x = np.asarray(chosen, dtype=bool).copy()
    gain = q.linear + p @ x
    load, value = float(w @ x), q.value(x)
    best, best_value = x.copy(), value
    tabu_until = np.zeros(q.n, dtype=int)
    for it in range(iterations):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        move = _best_move(x, gain, p, w, load, capacity, tabu_until > it, best_value - value)
        if move is None:
            break
        delta, leaving, entering = move
        for item, packed in ((leaving, False), (entering, True)):
            if item is not None:
                x[item] = packed
                gain += p[:, item] if packed else -p[:, item]
                load += w[item] if packed else -w[item]
                tabu_until[item] = it + tenure + int(rng.integers(0, 3))
        value += delta
        if value > best_value + EPS:
            best, best_value = x.copy(), value
    return best, best_value


def _best_move(
    x: np.ndarray,
    gain: np.ndarray,
    p: np.ndarray,
    w: np.ndarray,
    load: float,
    capacity: float,
    tabu: np.ndarray,
    to_best: float,
) -> tuple[float, int | None, int | None] | None:
    """(gain, item leaving, item entering) of the best admissible move, None if there is none.
    A move is admissible when none of its items is tabu or when it gains more than ``to_best``."""
    inside, outside = np.flatnonzero(x), np.flatnonzero(~x)
    moves: list[tuple[float, int | None, int | None]] = []
    add = gain[outside]
    add = np.where((load + w[outside] <= capacity) & (~tabu[outside] | (add > to_best + EPS)), add, -np.inf)
    if len(outside) and np.isfinite(add.max()):
        moves.append((float(add.max()), None, int(outside[np.argmax(add)])))
    drop = -gain[inside]
    drop = np.where(~tabu[inside] | (drop > to_best + EPS), drop, -np.inf)
    if len(inside) and np.isfinite(drop.max()):
        moves.append((float(drop.max()), int(inside[np.argmax(drop)]), None))
    if len(inside) and len(outside):
        swap = gain[outside][None, :] - gain[inside][:, None] - p[np.ix_(inside, outside)]
        fits = load - w[inside][:, None] + w[outside][None, :] <= capacity
        free = ~tabu[inside][:, None] & ~tabu[outside][None, :]
        swap = np.where(fits & (free | (swap > to_best + EPS)), swap, -np.inf)
        a, b = np.unravel_index(np.argmax(swap), swap.shape)
        if np.isfinite(swap[a, b]):
            moves.append((float(swap[a, b]), int(inside[a]), int(outside[b])))
    return max(moves, key=lambda m: m[0]) if moves else None
