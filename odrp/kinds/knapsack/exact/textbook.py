"""The textbook model of every kind of the knapsack family: what a practitioner writes in an afternoon.

One binary x[j, k] per item j (an R-Storm task is an item) and knapsack k, with the notation of
:mod:`odrp.kinds.knapsack.family` read item by item:

    max (or min)  sum_{j,k} p[j, k] x[j, k]
                + sum_{pairs (i, j)} sum_k (q_knapsack_ij - q_group_ij) z[i, j, k]     (same knapsack)
                + sum_{pairs (i, j)} sum_g q_group_ij y[i, j, g]                       (same group)
                - sum_{soft d, k} penalty_d s[d, k]                                    (overload)
    s.t.  sum_k x[j, k] = 1 (gap, qm3dkp) or <= 1 (kp, mkp, mdkp, qkp, qmkp)         (assignment)
          sum_j w[d, j, k] x[j, k] <= c[d, k]                          hard dimension d (capacity)
          sum_j w[d, j, k] x[j, k] - s[d, k] <= c[d, k],  s >= 0        soft dimension d (the paper's
                                                                        CPU and bandwidth overload)
          z[i, j, k] <= x[i, k],  z[i, j, k] <= x[j, k]                 (standard product linearisation,
          y[i, j, g] <= X[i, g],  y[i, j, g] <= X[j, g]                  Gallo, Hammer, Simeone 1980)
          X[j, g] = sum_{k in g} x[j, k]                                 (binary: one knapsack per item)
          x, X binary;  z, y >= 0   (and z >= x[i, k] + x[j, k] - 1 where the objective penalises a product)

The group terms exist only for R-Storm's racks (groups of two or more nodes); a classic QKP or QMKP
has the single term q_ij z[i, j, k]. Every item is its own variable: no merging of identical items,
no symmetry rows, no cuts, no capacity tightening, no surrogate bound, no search start. It is the
compact model of :mod:`.milp` built with all of that off (one piece of code for one model), on the
family whose classes are single items (:func:`singletons`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyomo.environ as pyo

from odrp.core.memory import check_model
from odrp.kinds.knapsack.exact import milp
from odrp.kinds.knapsack.family import Family
from odrp.kinds.knapsack.mapping import family_of


def family(instance: Any) -> Family:
    """The family of ``instance`` with one class per item (an R-Storm task is an item)."""
    return singletons(family_of(instance, merge_identical=False))


def singletons(f: Family) -> Family:
    """``f`` with every class of several copies split into one class per copy, and every pair profit
    between two classes repeated for every pair of their copies (copies of one class earn nothing
    together, as in :class:`Family`)."""
    if not (f.count > 1).any():
        return f
    origin = np.array([c for c, members in enumerate(f.classes) for _ in members], dtype=int)
    first = {}
    for i, c in enumerate(origin):
        first.setdefault(int(c), i)
    pa, pb, pk, pg = [], [], [], []
    for a, b, qk, qg in zip(f.pair_a, f.pair_b, f.pair_knapsack, f.pair_group, strict=True):
        for i in range(first[int(a)], first[int(a)] + int(f.count[a])):
            for j in range(first[int(b)], first[int(b)] + int(f.count[b])):
                pa.append(min(i, j))
                pb.append(max(i, j))
                pk.append(qk)
                pg.append(qg)
    return Family(
        name=f.name,
        sense=f.sense,
        classes=tuple((key,) for members in f.classes for key in members),
        knapsacks=f.knapsacks,
        groups=f.groups,
        profit=f.profit[origin],
        weight=f.weight[:, origin, :],
        capacity=f.capacity,
        penalty=f.penalty,
        pair_a=np.array(pa, dtype=int),
        pair_b=np.array(pb, dtype=int),
        pair_knapsack=np.array(pk, dtype=float),
        pair_group=np.array(pg, dtype=float),
        exactly_one=f.exactly_one,
        dimensions=f.dimensions,
    )


def options(integer_auxiliaries: bool = False) -> milp.Options:
    """The compact model's options with every addition off (``integer_auxiliaries`` for CP-SAT)."""
    return milp.Options(
        linearisation="standard",
        capacity_cuts=False,
        symmetry=False,
        partner_bounds=False,
        integer_auxiliaries=integer_auxiliaries,
    )


def size(f: Family) -> tuple[int, int, int]:
    """(variables, constraints, nonzeros) of the textbook model of ``f`` (one class per item), in closed
    form from the family's dimensions: an upper estimate, computed before anything is built."""
    items, knapsacks = f.n_classes, f.n_knapsacks
    groups = sum(1 for ks in f.group_members if len(ks) > 1)
    pairs = f.n_pairs
    grouped = int((f.pair_group != 0).sum()) if pairs else 0
    x = items * knapsacks
    z = pairs * knapsacks + grouped * groups
    group_counts = items * groups if grouped else 0
    overloads = len(f.soft) * knapsacks
    variables = x + z + group_counts + overloads
    constraints = items + f.n_dimensions * knapsacks + 2 * z + group_counts
    nonzeros = x * (2 + f.n_dimensions) + overloads + 4 * z + group_counts * (1 + knapsacks) + x + z
    return variables, constraints, nonzeros


def build(f: Family, integer_auxiliaries: bool = False) -> pyo.ConcreteModel:
    """The textbook model of ``f`` (a family of single items, :func:`family`); refused before it is
    built when its estimated size (:func:`size`) is over the memory budget
    (:func:`odrp.core.memory.check_model`)."""
    check_model(*size(f), "the textbook model")
    return milp.build(f, options(integer_auxiliaries), checked=True)
