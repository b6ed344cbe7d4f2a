"""Greedy construction and iterated local search on the general knapsack-family form.

The search behind the ``greedy`` and ``local_search`` heuristics (:mod:`odrp.heuristics.knapsack`) and the
warm start of the exact method (:func:`odrp.kinds.knapsack.exact.solve`). It works on counts of a
:class:`~odrp.kinds.knapsack.family.Family`, moves one copy of a class at a time and keeps every
hard dimension within capacity.

- Greedy: for kinds where an item may stay out (the knapsack kinds), repeatedly the placement with
  the best ratio of objective gain to the room it takes (sum over hard dimensions of weight /
  capacity) among those that gain; for kinds where every item must be placed (gap, qm3dkp), the
  *regret* rule of Martello and Toth's MTHG: the class whose best placement beats its second best
  by the most goes first, to its best knapsack; the desirability is the objective gain and, if that
  strands a copy, the room taken (weight / capacity, smaller is better), MTHG's fall-back measure.
  Gains include pair profits with the copies already placed and soft-dimension penalties.
- Local search: iterated local search (Lourenco, Martin, Stuetzle 2003) from a solution:
  best-improvement descent over *add*, *drop* (knapsack kinds), *shift* (one copy to another
  knapsack), *swap in/out* (a packed copy for an unpacked one in the same knapsack) and, for small
  instances, *exchange* (two copies of different classes trade knapsacks); then ``iterations``
  rounds of a random kick (``strength`` copies removed and, where every copy must be placed, put
  back at random) followed by descent, keeping the best (:class:`LocalSearchSettings`). Deterministic
  for a given seed; a deadline ends it early.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from odrp.kinds.knapsack.family import CAPACITY_RTOL, Family

EPS = 1e-9
"""Smallest gain that counts as an improvement."""


class OutOfTime(Exception):
    """The deadline came before the greedy placed every copy that must be placed."""


@dataclass(frozen=True)
class LocalSearchSettings:
    """Settings of the iterated local search: the ``local_search`` heuristic and the exact method's search start."""

    iterations: int = field(default=20, metadata={"ge": 0})
    """Rounds of kick and descent after the first descent."""
    strength: int | None = field(default=None, metadata={"ge": 0})
    """Copies a kick takes out (and, where every copy must be placed, puts back at random); None: a
    tenth of all copies, at least 2."""
    exchange_limit: int = field(default=400, metadata={"ge": 0})
    """Exchange moves (two copies trade knapsacks; their number grows with the square of the occupied
    cells) are tried only while at most this many (class, knapsack) cells hold copies."""

    def kick_size(self, f: Family) -> int:
        """The copies one kick moves in ``f``."""
        return max(2, int(f.count.sum()) // 10) if self.strength is None else self.strength


class State:
    """Counts, group counts and loads of a partial solution, with the gains of one-copy moves."""

    def __init__(self, f: Family) -> None:
        self.f = f
        c, k = f.n_classes, f.n_knapsacks
        self.n = np.zeros((c, k), dtype=int)
        group_index = {g: i for i, g in enumerate(dict.fromkeys(f.groups))}
        self.gk = np.array([group_index[g] for g in f.groups], dtype=int)
        self.N = np.zeros((c, len(group_index)), dtype=int)
        self.loads = np.zeros((f.n_dimensions, k))
        a, b = np.asarray(f.pair_a, dtype=int), np.asarray(f.pair_b, dtype=int)
        both = (np.concatenate([a, b]), np.concatenate([b, a]))  # symmetric, duplicate pairs summed
        self.paired = len(a) > 0
        self.Qk = sparse.csr_array((np.tile(np.asarray(f.pair_knapsack, float), 2), both), shape=(c, c))
        self.Qg = sparse.csr_array((np.tile(np.asarray(f.pair_group, float), 2), both), shape=(c, c))
        self.slack = f.capacity + CAPACITY_RTOL * np.maximum(1.0, np.abs(f.capacity))

    # -- state changes --------------------------------------------------------------------------
    def move(self, c: int, k: int, sign: int = 1) -> None:
        self.n[c, k] += sign
        self.N[c, self.gk[k]] += sign
        self.loads[:, k] += sign * self.f.weight[:, c, k]

    def copy_counts(self) -> np.ndarray:
        return self.n.copy()

    def reset(self, counts: np.ndarray) -> None:
        self.n[:] = 0
        self.N[:] = 0
        self.loads[:] = 0
        for c, k in zip(*np.nonzero(counts), strict=True):
            for _ in range(int(counts[c, k])):
                self.move(int(c), int(k))

    # -- gains (raw objective changes; multiply by f.sign to maximise) ---------------------------
    def _pair(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Pair profit one more copy of each class in ``rows`` would earn in each knapsack (sparse: a class
        has few partners, and the kinds without pair profits have none)."""
        if not self.paired:
            return np.zeros((self.n[rows].shape[0], self.f.n_knapsacks))
        same = self.Qk[rows] @ self.n
        grouped = self.Qg[rows] @ (self.N[:, self.gk] - self.n)
        return same + grouped

    def _penalty_change(self, w: np.ndarray, loads: np.ndarray) -> np.ndarray:
        out = np.zeros(np.broadcast_shapes(w.shape[1:], loads.shape[1:]))
        for i, d in enumerate(self.f.soft):
            cap = self.f.capacity[d]
            new = np.maximum(0.0, loads[i] + w[i] - cap)
            out += self.f.penalty[d] * (new - np.maximum(0.0, loads[i] - cap))  # type: ignore[operator]
        return out

    def add_gains(self, rows: np.ndarray | slice = slice(None)) -> np.ndarray:
        """(C, K): objective change of one more copy of c in k; nan where it cannot go."""
        f = self.f
        soft = list(f.soft)
        gain = f.profit[rows] + self._pair(rows)
        if soft:
            gain = gain - self._penalty_change(f.weight[soft][:, rows], self.loads[soft][:, None, :])
        fits = np.ones(gain.shape, dtype=bool)
        for d in f.hard:
            fits &= self.loads[d][None, :] + f.weight[d][rows] <= self.slack[d][None, :]
        left = (f.count[rows] - self.n[rows].sum(axis=1)) > 0
        fits &= left[:, None]
        return np.where(fits, gain, np.nan)

    def remove_gains(self) -> np.ndarray:
        """(C, K): objective change of taking one copy of c out of k; nan where there is none."""
        f = self.f
        soft = list(f.soft)
        gain = -f.profit - self._pair()
        if soft:
            gain = gain - self._penalty_change(-f.weight[soft], self.loads[soft][:, None, :])
        return np.where(self.n > 0, gain, np.nan)

    def objective(self) -> float:
        return self.f.objective(self.n)


# ---------------------------------------------------------------------------------- greedy


def greedy(state: State, deadline: float | None = None) -> bool:
    """Fill ``state`` greedily (see the module docstring); False when a copy that must be placed cannot be.

    Past ``deadline`` the knapsack kinds keep what is packed (a feasible solution); where every copy must
    be placed, :class:`OutOfTime` is raised."""
    f = state.f
    if f.exactly_one:
        return _regret_greedy(state, deadline)
    room = np.zeros((f.n_classes, f.n_knapsacks))
    for d in f.hard:
        with np.errstate(divide="ignore", invalid="ignore"):
            room += np.where(f.capacity[d] > 0, f.weight[d] / np.maximum(f.capacity[d], EPS), np.inf)
    room = np.maximum(room, EPS)
    while deadline is None or time.perf_counter() < deadline:
        gain = f.sign * state.add_gains()
        score = np.where(gain > EPS, gain / room, np.nan)
        if np.isnan(score).all():
            return True
        c, k = np.unravel_index(np.nanargmax(score), score.shape)
        state.move(int(c), int(k))
    return True


def construct(state: State, deadline: float | None = None) -> str | None:
    """:func:`greedy` from an empty ``state``: None when it places every copy that must be placed, else why not
    (a copy fits in no knapsack, or the deadline came first)."""
    try:
        placed = greedy(state, deadline)
    except OutOfTime:
        return "the time limit came before every copy that must be placed was placed"
    return None if placed else "a copy that must be placed fits in no knapsack"


def _regret_greedy(state: State, deadline: float | None) -> bool:
    """MTHG: regret on the objective gain first; if that strands a copy, again on the room taken."""
    f = state.f
    room = np.zeros((f.n_classes, f.n_knapsacks))
    for d in f.hard:
        room += f.weight[d] / np.maximum(f.capacity[d], EPS)
    for desirability in ("gain", "room"):
        state.reset(np.zeros_like(state.n))
        if _regret_fill(state, None if desirability == "gain" else -room, deadline):
            return True
    return False


def _regret_fill(state: State, fixed: np.ndarray | None, deadline: float | None) -> bool:
    f = state.f
    while True:
        if deadline is not None and time.perf_counter() >= deadline:
            raise OutOfTime
        left = np.flatnonzero(f.count - state.n.sum(axis=1) > 0)
        if not len(left):
            return True
        gain = f.sign * state.add_gains(left)
        if np.isnan(gain).all(axis=1).any():
            return False
        if fixed is not None:  # desirability = -room, where the copy can go
            gain = np.where(np.isnan(gain), np.nan, fixed[left])
        ordered = -np.sort(-np.nan_to_num(gain, nan=-np.inf), axis=1)
        best = ordered[:, 0]
        second = ordered[:, 1] if f.n_knapsacks > 1 else np.full(len(left), -np.inf)
        regret = np.where(np.isfinite(second), best - second, np.inf)
        i = np.lexsort((-left, best, regret))[-1]  # the largest regret, then gain, then the first class
        state.move(int(left[i]), int(np.nanargmax(gain[i])))


# ----------------------------------------------------------------------------- local search


def descend(state: State, deadline: float | None, exchange_limit: int) -> None:
    """Best-improvement descent until no move gains (or the deadline passes)."""
    while deadline is None or time.perf_counter() < deadline:
        if not (
            _best_add_or_drop(state)
            or _best_shift(state)
            or _best_swap_in(state)
            or _best_exchange(state, exchange_limit)
        ):
            return


def _best_add_or_drop(state: State) -> bool:
    f = state.f
    gains = [f.sign * state.add_gains()]
    if not f.exactly_one:
        gains.append(f.sign * state.remove_gains())
    best = max((np.nanmax(g) if not np.isnan(g).all() else -np.inf, i) for i, g in enumerate(gains))
    if best[0] <= EPS:
        return False
    g = gains[best[1]]
    c, k = np.unravel_index(np.nanargmax(g), g.shape)
    state.move(int(c), int(k), 1 if best[1] == 0 else -1)
    return True


def _best_shift(state: State) -> bool:
    f, best = state.f, (EPS, None)
    removal = f.sign * state.remove_gains()
    for c, k in zip(*np.nonzero(state.n), strict=True):
        state.move(c, k, -1)
        gain = f.sign * state.add_gains(np.array([c]))[0]
        state.move(c, k, 1)
        gain[k] = np.nan
        if not np.isnan(gain).all() and removal[c, k] + np.nanmax(gain) > best[0]:
            best = (removal[c, k] + np.nanmax(gain), (c, k, int(np.nanargmax(gain))))
    if best[1] is None:
        return False
    c, k, to = best[1]
    state.move(c, k, -1)
    state.move(c, to, 1)
    return True


def _best_swap_in(state: State) -> bool:
    """A packed copy out, an unpacked copy of another class into the same knapsack."""
    f, best = state.f, (EPS, None)
    if f.exactly_one or (state.n.sum(axis=1) >= f.count).all():
        return False
    removal = f.sign * state.remove_gains()
    for c, k in zip(*np.nonzero(state.n), strict=True):
        state.move(c, k, -1)
        gain = f.sign * state.add_gains()[:, k]
        state.move(c, k, 1)
        gain[c] = np.nan
        if not np.isnan(gain).all() and removal[c, k] + np.nanmax(gain) > best[0]:
            best = (removal[c, k] + np.nanmax(gain), (c, k, int(np.nanargmax(gain))))
    if best[1] is None:
        return False
    c, k, other = best[1]
    state.move(c, k, -1)
    state.move(other, k, 1)
    return True


def _best_exchange(state: State, limit: int) -> bool:
    """Two copies of different classes in different knapsacks trade places (at most ``limit`` occupied cells)."""
    f = state.f
    cells = list(zip(*np.nonzero(state.n), strict=True))
    if len(cells) > limit:
        return False
    before = f.sign * state.objective()
    best = (EPS, None)
    for i, (c, k) in enumerate(cells):
        for c2, k2 in cells[i + 1 :]:
            if c == c2 or k == k2:
                continue
            state.move(c, k, -1)
            state.move(c2, k2, -1)
            state.move(c, k2, 1)
            state.move(c2, k, 1)
            if not _hard_overload(state, (k, k2)):
                delta = f.sign * state.objective() - before
                if delta > best[0]:
                    best = (delta, (c, k, c2, k2))
            state.move(c2, k, -1)
            state.move(c, k2, -1)
            state.move(c2, k2, 1)
            state.move(c, k, 1)
    if best[1] is None:
        return False
    c, k, c2, k2 = best[1]
    state.move(c, k, -1)
    state.move(c2, k2, -1)
    state.move(c, k2, 1)
    state.move(c2, k, 1)
    return True


def _hard_overload(state: State, knapsacks: tuple[int, ...]) -> bool:
    return any(state.loads[d, k] > state.slack[d, k] for d in state.f.hard for k in knapsacks)


def _kick(state: State, rng: random.Random, strength: int) -> None:
    """Take ``strength`` random copies out; where every copy must be placed, put them back at random."""
    f = state.f
    for _ in range(strength):
        cells = list(zip(*np.nonzero(state.n), strict=True))
        if not cells:
            return
        c, k = cells[rng.randrange(len(cells))]
        state.move(int(c), int(k), -1)
        if f.exactly_one:
            options = [int(j) for j in np.flatnonzero(~np.isnan(state.add_gains(np.array([c]))[0])) if j != k]
            state.move(int(c), rng.choice(options) if options else int(k), 1)


def local_search(state: State, seed: int, settings: LocalSearchSettings, deadline: float | None) -> np.ndarray:
    """Iterated local search from the state's solution; returns the best counts found."""
    rng = random.Random(seed)
    strength = settings.kick_size(state.f)
    descend(state, deadline, settings.exchange_limit)
    best, best_value = state.copy_counts(), state.f.sign * state.objective()
    for _ in range(settings.iterations):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        _kick(state, rng, strength)
        descend(state, deadline, settings.exchange_limit)
        value = state.f.sign * state.objective()
        if value > best_value + EPS:
            best, best_value = state.copy_counts(), value
        else:
            state.reset(best)
    return best


def search_from(
    f: Family, counts: np.ndarray, seed: int, settings: LocalSearchSettings, deadline: float | None
) -> np.ndarray:
    """Iterated local search from the solution ``counts``; returns the best counts found."""
    state = State(f)
    state.reset(counts)
    return local_search(state, seed, settings, deadline)


def warm_start(f: Family, seconds: float, settings: LocalSearchSettings, seed: int = 0) -> np.ndarray | None:
    """Counts of a good solution within ``seconds`` (greedy, then local search), None if greedy fails."""
    deadline = time.perf_counter() + seconds
    state = State(f)
    if construct(state, deadline) is not None:
        return None
    return local_search(state, seed, settings, deadline)
