"""The configuration bound of a family with pair profits: column generation over knapsack and group contents.

For a family whose every copy goes to exactly one knapsack (R-Storm's QM3DKP), with sk_ab and sg_ab the
pair profits of two copies in one knapsack and in two knapsacks of one group (notation of
:mod:`odrp.kinds.knapsack.family`), the objective splits into a part that depends on each knapsack's
contents alone and a part that depends on each group's contents alone:

    objective(n) = sum_k v_k(n[., k]) + sum_g w_g(N[., g])
    v_k(x) = profit[., k] . x + sum_{a<b} K_ab x_a x_b
             - sum_{soft d} penalty_d max(0, weight[d, ., k] . x - capacity[d, k])
    w_g(y) = sum_{a<b} G_ab y_a y_b

with K = sk - sg and G = sg in a group of two knapsacks or more, K = sk and G = 0 in a group of one
(a pair in one knapsack is also a pair in its group: sk x x + sg (y y - x x)). Hence, for every
feasible n,

    objective(n) <= max { sum_k v_k(x_k) : sum_k x_k = count, x_k fits knapsack k }          (the knapsack part)
                  + max { sum_g w_g(y_g) : sum_g y_g = count, y_g fits the group relaxed }    (the group part)

where "fits the group relaxed" keeps of a group its summed hard capacities (with each class's least
weight over the group's knapsacks) and the most copies of each class its knapsacks hold together.
Each part is a set-partitioning problem over *configurations*, the contents of one bin (a knapsack,
a group): the Dantzig-Wolfe master of :mod:`odrp.core.colgen` (Mehrotra and Trick 1998 for
clustering; Johnson, Mehrotra and Nemhauser 1993), with interchangeable bins as one type. The LP
bound of such a master is the bound of the best convex combination of whole configurations, which
sees the pair profits of a bin exactly, where the compact model's linearisation sees them one
product at a time. Its Lagrangian bound holds at every iteration, so a part stopped by the
time limit still bounds; the bound returned is the sum of the two parts' Lagrangian bounds.

**Pricing** of a bin type at duals (pi, mu): a quadratic knapsack with soft dimensions,

    max  (profit + pi) . x + sum_{a<b} W_ab x_a x_b - sum_{soft d} penalty_d s_d
    s.t. hard_weight . x <= hard_capacity,  s_d >= soft_weight_d . x - soft_capacity_d,  s >= 0,
         0 <= x <= upper  (integer)

heuristically by a local search (add, remove or swap one copy) from the classes of largest gain and
from the columns of the LP solution, exactly by a MILP solved with HiGHS (highspy): one binary per
copy (x_{a,j} >= x_{a,j+1}), one product variable per pair of copies of two classes with W != 0
(y <= x of both ends when W > 0, y >= x_1 + x_2 - 1 when W < 0). Its dual bound gives the least
reduced cost when its time runs out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from odrp.core.colgen import (
    Column,
    Counts,
    Generation,
    GenerationSettings,
    Master,
    Pricing,
    add_capacity_products,
    generate,
    price_units,
)
from odrp.core.memory import check_model
from odrp.kinds.knapsack.exact.milp import upper_bounds
from odrp.kinds.knapsack.family import CAPACITY_RTOL, Family

__all__ = ["BinType", "ConfigurationBound", "PairPricer", "applies", "bin_types", "configuration_bound"]


@dataclass(frozen=True)
class BinType:
    """A class of interchangeable bins (knapsacks, or groups relaxed) and what one of them holds."""

    members: tuple[int, ...]
    """The knapsacks (or groups) of this type."""
    profit: np.ndarray
    """(C,) linear profit of one copy."""
    pairs: np.ndarray
    """(C, C) symmetric, zero diagonal: the profit of a pair of copies of two classes in one bin."""
    hard_weight: np.ndarray
    """(H, C)."""
    hard_capacity: np.ndarray
    """(H,)."""
    soft_weight: np.ndarray
    """(S, C)."""
    soft_capacity: np.ndarray
    """(S,)."""
    penalty: np.ndarray
    """(S,) per unit of overload."""
    upper: np.ndarray
    """(C,) the most copies of each class one bin holds."""


def applies(f: Family) -> bool:
    """The bound is for families with pair profits and exactly one knapsack per copy (QM3DKP)."""
    return f.exactly_one and f.n_pairs > 0 and f.sense == "max"


def _pair_matrix(f: Family, coefficients: np.ndarray) -> np.ndarray:
    w = np.zeros((f.n_classes, f.n_classes))
    np.add.at(w, (f.pair_a, f.pair_b), coefficients)
    np.add.at(w, (f.pair_b, f.pair_a), coefficients)
    np.fill_diagonal(w, 0.0)
    return w


def bin_types(f: Family) -> tuple[list[BinType], list[BinType]]:
    """The knapsack types and the group types of the module docstring."""
    hard, soft = list(f.hard), list(f.soft)
    sizes = {g: len(ks) for g, ks in enumerate(f.group_members)}
    group_of = {k: g for g, ks in enumerate(f.group_members) for k in ks}
    shared, alone = _pair_matrix(f, f.pair_knapsack - f.pair_group), _pair_matrix(f, f.pair_knapsack)
    grouped = _pair_matrix(f, f.pair_group)
    ub = upper_bounds(f)
    penalty = np.array([f.penalty[d] for d in soft], dtype=float)

    knapsacks: dict[bytes, list[int]] = {}
    for k in range(f.n_knapsacks):
        key = (
            bytes([sizes[group_of[k]] > 1])
            + f.capacity[:, k].tobytes()
            + f.profit[:, k].tobytes()
            + f.weight[:, :, k].tobytes()
        )
        knapsacks.setdefault(key, []).append(k)
    node_types = [
        BinType(
            members=tuple(ks),
            profit=f.profit[:, ks[0]].copy(),
            pairs=shared if sizes[group_of[ks[0]]] > 1 else alone,
            hard_weight=f.weight[hard, :, ks[0]],
            hard_capacity=f.capacity[hard, ks[0]],
            soft_weight=f.weight[soft, :, ks[0]],
            soft_capacity=f.capacity[soft, ks[0]],
            penalty=penalty,
            upper=ub[:, ks[0]].copy(),
        )
        for ks in knapsacks.values()
    ]

    groups: dict[bytes, list[int]] = {}
    relaxed: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray, bool]] = {}
    for g, ks in enumerate(f.group_members):
        members = list(ks)
        weight = f.weight[hard][:, :, members].min(axis=2)
        capacity = f.capacity[hard][:, members].sum(axis=1)
        upper = np.minimum(f.count, ub[:, members].sum(axis=1))
        wide = len(members) > 1
        key = bytes([wide]) + weight.tobytes() + capacity.tobytes() + upper.tobytes()
        groups.setdefault(key, []).append(g)
        relaxed[key] = (weight, capacity, upper, wide)
    empty = np.zeros((0, f.n_classes))
    group_types = [
        BinType(
            members=tuple(gs),
            profit=np.zeros(f.n_classes),
            pairs=grouped if relaxed[key][3] else np.zeros((f.n_classes, f.n_classes)),
            hard_weight=relaxed[key][0],
            hard_capacity=relaxed[key][1],
            soft_weight=empty,
            soft_capacity=np.zeros(0),
            penalty=np.zeros(0),
            upper=relaxed[key][2],
        )
        for key, gs in groups.items()
    ]
    return node_types, group_types


class PairPricer:
    """The pricing problems of the module docstring, one per bin type (:class:`odrp.core.colgen.Pricer`)."""

    def __init__(self, types: list[BinType], seeds: int = 10, columns: int = 20) -> None:
        self.types = types
        self.seeds, self.n_columns = seeds, columns
        self._models: dict[int, Any] = {}
        self.best_found: dict[int, Counts | None] = {}

    # ----------------------------------------------------------------- values
    def value(self, t: int, counts: Any) -> float:
        b = self.types[t]
        x = np.asarray(counts, dtype=float)
        over = np.maximum(0.0, b.soft_weight @ x - b.soft_capacity)
        return float(b.profit @ x + x @ b.pairs @ x / 2.0 - b.penalty @ over)

    def cost(self, t: int, counts: Counts) -> float:
        return -self.value(t, counts)

    def fits(self, t: int, counts: Any) -> bool:
        b = self.types[t]
        x = np.asarray(counts, dtype=float)
        slack = b.hard_capacity + CAPACITY_RTOL * np.maximum(1.0, np.abs(b.hard_capacity))
        return bool((b.hard_weight @ x <= slack).all() and (x <= b.upper).all())

    # -------------------------------------------------------------- heuristic
    def heuristic(self, t: int, pi: np.ndarray, mu: float, upper: Any, starts: list[Counts]) -> list[Counts]:
        b = self.types[t]
        top = np.minimum(np.asarray(upper, dtype=int), b.upper)
        room_limit = b.hard_capacity + CAPACITY_RTOL * np.maximum(1.0, np.abs(b.hard_capacity))
        linear = b.profit + pi
        found: dict[Counts, float] = {}

        def penalty(load: np.ndarray) -> float:
            return float(b.penalty @ np.maximum(0.0, load - b.soft_capacity))

        def search(n: np.ndarray) -> None:
            while True:
                hard_load, soft_load = b.hard_weight @ n, b.soft_weight @ n
                base = penalty(soft_load)
                # the penalty after adding (removing) one copy of each class
                over_add = np.maximum(0.0, soft_load[:, None] + b.soft_weight - b.soft_capacity[:, None])
                over_remove = np.maximum(0.0, soft_load[:, None] - b.soft_weight - b.soft_capacity[:, None])
                gain = linear + b.pairs @ n
                add = gain - (b.penalty @ over_add - base)
                remove = -gain - (b.penalty @ over_remove - base)
                can_add = (n < top) & (b.hard_weight <= (room_limit - hard_load)[:, None]).all(axis=0)
                best_add = np.where(can_add, add, -np.inf)
                best_remove = np.where(n > 0, remove, -np.inf)
                a, r = int(best_add.argmax()), int(best_remove.argmax())
                if best_add[a] > 1e-12 and best_add[a] >= best_remove[r]:
                    n[a] += 1
                    continue
                if best_remove[r] > 1e-12:
                    n[r] -= 1
                    continue
                inside = np.flatnonzero(n > 0)
                if not len(inside):
                    return
                # swap one copy of r (inside) for one of a: gain_a - gain_r - W_ra, penalties exact
                delta_soft = b.soft_weight[:, None, :] - b.soft_weight[:, inside][:, :, None]  # (S, R, C)
                over_swap = np.maximum(0.0, soft_load[:, None, None] + delta_soft - b.soft_capacity[:, None, None])
                swap = gain[None, :] - gain[inside][:, None] - b.pairs[inside]
                swap = swap - (np.tensordot(b.penalty, over_swap, axes=1) - base)
                delta_hard = b.hard_weight[:, None, :] - b.hard_weight[:, inside][:, :, None]
                ok = (n[None, :] < top[None, :]) & (delta_hard <= (room_limit - hard_load)[:, None, None]).all(axis=0)
                ok[np.arange(len(inside)), inside] = False
                swap = np.where(ok, swap, -np.inf)
                row, a = divmod(int(swap.argmax()), len(n))
                if swap[row, a] <= 1e-12:
                    return
                n[inside[row]] -= 1
                n[a] += 1

        def record(n: np.ndarray) -> None:
            score = self.value(t, n) + float(pi @ n)
            if score > -mu + 1e-12:
                found[tuple(int(v) for v in n)] = -mu - score

        seeds: list[np.ndarray] = []
        potential = linear + b.pairs.clip(min=0) @ top
        fitting = [a for a in range(len(top)) if top[a] > 0 and (b.hard_weight[:, a] <= room_limit).all()]
        for a in sorted(fitting, key=lambda a: -potential[a])[: self.seeds]:
            n = np.zeros(len(top), dtype=int)
            n[a] = 1
            seeds.append(n)
        seeds.extend(np.minimum(np.array(counts, dtype=int), top) for counts in starts)
        for n in seeds:
            if not self.fits(t, n):
                continue
            search(n)
            record(n)
        best = sorted(found.items(), key=lambda kv: kv[1])[: self.n_columns]
        self.best_found[t] = best[0][0] if best else None
        return [counts for counts, _ in best]

    # ------------------------------------------------------------------ exact
    def model_size(self, t: int) -> tuple[int, int, int]:
        """(variables, rows, nonzeros) of the exact pricing model of type ``t``, before it is built."""
        b = self.types[t]
        upper = b.upper.astype(np.int64)
        units = int(upper.sum())
        linked = np.triu(b.pairs != 0.0, k=1)
        pairs = int((np.outer(upper, upper) * linked).sum())
        hard, soft = len(b.hard_capacity), len(b.penalty)
        rows = 2 * pairs + units * (1 + hard) + hard + soft
        nonzeros = 4 * pairs + 2 * pairs * hard + units * (2 + 2 * hard + soft)
        return units + pairs + soft, rows, nonzeros

    def _model(self, t: int) -> tuple[Any, list[tuple[int, int]]]:
        if t in self._models:
            return self._models[t]
        import highspy

        b = self.types[t]
        n_classes = len(b.upper)
        units = [(a, j) for a in range(n_classes) for j in range(int(b.upper[a]))]
        index = {u: q for q, u in enumerate(units)}
        pairs = [
            (index[a, i], index[c, j], float(b.pairs[a, c]))
            for a in range(n_classes)
            for c in range(a + 1, n_classes)
            if b.pairs[a, c] != 0.0
            for i in range(int(b.upper[a]))
            for j in range(int(b.upper[c]))
        ]
        nu, npairs, ns = len(units), len(pairs), len(b.penalty)
        inf = highspy.kHighsInf
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.addVars(nu + npairs, np.zeros(nu + npairs), np.ones(nu + npairs))
        h.changeColsIntegrality(nu, np.arange(nu, dtype=np.int32), np.array([highspy.HighsVarType.kInteger] * nu))
        h.addVars(ns, np.zeros(ns), np.full(ns, inf))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.changeColsCost(npairs, np.arange(nu, nu + npairs, dtype=np.int32), np.array([w for *_, w in pairs]))
        h.changeColsCost(ns, np.arange(nu + npairs, nu + npairs + ns, dtype=np.int32), -b.penalty)
        for q, (x1, x2, w) in enumerate(pairs):
            y = nu + q
            if w > 0:
                for x in (x1, x2):
                    h.addRow(-inf, 0.0, 2, np.array([y, x], dtype=np.int32), np.array([1.0, -1.0]))
            else:
                h.addRow(-inf, 1.0, 3, np.array([x1, x2, y], dtype=np.int32), np.array([1.0, 1.0, -1.0]))
        every = np.arange(nu, dtype=np.int32)
        for d in range(len(b.hard_capacity)):
            slack = b.hard_capacity[d] + CAPACITY_RTOL * max(1.0, abs(b.hard_capacity[d]))
            h.addRow(-inf, slack, nu, every, np.array([b.hard_weight[d, a] for a, _ in units]))
        for d in range(ns):  # s_d >= soft_weight_d . x - soft_capacity_d
            index_d = np.append(every, nu + npairs + d).astype(np.int32)
            values = np.append([b.soft_weight[d, a] for a, _ in units], -1.0)
            h.addRow(-inf, float(b.soft_capacity[d]), nu + 1, index_d, values)
        # the RLT capacity cuts of the hard rows
        products = [(nu + q, x1, x2) for q, (x1, x2, w) in enumerate(pairs) if w > 0]
        hard = range(len(b.hard_capacity))
        slacks = [b.hard_capacity[d] + CAPACITY_RTOL * max(1.0, abs(b.hard_capacity[d])) for d in hard]
        add_capacity_products(h, products, [[b.hard_weight[d, a] for a, _ in units] for d in hard], slacks)
        for a, j in units:
            if j > 0:
                h.addRow(0.0, inf, 2, np.array([index[a, j - 1], index[a, j]], dtype=np.int32), np.array([1.0, -1.0]))
        h.setOptionValue("mip_rel_gap", 1e-7)
        h.setOptionValue("mip_abs_gap", 1e-9)
        h.setOptionValue("threads", 1)
        self._models[t] = (h, units)
        return self._models[t]

    def exact(self, t: int, pi: np.ndarray, mu: float, time_limit: float | None) -> Pricing:
        b = self.types[t]
        h, units = self._model(t)
        costs = np.array([b.profit[a] + pi[a] for a, _ in units])
        # the MIP start: the best configuration the heuristic found at these duals
        return price_units(h, units, len(b.upper), costs, time_limit, self.best_found.get(t), -mu)


@dataclass(frozen=True)
class ConfigurationBound:
    """What :func:`configuration_bound` proved."""

    bound: float
    """An upper bound of the family's optimum (inf when a part has no bound yet)."""
    knapsacks: Generation
    groups: Generation | None
    """None when no pair profit depends on the groups."""
    stats: dict[str, Any]


