"""Local search on a placement: the primal side of the rate search (fewer fixed-rate rounds).

Moves: add an instance of a component on a machine, remove one, or move one between machines. A
move is taken when it improves the vector of machine rates sorted ascending, lexicographically
(first the bottleneck rate R, then the next machine's rate, ...), which lets the search cross
plateaus where R itself does not change. Each machine keeps its overhead and its load per unit of R,
so a move costs O(machines). Deterministic; ends at a local optimum or after ``max_moves``.
"""

from __future__ import annotations

import math

from odrp.problems.throughput import FEASIBILITY_TOL, Counts, ThroughputInstance


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


def reinsert(inst: ThroughputInstance, counts: Counts, max_sweeps: int = 50) -> Counts:
    """Block ascent: take one component out and put it back with its best count and spread.

    With the other components fixed and N_c = n, machine w's rate (cap_w - F_w - MET_cw x_w) /
    (P_w + e_cw l_c x_w / n) only falls as x_w grows, and machines do not interact, so giving the
    n instances one at a time to the machine whose rate stays highest maximises the smallest rate
    (max-min allocation of separable non-increasing functions). Trying every n gives the best
    placement of c given the rest; components are swept until no sorted rate vector improves.
    """
    state = _State(inst, counts)
    best = state.rates(state.fixed, state.per)
    if best is None:
        return counts
    for _ in range(max_sweeps):
        improved = False
        for c in range(inst.n_components):
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
    inst = state.inst
    machines = range(inst.n_machines)
    fixed = [state.fixed[w] - inst.overhead[c][w] * state.x[c][w] for w in machines]
    per = [state.per[w] - inst.coefficient(c, w) * state.x[c][w] / state.n[c] for w in machines]
    limits = [math.inf if t is None else t for t in inst.max_tasks]
    room = [limits[w] - state.tasks[w] + state.x[c][w] for w in machines]
    top = sum(min(r, inst.count_bound(c, w)) for w, r in enumerate(room))
    if inst.max_instances[c] is not None:
        top = min(top, inst.max_instances[c])
    best: tuple[list[float], list[int]] | None = None
    for n in range(1, int(min(top, 10 * inst.n_machines + 10)) + 1):
        x = [0] * inst.n_machines
        for _ in range(n):
            pick, pick_rate = -1, -math.inf
            for w in machines:
                if x[w] + 1 > room[w]:
                    continue
                f = fixed[w] + inst.overhead[c][w] * (x[w] + 1)
                if f > inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL:
                    continue
                p = per[w] + inst.coefficient(c, w) * (x[w] + 1) / n
                r = (inst.capacity[w] - f) / p if p > 0 else math.inf
                if r > pick_rate:
                    pick, pick_rate = w, r
            if pick < 0:
                break
            x[pick] += 1
        else:
            f_all = [fixed[w] + inst.overhead[c][w] * x[w] for w in machines]
            p_all = [per[w] + inst.coefficient(c, w) * x[w] / n for w in machines]
            rates = state.rates(f_all, p_all)
            if rates is not None and (best is None or _better(rates, best[0])):
                best = (rates, x)
    return best


def round_fluid(inst: ThroughputInstance, shares: list[list[float]], instances: list[list[float]]) -> Counts | None:
    """A placement near a fluid LP point: N_c = round(sum_w X_cw), spread by largest remainder of N_c q_cw / R.

    Returns None when the rounded placement breaks a task limit or a machine's overheads.
    """
    machines = range(inst.n_machines)
    counts: Counts = []
    tasks = [0] * inst.n_machines
    fixed = [0.0] * inst.n_machines
    for c in range(inst.n_components):
        n = max(1, round(sum(instances[c])))
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
