"""P(rho) on a subset of the components (a tier of big ones) and what the level search does with it.

Numbers by hand on a two-machine case, and brute force over every placement of the tiny instances.
"""

from __future__ import annotations

import itertools
import random

import pytest

from odrp.kinds.throughput.evaluator import evaluate_counts
from odrp.kinds.throughput.exact import big, level_search, rate_model, rounds
from odrp.kinds.throughput.exact.bounds import FluidModels, count_range
from odrp.kinds.throughput.exact.settings import LevelSearchSettings, ThroughputSettings
from odrp.kinds.throughput.instance import load
from tests.test_throughput_exact import best_placement, brute_force, tiny
from tests.test_throughput_level_search import _boxes

SHARE = LevelSearchSettings().big_share


def big_tiers(inst, rho):
    """The big components' tiers at the default share."""
    return big.big_tiers(inst, rho, SHARE)


# A spout s feeds a bolt a on two identical machines (capacity 100, two task slots each). At rate R, a costs
# 1.5 R + 1 per instance when it has one (it does not fit one machine above R = 66), s costs 0.1 R + 1.
TWO_MACHINES = {
    "problem": "throughput",
    "name": "spout-and-bolt",
    "components": [{"id": "s"}, {"id": "a"}],
    "edges": [["s", "a"]],
    "machines": [{"id": f"m{i}", "type": "t", "max_tasks": 2} for i in (1, 2)],
    "profile": {"s": {"t": {"exec_time": 0.1, "overhead": 1.0}}, "a": {"t": {"exec_time": 1.5, "overhead": 1.0}}},
}


def _on_a(inst, rho, least_s):
    """P(rho) on a alone with N_a = 2, s left out with at least ``least_s`` instances."""
    box = [(least_s, 4), (2, 2)]
    status, placed = _boxes(inst)(rho, box, None, [1])
    return status, placed


def test_cluster_room_and_the_subset_model_by_hand():
    inst = load(TWO_MACHINES)
    # s needs at least 0.1 rho + least_s CPU (one overhead per instance) and least_s slots
    assert rate_model.least_cpu(inst, 0, 120.0, 2) == pytest.approx(0.1 * 120 + 2, rel=1e-8)
    cpu, slots = rate_model.cluster_room(inst, 120.0, [2, 2], [1])
    assert cpu == pytest.approx(200 - 14, rel=1e-8) and slots == 4 - 2
    # two instances of a (one per machine, 0.75 rho + 1 each) use 1.5 rho + 2 of the cluster: with s at one
    # instance or more that fits 200 - (0.1 rho + 1) up to rho = 197 / 1.6 = 123.125; each machine alone holds
    # its instance up to rho = 132
    assert _on_a(inst, 123.0, 1)[0] == "feasible"
    assert _on_a(inst, 123.25, 1)[0] == "infeasible"
    # with s at two instances or more: 1.6 rho + 4 <= 200, rho <= 122.5
    assert _on_a(inst, 122.4, 2)[0] == "feasible"
    assert _on_a(inst, 122.6, 2)[0] == "infeasible"
    # three instances of s leave one of the four slots, and a needs two: infeasible at any rate
    assert _on_a(inst, 10.0, 3)[0] == "infeasible"
    # what it places is a's instances only, one per machine
    status, placed = _on_a(inst, 100.0, 1)
    assert status == "feasible" and placed[0] == {} and sorted(placed[1].values()) == [1, 1]
    assert rate_model.cluster_use(inst, 100.0, placed) == pytest.approx((2 * (0.75 * 100 + 1), 2), rel=1e-9)
    # the whole problem: R* = 122.5 (N_a = 2, N_s = 2, one of each per machine: 0.75 R + 0.05 R + 2 <= 100)
    assert brute_force(inst)[0] == pytest.approx(122.5, rel=1e-9)


def test_big_tiers_by_hand():
    inst = load(TWO_MACHINES)
    # shares at rho: a (1.5 rho + 1) / 100, s (0.1 rho + 1) / 100
    assert count_range(inst, 1, 122.5)[0] == 2 and big_tiers(inst, 122.5) == [[1]]  # a: 1.85
    assert big_tiers(inst, 50.0) == [[1]]  # a: 0.76, big but not to be replicated
    assert pytest.approx(1 / 3) == SHARE
    assert big_tiers(inst, 30.0) == [[1]]  # a: 0.46
    assert big_tiers(inst, 20.0) == []  # a: 0.31
    # a third component b (0.6 rho + 1: 0.745 at 122.5) is big, not replicated: two tiers, the biggest first
    three = {**TWO_MACHINES, "components": [{"id": "s"}, {"id": "a"}, {"id": "b"}], "edges": [["s", "a"], ["s", "b"]]}
    three["profile"] = {**TWO_MACHINES["profile"], "b": {"t": {"exec_time": 0.6, "overhead": 1.0}}}
    assert big_tiers(load(three), 122.5) == [[1], [1, 2]]
    checks = big.BigChecks()
    assert checks.tiers(load(three), 122.5) == [[1], [1, 2]]
    assert checks.tiers(load(three), 122.5) == [[1], [1, 2]]  # another instance object, the same answer


