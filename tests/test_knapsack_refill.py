"""The refill search (odrp/kinds/knapsack/exact/refill.py) and its place in the arc-flow search.

Expected numbers come from brute force written here (every subset for a knapsack) or over all MKP
solutions scored by the kind's evaluator (tests/knapsack_bruteforce.py).
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import replace

import numpy as np
import pytest

from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.exact import arcflow, bounds, refill
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings, KnapsackSettings
from odrp.kinds.knapsack.mapping import family_of, solution_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum
from tests.test_knapsack_arcflow import tiny_cases

MKP = KINDS["mkp"]
REFILL_FIRST = replace(ArcFlowSettings(), packing_step=False, master_seconds=0.0, refill_arcs=0)
"""No packing step, no integer master, and the refill before the first graph stage, however small."""


def test_fill_is_an_optimal_knapsack():
    """Against every subset of the items."""
    rng = random.Random(4)
    for _ in range(40):
        n, capacity = rng.randint(1, 8), rng.randint(0, 20)
        weight = np.array([rng.randint(1, 9) for _ in range(n)])
        items = sorted(rng.sample(range(n), rng.randint(1, n)))
        values = np.array([rng.choice([-1.0, 0.5, 2.0, 3.0, 7.0]) for _ in items])
        chosen = refill.fill(items, values, weight, capacity)
        assert set(chosen) <= set(items) and weight[chosen].sum() <= capacity
        best = max(
            sum(values[t] for t in pick)
            for r in range(len(items) + 1)
            for pick in itertools.combinations(range(len(items)), r)
            if weight[[items[t] for t in pick]].sum() <= capacity
        )
        assert sum(values[items.index(j)] for j in chosen) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(1, 7))
def test_search_packs_feasibly_and_reaches_the_optimum(seed):
    """Copies within their counts, loads within capacity; on 7-8 items it finds the brute-force optimum."""
    data = gen.mkp(seed=seed, items=7 + seed % 2, knapsacks=2 + seed % 2, correlation="strong", max_weight=20)
    best = optimum("mkp", MKP.load(data, "tiny"))
    profit, weight = np.array(data["profits"], float), np.array(data["weights"])
    capacity = np.array(data["capacities"])
    noise = ArcFlowSettings().refill_noise
    counts, _ = refill.search(
        profit, weight, np.ones(len(profit), int), capacity, None, best, time.perf_counter() + 5, noise
    )
    assert counts.sum(axis=1).max() <= 1
    assert (weight @ counts <= capacity).all()
    assert float(profit @ counts.sum(axis=1)) == best


@pytest.mark.parametrize("data", tiny_cases(), ids=lambda d: d.get("name", d["problem"]))
def test_arcflow_with_the_refill_equals_brute_force(data):
    """With the packing step and the integer master switched off, the refill runs at the first graph stage
    from the empty packing; it meets the bound or the thresholds start again from the bound proven so
    far down to its value + 1. The optimum is brute force's."""
    kind = KINDS[data["problem"]]
    instance = kind.load(data, "tiny")
    result = run_method(kind, instance, "exact", formulation="arcflow", options=KnapsackSettings(arcflow=REFILL_FIRST))
    assert result.status == "optimal" and result.verified, result.message
    best = optimum(data["problem"], instance)
    assert result.objective == pytest.approx(best, abs=1e-9)
    assert result.bound == pytest.approx(best, abs=1e-9)
    stats = result.metrics["method_stats"]
    assert "refill" in stats or stats["stages"] == []  # no stage: nothing to pack (kp with all fitting)


@pytest.mark.parametrize("data", tiny_cases()[:9], ids=lambda d: d.get("name", d["problem"]))
def test_a_better_incumbent_below_the_bound_restarts_the_thresholds(data):
    """The refill made to return its packing less one copy (better than the empty start, below the
    bound): the graph stages from the bound proven so far must still find brute force's optimum. The
    search is called as the exact method calls it (on the tightened family), with that refill."""

    def one_copy_short(*args, **kwargs):
        counts, moves = refill.search(*args, **kwargs)
        packed = np.argwhere(counts)
        if len(packed) > 1:
            counts[tuple(packed[0])] -= 1
        return counts, moves

    instance = MKP.load(data, "tiny")
    family = bounds.reduce_capacities(family_of(instance))
    run, counts, stats = arcflow.solve(family, settings=REFILL_FIRST, refill_search=one_copy_short)
    evaluation = MKP.evaluate(instance, solution_of(instance, family, counts), "<arc-flow>")
    assert run.status == "optimal" and evaluation.feasible, run.message
    assert evaluation.objective == pytest.approx(run.objective, abs=1e-9)  # what run_method calls verified
    assert run.objective == pytest.approx(optimum("mkp", instance), abs=1e-9)
    assert stats["stages"] and "arcs" in stats["stages"][-1]  # settled by a graph stage after the restart
