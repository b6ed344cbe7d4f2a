"""Exact reduction of the 0-1 quadratic knapsack problem: a strong LP bound and variable fixing by probing.

The problem (kind ``qkp``; :func:`qkp_of` recognises it in the family form)::

    max  sum_i c_i x_i + sum_{i<j} p_ij x_i x_j   s.t.  sum_i w_i x_i <= C,  x in {0, 1}^n.

**The bound.** A linear programme over 0 <= x_i <= 1 and one z_ij >= 0 for every pair i < j (z_ij
stands for the product x_i x_j; z_ji is the same variable)::

    max  sum_i c_i x_i + sum_{i<j} p_ij z_ij
    (1)  sum_i w_i x_i <= C
    (2)  z_ij <= x_i,  z_ij <= x_j                        the standard linearisation
    (3)  sum_{j != i} w_j z_ij <= (C - w_i) x_i   for all i   the capacity row times x_i (reformulation-
                                                          linearisation, Adams and Sherali 1986); with
                                                          (1) and (2) its bound is the one of Caprara,
                                                          Pisinger and Toth 1999
    (4)  z_ij + z_ik <= x_i + z_jk   (i; j < k)           triangle inequalities (Padberg 1989; for the
                                                          QKP, Billionnet and Calmels 1996), separated

It is a relaxation: every 0-1 point x with z_ij = x_i x_j satisfies (1)-(4) and has the QKP objective
there, whatever the signs of c and p. For (2), x_i x_j <= x_i. For (3), x_i sum_{j != i} w_j x_j <=
x_i (C - w_i x_i) = x_i (C - w_i) by (1) and x_i^2 = x_i. For (4), x_i x_j + x_i x_k - x_j x_k <= x_i
is 0 <= x_j x_k when x_i = 0 and (1 - x_j)(1 - x_k) >= 0 when x_i = 1. On the Billionnet-Soutif
instances (3) closes most of the gap of (1)-(2) where the capacity binds (jeu_100_75_8: 25 408 ->
20 228 against the best known 19 570) and (4) most of the rest (jeu_100_75_2: 97 102 -> 95 446
against 95 074).

(4) has 3 n(n-1)(n-2)/6 rows; :meth:`Relaxation.separate` adds the most violated ones in rounds
(at most ``cuts_per_round`` a round; the fields named here are those of
:class:`~odrp.kinds.knapsack.exact.settings.QkpReductionSettings`) until ``patience`` rounds in a row
each close less than ``min_progress`` of the gap between the bound and the target below (the first
rounds often close nothing: the LP's optimum is degenerate), then drops the rows of (4) that have
slack (dropping rows relaxes the LP: every bound stays valid, and the probes below run on a smaller LP).

**Fixing by probing** (the reduction of Pisinger, Rasmussen and Sandvik 2007, with this bound). Let L
be the value of a known solution and T the least value a better solution can have: L + 1 when every
profit is an integer (every objective value is then an integer), L otherwise. If the LP with x_k = v
added has its optimum below T, no solution of value T or more has x_k = v, so x_k = 1 - v holds in all
of them: it is fixed. Fixings accumulate (each LP carries the earlier ones: they hold for every
solution of value >= T, so the LP stays a relaxation of that set). HiGHS's dual simplex stops as soon
as its dual bound proves the optimum below T (option ``objective_bound``), or after
``probe_iterations`` iterations (then nothing is fixed). A probe fixes only when the bound lies below
T by ``TOLERANCE`` x max(1, |T|), far more than the error the LP's feasibility tolerances allow: the
fixings are as exact as the LP solver's arithmetic, as is any MILP solver's proof of optimality.

**The reduced problem.** With F1 fixed to one, F0 to zero and R free, every solution of value >= T is
F1 plus a solution y of the QKP over R with linear profits c_i + sum_{k in F1} p_ik, capacity
C - w(F1) and the constant c(F1) + sum_{k<l in F1} p_kl (:meth:`Qkp.restrict`); conversely F1 plus any
such y is a solution of the same value. Hence

    optimum = max(L, constant + optimum of the reduced problem)

(the reduced problem may be infeasible, C - w(F1) < 0, or empty). After a pass that fixed anything the
LP of the reduced problem is rebuilt, a tighter one since its row (3) uses the reduced capacity, and
separated and probed again, until a pass fixes nothing, nothing is left free or the deadline passes.
:func:`odrp.kinds.knapsack.exact.solve` then solves the reduced problem with the MILP of
:mod:`odrp.kinds.knapsack.exact.milp`.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import highspy
import numpy as np

from odrp.kinds.knapsack.exact.settings import QkpReductionSettings
from odrp.kinds.knapsack.family import Family

TOLERANCE = 1e-6
"""A probe fixes a variable only when its bound is below the target by this much, relative (min 1)."""


@dataclass(frozen=True)
class Qkp:
    """A QKP: ``linear`` c (n), ``pairs`` p (n x n, symmetric, zero diagonal), ``weight`` w (n), ``capacity`` C."""

    linear: np.ndarray
    pairs: np.ndarray
    weight: np.ndarray
    capacity: float

    @property
    def n(self) -> int:
        return len(self.linear)

    @property
    def integral(self) -> bool:
        """Every profit is an integer, so is every objective value."""
        values = np.concatenate([self.linear, self.pairs.ravel()])
        return bool(np.all(values == np.round(values)))

    def value(self, chosen: np.ndarray) -> float:
        """The objective of the 0-1 vector ``chosen``."""
        x = np.asarray(chosen, dtype=float)
        return float(self.linear @ x + x @ self.pairs @ x / 2)

    def restrict(self, ones: np.ndarray, free: np.ndarray) -> tuple[Qkp, float]:
        """The QKP over the items ``free`` when the items ``ones`` are packed, and its constant."""
        q = self.pairs
        constant = float(self.linear[ones].sum() + q[np.ix_(ones, ones)].sum() / 2)
        reduced = Qkp(
            linear=self.linear[free] + q[np.ix_(free, ones)].sum(axis=1),
            pairs=q[np.ix_(free, free)],
            weight=self.weight[free],
            capacity=float(self.capacity - self.weight[ones].sum()),
        )
        return reduced, constant


def qkp_of(f: Family) -> Qkp | None:
    """The QKP data of a family that is a QKP (one knapsack, one hard dimension, single items,
    copies may stay out, pair profits in the knapsack only, maximised), else None."""
    shaped = (
        f.sense == "max"
        and f.n_knapsacks == 1
        and f.hard == (0,)
        and not f.soft
        and not f.exactly_one
        and bool(np.all(f.count == 1))
        and not np.any(f.pair_group)
    )
    if not shaped:
        return None
    n = f.n_classes
    pairs = np.zeros((n, n))
    np.add.at(pairs, (f.pair_a, f.pair_b), f.pair_knapsack)
    pairs = pairs + pairs.T
    return Qkp(f.profit[:, 0].copy(), pairs, f.weight[0, :, 0].copy(), float(f.capacity[0, 0]))


@dataclass
class Reduction:
    """What :func:`reduce` proved: the fixings, the reduced problem and a bound on the optimum."""

    fixed_one: np.ndarray
    fixed_zero: np.ndarray
    free: np.ndarray
    reduced: Qkp
    constant: float
    bound: float
    """An upper bound on the optimum of the whole problem: L when no better solution exists (``stats["proven"]``),
    inf when no LP was solved in time."""
    stats: dict = field(default_factory=dict)


def target_of(q: Qkp, known: float) -> float:
    """T: the least value a solution better than ``known`` can have."""
    return known + 1.0 if q.integral else known


def reduce(
    q: Qkp, known: float, deadline: float | None = None, settings: QkpReductionSettings | None = None
) -> Reduction:
    """Fix every variable the LP bound (1)-(4) with probing can fix, given a solution of value ``known``."""
    settings = settings or QkpReductionSettings()
    start = time.perf_counter()
    target = target_of(q, known)
    margin = TOLERANCE * max(1.0, abs(target))
    free = np.arange(q.n)
    ones: list[int] = []
    zeros: list[int] = []
    reduced, constant, bound = q, 0.0, np.inf
    stats: dict = {"passes": [], "probes": 0, "cuts": 0, "lp_bound": None, "cut_bound": None, "proven": False}
    while len(free) and not _past(deadline):
        lp = Relaxation(reduced, deadline)
        value = lp.solve()
        if value is None:  # infeasible (the fixed items overfill the knapsack) or out of time
            stats["proven"] = lp.infeasible
            break
        if stats["lp_bound"] is None:
            stats["lp_bound"] = value
        separating = time.perf_counter()
        value, cuts = lp.separate(target - constant, settings)
        probing = time.perf_counter()
        stats["cuts"] += cuts
        if stats["cut_bound"] is None:
            stats["cut_bound"] = value
        if constant + value < target - margin:  # no solution of value >= T at all
            stats["proven"] = True
            break
        bound = min(bound, max(known, constant + value))
        fixed, probes = lp.probe_all(target - constant - margin, settings.probe_iterations)
        stats["probes"] += probes
        stats["passes"].append(
            {
                "free": reduced.n,
                "bound": constant + value,
                "cuts": cuts,
                "fixed": len(fixed),
                "separate_s": round(probing - separating, 2),
                "probe_s": round(time.perf_counter() - probing, 2),
            }
        )
        if not fixed:
            break
        local_ones = np.array(sorted(k for k, v in fixed.items() if v == 1), dtype=int)
        local_free = np.array([k for k in range(reduced.n) if k not in fixed], dtype=int)
        ones += [int(free[k]) for k in local_ones]
        zeros += [int(free[k]) for k, v in fixed.items() if v == 0]
        reduced, extra = reduced.restrict(local_ones, local_free)
        constant, free = constant + extra, free[local_free]
    stats["seconds"] = time.perf_counter() - start
    if stats["lp_bound"] is not None:
        bound = min(bound, stats["lp_bound"])
    return Reduction(
        fixed_one=np.array(sorted(ones), dtype=int),
        fixed_zero=np.array(sorted(zeros), dtype=int),
        free=free,
        reduced=reduced,
        constant=constant,
        bound=float(known)
        if stats["proven"]
        else min(bound, np.inf if stats["lp_bound"] is None else stats["lp_bound"]),
        stats=stats,
    )


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


class Relaxation:
    """The LP (1)-(4) of a QKP in HiGHS, minimising -objective (HiGHS's ``objective_bound`` stops
    only minimisations early), kept between solves so that each re-solve starts from the last basis."""

    def __init__(self, q: Qkp, deadline: float | None = None) -> None:
        self.q, self.deadline = q, deadline
        self.infeasible = False
        n = q.n
        self.i, self.j = np.triu_indices(n, 1)
        m = len(self.i)
        self.pair = np.full((n, n), -1, dtype=int)
        self.pair[self.i, self.j] = self.pair[self.j, self.i] = np.arange(m)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        self.h = h
        h.addVars(n + m, np.zeros(n + m), np.ones(n + m))
        cost = -np.concatenate([q.linear, q.pairs[self.i, self.j]])
        h.changeColsCost(n + m, np.arange(n + m, dtype=np.int32), cost.astype(float))
        self._rows([np.arange(n)], [q.weight], upper=np.array([q.capacity]))  # (1)
        for side in (self.i, self.j):  # (2)
            self._rows(list(np.stack([n + np.arange(m), side], axis=1)), [np.array([1.0, -1.0])] * m)
        rlt_cols, rlt_values = [], []  # (3), where it can bind
        for a in range(n):
            others = np.delete(np.arange(n), a)
            if q.weight[others].sum() > q.capacity - q.weight[a]:
                rlt_cols.append(np.append(n + self.pair[a, others], a))
                rlt_values.append(np.append(q.weight[others], -(q.capacity - q.weight[a])))
        self._rows(rlt_cols, rlt_values)
        self.first_cut_row = h.getNumRow()

    def _rows(self, cols: list[np.ndarray], values: list[np.ndarray], upper: np.ndarray | None = None) -> None:
        """Add the rows sum(values * x[cols]) <= upper (default 0)."""
        if not cols:
            return
        count = len(cols)
        starts = np.cumsum([0] + [len(c) for c in cols[:-1]]).astype(np.int32)
        index = np.concatenate(cols).astype(np.int32)
        value = np.concatenate(values).astype(float)
        upper = np.zeros(count) if upper is None else upper.astype(float)
        self.h.addRows(count, np.full(count, -np.inf), upper, len(index), starts, index, value)

    # ---- solving ------------------------------------------------------------------------------------
    def solve(self) -> float | None:
        """The LP optimum (an upper bound on the QKP); None when the LP is infeasible (``infeasible``
        is then set) or the deadline passed."""
        h = self.h
        h.setOptionValue("objective_bound", np.inf)
        if self.deadline is not None:  # HiGHS's time limit counts the run time of every solve of this object
            h.setOptionValue("time_limit", h.getRunTime() + max(0.0, self.deadline - time.perf_counter()))
        h.run()
        status = h.getModelStatus()
        self.infeasible = status == highspy.HighsModelStatus.kInfeasible
        if status != highspy.HighsModelStatus.kOptimal:
            return None
        return -h.getInfo().objective_function_value

    def point(self) -> tuple[np.ndarray, np.ndarray]:
        """x (n) and Z (n x n, Z_ij = z_ij, zero diagonal) at the last LP solution."""
        n = self.q.n
        values = np.array(self.h.getSolution().col_value)
        z = np.zeros((n, n))
        z[self.i, self.j] = z[self.j, self.i] = values[n:]
        return values[:n], z

    # ---- (4): triangle inequalities -------------------------------------------------------------------
    def violated_triangles(self, limit: int) -> np.ndarray:
        """(apex i, j, k) of the at most ``limit`` most violated rows (4), j < k, i not in {j, k}."""
        x, z = self.point()
        n = self.q.n
        upper = np.triu(np.ones((n, n), dtype=bool), 1)
        found, amounts = [], []
        for a in range(n):
            violation = z[a][:, None] + z[a][None, :] - z - x[a]
            violation[a, :] = violation[:, a] = 0.0
            j, k = np.nonzero((violation > 1e-6) & upper)
            found.append(np.stack([np.full(len(j), a), j, k], axis=1))
            amounts.append(violation[j, k])
        triangles, amount = np.concatenate(found), np.concatenate(amounts)
        if len(amount) > limit:
            keep = np.argpartition(-amount, limit)[:limit]
            triangles = triangles[keep]
        return triangles

    def add_triangles(self, triangles: np.ndarray) -> None:
        n, pair = self.q.n, self.pair
        a, j, k = triangles.T
        cols = np.stack([n + pair[a, j], n + pair[a, k], n + pair[j, k], a], axis=1)
        self._rows(list(cols), [np.array([1.0, 1.0, -1.0, -1.0])] * len(cols))

    def separate(self, target: float, settings: QkpReductionSettings) -> tuple[float, int]:
        """Rounds of (4) until ``patience`` rounds in a row each close less than ``min_progress`` of the
        gap to ``target``; then the rows of (4) with slack are dropped. Returns the bound and the rows added."""
        bound = -self.h.getInfo().objective_function_value
        added = stalled = 0
        for _ in range(settings.max_rounds):
            if bound < target or stalled == settings.patience or _past(self.deadline):
                break
            triangles = self.violated_triangles(settings.cuts_per_round)
            if not len(triangles):
                break
            self.add_triangles(triangles)
            added += len(triangles)
            value = self.solve()
            if value is None:  # out of time: the last optimum is still a bound, the rows only cut more
                break
            before, bound = bound, value
            stalled = stalled + 1 if before - bound < settings.min_progress * (before - target) else 0
        self.drop_slack_cuts()
        return bound, added

    def drop_slack_cuts(self) -> None:
        """Delete the rows of (4) that do not bind at the current solution."""
        rows = np.arange(self.first_cut_row, self.h.getNumRow())
        if not len(rows) or self.h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return
        activity = np.array(self.h.getSolution().row_value)[rows]
        slack = rows[activity < -1e-7]
        if len(slack):
            self.h.deleteRows(len(slack), slack.astype(np.int32))
            self.solve()

    # ---- probing ----------------------------------------------------------------------------------------
    def probe(self, k: int, v: int, target: float, iterations: int) -> bool:
        """True (and x_k fixed to 1 - v in the LP) when the LP with x_k = v has its optimum below ``target``."""
        h = self.h
        h.changeColBounds(k, v, v)
        h.setOptionValue("objective_bound", -target)
        h.setOptionValue("simplex_iteration_limit", iterations)
        h.run()
        status = h.getModelStatus()
        value = -h.getInfo().objective_function_value
        h.setOptionValue("simplex_iteration_limit", 2**31 - 1)
        below = status in (highspy.HighsModelStatus.kObjectiveBound, highspy.HighsModelStatus.kInfeasible) or (
            status == highspy.HighsModelStatus.kOptimal and value < target
        )
        h.changeColBounds(k, 1 - v if below else 0, 1 - v if below else 1)
        return below

    def probe_all(self, target: float, iterations: int) -> tuple[dict[int, int], int]:
        """Probe every variable at the value its LP solution is not at, most nearly integral first.
        Returns {k: the value k is fixed to} and the number of probes."""
        x, _ = self.point()
        fixed: dict[int, int] = {}
        probes = 0
        for k in map(int, np.argsort(-np.abs(x - 0.5), kind="stable")):
            for v in (0, 1):
                if k in fixed or abs(x[k] - v) < 1e-9 or _past(self.deadline):
                    continue
                probes += 1
                if self.probe(k, v, target, iterations):
                    fixed[k] = 1 - v
        return fixed, probes


# ---- the family form ------------------------------------------------------------------------------------


def reduced_family(f: Family, r: Reduction) -> Family:
    """The reduced problem of ``r`` as a family (classes: the free items of ``f``, in order).

    Its objective is the original objective minus ``r.constant`` for every solution that packs the
    items fixed to one (see :func:`lift`)."""
    q = r.reduced
    a, b = np.nonzero(np.triu(q.pairs, 1))
    return dataclasses.replace(
        f,
        name=f"{f.name} (reduced)",
        classes=tuple(f.classes[c] for c in r.free),
        profit=q.linear[:, None].copy(),
        weight=q.weight[None, :, None].copy(),
        capacity=np.array([[q.capacity]]),
        pair_a=a,
        pair_b=b,
        pair_knapsack=q.pairs[a, b],
        pair_group=np.zeros(len(a)),
    )


def lift(f: Family, r: Reduction, reduced_counts: np.ndarray | None) -> np.ndarray:
    """Counts of ``f``: the items fixed to one packed, the free ones as in ``reduced_counts`` (none if None)."""
    counts = np.zeros((f.n_classes, 1), dtype=int)
    counts[r.fixed_one, 0] = 1
    if reduced_counts is not None:
        counts[r.free, 0] = reduced_counts[:, 0]
    return counts


def respects(r: Reduction, counts: np.ndarray) -> bool:
    """Whether the solution ``counts`` (of the whole problem) satisfies every fixing."""
    return bool(np.all(counts[r.fixed_one, 0] == 1) and np.all(counts[r.fixed_zero, 0] == 0))
