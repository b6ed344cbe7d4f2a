"""Can a given multiset of items be packed into knapsacks of given capacities? Bin completion, exactly.

The packing question the arc-flow search (:mod:`odrp.kinds.knapsack.exact.arcflow`) is left with when its
Lagrangian bound fixes the items of every solution worth the threshold: items of integer weights w_c
in q_c copies, knapsacks of integer capacities c_k, and every copy must go into some knapsack.

**Two budgets every packing spends exactly.** The *slack* s = sum_k c_k - sum_c q_c w_c is what all
the knapsacks together leave empty, so every knapsack is filled to at least c_k - s. Likewise, for any
values v_c (the caller's choice; the arc-flow search passes its Lagrangian multipliers gamma), let
B_k = the best v-value of a sub-multiset of the copies that fits in c_k (a bounded knapsack, dynamic
programming). A knapsack holding A_k has v-gap B_k - v(A_k) >= 0, and the gaps of a packing sum to
G = sum_k B_k - v(all copies), the same for every packing. So G < 0 means no packing exists, and in
a packing every knapsack has gap at most G. This is reduced-cost fixing inside the packing: with
gamma and G below 1, as when the threshold is within one unit of the bound, only knapsack contents
of (nearly) the best gamma-value survive.

**Bin completion** (Korf, "An improved algorithm for optimal bin packing", IJCAI 2003; Fukunaga and
Korf, "Bin completion algorithms for multicontainer packing, knapsack, and covering problems", JAIR 28
(2007) 393-429, who apply it to the multiple knapsack): the search fills one knapsack at a time with a
whole *completion* (the multiset of copies it will hold), then recurses on the copies and knapsacks
left. Copies of equal weight and value are one class. Our reading for knapsacks of different
capacities:

- *Which knapsack next*: the one with the fewest candidate completions (fail first), counted up to
  the smallest count so far; knapsacks of one capacity are filled one after another (below).
- *Candidates* of knapsack k with slack s and gap budget g left: the multisets of the copies left
  weighing between c_k - s and c_k with v-value at least B_k - g, enumerated heaviest class first
  (completions with large items first, as in Martello and Toth's MTM) and pruned twice: by subset-sum
  reachability (a partial completion is extended only if the lighter classes can still bring it into
  the weight window; bit sets of reachable sums) and by value (only if the lighter classes can still
  add enough v-value; a bounded-knapsack table over the lighter classes).
- *Dominance* (Fukunaga and Korf's, restricted to one and two items): a completion A of knapsack k
  is skipped if (i) a copy left outside A still fits beside it, (ii) a copy x in A can be exchanged
  for a heavier copy y left outside and the result still fits, or (iii) two copies x1, x2 in A can be
  exchanged for one copy y outside with w_y >= w_x1 + w_x2 that fits. In each case take any packing
  of all copies with A in knapsack k: y sits in some other knapsack k', and moving y into k and x (or
  x1, x2, together no heavier than y) into k' keeps both within capacity, so a packing with the
  dominating completion A' exists as well. A' weighs more than A, or the same with fewer copies, so
  following the dominations ends in an undominated completion. It is enumerated: it is a packing's
  content, so it lies in the weight window and within the gap budget (both hold for every packing).
- *Equal capacities* (symmetry): knapsacks of one capacity are interchangeable. They are filled in a
  row, each with a completion that is lexicographically no larger (copies per class, heaviest class
  first) than the one before, and *without* the dominance rule. Proof that nothing is lost: when the
  first knapsack of a capacity with r copies is started, take any packing that extends the partial
  one and sort its r contents of that capacity in non-increasing lexicographic order: the search,
  which tries every candidate, meets the first and then each next one. The dominance exchange (on a
  knapsack of a unique capacity) only alters knapsacks not yet filled, and those of a capacity not
  yet started may be re-sorted freely; no capacity is ever half filled at that moment.
- *Pruning*: every knapsack left needs a reachable load in [c_k - s, c_k] (subset sums of the copies
  left); the heaviest copy left must fit in the largest knapsack left; states (copies left, knapsacks
  left) already refuted are remembered (slack and gap budget follow from the state).

The answer is exact: ``packed`` with one assignment (checked against the capacities before it is
returned), ``impossible`` when the whole tree is refuted, or ``unknown`` when the deadline or the
node limit stops the search first.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

PackingStatus = Literal["packed", "impossible", "unknown"]
TOL = 1e-6


@dataclass
class Packing:
    """The answer: ``counts[c, k]`` copies of class c (caller's order) in knapsack k when packed."""

    status: PackingStatus
    counts: np.ndarray | None
    nodes: int
    seconds: float


class _Stop(Exception):
    """The deadline or the node limit was reached."""


def _reach(weights: Sequence[int], counts: Sequence[int], limit: int) -> int:
    """Bit set of the sums (up to ``limit``) of sub-multisets of the given copies: bit u set if u is reachable."""
    mask = (1 << (limit + 1)) - 1
    bits = 1
    for w, q in zip(weights, counts, strict=True):
        for _ in range(q):
            bits |= (bits << w) & mask
    return bits


def _any_in(bits: int, lo: int, hi: int) -> bool:
    """Some bit in [lo, hi] is set."""
    lo = max(lo, 0)
    if hi < lo:
        return False
    return (bits >> lo) & ((1 << (hi - lo + 1)) - 1) != 0


def _most_value(weights: list[int], values: list[float], counts: list[int], limit: int) -> list[list[float]]:
    """table[c][r]: the most value of copies of classes c .. (at most ``counts``) weighing at most r <= limit."""
    n = len(weights)
    table = np.zeros((n + 1, limit + 1))
    for c in range(n - 1, -1, -1):
        table[c] = table[c + 1]
        if values[c] <= 0:
            continue
        w = weights[c]
        for t in range(1, min(counts[c], limit // w) + 1):
            np.maximum(table[c, t * w :], table[c + 1, : limit + 1 - t * w] + t * values[c], out=table[c, t * w :])
    return table.tolist()


class _Search:
    def __init__(
        self,
        weights: list[int],
        values: list[float],
        counts: list[int],
        capacities: list[int],
        deadline: float,
        node_limit: int | None,
    ) -> None:
        self.w = weights  # per class, non-increasing
        self.v = values
        self.cap = capacities
        self.deadline = deadline
        self.node_limit = node_limit
        self.nodes = 0
        self.steps = 0  # partial completions enumerated (the deadline is checked every 4096)
        self.refuted: set[tuple] = set()
        self.multiple = {c for c in capacities if capacities.count(c) > 1}
        self.value_table = _most_value(weights, values, counts, max([0, *capacities]))
        self.best = [self.value_table[0][max(c, 0)] for c in capacities]  # B_k

    # -- candidates ------------------------------------------------------------------------------
    def completions(self, left: list[int], k: int, slack: int, gap: float) -> Iterator[tuple[int, ...]]:
        """The multisets of the copies ``left`` weighing in [c_k - slack, c_k] with v-gap at most ``gap``
        (copies per class), heaviest class decided first, most copies first."""
        n, w, v, most = len(self.w), self.w, self.v, self.value_table
        capacity = self.cap[k]
        mask = (1 << (capacity + 1)) - 1
        lighter = [1] * (n + 1)  # lighter[c]: the sums the copies of classes c .. n - 1 can make (bit set)
        for c in range(n - 1, -1, -1):
            bits = lighter[c + 1]
            for _ in range(left[c]):
                bits |= (bits << w[c]) & mask
            lighter[c] = bits
        lo = capacity - slack
        need = self.best[k] - gap - TOL
        take = [0] * n

        def extend(c: int, load: int, value: float) -> Iterator[tuple[int, ...]]:
            self.steps += 1
            if self.steps % 4096 == 0 and time.perf_counter() > self.deadline:
                raise _Stop
            if value + most[c][capacity - load] < need or not _any_in(lighter[c], lo - load, capacity - load):
                return
            if c == n:
                yield tuple(take)
                return
            for t in range(min(left[c], (capacity - load) // w[c]), -1, -1):
                take[c] = t
                yield from extend(c + 1, load + t * w[c], value + t * v[c])
            take[c] = 0

        return extend(0, 0, 0.0)

    def dominated(self, a: tuple[int, ...], left: list[int], capacity: int) -> bool:
        """Fukunaga and Korf's dominance, one or two copies of ``a`` against one copy outside (module docstring)."""
        w = self.w
        room = capacity - sum(t * wc for t, wc in zip(a, w, strict=True))
        outside = sorted(w[c] for c in range(len(w)) if left[c] > a[c])  # ascending weights of the copies outside
        if not outside:
            return False
        if outside[0] <= room:
            return True  # (i) a copy outside still fits

        def between(lo: int, hi: int, strict: bool) -> bool:
            """Some copy outside weighs in (lo, hi] (strict) or [lo, hi]."""
            i = bisect.bisect_right(outside, lo) if strict else bisect.bisect_left(outside, lo)
            return i < len(outside) and outside[i] <= hi

        inside = [c for c in range(len(w)) if a[c]]
        if any(between(w[x], w[x] + room, True) for x in inside):
            return True  # (ii) one copy x for a heavier one y
        for i, x1 in enumerate(inside):  # (iii) two copies x1, x2 for one y no lighter than both together
            for x2 in inside[i:]:
                if (x1 != x2 or a[x1] >= 2) and between(w[x1] + w[x2], w[x1] + w[x2] + room, False):
                    return True
        return False

    def candidates(
        self, k: int, left: list[int], slack: int, gap: float, ceiling: tuple[int, ...] | None
    ) -> Iterator[tuple[int, ...]]:
        """The completions of knapsack k worth trying: undominated for a unique capacity, at most ``ceiling``
        (lexicographically) after a knapsack of the same capacity."""
        capacity = self.cap[k]
        unique = capacity not in self.multiple
        for a in self.completions(left, k, slack, gap):
            if unique and self.dominated(a, left, capacity):
                continue
            if ceiling is not None and a > ceiling:
                continue
            yield a

    # -- the tree --------------------------------------------------------------------------------
    def tick(self) -> None:
        self.nodes += 1
        if self.node_limit is not None and self.nodes > self.node_limit:
            raise _Stop
        if self.nodes % 16 == 0 and time.perf_counter() > self.deadline:
            raise _Stop

    def solve(
        self, left: list[int], bins: tuple[int, ...], slack: int, gap: float, previous: dict[int, tuple[int, ...]]
    ) -> list[tuple[int, tuple[int, ...]]] | None:
        """A completion for every knapsack in ``bins`` using exactly the copies ``left`` (None: impossible).
        ``previous[capacity]``: the last completion given to a knapsack of that (repeated) capacity."""
        self.tick()
        if not any(left):
            return [(k, (0,) * len(left)) for k in bins]
        if not bins or slack < 0 or gap < -TOL:
            return None
        key = (tuple(left), tuple(sorted(self.cap[k] for k in bins)), tuple(sorted(previous.items())))
        if key in self.refuted:
            return None
        largest = max(self.cap[k] for k in bins)
        if max(self.w[c] for c in range(len(left)) if left[c]) > largest:
            self.refuted.add(key)
            return None
        reach = _reach(self.w, left, largest)
        if not all(_any_in(reach, self.cap[k] - slack, self.cap[k]) for k in bins):
            self.refuted.add(key)
            return None
        started = [k for k in bins if self.cap[k] in previous]  # a capacity half filled: finish it first
        if started:
            choice, options = started[0], None
        else:
            choice, options = self.fail_first(left, bins, slack, gap)
        ceiling = previous.get(self.cap[choice])
        if options is None:
            options = list(self.candidates(choice, left, slack, gap, ceiling))
        options.sort(reverse=True)  # most copies of the heaviest classes first
        rest = tuple(k for k in bins if k != choice)
        for a in options:
            load = sum(t * wc for t, wc in zip(a, self.w, strict=True))
            value = sum(t * vc for t, vc in zip(a, self.v, strict=True))
            after = [q - t for q, t in zip(left, a, strict=True)]
            nxt = dict(previous)
            if self.cap[choice] in self.multiple:
                if any(self.cap[k] == self.cap[choice] for k in rest):
                    nxt[self.cap[choice]] = a
                else:
                    nxt.pop(self.cap[choice], None)
            found = self.solve(after, rest, slack - (self.cap[choice] - load), gap - (self.best[choice] - value), nxt)
            if found is not None:
                return [(choice, a), *found]
        self.refuted.add(key)
        return None

    def fail_first(
        self, left: list[int], bins: tuple[int, ...], slack: int, gap: float
    ) -> tuple[int, list[tuple[int, ...]]]:
        """The knapsack with the fewest candidates (one knapsack per capacity tried) and its candidates."""
        best: tuple[int, list[tuple[int, ...]]] | None = None
        seen: set[int] = set()
        for k in sorted(bins, key=lambda k: self.cap[k]):
            if self.cap[k] in seen:
                continue
            seen.add(self.cap[k])
            options: list[tuple[int, ...]] = []
            for a in self.candidates(k, left, slack, gap, None):
                options.append(a)
                if best is not None and len(options) >= len(best[1]):
                    break
            else:
                if best is None or len(options) < len(best[1]):
                    best = (k, options)
                    if len(options) <= 1:
                        break
        assert best is not None
        return best


def pack(
    weights: Sequence[int],
    counts: Sequence[int],
    capacities: Sequence[int],
    values: Sequence[float] | None = None,
    time_limit: float | None = None,
    node_limit: int | None = None,
) -> Packing:
    """Decide whether ``counts[c]`` copies of weight ``weights[c]`` (every c) fit into the knapsacks; exact.

    ``values``: per class, the values v of the gap budget (module docstring); any values keep the
    answer exact, good ones (Lagrangian multipliers) prune more.
    """
    start = time.perf_counter()
    weights = [int(w) for w in weights]
    counts = [int(q) for q in counts]
    capacities = [max(-1, int(c)) for c in capacities]
    values = [0.0] * len(weights) if values is None else [float(x) for x in values]
    if any(w < 0 for w in weights) or any(q < 0 for q in counts):
        raise ValueError("weights and counts must be non-negative")
    merged: dict[tuple[int, float], int] = {}
    for w, x, q in zip(weights, values, counts, strict=True):
        if q and w > 0:
            merged[(w, x)] = merged.get((w, x), 0) + q
    keys = sorted(merged, reverse=True)  # heaviest first, then the most valuable
    w = [key[0] for key in keys]
    v = [key[1] for key in keys]
    left = [merged[key] for key in keys]
    bins = tuple(k for k in range(len(capacities)) if capacities[k] >= 0)
    deadline = float("inf") if time_limit is None else start + time_limit
    search = _Search(w, v, left, capacities, deadline, node_limit)
    slack = sum(capacities[k] for k in bins) - sum(x * q for x, q in zip(w, left, strict=True))
    gap = sum(search.best[k] for k in bins) - sum(x * q for x, q in zip(v, left, strict=True))
    zero_weight = any(q and x == 0 for x, q in zip(weights, counts, strict=True))
    status: PackingStatus
    found: list[tuple[int, tuple[int, ...]]] | None
    try:
        found = None if zero_weight and not bins else search.solve(left, bins, slack, gap, {})
        status = "packed" if found is not None else "impossible"
    except _Stop:
        found, status = None, "unknown"
    out = None if found is None else _assign(weights, counts, capacities, keys, values, found)
    return Packing(status, out, search.nodes, time.perf_counter() - start)


def _assign(
    weights: list[int],
    counts: list[int],
    capacities: list[int],
    keys: list[tuple[int, float]],
    values: list[float],
    found: list[tuple[int, tuple[int, ...]]],
) -> np.ndarray:
    """Copies per (caller's class, knapsack) from the completions per merged class; checked."""
    out = np.zeros((len(weights), len(capacities)), dtype=int)
    pool: dict[tuple[int, float], list[int]] = {}
    for c, (w, x, q) in enumerate(zip(weights, values, counts, strict=True)):
        pool.setdefault((w, x), []).extend([c] * q)
    for k, a in found:
        for key, t in zip(keys, a, strict=True):
            for _ in range(t):
                out[pool[key].pop(), k] += 1
    first = next(k for k in range(len(capacities)) if capacities[k] >= 0) if found else 0
    for key, rest in pool.items():  # zero-weight copies fit anywhere
        if key[0] == 0:
            for c in rest:
                out[c, first] += 1
            rest.clear()
    assert all(not rest for rest in pool.values()), "every copy is placed"
    loads = np.asarray(weights, dtype=int) @ out
    assert np.all(loads <= np.asarray(capacities)), "every knapsack within capacity"
    assert np.array_equal(out.sum(axis=1), np.asarray(counts)), "every copy placed once"
    return out
