"""The level search (branch and bound over instance counts) against brute force on tiny instances."""

from __future__ import annotations

import itertools
import random
import types

import pytest

from odrp.kinds.throughput.evaluator import evaluate_counts
from odrp.kinds.throughput.exact import config_bound, level_search, rounds, targets
from odrp.kinds.throughput.exact.settings import LevelSearchSettings, ThroughputSettings
from odrp.kinds.throughput.exact.solve import solve
from odrp.kinds.throughput.instance import load
from tests.test_throughput_config_bound import PACKING
from tests.test_throughput_exact import best_placement, brute_force, tiny

GAP = 1e-6


def _boxes(inst):
    """P(rho) on a box of levels (or on a subset of the components), as the exact method gives it to the search
    (cpsat, level form)."""
    return rounds.box_solver(inst, "cpsat")


@pytest.mark.parametrize("seed", range(8))
def test_search_from_a_poor_start_reaches_the_brute_force_optimum(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    out = level_search.search(inst, optimum / 2, None, _boxes(inst), lambda best: best * (1 + GAP / 2))
    assert out.proven  # the tree emptied at rho = best (1 + GAP/2): no placement reaches it
    assert out.best == pytest.approx(optimum, rel=GAP)
    assert evaluate_counts(inst, out.counts).objective == pytest.approx(out.best, rel=1e-12)


def test_a_leaf_box_is_decided_at_once():
    """tiny(7)'s leaf vector (2, 2, 2) at 707.73 (half its optimum: a placement exists): CP-SAT 9.15 with one worker,
    maximising the machines' least slack, found no solution in 10 s (the search of this test's neighbour took 190 s);
    a box is a yes-or-no question, without that objective it is answered in milliseconds."""
    import time

    inst = tiny(7)
    rho = 707.732312628866
    assert rho <= brute_force(inst)[0]
    status, found = _boxes(inst)(rho, [(2, 2)] * 3, time.perf_counter() + 5.0)
    assert status == "feasible" and [sum(per.values()) for per in found] == [2, 2, 2]
    assert evaluate_counts(inst, found).objective >= rho * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_search_proves_a_rate_just_above_the_optimum_and_not_below(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    above = level_search.search(inst, optimum, None, _boxes(inst), lambda best: optimum * (1 + 1e-6))
    assert above.proven and above.counts is None  # nothing found above R*, the rate refuted
    below = level_search.search(inst, 0.0, None, _boxes(inst), lambda best: max(best, optimum * (1 - 1e-3)))
    assert below.counts is not None and below.best >= optimum * (1 - 1e-3)  # a placement there is found


def test_search_on_the_packing_case_by_hand():
    # tests/test_throughput_config_bound.py: R* = 60 (a and b on one machine each); from a start at 30
    # the search must find 60 and prove 60 (1 + 5e-7) out of reach
    inst = load(PACKING)
    out = level_search.search(inst, 30.0, None, _boxes(inst), lambda best: max(best, 30.0) * (1 + GAP / 2))
    assert out.proven and out.best == pytest.approx(60.0, rel=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_restricted_configuration_bound_never_refutes_a_box_holding_the_optimum(seed):
    inst = tiny(seed)
    optimum, counts = best_placement(inst)
    levels = [sum(per.values()) for per in counts]
    rng = random.Random(seed)
    for _ in range(4):  # the point box, and random boxes around the optimal counts
        box = [(max(1, n - rng.randint(0, 2)), n + rng.randint(0, 2)) for n in levels]
        for rho in (optimum, optimum * (1 - 1e-3)):
            assert config_bound.ConfigurationLP(inst, rho, within=box).refutes() is not True
        point = [(n, n) for n in levels]
        assert config_bound.ConfigurationLP(inst, optimum, within=point).refutes() is not True


def test_outside_partitions_a_node_minus_a_box():
    levels = [(1, 4), (2, 3), (1, 5)]
    box = [(2, 3), (3, 3), (1, 2)]
    children = level_search._outside(levels, box)
    inside = list(itertools.product(*(range(a, b + 1) for a, b in box)))
    covered = [v for child in children for v in itertools.product(*(range(a, b + 1) for a, b in child))]
    every = list(itertools.product(*(range(a, b + 1) for a, b in levels)))
    assert len(covered) == len(set(covered)) == len(every) - len(inside)  # disjoint children: 4*2*5 - 2*1*2 = 36
    assert set(covered) | set(inside) == set(every)


def solve_through_level_search(inst, **changes):
    """The exact method with its first bisection round undecided, so that it goes on with the configuration bound
    and level-search rounds (the route 10 x 10 instances take): under a long time limit a bisection round before the
    configuration bound gets ``first_box`` seconds and at least ``min_box``, here 0, so it is not even built. The
    start is a solution of P(0) (``search_start`` off). The outcome and the rates of the rounds left undecided."""
    settings = ThroughputSettings(
        first_box=0.0, min_box=0.0, config_lp=True, pattern_lp=False, search_start=False, **changes
    )
    outcome = solve(inst, formulation="levels", time_limit=3600, settings=settings)
    rounds_ = outcome.stats["rounds"]
    undecided = [r["rho"] for r in rounds_ if r.get("status") == "time_limit" and "level_search" not in r]
    return outcome, undecided


@pytest.mark.parametrize("seed", [1, 3, 5])  # seeds whose first round above P(0) bisects
def test_exact_method_through_the_level_search_equals_brute_force(seed):
    """The first bisection round undecided: the search goes on with the configuration bound and level-search
    rounds, and still proves brute force's optimum."""
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    outcome, undecided = solve_through_level_search(inst)
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6)
    assert undecided and any("level_search" in record for record in outcome.stats["rounds"])


class _Raising:
    """Targets as the exact method's level rounds give them: ``start`` first, then ``stalled`` raises rho to
    halfway to ``ceiling``."""

    def __init__(self, start, ceiling):
        self.start, self.ceiling, self.asked = start, ceiling, []

    def __call__(self, best):
        return max(best * (1 + GAP / 2), self.start)

    def stalled(self, rho):
        self.asked.append(rho)
        return rho + 0.5 * (self.ceiling - rho) if self.ceiling > rho * 1.002 else None


@pytest.mark.parametrize("stall", [1, 2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_a_stalled_search_raised_to_a_higher_rate_proves_only_rates_above_the_optimum(seed, stall):
    """After ``stall`` nodes without a new incumbent the rate rises (halfway to a ceiling 1.5 R*): what the
    search proves is still above brute force's optimum, what it finds is a placement the evaluator accepts,
    and the raise is the one the targets asked for."""
    settings = LevelSearchSettings(stall_nodes=stall)
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    start = optimum * (1 - 1e-3)  # just below R*: the search must find a placement in [start, R*] or stall
    targets = _Raising(start, 1.5 * optimum)
    out = level_search.search(inst, 0.0, None, _boxes(inst), targets, settings=settings)
    assert out.proven  # a rate below 1.5 R* proven out of reach: the tree emptied
    assert out.rho > optimum  # never a rate at or below R*
    assert out.best <= optimum * (1 + 1e-9)
    if out.counts is not None:
        assert evaluate_counts(inst, out.counts).objective == pytest.approx(out.best, rel=1e-12)
    for raised in out.stats.raised:  # every raise is halfway from a rate the targets were asked about
        assert any(raised == pytest.approx(rho + 0.5 * (1.5 * optimum - rho), rel=1e-12) for rho in targets.asked)
    if out.stats.nodes >= stall and not out.stats.incumbents:
        assert targets.asked  # a search that ran that long without an incumbent asked to rise


@pytest.mark.parametrize("seed", range(8))
def test_a_search_is_never_raised_without_stalled(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    settings = LevelSearchSettings(stall_nodes=1)
    target = optimum * (1 + 1e-6)
    plain = level_search.search(inst, 0.0, None, _boxes(inst), lambda best: max(best, target), settings=settings)
    assert plain.proven and plain.rho == pytest.approx(optimum * (1 + 1e-6)) and not plain.stats.raised


@pytest.mark.parametrize("seed", [1, 3, 5])
def test_exact_method_raising_after_every_node_equals_brute_force(seed):
    """The exact method with its level searches raised after every node (``stall_nodes`` = 1): raised
    searches prove bounds above R*, later searches bisect below them, and the optimum is brute force's."""
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    outcome, _ = solve_through_level_search(inst, level_search=LevelSearchSettings(stall_nodes=1))
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6)


def test_targets_raise_bisection_targets_only():
    # bound 100, reach 0.5: from an incumbent at 90 the target bisects, 90 + 0.5 (100 - 90) = 95, and a stalled
    # search at 95 rises halfway to the bound, 95 + 0.5 (100 - 95) = 97.5; from 99.9 the bound is within
    # level_wide (100 <= 99.9 x 1.005 = 100.3995): the target is the last one, 99.9 (1 + gap/2), never raised
    level_wide = ThroughputSettings().level_wide
    assert level_wide == 0.005
    rates = targets.Targets(100.0, 0.5, 1e-6, level_wide)
    assert rates(90.0) == pytest.approx(95.0) and rates.stalled(95.0) == pytest.approx(97.5)
    assert rates.stalled(99.85) is None  # 100 <= 99.85 x 1.005 = 100.34925: too near the bound to bisect
    assert rates(99.9) == pytest.approx(99.9 * (1 + 5e-7)) and rates.stalled(99.9 * (1 + 5e-7)) is None
    # a bisection step must also exceed level_wide: 0.5 (100 - 99.4) = 0.3 <= 0.005 x 99.4 = 0.497, the last target
    # (at 0.002 it would bisect: 0.3 > 0.199); 0.5 (100 - 98.9) = 0.55 > 0.4945: it bisects to 99.45
    assert rates(99.4) == pytest.approx(99.4 * (1 + 5e-7))
    assert rates(98.9) == pytest.approx(99.45)
    assert targets.Targets(100.0, 0.5, 1e-6, 0.002)(99.4) == pytest.approx(99.7)


@pytest.mark.parametrize("branch", ["spread", "width", "size", "mass", "product"])
@pytest.mark.parametrize("seed", range(8))
def test_every_branching_rule_proves_brute_force_optimum_and_nothing_below(seed, branch):
    """Whatever component a split divides (``branch``), the search proves R* (1 + 1e-6) out of reach and finds a
    placement at R* (1 - 1e-3)."""
    settings = LevelSearchSettings(branch=branch)
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    above = level_search.search(inst, optimum, None, _boxes(inst), lambda best: optimum * (1 + 1e-6), settings=settings)
    assert above.proven and above.counts is None
    below = level_search.search(
        inst, 0.0, None, _boxes(inst), lambda best: max(best, optimum * (1 - 1e-3)), settings=settings
    )
    assert below.counts is not None and below.best >= optimum * (1 - 1e-3)
    assert evaluate_counts(inst, below.counts).objective == pytest.approx(below.best, rel=1e-12)


def test_scores_of_the_branching_rules_by_hand():
    # the packing case (tests/test_throughput_config_bound.py); a fake LP whose lambda puts component 0 at levels
    # 1 (share 0.25) and 3 (0.75) and component 1 at level 2 alone: only component 0 can be split.
    inst = load(PACKING)

    lp = types.SimpleNamespace(rho=60.0, shares={(0, 1): 0.25, (0, 3): 0.75, (1, 2): 1.0})

    used = [[1, 3], [2]]
    load0 = min(inst.coefficient(0, w) / inst.capacity[w] for w in range(inst.n_machines)) * 60.0
    assert level_search.score(inst, lp, used, 0, "spread") == pytest.approx(2 + 2 / 1000)
    assert level_search.score(inst, lp, used, 0, "width") == pytest.approx(load0 * (1 - 1 / 3))
    # sizes load0 and load0 / 3, mean 0.25 load0 + 0.75 load0 / 3 = 0.5 load0: variance 0.25 (0.5)^2 + 0.75 (1/6)^2
    assert level_search.score(inst, lp, used, 0, "size") == pytest.approx(load0**2 * (0.0625 + 0.75 / 36))
    assert level_search.score(inst, lp, used, 0, "mass") == pytest.approx(0.25)
    assert level_search.score(inst, lp, used, 0, "product") == pytest.approx(load0 * (1 - 1 / 3) * 2)  # width x 2
    for rule in ("width", "size", "mass", "product"):
        assert level_search.score(inst, lp, used, 1, rule) == -1.0
    # the split at the mean level 0.25 x 1 + 0.75 x 3 = 2.5: N_0 in [1, 2] or [3, 5]; more weight above, so the
    # upper child is explored first (last in stack order)
    assert level_search._split(lp, used, [(1, 5), (2, 2)], 0) == [[(1, 2), (2, 2)], [(3, 5), (2, 2)]]
