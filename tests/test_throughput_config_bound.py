"""The configuration LP bound: by hand where per-machine integrality decides, never below brute force;
and the HiGHS child process that keeps large P(rho) rounds on the clock."""

from __future__ import annotations

import pytest

from odrp.kinds.throughput.exact import bounds, config_bound, pattern_bound, solver_child
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.instance import load
from tests.test_throughput_exact import best_placement, brute_force, tiny

# Two source components a and b (each receives R; e = 1, overhead 40) on three identical machines
# (capacity 100, 2 task slots). An instance of a component with N instances costs R/N + 40.
# - N = 1 carries R on one instance: R + 40 <= 100, R <= 60. A machine with two instances pays 80 in
#   overheads and R/N_a + R/N_b (or 2 R/N) <= 20 in load: R <= 20 N / 2 <= 60 for N <= 6 (2 R/N <= 20
#   with N <= 6; R/N_a + R/N_b <= 20 with N_a, N_b <= 5 likewise), so above 60 every machine holds at
#   most one instance, 3 in all, while both components need N >= 2: 4 instances. R* = 60 (a on one
#   machine, b on another).
# - Fluid LP: R q-shares per component, q_cw <= 60 X_cw (an instance fits), capacity summed over the
#   three machines: 2 R + 40 (X_a + X_b) <= 300 with X_c >= R / 60, so 2 R + 80 R / 60 <= 300, R <= 90.
# - Pattern LP at rho = 65: each component mixes the patterns (1,1,0), (0,1,1), (1,0,1) by 1/3 (N = 2,
#   each instance rho/2 + 40 = 72.5); every machine carries 2/3 of two such instances: 96.7 <= 100, and
#   2/3 * 2 = 1.33 <= 2 tasks: feasible, no refutation.
# - Configuration LP at any rho > 60: every level N of a component fits at most one instance per machine
#   (two cost >= 80 + rho/3 + rho/3 > 100 for N = 3, and more for fewer), so the three machines carry at
#   most 3 instances where sum_c N_c >= 4: infeasible; refuted.
PACKING = {
    "problem": "throughput",
    "name": "two-on-three",
    "components": [{"id": "a"}, {"id": "b"}],
    "machines": [{"id": f"m{i}", "type": "t", "max_tasks": 2} for i in range(3)],
    "profile": {c: {"t": {"exec_time": 1, "overhead": 40}} for c in ("a", "b")},
}


def test_configuration_bound_sees_packing_that_the_fluid_and_pattern_lps_miss():
    inst = load(PACKING)
    assert brute_force(inst)[0] == pytest.approx(60.0, rel=1e-12)
    assert bounds.fluid_bound(inst) == pytest.approx(90.0, rel=1e-6)
    assert pattern_bound.refutes(inst, 65.0) is not True
    assert config_bound.refutes(inst, 61.0) is True
    assert config_bound.refutes(inst, 89.0) is True
    assert config_bound.refutes(inst, 60.0) is not True  # R* itself is reachable
    assert config_bound.upper_bound(inst, 30.0, 90.0, None) == pytest.approx(60.0, rel=1e-6)


def test_lagrangian_certificate_by_hand():
    # at rho = 80 the closed-form levels are N = 2..6 (N = 1 would carry 80 + 40 > 100 on one
    # instance); the fluid LP at R = 80 narrows them to N = 2: X_c >= 80 / 60 = 1.33 (so N_c >= 2), and
    # 2 * 80 + 40 (X_a + X_b) <= 300 gives X_a + X_b <= 3.5, X_a <= 3.5 - 1.33 = 2.17 (so N_c <= 2).
    # With u = 1 on both levels: D(u) = 2 * 1 + 2 * 1 = 4. An instance costs 80 / 2 + 40 = 80, so a
    # machine holds one: max phi = 1 per machine, P(u) = 3 * 1 = 3, and D - P = 1 > 0 refutes rho = 80
    # by these multipliers alone.
    pricing = config_bound._Pricing(load(PACKING), 80.0)
    assert [list(levels) for levels in pricing.levels] == [[2], [2]]
    value, configs = pricing.lagrangian({(0, 2): 1.0, (1, 2): 1.0})
    # P(u) = 3 is rounded up for the float32 table by the factor (1 + m 2^-21), m <= the class's task slots: D - P
    # is 1 at most (P never below the true maximum), and no further below than that factor allows
    assert value <= 1.0
    assert value >= 1.0 - 3 * pricing.slots[0] * 2.0**-21
    assert [sum(config.values()) for config in configs] == [1]


