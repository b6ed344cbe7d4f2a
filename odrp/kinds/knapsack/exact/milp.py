"""The knapsack-family MILP: one model for kp, mkp, gap, mdkp, qkp, qmkp and R-Storm's QM3DKP.

Notation of :mod:`odrp.kinds.knapsack.family`. Variables and constraints:

- n[c, k] in {0, .., u[c, k]}: copies of class c in knapsack k, with u[c, k] = min(count_c,
  floor(capacity / weight) over the hard dimensions); binary when u <= 1 (every classic item);
  absent when u = 0. One integer per class and knapsack replaces ``count_c`` symmetric binaries
  (the tasks of an R-Storm component, identical items of a classic kind).
- assignment: sum_k n[c, k] = count_c (GAP, QM3DKP) or <= count_c (the knapsack kinds).
- hard dimension d: sum_c weight[d, c, k] n[c, k] <= capacity[d, k] (rows that cannot bind are left out).
- soft dimension d: overload s[d, k] >= sum_c weight[d, c, k] n[c, k] - capacity[d, k], s >= 0,
  charged penalty_d * s in the objective (QM3DKP's CPU and bandwidth, the paper's section 3).
- pair profits, knapsack level: the product n[a, k] n[b, k] of every pair with a nonzero coefficient
  (same_knapsack - same_group in a group of two or more knapsacks, same_knapsack otherwise), and,
  group level, N[a, g] N[b, g] with N[c, g] = sum_{k in g} n[c, k] and coefficient same_group.
  Products are linearised exactly. One factor e is *expanded*: e itself when it is binary, else its
  one-hot form e = sum_t t v_t, sum_t v_t <= 1, v_t binary (v_t: exactly t copies). With z_t standing
  for v_t * o (o the other factor, upper bound U_o; U_o(t) <= U_o the most copies of o that fit in the
  knapsack beside t copies of e, hard dimensions):
      z_t <= U_o(t) v_t,   sum_t z_t <= o                    (the product from above; enough when the
                                                             coefficient rewards the product)
      z_t >= o - U_o (1 - v_t)                               (from below, only when it is penalised)
  and the product is sum_t t z_t. For two binaries this is the standard linearisation z <= x_a,
  z <= x_b (Gallo, Hammer, Simeone 1980; Billionnet and Calmels 1996). ``partner_bounds=False`` uses
  U_o for every t (the textbook model of :mod:`.textbook`).
- ``linearisation="glover"``: for binary pairs with a rewarded coefficient, Glover's (1975) compact
  form instead: per item a and knapsack k one w[a, k] <= U x[a, k], w[a, k] <= sum_b q_ab x[b, k],
  with U the sum of a's positive coefficients (n variables per knapsack instead of one per pair).
- ``capacity_cuts``: the reformulation-linearisation cuts (Adams and Sherali 1986, level 1) of a hard
  capacity row multiplied by the indicator that class a has t copies in knapsack k (n[a, k] itself
  when it is binary):
      sum_b weight[d, b, k] ([n[a, k] = t] n[b, k]) <= (capacity[d, k] - t weight[d, a, k]) [n[a, k] = t],
  written with the product variables of a's pairs (valid because every product variable is at most
  its product). They cut the LP bound of a 20-item QMKP by a fifth but leave most QKP bounds where
  they are (docs/methods/knapsack.md), so they are on by default only with two knapsacks or more.
- ``objective_bound``: a proven bound on the objective (the surrogate knapsack bound of a multiple
  knapsack, :mod:`odrp.kinds.knapsack.exact.bounds`) as the cut objective <= bound.
- ``objective_floor``: the value of a known solution (the warm start of
  :func:`odrp.kinds.knapsack.exact.solve`) as the row objective >= value: the search skips everything
  worse, and a time-limited run returns the known solution when it has found nothing better.
- ``symmetry``: identical knapsacks (same group, capacities, profits and weights) are ordered by
  load in the first hard dimension (or by copies): load[k] >= load[k'] for consecutive identical
  k < k'. Any solution can be permuted into this order, so the optimum is kept.

Every linearisation is exact at integer points, so the optimum is the family's (tests check every
kind against brute force). ``integer_auxiliaries`` makes every auxiliary variable integer (z, w, s
in units 1/L with L the common denominator of the soft dimension's data) for CP-SAT, which accepts
integer variables only; at an optimum they take integer values anyway.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numvalue import is_constant

from odrp.core.exact import clear_values
from odrp.core.memory import check_model
from odrp.core.solvers.cpsat import integer_scale
from odrp.kinds.knapsack.exact.settings import Linearisation
from odrp.kinds.knapsack.family import Family


@dataclass(frozen=True)
class Options:
    """What one model is built with: :func:`odrp.kinds.knapsack.exact.solve.solve` resolves it per model
    from :class:`~odrp.kinds.knapsack.exact.settings.KnapsackSettings`, the solver and the bounds it has."""

    linearisation: Linearisation = "standard"
    """Products of two rewarded binaries: one variable each (``standard``) or Glover's form."""
    capacity_cuts: bool = True
    """The RLT capacity cuts."""
    symmetry: bool = True
    """The rows ordering identical knapsacks by load."""
    partner_bounds: bool = True
    """Bound a product z_t by the copies of its partner that fit beside t copies (U_o(t)); off: by U_o."""
    integer_auxiliaries: bool = False
    """Every auxiliary variable integer (CP-SAT)."""
    objective_bound: float | None = None
    """A proven bound on the objective (:func:`odrp.kinds.knapsack.exact.bounds.surrogate_bound`), added as a cut."""
    objective_floor: float | None = None
    """The value of a known solution (the warm start): only solutions at least as good are searched."""


