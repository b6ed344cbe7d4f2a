"""The ladder of level searches (:mod:`odrp.models.throughput.ladder`): its rates by hand, its bounds against
brute force on tiny instances (in process and on a worker), and the large path that runs it."""

from __future__ import annotations

import os
import pickle

import pytest

from benchmarks.throughput import random_case
from odrp.methods import run_method
from odrp.models import throughput as exact_throughput
from odrp.models.throughput import bounds, ladder, level_search, parallel
from odrp.problems import KINDS
from odrp.problems.throughput import evaluate_counts, rate
from tests.test_throughput_exact import tiny
from tests.test_throughput_large import weak_start
from tests.test_throughput_level_search import _optimal_counts

SEEDS = range(8)


def test_rungs_by_hand():
    # incumbent 100, bound 105: max(100 * 1.0099, 105 * (1 - STEP)); once R (1 + LIFT) reaches the bound,
    # the midpoint between R and B
    assert ladder.rung(100.0, 105.0) == pytest.approx(max(100.99, 105.0 * (1 - ladder.STEP)), rel=1e-12)
    assert ladder.rung(100.0, 101.0) == pytest.approx(max(100.99, 101.0 * (1 - ladder.STEP)), rel=1e-12)
    assert ladder.rung(100.0, 100.5) == pytest.approx(100.25, rel=1e-12)
    for best, bound in ((100.0, 105.0), (100.0, 101.0), (100.0, 100.5), (50.0, 50.001)):
        assert best < ladder.rung(best, bound) < bound


def _climb(inst, best, counts, bound, deadline=None, poll=None):
    reports: list[tuple] = []
    solve_box = exact_throughput._box_solver(inst, "cpsat", True, 1)
    stats = ladder.climb(
        inst, best, counts, bound, None, deadline, solve_box, exact_throughput._improver(inst), reports.append,
        1e-6, poll,
    )  # fmt: skip
    return stats, reports


