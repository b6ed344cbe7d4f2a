"""The Lagrangian bound of the generic set-partitioning master (odrp/core/colgen.py), by hand and against
enumeration of every integer solution and the LP over every column."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from odrp.core.colgen import Column, GenerationSettings, Master, Pricing, branch_on_types, generate


def test_the_bound_by_hand():
    """One item, one type of two groups, one column of cost 0.8. At pi = 1, mu = -0.5 the column's reduced
    cost is 0.8 - 1 + 0.5 = 0.3 (none prices out) and q = mu + r = -0.2: L = 1 + 2 min(0, -0.2) = 0.6,
    below the optimum 0.8. The usual form pi.b + n mu + n min(0, r) gives 1 - 1 + 0 = 0."""
    master = Master([1], [2], artificial_cost=10.0)
    assert master.lagrangian_bound(np.array([1.0]), np.array([-0.5]), [0.3]) == pytest.approx(0.6)
    assert master.lagrangian_bound(np.array([1.0]), np.array([0.0]), [-0.2]) == pytest.approx(0.6)


def optimum_per_vector(demands: list[int], type_counts: list[int], columns: list[Column]) -> dict[tuple, float]:
    """The cheapest cover of every demand with exactly S_t groups of each type t, for every S reached: a
    dynamic program over (demand left, groups of each type used), one column after the other."""
    states = {(tuple(demands), (0,) * len(type_counts)): 0.0}
    for column in columns:
        grown = dict(states)
        for (left, used), cost in states.items():
            times = 1
            while True:
                rest = tuple(b - times * a for a, b in zip(column.counts, left, strict=True))
                count = used[column.type] + times
                if min(rest) < 0 or count > type_counts[column.type]:
                    break
                key = (rest, (*used[: column.type], count, *used[column.type + 1 :]))
                grown[key] = min(grown.get(key, np.inf), cost + times * column.cost)
                times += 1
        states = grown
    best: dict[tuple, float] = {}
    for (left, used), cost in states.items():
        if not any(left):
            best[used] = min(best.get(used, np.inf), cost)
    return best


def integer_optimum(demands: list[int], type_counts: list[int], columns: list[Column]) -> float:
    """The cheapest multiset of columns that covers every demand exactly, within the type counts."""
    return min(optimum_per_vector(demands, type_counts, columns).values(), default=np.inf)


@pytest.mark.parametrize("seed", range(12))
def test_the_bound_never_exceeds_the_lp_nor_the_integer_optimum(seed):
    rng = np.random.default_rng(seed)
    demands = [int(b) for b in rng.integers(1, 3, size=3)]
    type_counts = [int(n) for n in rng.integers(1, 4, size=int(rng.integers(1, 3)))]
    columns = [
        Column(t, counts, float(rng.uniform(-1.0, 2.0)))
        for t in range(len(type_counts))
        for counts in itertools.product(*(range(b + 1) for b in demands))
        if any(counts) and rng.random() < 0.6
    ]
    master = Master(demands, type_counts, artificial_cost=100.0)
    for column in columns:
        master.add(column)
    optimum = integer_optimum(demands, type_counts, columns)
    lp = master.solve_lp()
    assert lp is not None
    for _ in range(20):
        pi = rng.uniform(-2.0, 2.0, size=len(demands))
        mu = rng.uniform(-2.0, 0.5, size=len(type_counts))
        least = [
            min((master.reduced_cost(c, pi, mu) for c in columns if c.type == t), default=np.inf)
            for t in range(len(type_counts))
        ]
        bound = master.lagrangian_bound(pi, mu, least)
        assert bound <= lp[0] + 1e-7  # its artificial columns cost 100 - pi_i > 0 at these duals: L holds there too
        if np.isfinite(optimum):
            assert bound <= optimum + 1e-9


class Enumerated:
    """A pricer over every count vector within the demands, of at most ``capacity[t]`` units for type t,
    with random costs: the exact pricing enumerates them; there is no heuristic."""

    def __init__(self, demands: list[int], capacity: list[int], rng: np.random.Generator) -> None:
        self.capacity = capacity
        vectors = [c for c in itertools.product(*(range(b + 1) for b in demands)) if any(c)]
        self.costs = {(t, c): float(rng.uniform(-1.0, 2.0)) for t in range(len(capacity)) for c in vectors}

    def columns(self) -> list[Column]:
        return [Column(t, c, cost) for (t, c), cost in self.costs.items() if sum(c) <= self.capacity[t]]

    def cost(self, t, counts):
        return self.costs[t, counts]

    def heuristic(self, t, pi, mu, upper, starts):
        return []

    def exact(self, t, pi, mu, time_limit):
        priced = sorted(
            (column.cost - float(np.dot(pi, column.counts)) - mu, column.counts)
            for column in self.columns()
            if column.type == t
        )
        return Pricing([counts for _, counts in priced[:3]], priced[0][0])


def branching_instance(seed: int) -> tuple[list[int], list[int], Enumerated]:
    rng = np.random.default_rng(100 + seed)
    demands = [int(b) for b in rng.integers(1, 3, size=3)]
    type_counts = [int(n) for n in rng.integers(1, 4, size=2)]
    return demands, type_counts, Enumerated(demands, [int(c) for c in rng.integers(2, 5, size=2)], rng)


@pytest.mark.parametrize("seed", range(16))
def test_branching_on_type_counts_stays_below_the_integer_optimum(seed):
    """The branching's bound lies between the converged root LP's and the optimum found by enumeration,
    with and without the optimum as its cutoff; every node of a finished tree is closed."""
    demands, type_counts, pricer = branching_instance(seed)
    optimum = integer_optimum(demands, type_counts, pricer.columns())
    for cutoff in (None, optimum if np.isfinite(optimum) else None):
        master = Master(demands, type_counts, artificial_cost=100.0)
        root = generate(master, pricer, None, GenerationSettings(smoothing=0.0))
        assert root.converged
        branching = branch_on_types(master, pricer, root, None, GenerationSettings(smoothing=0.0), cutoff)
        assert branching.closed
        assert branching.bound >= root.bound - 1e-9
        if np.isfinite(optimum):
            assert branching.bound <= optimum + 1e-9
        assert master.type_lower == [0, 0] and master.type_upper == type_counts  # the root's rows again


@pytest.mark.parametrize("seed", [2, 8, 18, 20, 22, 30, 33, 39])
def test_branching_on_type_counts_reaches_the_optimum_the_lp_misses(seed):
    """Instances whose root LP lies below the enumerated optimum and whose only fractional part is the
    number of groups of a type: the branching's bound is the optimum."""
    demands, type_counts, pricer = branching_instance(seed)
    optimum = integer_optimum(demands, type_counts, pricer.columns())
    master = Master(demands, type_counts, artificial_cost=100.0)
    root = generate(master, pricer, None, GenerationSettings(smoothing=0.0))
    assert root.bound < optimum - 1e-6
    branching = branch_on_types(master, pricer, root, None, GenerationSettings(smoothing=0.0))
    assert branching.bound == pytest.approx(optimum, abs=1e-7) and branching.nodes >= 2