def upper_bounds(f: Family) -> np.ndarray:
    """u[c, k]: the most copies of class c that fit in knapsack k alone (hard dimensions)."""
    ub = np.repeat(f.count[:, None], f.n_knapsacks, axis=1).astype(float)
    for d in f.hard:
        w, cap = f.weight[d], f.capacity[d][None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            fit = np.where(w > 0, np.floor(cap / np.where(w > 0, w, 1.0) + 1e-9), np.inf)
        ub = np.minimum(ub, np.where(cap >= 0, fit, 0.0))
    return ub.astype(int)


def infeasible_classes(f: Family) -> list[int]:
    """Classes that cannot place all their copies even alone (only matters with exactly-one)."""
    if not f.exactly_one:
        return []
    return [c for c in range(f.n_classes) if upper_bounds(f)[c].sum() < f.count[c]]


@dataclass
class _Product:
    """count(e) * count(o) as sum_t t z_t, z_t = [count(e) = t] * count(o) <= bounds[t] [count(e) = t]."""

    e: tuple
    o: tuple
    levels: list[tuple[int, object]]
    bounds: list[int]
    coef: float


class _Builder:
    """Builds the model step by step; each method adds one block of the docstring above."""

    def __init__(self, f: Family, options: Options) -> None:
        self.f, self.options = f, options
        self.ub = upper_bounds(f)
        self.m = pyo.ConcreteModel(name=f"knapsack-family-{f.name}")
        self.objective_terms: list = []
        self.aux_domain = pyo.NonNegativeIntegers if options.integer_auxiliaries else pyo.NonNegativeReals
        self.products: list[_Product] = []
        self.glover_rows: dict[tuple[int, int], list[tuple[int, float]]] = {}

    # ---- variables n[c, k], assignment, capacities -----------------------------------------------
    def placement(self) -> None:
        f, m, ub = self.f, self.m, self.ub
        m.N = pyo.Set(
            dimen=2, initialize=[(c, k) for c in range(f.n_classes) for k in range(f.n_knapsacks) if ub[c, k]]
        )
        m.n = pyo.Var(m.N, domain=pyo.NonNegativeIntegers, bounds=lambda _, c, k: (0, int(ub[c, k])))
        for c, k in m.N:
            if ub[c, k] == 1:
                m.n[c, k].domain = pyo.Binary
        self.by_class = {c: [k for k in range(f.n_knapsacks) if ub[c, k]] for c in range(f.n_classes)}
        m.assign = pyo.Constraint(
            [c for c in range(f.n_classes) if self.by_class[c]],
            rule=lambda m, c: (
                (sum(m.n[c, k] for k in self.by_class[c]) == int(f.count[c]))
                if f.exactly_one
                else (sum(m.n[c, k] for k in self.by_class[c]) <= int(f.count[c]))
            ),
        )
        self.profit_terms()

    def profit_terms(self) -> None:
        f, m = self.f, self.m
        self.objective_terms.append(sum(float(f.profit[c, k]) * m.n[c, k] for c, k in m.N if f.profit[c, k]))

    def load(self, d: int, k: int):
        return sum(
            float(self.f.weight[d, c, k]) * self.m.n[c, k]
            for c in range(self.f.n_classes)
            if self.ub[c, k] and self.f.weight[d, c, k]
        )

    def max_load(self, d: int, k: int) -> float:
        return float((self.f.weight[d, :, k] * self.ub[:, k]).sum())

    def capacities(self) -> None:
        f, m = self.f, self.m
        rows = [(d, k) for d in f.hard for k in range(f.n_knapsacks) if self.max_load(d, k) > f.capacity[d, k]]
        m.capacity = pyo.Constraint(rows, rule=lambda m, d, k: self.load(d, k) <= float(f.capacity[d, k]))

    def soft_dimensions(self) -> None:
        f, m = self.f, self.m
        assert not f.soft or f.sense == "max", "penalised overload is only defined for a maximisation"
        rows = [(d, k) for d in f.soft for k in range(f.n_knapsacks) if self.max_load(d, k) > f.capacity[d, k]]
        unit = {d: self._overload_unit(d) for d in f.soft}
        m.S = pyo.Set(dimen=2, initialize=rows)
        m.overload = pyo.Var(
            m.S,
            domain=self.aux_domain,
            bounds=lambda _, d, k: (0, math.ceil((self.max_load(d, k) - f.capacity[d, k]) / unit[d])),
        )
        m.soft_capacity = pyo.Constraint(
            m.S, rule=lambda m, d, k: self.load(d, k) - unit[d] * m.overload[d, k] <= float(f.capacity[d, k])
        )
        self.objective_terms.append(-sum(f.penalty[d] * unit[d] * m.overload[d, k] for d, k in m.S))

    def _overload_unit(self, d: int) -> float:
        """1 for a continuous overload; for an integer one, 1/L with L the data's common denominator."""
        if not self.options.integer_auxiliaries:
            return 1.0
        data = [*self.f.weight[d].ravel(), *self.f.capacity[d]]
        return 1.0 / integer_scale(data)

    # ---- pair profits ---------------------------------------------------------------------------
    def pair_lists(self) -> tuple[list, list]:
        """(a, b, k, coefficient) of every knapsack-level product, (a, b, g, coefficient) of every group-level one."""
        f = self.f
        group_size = {k: len(f.group_members[f.groups[k]]) for k in range(f.n_knapsacks)}
        knapsack_level, group_level = [], []
        for p in range(f.n_pairs):
            a, b = int(f.pair_a[p]), int(f.pair_b[p])
            qk, qg = float(f.pair_knapsack[p]), float(f.pair_group[p])
            for k in range(f.n_knapsacks):
                coef = qk - qg if group_size[k] > 1 else qk
                if coef and self.ub[a, k] and self.ub[b, k]:
                    knapsack_level.append((a, b, k, coef))
            for g, ks in enumerate(f.group_members):
                if qg and len(ks) > 1 and self.ub[a, list(ks)].sum() and self.ub[b, list(ks)].sum():
                    group_level.append((a, b, g, qg))
        return knapsack_level, group_level

    def group_counts(self, group_level: list) -> None:
        """N[c, g]: copies of class c in group g, for the classes of the group-level products."""
        m = self.m
        m.G = pyo.Set(dimen=2, initialize=sorted({(c, g) for a, b, g, _ in group_level for c in (a, b)}))
        m.group_count = pyo.Var(
            m.G, domain=pyo.NonNegativeIntegers, bounds=lambda _, c, g: (0, self._slot_ub(("g", c, g)))
        )
        m.group_count_def = pyo.Constraint(m.G, rule=lambda m, c, g: m.group_count[c, g] == self.in_group(c, g))

    def in_group(self, c: int, g: int):
        return sum(self.m.n[c, k] for k in self.f.group_members[g] if self.ub[c, k])

    def pair_terms(self) -> None:
        knapsack_level, group_level = self.pair_lists()
        glover = self._glover_pairs(knapsack_level) if self.options.linearisation == "glover" else set()
        if group_level:
            self.group_counts(group_level)
        terms = [(("k", a, k), ("k", b, k), coef) for a, b, k, coef in knapsack_level if (a, b, k) not in glover]
        terms += [(("g", a, g), ("g", b, g), coef) for a, b, g, coef in group_level]
        for (_, _, coef), product in zip(terms, self._products(terms), strict=True):
            self.objective_terms.append(coef * product)
        if glover:
            self._glover(knapsack_level, glover)

    def _slot_var(self, slot: tuple):
        level, c, where = slot
        return self.m.n[c, where] if level == "k" else self.m.group_count[c, where]

    def _slot_ub(self, slot: tuple) -> int:
        level, c, where = slot
        if level == "k":
            return int(self.ub[c, where])
        return int(min(self.f.count[c], self.ub[c, list(self.f.group_members[where])].sum()))

    def _partner_bound(self, e: tuple, o: tuple, t: int) -> int:
        """Most copies of o beside t copies of e in one knapsack (hard dimensions); U_o at group level."""
        ub = self._slot_ub(o)
        if e[0] != "k" or not self.options.partner_bounds:
            return ub
        (_, a, k), (_, b, _) = e, o
        for d in self.f.hard:
            wa, wb, cap = self.f.weight[d, a, k], self.f.weight[d, b, k], self.f.capacity[d, k]
            if wb > 0:
                ub = min(ub, max(0, math.floor((cap - t * wa) / wb + 1e-9)))
        return int(ub)

    def _products(self, terms: list[tuple[tuple, tuple, float]]) -> list:
        """Expressions equal to count(first) * count(second) wherever the objective pushes them."""
        m = self.m
        expanded = [(e, o) if self._slot_ub(e) <= self._slot_ub(o) else (o, e) for e, o, _ in terms]
        onehot = sorted({e for e, _ in expanded if self._slot_ub(e) > 1})
        m.V = pyo.Set(dimen=4, initialize=[(*e, t) for e in onehot for t in self._levels(e)])
        m.v = pyo.Var(m.V, domain=pyo.Binary)
        m.onehot_one = pyo.Constraint(
            range(len(onehot)), rule=lambda m, i: sum(m.v[(*onehot[i], t)] for t in self._levels(onehot[i])) <= 1
        )
        m.onehot_count = pyo.Constraint(
            range(len(onehot)),
            rule=lambda m, i: (
                self._slot_var(onehot[i]) == sum(t * m.v[(*onehot[i], t)] for t in self._levels(onehot[i]))
            ),
        )
        self.products = [
            _Product(e, o, self._level_vars(e), [self._partner_bound(e, o, t) for t in self._levels(e)], coef)
            for (e, o), (_, _, coef) in zip(expanded, terms, strict=True)
        ]
        spec = self.products
        m.Z = pyo.Set(dimen=2, initialize=[(p, i) for p, pr in enumerate(spec) for i in range(len(pr.levels))])
        m.z = pyo.Var(m.Z, domain=self.aux_domain, bounds=lambda _, p, i: (0, spec[p].bounds[i]))
        m.z_upper = pyo.Constraint(m.Z, rule=lambda m, p, i: m.z[p, i] <= spec[p].bounds[i] * spec[p].levels[i][1])
        m.z_total = pyo.Constraint(
            range(len(spec)),
            rule=lambda m, p: sum(m.z[p, i] for i in range(len(spec[p].levels))) <= self._slot_var(spec[p].o),
        )
        lower = [(p, i) for p, i in m.Z if spec[p].coef * self.f.sign < 0]
        m.z_lower = pyo.Constraint(
            lower,
            rule=lambda m, p, i: (
                m.z[p, i] >= self._slot_var(spec[p].o) - self._slot_ub(spec[p].o) * (1 - spec[p].levels[i][1])
            ),
        )
        return [sum(t * m.z[p, i] for i, (t, _) in enumerate(pr.levels)) for p, pr in enumerate(spec)]

    def _level_vars(self, slot: tuple) -> list[tuple[int, object]]:
        """[(t, binary)]: the one-hot form of a count (the count itself when it is binary)."""
        if self._slot_ub(slot) == 1:
            return [(1, self._slot_var(slot))]
        return [(t, self.m.v[(*slot, t)]) for t in self._levels(slot)]

    def _levels(self, slot: tuple) -> range:
        return range(1, self._slot_ub(slot) + 1)

    def _glover_pairs(self, knapsack_level: list) -> set[tuple[int, int, int]]:
        sign = 1 if self.f.sense == "max" else -1
        return {
            (a, b, k)
            for a, b, k, coef in knapsack_level
            if self.ub[a, k] == 1 and self.ub[b, k] == 1 and sign * coef > 0
        }

    def _glover(self, knapsack_level: list, glover: set[tuple[int, int, int]]) -> None:
        m, sense_max = self.m, self.f.sense == "max"
        rows: dict[tuple[int, int], list[tuple[int, float]]] = {}
        for a, b, k, coef in knapsack_level:
            if (a, b, k) in glover:
                rows.setdefault((a, k), []).append((b, coef))
        self.glover_rows = rows
        m.W = pyo.Set(dimen=2, initialize=sorted(rows))
        bound = {key: sum(abs(q) for _, q in row) for key, row in rows.items()}
        m.w = pyo.Var(m.W, domain=self.aux_domain, bounds=lambda _, a, k: (0, bound[a, k]))
        m.glover_x = pyo.Constraint(m.W, rule=lambda m, a, k: m.w[a, k] <= bound[a, k] * m.n[a, k])
        m.glover_sum = pyo.Constraint(
            m.W, rule=lambda m, a, k: m.w[a, k] <= sum(abs(q) * m.n[b, k] for b, q in rows[a, k])
        )
        self.objective_terms.append((1 if sense_max else -1) * sum(m.w[a, k] for a, k in m.W))

    # ---- cuts and symmetry ------------------------------------------------------------------------
    def capacity_cuts(self) -> None:
        """Level-t RLT cuts: t copies of a in knapsack k leave capacity - t w_a to a's partners."""
        f, m = self.f, self.m
        partners: dict[tuple, list[tuple[int, tuple, object]]] = {}  # (a, k, t) -> [(class b, level binary, term)]
        for p, pr in enumerate(self.products):
            if pr.e[0] != "k":
                continue
            (_, a, k), (_, b, _) = pr.e, pr.o
            for i, (t, _) in enumerate(pr.levels):
                partners.setdefault((a, k, t), []).append((b, m.z[p, i]))
            if self._slot_ub(pr.o) == 1:  # o binary: its level 1 is its count, the product is x_o * n_a
                partners.setdefault((b, k, 1), []).append((a, sum(t * m.z[p, i] for i, (t, _) in enumerate(pr.levels))))
        rows = []
        for (a, k, t), terms in partners.items():
            level = dict(self._level_vars(("k", a, k)))[t]
            for d in f.hard:
                room = float(f.capacity[d, k] - t * f.weight[d, a, k])
                weighted = [(float(f.weight[d, b, k]), b, term) for b, term in terms if f.weight[d, b, k]]
                if sum(w * self.ub[b, k] for w, b, _ in weighted) > room:
                    rows.append(([(w, term) for w, _, term in weighted], room, level))
        m.capacity_cut = pyo.Constraint(
            range(len(rows)), rule=lambda m, r: sum(w * z for w, z in rows[r][0]) <= rows[r][1] * rows[r][2]
        )

    def _symmetry_key(self) -> np.ndarray:
        """(C, K): what the symmetry rows weigh copies by (first hard dimension, else one per copy)."""
        f = self.f
        return f.weight[f.hard[0]] if f.hard and f.weight[f.hard[0]].any() else np.ones((f.n_classes, f.n_knapsacks))

    def symmetry(self) -> None:
        f, m = self.f, self.m
        key = self._symmetry_key()

        def load(k: int):
            return sum(float(key[c, k]) * m.n[c, k] for c in range(f.n_classes) if self.ub[c, k])

        pairs = list(_identical_neighbours(f))
        m.symmetry = pyo.Constraint(range(len(pairs)), rule=lambda m, i: ordered(load(pairs[i][0]), load(pairs[i][1])))

    # ---- a start: every integer variable at given counts ------------------------------------------
    def in_symmetric_order(self, counts: np.ndarray) -> np.ndarray:
        """``counts`` with the contents of identical knapsacks permuted into the order of the symmetry
        rows (by decreasing key load; the objective is unchanged: the knapsacks are identical)."""
        if not self.options.symmetry:
            return counts
        key, out = self._symmetry_key(), counts.copy()
        for ks in knapsack_types(self.f):
            loads = [float(key[:, k] @ counts[:, k]) for k in ks]
            ranked = sorted(range(len(ks)), key=lambda i: -loads[i])  # stable: ties keep their order
            out[:, list(ks)] = counts[:, [ks[i] for i in ranked]]
        return out

    def set_start(self, counts: np.ndarray) -> None:
        """Give every integer variable its value at ``counts`` (a feasible solution's counts)."""
        clear_values(self.m)
        for (c, k), var in self.m.n.items():
            var.set_value(int(counts[c, k]))
        self.set_auxiliaries(counts)

    def set_auxiliaries(self, counts: np.ndarray) -> None:
        """Group counts, one-hot levels, products, overloads and Glover's w at ``counts``: the values
        the rows force (products and w at their largest, overloads at their smallest), so the start is
        feasible for the model and has the family's objective. Continuous ones are set too; harmless."""
        f, m = self.f, self.m
        if m.component("group_count") is not None:
            for (c, g), var in m.group_count.items():
                var.set_value(int(self._slot_value(("g", c, g), counts)))
        if m.component("v") is not None:
            for (level, c, where, t), var in m.v.items():
                var.set_value(int(self._slot_value((level, c, where), counts) == t))
        for p, product in enumerate(self.products):
            e, o = self._slot_value(product.e, counts), self._slot_value(product.o, counts)
            for i, (t, _) in enumerate(product.levels):
                m.z[p, i].set_value(o if e == t else 0)
        if m.component("overload") is not None:
            loads = f.loads(counts)
            for (d, k), var in m.overload.items():
                unit = self._overload_unit(d)
                var.set_value(max(0, math.ceil((loads[d, k] - f.capacity[d, k]) / unit - 1e-9)))
        if m.component("w") is not None:
            for (a, k), var in m.w.items():
                partners = self.glover_rows[a, k]
                var.set_value(int(counts[a, k]) * sum(abs(q) * int(counts[b, k]) for b, q in partners))

    def _slot_value(self, slot: tuple, counts: np.ndarray) -> int:
        level, c, where = slot
        if level == "k":
            return int(counts[c, where])
        return int(counts[c, list(self.f.group_members[where])].sum())

    def objective(self) -> None:
        sense = pyo.maximize if self.f.sense == "max" else pyo.minimize
        self.m.objective = pyo.Objective(expr=sum(self.objective_terms), sense=sense)
        expr = sum(self.objective_terms)
        bound, floor = self.options.objective_bound, self.options.objective_floor
        if bound is not None:
            self.m.objective_cut = pyo.Constraint(expr=expr <= bound if self.f.sense == "max" else expr >= bound)
        if floor is not None:
            self.m.objective_floor = pyo.Constraint(expr=expr >= floor if self.f.sense == "max" else expr <= floor)


def ordered(larger, smaller):
    """The row ``larger >= smaller``, skipped when both sides are constants (nothing fits)."""
    if is_constant(larger) and is_constant(smaller):
        return pyo.Constraint.Skip
    return larger >= smaller


def knapsack_types(f: Family) -> list[tuple[int, ...]]:
    """Classes of identical knapsacks (same group, capacities, profits and weights), in index order."""
    types: dict[bytes, list[int]] = {}
    for k in range(f.n_knapsacks):
        signature = (
            np.int64(f.groups[k]).tobytes()
            + f.capacity[:, k].tobytes()
            + f.profit[:, k].tobytes()
            + f.weight[:, :, k].tobytes()
        )
        types.setdefault(signature, []).append(k)
    return [tuple(ks) for ks in types.values()]


def _identical_neighbours(f: Family) -> Iterator[tuple[int, int]]:
    """Consecutive pairs (k, k') of identical knapsacks, k < k'."""
    for ks in knapsack_types(f):
        yield from itertools.pairwise(ks)


def size(f: Family, options: Options = Options()) -> tuple[int, int, int]:
    """(variables, constraints, nonzeros) of the model of ``f``: an upper estimate in closed form from the
    family's arrays (counts that fit, pairs, levels), computed before anything is built."""
    ub = upper_bounds(f)
    cells = int((ub > 0).sum())
    levels = int(ub[ub > 1].sum())
    z = 0
    if f.n_pairs:
        ua, ub_b = ub[f.pair_a], ub[f.pair_b]
        z += int(np.minimum(ua, ub_b).sum())
        grouped = int((f.pair_group != 0).sum())
        wide = [ks for ks in f.group_members if len(ks) > 1]
        if grouped and wide:
            z += grouped * len(wide) * int(max(1, min(f.count.max(), ub.sum(axis=1).max())))
    hard = len(f.hard)
    variables = cells + levels + z + len(f.soft) * f.n_knapsacks + f.n_classes * len(f.group_members)
    constraints = f.n_classes + f.n_dimensions * f.n_knapsacks + 2 * cells + 3 * z + f.n_knapsacks
    nonzeros = cells * (2 + f.n_dimensions) + 2 * levels + 5 * z + f.n_classes * f.n_knapsacks
    if options.capacity_cuts:
        constraints += (cells + levels) * hard
        nonzeros += 2 * z * hard + (cells + levels) * hard
    return variables, constraints, nonzeros


def build(f: Family, options: Options = Options(), checked: bool = False) -> pyo.ConcreteModel:
    """The MILP of ``f``; its variables ``n[c, k]`` are the counts (``model.family_builder`` built it).
    Refused before it is built when its estimated size (:func:`size`) is over the memory budget
    (``checked``: the caller has checked a size of its own)."""
    if not checked:
        check_model(*size(f, options), "the compact knapsack model")
    builder = _Builder(f, options)
    builder.m.family_builder = builder  # a plain attribute, not a model component
    builder.placement()
    builder.capacities()
    builder.soft_dimensions()
    builder.pair_terms()
    if options.capacity_cuts:
        builder.capacity_cuts()
    if options.symmetry:
        builder.symmetry()
    builder.objective()
    return builder.m


def counts(model: pyo.ConcreteModel, f: Family) -> np.ndarray:
    """The counts of the model's loaded solution."""
    out = np.zeros((f.n_classes, f.n_knapsacks), dtype=int)
    for (c, k), var in model.n.items():
        if var.value is not None:
            out[c, k] = round(var.value)
    return out
