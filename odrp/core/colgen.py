"""Column generation for set partitioning with group types: the Dantzig-Wolfe master of clustering problems.

Capacitated clustering problems (operators on supervisors, tasks on nodes) decompose into *groups*:
the items that share one bin. The master problem chooses groups (Mehrotra & Trick 1998, "Cliques
and clustering: a combinatorial approach"; Johnson, Mehrotra & Nemhauser 1993):

- items i = 1..m with demands b_i (how many units of i there are: interchangeable operators or tasks
  are one item with several units);
- group types t = 1..K (a class of identical bins) with at most n_t groups each;
- a column g = (type t, counts a_g in Z^m, cost c_g): a group of a_ig units of each item i that fits
  one bin of type t, c_g its cost.

The master LP (its restricted form holds the columns generated so far, plus an artificial column per
item at cost ``artificial_cost`` so that it is feasible from the start):

    min  sum_g c_g lambda_g
    s.t. sum_g a_ig lambda_g = b_i            (pi_i)   every item
         sum_{g of type t} lambda_g <= n_t    (mu_t <= 0) every type
         lambda >= 0                           (integer in the restricted IP)

Reduced cost of a column: r_g = c_g - sum_i a_ig pi_i - mu_t. **Lagrangian bound**: for any duals
(pi, mu) and r_t <= min { r_g : g of type t } (a pricing problem's dual bound serves), q_t = mu_t + r_t
is at most c_g - pi.a_g for every column g of type t, and

    L(pi, mu) = sum_i b_i pi_i + sum_t n_t min(0, q_t)

is a lower bound of every integer (and fractional) solution: with S_t = sum_{g of t} lambda_g in
[0, n_t], c.lambda = pi.b + sum_g (c_g - pi.a_g) lambda_g >= pi.b + sum_t q_t S_t >= L. It holds at
every iteration, so a run stopped by its time limit still has a bound. It is never below the usual
form pi.b + sum_t n_t mu_t + sum_t n_t min(0, r_t) (z + sum_t n_t min(0, r_t) at the LP's own duals,
mu_t <= 0), and above it where a type's row binds (mu_t < 0) and none of its columns prices out
(r_t > 0), as happens at smoothed duals.

**Pricing** is the kind's: a :class:`Pricer` returns columns of negative reduced cost found by a
heuristic, and, from an exact method, the least reduced cost of a type or a lower bound of it.
Heuristic pricing runs first; the exact pricing runs when the heuristic finds nothing, and its
bound gives L.

**Dual stabilisation** (Wentges 1997 smoothing): pricing uses pi~ = alpha pi_center + (1 - alpha)
pi_out, the center being the duals of the best Lagrangian bound so far; a column is added when its
reduced cost at the LP's own duals is negative; when the exact pricing at pi~ finds none (a
*mispricing*), L(pi~) still bounds and the center moves there if better. Every exact round steps
alpha down by 0.25 until it is 0: then the pricing is at the LP's own duals, and when no column prices
out there the LP is optimal and L = z_LP.

**Branching** (:func:`branch_on_types`): after the LP has converged, branch and price on the number of
groups of each type, S_t, whose rows then read lower_t <= S_t <= upper_t (with an artificial column per
type, so that a node's LP stays feasible); the Lagrangian bound of a node holds for S_t in its range,
with sum_t min(q_t lower_t, q_t upper_t) in place of sum_t n_t min(0, q_t). Inside a single vector of
counts, Ryan and Foster's (1981) branching on a pair of items (a, b), a of demand 1: *together*, the
group that holds a holds b (and, b also of demand 1, the group that holds b holds a), or *apart*, no
group holds both; every integer solution lies in exactly one of the two, and the pricing keeps to them
(:meth:`Pricer.restrict`). Barnhart et al. (1998), "Branch-and-price: column generation for solving huge
integer programs", section 4.

**Primal**: the restricted master as an integer program over the columns generated
(:meth:`Master.restricted_ip`).
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from odrp.core.solvers.highs import use_threads
from odrp.core.solvers.run import c_stdout_silenced

Counts = tuple[int, ...]

Pair = tuple[int, int, bool]
"""A branching decision on items (a, b), a of demand 1: True for *together*, False for *apart*."""


def pairs_allow(demands: Sequence[int], pairs: Sequence[Pair], counts: Sequence[int]) -> bool:
    """Whether a group of these counts keeps every decision of ``pairs`` (the module docstring's branching):
    apart, it does not hold both a and b; together, holding a it holds b, and holding b it holds a when b
    is of demand 1 too."""
    for a, b, together in pairs:
        if not together:
            if counts[a] and counts[b]:
                return False
        elif (counts[a] and not counts[b]) or (demands[b] == 1 and counts[b] and not counts[a]):
            return False
    return True


@dataclass(frozen=True)
class Pricing:
    """What an exact pricing of one type returns."""

    columns: list[Counts]
    """Columns it found (the best first), whatever their reduced cost."""
    least_reduced_cost: float | None
    """A lower bound of the least reduced cost of the type (the optimum less a safety margin when the
    pricing was proven); None when the pricing proved nothing (then no bound is computed this round)."""
    proven: bool = False
    """True when the pricing solved to optimality (no group of the type has a smaller reduced cost than
    the columns', whatever the margin in ``least_reduced_cost``)."""


def price_units(
    h: Any,
    units: Sequence[tuple[int, int]],
    n_items: int,
    unit_costs: np.ndarray,
    time_limit: float | None,
    known: Counts | None,
    threshold: float,
) -> Pricing:
    """Run an exact pricing MILP held by ``h`` (highspy, maximising) whose first columns are one binary
    per unit (item, k), k < demand, ordered x_{i,k} >= x_{i,k+1}: set their costs, the time limit and,
    from ``known`` (counts), a MIP start; solve. A column prices out when its value exceeds
    ``threshold``: the least reduced cost is ``threshold`` minus the MILP's optimum, or minus its dual
    bound when the time ran out (None when it has none). The best counts found are the column, and so
    are the other solutions that improved HiGHS's incumbent on the way and price out (several columns
    from one MILP)."""
    import highspy

    nu = len(units)
    h.changeColsCost(nu, np.arange(nu, dtype=np.int32), unit_costs)
    h.setOptionValue("time_limit", math.inf if time_limit is None else max(0.05, time_limit))
    h.clearSolver()
    h.setOptionValue("mip_improving_solution_save", True)
    if known is not None:
        x = np.array([1.0 if k < known[i] else 0.0 for i, k in units])
        h.setSolution(nu, np.arange(nu, dtype=np.int32), x)
    with c_stdout_silenced():  # HiGHS prints some MIP messages to the C stdout even when silent
        ran = h.run()
        if ran == highspy.HighsStatus.kError:  # a scheduler started for another thread count refuses the run
            use_threads(h.getOptionValue("threads")[1])
            ran = h.run()
    if ran == highspy.HighsStatus.kError:
        return Pricing([], None)
    info = h.getInfo()
    columns: list[Counts] = []
    if info.primal_solution_status == 2:
        solutions = [h.getSolution().col_value]
        # the last improving solution is the best; the earlier ones, best first
        solutions += [s.col_value for s in reversed(h.getSavedMipSolutions()) if s.objective > threshold]
        for x in solutions:
            n = [0] * n_items
            for q, (i, _) in enumerate(units):
                if x[q] > 0.5:
                    n[i] += 1
            if tuple(n) not in columns:
                columns.append(tuple(n))
    status = h.getModelStatus()
    proven = status == highspy.HighsModelStatus.kOptimal
    if proven:
        best = max(info.mip_dual_bound, info.objective_function_value)
    elif status == highspy.HighsModelStatus.kTimeLimit and math.isfinite(info.mip_dual_bound):
        best = info.mip_dual_bound  # a solve that ran: its dual bound holds
    else:
        return Pricing(columns, None)
    return Pricing(columns, threshold - best - 1e-9 * max(1.0, abs(best)), proven)


def add_capacity_products(
    h: Any,
    products: Sequence[tuple[int, int, int]],
    weights: Sequence[Sequence[float]],
    capacities: Sequence[float],
) -> None:
    """Add to a unit pricing MILP ``h`` (highspy) the RLT capacity cuts (Adams and Sherali 1986) of its
    capacity rows sum_q weights[d][q] x_q <= capacities[d]: each row times x_q, with y_qp for x_q x_p,

        sum_p weights[d][p] y_qp + (weights[d][q] - capacities[d]) x_q <= 0    for every unit q with a product,

    ``products`` holding (column of y, q, p) for the products y <= x_q, y <= x_p (columns q, p: the units).
    At integer points y_qp <= x_q x_p, so the row holds (x_q = 0 gives y = 0; x_q = 1 the capacity row
    with the units not paired with q left out); in the LP, where y may reach min(x_q, x_p), it cuts the
    pairs of q down to the room that q leaves."""
    partners: dict[int, list[tuple[int, int]]] = {}
    for y, q, p in products:
        partners.setdefault(q, []).append((y, p))
        partners.setdefault(p, []).append((y, q))
    for q, ys in partners.items():
        index = np.array([y for y, _ in ys] + [q], dtype=np.int32)
        for row, capacity in zip(weights, capacities, strict=True):
            values = np.array([float(row[p]) for _, p in ys] + [float(row[q]) - capacity])
            h.addRow(-math.inf, 0.0, len(index), index, values)


class Pricer(Protocol):
    """The kind's side of the column generation."""

    def cost(self, t: int, counts: Counts) -> float:
        """c_g of a group of type ``t`` with these counts."""

    def heuristic(self, t: int, pi: np.ndarray, mu: float, upper: Sequence[int], starts: list[Counts]) -> list[Counts]:
        """Groups of type ``t`` of small reduced cost at (pi, mu), at most ``upper[i]`` units of item i,
        found from the ``starts`` (columns of the current LP solution) and from scratch."""

    def exact(self, t: int, pi: np.ndarray, mu: float, time_limit: float | None) -> Pricing:
        """The least reduced cost of type ``t`` at (pi, mu) over its non-empty groups (a bound of it when the
        time runs out); at a branch's duals (mu_t > 0) the empty group can look best, and is no group."""

    def restrict(self, pairs: Sequence[Pair]) -> None:
        """Price, from now on, only groups that keep ``pairs`` (:func:`pairs_allow`); the exact pricing
        over those alone (its bound must hold for them). Needed by :func:`branch_on_types` with
        ``branch_pairs``."""


@dataclass
class Column:
    """A generated group: its type, the units of each item, its cost."""

    type: int
    counts: Counts
    cost: float


@dataclass
class Generation:
    """What one run of :func:`generate` established."""

    bound: float
    """The best Lagrangian bound (-inf when no exact pricing finished)."""
    lp_value: float
    """The restricted master LP's last value."""
    converged: bool
    """True when no column prices out at the LP's duals (the LP bound is proven: ``bound`` = ``lp_value``)."""
    iterations: int = 0
    exact_rounds: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


class Master:
    """The restricted master LP (highspy), its columns, and its integer program."""

    def __init__(self, demands: Sequence[int], type_counts: Sequence[int], artificial_cost: float) -> None:
        import highspy

        self.highspy = highspy
        self.demands = [int(b) for b in demands]
        self.type_counts = [int(n) for n in type_counts]
        self.m, self.k = len(self.demands), len(self.type_counts)
        self.columns: list[Column | None] = []
        """Every column of the LP in order; None for an artificial one."""
        self.type_lower = [0] * self.k
        self.type_upper = list(self.type_counts)
        """The range [lower, upper] of each type's number of groups (the root's: [0, n_t]; a branch narrows it)."""
        self._artificial_cost = artificial_cost
        self._type_artificials = False
        self._seen: set[tuple[int, Counts]] = set()
        self.pairs: tuple[Pair, ...] = ()
        """The branching decisions on pairs in force (:meth:`restrict`)."""
        self._blocked: set[int] = set()
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        inf = highspy.kHighsInf
        empty_i, empty_v = np.array([], dtype=np.int32), np.array([], dtype=float)
        b = np.array(self.demands, dtype=float)
        h.addRows(self.m, b, b, 0, empty_i, empty_i, empty_v)
        h.addRows(self.k, np.full(self.k, -inf), np.array(self.type_counts, dtype=float), 0, empty_i, empty_i, empty_v)
        for i in range(self.m):
            h.addCol(artificial_cost, 0.0, inf, 1, np.array([i], dtype=np.int32), np.ones(1))
            self.columns.append(None)
        self.h = h

    def add(self, column: Column) -> bool:
        """Add a column unless the LP has it already or it breaks a decision in force; True if added."""
        key = (column.type, column.counts)
        if key in self._seen or not pairs_allow(self.demands, self.pairs, column.counts):
            return False
        self._seen.add(key)
        rows = [i for i, a in enumerate(column.counts) if a] + [self.m + column.type]
        values = [float(a) for a in column.counts if a] + [1.0]
        rows_array, values_array = np.array(rows, dtype=np.int32), np.array(values)
        self.h.addCol(column.cost, 0.0, self.highspy.kHighsInf, len(rows), rows_array, values_array)
        self.columns.append(column)
        return True

    def solve_lp(self, time_limit: float | None = None) -> tuple[float, np.ndarray, np.ndarray, np.ndarray] | None:
        """The LP optimum: value, pi, mu (clipped to <= 0) and the column values; None if not solved."""
        h = self.h
        h.setOptionValue("time_limit", math.inf if time_limit is None else max(0.01, time_limit))
        h.run()
        if h.getModelStatus() != self.highspy.HighsModelStatus.kOptimal:
            return None
        solution = h.getSolution()
        duals = np.array(solution.row_dual)
        mu = duals[self.m :]
        return (
            h.getInfo().objective_function_value,
            duals[: self.m],
            np.where(np.array(self.type_lower) > 0, mu, np.minimum(mu, 0.0)),  # <= 0 where only the upper end binds
            np.array(solution.col_value),
        )

    def lagrangian_bound(self, pi: np.ndarray, mu: np.ndarray, least: Sequence[float]) -> float:
        """L(pi, mu) of the module docstring with ``least[t]`` a lower bound of type t's least reduced cost,
        for the types' current ranges: S_t in [lower_t, upper_t] gives min(q_t lower_t, q_t upper_t)."""
        terms = zip(self.type_lower, self.type_upper, mu, least, strict=True)
        return float(np.dot(pi, self.demands) + sum(min(lo * (m + r), hi * (m + r)) for lo, hi, m, r in terms))

    def type_sums(self, values: np.ndarray) -> np.ndarray:
        """S_t: the number of groups of each type in the LP solution ``values``."""
        sums = np.zeros(self.k)
        for j, column in enumerate(self.columns):
            if column is not None:
                sums[column.type] += values[j]
        return sums

    def set_type_range(self, lower: Sequence[int], upper: Sequence[int]) -> None:
        """Ask for between ``lower[t]`` and ``upper[t]`` groups of each type t (a branch of :func:`branch_on_types`)."""
        if any(lower) and not self._type_artificials:  # keep the LP feasible: an artificial group per type
            inf = self.highspy.kHighsInf
            for t in range(self.k):
                self.h.addCol(self._artificial_cost, 0.0, inf, 1, np.array([self.m + t], dtype=np.int32), np.ones(1))
                self.columns.append(None)
            self._type_artificials = True
        self.type_lower, self.type_upper = [int(v) for v in lower], [int(v) for v in upper]
        for t in range(self.k):
            self.h.changeRowBounds(self.m + t, float(self.type_lower[t]), float(self.type_upper[t]))

    def restrict(self, pairs: Sequence[Pair]) -> None:
        """Keep only the columns that keep ``pairs`` (the others bounded to 0 until the next call) and
        refuse new ones that break them."""
        self.pairs = tuple(pairs)
        blocked = {
            j
            for j, column in enumerate(self.columns)
            if column is not None and not pairs_allow(self.demands, self.pairs, column.counts)
        }
        for j in blocked - self._blocked:
            self.h.changeColBounds(j, 0.0, 0.0)
        for j in self._blocked - blocked:
            self.h.changeColBounds(j, 0.0, self.highspy.kHighsInf)
        self._blocked = blocked

    def fractional_pair(self, values: np.ndarray, tolerance: float = 1e-6) -> tuple[int, int] | None:
        """The pair (a, b) of the LP solution ``values`` to branch on: a of demand 1, b held with a in a share
        f of a's groups, 0 < f < 1, f nearest 1/2 (None when every such share is 0 or 1)."""
        share: dict[tuple[int, int], float] = {}
        for j, column in enumerate(self.columns):
            if column is None or values[j] <= 1e-9:
                continue
            held = [i for i, n in enumerate(column.counts) if n]
            for a in held:
                if self.demands[a] != 1:
                    continue
                for b in held:
                    if b != a and (self.demands[b] != 1 or a < b):
                        share[a, b] = share.get((a, b), 0.0) + float(values[j])
        best, pair = tolerance, None
        for key, f in sorted(share.items()):
            if min(f, 1.0 - f) > best:
                best, pair = min(f, 1.0 - f), key
        return pair

    def integral(self, values: np.ndarray, tolerance: float = 1e-6) -> list[Column] | None:
        """The columns of an integral LP solution ``values`` without artificial columns, else None."""
        chosen: list[Column] = []
        for j, column in enumerate(self.columns):
            if abs(values[j] - round(values[j])) > tolerance or (column is None and values[j] > tolerance):
                return None
            if column is not None:
                chosen.extend([column] * round(values[j]))
        return chosen

    def reduced_cost(self, column: Column, pi: np.ndarray, mu: np.ndarray) -> float:
        return column.cost - float(np.dot(pi, column.counts)) - float(mu[column.type])

    def set_residual(self, demands: Sequence[int], type_counts: Sequence[int]) -> None:
        """Make the rows ask for these demands and allow these type counts (:func:`dive`)."""
        for i, b in enumerate(demands):
            self.h.changeRowBounds(i, float(b), float(b))
        for t, n in enumerate(type_counts):
            self.h.changeRowBounds(self.m + t, -self.highspy.kHighsInf, float(n))

    def restricted_ip(self, time_limit: float | None, cutoff: float | None = None) -> list[Column] | None:
        """The best integer combination of the generated columns (no artificial one), or None.

        ``cutoff``: only a solution of cost below it is of interest. Solved on a copy of the LP, which
        stays as it is.
        """
        highspy = self.highspy
        ip = highspy.Highs()
        ip.setOptionValue("output_flag", False)
        ip.passModel(self.h.getLp())
        n = ip.getNumCol()
        real = [j for j, c in enumerate(self.columns) if c is not None]
        artificial = np.array([j for j, c in enumerate(self.columns) if c is None], dtype=np.int32)
        ip.changeColsBounds(len(artificial), artificial, np.zeros(len(artificial)), np.zeros(len(artificial)))
        ip.changeColsIntegrality(n, np.arange(n, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * n))
        if time_limit is not None:
            ip.setOptionValue("time_limit", max(0.01, time_limit))
        if cutoff is not None:
            ip.setOptionValue("objective_bound", cutoff)
        ip.setOptionValue("mip_rel_gap", 1e-9)
        with c_stdout_silenced():
            ip.run()
        info = ip.getInfo()
        if info.primal_solution_status != 2:  # no feasible solution
            return None
        values = ip.getSolution().col_value
        chosen: list[Column] = []
        for j in real:
            column = self.columns[j]
            assert column is not None
            chosen.extend([column] * round(values[j]))
        return chosen


@dataclass(frozen=True)
class GenerationSettings:
    """How :func:`generate` runs (the kinds' settings dataclasses set these fields)."""

    smoothing: float = 0.5
    """Wentges's alpha at the start (0: no smoothing)."""
    exact_time_limit: float | None = None
    """Seconds for one exact pricing of one type (None: what is left of the deadline)."""
    tolerance: float = 1e-9
    """A column enters when its reduced cost is below -tolerance."""
    max_columns: int = 50_000
    """The generation stops (not converged) once the master holds this many columns (its memory)."""
    workers: int = 1
    """The exact pricings of a round run on this many threads at once (each type its own model; highspy
    releases the GIL while it solves)."""


def price_exactly(
    pricer: Pricer,
    used: Sequence[int],
    pi: np.ndarray,
    mu: np.ndarray,
    left: Callable[[], float | None],
    settings: GenerationSettings,
) -> Iterator[tuple[int, Pricing | None]]:
    """The exact pricings of one round, type by type in order (None for a type not in ``used``), each
    within ``settings.exact_time_limit`` and the time ``left()``; it stops at the first type with no
    time left. With ``settings.workers`` above 1 the pricings run on that many threads at once."""
    k = len(mu)

    def limit() -> float | None:
        remaining = left()
        if settings.exact_time_limit is None:
            return remaining
        return settings.exact_time_limit if remaining is None else min(remaining, settings.exact_time_limit)

    def has_time() -> bool:
        remaining = left()
        return remaining is None or remaining > 0

    if settings.workers <= 1 or len(used) <= 1:
        for t in range(k):
            if t not in used:
                yield t, None
                continue
            if not has_time():
                return
            yield t, pricer.exact(t, pi, float(mu[t]), limit())
        return
    if not has_time():
        return
    with ThreadPoolExecutor(max_workers=settings.workers) as pool:
        futures = {t: pool.submit(pricer.exact, t, pi, float(mu[t]), limit()) for t in used}
        for t in range(k):
            yield t, futures[t].result() if t in futures else None


def generate(
    master: Master,
    pricer: Pricer,
    deadline: float | None,
    settings: GenerationSettings = GenerationSettings(),
    upper: Sequence[int] | None = None,
    bound_by: float | None = None,
    on_bound: Callable[[float], None] | None = None,
    cutoff: float | None = None,
) -> Generation:
    """Column generation on ``master`` until the LP is proven optimal or ``deadline`` (perf_counter) passes.

    ``upper``: the most units of each item a new column may hold (default: the demands). ``bound_by``:
    a time (perf_counter) after which an exact round runs, for a bound, even while the heuristic
    pricing still finds columns, if none has run yet. ``on_bound``: called with every better
    Lagrangian bound (the kind reports it as a bound of the problem, :mod:`odrp.core.progress`).
    ``cutoff``: the generation also ends (not converged) once the Lagrangian bound reaches it (an
    incumbent's cost: nothing better lies under these rows).
    """
    upper = list(master.demands) if upper is None else list(upper)
    best_bound, center = -math.inf, None
    alpha = settings.smoothing
    iterations = exact_rounds = 0
    lp_value = math.inf
    stats: dict[str, Any] = {"heuristic_columns": 0, "exact_columns": 0, "exact_s": 0.0, "heuristic_s": 0.0}

    def left() -> float | None:
        return None if deadline is None else deadline - time.perf_counter()

    used = [t for t in range(master.k) if master.type_upper[t] > 0]  # a branch may allow no group of a type

    while True:
        remaining = left()
        if remaining is not None and remaining <= 0:
            return Generation(best_bound, lp_value, False, iterations, exact_rounds, stats)
        solved = master.solve_lp(remaining)
        if solved is None:
            return Generation(best_bound, lp_value, False, iterations, exact_rounds, stats)
        lp_value, pi_out, mu_out, values = solved
        iterations += 1
        if best_bound >= lp_value - settings.tolerance * max(1.0, abs(lp_value)):
            return Generation(best_bound, lp_value, True, iterations, exact_rounds, stats)
        smoothed = center is not None and alpha > 0.0
        if not smoothed:
            pi, mu = pi_out, mu_out
        else:
            pi, mu = alpha * center[0] + (1 - alpha) * pi_out, alpha * center[1] + (1 - alpha) * mu_out
        starts: dict[int, list[Counts]] = {}
        for j, column in enumerate(master.columns):
            if column is not None and values[j] > 1e-9:
                starts.setdefault(column.type, []).append(column.counts)

        def enter(t: int, counts: Counts, pi_out: np.ndarray = pi_out, mu_out: np.ndarray = mu_out) -> bool:
            if not any(counts):  # no group is empty (a pricing's optimum can be, at a branch's duals)
                return False
            column = Column(t, counts, pricer.cost(t, counts))
            if master.reduced_cost(column, pi_out, mu_out) < -settings.tolerance:
                return master.add(column)
            return False

        added = 0
        clock = time.perf_counter()
        for duals in ((pi, mu), (pi_out, mu_out)) if smoothed else ((pi, mu),):
            for t in used:
                for counts in pricer.heuristic(t, duals[0], float(duals[1][t]), upper, starts.get(t, [])):
                    added += enter(t, counts)
            if added:  # the LP's own duals only when the smoothed ones find nothing
                break
        stats["heuristic_s"] += time.perf_counter() - clock
        stats["heuristic_columns"] += added
        forced = bool(added) and bound_by is not None and exact_rounds == 0 and time.perf_counter() >= bound_by
        if added and not forced:
            if len(master.columns) >= settings.max_columns:
                return Generation(best_bound, lp_value, False, iterations, exact_rounds, stats)
            continue
        # exact pricing at the smoothed duals: columns and the Lagrangian bound (when the heuristic found
        # nothing, or, once, when no bound exists by ``bound_by``)
        exact_rounds += 1
        clock = time.perf_counter()
        heuristic_added = added
        least: list[float] = []
        proven = True  # every pricing of the round solved to optimality
        for t, priced in price_exactly(pricer, used, pi, mu, left, settings):
            if priced is None:  # no group of type t: its term of L is 0 whatever its reduced cost
                least.append(0.0)
                continue
            for counts in priced.columns:
                added += enter(t, counts)
            if priced.least_reduced_cost is None:
                break
            least.append(priced.least_reduced_cost)
            proven = proven and priced.proven
        stats["exact_s"] += time.perf_counter() - clock
        stats["exact_columns"] += added - heuristic_added
        if len(least) == master.k:
            bound = master.lagrangian_bound(pi, mu, least)
            if bound > best_bound:
                best_bound, center = bound, (pi, mu)
                if on_bound is not None:
                    on_bound(bound)
                if cutoff is not None and bound >= cutoff:
                    return Generation(best_bound, lp_value, False, iterations, exact_rounds, stats)
        if smoothed:  # every exact round moves the pricing closer to the LP's own duals
            alpha = max(0.0, alpha - 0.25)
        if forced:  # the heuristic's columns entered: go on generating
            continue
        if not added:
            if len(least) < master.k:  # out of time, or a pricing that proved nothing
                return Generation(best_bound, lp_value, False, iterations, exact_rounds, stats)
            if not smoothed:  # nothing prices out at the LP's own duals: the LP is optimal if proven so
                # (every pricing solved to optimality, or the bound at the LP's value: a pricing's margin of
                # 1e-9 of its duals' size can leave the bound a little below it where the duals are large)
                converged = proven or best_bound >= lp_value - 1e-7 * max(1.0, abs(lp_value))
                return Generation(best_bound, lp_value, converged, iterations, exact_rounds, stats)


@dataclass
class Branching:
    """What :func:`branch_on_types` established."""

    bound: float
    """A lower bound of every integer solution (of cost below the cutoff, when one was given)."""
    nodes: int
    """Nodes whose LP was generated."""
    closed: bool
    """True when no node is left open: ``bound`` is the least over the leaves (or the cutoff)."""


def branch_on_types(
    master: Master,
    pricer: Pricer,
    root: Generation,
    deadline: float | None,
    settings: GenerationSettings = GenerationSettings(),
    cutoff: float | None = None,
    on_bound: Callable[[float], None] | None = None,
    points: Mapping[Counts, float] | None = None,
    branch_pairs: bool = False,
    on_integral: Callable[[list[Column]], float | None] | None = None,
) -> Branching:
    """Branch and price on the number of groups of each type, best bound first, after a converged root,
    down to single count vectors, and with ``branch_pairs`` on pairs of items inside them.

    A node is a range [lower_t, upper_t] of S_t, the number of groups of type t. Its LP is the master with
    those rows, generated again from every column known (:func:`generate`, stopped once its bound reaches
    ``cutoff``): its Lagrangian bound holds for every integer solution in the node, and never falls below
    its parent's. Where the LP's S_t are fractional, the type whose S_t is the most fractional is split
    into S_t <= floor and S_t >= ceil; where they are all integral but the node is not a single vector,
    the free type with the most groups in the LP is split three ways, S_t below, at and above its value.
    A node that is one vector S has the set-partitioning bound with exactly S_t groups of each type, which
    the LP of a range (mixing vectors) does not reach. Without ``branch_pairs`` it is a leaf. With it, a
    node of one vector whose LP holds a pair of :meth:`Master.fractional_pair` is split on that pair,
    together and apart (the module docstring), the pricer and the master keeping to every decision of the
    node (:meth:`Pricer.restrict`, :meth:`Master.restrict`); one without such a pair is a leaf. Every
    integer solution lies in exactly one leaf, so the least bound over the open nodes and the leaves bounds
    them all; a node whose bound reaches ``cutoff`` (an incumbent's cost) holds nothing better and is dropped.

    ``on_integral``: called with the columns of every node's LP solution that is integral (a solution of
    the problem), and of the restricted integer program of every leaf whose LP is not (the columns that
    keep the node's decisions, :meth:`Master.restricted_ip`); it returns that solution's cost as the
    caller scores it (the new cutoff where lower), or None.

    ``points``: the vectors S that hold every solution the caller needs bounded, each with a lower bound
    of those solutions (latency: the multisets of supervisor classes that cover the demand and that no
    other of as many supervisors dominates, with the classes method's bound on that many supervisors).
    A node holding none of them is dropped before its LP is generated (a root holding none leaves nothing
    to bound: the bound is the cutoff, or infinity), and a node's bound is never below the least of its
    points'. On latency's 58-operator tuning seed 1001 the root LP is 11% below the
    optimum with S = (1, 2.30, 0); the child S_1 <= 2 holds no such multiset, and the leaf S = (1, 3, 0)
    lies 0.2% below the optimum.

    The master's rows and the decisions on pairs are restored to the root's afterwards; the columns
    generated stay.
    """
    if not root.converged:
        return Branching(root.bound, 0, False)
    lower, upper = list(master.type_lower), list(master.type_upper)
    done = math.inf if cutoff is None else cutoff
    tolerance = 1e-6
    child_settings = dataclasses.replace(settings, smoothing=0.0)  # a child starts from its parent's columns
    Node = tuple[float, int, tuple[int, ...], tuple[int, ...], np.ndarray | None, tuple[Pair, ...]]
    open_nodes: list[Node] = []
    leaves: list[float] = []
    solved = master.solve_lp(None if deadline is None else max(0.01, deadline - time.perf_counter()))
    if solved is None:
        return Branching(root.bound, 0, False)
    order = 0

    def least_inside(low: tuple[int, ...], high: tuple[int, ...]) -> float | None:
        """The least bound of the points in the range (-inf without points; None when it holds none)."""
        if points is None:
            return -math.inf
        inside = [b for s, b in points.items() if all(lo <= v <= hi for lo, v, hi in zip(low, s, high, strict=True))]
        return min(inside) if inside else None

    nodes = 0
    best = root.bound
    least = least_inside(tuple(lower), tuple(upper))
    if least is not None:
        open_nodes.append((max(root.bound, least), order, tuple(lower), tuple(upper), solved[3], ()))

    def global_bound() -> float:
        return min([done, *leaves, *(node[0] for node in open_nodes)])

    def push(bound: float, low: tuple[int, ...], high: tuple[int, ...], pairs: tuple[Pair, ...]) -> None:
        nonlocal order
        least = least_inside(low, high)
        if least is not None:
            heapq.heappush(open_nodes, (max(bound, least), order := order + 1, low, high, None, pairs))

    try:
        while open_nodes:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            parent_bound, _, low, high, values, pairs = heapq.heappop(open_nodes)
            if parent_bound >= done:
                continue
            if values is None:  # a child: generate its LP
                master.set_type_range(low, high)
                if branch_pairs:
                    master.restrict(pairs)
                    pricer.restrict(pairs)
                generation = generate(master, pricer, deadline, child_settings, cutoff=done)
                nodes += 1
                bound = max(parent_bound, generation.bound)
                if bound >= done:
                    continue
                resolved = master.solve_lp(None if deadline is None else max(0.01, deadline - time.perf_counter()))
                if not generation.converged or resolved is None:  # out of time: the node stays open
                    heapq.heappush(open_nodes, (bound, order := order + 1, low, high, None, pairs))
                    break
                values = resolved[3]
            else:
                bound = parent_bound
            if on_integral is not None and (chosen := master.integral(values)) is not None:
                cost = on_integral(chosen)
                if cost is not None and cost < done:
                    done = cost
            sums = master.type_sums(values)
            fraction = np.abs(sums - np.round(sums))
            t = int(fraction.argmax())
            free = [t for t in range(master.k) if low[t] < high[t]]
            if fraction[t] > tolerance:
                floor, ceil = math.floor(sums[t]), math.ceil(sums[t])
                push(bound, low, (*high[:t], floor, *high[t + 1 :]), pairs)
                push(bound, (*low[:t], ceil, *low[t + 1 :]), high, pairs)
            elif free:  # integral counts in a range of vectors: below, at and above the LP's
                t = max(free, key=lambda t: sums[t])
                v = round(sums[t])
                if v > low[t]:
                    push(bound, low, (*high[:t], v - 1, *high[t + 1 :]), pairs)
                push(bound, (*low[:t], v, *low[t + 1 :]), (*high[:t], v, *high[t + 1 :]), pairs)
                if v < high[t]:
                    push(bound, (*low[:t], v + 1, *low[t + 1 :]), high, pairs)
            elif branch_pairs and (pair := master.fractional_pair(values)) is not None:
                for together in (True, False):
                    push(bound, low, high, (*pairs, (*pair, together)))
            else:  # one vector: a leaf
                leaves.append(bound)
                if on_integral is not None and master.integral(values) is None:
                    # a fractional LP with no pair to split (items of several units): the node's columns
                    # as an integer program, for a solution
                    left = None if deadline is None else deadline - time.perf_counter()
                    chosen = master.restricted_ip(left, done) if left is None or left > 0.05 else None
                    cost = on_integral(chosen) if chosen else None
                    if cost is not None and cost < done:
                        done = cost
            now = global_bound()
            if now > best:
                best = now
                if on_bound is not None:
                    on_bound(best)
    finally:
        master.set_type_range(lower, upper)
        if branch_pairs:
            master.restrict(())
            pricer.restrict(())
    return Branching(max(best, global_bound()), nodes, closed=not open_nodes)


def dive(
    master: Master,
    pricer: Pricer,
    deadline: float | None,
    rng: random.Random | None = None,
    rounds: int = 50,
    tolerance: float = 1e-9,
) -> list[Column] | None:
    """A primal heuristic: fix the column of largest value, generate columns (heuristic pricing only)
    for what is left, repeat until every demand is met; None when the dive ends in a dead end. With
    ``rng`` the column fixed is drawn among the three of largest value, in proportion to their values.

    The master's rows are restored afterwards; the columns generated stay (they serve the restricted IP).
    """
    demands, counts = list(master.demands), list(master.type_counts)
    fixed: list[Column] = []
    try:
        while any(demands):
            master.set_residual(demands, counts)
            values = None
            for _ in range(rounds):
                remaining = None if deadline is None else deadline - time.perf_counter()
                if remaining is not None and remaining <= 0:
                    return None
                solved = master.solve_lp(remaining)
                if solved is None:
                    return None
                _, pi, mu, values = solved
                starts: dict[int, list[Counts]] = {}
                for j, column in enumerate(master.columns):
                    if column is not None and values[j] > 1e-9:
                        starts.setdefault(column.type, []).append(column.counts)
                added = 0
                for t in range(master.k):
                    if not counts[t]:
                        continue
                    for found in pricer.heuristic(t, pi, float(mu[t]), demands, starts.get(t, [])):
                        column = Column(t, found, pricer.cost(t, found))
                        if master.reduced_cost(column, pi, mu) < -tolerance:
                            added += master.add(column)
                if not added:
                    break
            assert values is not None
            candidates = [
                (values[j], -j)
                for j, column in enumerate(master.columns)
                if column is not None
                and values[j] > 1e-6
                and counts[column.type] > 0
                and all(a <= b for a, b in zip(column.counts, demands, strict=True))
            ]
            if not candidates:
                return None
            candidates.sort(reverse=True)
            if rng is None:
                pick = candidates[0]
            else:
                top = candidates[:3]
                pick = rng.choices(top, weights=[value for value, _ in top])[0]
            chosen = master.columns[-pick[1]]
            assert chosen is not None
            fixed.append(chosen)
            counts[chosen.type] -= 1
            demands = [b - a for a, b in zip(chosen.counts, demands, strict=True)]
        return fixed
    finally:
        master.set_residual(master.demands, master.type_counts)
