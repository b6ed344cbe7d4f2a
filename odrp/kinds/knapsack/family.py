"""The general knapsack-family problem that every kind of the family maps into.

Items come in *classes* of identical copies (an item of a classic kind is a class of one; the tasks of
one R-Storm component are one class of ``parallelism`` copies); knapsacks belong to *groups* (racks).
With n[c, k] the number of copies of class c in knapsack k and N[c, g] = sum_{k in g} n[c, k]:

    objective  sum_{c,k} profit[c, k] n[c, k]                                   (knapsack-dependent profit)
             + sum_{pairs (a, b)} same_knapsack_ab * sum_k n[a, k] n[b, k]        (pair profit, knapsack level)
             + sum_{pairs (a, b)} same_group_ab * (sum_g N[a, g] N[b, g] - sum_k n[a, k] n[b, k])
                                                                                  (pair profit, group level)
             - sum_{soft d, k} penalty_d * max(0, load[d, k] - capacity[d, k])   (soft dimensions)
    subject to load[d, k] = sum_c weight[d, c, k] n[c, k] <= capacity[d, k]     (hard dimensions)
               sum_k n[c, k] = count_c  (exactly one knapsack per copy)  or  <= count_c  (at most one)

maximised or minimised (``sense``). A pair profit is per pair of copies, one of a and one of b,
a != b. Every kind is a special case (see :mod:`odrp.kinds.knapsack.mapping`); the MILP of
:mod:`odrp.kinds.knapsack.exact.milp` and the heuristics of :mod:`odrp.heuristics.knapsack` work on this form.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from odrp.core.result import Sense

KINDS = ("kp", "mkp", "gap", "mdkp", "qkp", "qmkp", "qm3dkp")
"""The kinds of the family: every one maps into :class:`Family`."""

CAPACITY_RTOL = 1e-9


@dataclass(frozen=True)
class Family:
    """A general knapsack-family instance (arrays are float64; ``counts`` are int arrays of shape (C, K))."""

    name: str
    sense: Sense
    classes: tuple[tuple[Hashable, ...], ...]
    """The members (the kind's item keys) of each class, in the order copies are handed out."""
    knapsacks: tuple[str, ...]
    groups: tuple[int, ...]
    """The group (rack) of each knapsack."""
    profit: np.ndarray
    """(C, K): profit of one copy of class c in knapsack k."""
    weight: np.ndarray
    """(D, C, K): weight of one copy of class c in knapsack k in dimension d."""
    capacity: np.ndarray
    """(D, K)."""
    penalty: tuple[float | None, ...]
    """Per dimension: None for a hard dimension, else the penalty per unit of overload."""
    pair_a: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    pair_b: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    pair_knapsack: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Profit per pair of copies (one of a, one of b) in the same knapsack."""
    pair_group: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """Profit per pair of copies in two different knapsacks of the same group."""
    exactly_one: bool = False
    dimensions: tuple[str, ...] = ()

    # -- sizes ------------------------------------------------------------------------------------
    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_knapsacks(self) -> int:
        return len(self.knapsacks)

    @property
    def n_dimensions(self) -> int:
        return self.capacity.shape[0]

    @property
    def n_pairs(self) -> int:
        return len(self.pair_a)

    @cached_property
    def count(self) -> np.ndarray:
        return np.array([len(m) for m in self.classes], dtype=int)

    @cached_property
    def hard(self) -> tuple[int, ...]:
        return tuple(d for d, p in enumerate(self.penalty) if p is None)

    @cached_property
    def soft(self) -> tuple[int, ...]:
        return tuple(d for d, p in enumerate(self.penalty) if p is not None)

    @cached_property
    def group_members(self) -> tuple[tuple[int, ...], ...]:
        """Knapsack indices of each group, groups numbered 0.. in order of first appearance."""
        out: dict[int, list[int]] = {}
        for k, g in enumerate(self.groups):
            out.setdefault(g, []).append(k)
        return tuple(tuple(v) for v in out.values())

    @property
    def sign(self) -> float:
        """+1 for a maximisation, -1 for a minimisation: ``sign * objective`` is always maximised."""
        return 1.0 if self.sense == "max" else -1.0

    # -- the objective, from counts ---------------------------------------------------------------
    def loads(self, counts: np.ndarray) -> np.ndarray:
        """(D, K): the load of every knapsack in every dimension."""
        return np.einsum("dck,ck->dk", self.weight, counts)

    def group_counts(self, counts: np.ndarray) -> np.ndarray:
        """(C, G): copies of each class in each group."""
        return np.stack([counts[:, list(ks)].sum(axis=1) for ks in self.group_members], axis=1)

    def pair_value(self, counts: np.ndarray) -> float:
        if not self.n_pairs:
            return 0.0
        a, b = counts[self.pair_a], counts[self.pair_b]
        same_knapsack = (a * b).sum(axis=1)
        grouped = self.group_counts(counts)
        same_group = (grouped[self.pair_a] * grouped[self.pair_b]).sum(axis=1) - same_knapsack
        return float(self.pair_knapsack @ same_knapsack + self.pair_group @ same_group)

    def penalty_value(self, counts: np.ndarray) -> float:
        if not self.soft:
            return 0.0
        over = np.maximum(0.0, self.loads(counts) - self.capacity)
        return float(sum(self.penalty[d] * over[d].sum() for d in self.soft))  # type: ignore[operator]

    def objective(self, counts: np.ndarray) -> float:
        return float((self.profit * counts).sum()) + self.pair_value(counts) - self.penalty_value(counts)

    def violations(self, counts: np.ndarray) -> list[str]:
        """Why ``counts`` is infeasible (empty when it is feasible)."""
        out: list[str] = []
        if (counts < 0).any():
            out.append("negative counts")
        placed = counts.sum(axis=1)
        bad = np.flatnonzero(placed != self.count) if self.exactly_one else np.flatnonzero(placed > self.count)
        out.extend(f"class {c}: {placed[c]} copies placed, {self.count[c]} exist" for c in bad)
        loads = self.loads(counts)
        for d in self.hard:
            slack = self.capacity[d] + CAPACITY_RTOL * np.maximum(1.0, np.abs(self.capacity[d]))
            out.extend(
                f"knapsack {self.knapsacks[k]}: dimension {d} overloaded" for k in np.flatnonzero(loads[d] > slack)
            )
        return out

    # -- back to the kind ---------------------------------------------------------------------------
    def assignment(self, counts: np.ndarray) -> dict[Hashable, int]:
        """Item key -> knapsack index: the copies of each class handed out in member order."""
        out: dict[Hashable, int] = {}
        for c, members in enumerate(self.classes):
            it = iter(members)
            for k in range(self.n_knapsacks):
                for _ in range(int(counts[c, k])):
                    out[next(it)] = k
        return out

    def counts_of(self, assignment: dict[Hashable, int]) -> np.ndarray:
        """The counts of an item key -> knapsack assignment (keys not in it are left out)."""
        counts = np.zeros((self.n_classes, self.n_knapsacks), dtype=int)
        for c, members in enumerate(self.classes):
            for key in members:
                if assignment.get(key) is not None:
                    counts[c, assignment[key]] += 1
        return counts
