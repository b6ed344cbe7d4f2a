"""The generalised assignment problem solved through the Lagrangian relaxation of its assignment rows.

GAP in maximisation form (a minimisation is maximised with negated values): agents i with capacity
c_i, items j, value p_ij and weight w_ij of item j at agent i,

    max sum_ij p_ij x_ij   s.t.   sum_i x_ij = 1 (every item once),   sum_j w_ij x_ij <= c_i,   x binary.

**Bound.** Relaxing the assignment rows with multipliers u_j (free, they are equalities) leaves one
0-1 knapsack per agent (Ross and Soland 1975; Fisher, Jaikumar and Van Wassenhove 1986):

    L(u) = sum_j u_j + sum_i KP_i(u),   KP_i(u) = max { sum_{j in S} (p_ij - u_j) : S fits agent i },

an upper bound on the optimum for *every* u (each solution's sets S_i are feasible in each
knapsack). Its minimum over u equals the LP optimum of the set-partitioning master over all sets
(Geoffrion 1974): :func:`multipliers` solves that master by column generation (Savelsbergh 1997), the
pricing of agent i being the knapsack KP_i(u) itself, solved by dynamic programming; the bound
reported is the least L(u) met on the way, valid whether or not the generation converged.

**Sets worth keeping.** For an assignment with sets S_1, .., S_m covering every item once,

    sum_ij p_ij x_ij = sum_j u_j + sum_i (p_i - u)(S_i) = L(u) - sum_i g_i(S_i),
    g_i(S) = KP_i(u) - (p_i - u)(S) >= 0,

so a solution worth at least theta has g_i(S_i) <= L(u) - theta for *every* agent i. With the
budget L(u) - theta small (at most 2.4 at the optimum on gap1-12, the instances the search was tuned
on), the sets of each agent within it are few (hundreds); :func:`near_optimal_sets` lists them by a
depth-first search over the items that prunes a partial set whose best completion (a suffix knapsack
table) already exceeds the budget. This is reduced-cost fixing taken to whole sets: an x_ij in no listed
set of agent i is 0 in every solution worth theta.

**Search** (:func:`solve`, values integral). theta = floor(L), then theta - 1, ...: a choice of one
listed set per agent (the empty set included when it is listed) that covers every item once with
gaps summing to at most L(u) - theta is an assignment worth at least theta, and every assignment
worth theta or more is such a choice. :func:`exact_cover` searches for one: a cover found is worth
theta or more and, every higher threshold refuted, optimal; none refutes theta (the optimum is at
most theta - 1) and the next threshold follows. Past ``node_limit`` cover nodes the set-partitioning
MILP over the listed sets (:func:`partition`, HiGHS) decides instead: its optimum z reaches theta
(the GAP optimum) or not (theta refuted; z, when the MILP has a solution, is an incumbent). The
search ends as soon as the incumbent is worth the threshold. When an agent has more than
``set_limit`` sets within the budget, or ``max_stages`` thresholds are refuted, the search hands
over the bound proven so far and the caller solves the compact model with it (the limits are those
of :class:`~odrp.kinds.knapsack.exact.settings.LagrangianSettings`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.knapsack.exact.settings import LagrangianSettings
from odrp.kinds.knapsack.family import Family

TOL = 1e-6
"""Slack on every comparison with the budget or the bound (in the direction that keeps more)."""


def applies(f: Family, settings: LagrangianSettings | None = None) -> str | None:
    """Why this search cannot solve ``f`` (None when it can)."""
    settings = settings or LagrangianSettings()
    if not f.exactly_one or f.n_pairs or f.soft or f.n_dimensions != 1 or len(f.hard) != 1:
        return "every item in exactly one knapsack, one hard dimension, no pair profit"
    w, cap = f.weight[0], f.capacity[0]
    if not (np.all(np.isfinite(w)) and np.all(w == np.round(w)) and np.all(w >= 0)):
        return "non-negative integer weights"
    if not (np.all(np.isfinite(cap)) and np.all(cap >= 0)):
        return "finite non-negative capacities"
    if not np.all(f.profit == np.round(f.profit)):
        return "integer values"
    items = int(f.count.sum())
    if f.n_knapsacks * (items + 1) * (float(cap.max(initial=0.0)) + 1) > settings.table_limit:
        return f"knapsacks x (items + 1) x (largest capacity + 1) at most {settings.table_limit}"
    return None


@dataclass(frozen=True)
class Gap:
    """The family as a GAP in maximisation form, one item per copy."""

    value: np.ndarray
    """(m, n) sign x profit."""
    weight: np.ndarray
    """(m, n) integers."""
    capacity: np.ndarray
    """(m,) integers."""
    family_class: np.ndarray
    """(n,) the family class of every item."""

    @property
    def m(self) -> int:
        return self.value.shape[0]

    @property
    def n(self) -> int:
        return self.value.shape[1]


def gap_of(f: Family) -> Gap:
    owner = np.repeat(np.arange(f.n_classes), f.count)
    return Gap(
        value=f.sign * f.profit[owner].T.astype(float),
        weight=np.round(f.weight[0][owner].T).astype(np.int64),
        capacity=np.floor(f.capacity[0] + 1e-9).astype(np.int64),
        family_class=owner,
    )


def suffix_tables(values: np.ndarray, weights: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """T[j, i, r]: the most value of a set of items >= j weighing at most r at agent i (all agents at once).

    Entries with r > c_i are never read. A non-positive value never raises T (T is non-decreasing in r).
    """
    m, n = values.shape
    top = int(capacity.max(initial=0))
    table = np.zeros((n + 1, m, top + 1))
    room = np.arange(top + 1)[None, :]
    agents = np.arange(m)[:, None]
    for j in range(n - 1, -1, -1):
        before = table[j + 1]
        source = room - weights[:, j][:, None]
        taken = np.where(source >= 0, before[agents, np.maximum(source, 0)] + values[:, j][:, None], -np.inf)
        table[j] = np.maximum(before, taken)
    return table


def knapsack_values(table: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """KP_i for every agent: T[0, i, c_i]."""
    return table[0, np.arange(len(capacity)), capacity]


def best_set(table: np.ndarray, weights: np.ndarray, i: int, capacity: int) -> list[int]:
    """The items of an optimal set of agent i, read back from the suffix table."""
    out, r = [], capacity
    for j in range(table.shape[0] - 1):
        if table[j, i, r] != table[j + 1, i, r]:
            out.append(j)
            r -= int(weights[i, j])
    return out


@dataclass
class Multipliers:
    u: np.ndarray
    bound: float
    """L(u) for these u: the least met."""
    iterations: int
    master: float
    """The last restricted master LP value (= min L when the generation converged)."""


def lagrangian_bound(gap: Gap, u: np.ndarray) -> tuple[float, np.ndarray]:
    """L(u) and the suffix tables of the reduced values p - u."""
    reduced = gap.value - u[None, :]
    table = suffix_tables(reduced, gap.weight, gap.capacity)
    return float(u.sum() + knapsack_values(table, gap.capacity).sum()), table


def multipliers(gap: Gap, deadline: float, max_iterations: int = LagrangianSettings.max_iterations) -> Multipliers:
    """Column generation on the set-partitioning master: max sum value(S) lambda_iS, every item covered
    once (duals u_j), every agent at most one set (duals mu_i >= 0), items uncovered at a big cost
    until real sets cover them. Pricing: KP_i(u) - mu_i > 0 adds agent i's best set. At most
    ``max_iterations`` iterations."""
    import highspy

    m, n = gap.m, gap.n
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    inf = highspy.kHighsInf
    h.addRows(n, np.ones(n), np.ones(n), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    h.addRows(m, np.full(m, -inf), np.ones(m), 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    big = float(np.abs(gap.value).sum()) + 1.0
    h.addCols(
        n, np.full(n, -big), np.zeros(n), np.full(n, inf), n, np.arange(n, dtype=np.int32),
        np.arange(n, dtype=np.int32), np.ones(n),
    )  # fmt: skip
    best = Multipliers(np.zeros(n), math.inf, 0, -math.inf)
    for iteration in range(1, max_iterations + 1):
        h.run()
        dual = np.asarray(h.getSolution().row_dual)
        u, mu = dual[:n], dual[n:]
        bound, table = lagrangian_bound(gap, u)
        master = h.getInfo().objective_function_value
        if bound < best.bound:
            best.u, best.bound = u.copy(), bound
        best.iterations, best.master = iteration, master
        kp = knapsack_values(table, gap.capacity)
        pricing = [i for i in range(m) if kp[i] - mu[i] > TOL]
        if not pricing or math.floor(best.bound + TOL) <= master + TOL or time.perf_counter() > deadline:
            break  # converged, or the integral bound cannot drop any further, or out of time
        for i in pricing:
            items = best_set(table, gap.weight, i, int(gap.capacity[i]))
            rows = np.array([*items, n + i], dtype=np.int32)
            h.addCol(float(gap.value[i, items].sum()), 0.0, inf, len(rows), rows, np.ones(len(rows)))
    return best


def near_optimal_sets(table: np.ndarray, reduced: np.ndarray, weights: np.ndarray, i: int, capacity: int,
                      budget: float, limit: int, deadline: float = math.inf,
                      ) -> list[tuple[float, tuple[int, ...]]] | None:  # fmt: skip
    """(g_i(S), S) for every set S fitting agent i with g_i(S) = KP_i - reduced(S) <= budget, g ascending
    (None: more than ``limit``, or the clock passed ``deadline``)."""
    n = table.shape[0] - 1
    best = table[0, i, capacity]
    out: list[tuple[float, tuple[int, ...]]] = []
    stack: list[tuple[int, int, float, tuple[int, ...]]] = [(0, capacity, 0.0, ())]
    popped = 0
    while stack:
        popped += 1
        if not popped % 4096 and time.perf_counter() > deadline:
            return None
        j, room, value, items = stack.pop()
        if best - (value + table[j, i, room]) > budget + TOL:
            continue
        if j == n:
            out.append((max(0.0, best - value), items))
            if len(out) > limit:
                return None
            continue
        stack.append((j + 1, room, value, items))
        if weights[i, j] <= room:
            stack.append((j + 1, room - int(weights[i, j]), value + reduced[i, j], (*items, j)))
    return sorted(out)


def exact_cover(
    sets: list[list[tuple[float, tuple[int, ...]]]], n: int, budget: float, node_limit: int, deadline: float = math.inf
):
    """One listed set per agent, every item covered once, the gaps g summing to at most ``budget``:
    ("found", [(agent, set), ...]), ("none", None) when no such choice exists, ("limit", None) past
    ``node_limit`` nodes, ("time", None) when the clock passed ``deadline``.

    Depth first; at each node the agent with the fewest sets still compatible (disjoint from the items
    covered, g within the budget left) is branched on, sets by ascending g. A node is refuted when an
    agent has no compatible set, when the least compatible g of the agents left exceed the budget left,
    or when their compatible sets together miss an uncovered item. Refuted (covered, agents left) states
    are remembered with the largest budget they were refuted for.
    """
    full = (1 << n) - 1
    options = [[(g, sum(1 << j for j in items), k) for k, (g, items) in enumerate(agent)] for agent in sets]
    refuted: dict[tuple[int, tuple[int, ...]], float] = {}
    nodes = 0

    def search(left_agents: tuple[int, ...], covered: int, left: float) -> list[tuple[int, int]] | None:
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            raise _NodeLimit
        if not nodes % 1024 and time.perf_counter() > deadline:
            raise _OutOfTime
        if not left_agents:
            return [] if covered == full else None
        if refuted.get((covered, left_agents), -math.inf) >= left:
            return None
        reach, need, pick, pick_options = covered, 0.0, -1, None
        for i in left_agents:
            compatible = [o for o in options[i] if o[0] <= left + TOL and not o[1] & covered]
            if not compatible:
                break
            need += compatible[0][0]
            for o in compatible:
                reach |= o[1]
            if pick_options is None or len(compatible) < len(pick_options):
                pick, pick_options = i, compatible
        else:
            if need <= left + TOL and reach == full:
                rest = tuple(i for i in left_agents if i != pick)
                for g, mask, k in pick_options:  # type: ignore[union-attr]
                    found = search(rest, covered | mask, left - g)
                    if found is not None:
                        return [(pick, k), *found]
        refuted[(covered, left_agents)] = left
        return None

    try:
        chosen = search(tuple(range(len(sets))), 0, budget)
    except _NodeLimit:
        return "limit", None
    except _OutOfTime:
        return "time", None
    if chosen is None:
        return "none", None
    return "found", [(i, sets[i][k][1]) for i, k in chosen]


class _NodeLimit(Exception):
    pass


class _OutOfTime(Exception):
    pass


@dataclass
class HandOver:
    """What the search hands over to the compact model: the bound it proved (family sense) and the
    best assignment it knows (family counts; None if none)."""

    bound: float
    counts: np.ndarray | None


def partition(
    gap: Gap, listed: list[list[tuple[float, tuple[int, ...]]]], time_limit: float | None, threads: int | None = None
):
    """The best choice of one listed set per agent covering every item once (HiGHS, gap 0: the search
    compares its optimum with theta); (run, sets chosen)."""
    import highspy

    m, n = gap.m, gap.n
    agent = np.array([i for i in range(m) for _ in listed[i]], dtype=np.int64)
    members = [s for i in range(m) for _, s in listed[i]]
    cost = np.array([gap.value[a, list(s)].sum() for a, s in zip(agent, members, strict=True)], dtype=float)
    start = np.zeros(len(members) + 1, dtype=np.int32)
    start[1:] = np.cumsum([len(s) + 1 for s in members])
    index = np.array([r for a, s in zip(agent, members, strict=True) for r in (*s, n + a)], dtype=np.int32)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(members), n + m
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, np.zeros(len(members)), np.ones(len(members))
    lp.row_lower_ = lp.row_upper_ = np.ones(n + m)
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_ = start, index
    lp.a_matrix_.value_ = np.ones(len(index))
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(members)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(lp)
    run = run_highspy(h, "max", time_limit, 0.0, threads=threads)
    if not run.has_solution:
        return run, None
    chosen = np.flatnonzero(np.asarray(h.getSolution().col_value) > 0.5)
    return run, [(int(agent[k]), members[k]) for k in chosen]


def solve(
    f: Family,
    time_limit: float | None = None,
    incumbent: np.ndarray | None = None,
    stats: dict[str, Any] | None = None,
    settings: LagrangianSettings | None = None,
    threads: int | None = None,
) -> tuple[SolverRun, np.ndarray | None] | HandOver:
    """Solve a GAP-shaped family exactly (module docstring): (run, family counts), or, when the sets get
    too many or the time runs out, a :class:`HandOver` (the bound proven and the best assignment known)
    for the compact model. Every step checks the clock: the search ends by ``time_limit``.

    ``incumbent``: family counts of a known feasible solution; ``stats`` is filled in; ``threads``: HiGHS's
    thread count in the partition MIPs (None: HiGHS's default).
    """
    settings = settings or LagrangianSettings()
    start = time.perf_counter()
    deadline = math.inf if time_limit is None else start + time_limit
    gap = gap_of(f)
    found = multipliers(gap, deadline, settings.max_iterations)
    bound, table = lagrangian_bound(gap, found.u)
    reduced = gap.value - found.u[None, :]
    stats = {} if stats is None else stats
    stats.update(lagrangian_bound=f.sign * bound, generation_iterations=found.iterations, stages=[])
    best_value, best_counts = -math.inf, None
    if incumbent is not None:
        best_value, best_counts = f.sign * f.objective(incumbent), incumbent
    theta = math.floor(bound + TOL)

    def hand_over(why: str) -> HandOver:
        stats["handed_over"] = why
        return HandOver(f.sign * theta, best_counts)

    for _ in range(settings.max_stages):
        if best_value >= theta - TOL:  # nothing better than the incumbent can exist
            return _finish(f, "optimal", best_value, best_value, best_counts, start, stats)
        budget = bound - theta
        listed = []
        for i in range(gap.m):
            listed.append(
                near_optimal_sets(
                    table, reduced, gap.weight, i, int(gap.capacity[i]), budget, settings.set_limit, deadline
                )
            )
            if listed[-1] is None:
                break
        if time.perf_counter() > deadline:
            return hand_over("time limit")
        if listed[-1] is None:
            return hand_over("too many sets")
        began = time.perf_counter()
        how, chosen = exact_cover(listed, gap.n, budget, settings.node_limit, deadline)  # type: ignore[arg-type]
        stage = {"theta": f.sign * theta, "sets": sum(len(s) for s in listed), "cover": how}  # type: ignore[arg-type]
        if how == "time":
            stats["stages"].append(stage)
            return hand_over("time limit")
        if how == "limit":  # the set-partitioning MILP decides instead
            left = None if time_limit is None else max(0.0, deadline - time.perf_counter())
            run, chosen = partition(gap, listed, left, threads)  # type: ignore[arg-type]
            stage["partition"] = run.status
            if run.status not in ("optimal", "infeasible"):
                stats["stages"].append(stage)
                if chosen is not None:
                    counts = _counts(f, gap, chosen)
                    if f.sign * f.objective(counts) > best_value:
                        best_value, best_counts = f.sign * f.objective(counts), counts
                return hand_over("time limit" if time.perf_counter() > deadline else "partition not finished")
        stage["s"] = time.perf_counter() - began
        stats["stages"].append(stage)
        if chosen is not None:
            counts = _counts(f, gap, chosen)
            value = f.sign * f.objective(counts)
            if value > best_value:
                best_value, best_counts = value, counts
        if best_value >= theta - TOL:
            return _finish(f, "optimal", best_value, best_value, best_counts, start, stats)
        theta -= 1
    return hand_over(f"{settings.max_stages} thresholds refuted")


def _counts(f: Family, gap: Gap, chosen: list[tuple[int, tuple[int, ...]]]) -> np.ndarray:
    counts = np.zeros((f.n_classes, f.n_knapsacks), dtype=int)
    for i, items in chosen:
        for j in items:
            counts[gap.family_class[j], i] += 1
    return counts


def _finish(f: Family, status, value: float, bound: float, counts, start: float, stats: dict[str, Any]):
    run = SolverRun(solver_version("highs"), status, f.sign * value, f.sign * bound, 0.0, time.perf_counter() - start)
    return run, counts
