"""The large-instance paths of the throughput search: the packing start and the configuration bound first."""

from __future__ import annotations

import pytest

from benchmarks.throughput import random_case
from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact import bounds, config_bound, count_descent, dive, packing
from odrp.kinds.throughput.exact.settings import DiveSettings, PackingSettings
from odrp.kinds.throughput.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_throughput_exact import brute_force, tiny


def _sources(exec_times: dict[str, float], machines: int, max_tasks: int = 10) -> dict:
    """Source components (each receives R) on identical machines of capacity 100, no overheads."""
    return {
        "problem": "throughput",
        "name": "sources",
        "components": [{"id": c} for c in exec_times],
        "machines": [{"id": f"m{w}", "type": "t", "max_tasks": max_tasks} for w in range(machines)],
        "profile": {c: {"t": {"exec_time": e, "overhead": 0}} for c, e in exec_times.items()},
    }


def test_pack_is_best_fit_decreasing_by_hand():
    # rho = 100, one instance each: A costs 70, B 50, C 25 on any of three machines of 100.
    # A first (largest): all machines equal, the lowest, m0 (30 left). B: m0 cannot take 50, m1 and
    # m2 equal: m1 (50 left). C (25): m0 leaves 5, m1 25, m2 75: best fit is m0.
    inst = load(_sources({"A": 0.7, "B": 0.5, "C": 0.25}, 3))
    for order in PackingSettings().orders:
        failed, placement = packing.pack(inst, 100.0, [1, 1, 1], order)
        assert failed is None
        assert placement == [{0: 1}, {1: 1}, {0: 1}]


def test_counts_at_raises_the_count_of_the_instance_that_does_not_fit_by_hand():
    # X (e 1) and Y (e 0.5) on two machines of 100, rho = 120. Least counts: X needs 2 (one instance
    # would carry 120 > 100), Y 1 (60). Sizes X 60, 60 and Y 60: X to m0 then m1 (40 left each), Y
    # fits nowhere, so N_Y = 2 (30 each): one on each machine, 10 left. Each machine then carries
    # R (1/2 + 0.5/2) = 0.75 R, so R = 100 / 0.75 = 133.33, which is also the fluid bound
    # (1.5 R <= 200): the optimum.
    inst = load(_sources({"X": 1.0, "Y": 0.5}, 2))
    placement = packing.counts_at(inst, 120.0)
    assert placement == [{0: 1, 1: 1}, {0: 1, 1: 1}]
    assert rate(inst, placement) == pytest.approx(400 / 3, rel=1e-12)
    assert packing.search(inst, 0.0, bounds.fluid_bound(inst)) is not None


@pytest.mark.parametrize("seed", range(8))
def test_packing_never_beats_the_brute_force_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    found = packing.search(inst, 0.0, bounds.fluid_bound(inst))
    assert found is not None
    assert evaluate_counts(inst, found).feasible
    assert rate(inst, found) <= optimum * (1 + 1e-9)
    for share in (0.5, 0.9, 1.0):  # a placement packed at rho sustains rho
        placement = packing.counts_at(inst, share * optimum)
        if placement is not None:
            assert rate(inst, placement) >= share * optimum * (1 - 1e-9)
    assert packing.counts_at(inst, optimum * 1.01) is None  # nothing sustains more than R*


def weak_start(seed: int):
    """A tiny instance, its brute-force optimum R* and a weak start: the packing at a quarter of R*."""
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    start = packing.counts_at(inst, 0.25 * optimum)
    assert start is not None
    return inst, optimum, start


def test_dive_places_one_of_each_per_machine_by_hand():
    # X (e 1) and Y (e 0.5) on two machines of 100, rho = 120, N = (2, 2): X's instances cost 60, Y's 30.
    # Two X on one machine (120) do not fit, so each machine holds one X, and one Y (90): the only
    # placement. It sustains 100 / (1/2 + 0.5/2) = 133.33. With N_X = 1 an instance of X (120) fits nowhere.
    inst = load(_sources({"X": 1.0, "Y": 0.5}, 2))
    assert dive.dive(inst, 120.0, [2, 2]) == [{0: 1, 1: 1}, {0: 1, 1: 1}]
    assert dive.missing(inst, 120.0, [2, 2]) == pytest.approx(0.0, abs=1e-9)
    assert dive.dive(inst, 120.0, [1, 2]) is None
    assert dive.missing(inst, 120.0, [1, 2]) is None


def test_missing_machines_by_hand():
    # A and B (e 0.6 each) at rho = 100, one instance each: 60 + 60 > 100, so every machine holds one of
    # them: on one machine the LP lacks exactly one machine, on two it lacks none.
    assert dive.missing(load(_sources({"A": 0.6, "B": 0.6}, 1)), 100.0, [1, 1]) == pytest.approx(1.0, rel=1e-9)
    assert dive.missing(load(_sources({"A": 0.6, "B": 0.6}, 2)), 100.0, [1, 1]) == pytest.approx(0.0, abs=1e-9)


