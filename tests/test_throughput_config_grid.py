"""The configuration bound's pricing grid (a finer grid refutes more, never below the optimum) and its
master LP kept in one HiGHS model (the same values as a model rebuilt from the same columns)."""

from __future__ import annotations

import pytest

from odrp.kinds.throughput.exact import bounds, config_bound
from odrp.kinds.throughput.instance import load
from tests.test_throughput_config_bound import PACKING
from tests.test_throughput_exact import brute_force, tiny

# Two source components a and b (each receives R; e = 1) on a machine m (overhead 10, capacity 100,
# 3 task slots) and a slow one (overhead 95, 1 slot). By hand: an instance on the slow machine carries
# at most 5 N (R/N + 95 <= 100) with N <= 4 instances: at most 20. So above 20 both sit on m, once each:
# 2 (R + 10) <= 100, R <= 40 (more instances only add overhead: a twice, 2 R + 30 <= 100, R <= 35):
# R* = 40. The fluid LP (a fraction X of an instance pays X of the overhead) splits each component
# half on each machine: the slow one carries 2.5 of each (95 + 5 = 100), m 45 of each (2 * 5 + 90 =
# 100): R = 47.5, which it cannot beat (m full, the slow machine's single slot full).
# The configuration LP at rho in (40, 47.5) needs a configuration of m holding both components, at
# level 1 each taking (rho + 10) / 100 of the capacity (level 2 costs more: rho + 20 for a's two
# instances; the slow machine takes no instance at this rate). On a grid of G units the pair fits
# when 2 floor(G (rho + 10) / 100) <= G (weights rounded down):
# - G = 10: floor((rho + 10) / 10) <= 5 for rho < 50: the coarse grid refutes nothing below the fluid bound;
# - G = 1000: floor(10 (rho + 10)) <= 500 for rho < 40.1: the fine grid refutes from 40.1 on.
PAIR = {
    "problem": "throughput",
    "name": "pair-on-one",
    "components": [{"id": "a"}, {"id": "b"}],
    "machines": [{"id": "m", "type": "t", "max_tasks": 3}, {"id": "slow", "type": "s", "max_tasks": 1}],
    "profile": {c: {"t": {"exec_time": 1, "overhead": 10}, "s": {"exec_time": 1, "overhead": 95}} for c in ("a", "b")},
}


def test_a_fine_grid_refutes_what_a_coarse_grid_cannot_never_below_the_optimum():
    inst = load(PAIR)
    assert brute_force(inst)[0] == pytest.approx(40.0, rel=1e-12)
    assert bounds.fluid_bound(inst) == pytest.approx(47.5, rel=1e-6)
    for grid in (10, 1000):
        assert config_bound.refutes(inst, 40.0, grid=grid) is not True  # R* itself stays reachable
    assert config_bound.refutes(inst, 45.0, grid=10) is False  # the coarse grid fits the pair
    assert config_bound.refutes(inst, 45.0, grid=1000) is True
    assert config_bound.refutes(inst, 40.05, grid=1000) is False  # below 40.1 the pair fits on 1000 units
    assert config_bound.refutes(inst, 40.15, grid=1000) is True


def test_refine_lowers_a_coarse_bound_to_the_fine_grids_threshold():
    # the coarse bisection refutes nothing below the fluid bound 47.5; the refinement on 1,000 units steps
    # down from there and ends between the fine threshold 40.1 and a step of at most 2 precision above it
    inst = load(PAIR)
    coarse, last = config_bound.bisect(inst, 20.0, bounds.fluid_bound(inst), None, precision=1e-6, grid=10)
    assert coarse == pytest.approx(47.5, rel=1e-6)
    fine, _ = config_bound.refine(inst, 20.0, coarse, None, grid=1000, step=0.1, precision=1e-4, previous=last)
    assert 40.1 <= fine <= 40.1 * (1 + 2e-4)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("grid", [200, 20_000])
def test_no_grid_refutes_the_brute_force_optimum(seed, grid):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    assert config_bound.refutes(inst, optimum, grid=grid) is not True
    refined, _ = config_bound.refine(inst, optimum, 1.5 * optimum, None, grid, 0.1, 1e-3)
    assert refined >= optimum


@pytest.mark.parametrize("case", ["packing", "tiny-1", "tiny-2", "tiny-5"])
def test_master_kept_in_one_model_equals_a_rebuilt_one(case):
    # the column generation of an LP, step by step: after every step the kept model (columns added,
    # re-solved from its basis) and a model built afresh from the same columns have the same optimum
    inst = load(PACKING) if case == "packing" else tiny(int(case.split("-")[1]))
    optimum = 60.0 if case == "packing" else brute_force(inst)[0]
    for rho in (0.9 * optimum, 1.05 * optimum):
        lp = config_bound.ConfigurationLP(inst, rho)
        if lp.pricing.empty():
            continue
        kept = config_bound._Master(lp.pricing)
        for _ in range(30):
            value, u, *_ = kept.solve(lp.columns)
            rebuilt, *_ = config_bound._Master(lp.pricing).solve(lp.columns)
            assert value == pytest.approx(rebuilt, rel=1e-9, abs=1e-9)
            if value <= 1e-9:
                break
            _, configs = lp.pricing.lagrangian(u)
            new = [(t, c) for t, c in enumerate(configs) if c and c not in lp.columns[t]]
            if not new:
                break
            for t, config in new:
                lp.columns[t].append(config)
