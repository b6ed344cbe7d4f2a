"""A Lagrangian bound on R from the pattern LP, by column generation: proofs that a rate is out of reach.

At a rate rho a placement gives every component c a *pattern* x_c (instances per machine, N_c =
sum_w x_cw), which loads machine w with L_cw(x_c) = x_cw s_cw(N_c), s_cw(n) = e_cw l_c rho / n +
MET_cw (eq. 5), and takes x_cw of its task slots (see :mod:`.patterns`). If x sustains rho, then
for every machine sum_c L_cw(x_c) <= cap_w and sum_c x_cw <= k_w, so for any multipliers
pi_w >= 0 and tau_w >= 0

    sum_c [ sum_w pi_w L_cw(x_c) / cap_w + tau_w x_cw / k_w ]  <=  sum_w (pi_w + tau_w).      (*)

Each bracket is at least its minimum over all patterns of c, so if

    LB(pi, tau) = sum_c min_{x_c} [ ... ]  -  sum_w (pi_w + tau_w)  >  0,

no placement sustains rho and R* < rho. The minimum is exact and cheap: for a fixed count n the
bracket costs pi_w s_cw(n) / cap_w + tau_w / k_w per instance on w, so the cheapest pattern with n
instances fills the cheapest machines first up to u_cw(n), the instances of c that w holds alone
(count_bound, and x s_cw(n) <= cap_w: no machine carries more than its capacity of c alone); n
ranges over :func:`.bounds.count_range` (any N_c outside it cannot sustain rho). The proof needs
nothing from the LP solver but pi, tau >= 0: LB is computed from the multipliers alone, never
taken from the LP's objective, and must exceed ``MARGIN`` to count.

Good multipliers are the duals of the *pattern LP* (one convex combination of patterns per
component, the LP relaxation of :mod:`.patterns`' P(rho)), found by column generation with the
pricing above on its phase-one form: minimise the summed relative overloads t_w, t'_w of

    sum_{c,p} lambda_cp L_cw(p) / cap_w - t_w <= 1,   sum_{c,p} lambda_cp x_pw / k_w - t'_w <= 1,
    sum_p lambda_cp = 1,   lambda, t, t' >= 0.

The generation stops when LB > 0 (rho refuted), when the master reaches 0 (the pattern LP is feasible
at rho: this bound cannot refute it), or after ``max_iterations`` steps. Unlike the fluid LP, every pattern
splits its component's input evenly over whole instances, which is where the fluid bound is loose.
"""

from __future__ import annotations

import math
import time

import numpy as np

from odrp.core.solvers.highs import run_highspy
from odrp.kinds.throughput.exact.bounds import count_range
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, ThroughputInstance

MARGIN = 1e-7
"""LB must exceed this (relative to sum_w (pi_w + tau_w)) to count as a proof (rounding of floats)."""