@pytest.mark.parametrize("seed", range(16))
def test_branching_down_to_points(seed):
    """``points`` by enumeration: (1) every vector S with no bound of its own: the bound lies between the
    root's and the optimum; (2) every vector S that holds a cover, with its own optimum as its bound: the
    bound is the optimum itself (each leaf is one S, at least its optimum, and the least leaf is the
    optimum's S); (3) only the optimum's S: nothing else is generated and the bound is still at most the
    optimum."""
    demands, type_counts, pricer = branching_instance(seed)
    columns = pricer.columns()
    per_vector = optimum_per_vector(demands, type_counts, columns)
    optimum = min(per_vector.values(), default=np.inf)
    if not np.isfinite(optimum):
        return
    every = {s: -np.inf for s in itertools.product(*(range(n + 1) for n in type_counts))}
    best_vector = min(per_vector, key=per_vector.get)
    for points, exact in ((every, False), (per_vector, True), ({best_vector: -np.inf}, False)):
        master = Master(demands, type_counts, artificial_cost=100.0)
        root = generate(master, pricer, None, GenerationSettings(smoothing=0.0))
        branching = branch_on_types(
            master, pricer, root, None, GenerationSettings(smoothing=0.0), None, None, dict(points)
        )
        assert branching.closed
        assert branching.bound >= root.bound - 1e-9
        if exact:
            assert branching.bound == pytest.approx(optimum, abs=1e-7)
        else:
            assert branching.bound <= optimum + 1e-9
        assert master.type_lower == [0, 0] and master.type_upper == type_counts