def _columns_of(f: Family, types: list[BinType], contents: np.ndarray) -> list[tuple[int, Counts]]:
    """(type, counts) of each bin of a solution; ``contents`` is (C, bins)."""
    type_of = {member: t for t, b in enumerate(types) for member in b.members}
    return [(type_of[j], tuple(int(v) for v in contents[:, j])) for j in range(contents.shape[1])]


def _part(
    f: Family,
    types: list[BinType],
    start: np.ndarray | None,
    deadline: float | None,
    settings: GenerationSettings,
    scale: float,
) -> tuple[Generation, Master]:
    pricer = PairPricer(types)
    master = Master(f.count, [len(b.members) for b in types], scale)
    if start is not None:
        for t, counts in _columns_of(f, types, start):
            if any(counts) and pricer.fits(t, counts):
                master.add(Column(t, counts, pricer.cost(t, counts)))
    return generate(master, pricer, deadline, settings), master


def configuration_bound(
    f: Family,
    deadline: float | None,
    start: np.ndarray | None = None,
    settings: GenerationSettings | None = None,
    group_share: float = 0.5,
) -> ConfigurationBound:
    """The bound of the module docstring, generated until ``deadline`` (perf_counter); ``start``: the
    counts of a feasible solution, whose knapsacks and groups are the masters' first columns.
    ``group_share``: the share of the time left that the group part gets (it runs second)."""
    settings = settings or GenerationSettings(exact_time_limit=5.0)
    node_types, group_types = bin_types(f)
    for types in (node_types, group_types):  # every pricing model within the memory budget
        pricer = PairPricer(types)
        for t in range(len(types)):
            check_model(*pricer.model_size(t), "the configuration bound's pricing model")
    scale = 1.0 + float(
        np.abs(f.profit).max(initial=0.0) * f.count.sum()
        + (np.abs(f.pair_knapsack) + np.abs(f.pair_group)) @ (f.count[f.pair_a] * f.count[f.pair_b])
    )
    clock = time.perf_counter()
    grouped = any(b.pairs.any() for b in group_types)
    node_deadline = deadline
    if deadline is not None and grouped:
        node_deadline = clock + (deadline - clock) * (1.0 - group_share)
    node, node_master = _part(f, node_types, start, node_deadline, settings, scale)
    stats: dict[str, Any] = {
        "knapsack_types": len(node_types),
        "knapsack_columns": sum(c is not None for c in node_master.columns),
        "knapsack_converged": node.converged,
        "knapsack_bound": -node.lp_value if node.converged else None,
        "knapsack_s": round(time.perf_counter() - clock, 3),
    }
    bound = -node.bound
    groups = None
    if grouped:
        clock = time.perf_counter()
        group_start = None if start is None else f.group_counts(start)
        groups, group_master = _part(f, group_types, group_start, deadline, settings, scale)
        bound -= groups.bound
        stats.update(
            {
                "group_types": len(group_types),
                "group_columns": sum(c is not None for c in group_master.columns),
                "group_converged": groups.converged,
                "group_s": round(time.perf_counter() - clock, 3),
            }
        )
    return ConfigurationBound(bound, node, groups, stats)
