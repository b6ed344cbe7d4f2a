"""The ladder of level searches (:mod:`odrp.kinds.throughput.exact.ladder`): its rates by hand, its bounds against
brute force on tiny instances (in process and on a worker), and the large path that runs it."""

from __future__ import annotations

import os
import pickle
import time

import pytest

from benchmarks.throughput import random_case
from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact import bounds, ladder, level_search, parallel, rounds
from odrp.kinds.throughput.exact.settings import LadderSettings, ThroughputSettings
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_throughput_exact import best_placement, tiny
from tests.test_throughput_large import weak_start

SEEDS = range(8)


def test_rungs_by_hand():
    # incumbent 100, bound 105: max(100 * 1.0099, 105 * (1 - step)) with step 0.005; once R (1 + lift) reaches the
    # bound, the midpoint between R and B
    assert (LadderSettings().lift, LadderSettings().step, LadderSettings().bisect) == (0.0099, 0.005, 0.5)
    assert ladder.rung(100.0, 105.0) == pytest.approx(max(100.99, 105.0 * (1 - 0.005)), rel=1e-12)
    assert ladder.rung(100.0, 101.0) == pytest.approx(max(100.99, 101.0 * (1 - 0.005)), rel=1e-12)
    assert ladder.rung(100.0, 100.5) == pytest.approx(100.25, rel=1e-12)
    for best, bound in ((100.0, 105.0), (100.0, 101.0), (100.0, 100.5), (50.0, 50.001)):
        assert best < ladder.rung(best, bound) < bound


@pytest.fixture(scope="module")
def nodes():
    """Two workers shared by the tests (a worker's imports take seconds on a loaded machine)."""
    with parallel.Workers(tiny(0), 2) as workers:
        workers.start()
        yield workers


@pytest.mark.parametrize("deadline", [None, 120.0])  # without a deadline both workers take nodes at once
@pytest.mark.parametrize("seed", SEEDS)
def test_ladder_ends_at_the_brute_force_optimum(seed, deadline, nodes):
    # from a weak start (the packing at a quarter of R*) and the fluid bound, the rungs (and, with a
    # deadline, the count descent on the second worker) close the gap: every rung proven is above R*,
    # the last within 1e-6 of it, and the incumbent is R*
    inst, optimum, start = weak_start(seed)
    nodes.use(inst, ThroughputSettings())
    limit = None if deadline is None else time.perf_counter() + deadline
    climbed = ladder.climb(inst, rate(inst, start), start, bounds.fluid_bound(inst), None, limit, nodes)
    proven = [r["rho"] for r in climbed.rungs if r["proven"]]
    assert proven == sorted(proven, reverse=True) and all(b > optimum * (1 - 1e-12) for b in proven)
    assert all(r["proven"] for r in climbed.rungs) and climbed.bound == proven[-1]
    assert climbed.best == pytest.approx(optimum, rel=1e-9)
    assert evaluate_counts(inst, climbed.counts).objective == pytest.approx(climbed.best, rel=1e-12)
    assert climbed.bound <= optimum * (1 + 1e-6) + 1e-9
    nodes.start()  # the workers the ladder stopped (a descent still running) come back for the next test


@pytest.mark.parametrize("seed", SEEDS)
def test_rungs_raised_at_once_still_end_at_the_brute_force_optimum(seed, nodes):
    # last_call = 1: every rung is raised halfway to the bound as soon as it starts; the proofs stay above R*
    # and the ladder still closes the gap
    settings = LadderSettings(last_call=1.0)
    inst, optimum, start = weak_start(seed)
    nodes.use(inst, ThroughputSettings())
    climbed = ladder.climb(
        inst, rate(inst, start), start, bounds.fluid_bound(inst), None, time.perf_counter() + 120, nodes,
        settings=settings,
    )  # fmt: skip
    assert all(r["raised"] for r in climbed.rungs)
    assert all(r["proven"] and r["rho"] > optimum * (1 - 1e-12) for r in climbed.rungs)
    assert climbed.best == pytest.approx(optimum, rel=1e-9)
    assert climbed.bound <= optimum * (1 + 1e-6) + 1e-9
    nodes.start()


def test_restarted_trees_still_end_at_the_brute_force_optimum(nodes):
    # restart = 0 and tail = 1: every better placement from the descent starts a new tree, and every rung open
    # after one node starts once more (the answers of the dropped trees' nodes are ignored); the proofs stay
    # above R* and the ladder still closes the gap, and some ladders did give trees up
    settings = LadderSettings(restart=0.0, tail=1)
    restarts = 0
    for seed in SEEDS:
        inst, optimum, start = weak_start(seed)
        nodes.use(inst, ThroughputSettings())
        climbed = ladder.climb(
            inst, rate(inst, start), start, bounds.fluid_bound(inst), None, time.perf_counter() + 120, nodes,
            settings=settings,
        )  # fmt: skip
        assert all(r["proven"] and r["rho"] > optimum * (1 - 1e-12) for r in climbed.rungs)
        assert climbed.best == pytest.approx(optimum, rel=1e-9)
        assert climbed.bound <= optimum * (1 + 1e-6) + 1e-9
        restarts += climbed.restarts
        nodes.start()
    assert restarts > 0


def test_raise_incumbent_lifts_the_rate_and_ignores_worse():
    inst = tiny(0)
    optimum, optimal = best_placement(inst)
    tree = level_search.Tree(inst, 0.0, None, lambda best: max(best * 1.5, 1.0), None)
    assert tree.rho == 1.0
    assert tree.raise_incumbent(optimum, optimal) and tree.best == optimum and tree.rho == pytest.approx(1.5 * optimum)
    assert not tree.raise_incumbent(optimum / 2, optimal) and tree.best == optimum


def test_leaf_solver_takes_the_dive_only_when_it_reaches_rho():
    # a leaf at the optimal counts: at R* the dive's (or CP-SAT's) placement sustains R*; just above R*
    # the leaf is infeasible whatever the dive does
    inst = tiny(1)
    optimum, optimal = best_placement(inst)
    levels = [sum(row.values()) for row in optimal]
    leaf = ladder.leaf_solver(inst, rounds.box_solver(inst, "cpsat"))(LadderSettings().leaf_seconds)
    status, placed = leaf(optimum * (1 - 1e-9), [(n, n) for n in levels], None)
    assert status == "feasible" and rate(inst, placed) >= optimum * (1 - 1e-9)
    status, placed = leaf(optimum * (1 + 1e-6), [(n, n) for n in levels], None)
    assert status == "infeasible" and placed is None


def test_receive_reads_two_messages_that_arrive_in_one_write():
    # a worker's "ready" and its first answer in one pipe write: the second must not stay unread in a
    # buffer the selector does not see (a search without a deadline would wait for it forever)
    workers = parallel.Workers(tiny(0), 1)
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
    # 14 components x 30 machines > config_up_to: the ladder runs on a worker during the descent; its bound
    # is never below the incumbent, and the method's bound is the lowest known
    inst = random_case(1, 14, 30)
    result = run_method(KINDS["throughput"], inst, "exact", solver="cpsat", time_limit=20)
    stats = result.metrics["method_stats"]
    assert result.verified and result.status in ("optimal", "time_limit")
    assert stats["ladder"]["rungs"] and stats["ladder"]["best"] == pytest.approx(result.objective, rel=1e-12)
    assert result.objective <= result.bound <= min(stats["ladder"]["bound"], stats["config_bound"]) + 1e-9