@pytest.mark.parametrize("seed", range(8))
def test_the_subset_model_never_refutes_a_rate_the_optimum_sustains(seed):
    """Every subset of the components, every box holding the optimal counts: P(rho) on the subset is never
    infeasible at R* and just below (brute force's optimum), with the left-out components at any least count up
    to their optimal one."""
    inst = tiny(seed)
    optimum, counts = best_placement(inst)
    levels = [sum(per.values()) for per in counts]
    solve_box = _boxes(inst)
    rng = random.Random(seed)
    for size in range(1, inst.n_components):
        for kept in itertools.combinations(range(inst.n_components), size):
            box = [(rng.randint(1, n), n + rng.randint(0, 2)) for n in levels]
            for rho in (optimum, optimum * (1 - 1e-3)):
                status, placed = solve_box(rho, box, None, list(kept))
                assert status != "infeasible", (kept, box, rho)
                assert all(placed[c] == {} for c in range(inst.n_components) if c not in kept)


MODES = ("off", "first", "refute", "both")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", range(8))
def test_every_big_mode_proves_the_brute_force_optimum_and_nothing_below(seed, mode):
    settings = LevelSearchSettings(big=mode)
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    above = level_search.search(inst, optimum, None, _boxes(inst), lambda best: optimum * (1 + 1e-6), settings=settings)
    assert above.proven and above.counts is None
    if mode in ("off", "first"):
        assert above.stats.big == 0
    below = level_search.search(
        inst, 0.0, None, _boxes(inst), lambda best: max(best, optimum * (1 - 1e-3)), settings=settings
    )
    assert below.counts is not None and below.best >= optimum * (1 - 1e-3)
    assert evaluate_counts(inst, below.counts).objective == pytest.approx(below.best, rel=1e-12)


def test_the_relaxation_refutes_nodes_of_the_tiny_instances():
    """The path is taken: just above R*, some tiny instance has a node that P(rho) on its big components refutes
    (not its configuration LP)."""
    settings = LevelSearchSettings(big="both")
    refuted = 0
    for seed in range(8):
        inst = tiny(seed)
        optimum, _ = brute_force(inst)
        target = optimum * (1 + 1e-6)
        above = level_search.search(inst, optimum, None, _boxes(inst), lambda best, r=target: r, settings=settings)
        refuted += above.stats.big
    assert refuted > 0


@pytest.mark.parametrize("seed", range(8))
def test_remembered_answers_equal_fresh_ones(seed):
    """A :class:`BigChecks` that remembers gives, node after node, the answers that a fresh one (CP-SAT every time)
    gives, on random nodes that fix a tier of big components, around the optimal counts at rates about R*."""
    inst = tiny(seed)
    optimum, counts = best_placement(inst)
    levels = [sum(per.values()) for per in counts]
    solve_box = _boxes(inst)
    remembering = big.BigChecks()
    rng = random.Random(seed)
    asked = refuted = 0
    for _ in range(60):
        rho = optimum * rng.choice((1 - 1e-2, 1 - 1e-3, 1.0, 1 + 1e-3, 1 + 1e-2, 1.05))
        tiers = big_tiers(inst, rho)
        if not tiers or len(tiers[-1]) == inst.n_components:
            continue
        tier = rng.choice(tiers)
        node = []
        for c, n in enumerate(levels):
            lo = max(1, n + rng.randint(-1, 1))
            node.append((lo, lo if c in tier else lo + rng.randint(1, 2)))  # the tier fixed, nothing else
        fresh = big.BigChecks().refutes(inst, rho, node, solve_box, None)
        assert remembering.refutes(inst, rho, node, solve_box, None) == fresh
        asked, refuted = asked + 1, refuted + fresh
    assert remembering.solved <= asked


