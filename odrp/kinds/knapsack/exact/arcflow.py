"""Arc-flow model of the multiple knapsack problem, with Lagrangian reductions (Dell'Amico et al. 2019).

The multiple knapsack problem (MKP) in the notation of :mod:`odrp.kinds.knapsack.family`: classes c
of q_c identical items of profit p_c and integer weight w_c, knapsacks k of integer capacity c_k,
each copy in at most one knapsack, maximise the profit packed. Dell'Amico, Delorme, Iori and
Martello ("Mathematical models and decomposition methods for the multiple knapsack problem", EJOR
274 (2019) 886-899) solve it with a pseudo-polynomial *arc-flow* model: a knapsack's content is a
path in a graph of partial fillings, and m units of flow, one per knapsack, share the items.

**The graph** (our reading of the paper's AF model, with its "items in a fixed order" reduction made
strict; the labels (AF.1)-(AF.3) are ours). Classes are ordered by non-increasing weight, c = 0 ..
n-1. A node (i, u) says "the classes before i are decided and weigh u"; an arc (i, u) -> (i + 1,
u + t w_i) takes t in 0 .. q_i copies of class i (t = 0: the class is skipped). Only partial sums
reachable in that order, and not above the largest capacity, are nodes, so every path is exactly one
pattern (a multiset of at most q_c copies of each class), listed once. A path ends at (n, u); end
arcs lead to *terminals* T_u, loss arcs join consecutive terminals, and the knapsacks of capacity c
leave the graph at T_c. With x_a the number of knapsacks that use arc a (integer):

    max   sum_a p(a) x_a                              p(a) = t p_i for an arc taking t copies of i   (AF.1)
    s.t.  sum_{a into v} x_a - sum_{a out of v} x_a = b_v  for every node and terminal v            (AF.2)
             b_(0,0) = -m,  b_{T_c} = number of knapsacks of capacity c,  0 otherwise
          sum_{a takes class i} t(a) x_a <= q_i        (each copy in at most one knapsack)          (AF.3)
          x_a in {0, 1, 2, ...}

A path into T_c weighs at most c, so every integer flow decomposes into m feasible knapsack contents
and (AF.3) keeps the copies apart: the model is exact. Its LP relaxation is the configuration LP (one
convex combination of patterns per knapsack); the paper's graph on partial sums alone is smaller but
lets a path repeat an item, and its LP was too slow for HiGHS on the SMALL instances.

**Reductions.** The full graph has about n (max_k c_k) nodes (60 x 3 000 on the largest SMALL
instances, too many for HiGHS to finish the root LP). It is cut down by Lagrangian
(reduced-cost) fixing. For multipliers beta, gamma (any sign), lambda >= 0 and a valid bound N on the
number of copies packed, write p_c = beta_c + gamma_c + lambda + rho_c. For every feasible solution
with contents n_k (copies per class in knapsack k) and n = sum_k n_k:

    z = [beta.n - KS(beta, C)] + sum_k [gamma.n_k - KS(gamma, c_k)] + lambda [|n| - N]
        + [rho.n - sum_c q_c rho_c^+] + L                                                       (LR)
    L = KS(beta, C) + sum_k KS(gamma, c_k) + lambda N + sum_c q_c rho_c^+

with KS(v, c) the best bounded knapsack of values v and capacity c (dynamic programming, exact) and
C = sum_k c_k (the surrogate knapsack). Every bracket is <= 0, so L is an upper bound, and a solution
worth z >= theta has every bracket >= theta - L =: -Delta. Hence, for solutions worth at least theta:

- an arc survives only if some pattern through it, into some capacity c_k, has gamma-value at least
  KS(gamma, c_k) - Delta (best prefix to its tail + its value + best suffix from its head, both by
  dynamic programming over the class order);
- class c keeps only the totals t with a surrogate pattern (capacity C) of beta-value at least
  KS(beta, C) - Delta containing exactly t copies of c (row bounds on (AF.3));
- the rows beta.n >= KS(beta, C) - Delta, rho.n >= sum_c q_c rho_c^+ - Delta and
  |n| >= N - Delta / lambda join the model, with |n| <= N and the objective >= theta.

The multipliers are the duals of the LP that combines the surrogate knapsack with the configuration
LP, solved by column generation (patterns priced by the same dynamic programme): master
max sum_c p_c t_c, t_c <= sum of the surrogate patterns' copies (one surrogate pattern, convex
combination), t_c <= sum of the knapsacks' patterns' copies (one pattern per knapsack), sum_c t_c <=
N, 0 <= t_c <= q_c (Lalonde, Cote and Gendron 2022 use this combination in branch-and-price). N is
the rounded-down bound of the same LP for unit profits. L is recomputed from each iteration's duals by
(LR), so it is a valid bound even when the column generation is stopped early.

**The search** (:func:`solve`). The fields named below are those of
:class:`~odrp.kinds.knapsack.exact.settings.ArcFlowSettings`. An incumbent comes from the caller's
start and from the integer master over the generated patterns (HiGHS, ``master_share`` of the time
limit, at most ``master_seconds``); when it is below floor(L), a short refill (below; ``quick_refill_share``
of the time limit, at most ``quick_refill_seconds``) may lift it. Then thresholds theta = floor(L),
floor(L) - 1, floor(L) - g, floor(L) - g^2, ... (g = ``threshold_growth``) down to the incumbent + 1
(integral profits; a fractional profit makes theta = L then the incumbent). Each stage first tries
the packing step, then the graph:

- *The packing step* (:func:`packing_step`). The class bounds for theta often leave (nearly) no
  choice of items: with L at the optimum every class may be fixed in or out. :func:`candidate_sets`
  lists every multiset of copies a solution worth theta may pack: within the class bounds, worth at
  least theta, weighing at most C, and meeting the rows the stage model adds (surrogate and rho
  brackets, cardinality); the listing (depth first over the classes the bounds leave open) drops a
  partial set as soon as the open classes cannot, within the weight left, lift its profit, surrogate
  or rho value to the row's floor (suffix tables of exact bounded knapsacks over those classes, so
  only sets that cannot qualify are dropped). When there are at most ``set_limit`` (and listing them
  visits at most ``set_visits`` partial sets), they are tried best first, each by the exact bin
  completion of :mod:`.packing` (all copies of the set into the m knapsacks; gap budget from gamma).
  The argument: every solution worth >= theta packs one of the listed sets. So the first set that
  packs is the best solution worth >= theta, hence (no solution better than it is worth theta or
  more, or it would be in a better set) the optimum; and if no set packs, no solution is worth theta:
  the optimum is at most theta - 1 (integral profits; at most theta otherwise) and the next threshold
  follows, exactly as after an infeasible stage. Sets refuted once are skipped at later thresholds. A
  packing search stopped by its time (``packing_share`` of the time left) or too many sets leave the
  threshold to the graph.
- *The graph*: the graph reduced for theta, and HiGHS asked for the best flow worth at least theta.
  An optimal flow is the optimum of the instance (every solution worth theta or more is in the
  graph); an infeasible stage proves the optimum below theta and opens the next; an infeasible last
  stage proves the incumbent optimal. An intermediate stage runs only while its graph has at most
  ``stage_share`` of the last one's arcs (otherwise the last stage alone is cheaper). A graph of more
  than ``arc_limit`` arcs ends the search with the bound proven so far. The flow is decomposed into
  one path per knapsack.
- *The refill* (:func:`refill_step`, once): before the first graph stage with more than
  ``refill_arcs`` arcs (``refill_share`` of the time left, at most ``refill_seconds``), the
  ruin-and-recreate search of :mod:`.refill` looks for a better incumbent (a heuristic: it proves
  nothing). One that meets the bound proven so far (floor of it, integral profits) is optimal; a
  better one below it restarts the thresholds from that bound down to its value + 1 (the thresholds
  refuted before stay refuted), so the last stage's graph shrinks.

Time: the bound N may take its column generation until ``cardinality_share`` of the time limit, the
column generation of L runs until ``generation_share``, the stages take the rest; a stage stopped by
the limit leaves its incumbent and the bound min(the refuted thresholds' bound, max(its own bound,
theta - 1)); an incumbent that meets that bound is optimal.

On Dell'Amico et al.'s SMALL set (180 instances) the search proves every optimum within a 60 s limit;
docs/methods/knapsack.md has the measurements, the instances that tuned the limits and what was
tried and dropped.

Applies to a :class:`~odrp.kinds.knapsack.family.Family` with one hard dimension, profits and weights
the same in every knapsack, integer weights, no pair profit, no soft dimension, at most one knapsack
per copy, maximised (:func:`applies`): the ``mkp`` and ``kp`` kinds. Zero-weight classes of positive
profit are packed outright (knapsack 0); classes of non-positive profit or heavier than every
knapsack are left out.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from odrp.core.budget import Budget
from odrp.core.result import Status, relative_gap
from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.knapsack.exact import packing, refill
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings
from odrp.kinds.knapsack.family import Family

RefillSearch = Callable[..., tuple[np.ndarray, int]]
"""The signature of :func:`odrp.kinds.knapsack.exact.refill.search`."""
TOL = 1e-6
"""Slack on every comparison with a bound, a floor or a budget (in the direction that keeps more)."""


def applies(f: Family, settings: ArcFlowSettings | None = None) -> str | None:
    """Why the arc-flow model cannot solve ``f`` (None when it can)."""
    settings = settings or ArcFlowSettings()
    if f.sense != "max" or f.exactly_one:
        return "a maximisation with at most one knapsack per item"
    if f.n_pairs or f.soft or len(f.hard) != 1:
        return "one hard dimension, no pair profit, no soft dimension"
    w, p, cap = f.weight[f.hard[0]], f.profit, f.capacity[f.hard[0]]
    if not (np.all(w == w[:, :1]) and np.all(p == p[:, :1])):
        return "profits and weights the same in every knapsack"
    if not (np.all(np.isfinite(w)) and np.all(w == np.round(w)) and np.all(w >= 0) and np.all(np.isfinite(cap))):
        return "integer weights and finite capacities"
    if (f.n_classes + 1) * (max(0.0, float(cap.max())) + 1) > settings.table_limit:
        return f"(classes + 1) x (largest capacity + 1) at most {settings.table_limit}"
    return None


# ------------------------------------------------------------------------------ the instance


@dataclass(frozen=True)
class Mkp:
    """The classes the graph is built on, in graph order (non-increasing weight), and the knapsacks."""

    family_class: np.ndarray
    """The family's class index of each graph class."""
    profit: np.ndarray
    weight: np.ndarray
    count: np.ndarray
    capacity: np.ndarray
    """Integer capacity of every knapsack (family order)."""
    free: tuple[tuple[int, int], ...]
    """(family class, copies) packed outright into knapsack 0: zero weight, positive profit."""
    free_profit: float
    integral: bool
    """Every profit is an integer: a better solution is worth at least one more."""

    @property
    def n(self) -> int:
        return len(self.profit)

    @property
    def largest(self) -> int:
        return int(self.capacity.max()) if len(self.capacity) else 0

    @property
    def total(self) -> int:
        return int(self.capacity.sum())

    def types(self) -> list[tuple[int, list[int]]]:
        """(capacity, knapsacks of that capacity), capacities ascending."""
        out: dict[int, list[int]] = {}
        for k, c in enumerate(self.capacity.tolist()):
            out.setdefault(int(c), []).append(k)
        return sorted(out.items())