class _Pricing:
    """The cheapest pattern of every component at rho for given multipliers."""

    def __init__(self, inst: ThroughputInstance, rho: float) -> None:
        self.inst = inst
        m = inst.n_machines
        self.cap = np.array(inst.capacity, dtype=float) * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
        self.slots = np.array([math.inf if k is None else float(k) for k in inst.max_tasks])
        self.levels: list[np.ndarray] = []
        self.sizes: list[np.ndarray] = []  # sizes[c][i, w] = s_cw(n_i)
        self.upper: list[np.ndarray] = []  # upper[c][i, w] = u_cw(n_i)
        for c in range(inst.n_components):
            lo, hi = count_range(inst, c, rho)
            n = np.arange(lo, hi + 1, dtype=float)
            coef = np.array([inst.coefficient(c, w) for w in range(m)])
            size = coef[None, :] * rho / n[:, None] + np.array(inst.overhead[c], dtype=float)[None, :]
            bound = np.array([inst.count_bound(c, w) for w in range(m)], dtype=float)
            with np.errstate(divide="ignore"):
                alone = np.where(size > 0, np.floor(self.cap[None, :] / np.where(size > 0, size, 1.0)), np.inf)
            upper = np.minimum(np.minimum(alone, bound[None, :]), n[:, None])
            feasible = upper.sum(axis=1) >= n
            self.levels.append(n[feasible].astype(np.int64))
            self.sizes.append(size[feasible])
            self.upper.append(upper[feasible])

    def empty(self) -> bool:
        """Some component has no pattern at rho (then rho is refuted outright)."""
        return any(len(n) == 0 for n in self.levels)

    def cheapest(self, c: int, pi: np.ndarray, tau: np.ndarray) -> tuple[float, np.ndarray]:
        """min over patterns of c of sum_w pi_w L_cw / cap_w + tau_w x_w / k_w, and a minimiser x."""
        per = pi[None, :] * self.sizes[c] / self.cap[None, :] + np.where(np.isfinite(self.slots), tau, 0.0) / np.where(
            np.isfinite(self.slots), self.slots, 1.0
        )
        best, best_x = math.inf, None
        for i, n in enumerate(self.levels[c]):
            order = np.argsort(per[i], kind="stable")
            take = np.zeros(len(order))
            left = float(n)
            cost = 0.0
            for w in order:
                k = min(self.upper[c][i, w], left)
                take[w] = k
                cost += k * per[i, w]
                left -= k
                if left <= 0:
                    break
            if cost < best:
                best, best_x = cost, take
        assert best_x is not None
        return best, best_x.astype(np.int64)

    def lagrangian(self, pi: np.ndarray, tau: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """LB(pi, tau) and the cheapest pattern of every component."""
        total, columns = 0.0, []
        for c in range(self.inst.n_components):
            cost, x = self.cheapest(c, pi, tau)
            total += cost
            columns.append(x)
        rhs = float(pi.sum() + tau[np.isfinite(self.slots)].sum())
        return total - rhs, columns

    def loads(self, c: int, x: np.ndarray) -> np.ndarray:
        n = int(x.sum())
        i = int(np.searchsorted(self.levels[c], n))
        return x * self.sizes[c][i]


def refutes(
    inst: ThroughputInstance,
    rho: float,
    deadline: float | None = None,
    max_iterations: int = ThroughputSettings().pattern_lp_iterations,
) -> bool | None:
    """True: proven that no placement sustains rho; False: the pattern LP is feasible at rho; None: undecided
    (after ``max_iterations`` column generation steps, or at ``deadline``)."""
    pricing = _Pricing(inst, rho)
    if pricing.empty():
        return True
    m, nc = inst.n_machines, inst.n_components
    finite = np.isfinite(pricing.slots)
    pi, tau = np.ones(m), np.zeros(m)
    columns: list[list[np.ndarray]] = [[] for _ in range(nc)]
    for iteration in range(max_iterations):
        lb, cheapest = pricing.lagrangian(pi, tau)
        if lb > MARGIN * (pi.sum() + tau[finite].sum()):
            return True
        added = False
        for c, x in enumerate(cheapest):
            if not any(np.array_equal(x, y) for y in columns[c]):
                columns[c].append(x)
                added = True
        if not added and iteration > 0:
            return None  # no new column: the duals repeat (degenerate master); give up
        if deadline is not None and time.perf_counter() > deadline:
            return None
        value, pi, tau = _master(inst, pricing, columns)
        if value <= 1e-9:
            return False
    return None


def _master(inst: ThroughputInstance, pricing: _Pricing, columns: list[list[np.ndarray]]):
    """Solve the restricted phase-one master; its value and the multipliers pi, tau >= 0."""
    m = inst.n_machines
    model = MatrixModel(sense="min")
    over = [model.column(cost=1.0) for _ in range(m)]
    over_tasks = [model.column(cost=1.0) for _ in range(m)]
    load: list[dict[int, float]] = [{over[w]: -1.0} for w in range(m)]
    tasks: list[dict[int, float]] = [{over_tasks[w]: -1.0} for w in range(m)]
    for c, patterns in enumerate(columns):
        lam = [model.column() for _ in patterns]
        model.row(dict.fromkeys(lam, 1.0), 1.0, 1.0)
        for col, x in zip(lam, patterns, strict=True):
            size = pricing.loads(c, x)
            for w in np.flatnonzero(x):
                load[w][col] = float(size[w] / pricing.cap[w])
                if math.isfinite(pricing.slots[w]):
                    tasks[w][col] = float(x[w] / pricing.slots[w])
    load_rows = [model.row(row, upper=1.0) for row in load]
    task_rows = [model.row(row, upper=1.0) for row in tasks]
    highs = model.to_highs()
    run = run_highspy(highs, "min", mip=False)
    if run.status != "optimal" or run.objective is None:
        raise RuntimeError(f"pattern LP master: {run.status} {run.message}")
    duals = list(highs.getSolution().row_dual)
    pi = np.array([max(0.0, -duals[r]) for r in load_rows])
    tau = np.array([max(0.0, -duals[r]) for r in task_rows])
    return run.objective, pi, tau


def upper_bound(
    inst: ThroughputInstance,
    low: float,
    high: float,
    deadline: float | None,
    steps: int = 30,
    max_iterations: int = ThroughputSettings().pattern_lp_iterations,
) -> float:
    """The lowest rate in (low, high] this bound refutes, by bisection (``high`` if none is found)."""
    for _ in range(steps):
        if high - low <= 1e-7 * high or (deadline is not None and time.perf_counter() > deadline):
            break
        mid = (low + high) / 2
        if refutes(inst, mid, deadline, max_iterations) is True:
            high = mid
        else:
            low = mid
    return high
