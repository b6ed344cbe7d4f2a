"""The ideal point of an ODRP instance (:mod:`odrp.kinds.replication.exact.ideal`): each metric's best
value bound, checked against every placement by brute force, and the bound of a run whose solver never
started."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

import odrp
from odrp.kinds.replication.evaluator import evaluate_placement
from odrp.kinds.replication.exact.ideal import ideal_bound, ideal_metrics
from odrp.kinds.replication.generators import random_instance
from odrp.kinds.replication.instance import load
from odrp.registry import KINDS
from tests.bruteforce import odrp_optimum
from tests.test_odrp_evaluator import TINY
from tests.test_odrp_exact import CASES, tiny

ODRP = KINDS["odrp"]


def feasible_metrics(inst):
    """The metrics of every feasible placement (every multiset of candidates per operator)."""
    choices = [
        [
            dict(Counter(ms))
            for k in range(1, inst.max_replicas[i] + 1)
            for ms in itertools.combinations_with_replacement(inst.candidates[i], k)
        ]
        for i in range(inst.n_operators)
    ]
    for placement in itertools.product(*choices):
        evaluation = evaluate_placement(inst, list(placement))
        if evaluation.feasible:
            yield evaluation.metrics


@pytest.mark.parametrize(("seed", "profile", "metric"), CASES)
def test_each_ideal_metric_is_at_least_as_good_as_every_placements(seed, profile, metric):
    inst = load(tiny(seed, profile, metric, operators=4))
    ideal = ideal_metrics(inst)
    every = list(feasible_metrics(inst))
    assert every
    assert ideal["response_time"] <= min(m["response_time"] for m in every) + 1e-9
    assert ideal["cost"] <= min(m["cost"] for m in every) + 1e-9
    assert ideal["network"] <= min(m["network"] for m in every) + 1e-9
    assert ideal["availability"] >= max(m["log_availability"] for m in every) - 1e-9
    assert ideal_bound(inst) >= odrp_optimum(inst)[0] - 1e-9


def test_the_tiny_instances_ideal_point_by_hand():
    """TINY (tests/test_odrp_evaluator.py): src's 0.1 on a; op's best latency 1/(15 - 10/2) = 0.1 at two
    replicas, halved on b (speed-up 2); snk's 5 ms halved on b; a stream within a node has no delay, no
    link cost and no traffic; one replica each costs 3; node a has availability 1."""
    ideal = ideal_metrics(load(TINY))
    assert ideal == pytest.approx({"response_time": 0.1525, "cost": 3.0, "network": 0.0, "availability": 0.0})
    expected = 0.25 * (0.5 - 0.1525) / 0.4 + 0.25 * 1 + 0.25 * (13 - 3) / 10 + 0.25 * 1
    assert ideal_bound(load(TINY)) == pytest.approx(expected)


def test_a_warm_start_under_five_seconds_returns_a_bound_and_says_why():
    """24 operators on 16 nodes with a 5 s limit: the start heuristics and the warm start share it; the
    run returns the best incumbent, a bound (the solver's, or the ideal point's when the model never
    reached it) and a message."""
    data = random_instance(seed=2001, operators=24, nodes=16, max_replicas=3, weights_profile="balanced")
    result = odrp.solve(data, time_limit=5, warm_start="odrp_tabu")
    assert result.verified and result.objective is not None
    assert result.bound is not None and result.bound >= result.objective - 1e-9
    assert result.gap is not None and math.isfinite(result.gap)
    assert result.message
    assert result.runtime_s < 5 + 1.5