def mkp_of(f: Family) -> Mkp:
    d = f.hard[0]
    profit, weight = f.profit[:, 0], np.round(f.weight[d, :, 0]).astype(int)
    capacity = np.floor(f.capacity[d] + 1e-9).astype(int)
    largest = int(capacity.max()) if len(capacity) else -1
    free = tuple((c, int(f.count[c])) for c in range(f.n_classes) if weight[c] == 0 and profit[c] > 0 and largest >= 0)
    kept = [c for c in range(f.n_classes) if profit[c] > 0 and 0 < weight[c] <= largest]
    kept.sort(key=lambda c: (-weight[c], c))
    return Mkp(
        family_class=np.array(kept, dtype=int),
        profit=profit[kept].astype(float),
        weight=weight[kept],
        count=f.count[kept].astype(int),
        capacity=capacity,
        free=free,
        free_profit=float(sum(profit[c] * q for c, q in free)),
        integral=bool(np.all(profit == np.round(profit))),
    )


# ------------------------------------------------------------------------ dynamic programmes


def _copies(mkp: Mkp, c: int, capacity: int) -> range:
    return range(1, min(int(mkp.count[c]), capacity // int(mkp.weight[c])) + 1)


def best_patterns(mkp: Mkp, values: np.ndarray, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """best[u]: the most value of a pattern weighing at most u; take[c, u]: copies of c in it (for :func:`pattern`)."""
    best = np.zeros(capacity + 1)
    take = np.zeros((mkp.n, capacity + 1), dtype=np.int32)
    for c in range(mkp.n):
        if values[c] <= 0:
            continue
        new = best.copy()
        w = int(mkp.weight[c])
        for t in _copies(mkp, c, capacity):
            candidate = best[: capacity + 1 - t * w] + t * values[c]
            better = candidate > new[t * w :] + 1e-12
            new[t * w :][better] = candidate[better]
            take[c, t * w :][better] = t
        best = new
    return best, take


def pattern(mkp: Mkp, take: np.ndarray, u: int) -> np.ndarray:
    """The copies per class of the pattern :func:`best_patterns` found for room u."""
    out = np.zeros(mkp.n, dtype=int)
    for c in range(mkp.n - 1, -1, -1):
        out[c] = take[c, u]
        u -= out[c] * int(mkp.weight[c])
    return out


def prefix_suffix(mkp: Mkp, values: np.ndarray, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """P[i, u]: the most value of copies of classes < i weighing exactly u (-inf: none);
    S[i, r]: the most value of copies of classes >= i weighing at most r."""
    n = mkp.n
    prefix = np.full((n + 1, capacity + 1), -np.inf)
    prefix[0, 0] = 0.0
    suffix = np.zeros((n + 1, capacity + 1))
    for c in range(n):
        prefix[c + 1] = prefix[c]
        w = int(mkp.weight[c])
        for t in _copies(mkp, c, capacity):
            np.maximum(
                prefix[c + 1, t * w :], prefix[c, : capacity + 1 - t * w] + t * values[c], out=prefix[c + 1, t * w :]
            )
    for c in range(n - 1, -1, -1):
        suffix[c] = suffix[c + 1]
        w = int(mkp.weight[c])
        for t in _copies(mkp, c, capacity):
            np.maximum(
                suffix[c, t * w :], suffix[c + 1, : capacity + 1 - t * w] + t * values[c], out=suffix[c, t * w :]
            )
    return prefix, suffix


# ---------------------------------------------------------------------- the Lagrangian bound


@dataclass
class Bound:
    """The bound (LR) of one set of multipliers and its parts."""

    value: float
    beta: np.ndarray | None
    """None: no surrogate part (the surrogate table would be too large)."""
    gamma: np.ndarray
    lam: float
    cardinality: int
    surrogate: float
    """KS(beta, C)."""
    per_type: dict[int, float]
    """KS(gamma, c) for every capacity c."""
    rho: np.ndarray


def lagrangian_bound(mkp: Mkp, beta: np.ndarray | None, gamma: np.ndarray, lam: float, cardinality: int) -> Bound:
    """(LR) for these multipliers: a valid upper bound whatever their values (lambda >= 0)."""
    surrogate = best_patterns(mkp, beta, mkp.total)[0][-1] if beta is not None else 0.0
    best, _ = best_patterns(mkp, gamma, mkp.largest)
    return _bound(mkp, beta, gamma, lam, cardinality, float(surrogate), best)


def _bound(
    mkp: Mkp,
    beta: np.ndarray | None,
    gamma: np.ndarray,
    lam: float,
    cardinality: int,
    surrogate: float,
    best: np.ndarray,
) -> Bound:
    """(LR) from the knapsack values already computed: KS(beta, C) and best[c] = KS(gamma, c)."""
    lam = max(0.0, lam)
    per_type = {c: float(best[c]) for c, _ in mkp.types()}
    rho = mkp.profit - (beta if beta is not None else 0.0) - gamma - lam
    value = (
        surrogate
        + sum(len(ks) * per_type[c] for c, ks in mkp.types())
        + lam * cardinality
        + float(mkp.count @ np.maximum(rho, 0.0))
        + mkp.free_profit
    )
    return Bound(float(value), beta, gamma, lam, cardinality, surrogate, per_type, rho)


# ------------------------------------------------------------------------ column generation


@dataclass
class Generation:
    """What the column generation leaves: the best bound, the patterns it priced, its effort."""

    bound: Bound
    patterns: list[np.ndarray] = field(default_factory=list)
    iterations: int = 0
    converged: bool = False


def column_generation(
    mkp: Mkp, profit: np.ndarray, cardinality: int, deadline: float, settings: ArcFlowSettings | None = None
) -> Generation:
    """The combined surrogate + configuration LP (module docstring) by column generation, with highspy
    (at most ``settings.generation_iterations`` iterations; the surrogate part within ``settings.table_limit``)."""
    settings = settings or ArcFlowSettings()
    import highspy

    n, types = mkp.n, mkp.types()
    surrogate = n * (mkp.total + 1) <= settings.table_limit
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    inf = highspy.kHighsInf
    none_i, none_f = np.zeros(0, dtype=np.int32), np.zeros(0)
    # rows: [convexity of the surrogate] [beta: n] [one per capacity] [gamma: n] [cardinality]
    first = 1 if surrogate else 0
    beta_row, type_row = first, first + (n if surrogate else 0)
    gamma_row = type_row + len(types)
    card_row = gamma_row + n
    if surrogate:
        h.addRow(1, 1, 0, none_i, none_f)
        for _ in range(n):
            h.addRow(-inf, 0, 0, none_i, none_f)
    for _, ks in types:
        h.addRow(-inf, len(ks), 0, none_i, none_f)
    for _ in range(n):
        h.addRow(-inf, 0, 0, none_i, none_f)
    h.addRow(-inf, cardinality, 0, none_i, none_f)
    for c in range(n):
        rows = ([beta_row + c] if surrogate else []) + [gamma_row + c, card_row]
        h.addCol(
            float(profit[c]), 0, float(mkp.count[c]), len(rows), np.array(rows, dtype=np.int32), np.ones(len(rows))
        )
    if surrogate:
        h.addCol(0.0, 0, inf, 1, np.array([0], dtype=np.int32), np.ones(1))  # the empty surrogate pattern
    scoring = dataclasses.replace(mkp, profit=np.asarray(profit, dtype=float), free_profit=0.0)
    result = Generation(lagrangian_bound(scoring, np.zeros(n) if surrogate else None, np.zeros(n), 0.0, cardinality))
    integral = bool(np.all(scoring.profit == np.round(scoring.profit)))

    def price(beta: np.ndarray | None, gamma: np.ndarray, lam: float):
        """The bound (LR) at these multipliers and the best surrogate and per-capacity patterns under them."""
        sur = best_patterns(scoring, beta, mkp.total) if beta is not None else None
        best, take = best_patterns(scoring, gamma, mkp.largest)
        bound = _bound(scoring, beta, gamma, lam, cardinality, float(sur[0][-1]) if sur else 0.0, best)
        if bound.value < result.bound.value:
            result.bound = bound
        columns = [(0, pattern(scoring, sur[1], mkp.total))] if sur else []
        columns += [(1 + r, pattern(scoring, take, c)) for r, (c, _) in enumerate(types)]
        return columns

    def add(columns, dual: np.ndarray) -> int:
        """Add the columns of positive reduced cost under the restricted master's duals."""
        added = 0
        for which, s in columns:
            if which == 0:
                rows, reduced = [0, *(beta_row + np.flatnonzero(s))], dual[beta_row : beta_row + n] @ s - dual[0]
            else:
                r = which - 1
                rows, reduced = [type_row + r, *(gamma_row + np.flatnonzero(s))], dual[gamma_row:card_row] @ s
                reduced -= dual[type_row + r]
            if reduced > TOL:
                h.addCol(0.0, 0, inf, len(rows), np.array(rows, dtype=np.int32), np.r_[1.0, -s[s > 0]])
                if which:
                    result.patterns.append(s)
                added += 1
        return added

    for iteration in range(1, settings.generation_iterations + 1):
        result.iterations = iteration
        h.run()
        restricted = h.getInfo().objective_function_value  # <= the LP optimum <= any bound (LR)
        dual = np.asarray(h.getSolution().row_dual)
        beta = dual[beta_row : beta_row + n] if surrogate else None
        gamma, lam = dual[gamma_row:card_row], float(dual[card_row])
        center = result.bound
        if iteration > 1:  # Wentges smoothing: price halfway between the best multipliers so far and the duals
            added = add(
                price(
                    None if beta is None else (beta + center.beta) / 2,
                    (gamma + center.gamma) / 2,
                    (lam + center.lam) / 2,
                ),
                dual,
            )
        else:
            added = 0
        if not added:  # no column at the smoothed point (or the first round): price at the duals themselves
            added = add(price(beta, gamma, lam), dual)
        if integral and math.floor(result.bound.value + TOL) <= math.floor(restricted + TOL):
            result.converged = True  # the rounded-down bound cannot fall further
            break
        if not added:
            result.converged = True
            break
        if time.perf_counter() > deadline:
            break
    return result


def cardinality_bound(mkp: Mkp, deadline: float, settings: ArcFlowSettings | None = None) -> int:
    """N: the most copies any feasible solution packs (rounded-down bound of the combined LP for unit profits)."""
    settings = settings or ArcFlowSettings()
    copies = int(mkp.count.sum())
    if copies == 0:
        return 0
    generation = column_generation(mkp, np.ones(mkp.n), copies, deadline, settings)
    return min(copies, math.floor(generation.bound.value + TOL))


# --------------------------------------------------------------------- the integer master


def restricted_master(
    mkp: Mkp, patterns: list[np.ndarray], time_limit: float, threads: int | None = None
) -> np.ndarray | None:
    """The best choice of one generated pattern per knapsack (HiGHS): (graph classes x knapsacks) copies."""
    import highspy

    types = mkp.types()
    unique = {tuple(s.tolist()) for s in patterns if s.any()}
    columns = [(r, np.array(s)) for s in unique for r, (c, _) in enumerate(types) if int(np.dot(s, mkp.weight)) <= c]
    if not columns:
        return None
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    inf = highspy.kHighsInf
    none_i, none_f = np.zeros(0, dtype=np.int32), np.zeros(0)
    for _, ks in types:
        h.addRow(-inf, len(ks), 0, none_i, none_f)
    for c in range(mkp.n):
        h.addRow(-inf, float(mkp.count[c]), 0, none_i, none_f)
    for r, s in columns:
        rows = np.r_[r, len(types) + np.flatnonzero(s)].astype(np.int32)
        h.addCol(float(mkp.profit @ s), 0, len(types[r][1]), len(rows), rows, np.r_[1.0, s[s > 0]].astype(float))
    h.changeColsIntegrality(
        len(columns), np.arange(len(columns), dtype=np.int32), np.full(len(columns), highspy.HighsVarType.kInteger)
    )
    run = run_highspy(h, "max", max(0.0, time_limit), threads=threads)
    if not run.has_solution:
        return None
    values = np.round(h.getSolution().col_value).astype(int)
    counts = np.zeros((mkp.n, len(mkp.capacity)), dtype=int)
    free = {r: iter(ks) for r, (_, ks) in enumerate(types)}
    for (r, s), y in zip(columns, values, strict=True):
        for _ in range(y):
            counts[:, next(free[r])] = s
    return counts


# --------------------------------------------------------------------------- the graph


@dataclass
class Graph:
    """The reduced arc-flow graph of one stage: arcs as parallel arrays; node ids 0.. (node (0, 0) is 0)."""

    tail: np.ndarray
    head: np.ndarray
    cls: np.ndarray
    """The graph class an arc takes copies of (-1: skip, end and loss arcs)."""
    copies: np.ndarray
    upper: np.ndarray
    n_nodes: int
    sinks: dict[int, int]
    """Terminal node id -> knapsacks of that capacity."""
    terminal_weight: dict[int, int]
    """Terminal node id -> the weight u of T_u."""
    class_bounds: np.ndarray
    """(n, 2): the least and most copies of each class in a solution worth theta or more."""

    @property
    def n_arcs(self) -> int:
        return len(self.tail)


def class_bounds(mkp: Mkp, bound: Bound, delta: float) -> np.ndarray:
    """Copies of each class any solution worth >= L - delta may pack, by the surrogate and rho brackets of (LR)."""
    out = np.stack([np.zeros(mkp.n, dtype=int), mkp.count.copy()], axis=1)
    with np.errstate(divide="ignore"):
        spare = np.floor((delta + TOL) / np.abs(bound.rho))  # copies the rho bracket can afford to get wrong
    spare = np.where(np.isfinite(spare), np.minimum(spare, mkp.count), mkp.count).astype(int)
    out[:, 1] = np.where(bound.rho < 0, spare, out[:, 1])  # each copy packed costs |rho|
    out[:, 0] = np.where(bound.rho > 0, mkp.count - spare, 0)  # each copy left out costs rho
    if bound.beta is None:
        return out
    prefix, suffix = prefix_suffix(mkp, bound.beta, mkp.total)
    need = bound.surrogate - delta - TOL
    for c in range(mkp.n):
        w = int(mkp.weight[c])
        allowed = []
        for t in range(0, int(mkp.count[c]) + 1):
            if t * w > mkp.total:
                break
            room = mkp.total - t * w
            best = np.max(prefix[c, : room + 1] + t * bound.beta[c] + suffix[c + 1, room - np.arange(room + 1)])
            if best >= need:
                allowed.append(t)
        if not allowed:
            out[c] = (1, 0)  # no solution worth theta at all: an empty range
        else:
            out[c, 0], out[c, 1] = max(out[c, 0], min(allowed)), min(out[c, 1], max(allowed))
    return out


def build_graph(
    mkp: Mkp,
    bound: Bound,
    delta: float,
    allowed: np.ndarray | None = None,
    arc_limit: int = ArcFlowSettings.arc_limit,
) -> Graph | None:
    """The layered graph of the paths a solution worth >= L - delta may use (None: more than ``arc_limit``
    arcs). ``allowed``: :func:`class_bounds` for this delta when already computed."""
    types = mkp.types()
    prefix, suffix = prefix_suffix(mkp, bound.gamma, mkp.largest)
    bounds = class_bounds(mkp, bound, delta) if allowed is None else allowed
    nodes: dict[tuple[int, int], int] = {(0, 0): 0}
    tail: list[np.ndarray] = []
    head: list[np.ndarray] = []
    cls: list[np.ndarray] = []
    copies: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    layer = np.array([0])
    m = len(mkp.capacity)
    arcs = 0
    for i in range(mkp.n):
        w = int(mkp.weight[i])
        heads: set[int] = set()
        for t in range(0, int(bounds[i, 1]) + 1):
            v = layer + t * w
            ok = np.zeros(len(layer), dtype=bool)
            for c, _ in types:
                room = c - v
                fits = room >= 0
                value = prefix[i, layer] + t * bound.gamma[i] + suffix[i + 1, np.where(fits, room, 0)]
                ok |= fits & (value >= bound.per_type[c] - delta - TOL)
            if not ok.any():
                continue
            us, vs = layer[ok], v[ok]
            arcs += len(us)
            if arcs > arc_limit:
                return None
            heads.update(vs.tolist())
            tail.append(np.array([nodes[(i, u)] for u in us.tolist()]))
            for x in vs.tolist():
                nodes.setdefault((i + 1, x), len(nodes))
            head.append(np.array([nodes[(i + 1, x)] for x in vs.tolist()]))
            cls.append(np.full(len(us), i if t else -1))
            copies.append(np.full(len(us), t))
            upper.append(np.full(len(us), m if t == 0 else min(m, int(mkp.count[i]) // t)))
        layer = np.array(sorted(heads), dtype=int)
    ends = layer.tolist()
    capacities = [c for c, _ in types]
    weights = sorted(set(ends) | set(capacities))
    terminal = {u: len(nodes) + r for r, u in enumerate(weights)}
    n_nodes = len(nodes) + len(weights)
    end_tail = [nodes[(mkp.n, u)] for u in ends] + [terminal[a] for a in weights[:-1]]
    end_head = [terminal[u] for u in ends] + [terminal[b] for b in weights[1:]]
    tail.append(np.array(end_tail, dtype=int))
    head.append(np.array(end_head, dtype=int))
    cls.append(np.full(len(end_tail), -1))
    copies.append(np.zeros(len(end_tail), dtype=int))
    upper.append(np.full(len(end_tail), m))
    return Graph(
        tail=np.concatenate(tail).astype(np.int32),
        head=np.concatenate(head).astype(np.int32),
        cls=np.concatenate(cls).astype(int),
        copies=np.concatenate(copies).astype(int),
        upper=np.concatenate(upper).astype(float),
        n_nodes=n_nodes,
        sinks={terminal[c]: len(ks) for c, ks in types},
        terminal_weight={v: u for u, v in terminal.items()},
        class_bounds=bounds,
    )


# ------------------------------------------------------------------------------ one stage


def solve_stage(
    mkp: Mkp,
    graph: Graph,
    bound: Bound,
    theta: float,
    delta: float,
    time_limit: float | None,
    mip_gap: float,
    threads: int | None = None,
) -> tuple[SolverRun, np.ndarray | None]:
    """The best flow worth at least theta in ``graph`` (HiGHS), as copies per (graph class, knapsack)."""
    import highspy

    n, m = mkp.n, len(mkp.capacity)
    taking = graph.cls >= 0
    profit = np.where(taking, mkp.profit[np.maximum(graph.cls, 0)] * graph.copies, 0.0)
    # rows: flow balance per node (AF.2), copies per class (AF.3), cardinality, objective, surrogate, rho
    balance = np.zeros(graph.n_nodes)
    balance[0] = -m
    for v, k in graph.sinks.items():
        balance[v] += k
    extra = n + 4
    lower = np.r_[balance, graph.class_bounds[:, 0], 0.0, theta - mkp.free_profit, -np.inf, -np.inf]
    upper = np.r_[balance, graph.class_bounds[:, 1], bound.cardinality, np.inf, np.inf, np.inf]
    card, objective, surrogate, rho = (
        graph.n_nodes + n,
        graph.n_nodes + n + 1,
        graph.n_nodes + n + 2,
        graph.n_nodes + n + 3,
    )
    if bound.lam > TOL:
        lower[card] = math.ceil(bound.cardinality - delta / bound.lam - TOL)
    if bound.beta is not None:
        lower[surrogate] = bound.surrogate - delta - TOL
    lower[rho] = float(mkp.count @ np.maximum(bound.rho, 0.0)) - delta - TOL
    rows: list[np.ndarray] = [graph.head, graph.tail]
    values: list[np.ndarray] = [np.ones(graph.n_arcs), -np.ones(graph.n_arcs)]
    columns: list[np.ndarray] = [np.arange(graph.n_arcs), np.arange(graph.n_arcs)]
    arcs = np.flatnonzero(taking)
    c, t = graph.cls[arcs], graph.copies[arcs].astype(float)
    for row, coef in (
        (graph.n_nodes + c, t),
        (np.full(len(arcs), card), t),
        (np.full(len(arcs), objective), profit[arcs]),
        (np.full(len(arcs), surrogate), t * (bound.beta[c] if bound.beta is not None else 0.0)),
        (np.full(len(arcs), rho), t * bound.rho[c]),
    ):
        rows.append(row)
        values.append(coef)
        columns.append(arcs)
    col, row, val = np.concatenate(columns), np.concatenate(rows), np.concatenate(values)
    nonzero = val != 0
    col, row, val = col[nonzero], row[nonzero], val[nonzero]
    order = np.lexsort((row, col))
    col, row, val = col[order], row[order], val[order]
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = graph.n_arcs, graph.n_nodes + extra
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = profit, np.zeros(graph.n_arcs), graph.upper
    inf = highspy.kHighsInf
    lp.row_lower_ = np.where(np.isfinite(lower), lower, -inf)
    lp.row_upper_ = np.where(np.isfinite(upper), upper, inf)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.offset_ = mkp.free_profit
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.searchsorted(col, np.arange(graph.n_arcs + 1)).astype(np.int32)
    lp.a_matrix_.index_ = row.astype(np.int32)
    lp.a_matrix_.value_ = val.astype(float)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * graph.n_arcs
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    run = run_highspy(h, "max", time_limit, mip_gap, threads=threads)
    if not run.has_solution:
        return run, None
    flow = np.round(np.asarray(h.getSolution().col_value)).astype(int)
    return run, decompose(mkp, graph, flow)


def decompose(mkp: Mkp, graph: Graph, flow: np.ndarray) -> np.ndarray:
    """One path per knapsack from (0, 0) to the terminal of its capacity: copies per (graph class, knapsack)."""
    out_arcs: dict[int, list[int]] = {}
    for a in np.flatnonzero(flow > 0):
        out_arcs.setdefault(int(graph.tail[a]), []).append(int(a))
    left = flow.copy()
    demand = dict(graph.sinks)
    knapsacks = {c: iter(ks) for c, ks in mkp.types()}
    counts = np.zeros((mkp.n, len(mkp.capacity)), dtype=int)
    for _ in range(len(mkp.capacity)):
        v, path = 0, np.zeros(mkp.n, dtype=int)
        while demand.get(v, 0) == 0:
            a = next(a for a in out_arcs[v] if left[a] > 0)
            left[a] -= 1
            if graph.cls[a] >= 0:
                path[graph.cls[a]] += graph.copies[a]
            v = int(graph.head[a])
        demand[v] -= 1
        counts[:, next(knapsacks[graph.terminal_weight[v]])] = path
    return counts


# ----------------------------------------------------------------------------- the packing step


def candidate_sets(
    mkp: Mkp,
    bound: Bound,
    allowed: np.ndarray,
    theta: float,
    delta: float,
    settings: ArcFlowSettings | None = None,
) -> list[np.ndarray] | None:
    """Every multiset of copies (copies per graph class) a solution worth >= theta may pack, best first.

    The copies of class c lie in ``allowed[c]`` (:func:`class_bounds`); the set is worth at least
    theta - free profit, weighs at most sum_k c_k, and meets the rows the stage model adds (the
    surrogate and rho brackets of (LR) at least -delta, the cardinality between N - delta / lambda and
    N). None when there are more than ``settings.set_limit`` such sets (or listing them visits more
    than ``settings.set_visits`` partial sets). Partial sets are pruned with suffix tables of at most
    ``settings.suffix_table_limit`` numbers per value row (one column, no weight limit, above it).
    """
    settings = settings or ArcFlowSettings()
    limit = settings.set_limit
    lo, hi = allowed[:, 0], allowed[:, 1]
    if np.any(lo > hi):
        return []
    free = [c for c in range(mkp.n) if hi[c] > lo[c]]
    need = theta - mkp.free_profit - float(mkp.profit @ lo) - TOL  # profit the free classes must add
    room = mkp.total - int(mkp.weight @ lo)
    if room < 0:
        return []
    # the profit floor and the value rows the stage model adds, as "the free classes must add at least ..."
    rows: list[tuple[np.ndarray, float]] = [(mkp.profit, need)]
    if bound.beta is not None:
        rows.append((bound.beta, bound.surrogate - delta - TOL - float(bound.beta @ lo)))
    rows.append((bound.rho, float(mkp.count @ np.maximum(bound.rho, 0.0)) - delta - TOL - float(bound.rho @ lo)))
    width = room + 1 if (len(free) + 1) * (room + 1) <= settings.suffix_table_limit else 1
    reach = [_suffix_tables(mkp, values, free, hi - lo, width) for values, _ in rows]
    found: list[np.ndarray] = []
    extra = np.zeros(mkp.n, dtype=int)
    visits = [0]

    def enumerate_from(i: int, values: tuple[float, ...], weight: int) -> bool:
        """Extend ``extra`` over free classes i..; False once more than ``limit`` sets are found (or the
        enumeration has visited ``set_visits`` partial sets). A partial set is dropped when the free
        classes from i on, within the weight left, cannot lift one of its values to its row's floor."""
        visits[0] += 1
        if visits[0] > settings.set_visits:
            return False
        if weight > room:
            return True
        left = min(room - weight, width - 1)
        if any(v + table[i, left] < floor for v, table, (_, floor) in zip(values, reach, rows, strict=True)):
            return True
        if i == len(free):
            found.append(lo + extra)
            return len(found) <= limit
        c = free[i]
        for t in range(int(hi[c] - lo[c]) + 1):
            extra[c] = t
            added = tuple(v + t * float(r[c]) for v, (r, _) in zip(values, rows, strict=True))
            if not enumerate_from(i + 1, added, weight + t * int(mkp.weight[c])):
                return False
        extra[c] = 0
        return True

    if not enumerate_from(0, tuple(0.0 for _ in rows), 0):
        return None

    def admissible(n: np.ndarray) -> bool:
        copies = int(n.sum())
        if copies > bound.cardinality or (bound.lam > TOL and copies < bound.cardinality - delta / bound.lam - TOL):
            return False
        if bound.beta is not None and float(bound.beta @ n) < bound.surrogate - delta - TOL:
            return False
        return float(bound.rho @ n) >= float(mkp.count @ np.maximum(bound.rho, 0.0)) - delta - TOL

    sets = [n for n in found if admissible(n)]
    sets.sort(key=lambda n: -float(mkp.profit @ n))
    return sets


def _suffix_tables(mkp: Mkp, values: np.ndarray, free: list[int], copies: np.ndarray, width: int) -> np.ndarray:
    """table[i, u]: the most ``values`` the free classes free[i:] (at most ``copies`` of each) add within
    weight u, u < width (a bounded knapsack, dynamic programming; negative values are never taken).
    width 1: one column, the sum of every positive value (no weight limit; for rooms too large to tabulate)."""
    table = np.zeros((len(free) + 1, width))
    for i in range(len(free) - 1, -1, -1):
        c = free[i]
        row = table[i + 1].copy()
        w, v = int(mkp.weight[c]), float(values[c])
        if v > 0 and width == 1:
            row += int(copies[c]) * v
        elif v > 0:
            for _ in range(min(int(copies[c]), (width - 1) // w)):
                np.maximum(row[w:], row[: width - w] + v, out=row[w:])
        table[i] = row
    return table


@dataclass
class PackingStep:
    """What the packing step decided at one threshold: a packing (the optimum) or that none is worth theta."""

    counts: np.ndarray | None
    """Copies per (graph class, knapsack) of the best packing worth >= theta; None: none exists."""
    sets: int
    """Candidate sets tried."""
    nodes: int


def packing_step(
    mkp: Mkp,
    bound: Bound,
    allowed: np.ndarray,
    theta: float,
    delta: float,
    time_limit: float | None,
    refuted: set[tuple[int, ...]],
    settings: ArcFlowSettings | None = None,
) -> PackingStep | None:
    """Decide threshold theta by packing each candidate set (:func:`candidate_sets`), best first.

    The first set that packs is the best solution worth >= theta (every better set was shown not to
    pack). When no set packs, no solution is worth theta. None: too many sets, or a packing search
    stopped undecided by ``time_limit``. ``refuted``: the sets shown not to pack at earlier
    thresholds (skipped; the sets refuted here are added).
    """
    settings = settings or ArcFlowSettings()
    sets = candidate_sets(mkp, bound, allowed, theta, delta, settings)
    if sets is None:
        return None
    deadline = math.inf if time_limit is None else time.perf_counter() + time_limit
    nodes = 0
    for tried, n in enumerate(sets, start=1):
        if tuple(n.tolist()) in refuted:
            continue
        left = None if time_limit is None else max(0.0, deadline - time.perf_counter())
        result = packing.pack(mkp.weight, n, mkp.capacity, bound.gamma, left)
        nodes += result.nodes
        if result.status == "unknown":
            return None
        if result.status == "packed":
            return PackingStep(result.counts, tried, nodes)
        refuted.add(tuple(n.tolist()))
    return PackingStep(None, len(sets), nodes)


# ---------------------------------------------------------------------------- the search


def refill_step(
    f: Family,
    mkp: Mkp,
    best: np.ndarray,
    upper: float,
    seconds: float,
    stats: dict[str, Any],
    to_family: Callable[[np.ndarray], np.ndarray],
    noise: float,
    key: str = "refill",
    search: RefillSearch = refill.search,
) -> np.ndarray:
    """The ruin-and-recreate search of :mod:`.refill` (or ``search``, which takes its arguments) from the
    incumbent ``best`` (family counts), aiming at the proven bound ``upper``, for at most ``seconds``;
    returns the better of the two (family counts)."""
    started = time.perf_counter()
    target = (math.floor(upper + TOL) if mkp.integral else upper) - mkp.free_profit
    counts, moves = search(
        mkp.profit, mkp.weight, mkp.count, mkp.capacity, best[mkp.family_class], target, started + seconds, noise
    )
    found = to_family(counts)
    stats[key] = {"moves": moves, "value": f.objective(found), "s": time.perf_counter() - started}
    if f.objective(found) > f.objective(best):
        stats["incumbent_from"] = "refill search"
        return found
    return best


def thresholds(top: float, final: float, integral: bool, growth: int = ArcFlowSettings.threshold_growth) -> list[float]:
    """top, top - 1, top - g, top - g^2, ... (g = ``growth``) and last ``final`` (the incumbent + 1, or the
    incumbent)."""
    if not integral:
        return [top, final] if top > final else [final]
    out, step = [top], 1
    while top - step > final:
        out.append(top - step)
        step *= growth
    if out[-1] > final:
        out.append(final)
    return out


def solve(
    f: Family,
    time_limit: float | None = None,
    mip_gap: float = 1e-6,
    incumbent: np.ndarray | None = None,
    settings: ArcFlowSettings | None = None,
    refill_search: RefillSearch = refill.search,
    threads: int | None = None,
) -> tuple[SolverRun, np.ndarray | None, dict[str, Any]]:
    """Solve a multiple knapsack exactly (module docstring); returns the run, family counts and statistics.

    ``incumbent``: family counts of a known feasible solution (a warm or search start).
    ``threads``: HiGHS's thread count in the integer master and the stages' MIPs (None: HiGHS's default).
    ``refill_search``: the refill heuristic (:func:`odrp.kinds.knapsack.exact.refill.search` or one
    with its arguments and answer); whatever it returns only ever serves as an incumbent.
    """
    settings = settings or ArcFlowSettings()
    clock = Budget(time_limit)
    start, left = clock.started, clock.left
    mkp = mkp_of(f)
    stats: dict[str, Any] = {"formulation": "arcflow", "graph_classes": mkp.n}

    def to_family(counts: np.ndarray) -> np.ndarray:
        out = np.zeros((f.n_classes, f.n_knapsacks), dtype=int)
        out[mkp.family_class] = counts
        for c, q in mkp.free:
            out[c, 0] += q
        return out

    best = to_family(np.zeros((mkp.n, f.n_knapsacks), dtype=int))  # the empty packing is feasible
    if incumbent is not None and f.objective(incumbent) > f.objective(best):
        best, stats["incumbent_from"] = incumbent, "start"
    if mkp.n == 0:  # nothing to place: the zero-weight classes are the optimum
        value = f.objective(best)
        return (
            SolverRun(solver_version("highs"), "optimal", value, value, 0.0, time.perf_counter() - start),
            best,
            stats,
        )

    def until(share: float) -> float:
        """The ``time.perf_counter()`` value at ``share`` of the time limit (inf without one)."""
        return math.inf if time_limit is None else start + share * time_limit

    cardinality = cardinality_bound(mkp, until(settings.cardinality_share), settings)
    generation = column_generation(mkp, mkp.profit, cardinality, until(settings.generation_share), settings)
    bound = lagrangian_bound(
        mkp, generation.bound.beta, generation.bound.gamma, generation.bound.lam, cardinality
    )  # with the free profit
    stats.update(
        cardinality=cardinality,
        lagrangian_bound=bound.value,
        generation_iterations=generation.iterations,
        generation_converged=generation.converged,
        patterns_generated=len(generation.patterns),
        bound_s=time.perf_counter() - start,
    )
    if settings.master_seconds > 0:
        most = settings.master_seconds
        master_s = most if time_limit is None else min(most, settings.master_share * time_limit, left() or 0.0)
        master = restricted_master(mkp, generation.patterns, master_s, threads)
        if master is not None and f.objective(to_family(master)) > f.objective(best):
            best = to_family(master)
            stats["incumbent_from"] = "integer master"
    top = math.floor(bound.value + TOL) if mkp.integral else bound.value
    if settings.quick_refill_seconds > 0 and f.objective(best) < top - TOL:
        # a short refill: the master's incumbent may be far below the bound
        most = settings.quick_refill_seconds
        seconds = most if time_limit is None else min(most, settings.quick_refill_share * time_limit)
        best = refill_step(
            f, mkp, best, top, seconds, stats, to_family, settings.refill_noise, "quick_refill", refill_search
        )
    stats["incumbent"] = f.objective(best)
    value = f.objective(best)
    final = value + 1 if mkp.integral else value
    stats["stages"] = []
    status: Status = "optimal"
    upper = min(bound.value, top)
    message = ""
    schedule = thresholds(top, final, mkp.integral, settings.threshold_growth) if top >= final else []
    below = (lambda theta: theta - 1) if mkp.integral else (lambda theta: theta)  # the bound once theta is refuted
    refuted: set[tuple[int, ...]] = set()  # item sets the packing step has shown not to pack
    last: Graph | None = None
    last_built = False
    jump = False
    searched = False

    def refill_seconds() -> float:
        most = settings.refill_seconds
        return most if time_limit is None else min(most, settings.refill_share * (left() or 0.0))

    position = 0
    while position < len(schedule):
        theta = schedule[position]
        position += 1
        if left() == 0.0:
            status, message = "time_limit", f"time limit before the stage at threshold {theta:g}"
            break
        delta = bound.value - theta
        stage_start = time.perf_counter()
        allowed = class_bounds(mkp, bound, delta)
        share = None if time_limit is None else settings.packing_share * (left() or 0.0)
        step = (
            packing_step(mkp, bound, allowed, theta, delta, share, refuted, settings) if settings.packing_step else None
        )
        if step is not None:
            stats["stages"].append(
                {
                    "threshold": theta,
                    "packing_sets": step.sets,
                    "packing_nodes": step.nodes,
                    "status": "optimal" if step.counts is not None else "infeasible",
                    "s": time.perf_counter() - stage_start,
                }
            )
            if step.counts is None:
                upper = below(theta)
                continue
            best = to_family(step.counts)  # worth >= theta > the incumbent
            stats["incumbent_from"] = f"packing step threshold {theta:g}"
            upper = f.objective(best)
            break
        packing_s = time.perf_counter() - stage_start  # too many item sets, or their packing undecided
        if jump and theta != schedule[-1]:
            continue
        if not last_built:
            last_built = True
            last = (
                build_graph(mkp, bound, delta, allowed, settings.arc_limit)
                if theta == schedule[-1]
                else build_graph(mkp, bound, bound.value - schedule[-1], None, settings.arc_limit)
            )
        graph = last if theta == schedule[-1] else build_graph(mkp, bound, delta, allowed, settings.arc_limit)
        larger = graph is not None and last is not None and graph is not last
        if larger and graph.n_arcs > settings.stage_share * last.n_arcs:  # type: ignore[union-attr]
            jump = True  # nearly the last stage's graph: the last stage alone settles every threshold from here on
            continue
        large = graph is None or graph.n_arcs > settings.refill_arcs
        if not searched and settings.refill_seconds > 0 and large:  # a large graph: a better
            # incumbent may meet the bound outright or shrink the last stage's graph
            searched = True
            found = refill_step(
                f, mkp, best, upper, refill_seconds(), stats, to_family, settings.refill_noise, "refill", refill_search
            )
            if found is not best:
                best, value = found, f.objective(found)
                if value >= (math.floor(upper + TOL) if mkp.integral else upper - TOL):
                    upper = value
                    stats["stages"].append({"threshold": theta, "refill_met_bound": True})
                    break
                # the stages start again from the bound proven so far down to the better incumbent + 1
                final = value + 1 if mkp.integral else value
                again = math.floor(upper + TOL) if mkp.integral else upper
                schedule = thresholds(again, final, mkp.integral, settings.threshold_growth) if again >= final else []
                position = 0
                last, last_built, jump = None, False, False
                continue
        record: dict[str, Any] = {"threshold": theta, "packing_undecided_s": packing_s}
        stats["stages"].append(record)
        if graph is None:
            record["arcs"] = f"more than {settings.arc_limit}"
            status, message = ("time_limit" if time_limit is not None else "feasible"), "reduced graph too large"
            break
        run, counts = solve_stage(mkp, graph, bound, theta, delta, left(), mip_gap, threads)
        record.update(arcs=graph.n_arcs, nodes=graph.n_nodes, status=run.status, s=time.perf_counter() - stage_start)
        if counts is not None and f.objective(to_family(counts)) > f.objective(best):
            best = to_family(counts)
            stats["incumbent_from"] = f"stage threshold {theta:g}"
        if run.status == "optimal":
            upper = run.bound if run.bound is not None else f.objective(best)
            break
        if run.status == "infeasible":
            upper = below(theta)  # no solution worth theta: with integral profits, theta - 1
            continue
        # a time limit (or an error) in this stage: solutions worth theta or more are within the stage's
        # bound, and the thresholds refuted before still bound the rest
        status, message = ("time_limit", run.message) if run.status != "error" else ("error", run.message)
        upper = min(upper, max(run.bound if run.bound is not None else upper, below(theta)))
        break
    objective = f.objective(best)
    upper = max(min(upper, bound.value), objective)
    if status == "time_limit" and objective >= (math.floor(upper + TOL) if mkp.integral else upper - TOL):
        status, message = "optimal", ""  # the incumbent meets the bound the refuted thresholds left
        upper = objective
    run = SolverRun(
        solver=solver_version("highs"),
        status=status,
        objective=objective,
        bound=upper,
        gap=relative_gap(objective, upper, "max"),
        runtime_s=time.perf_counter() - start,
        message=message,
    )
    return run, best, stats
