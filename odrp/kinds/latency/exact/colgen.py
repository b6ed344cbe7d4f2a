"""Latency placement by column generation: the set-partitioning master of the score without latency.

Write the score of eq. (1) as s = F + w1 s_lat with F = w2 s_sup + w3 s_co + w4 s_event (as in
:mod:`odrp.kinds.latency.exact.classes`). F is separable over the groups of operators that share a
supervisor: with a_e = w3 / |E| + w4 t_e / T the weight of edge e (the objective coefficients of
:func:`~odrp.kinds.latency.exact.model.objective_coefficients`),

    F = w3 [|E| > 0] + w4 [T > 0] + sum_groups c(g),     c(g) = w2 / N - sum_{e inside g} a_e.

**Items and types.** Twin operators (:func:`~odrp.kinds.latency.exact.model.twin_groups`: equal
demands and equal edges) are interchangeable: a twin class A is one item of demand b_A = |A|, every
other operator an item of demand 1. Between an operator of A and one of B every pair carries the
same weight W_AB (the edges' a_e summed over the pair); no edge joins two twins. A group is a count
vector n (n_A units of item A), of cost c(n) = w2 / N - sum_{A < B} W_AB n_A n_B. A type is a class
of supervisors of equal cpu and memory (:func:`~odrp.kinds.latency.exact.classes.supervisor_classes`),
with as many groups as supervisors; a group of type t fits within its usable capacities C_t, M_t.

**Master** (:mod:`odrp.core.colgen`): min sum_g c_g lambda_g over the groups generated,
sum_g n_A(g) lambda_g = b_A for every item, at most |class t| groups of type t. Its Lagrangian bound
plus the constant bounds F, and so s (s_lat >= 0), from below at every iteration.

**Pricing** of type t at duals (pi, mu_t): a quadratic knapsack,

    max  sum_A pi_A n_A + sum_{A < B} W_AB n_A n_B
    s.t. sum_A c_A n_A <= C_t,  sum_A m_A n_A <= M_t,  0 <= n_A <= b_A

and the reduced cost is w2 / N - mu_t - that maximum. Heuristically (:meth:`LatencyPricer.heuristic`):
local search by adding, removing and swapping units, from the single items of largest potential
gain, from the groups of the LP solution and from perturbations of the best groups found. Exactly
(:meth:`LatencyPricer.exact`):
a MILP solved by HiGHS (highspy), one binary per unit x_{A,k} (k < b_A, ordered x_{A,k} >= x_{A,k+1}),
one y in [0, 1] per unit pair of items joined by an edge (y <= x of both ends), the two capacity rows
and their RLT cuts (:func:`odrp.core.colgen.add_capacity_products`);
its dual bound gives the least reduced cost when the time runs out. Every solution that improved its
incumbent on the way and prices out is a column too (HiGHS's saved improving solutions).

Every better placement and bound leaves the run as it is found (:mod:`odrp.core.progress`).

**Primal**: the hybrid heuristic's placement (:func:`~odrp.kinds.latency.exact.classes.upper_bound`),
then, after the root's generation and before the branching, dives and the restricted master as an
integer program over the generated groups, whose partition gets the exact best labelling on the real
supervisors (:func:`~odrp.kinds.latency.exact.classes.best_labelling`, the latency as the evaluator
computes it) and a hill climb (the paper's moves) from there; the branching's integral nodes, and the
restricted programs of its fractional leaves, the same way. A branching that closes with time left and
a gap gives that time to the primal stage again.

**The box.** With ``colgen_branching``, the LP asks for between the least and the most groups of each
type that a multiset of :func:`multiset_points` with its bound below the incumbent holds: every better
placement uses such a multiset (none left: the incumbent is optimal).

**Branching** (``colgen_branching``): once the LP has converged within the generation's time, branch
and price on the number of supervisors of each class (:func:`odrp.core.colgen.branch_on_types`),
best bound first, down to single multisets of classes, nodes whose bound reaches the incumbent dropped,
and multisets that cannot hold the demand or that another of as many supervisors dominates skipped
(:func:`multiset_points`, the classes method's rule), each node's bound at least the classes method's
bound on the fewest supervisors it allows.

The result's bound is the Lagrangian bound of F (the least over the open branches), a bound of s (or,
when no exact pricing round finished, :func:`simple_bound`); the incumbent is proven optimal only
when it meets that bound within the run's MIP gap.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from odrp.core import progress
from odrp.core.budget import Budget
from odrp.core.colgen import (
    Column,
    Counts,
    GenerationSettings,
    Master,
    Pair,
    Pricing,
    add_capacity_products,
    branch_on_types,
    dive,
    generate,
    pairs_allow,
    price_units,
)
from odrp.core.exact import ExactOutcome
from odrp.core.memory import check_model
from odrp.core.result import relative_gap
from odrp.core.solvers import SolverRun, solver_version
from odrp.heuristics.latency import Scorer, climb
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact.classes import (
    TooManyGroups,
    best_labelling,
    better_known,
    supervisor_classes,
    supervisors_bound,
    undominated,
    upper_bound,
)
from odrp.kinds.latency.exact.model import fewest_supervisors, objective_coefficients, twin_groups
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, solution_json

FIT = 1e-9
"""Relative and absolute slack of a capacity test (the evaluator's)."""


@dataclass(frozen=True)
class Clustering:
    """The instance as items, types and weights (the module docstring's notation)."""

    items: list[list[int]]
    """The operators of each item (a twin class, or one operator)."""
    demand: list[int]
    cpu: np.ndarray
    memory: np.ndarray
    weight: np.ndarray
    """W_AB: the weight of one unit pair of items A and B (symmetric, zero diagonal)."""
    types: list[list[int]]
    """The supervisors of each type (a class of equal cpu and memory)."""
    cpu_limit: list[float]
    memory_limit: list[float]
    per_group: float
    """w2 / N: the cost of a supervisor used."""
    constant: float
    """F minus the sum of the group costs."""


def clustering(inst: LatencyInstance) -> Clustering:
    """Items, types and unit-pair weights of ``inst``."""
    twins = twin_groups(inst)
    in_twins = {i for g in twins for i in g}
    items = sorted([*twins, *([i] for i in range(inst.n_operators) if i not in in_twins)], key=min)
    item_of = {i: a for a, members in enumerate(items) for i in members}
    demand = [len(g) for g in items]
    coefficients = objective_coefficients(inst)
    weight = np.zeros((len(items), len(items)))
    for e, (i, j) in enumerate(inst.edges):
        a, b = item_of[i], item_of[j]
        if a == b:
            raise AssertionError(f"an edge between the twins {inst.operators[i]} and {inst.operators[j]}")
        share = (coefficients["colocation"] + coefficients["events"] * inst.events[e]) / (demand[a] * demand[b])
        weight[a, b] += share
        weight[b, a] += share
    types = supervisor_classes(inst)
    w = inst.weights
    return Clustering(
        items=items,
        demand=demand,
        cpu=np.array([inst.cpu[g[0]] for g in items]),
        memory=np.array([inst.memory[g[0]] for g in items]),
        weight=weight,
        types=types,
        cpu_limit=[inst.cpu_limit[c[0]] for c in types],
        memory_limit=[inst.memory_limit[c[0]] for c in types],
        per_group=coefficients["supervisors"],
        constant=(w["colocation"] if inst.edges else 0.0) + (w["events"] if inst.total_events > 0 else 0.0),
    )


def _fits(limit: float, used: float) -> bool:
    return used <= limit * (1 + FIT) + FIT


class LatencyPricer:
    """The pricing problems of the module docstring, one per type (:class:`odrp.core.colgen.Pricer`)."""

    def __init__(self, data: Clustering, settings: LatencySettings) -> None:
        self.data = data
        self.settings = settings
        self.m = len(data.demand)
        self.neighbours = [np.flatnonzero(data.weight[a]) for a in range(self.m)]
        self._models: dict[int, Any] = {}
        self.pairs: tuple[Pair, ...] = ()
        """The branching decisions the groups keep (:meth:`restrict`)."""
        self._model_pairs: dict[int, tuple[Pair, ...]] = {}
        """The decisions whose rows each exact model holds (after its own rows)."""
        self._rng = random.Random(0)
        self.exact_calls = 0
        self.best_found: dict[int, Counts | None] = {}
        """The best group of each type that the last heuristic pricing found (the exact one's start)."""

    # ----------------------------------------------------------------- values
    def value(self, counts: Sequence[int]) -> float:
        """sum_{A < B} W_AB n_A n_B."""
        n = np.asarray(counts, dtype=float)
        return float(n @ self.data.weight @ n) / 2.0

    def cost(self, t: int, counts: Counts) -> float:
        return self.data.per_group - self.value(counts)

    def fits(self, t: int, counts: Sequence[int]) -> bool:
        n = np.asarray(counts, dtype=float)
        d = self.data
        return _fits(d.cpu_limit[t], float(d.cpu @ n)) and _fits(d.memory_limit[t], float(d.memory @ n))

    def restrict(self, pairs: Sequence[Pair]) -> None:
        self.pairs = tuple(pairs)

    def _keep_pairs(self, t: int, n: np.ndarray, upper: np.ndarray) -> np.ndarray | None:
        """A group near ``n`` that keeps the decisions: for a pair apart, a (of demand 1) left out; for a
        pair together, the missing end added where it fits, else the other end left out. None when the
        result is empty or still breaks one."""
        d = self.data
        n = n.copy()
        for _ in range(len(self.pairs) + 1):
            changed = False
            for a, b, together in self.pairs:
                if not together and n[a] and n[b]:
                    n[a], changed = 0, True
                elif together:
                    for have, need in ((a, b), (b, a)) if d.demand[b] == 1 else ((a, b),):
                        if n[have] and not n[need]:
                            n[need] += 1
                            if not (n[need] <= upper[need] and self.fits(t, n)):
                                n[need] -= 1
                                n[have] = 0
                            changed = True
            if not changed:
                break
        if not n.any() or not pairs_allow(d.demand, self.pairs, n):
            return None
        return n

    # -------------------------------------------------------------- heuristic
    def heuristic(self, t: int, pi: np.ndarray, mu: float, upper: Sequence[int], starts: list[Counts]) -> list[Counts]:
        d = self.data
        cap_cpu, cap_memory = d.cpu_limit[t] * (1 + FIT) + FIT, d.memory_limit[t] * (1 + FIT) + FIT
        upper_units = np.asarray(upper)
        threshold = d.per_group - mu  # a group prices out when pi.n + value(n) exceeds it
        found: dict[Counts, float] = {}
        apart = np.array([(a, b) for a, b, together in self.pairs if not together], dtype=int).reshape(-1, 2)

        def blocked(n: np.ndarray) -> np.ndarray:
            """The items a unit of which would join one kept apart from an item of ``n``."""
            out = np.zeros(self.m, dtype=bool)
            out[apart[n[apart[:, 1]] > 0, 0]] = True
            out[apart[n[apart[:, 0]] > 0, 1]] = True
            return out

        def search(n: np.ndarray) -> None:
            cpu, memory = float(d.cpu @ n), float(d.memory @ n)
            gain = pi + d.weight @ n  # the gain of one more unit of each item
            while True:
                room_cpu, room_memory = cap_cpu - cpu, cap_memory - memory
                can_add = (n < upper_units) & (d.cpu <= room_cpu) & (d.memory <= room_memory)
                if len(apart):
                    can_add &= ~blocked(n)
                best_add = np.where(can_add, gain, -np.inf)
                a = int(best_add.argmax())
                best_remove = np.where((n > 0) & (n.sum() > 1), -gain, -np.inf)  # a group keeps one unit
                r = int(best_remove.argmax())
                if best_add[a] > 1e-12 and best_add[a] >= best_remove[r]:
                    n[a] += 1
                    cpu, memory = cpu + d.cpu[a], memory + d.memory[a]
                    gain += d.weight[a]
                    continue
                if best_remove[r] > 1e-12:
                    n[r] -= 1
                    cpu, memory = cpu - d.cpu[r], memory - d.memory[r]
                    gain -= d.weight[r]
                    continue
                # swap one unit of a (in) for one of b (out)
                inside = np.flatnonzero(n > 0)
                if not len(inside):
                    return
                swap = gain[None, :] - gain[inside][:, None] - d.weight[inside]
                ok = (
                    (n[None, :] < upper_units[None, :])
                    & (d.cpu[None, :] - d.cpu[inside][:, None] <= room_cpu)
                    & (d.memory[None, :] - d.memory[inside][:, None] <= room_memory)
                )
                ok[np.arange(len(inside)), inside] = False
                if len(apart):
                    ok &= ~blocked(n)[None, :]
                swap = np.where(ok, swap, -np.inf)
                flat = int(swap.argmax())
                row, b = divmod(flat, self.m)
                if swap[row, b] <= 1e-12:
                    return
                a = int(inside[row])
                n[a] -= 1
                n[b] += 1
                cpu += d.cpu[b] - d.cpu[a]
                memory += d.memory[b] - d.memory[a]
                gain += d.weight[b] - d.weight[a]

        def record(n: np.ndarray) -> None:
            if self.pairs:  # a branch's decisions on pairs: the search ignores them, a repair keeps them
                kept = self._keep_pairs(t, n, upper_units)
                if kept is None:
                    return
                n = kept
            if not n.any():  # a supervisor used holds an operator (a branch's duals can make nothing look good)
                return
            value = float(pi @ n) + self.value(n)
            if value > threshold + 1e-12:
                found[tuple(int(x) for x in n)] = threshold - value

        seeds = []
        potential = pi + d.weight @ upper_units  # the most one unit of an item can gain
        fitting = [a for a in range(self.m) if upper_units[a] > 0 and d.cpu[a] <= cap_cpu and d.memory[a] <= cap_memory]
        for a in sorted(fitting, key=lambda a: -potential[a])[: self.settings.colgen_seeds]:
            n = np.zeros(self.m, dtype=int)
            n[a] = 1
            seeds.append(n)
        for counts in starts:
            n = np.minimum(np.array(counts, dtype=int), upper_units)
            seeds.append(n)
        for n in seeds:
            search(n)
            record(n)
        for counts, _ in sorted(found.items(), key=lambda kv: kv[1])[: self.settings.colgen_perturbed]:
            for _ in range(self.settings.colgen_perturbations):
                n = np.array(counts, dtype=int)
                units = [a for a in range(self.m) for _ in range(n[a])]
                for a in self._rng.sample(units, max(1, len(units) // 4)):
                    n[a] -= 1
                search(n)
                record(n)
        best = sorted(found.items(), key=lambda kv: kv[1])[: self.settings.colgen_columns]
        self.best_found[t] = best[0][0] if best else None
        return [counts for counts, _ in best]

    # ------------------------------------------------------------------ exact
    def model_size(self) -> tuple[int, int, int]:
        """(variables, rows, nonzeros) of one exact pricing model."""
        units = sum(self.data.demand)
        pairs = sum(
            self.data.demand[a] * self.data.demand[b] for a in range(self.m) for b in self.neighbours[a] if b > a
        )
        # the RLT rows: two per unit with a pair, each with the unit and its pairs (every pair twice)
        return units + pairs, 2 * pairs + 3 + 3 * units, 8 * pairs + 7 * units

    def _model(self, t: int) -> tuple[Any, list[tuple[int, int]]]:
        if t in self._models:
            return self._models[t]
        import highspy

        d = self.data
        units = [(a, k) for a in range(self.m) for k in range(d.demand[a])]
        index = {u: q for q, u in enumerate(units)}
        pairs = [
            (index[a, k], index[b, j], d.weight[a, b])
            for a in range(self.m)
            for b in self.neighbours[a]
            if b > a
            for k in range(d.demand[a])
            for j in range(d.demand[b])
        ]
        nu, npairs = len(units), len(pairs)
        inf = highspy.kHighsInf
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.addVars(nu + npairs, np.zeros(nu + npairs), np.ones(nu + npairs))
        h.changeColsIntegrality(nu, np.arange(nu, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * nu))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.changeColsCost(npairs, np.arange(nu, nu + npairs, dtype=np.int32), np.array([w for *_, w in pairs]))
        for q, (x1, x2, _) in enumerate(pairs):
            for x in (x1, x2):
                h.addRow(-inf, 0.0, 2, np.array([nu + q, x], dtype=np.int32), np.array([1.0, -1.0]))
        every = np.arange(nu, dtype=np.int32)
        capacities = [d.cpu_limit[t] * (1 + FIT) + FIT, d.memory_limit[t] * (1 + FIT) + FIT]
        weights = [[d.cpu[a] for a, _ in units], [d.memory[a] for a, _ in units]]
        for row, capacity in zip(weights, capacities, strict=True):
            h.addRow(-inf, capacity, nu, every, np.array(row))
        products = [(nu + q, x1, x2) for q, (x1, x2, _) in enumerate(pairs)]
        add_capacity_products(h, products, weights, capacities)  # the RLT capacity cuts
        for a, k in units:
            if k > 0:
                h.addRow(0.0, inf, 2, np.array([index[a, k - 1], index[a, k]], dtype=np.int32), np.array([1.0, -1.0]))
        h.addRow(1.0, inf, nu, every, np.ones(nu))  # a group holds an operator (a branch's duals can favour none)
        h.setOptionValue("mip_rel_gap", 1e-7)
        h.setOptionValue("mip_abs_gap", 1e-9)
        self._models[t] = (h, units)
        self._model_pairs[t] = ()
        return self._models[t]

    def _keep_pairs_in_model(self, t: int) -> None:
        """Make the exact model of type ``t`` hold the rows of the decisions in force, on the first unit of
        each item (x_{A,0} = 1 when the group holds A): apart, x_{a,0} + x_{b,0} <= 1; together,
        x_{a,0} <= x_{b,0}, an equality when b is of demand 1 too."""
        if self._model_pairs[t] == self.pairs:
            return
        import highspy

        h, units = self._models[t]
        kept = len(self._model_pairs[t])
        if kept:
            rows = h.getNumRow()
            h.deleteRows(kept, np.arange(rows - kept, rows, dtype=np.int32))
        first = {a: q for q, (a, k) in enumerate(units) if k == 0}
        inf = highspy.kHighsInf
        for a, b, together in self.pairs:
            index = np.array([first[a], first[b]], dtype=np.int32)
            if together:
                lower = 0.0 if self.data.demand[b] == 1 else -inf
                h.addRow(lower, 0.0, 2, index, np.array([1.0, -1.0]))
            else:
                h.addRow(-inf, 1.0, 2, index, np.array([1.0, 1.0]))
        self._model_pairs[t] = self.pairs

    def exact(self, t: int, pi: np.ndarray, mu: float, time_limit: float | None) -> Pricing:
        self.exact_calls += 1
        h, units = self._model(t)
        self._keep_pairs_in_model(t)
        costs = np.array([pi[a] for a, _ in units])
        # the MIP start: the best group the heuristic found at these duals
        threshold = self.data.per_group - mu
        return price_units(h, units, self.m, costs, time_limit, self.best_found.get(t), threshold)


# ---------------------------------------------------------------------------- the method


def groups_of(data: Clustering, columns: list[Column]) -> list[list[int]]:
    """Operator groups of a set of columns that covers every item's demand exactly."""
    next_unit = [0] * len(data.items)
    groups = []
    for column in columns:
        group = []
        for a, count in enumerate(column.counts):
            group.extend(data.items[a][next_unit[a] : next_unit[a] + count])
            next_unit[a] += count
        groups.append(group)
    return groups


def placement_of(inst: LatencyInstance, data: Clustering, columns: list[Column], settings: LatencySettings):
    """The best placement of the columns' partition: its exact labelling, or a plain one when that is too large."""
    groups = groups_of(data, columns)
    try:
        labelled = best_labelling(inst, groups, settings.labelling_nodes)
    except TooManyGroups:
        labelled = None
    if labelled is not None:
        return labelled
    free = {t: list(data.types[t]) for t in range(len(data.types))}
    p = [0] * inst.n_operators
    for column, group in zip(columns, groups, strict=True):
        u = free[column.type].pop(0)
        for i in group:
            p[i] = u
    evaluation = evaluate_assignment(inst, p)
    return (evaluation.objective, p) if evaluation.feasible else None


def estimated_size(inst: LatencyInstance, settings: LatencySettings) -> tuple[int, int, int]:
    """(variables, rows, nonzeros) of the pricing models and the master at its most columns."""
    data = clustering(inst)
    pricer = LatencyPricer(data, settings)
    variables, rows, nonzeros = pricer.model_size()
    k, m = len(data.types), len(data.demand)
    return (
        k * variables + settings.colgen_max_columns,
        k * rows + m + k,
        k * nonzeros + settings.colgen_max_columns * (m + 1),
    )


def simple_bound(inst: LatencyInstance) -> float:
    """A bound of s without any model: the fewest supervisors that can hold the demand, each used
    supervisor beyond the topology's components joined to another by at least the cheapest cut edge
    (the classes method's quick bound)."""
    return supervisors_bound(inst)(fewest_supervisors(inst))


def multiset_points(inst: LatencyInstance, data: Clustering) -> dict[Counts, float]:
    """The ``points`` of :func:`odrp.core.colgen.branch_on_types`: the multisets of supervisor classes
    (groups per type) that cover the demand and that no other multiset of as many supervisors dominates
    (:func:`~odrp.kinds.latency.exact.classes.undominated`), each with the classes method's bound on that
    many supervisors less the constant of F. A placement whose supervisors used form a dominated multiset
    has its partition, with the same F, on the dominating one."""
    on_supervisors = supervisors_bound(inst)
    levels, _ = undominated(inst, data.types)
    return {counts: on_supervisors(k) - data.constant for k, level in levels.items() for counts in level}


def solve(
    inst: LatencyInstance,
    settings: LatencySettings,
    time_limit: float | None,
    mip_gap: float,
    warm_start: dict[str, Any] | None = None,
    start_solution: dict[str, Any] | None = None,
    threads: int = 1,
) -> ExactOutcome:
    """The method of the module docstring (HiGHS as the pricing and master solver). ``warm_start`` and
    ``start_solution`` (the run's start heuristics' best placement): the first incumbent where better than
    the hybrid heuristic's. ``threads``: the exact pricings of the classes run on this many threads at once."""
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    check_model(*estimated_size(inst, settings), "the latency column generation")
    solver = solver_version("highs")
    incumbent = upper_bound(inst, settings.incumbent_iterations)
    incumbent_from = "hybrid heuristic"
    progress.bound(simple_bound(inst))
    if incumbent is not None:
        progress.incumbent(solution_json(inst, incumbent[1]), "hybrid heuristic")
    for solution, what in ((warm_start, "warm start"), (start_solution, "start")):
        known = better_known(inst, incumbent, solution, what)
        if known is not incumbent:
            incumbent, incumbent_from = known, what
    data = clustering(inst)
    pricer = LatencyPricer(data, settings)
    # an artificial unit costs more than any group can save: every F lies in [0, w2 + w3 + w4]
    w = inst.weights
    artificial = 10.0 * (1.0 + w["supervisors"] + w["colocation"] + w["events"])
    master = Master(data.demand, [len(c) for c in data.types], artificial)
    if incumbent is not None:
        type_of = {u: t for t, members in enumerate(data.types) for u in members}
        item_of = {i: a for a, members in enumerate(data.items) for i in members}
        for u in sorted(set(incumbent[1])):
            counts = [0] * len(data.items)
            for i, v in enumerate(incumbent[1]):
                if v == u:
                    counts[item_of[i]] += 1
            master.add(Column(type_of[u], tuple(counts), pricer.cost(type_of[u], tuple(counts))))
    stats: dict[str, Any] = {
        "method": "colgen",
        "items": len(data.items),
        "types": len(data.types),
        "pricing_threads": max(1, threads),
    }
    generation_deadline = None if time_limit is None else start + time_limit * (1 - settings.colgen_primal_share)
    bound_by = None if generation_deadline is None else start + (generation_deadline - start) / 2
    generation_settings = GenerationSettings(
        smoothing=settings.colgen_smoothing,
        max_columns=settings.colgen_max_columns,
        exact_time_limit=settings.colgen_exact_seconds,
        workers=max(1, threads),
    )

    def report(value: float) -> None:
        """A bound of F less its constant, reported as a bound of s."""
        progress.bound(max(value + data.constant, simple_bound(inst)))

    scorer = Scorer(inst)

    def consider(columns: list[Column] | None, source: str) -> None:
        """Label the columns' partition, climb from it, keep it if better than the incumbent."""
        nonlocal incumbent, incumbent_from
        if not columns:
            return
        found = placement_of(inst, data, columns, settings)
        if found is None:
            return
        remaining = None if deadline is None else max(0.0, deadline - time.perf_counter() - 0.1)
        p, _ = climb(scorer, found[1], Budget(time_limit=remaining, max_steps=settings.incumbent_iterations))
        score = evaluate_assignment(inst, p).objective
        stats[f"{source}_score"] = score
        if incumbent is None or score < incumbent[0]:
            incumbent, incumbent_from = (score, p), source
            progress.incumbent(solution_json(inst, p), f"column generation ({source})")

    def incumbent_cost() -> float | None:
        """The incumbent's score less F's constant: its cost in the master's terms (a cutoff)."""
        return None if incumbent is None else incumbent[0] - data.constant

    cutoff = incumbent_cost()
    points = None
    if settings.colgen_branching:  # the multisets where a better placement may lie, and their box
        points = {c: b for c, b in multiset_points(inst, data).items() if cutoff is None or b < cutoff}
        if points:
            box = [(min(c[t] for c in points), max(c[t] for c in points)) for t in range(master.k)]
            master.set_type_range([lo for lo, _ in box], [hi for _, hi in box])
            stats["multisets"] = len(points)

    def primal(until: float | None) -> None:
        """Dives (fix the largest column, price heuristically for the rest) until half of the time to
        ``until``, then the restricted master as an integer program over every column until ``until``."""
        nonlocal stopped
        clock = time.perf_counter()
        dive_until = None if until is None else clock + (until - clock) / 2
        consider(dive(master, pricer, dive_until), "dive")
        stats["dive_s"] = round(time.perf_counter() - clock, 3)
        rng = random.Random(0)
        dives = 1
        while dive_until is not None and time.perf_counter() < dive_until:  # more dives, each a little random
            columns = len(master.columns)
            consider(dive(master, pricer, dive_until, rng), "dive")
            dives += 1
            if len(master.columns) == columns:  # a dive that generated nothing combines known columns: the IP's part
                break
        stats["dives"] = dives
        left = None if until is None else until - time.perf_counter()
        if left is None or left > 0.05:
            clock = time.perf_counter()
            chosen = master.restricted_ip(left, incumbent_cost())
            stats["ip_s"] = round(time.perf_counter() - clock, 3)
            if left is not None and time.perf_counter() - clock >= left * 0.99:
                stopped = True
            if chosen:
                stats["ip_value"] = sum(c.cost for c in chosen) + data.constant
            consider(chosen, "restricted_master")

    # the end of the run's search: what is left after it goes to labelling and climbing
    last = None if deadline is None else deadline - settings.colgen_labelling_seconds
    stopped = False
    if points == {} and cutoff is not None:  # the classes method's bound of every multiset reaches the incumbent
        lower = cutoff
        primal(last)
    else:
        generation = generate(
            master, pricer, generation_deadline, generation_settings, bound_by=bound_by, on_bound=report
        )
        lower, stopped = generation.bound, not generation.converged
        stats.update(
            {
                "converged": generation.converged,
                "lp_value": generation.lp_value + data.constant,
                "iterations": generation.iterations,
                "exact_rounds": generation.exact_rounds,
                **{k: round(v, 3) if isinstance(v, float) else v for k, v in generation.stats.items()},
            }
        )
        stats["columns"] = sum(c is not None for c in master.columns)
        stats["generation_s"] = round(time.perf_counter() - start, 3)
        branch = bool(points) and generation.converged
        # the primal stage: at most the primal share of the limit where the branching follows it
        if branch and last is not None:
            primal(min(last, time.perf_counter() + settings.colgen_primal_share * time_limit))
        else:
            primal(last)
        if branch:
            master.set_type_range(master.type_lower, master.type_upper)  # the box again (the dives reset the rows)

            def integral(columns: list[Column]) -> float | None:
                """A node's integral LP solution: labelled, climbed from, and the incumbent's F as the cutoff."""
                consider(columns, "branching")
                return incumbent_cost()

            branching = branch_on_types(
                master,
                pricer,
                generation,
                last,
                generation_settings,
                incumbent_cost(),
                report,
                points,
                branch_pairs=settings.colgen_pairs,
                on_integral=integral,
            )
            lower, stopped = max(lower, branching.bound), not branching.closed
            stats.update({"branch_nodes": branching.nodes, "branch_closed": branching.closed})
            gap_left = incumbent is not None and lower + data.constant < incumbent[0]
            if branching.closed and gap_left and last is not None and last - time.perf_counter() > 1.0:
                primal(last)  # a closed tree with time left and a gap: the primal stage again, on every column
    bound = max(lower + data.constant, simple_bound(inst))
    runtime = time.perf_counter() - start
    stats["incumbent_from"] = incumbent_from
    if incumbent is None:
        message = "column generation found no placement within the time limit"
        return ExactOutcome(SolverRun(solver, "time_limit", None, bound, None, runtime, message=message), None, stats)
    score, placement = incumbent
    if bound is not None:
        bound = min(bound, score)
    gap = relative_gap(score, bound, "min")
    if gap is not None and gap <= mip_gap:
        status = "optimal"
    else:
        status = "time_limit" if stopped and time_limit is not None else "feasible"
    run = SolverRun(solver, status, score, bound, gap, runtime)
    return ExactOutcome(run, solution_json(inst, placement), stats)
