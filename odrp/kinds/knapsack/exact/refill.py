"""Ruin and recreate for the multiple knapsack: incumbents for the arc-flow search of :mod:`.arcflow`.

A heuristic, so it proves nothing; the arc-flow search uses what it finds as an incumbent, which is
optimal when it meets the proven bound (on strongly correlated Dell'Amico et al. instances the
Lagrangian bound L often equals the optimum, and only the packing is hard to find).

- Start: the knapsacks by non-increasing capacity, each filled by an exact 0-1 knapsack (dynamic
  programming) over the copies still outside (the sequential approach of Martello and Toth 1981),
  or the caller's packing when it is worth at least as much.
- Move: two to four knapsacks drawn at random are emptied and refilled one after another in the
  drawn order, each by an exact 0-1 knapsack over the copies outside every knapsack; the profits of
  a move are perturbed by Gaussian noise (standard deviation drawn from [0, ``noise``]) so that the
  many ties of correlated instances break differently. A refill worth at least the current solution
  replaces it (plateaus are walked), the best is kept.
- Stop: at ``target`` (the caller's proven bound) or at the deadline. The random generator is seeded,
  so the sequence of moves is deterministic; where it stops depends on the time.

On the strongly correlated SMALL instances where the arc-flow search's own incumbents stay below L
(docs/methods/knapsack.md), it reaches the optimum in seconds.
"""

from __future__ import annotations

import time

import numpy as np


def fill(items: list[int], profit: np.ndarray, weight: np.ndarray, capacity: int) -> list[int]:
    """An optimal 0-1 knapsack over ``items`` (values ``profit`` indexed like ``items``) for ``capacity``."""
    table = np.zeros((len(items) + 1, capacity + 1))
    for t, j in enumerate(items):
        table[t + 1] = table[t]
        w = int(weight[j])
        if w <= capacity and profit[t] > 0:
            np.maximum(table[t, : capacity + 1 - w] + profit[t], table[t + 1, w:], out=table[t + 1, w:])
    chosen, room = [], capacity
    for t in range(len(items) - 1, -1, -1):
        if table[t + 1, room] != table[t, room]:
            chosen.append(items[t])
            room -= int(weight[items[t]])
    return chosen


def search(
    profit: np.ndarray,
    weight: np.ndarray,
    count: np.ndarray,
    capacity: np.ndarray,
    start: np.ndarray | None,
    target: float,
    deadline: float,
    noise: float,
    seed: int = 0,
) -> tuple[np.ndarray, int]:
    """Copies per (class, knapsack) of the best packing found, and the number of moves made.

    ``profit``, ``weight``, ``count``: per class (positive profits and weights); ``capacity``: per
    knapsack; ``start``: copies per (class, knapsack) of a feasible packing (used when it is worth at
    least the sequential fill), or None; ``noise``: the largest standard deviation of a move's noise.
    """
    rng = np.random.default_rng(seed)
    owner = np.repeat(np.arange(len(count)), count)  # the class of every copy
    p, w = profit[owner].astype(float), weight[owner].astype(int)
    m = len(capacity)
    where = _refill(np.full(len(owner), -1), list(np.argsort(-capacity, kind="stable")), p, w, capacity, rng, 0.0)
    if start is not None:
        given = np.full(len(owner), -1)
        for c in range(len(count)):
            placed = np.repeat(np.arange(m), start[c])  # the knapsack of each placed copy of class c
            given[np.flatnonzero(owner == c)[: len(placed)]] = placed
        if p[given >= 0].sum() >= p[where >= 0].sum():
            where = given
    value = float(p[where >= 0].sum())
    best, best_value, moves = where.copy(), value, 0
    while best_value < target - 1e-9 and time.perf_counter() < deadline and m > 1:
        moves += 1
        drawn = list(rng.choice(m, int(rng.integers(2, min(4, m) + 1)), replace=False))
        new = _refill(where, drawn, p, w, capacity, rng, float(rng.uniform(0.0, noise)))
        new_value = float(p[new >= 0].sum())
        if new_value >= value:
            where, value = new, new_value
            if value > best_value:
                best, best_value = where.copy(), value
    counts = np.zeros((len(count), m), dtype=int)
    np.add.at(counts, (owner[best >= 0], best[best >= 0]), 1)
    return counts, moves


def _refill(where, knapsacks, p, w, capacity, rng, noise: float) -> np.ndarray:
    """``where`` with the knapsacks emptied and refilled in order from the copies outside."""
    new = where.copy()
    new[np.isin(new, knapsacks)] = -1
    for k in knapsacks:
        outside = np.flatnonzero(new < 0).tolist()
        values = p[outside] + (rng.normal(0.0, noise, len(outside)) if noise else 0.0)
        new[fill(outside, values, w, int(capacity[k]))] = k
    return new