@pytest.mark.parametrize("seed", range(8))
def test_configuration_bound_never_cuts_off_the_brute_force_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    assert config_bound.refutes(inst, optimum) is not True
    assert config_bound.refutes(inst, optimum * (1 - 1e-3)) is not True
    fluid = bounds.fluid_bound(inst)
    assert config_bound.upper_bound(inst, 0.5 * optimum, fluid, None) >= optimum * (1 - 1e-9)


def _knapsack() -> MatrixModel:
    """max 5 x + 4 y, 6 x + 4 y <= 24, x + 2 y <= 6, x, y integer: by enumeration x = 4, y = 0 (20)
    or x = 2, y = 2 (18) or x = 3, y = 1 (19, 6*3+4 = 22 <= 24, 3 + 2 = 5 <= 6): the optimum is 20."""
    model = MatrixModel(sense="max")
    x, y = model.column(integer=True, cost=5.0), model.column(integer=True, cost=4.0)
    model.row({x: 6.0, y: 4.0}, upper=24.0)
    model.row({x: 1.0, y: 2.0}, upper=6.0)
    return model


def test_solver_child_answers_like_highs_in_process():
    run, values = solver_child.solve(_knapsack(), 30.0)
    assert run.status in ("optimal", "feasible") and run.objective == pytest.approx(20.0)
    assert values == pytest.approx([4.0, 0.0])


def test_solver_child_is_stopped_at_the_deadline():
    run, values = solver_child.solve(_knapsack(), 0.0, grace=0.0)  # the child cannot even start Python in 0 s
    assert run.status == "time_limit" and values is None and run.runtime_s < 5.0


def _fits(inst, rho: float, group: tuple[int, ...], config: dict[tuple[int, int], int]) -> bool:
    """The configuration's instances (k of component c at level n, each e l rho / n + MET CPU) fit one machine
    of the class: CPU within the capacity and tasks within the limit (eq. 5, by hand, not through the grid)."""
    w = group[0]
    load = sum(k * (inst.coefficient(c, w) * rho / n + inst.overhead[c][w]) for (c, n), k in config.items())
    tasks = sum(config.values())
    limit = inst.max_tasks[w]
    return load <= inst.capacity[w] * (1 + 1e-9) + 1e-9 and (limit is None or tasks <= limit)


@pytest.mark.parametrize("seed", range(8))
def test_columns_from_the_rate_s_pool_are_configurations_of_the_node(seed):
    # every LP at a rate adds its priced configurations to the rate's pool, and every later LP at that rate (a
    # node: narrower levels) starts from those of them that fit it; each column of a node's LP is then a set
    # of instances at the node's levels that fits one machine of its class, and the verdict stays a bound:
    # never a refutation at or below the brute-force optimum
    inst = tiny(seed)
    optimum, counts = best_placement(inst)
    best = [(sum(per.values()), sum(per.values())) for per in counts]  # the counts of an optimal placement
    for rho in (0.95 * optimum, optimum, 1.1 * optimum):
        tables = config_bound.Tables()  # the tables and pools of one solve, shared by its LPs
        root = config_bound.ConfigurationLP(inst, rho, tables=tables)
        root.refutes()
        pool = root.pricing.table.pool
        levels = [(r.start, r.stop - 1) for r in root.pricing.levels]
        if any(lo > hi for lo, hi in levels):
            continue
        node = best if rho <= optimum else [(lo, lo) for lo, _ in levels]  # else: the lowest levels
        lp = config_bound.ConfigurationLP(inst, rho, within=node, tables=tables)
        assert lp.pricing.table is root.pricing.table  # one table (and pool) per rate
        for t, configs in enumerate(lp.columns):
            group = inst.machine_classes[t]
            for config in configs:
                assert all(n in lp.pricing.levels[c] for c, n in config)
                assert _fits(inst, rho, group, config)
        for t, configs in enumerate(pool):  # the node starts from every pool configuration that fits it
            for config in configs:
                kept = lp.pricing.restricted(config)
                assert not kept or kept in lp.columns[t]
        if rho <= optimum:
            assert lp.refutes() is not True and root.refutes() is not True


