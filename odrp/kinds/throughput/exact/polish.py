"""Local search on a placement: the primal side of the rate search (fewer fixed-rate rounds).

Moves: add an instance of a component on a machine, remove one, or move one between machines. A
move is taken when it improves the vector of machine rates sorted ascending, lexicographically
(first the bottleneck rate R, then the next machine's rate, ...), which lets the search cross
plateaus where R itself does not change. Each machine keeps its overhead and its load per unit of R,
so a move costs O(machines). Deterministic; ends at a local optimum or after ``max_moves``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance


class _State:
    def __init__(self, inst: ThroughputInstance, counts: Counts) -> None:
        self.inst = inst
        self.x = [[counts[c].get(w, 0) for w in range(inst.n_machines)] for c in range(inst.n_components)]
        self.n = [sum(row) for row in self.x]
        self.fixed = [0.0] * inst.n_machines
        self.tasks = [0] * inst.n_machines
        for c, row in enumerate(self.x):
            for w, k in enumerate(row):
                self.fixed[w] += inst.overhead[c][w] * k
                self.tasks[w] += k
        self.per = self._per()

    def _per(self) -> list[float]:
        per = [0.0] * self.inst.n_machines
        for c, row in enumerate(self.x):
            for w, k in enumerate(row):
                if k:
                    per[w] += self.inst.coefficient(c, w) * k / self.n[c]
        return per

    def rates(self, fixed: list[float], per: list[float]) -> list[float] | None:
        out = []
        for w in range(self.inst.n_machines):
            cap = self.inst.capacity[w]
            if fixed[w] > cap * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL:
                return None
            out.append((cap - fixed[w]) / per[w] if per[w] > 0 else math.inf)
        out.sort()
        return out

    def trial(self, c: int, changes: list[tuple[int, int]]) -> tuple[list[float], list[float]] | None:
        """Overheads and loads after adding ``d`` instances of c on machine w for each (w, d)."""
        inst = self.inst
        new_n = self.n[c] + sum(d for _, d in changes)
        top = inst.max_instances[c]
        if new_n < 1 or (top is not None and new_n > top):
            return None
        x = self.x[c][:]
        fixed = self.fixed[:]
        for w, d in changes:
            x[w] += d
            if x[w] < 0:
                return None
            limit = inst.max_tasks[w]
            if limit is not None and self.tasks[w] + d > limit:
                return None
            fixed[w] += inst.overhead[c][w] * d
        per = self.per[:]
        for w in range(inst.n_machines):
            old, new = self.x[c][w], x[w]
            if old or new:
                a = inst.coefficient(c, w)
                per[w] += a * (new / new_n - old / self.n[c])
        return fixed, per

    def apply(self, c: int, changes: list[tuple[int, int]]) -> None:
        for w, d in changes:
            self.x[c][w] += d
            self.tasks[w] += d
            self.fixed[w] += self.inst.overhead[c][w] * d
        self.n[c] = sum(self.x[c])
        self.per = self._per()  # recomputed exactly: no drift from incremental updates

    def counts(self) -> Counts:
        return [{w: k for w, k in enumerate(row) if k} for row in self.x]


def polish(inst: ThroughputInstance, counts: Counts, max_moves: int = 10_000) -> Counts:
    """A local optimum reached from ``counts`` (a feasible placement) by improving moves."""
    state = _State(inst, counts)
    best = state.rates(state.fixed, state.per)
    if best is None:
        return counts
    machines = range(inst.n_machines)
    for _ in range(max_moves):
        improved = False
        for c in range(inst.n_components):
            moves: list[list[tuple[int, int]]] = [[(w, 1)] for w in machines]
            for w in machines:
                if state.x[c][w]:
                    moves.append([(w, -1)])
                    moves.extend([(w, -1), (v, 1)] for v in machines if v != w)
            for changes in moves:
                after = state.trial(c, changes)
                if after is None:
                    continue
                rates = state.rates(*after)
                if rates is not None and _better(rates, best):
                    state.apply(c, changes)
                    best = state.rates(state.fixed, state.per)
                    improved = True
                    break
        if not improved:
            break
    return state.counts()


def _better(a: list[float], b: list[float]) -> bool:
    """Lexicographically larger sorted rate vector, by more than rounding noise."""
    for x, y in zip(a, b, strict=True):
        if x > y * (1 + 1e-12) + 1e-12:
            return True
        if x < y * (1 - 1e-12) - 1e-12:
            return False
    return False


def reinsert(inst: ThroughputInstance, counts: Counts, max_sweeps: int = 50, deadline: float | None = None) -> Counts:
    """Block ascent: take one component out and put it back with its best count and spread.

    With the other components fixed and N_c = n, machine w's rate (cap_w - F_w - MET_cw x_w) /
    (P_w + e_cw l_c x_w / n) only falls as x_w grows, and machines do not interact, so giving the
    n instances one at a time to the machine whose rate stays highest maximises the smallest rate
    (max-min allocation of separable non-increasing functions). Trying every n gives the best
    placement of c given the rest; components are swept until no sorted rate vector improves (or
    ``deadline`` passes: the placement as it is then).
    """
    state = _State(inst, counts)
    best = state.rates(state.fixed, state.per)
    if best is None:
        return counts
    for _ in range(max_sweeps):
        improved = False
        for c in range(inst.n_components):
            if deadline is not None and time.perf_counter() > deadline:
                return state.counts()
            choice = _best_insertion(state, c)
            if choice is None:
                continue
            rates, x = choice
            if _better(rates, best):
                state.apply(c, [(w, x[w] - state.x[c][w]) for w in range(inst.n_machines) if x[w] != state.x[c][w]])
                best = state.rates(state.fixed, state.per)
                improved = True
        if not improved:
            break
    return state.counts()


def _best_insertion(state: _State, c: int) -> tuple[list[float], list[int]] | None:
    """The best count n and spread x of c with the rest of the placement fixed (None: nothing fits).

    For a given n, machine w's rate r_w(k) after k instances of c does not increase with k, so
    handing out the n instances one at a time to the machine whose rate stays highest picks the n
    largest values r_w(k) over all (w, k): computed for every n at once by sorting each n's values
    (ties to the lower machine); the sorted machine rates of every n are compared lexicographically.
    """
    inst = state.inst
    m = inst.n_machines
    machines = range(m)
    met = np.array(inst.overhead[c], dtype=float)
    coef = np.array([inst.coefficient(c, w) for w in machines])
    x_now = np.array(state.x[c], dtype=float)
    fixed = np.array(state.fixed) - met * x_now
    per = np.array(state.per) - coef * x_now / state.n[c]
    limits = [math.inf if t is None else t for t in inst.max_tasks]
    room = [int(min(limits[w] - state.tasks[w] + state.x[c][w], inst.count_bound(c, w))) for w in machines]
    top = sum(room)
    if inst.max_instances[c] is not None:
        top = min(top, inst.max_instances[c])
    top = int(min(top, 10 * m + 10))
    if top < 1:
        return None
    depth = max(room)
    k = np.arange(1, depth + 1, dtype=float)
    n = np.arange(1, top + 1, dtype=float)
    capacity = np.array(inst.capacity, dtype=float)
    left = capacity[:, None] - fixed[:, None] - met[:, None] * k[None, :]  # CPU left after k instances
    usable = (
        fixed[:, None] + met[:, None] * k[None, :] <= capacity[:, None] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
    ) & (k[None, :] <= np.array(room)[:, None])
    load = per[None, :, None] + coef[None, :, None] * k[None, None, :] / n[:, None, None]  # [n, w, k]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(load > 0, left[None] / np.where(load > 0, load, 1.0), np.inf)
    value = np.where(usable[None], value, -np.inf).reshape(top, m * depth)
    order = np.argsort(-value, axis=1, kind="stable")
    taken = np.arange(m * depth)[None, :] < n[:, None]  # the n largest values of row n
    fits = np.take_along_axis(value, order, axis=1)[np.arange(top), np.minimum(n.astype(int), m * depth) - 1] > -np.inf
    fits &= n <= m * depth
    chosen = np.zeros((top, m * depth), dtype=bool)
    np.put_along_axis(chosen, order, taken, axis=1)
    x = chosen.reshape(top, m, depth).sum(axis=2)  # [n, w]
    f_all = fixed[None, :] + met[None, :] * x
    p_all = per[None, :] + coef[None, :] * x / n[:, None]
    best: tuple[list[float], list[int]] | None = None
    for row in np.flatnonzero(fits):
        rates = state.rates(f_all[row].tolist(), p_all[row].tolist())
        if rates is not None and (best is None or _better(rates, best[0])):
            best = (rates, [int(v) for v in x[row]])
    return best


def round_fluid(
    inst: ThroughputInstance, shares: list[list[float]], instances: list[list[float]], scale: float = 1.0
) -> Counts | None:
    """A placement near a fluid LP point: N_c = round(scale sum_w X_cw), spread by largest remainder of N_c q_cw / R.

    The fluid LP lets a component's share on a machine differ from its instance fraction there; more
    instances (``scale`` > 1) let the even split follow the shares more closely. Returns None when the
    rounded placement breaks a task limit or a machine's overheads.
    """
    machines = range(inst.n_machines)
    counts: Counts = []
    tasks = [0] * inst.n_machines
    fixed = [0.0] * inst.n_machines
    for c in range(inst.n_components):
        n = max(1, round(scale * sum(instances[c])))
        if inst.max_instances[c] is not None:
            n = min(n, inst.max_instances[c])
        ideal = [n * max(shares[c][w], 0.0) for w in machines]
        x = [min(math.floor(v), inst.count_bound(c, w)) for w, v in enumerate(ideal)]
        order = sorted(machines, key=lambda w: x[w] - ideal[w])  # largest remainder first
        for w in order:
            if sum(x) >= n:
                break
            if x[w] < inst.count_bound(c, w) and ideal[w] > 0:
                x[w] += 1
        if sum(x) == 0:
            return None
        for w in machines:
            tasks[w] += x[w]
            fixed[w] += inst.overhead[c][w] * x[w]
        counts.append({w: k for w, k in enumerate(x) if k})
    for w in machines:
        limit = inst.max_tasks[w]
        if (limit is not None and tasks[w] > limit) or fixed[w] > inst.capacity[w] * (1 + FEASIBILITY_TOL):
            return None
    return counts


def improve(inst: ThroughputInstance, counts: Counts) -> Counts:
    """The local search applied to every placement a leaf of the level search finds: :func:`polish`, then block
    ascent (:func:`reinsert`)."""
    return reinsert(inst, polish(inst, counts))
