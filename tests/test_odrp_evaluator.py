"""The ODRP evaluator against numbers worked out by hand from the paper's eqs. (1)-(21).

The tiny instance: nodes a (capacity 2, speed-up 1, availability 1) and b (capacity 2, speed-up 2,
availability 0.9), one link a-b (delay 10 ms, availability 0.95, cost 0.5 per tuple), and the chain
src -> op -> snk with src: mu 20, input 10 t/s, pinned on a; op: mu 15, k = 2; snk: fixed latency 5 ms.
Streams: src->op 10 t/s, 2 bytes per tuple; op->snk 8 t/s, 4 bytes per tuple.
"""

from __future__ import annotations

import copy
import math

import pytest

from odrp.core.errors import InputError
from odrp.kinds.replication.evaluator import evaluate
from odrp.kinds.replication.instance import load

TINY = {
    "problem": "odrp",
    "name": "tiny",
    "operators": [
        {"id": "src", "service_rate": 20, "input_rate": 10, "candidates": ["a"]},
        {"id": "op", "service_rate": 15, "max_replicas": 2},
        {"id": "snk", "latency": 0.005},
    ],
    "streams": [
        {"from": "src", "to": "op", "rate": 10, "bytes_per_tuple": 2},
        {"from": "op", "to": "snk", "rate": 8, "bytes_per_tuple": 4},
    ],
    "nodes": [
        {"id": "a", "capacity": 2, "speedup": 1.0, "availability": 1.0},
        {"id": "b", "capacity": 2, "speedup": 2.0, "availability": 0.9},
    ],
    "links": [{"from": "a", "to": "b", "delay": 0.01, "availability": 0.95, "cost": 0.5}],
    "objective": {
        "weights": {"response_time": 0.25, "availability": 0.25, "cost": 0.25, "network": 0.25},
        "network_metric": "traffic",
        "bounds": {"response_time": [0.1, 0.5], "availability": [0.8, 1.0], "cost": [3, 13], "network": [0, 100]},
    },
}

SPLIT = {"placement": {"src": {"a": 1}, "op": {"a": 1, "b": 1}, "snk": {"b": 1}}}


def with_metric(metric: str) -> dict:
    data = copy.deepcopy(TINY)
    data["objective"]["network_metric"] = metric
    return data


def test_split_placement_by_hand():
    ev = evaluate(load(TINY), SPLIT)
    assert ev.feasible, ev.violations
    # R_src = 1/(20-10) = 0.1; R_op = 1/(15 - 10/2) = 0.1 on min speed 1; R_snk = 0.005/2 (node b);
    # both streams cross a-b somewhere: 10 ms each.
    assert ev.metrics["response_time"] == pytest.approx(0.1 + 0.01 + 0.1 + 0.01 + 0.0025, rel=1e-12)
    # replicas 1 + 2 + 1; src->op: 10/(1*2) = 5 per replica pair, pair (a,b) costs 0.5;
    # op->snk: 8/(2*1) = 4 per pair, pair (a,b) costs 0.5; (a,a) and (b,b) are free.
    assert ev.metrics["cost"] == pytest.approx(4 + 5 * 0.5 + 4 * 0.5, rel=1e-12)
    # traffic: 5 t/s * 2 B (a->b) + 4 t/s * 4 B (a->b)
    assert ev.metrics["network"] == pytest.approx(26.0, rel=1e-12)
    # availability: nodes a (1.0) and b (0.9), link a-b once (it carries both streams): 0.9 * 0.95
    assert ev.metrics["availability"] == pytest.approx(0.855, rel=1e-12)
    assert ev.metrics["replicas"] == {"src": 1, "op": 2, "snk": 1}
    expected_f = (
        0.25 * (0.5 - 0.2225) / 0.4
        + 0.25 * (math.log(0.855) - math.log(0.8)) / (0 - math.log(0.8))
        + 0.25 * (13 - 8.5) / 10
        + 0.25 * (100 - 26) / 100
    )
    assert ev.objective == pytest.approx(expected_f, rel=1e-12)