@pytest.mark.parametrize("seed", SEEDS)
def test_ladder_without_a_deadline_ends_at_the_brute_force_optimum(seed):
    # from a weak start (the packing at a quarter of R*) and the fluid bound, the rungs end with the gap
    # closed: every bound reported is above R*, the last within 1e-6 of it, and the incumbent is R*
    inst, optimum, start = weak_start(seed)
    stats, reports = _climb(inst, rate(inst, start), start, bounds.fluid_bound(inst))
    proven = [item[1] for item in reports if item[0] == "bound"]
    assert proven == sorted(proven, reverse=True) and all(b > optimum * (1 - 1e-12) for b in proven)
    assert stats["best"] == pytest.approx(optimum, rel=1e-9)
    assert stats["bound"] <= optimum * (1 + 1e-6) + 1e-9
    assert all(rung["proven"] for rung in stats["rungs"])
    found = [item for item in reports if item[0] == "placement"]
    for _, found_rate, counts in found:  # every placement reported is feasible at its rate
        assert evaluate_counts(inst, counts).objective == pytest.approx(found_rate, rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_placement_passed_in_raises_the_rungs(seed):
    # the optimal placement, passed in at the first poll: the incumbent is R* at once, the search finds
    # nothing better, and the ladder still ends within 1e-6 of R*
    inst, optimum, start = weak_start(seed)
    _, optimal = _optimal_counts(inst)
    told = [(rate(inst, optimal), optimal)]
    stats, reports = _climb(
        inst, rate(inst, start), start, bounds.fluid_bound(inst), poll=lambda: told.pop() if told else None
    )
    assert not told
    assert stats["best"] == pytest.approx(optimum, rel=1e-12)
    assert not [item for item in reports if item[0] == "placement"]
    assert optimum * (1 - 1e-12) <= stats["bound"] <= optimum * (1 + 1e-6) + 1e-9


def test_raise_incumbent_lifts_the_rate_and_ignores_worse():
    inst = tiny(0)
    optimum, optimal = _optimal_counts(inst)
    tree = level_search.Tree(inst, 0.0, None, lambda best: max(best * 1.5, 1.0), None)
    assert tree.rho == 1.0
    assert tree.raise_incumbent(optimum, optimal) and tree.best == optimum and tree.rho == pytest.approx(1.5 * optimum)
    assert not tree.raise_incumbent(optimum / 2, optimal) and tree.best == optimum


def test_leaf_solver_takes_the_dive_only_when_it_reaches_rho():
    # a leaf at the optimal counts: at R* the dive's (or CP-SAT's) placement sustains R*; just above R*
    # the leaf is infeasible whatever the dive does
    inst = tiny(1)
    optimum, optimal = _optimal_counts(inst)
    levels = [sum(row.values()) for row in optimal]
    solve_box = exact_throughput._box_solver(inst, "cpsat", True, 1)
    leaf = ladder._leaf_solver(inst, solve_box, ladder.dive.Pool(len(inst.machine_classes)))(ladder.LEAF_SECONDS)
    status, placed = leaf(optimum * (1 - 1e-9), [(n, n) for n in levels], None)
    assert status == "feasible" and rate(inst, placed) >= optimum * (1 - 1e-9)
    status, placed = leaf(optimum * (1 + 1e-6), [(n, n) for n in levels], None)
    assert status == "infeasible" and placed is None


@pytest.mark.parametrize("seed", [2, 5])
def test_climber_on_a_worker_reports_bounds_above_brute_force(seed):
    inst, optimum, start = weak_start(seed)
    _, optimal = _optimal_counts(inst)
    with ladder.Climber(inst, ("cpsat", True, 1)) as climber:
        climber.start()
        climber.climb(rate(inst, start), start, bounds.fluid_bound(inst), None, None, 1e-6)
        climber.tell(optimal)
        climber.collect(patience=120.0)
        assert climber.stats is not None  # it finished: without a deadline the gap closes
        assert optimum * (1 - 1e-12) <= climber.bound <= optimum * (1 + 1e-6) + 1e-9
        assert climber.best <= optimum * (1 + 1e-12)
    assert not climber.workers.procs


def test_receive_reads_two_messages_that_arrive_in_one_write():
    # a worker's "ready" and its first answer in one pipe write: the second must not stay unread in a
    # buffer the selector does not see (the search waited for it forever before stop 18)
    workers = parallel.Workers(tiny(0), 1, ("cpsat", True, 1))
    read_end, write_end = os.pipe()

    class Pipe:
        pid = -1
        stdout = open(read_end, "rb", buffering=0)  # noqa: SIM115  # as Workers.start opens a worker's stdout

    try:
        workers.selector.register(Pipe.stdout, parallel.selectors.EVENT_READ, Pipe)
        blob = b""
        for message in (("ready", None, 0.0), ("ok", "answer", 0.0)):
            body = pickle.dumps(message)
            blob += parallel._HEADER.pack(len(body)) + body
        os.write(write_end, blob)
        assert workers.receive(1.0) is None and Pipe.pid in workers.ready  # the "ready" message
        assert workers.receive(1.0) == (Pipe, "answer")
    finally:
        workers.selector.unregister(Pipe.stdout)
        Pipe.stdout.close()
        os.close(write_end)


def test_large_instance_runs_the_ladder_beside_the_descent():
    # 14 components x 30 machines > CONFIG_UP_TO: the ladder runs on a worker during the descent; its bound
    # is never below the incumbent, and the method's bound is the lowest known
    inst = random_case(1, 14, 30)
    result = run_method(KINDS["throughput"], inst, "exact", solver="cpsat", time_limit=20)
    stats = result.metrics["method_stats"]
    assert result.verified and result.status in ("optimal", "time_limit")
    assert "ladder" in stats
    assert result.objective <= result.bound <= min(stats["ladder"]["bound"], stats["config_bound"]) + 1e-9
    assert stats["ladder"]["best"] <= result.objective * (1 + 1e-12)