def test_checks_run_only_on_a_whole_tier():
    """Nodes that fix part of a tier, or a tier and another big component, are not checked (no CP-SAT run)."""
    three = {**TWO_MACHINES, "components": [{"id": "s"}, {"id": "a"}, {"id": "b"}], "edges": [["s", "a"], ["s", "b"]]}
    three["profile"] = {**TWO_MACHINES["profile"], "b": {"t": {"exec_time": 0.6, "overhead": 1.0}}}
    inst = load(three)
    calls = []

    def solve_box(rho, box, deadline, kept=None):
        calls.append(kept)
        return "infeasible", None

    checks = big.BigChecks()
    assert not checks.refutes(inst, 122.5, [(1, 2), (2, 3), (1, 1)], solve_box, None)  # b alone: not a tier
    assert calls == []
    assert checks.refutes(inst, 122.5, [(1, 2), (2, 2), (1, 2)], solve_box, None)  # tier [a]
    assert checks.refutes(inst, 122.5, [(1, 2), (2, 2), (1, 1)], solve_box, None)  # tier [a, b]
    assert calls == [[1], [1, 2]]
    assert checks.refutes(inst, 122.5, [(1, 3), (2, 2), (1, 2)], solve_box, None)  # [a] again: from memory
    assert calls == [[1], [1, 2]]


def test_cbc_and_highs_solve_the_subset_model_too():
    """The subset model in matrix form (HiGHS, CBC) agrees with CP-SAT on the hand case."""
    inst = load(TWO_MACHINES)
    settings = ThroughputSettings()
    for solver in ("highs", "cbc"):
        scratch = {"rounds": []}
        for rho, least_s, expected in ((123.0, 1, "feasible"), (123.25, 1, "infeasible"), (122.6, 2, "infeasible")):
            box = [(least_s, 4), (2, 2)]
            fluid = FluidModels(1)
            result = rounds.solve_round(
                inst, rho, solver, None, settings, fluid, scratch, fluid_levels=False, within=box, kept=[1]
            )
            assert result.status in ((expected,) if expected == "infeasible" else ("feasible", "optimal")), solver


# 10 x 10 seed 8 (benchmarks.throughput.random_case): a placement at R = 575.876, found by the exact method
SEED8_PLACEMENT = {
    "instances": {
        "spout0": {"m1-pentium": 1, "m5-i5": 1, "m8-i5": 1},
        "low1": {"m2-i3": 1, "m7-i3": 1, "m8-i5": 1, "m10-i3": 1},
        "mid2": {"m5-i5": 1, "m8-i5": 1},
        "mid3": {"m4-pentium": 1, "m6-pentium": 1},
        "low4": {"m8-i5": 1},
        "low5": {"m5-i5": 1},
        "high6": {"m2-i3": 1, "m3-i5": 1, "m7-i3": 1, "m10-i3": 1},
        "low7": {"m3-i5": 1},
        "low8": {"m1-pentium": 1},
        "low9": {"m9-pentium": 1},
    }
}


@pytest.mark.parametrize(
    ("rho", "kept", "fixed"),
    [
        # the four biggest components high6, mid2, mid3, low9 at counts 4, 2, 2, 1: CP-SAT without probing
        # (cp_model_probing_level 0) called this infeasible
        (575.80, [6, 2, 3, 9], {}),
        # the big tier at big_share 1/3 (the four, low8 and low5 at one instance each) at a rate below that
        # placement's: CP-SAT with its defaults called this infeasible
        (575.7430214044182, [6, 2, 3, 9, 8, 5], {5: 1, 8: 1}),
    ],
)
def test_a_box_holding_a_placement_is_never_refuted_seed_8(rho, kept, fixed):
    """CP-SAT 9.15's presolve (inclusion detection: google/or-tools#5274, #5293) called these subset models of 10 x
    10 seed 8 infeasible although the placement below, restricted to their components, satisfies them, and the
    exact method proved a rate below that placement's. The box solver (CP-SAT with ``CPSAT_PARAMETERS``) must
    find them feasible."""
    from benchmarks.throughput import random_case
    from odrp.kinds.throughput.evaluator import rate
    from odrp.kinds.throughput.instance import parse_solution

    inst = random_case(8, 10, 10)
    placement = parse_solution(inst, SEED8_PLACEMENT)
    assert rate(inst, placement) == pytest.approx(575.876, abs=1e-3) and evaluate_counts(inst, placement).feasible
    assert big_tiers(inst, rho)[-1][: len(kept)] == kept  # biggest first
    node = [(1, 14), (1, 14), (2, 2), (2, 2), (1, 14), (1, 15), (4, 4), (1, 14), (1, 15), (1, 1)]
    node = [(fixed[c], fixed[c]) if c in fixed else box for c, box in enumerate(node)]
    part = [placement[c] if c in kept else {} for c in range(inst.n_components)]
    assert all(lo <= sum(per.values()) <= hi for (lo, hi), per in zip(node, placement, strict=True))
    cpu, slots = rate_model.cluster_room(inst, rho, [lo for lo, _ in node], kept)
    assert rate_model.cluster_use(inst, rho, part) <= (cpu, slots)  # the witness fits the cluster rows
    status, _ = _boxes(inst)(rho, node, None, kept)
    assert status != "infeasible"
