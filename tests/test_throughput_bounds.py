"""Upper bounds and starts of the throughput search: never below the brute-force optimum; checked by hand."""

from __future__ import annotations

import highspy
import numpy as np
import pytest

from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact import bounds, pattern_bound, polish
from odrp.kinds.throughput.exact.starts import warm_start
from odrp.kinds.throughput.instance import load
from tests.test_throughput_exact import brute_force, tiny

# one spout on A (e 1) and B (e 3), capacity 100, no overhead, at most 2 instances and 2 per machine.
# N = 1 on A: R = 100 (on B: 33.3). N = 2: each instance carries R/2; A2: A 2 R/2 <= 100 -> 100;
# A1 + B1: B 3 R/2 <= 100 -> 66.7; B2: 33.3. So R* = 100.
# Fluid LP: shares q_A + q_B = R with q_A <= 100, 3 q_B <= 100 -> R <= 100 + 100/3 = 133.33.
# Pattern bound at any rho in (100, 200): one instance cannot carry rho on A (rho > 100), so N = 2;
# then an instance costs rho/2 > 50 on A (one fits alone) and 3 rho/2 > 150 on B (none fits):
# no pattern with 2 instances, rho is refuted.
SPOUT = {
    "problem": "throughput",
    "name": "spout-fast-slow",
    "components": [{"id": "spout", "max_instances": 2}],
    "machines": [{"id": "A", "type": "a", "max_tasks": 2}, {"id": "B", "type": "b", "max_tasks": 2}],
    "profile": {"spout": {"a": {"exec_time": 1, "overhead": 0}, "b": {"exec_time": 3, "overhead": 0}}},
}


def test_pattern_bound_refutes_what_the_fluid_bound_allows_by_hand():
    inst = load(SPOUT)
    assert brute_force(inst)[0] == pytest.approx(100.0, rel=1e-12)
    assert bounds.fluid_bound(inst) == pytest.approx(100 + 100 / 3, rel=1e-6)
    assert pattern_bound.refutes(inst, 101.0) is True
    assert pattern_bound.refutes(inst, 120.0) is True
    assert pattern_bound.refutes(inst, 100.0) is not True  # R* itself is reachable
    assert pattern_bound.upper_bound(inst, 90.0, 133.34, None) == pytest.approx(100.0, rel=1e-6)


def test_lagrangian_bound_by_hand():
    # at rho = 150 only N = 2 is allowed (one instance would carry 150 > 100 on A) and no pattern
    # of 2 instances fits (see above): the pricing reports no pattern at all.
    inst = load(SPOUT)
    assert pattern_bound._Pricing(inst, 150.0).empty()
    # at rho = 60 one instance fits on A (60) and on B? 180 > 100, no. N = 1: pattern (1, 0) costs
    # 60/100 = 0.6; N = 2: A 30 each, B 90 each; cheapest (2, 0) costs 0.6, (1, 1) 0.3 + 0.9 = 1.2.
    # LB(pi = (1, 1)) = 0.6 - 2 = -1.4 (no proof, as it must be: R* = 100 >= 60).
    value, columns = pattern_bound._Pricing(inst, 60.0).lagrangian(np.ones(2), np.zeros(2))
    assert value == pytest.approx(0.6 - 2.0, rel=1e-8)  # capacities carry the 1e-9 tolerance
    assert list(columns[0]) in ([1, 0], [2, 0])


@pytest.mark.parametrize("seed", range(8))
def test_bounds_never_cut_off_the_brute_force_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    fluid = bounds.fluid_bound(inst)
    assert fluid >= optimum * (1 - 1e-9)
    assert pattern_bound.refutes(inst, optimum) is not True
    assert pattern_bound.upper_bound(inst, 0.5 * optimum, fluid, None) >= optimum * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_warm_start_and_fluid_rounding_are_feasible_and_not_above_the_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    counts, _, _ = warm_start(inst)
    assert evaluate_counts(inst, counts).feasible
    assert rate(inst, counts) <= optimum * (1 + 1e-9)
    fluid = bounds.fluid_solution(inst)
    for scale in (1.0, 2.0, 3.0):
        rounded = polish.round_fluid(inst, fluid[1], fluid[2], scale)
        if rounded is not None and evaluate_counts(inst, rounded).feasible:
            assert rate(inst, polish.reinsert(inst, rounded)) <= optimum * (1 + 1e-9)


