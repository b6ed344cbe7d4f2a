"""The configuration (pattern) model of the knapsack family, for clusters of identical knapsacks.

Everything the objective charges inside one knapsack is a function of that knapsack's *pattern*,
the vector pi of copies of each class it holds: the profit sum_c profit[c] pi_c, the knapsack-level
pair profit sum_pairs coef_ab pi_a pi_b, and the soft-dimension penalty
penalty_d max(0, sum_c weight[d, c] pi_c - capacity_d). Identical knapsacks (same group, capacities,
profits and weights: R-Storm's machines of one rack) form a *type* tau with m_tau members. The model
(Gilmore and Gomory 1961 for cutting stock; Delorme, Iori, Martello 2016 for its use in packing)
chooses how many knapsacks of each type take each pattern:

    y[tau, pi] in {0, .., m_tau}          for every pattern pi that fits the hard dimensions
    sum_pi y[tau, pi] = m_tau             (the empty pattern is one of them)
    sum_{tau, pi} pi_c y[tau, pi] = count_c   (exactly one knapsack per copy)  or  <= count_c
    maximise  sum_{tau, pi} value_tau(pi) y[tau, pi]  +  group-level pair profits

The group-level pair profits (same rack, different machines) depend on the group counts
N[c, g] = sum_{tau in g, pi} pi_c y[tau, pi] only and are linearised as in the compact model
(:mod:`odrp.kinds.knapsack.exact.milp`). Within a knapsack the model is exact by construction (every
pattern is valued in plain Python), identical knapsacks are no longer told apart (no symmetry), and
the LP relaxation is the convex hull of each knapsack's patterns, which the compact model's
products cannot reach. The price is the enumeration: patterns are listed only while their number
stays below ``limit`` (:class:`TooManyPatterns` otherwise;
:attr:`~odrp.kinds.knapsack.exact.settings.KnapsackSettings.pattern_limit`). Identical racks stay
interchangeable: ordering them by load changed neither the LP bound nor the time on the R-Storm
instances (docs/methods/knapsack.md), so the model does without.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from odrp.core.exact import clear_values
from odrp.kinds.knapsack.exact.milp import Options, _Builder, knapsack_types
from odrp.kinds.knapsack.exact.settings import KnapsackSettings
from odrp.kinds.knapsack.family import Family


class TooManyPatterns(Exception):
    """The pattern enumeration passed its limit: use the compact model."""


def enumerate_patterns(f: Family, k: int, ub: np.ndarray, limit: int = KnapsackSettings.pattern_limit) -> np.ndarray:
    """(P, C): every count vector 0 <= pi <= ub[:, k] whose hard loads fit knapsack k."""
    classes = [c for c in range(f.n_classes) if ub[c, k]]
    weights = np.array([[f.weight[d, c, k] for c in classes] for d in f.hard]).reshape(len(f.hard), len(classes))
    room0 = np.array([f.capacity[d, k] for d in f.hard]) * (1 + 1e-9) + 1e-9
    found: list[list[int]] = []
    current = [0] * len(classes)

    def extend(i: int, room: np.ndarray) -> None:
        if i == len(classes):
            if len(found) >= limit:
                raise TooManyPatterns(f"more than {limit} patterns for knapsack {f.knapsacks[k]}")
            found.append(list(current))
            return
        w = weights[:, i]
        for t in range(int(ub[classes[i], k]) + 1):
            if (t * w > room).any():
                break
            current[i] = t
            extend(i + 1, room - t * w)
        current[i] = 0

    extend(0, room0)
    out = np.zeros((len(found), f.n_classes), dtype=int)
    out[:, classes] = np.array(found, dtype=int).reshape(len(found), len(classes))
    return out


def pattern_values(f: Family, k: int, patterns: np.ndarray, knapsack_coef: np.ndarray) -> np.ndarray:
    """The objective a knapsack like k earns with each pattern (profit, knapsack-level pairs, penalties)."""
    values = patterns @ f.profit[:, k]
    if len(knapsack_coef):
        values = values + (patterns[:, f.pair_a] * patterns[:, f.pair_b]) @ knapsack_coef
    for d in f.soft:
        over = np.maximum(0.0, patterns @ f.weight[d, :, k] - f.capacity[d, k])
        values = values - f.penalty[d] * over
    return values


class _PatternBuilder(_Builder):
    """The configuration model; the group-level products come from the compact builder."""

    def __init__(self, f: Family, options: Options, limit: int) -> None:
        super().__init__(f, options)
        self.types = knapsack_types(f)
        group_size = [len(f.group_members[f.groups[ks[0]]]) for ks in self.types]
        self.patterns = []
        for ks, size in zip(self.types, group_size, strict=True):
            coef = f.pair_knapsack - f.pair_group if size > 1 else f.pair_knapsack
            pats = enumerate_patterns(f, ks[0], self.ub, limit)
            limit -= len(pats)
            self.patterns.append((pats, pattern_values(f, ks[0], pats, coef)))

    def placement(self) -> None:
        f, m = self.f, self.m
        m.Y = pyo.Set(
            dimen=2, initialize=[(t, p) for t, (pats, _) in enumerate(self.patterns) for p in range(len(pats))]
        )
        m.y = pyo.Var(m.Y, domain=pyo.NonNegativeIntegers, bounds=lambda _, t, p: (0, len(self.types[t])))
        m.knapsacks_of_type = pyo.Constraint(
            range(len(self.types)),
            rule=lambda m, t: sum(m.y[t, p] for p in range(len(self.patterns[t][0]))) == len(self.types[t]),
        )
        self.columns = {
            c: [
                (t, p, int(pats[p, c])) for t, (pats, _) in enumerate(self.patterns) for p in np.flatnonzero(pats[:, c])
            ]
            for c in range(f.n_classes)
        }
        m.assign = pyo.Constraint(
            [c for c in range(f.n_classes) if self.columns[c]],
            rule=lambda m, c: (
                (sum(q * m.y[t, p] for t, p, q in self.columns[c]) == int(f.count[c]))
                if f.exactly_one
                else (sum(q * m.y[t, p] for t, p, q in self.columns[c]) <= int(f.count[c]))
            ),
        )
        self.objective_terms.append(
            sum(
                float(values[p]) * m.y[t, p]
                for t, (_, values) in enumerate(self.patterns)
                for p in range(len(values))
                if values[p]
            )
        )

    def in_group(self, c: int, g: int):
        return sum(q * self.m.y[t, p] for t, p, q in self.columns[c] if self.f.groups[self.types[t][0]] == g)

    def capacities(self) -> None:  # inside the patterns
        pass

    def soft_dimensions(self) -> None:  # inside the pattern values
        pass

    def pair_terms(self) -> None:
        _, group_level = self.pair_lists()
        if group_level:
            self.group_counts(group_level)
            terms = [(("g", a, g), ("g", b, g), coef) for a, b, g, coef in group_level]
            for (_, _, coef), product in zip(terms, self._products(terms), strict=True):
                self.objective_terms.append(coef * product)

    def in_symmetric_order(self, counts: np.ndarray) -> np.ndarray:
        return counts  # no symmetry rows: identical knapsacks are not told apart

    def set_start(self, counts: np.ndarray) -> None:
        """y at ``counts``: how many knapsacks of each type hold each pattern; then the group-level products."""
        clear_values(self.m)
        for t, (pats, _) in enumerate(self.patterns):
            index = {tuple(row): p for p, row in enumerate(pats.tolist())}
            for k in self.types[t]:
                p = index.get(tuple(counts[:, k].tolist()))
                if p is None:
                    raise ValueError(f"the start's load of knapsack {self.f.knapsacks[k]} is no pattern")
                self.m.y[t, p].set_value(self.m.y[t, p].value + 1)
        self.set_auxiliaries(counts)

    def counts(self, model: pyo.ConcreteModel) -> np.ndarray:
        """Counts per knapsack: the chosen patterns of each type handed to its knapsacks in order."""
        out = np.zeros((self.f.n_classes, self.f.n_knapsacks), dtype=int)
        for t, (pats, _) in enumerate(self.patterns):
            knapsacks = iter(self.types[t])
            for p in range(len(pats)):
                value = model.y[t, p].value
                for _ in range(round(value) if value is not None else 0):
                    out[:, next(knapsacks)] = pats[p]
        return out


def build(
    f: Family, options: Options | None = None, limit: int = KnapsackSettings.pattern_limit
) -> tuple[pyo.ConcreteModel, _PatternBuilder]:
    """The configuration model of ``f`` and its builder (which maps a solution back to counts)."""
    builder = _PatternBuilder(f, options or Options(), limit)
    builder.m.family_builder = builder  # a plain attribute, not a model component
    builder.placement()
    builder.pair_terms()
    builder.objective()
    return builder.m, builder


def n_patterns(builder: _PatternBuilder) -> int:
    return sum(len(pats) for pats, _ in builder.patterns)