def test_count_descent_finds_the_missing_instance_by_hand():
    # The start of test_improvement_search_finds_the_missing_instance_by_hand (R = 100). At rho = 100.5
    # with N = (2, 1) three instances of 50.25 lack a machine (one per machine); N_Y = 2 makes Y's
    # instances 25.125, one X and one Y per machine (75.4) fit: the dive's placement sustains 400 / 3,
    # the fluid bound, so no later target is reached and the search ends there. (The random move order may
    # first take N_X = 3: X, Y on one machine and X, X on the other, R = 100 / (1/3 + 0.5) = 120, on the way.)
    inst = load(_sources({"X": 1.0, "Y": 0.5}, 2))
    found, stats = count_descent.search(inst, [{0: 1, 1: 1}, {0: 1}], None)
    assert rate(inst, found) == pytest.approx(400 / 3, rel=1e-12)
    assert stats["improvements"] >= 1 and stats["dives"] >= stats["improvements"]


@pytest.mark.parametrize("seed", range(8))
def test_count_descent_never_goes_below_its_start_nor_above_the_optimum(seed):
    # From a weak start (the packing at a quarter of R*): a feasible placement between the start and the
    # brute-force optimum. A dive's placement at rho fills no machine beyond rho's load by more than half a
    # grid unit per task (the rounding of its weights).
    inst, optimum, start = weak_start(seed)
    found, _ = count_descent.search(inst, start, None, seed=seed)
    assert evaluate_counts(inst, found).feasible
    assert rate(inst, start) <= rate(inst, found) <= optimum * (1 + 1e-9)
    levels = [sum(row.values()) for row in found]
    for share in (0.5, 0.9, 1.0):
        rho = share * optimum
        placement = dive.dive(inst, rho, levels)
        if placement is None:
            continue
        assert [sum(row.values()) for row in placement] == levels
        for w in range(inst.n_machines):
            tasks = sum(row.get(w, 0) for row in placement)
            load_w = sum(
                row.get(w, 0) * (inst.coefficient(c, w) * rho / levels[c] + inst.overhead[c][w])
                for c, row in enumerate(placement)
            )
            assert tasks <= inst.max_tasks[w]
            assert load_w <= inst.capacity[w] * (1 + tasks * 0.5 / DiveSettings().grid) + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_count_descent_multistart_is_the_best_of_its_searches(seed):
    # Three searches from the same weak start in move orders seed, seed + 1, seed + 2: the multistart returns
    # the best of the three (each search is deterministic for its order), feasible and at most R*.
    inst, optimum, start = weak_start(seed)
    found, stats = count_descent.multistart(inst, start, None, seed=seed, starts=3)
    each = [rate(inst, count_descent.search(inst, start, None, seed=seed + k)[0]) for k in range(3)]
    assert stats["searches"] == 3
    assert evaluate_counts(inst, found).feasible
    assert rate(inst, found) == pytest.approx(max(each), rel=1e-12)
    assert rate(inst, start) <= rate(inst, found) <= optimum * (1 + 1e-9)


def test_count_descent_multistart_needs_a_limit():
    inst = load(_sources({"X": 1.0}, 1))
    with pytest.raises(ValueError):
        count_descent.multistart(inst, [{0: 1}], None)


@pytest.mark.parametrize("seed", range(8))
def test_configuration_bisection_from_high_never_cuts_the_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    fluid = bounds.fluid_bound(inst)
    lowered, _ = config_bound.bisect(inst, 0.5 * optimum, fluid, None, precision=1e-6, first=0.75)
    assert optimum * (1 - 1e-9) <= lowered <= fluid


def test_large_instance_takes_the_configuration_bound_first():
    # 14 components x 30 machines = 420 > config_up_to: the configuration LP's bisection runs before
    # P(rho); the answer is verified by the evaluator and its bound is not above the fluid LP's. In one
    # process (no ladder: tests/test_throughput_ladder.py has the path with workers).
    inst = random_case(1, 14, 30)
    result = run_method(KINDS["throughput"], inst, "exact", solver="cpsat", time_limit=15, options={"processes": 1})
    stats = result.metrics["method_stats"]
    assert result.verified and result.status in ("optimal", "time_limit")
    assert stats["pattern_bound"] == stats["fluid_bound"]  # the pattern LP is skipped above config_up_to
    assert result.objective <= result.bound <= stats["fluid_bound"]
    assert stats["start_rate"] >= max(stats["hetero_greedy"], stats["fluid_rounding"] or 0.0)
    # under a time limit the improvement search takes the time left after the configuration bound
    assert stats["improve"]["start"] == pytest.approx(stats["start_rate"], rel=1e-12)
    assert result.objective >= stats["improve"]["rate"] * (1 - 1e-12) >= stats["start_rate"] * (1 - 1e-12)
    # the descent on counts, then block ascent from its placement (how many LPs the descent gets depends on
    # the machine's load: what it finds is tested without a deadline above)
    assert stats["count_descent"]["rate"] >= stats["start_rate"] * (1 - 1e-12)
    assert stats["improve"]["rate"] >= stats["count_descent"]["rate"] * (1 - 1e-12)
