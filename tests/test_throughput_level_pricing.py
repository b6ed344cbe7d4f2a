"""The level search's node work, against enumeration: the pricing knapsack of the configuration bound
(options dominated across instance counts are dropped) and the fluid level ranges of a node."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from odrp.kinds.throughput.exact import bounds, config_bound
from odrp.kinds.throughput.exact.settings import ConfigurationSettings
from tests.test_throughput_exact import feasible_placements, tiny

GRID = ConfigurationSettings().grid


def _enumerated_best(pricing: config_bound._Pricing, t: int, u: dict[tuple[int, int], float]) -> float:
    """max phi over class t's grid configurations by enumeration: each component takes no option or one
    (level n, count k), written apart from the dynamic programme (no dominance, no stages)."""
    groups = [
        [None, *zip(itertools.repeat(c), options.n.tolist(), options.k.tolist(), options.weight.tolist())]
        for c, options in enumerate(pricing.options[t])
    ]
    best = 0.0
    for choice in itertools.product(*groups):
        taken = [o for o in choice if o is not None]
        if sum(k for _, _, k, _ in taken) <= pricing.slots[t] and sum(w for *_, w in taken) <= GRID:
            best = max(best, sum(k * u.get((c, n), 0.0) for c, n, k, _ in taken))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_pricing_knapsack_equals_enumeration(seed):
    # 3 components on 2-3 machines with 2-3 slots (at most 10^3 configurations per class), at rates where
    # several levels and counts compete
    inst = tiny(seed)
    rng = random.Random(seed)
    for share, _ in itertools.product((0.3, 0.6, 0.9), range(3)):  # random multipliers, some zero
        pricing = config_bound._Pricing(inst, share * bounds.fluid_bound(inst))
        u = {(c, n): rng.choice([0.0, rng.random()]) for c, levels in enumerate(pricing.levels) for n in levels}
        for t in range(len(pricing.classes)):
            value, config = pricing.best(t, u)
            enumerated = _enumerated_best(pricing, t, u)
            assert enumerated <= value <= enumerated * (1 + 1e-5)  # an upper bound, float32 tables: 1e-5 at most
            weights = pricing.weights[t]
            assert sum(config.values()) <= pricing.slots[t]  # the configuration returned fits and attains it
            assert sum(weights[c, n, k] for (c, n), k in config.items()) <= GRID
            assert sum(k * u[c, n] for (c, n), k in config.items()) == pytest.approx(value, rel=1e-5, abs=1e-12)


def test_dominance_across_counts_by_hand():
    # options of one component (profit k u_cn): A = (k 1, weight 10, u 3) gives 3; B = (k 2, weight 12,
    # u 1) gives 2 with more tasks and weight: dominated by A; C = (k 2, weight 8, u 1) is lighter than
    # A: kept; D is a copy of A: the first of the two is kept.
    k, weight, profit = np.array([1, 2, 2, 1]), np.array([10, 12, 8, 10]), np.array([3.0, 2.0, 2.0, 3.0])
    assert config_bound._undominated(k, weight, profit).tolist() == [0, 2]


@pytest.mark.parametrize("seed", range(20))
def test_dominance_equals_pairwise_comparison(seed):
    # the sort-based dominance against its definition, pair by pair: i is dropped when some j has no more
    # instances, no more weight, at least the profit, and is better somewhere or an earlier copy
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 40))
    k, weight = rng.integers(1, 4, size), rng.integers(0, 6, size)
    profit = rng.integers(0, 5, size).astype(float)  # few values: many ties and copies
    kept = []
    for i in range(size):
        dominated = any(
            k[j] <= k[i]
            and weight[j] <= weight[i]
            and profit[j] >= profit[i]
            and (k[j] < k[i] or weight[j] < weight[i] or profit[j] > profit[i] or j < i)
            for j in range(size)
            if j != i
        )
        if not dominated:
            kept.append(i)
    assert config_bound._undominated(k, weight, profit).tolist() == kept


@pytest.mark.parametrize("seed", range(8))
def test_fluid_ranges_hold_every_sustaining_placement(seed):
    # every placement (brute force) that sustains rho has counts inside the narrowed ranges
    inst = tiny(seed)
    rates = [(r, [sum(v) for v in combo]) for r, combo in feasible_placements(inst)]
    optimum = max(r for r, _ in rates)
    for rho in (0.5 * optimum, 0.9 * optimum, optimum):
        wide = [bounds.count_range(inst, c, rho) for c in range(inst.n_components)]
        narrowed = bounds.fluid_count_ranges(inst, rho, wide)
        for r, counts in rates:
            if r >= rho:
                assert all(lo <= n <= hi for n, (lo, hi) in zip(counts, narrowed, strict=True))
        points = [(n, n) for n in max(rates)[1]]  # a point box holding the optimum: kept as it is
        assert bounds.fluid_count_ranges(inst, rho, points) == points


@pytest.mark.parametrize("seed", range(8))
def test_pair_caps_hold_every_sustaining_placement(seed):
    # the caps on x_cw of P(rho) (the fluid LP's max X_cw at R = rho): every placement (brute force)
    # that sustains rho respects them; above the fluid bound there are none (None)
    inst = tiny(seed)
    placements = list(feasible_placements(inst))
    optimum = max(r for r, _ in placements)
    for rho in (0.6 * optimum, optimum):
        caps = bounds.fluid_pair_bounds(inst, rho)
        for _, combo in (p for p in placements if p[0] >= rho):
            assert all(k <= caps[c][w] for c, v in enumerate(combo) for w, k in enumerate(v))
    assert bounds.fluid_pair_bounds(inst, 1.01 * bounds.fluid_bound(inst)) is None
