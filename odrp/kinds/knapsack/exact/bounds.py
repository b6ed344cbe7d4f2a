"""Exact tightenings of a family instance before it is modelled (Martello and Toth 1990, chapters 2 and 6).

- :func:`reduce_capacities`: a hard capacity that no combination of weights can reach exactly is
  lowered to the largest reachable load (a subset sum of the copies' integer weights). Every integer
  solution stays feasible; the LP relaxation loses the unreachable slack.
- :func:`surrogate_bound`: for a multiple knapsack (one hard dimension, profits and weights the same
  in every knapsack, no pair profits, no soft dimension, copies may stay out), merging all knapsacks
  into one of capacity sum_k c_k is a relaxation (the surrogate relaxation with equal multipliers),
  and its optimum, a 0-1 knapsack solved exactly by dynamic programming, bounds the objective.
  Added as the cut ``objective <= bound`` it replaces the LP's fractional bound by an integral one;
  on the Dell'Amico et al. instances it is often the optimum itself.

- :func:`profit_bound`: every copy at its best knapsack and every pair profit earned at its best
  level, penalties and negative terms left out (a maximisation; for a minimisation, where every copy
  is placed, the mirror image). A weak bound, but one that needs no solver: the run reports it when
  the solver ended without a bound of its own (CP-SAT stopped before any solution).

The first two skip a dynamic programme that would cost more than ``dp_limit`` (copies x capacity;
:attr:`~odrp.kinds.knapsack.exact.settings.KnapsackSettings.dp_limit`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from odrp.kinds.knapsack.exact.settings import KnapsackSettings
from odrp.kinds.knapsack.family import Family


def _integral(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))


def reachable_load(weights: list[int], capacity: int) -> int:
    """The largest subset sum of ``weights`` that is at most ``capacity`` (a bit-set dynamic programme)."""
    mask = (1 << (capacity + 1)) - 1
    reach = 1
    for w in weights:
        if 0 < w <= capacity:
            reach = (reach | (reach << w)) & mask
    return reach.bit_length() - 1


def reduce_capacities(f: Family, dp_limit: int = KnapsackSettings.dp_limit) -> Family:
    """``f`` with every hard capacity lowered to the largest load its integer weights can reach."""
    capacity = f.capacity.copy()
    for d in f.hard:
        for k in range(f.n_knapsacks):
            w, cap = f.weight[d, :, k], capacity[d, k]
            if not (_integral(w) and np.isfinite(cap) and cap >= 0) or (w < 0).any():
                continue
            copies = [int(w[c]) for c in range(f.n_classes) for _ in range(int(f.count[c]))]
            if sum(copies) <= cap or len(copies) * cap > dp_limit:
                continue
            capacity[d, k] = reachable_load(copies, int(np.floor(cap + 1e-9)))
    return dataclasses.replace(f, capacity=capacity)


def surrogate_bound(f: Family, dp_limit: int = KnapsackSettings.dp_limit) -> float | None:
    """The surrogate 0-1 knapsack bound of a multiple knapsack, or None when it does not apply."""
    if f.sense != "max" or f.exactly_one or f.n_pairs or f.soft or len(f.hard) != 1 or f.n_knapsacks < 2:
        return None
    d = f.hard[0]
    w, p = f.weight[d], f.profit
    if not (np.all(w == w[:, :1]) and np.all(p == p[:, :1]) and _integral(w) and _integral(f.capacity[d])):
        return None
    total = int(f.capacity[d].sum())
    copies = [(int(w[c, 0]), float(p[c, 0])) for c in range(f.n_classes) for _ in range(int(f.count[c]))]
    if total < 0 or len(copies) * total > dp_limit:
        return None
    best = np.zeros(total + 1)
    for weight, profit in copies:
        if profit > 0 and weight <= total:
            if weight == 0:
                best += profit
            else:
                best[weight:] = np.maximum(best[weight:], best[:-weight] + profit)
    return float(best.max())


def profit_bound(f: Family) -> float | None:
    """A bound on the objective from the profits alone (module docstring); None where it does not hold
    (a minimisation whose copies may stay out)."""
    count = f.count.astype(float)
    pair_counts = count[f.pair_a] * count[f.pair_b] if f.n_pairs else np.zeros(0)
    if f.sense == "max":
        best = f.profit.max(axis=1) if f.exactly_one else np.maximum(0.0, f.profit.max(axis=1))
        pairs = np.maximum(0.0, np.maximum(f.pair_knapsack, f.pair_group)) if f.n_pairs else np.zeros(0)
        return float(count @ best + pair_counts @ pairs)
    if not f.exactly_one or f.soft:
        return None
    pairs = np.minimum(0.0, np.minimum(f.pair_knapsack, f.pair_group)) if f.n_pairs else np.zeros(0)
    return float(count @ f.profit.min(axis=1) + pair_counts @ pairs)