@pytest.mark.parametrize(("metric", "expected"), [("usage", 26 * 0.01), ("elastic_energy", 26 * 0.01**2)])
def test_network_metrics_by_hand(metric, expected):
    ev = evaluate(load(with_metric(metric)), SPLIT)
    assert ev.metrics["network"] == pytest.approx(expected, rel=1e-12)


def test_single_replica_on_fast_node():
    ev = evaluate(load(TINY), {"placement": {"src": {"a": 1}, "op": {"b": 1}, "snk": {"a": 1}}})
    assert ev.feasible
    # R_op = 1/(15-10) = 0.2 on speed 2 -> 0.1; snk on a: 0.005; delays a->b and b->a: 10 ms each
    assert ev.metrics["response_time"] == pytest.approx(0.1 + 0.01 + 0.1 + 0.01 + 0.005, rel=1e-12)
    # traffic: src->op 10 t/s * 2 B, op->snk 8 t/s * 4 B; both cross
    assert ev.metrics["network"] == pytest.approx(20 + 32, rel=1e-12)


def test_reverse_link_given_separately_is_a_second_link():
    data = copy.deepcopy(TINY)
    data["links"].append({"from": "b", "to": "a", "delay": 0.03, "availability": 0.5})
    ev = evaluate(load(data), {"placement": {"src": {"a": 1}, "op": {"b": 1}, "snk": {"a": 1}}})
    # a->b keeps 10 ms, b->a now takes 30 ms; both links are used: 0.9 * 0.95 * 0.5
    assert ev.metrics["response_time"] == pytest.approx(0.1 + 0.01 + 0.1 + 0.03 + 0.005, rel=1e-12)
    assert ev.metrics["availability"] == pytest.approx(0.9 * 0.95 * 0.5, rel=1e-12)
    # the reverse link's cost defaults to 0: only src->op (a->b, 10 t/s at 0.5) costs
    assert ev.metrics["cost"] == pytest.approx(3 + 10 * 0.5, rel=1e-12)


def test_all_co_located_has_no_network_terms():
    data = copy.deepcopy(TINY)
    data["nodes"][0]["capacity"] = 3
    ev = evaluate(load(data), {"placement": {"src": {"a": 1}, "op": {"a": 1}, "snk": {"a": 1}}})
    assert ev.metrics["response_time"] == pytest.approx(0.1 + 0.2 + 0.005, rel=1e-12)
    assert ev.metrics["network"] == 0
    assert ev.metrics["availability"] == 1.0
    assert ev.metrics["cost"] == 3


@pytest.mark.parametrize(
    ("placement", "violation"),
    [
        ({"src": {"a": 1}, "op": {"a": 1}, "snk": {"a": 1}}, "capacity 2"),  # 3 replicas on a
        ({"src": {"a": 1}, "op": {"b": 3}, "snk": {"a": 1}}, "expected 1..2"),  # k = 2
        ({"src": {"b": 1}, "op": {"a": 1}, "snk": {"b": 1}}, "not a candidate"),  # src pinned on a
        ({"src": {"a": 1}, "snk": {"b": 1}}, "0 replicas"),  # op missing
    ],
)
def test_infeasible_placements(placement, violation):
    ev = evaluate(load(TINY), {"placement": placement})
    assert not ev.feasible
    assert ev.objective is None
    assert any(violation in v for v in ev.violations), ev.violations


def test_unstable_replica_is_infeasible():
    data = copy.deepcopy(TINY)
    data["operators"][0]["input_rate"] = 25  # 25 t/s into one replica of mu = 20
    ev = evaluate(load(data), SPLIT)
    assert not ev.feasible
    assert any("service rate" in v for v in ev.violations)


def test_unknown_names_in_a_solution_are_bad_input():
    with pytest.raises(InputError, match=r"placement\.nope"):
        evaluate(load(TINY), {"placement": {"nope": {"a": 1}}})
    with pytest.raises(InputError, match=r"placement\.op\.zz"):
        evaluate(load(TINY), {"placement": {"src": {"a": 1}, "op": {"zz": 1}, "snk": {"a": 1}}})