@pytest.mark.parametrize("seed", range(8))
def test_a_new_rate_s_pool_starts_with_the_configurations_that_still_fit(seed):
    # priced at 0.9 R*, carried to 1.05 R*: each carried configuration fits a machine at the higher rate (by
    # hand, eq. 5), and those that do not fit are left behind
    inst = tiny(seed)
    optimum = brute_force(inst)[0]
    tables = config_bound.Tables()  # the tables and pools of one solve, shared by its LPs
    low = config_bound.ConfigurationLP(inst, 0.9 * optimum, tables=tables)
    low.refutes()
    high = config_bound.ConfigurationLP(inst, 1.05 * optimum, tables=tables)
    carried = high.pricing.table.pool
    for t, configs in enumerate(low.pricing.table.pool):
        group = inst.machine_classes[t]
        for config in configs:
            kept = high.pricing.table.within(config)
            assert (kept in carried[t]) == (bool(kept) and _fits(inst, 1.05 * optimum, group, kept))


def test_pool_index_finds_each_distinct_restriction_once_in_pool_order():
    # the definition: walk the pool in order, restrict each configuration to the levels, keep the first of each
    # distinct nonempty restriction; random pools over 3 components x 6 levels have many equal restrictions
    import random

    import numpy as np

    rng = random.Random(7)
    for _ in range(30):
        pool = []
        for _ in range(rng.randint(0, 60)):
            picked = rng.sample(range(3), rng.randint(1, 3))
            pool.append({(c, rng.randint(1, 6)): rng.randint(1, 3) for c in picked})
        lo = np.array([rng.randint(1, 4) for _ in range(3)])
        hi = lo + np.array([rng.randint(0, 2) for _ in range(3)])
        index = config_bound._PoolIndex()
        half = len(pool) // 2  # indexed in two steps, as a pool grows between nodes
        index.distinct(pool[:half], lo, hi)
        got = index.distinct(pool, lo, hi).tolist()
        expected, seen = [], set()
        for i, config in enumerate(pool):
            kept = frozenset(((c, n), k) for (c, n), k in config.items() if lo[c] <= n <= hi[c])
            if kept and kept not in seen:
                seen.add(kept)
                expected.append(i)
        assert got == expected


@pytest.mark.parametrize("seed", range(2, 8))
def test_columns_of_another_rate_are_checked_before_they_start_an_lp(seed):
    # an LP's columns fit at its own rate and grid (``fit_at``); passed to an LP at a higher rate, directly or
    # as ``Columns.of`` (what a worker sends), those that no longer fit are left out (by hand, eq. 5). On these
    # instances 2-3 of the columns priced at 0.9 R*, restricted to the levels at R*, do not fit at R* (checked
    # first, so that the test can fail: trusting them fails it)
    from odrp.kinds.throughput.exact.config_bound import Columns
    from odrp.kinds.throughput.exact.settings import ConfigurationSettings

    inst = tiny(seed)
    optimum = brute_force(inst)[0]
    group = inst.machine_classes
    low = config_bound.ConfigurationLP(inst, 0.9 * optimum)  # tables of its own: nothing carried to the next LP
    low.refutes()
    assert low.fit_at == (0.9 * optimum, ConfigurationSettings().grid)
    assert Columns.of(low).fit_at == low.fit_at
    for previous in (low, Columns.of(low)):
        high = config_bound.ConfigurationLP(inst, optimum, previous)
        restricted = [[high.pricing.restricted(c) for c in configs] for configs in low.columns]
        assert any(c and not _fits(inst, optimum, group[t], c) for t, cs in enumerate(restricted) for c in cs)
        for t, configs in enumerate(high.columns):
            assert all(_fits(inst, optimum, group[t], config) for config in configs)