_SENSES = {"max": highspy.ObjSense.kMaximize, "min": highspy.ObjSense.kMinimize}


def _fluid_extremes(inst, rate, by_class):
    """max R of the fluid LP, and at R = rate the min and max of sum_w X_cw for every component."""
    from odrp.core.solvers.highs import run_highspy

    model, _, _ = bounds.fluid_model(inst, by_class=by_class)
    run = run_highspy(model.to_highs(), "max", mip=False)
    extremes = [run.objective]
    model, _, x = bounds.fluid_model(inst, rate, by_class=by_class)
    for c in range(inst.n_components):
        for sense in ("min", "max"):
            keys = [key for key in x if key[0] == c]
            highs = model.to_highs()
            highs.changeColsCost(len(keys), np.array([x[k] for k in keys], dtype=np.int32), np.ones(len(keys)))
            highs.changeObjectiveSense(_SENSES[sense])  # run_highspy keeps the model's sense (max)
            extremes.append(run_highspy(highs, sense, mip=False).objective)
    return extremes


@pytest.mark.parametrize("seed", range(4))
def test_fluid_lp_by_machine_class_has_the_extremes_of_the_lp_per_machine(seed):
    # the class form (identical machines merged) is the same LP up to symmetry: max R and, at a fixed rate,
    # the min and max of every component's instance count agree with the per-machine LP's
    from benchmarks.throughput import random_case

    inst = random_case(seed, 4, 6)
    assert len(inst.machine_classes) < inst.n_machines  # some machines are interchangeable
    per_machine = _fluid_extremes(inst, 0.0, False)
    rate = 0.9 * per_machine[0]
    per_machine = _fluid_extremes(inst, rate, False)
    by_class = _fluid_extremes(inst, rate, True)
    assert by_class == pytest.approx(per_machine, rel=1e-7, abs=1e-7)


def _fresh_ranges(inst, rate, ranges):
    """The fluid LP's narrowing of ``ranges`` at R = rate, one model built afresh for every LP (independent of
    the shared model of :func:`bounds.fluid_count_ranges`): None if the LP is infeasible."""
    import math

    from odrp.core.solvers.highs import run_highspy

    out = []
    for c, (lo, hi) in enumerate(ranges):
        if lo == hi:
            out.append((lo, hi))
            continue
        model, _, x = bounds.fluid_model(inst, rate, ranges, by_class=True)
        keys = [key for key in x if key[0] == c]
        extremes = []
        for sense in ("max", "min"):
            highs = model.to_highs()
            highs.changeColsCost(len(keys), np.array([x[k] for k in keys], dtype=np.int32), np.ones(len(keys)))
            highs.changeObjectiveSense(_SENSES[sense])
            run = run_highspy(highs, sense, mip=False)
            if run.status == "infeasible":
                return None
            extremes.append(run.objective)
        out.append(
            (max(lo, math.ceil(extremes[1] * (1 - 1e-9) - 1e-9)), min(hi, math.floor(extremes[0] * (1 + 1e-9) + 1e-9)))
        )
    return out


@pytest.mark.parametrize("seed", range(3))
def test_fluid_ranges_of_the_shared_model_equal_a_fresh_model_per_lp(seed):
    # the one model per rate (row bounds changed, basis kept, LPs that cannot narrow skipped) narrows random
    # sub-ranges in a random order exactly as models built afresh do
    from benchmarks.throughput import random_case

    inst = random_case(seed, 6, 6)
    rng = np.random.default_rng(seed)
    rho = 0.9 * bounds.fluid_bound(inst)
    root = _fresh_ranges(inst, rho, [bounds.count_range(inst, c, rho) for c in range(inst.n_components)])
    outcomes = {"infeasible": 0, "narrowed": 0, "kept": 0}
    for _ in range(40):
        ranges = []
        for lo, hi in root:
            a, b = sorted(int(v) for v in rng.integers(lo, hi + 1, 2))
            ranges.append((a, b) if rng.random() < 0.3 else (lo, hi))
        fresh = _fresh_ranges(inst, rho, ranges)
        shared = bounds.fluid_count_ranges(inst, rho, ranges)
        assert shared == ([(1, 0)] * inst.n_components if fresh is None else fresh)
        outcomes["infeasible" if fresh is None else "narrowed" if fresh != ranges else "kept"] += 1
    assert outcomes["infeasible"] >= 3 and outcomes["narrowed"] >= 15  # measured: 4-9 and 20-32 of 40
