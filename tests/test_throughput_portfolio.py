"""The portfolio of the throughput search: the count descent on a worker process beside the bounds and searches.

Against brute force on tiny instances (:func:`tests.test_throughput_exact.brute_force`): the side descent sends
only feasible placements, each better than the last and never above R*, and stops on its patience (then its
worker takes nodes); a level search with the descent beside it, and the whole search with the portfolio on,
end at the brute-force optimum.
"""

from __future__ import annotations

import time

import pytest

from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact import bounds, parallel
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.solve import solve
from odrp.kinds.throughput.exact.targets import Targets
from tests.test_throughput_large import weak_start

WAIT = 120.0
"""Seconds a test waits for a worker at most (a loaded machine)."""


@pytest.fixture(scope="module")
def nodes():
    """Two workers shared by the tests (a worker's imports take seconds on a loaded machine)."""
    inst, _, _ = weak_start(0)
    with parallel.Workers(inst, 2) as workers:
        workers.start()
        yield workers


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_side_descent_sends_better_placements_then_stops(seed, nodes):
    inst, optimum, start = weak_start(seed)
    nodes.use(inst, ThroughputSettings())
    assert nodes.side is None and nodes.descent is None  # a new instance: no descent yet
    nodes.descend(start, rate(inst, start), WAIT, patience=0.2)
    found = []
    began = time.perf_counter()
    while nodes.side is not None and time.perf_counter() - began < WAIT:
        found += nodes.drain()
        time.sleep(0.05)
    assert nodes.side is None and nodes.descent["finished"] is True
    rates = [value for value, _ in found]
    assert rates == sorted(rates) and all(value > rate(inst, start) for value in rates)
    for value, counts in found:
        evaluation = evaluate_counts(inst, counts)
        assert evaluation.feasible and evaluation.objective == pytest.approx(value, rel=1e-12)
        assert value <= optimum * (1 + 1e-9)
    assert nodes.descent["rate"] == max([rate(inst, start), *rates])


@pytest.mark.parametrize("seed", [0, 4, 5])
def test_a_level_search_beside_the_descent_proves_the_brute_force_optimum(seed, nodes):
    inst, optimum, start = weak_start(seed)
    nodes.use(inst, ThroughputSettings())
    nodes.descend(start, rate(inst, start), WAIT, patience=1.0)
    upper = bounds.fluid_bound(inst)
    best, counts = rate(inst, start), start
    while True:  # level searches from the weak start, as the rate search runs them, until the gap is closed
        searched = parallel.search(
            inst, best, counts, nodes, Targets(upper, 0.5, 1e-6, 0.005), time.perf_counter() + WAIT
        )
        best, counts = searched.best, searched.counts
        if not searched.proven:
            pytest.fail("a level search stopped unproven")
        upper = min(upper, searched.rho)
        if upper - best <= 1e-6 * best:
            break
    assert best == pytest.approx(optimum, rel=1e-6) and upper >= optimum * (1 - 1e-12)
    nodes.start()  # a descent still running was stopped with the search's workers: back for the next test


@pytest.mark.parametrize("seed", [0, 2, 5, 7])
def test_the_search_with_the_portfolio_on_ends_at_the_brute_force_optimum(seed):
    inst, optimum, _ = weak_start(seed)
    settings = ThroughputSettings(portfolio_above=0)
    outcome = solve(inst, time_limit=WAIT, formulation="levels", settings=settings)
    assert outcome.run.status == "optimal" and outcome.run.objective == pytest.approx(optimum, rel=1e-6)
    assert "count_descent" in outcome.stats  # the descent ran beside the search
