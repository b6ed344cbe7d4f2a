"""The latency evaluator (eq. 1) against scores worked out by hand.

The 4-operator diamond: src (rate 100) -> a (selectivity 0.5) and src -> b (selectivity 2), a -> snk,
b -> snk, no ``events`` given. Derived events: src emits 100 over 2 edges, 50 each; a emits
0.5 x 50 = 25, b emits 2 x 50 = 100; total 50 + 50 + 25 + 100 = 225. Supervisors s1 (1 core,
1000 MB), s2 and s3 (0.5 core, 400 MB), limit 0.95 (usable 0.95 / 950, 0.475 / 380, 0.475 / 380);
latency s1-s2 2 ms, s1-s3 5 ms, s2-s3 4 ms.
"""

from __future__ import annotations

import copy

import pytest

from odrp.core.errors import InputError
from odrp.kinds.latency.evaluator import evaluate
from odrp.kinds.latency.instance import load

DIAMOND = {
    "problem": "latency",
    "name": "diamond",
    "operators": [
        {"id": "src", "cpu": 0.2, "memory": 100, "rate": 100},
        {"id": "a", "cpu": 0.3, "memory": 200, "selectivity": 0.5},
        {"id": "b", "cpu": 0.4, "memory": 300, "selectivity": 2},
        {"id": "snk", "cpu": 0.1, "memory": 100},
    ],
    "edges": [
        {"from": "src", "to": "a"},
        {"from": "src", "to": "b"},
        {"from": "a", "to": "snk"},
        {"from": "b", "to": "snk"},
    ],
    "supervisors": [
        {"id": "s1", "cpu": 1.0, "memory": 1000},
        {"id": "s2", "cpu": 0.5, "memory": 400},
        {"id": "s3", "cpu": 0.5, "memory": 400},
    ],
    "latency": [[0, 2, 5], [2, 0, 4], [5, 4, 0]],
    "utilisation_limit": 0.95,
    "weights": {"latency": 1e-6, "supervisors": 1, "colocation": 1, "events": 1},
}


def placement(**where: str) -> dict:
    return {"assignment": where}


def test_derived_events():
    inst = load(DIAMOND)
    assert inst.events == (50.0, 50.0, 25.0, 100.0)
    assert inst.total_events == 225.0


def test_spread_placement_by_hand():
    ev = evaluate(load(DIAMOND), placement(src="s1", a="s1", b="s2", snk="s3"))
    assert ev.feasible, ev.violations
    # s_lat: src 0; a 0 + l(s1,s1) = 0; b 0 + l(s1,s2) = 2; snk max(0 + l(s1,s3), 2 + l(s2,s3)) = max(5, 6) = 6
    assert ev.metrics["s_lat"] == 6.0
    assert ev.metrics["s_sup"] == 3 / 3
    # cut: src->b, a->snk, b->snk (3 of 4), events 50 + 25 + 100 = 175 of 225
    assert ev.metrics["s_co"] == 3 / 4
    assert ev.metrics["s_event"] == pytest.approx(175 / 225, rel=1e-15)
    assert ev.objective == pytest.approx(1e-6 * 6 + 1 + 0.75 + 175 / 225, rel=1e-15)  # 2.527783777...


def test_packed_placement_by_hand():
    ev = evaluate(load(DIAMOND), placement(src="s1", a="s1", b="s1", snk="s2"))
    assert ev.feasible, ev.violations  # s1: 0.9 cores <= 0.95, 600 MB <= 950
    # s_lat: a and b 0, snk 0 + l(s1,s2) = 2; 2 of 3 supervisors; cut a->snk, b->snk: 2 of 4, 125 of 225 events
    assert ev.objective == pytest.approx(2e-6 + 2 / 3 + 2 / 4 + 125 / 225, rel=1e-15)  # 1.722224222...
    assert ev.metrics["cpu_used"] == {"s1": pytest.approx(0.9), "s2": pytest.approx(0.1)}


def test_other_weights():
    data = copy.deepcopy(DIAMOND)
    data["weights"] = {"latency": 0.1, "supervisors": 1, "colocation": 2, "events": 3}
    ev = evaluate(load(data), placement(src="s1", a="s1", b="s2", snk="s3"))
    assert ev.objective == pytest.approx(0.1 * 6 + 1 + 2 * 0.75 + 3 * 175 / 225, rel=1e-15)  # 5.4333...


def test_capacity_is_the_utilisation_limit():
    # s1 with everything: 1.0 core > 0.95 x 1 core
    ev = evaluate(load(DIAMOND), placement(src="s1", a="s1", b="s1", snk="s1"))
    assert not ev.feasible and ev.objective is None
    assert any("s1" in v and "cpu" in v for v in ev.violations)
    # b (0.4) and snk (0.1) on s3: 0.5 > 0.475
    ev = evaluate(load(DIAMOND), placement(src="s1", a="s1", b="s3", snk="s3"))
    assert not ev.feasible
    # with the limit at 1, 1.0 core fits on s1
    data = copy.deepcopy(DIAMOND)
    data["utilisation_limit"] = 1.0
    assert evaluate(load(data), placement(src="s1", a="s1", b="s1", snk="s1")).feasible


def test_memory_limit():
    data = copy.deepcopy(DIAMOND)
    data["operators"][3]["memory"] = 90  # b 300 + snk 90 = 390 > 380 on s2
    ev = evaluate(load(data), placement(src="s1", a="s1", b="s2", snk="s2"))
    assert not ev.feasible and any("memory" in v for v in ev.violations)


def test_unassigned_operator_is_infeasible():
    ev = evaluate(load(DIAMOND), placement(src="s1", a="s1", b="s1"))
    assert not ev.feasible and "snk" in ev.violations[0]


def test_explicit_events_override_and_feed_the_derivation():
    data = copy.deepcopy(DIAMOND)
    data["edges"][0]["events"] = 10.0  # src->a carries 10; src->b keeps its share 100 / 2 = 50
    inst = load(data)
    # a now emits 0.5 x 10 = 5; b still 2 x 50 = 100
    assert inst.events == (10.0, 50.0, 5.0, 100.0)


def test_coordinates_give_euclidean_latency():
    data = copy.deepcopy(DIAMOND)
    del data["latency"]
    for sup, point in zip(data["supervisors"], ([0, 0], [3, 4], [6, 8]), strict=True):
        sup["coordinates"] = point
    inst = load(data)
    assert inst.latency_source == "coordinates"
    # l(s1,s2) = 5, l(s1,s3) = 10, l(s2,s3) = 5: snk = max(0 + 10, 5 + 5) = 10
    ev = evaluate(inst, placement(src="s1", a="s1", b="s2", snk="s3"))
    assert ev.metrics["s_lat"] == pytest.approx(10.0, rel=1e-15)


def test_cycle_drops_dfs_back_edges_for_latency_only():
    data = {
        "problem": "latency",
        "operators": [
            {"id": "src", "cpu": 0.1, "memory": 1, "rate": 10},
            {"id": "a", "cpu": 0.1, "memory": 1},
            {"id": "b", "cpu": 0.1, "memory": 1},
            {"id": "snk", "cpu": 0.1, "memory": 1},
        ],
        "edges": [
            {"from": "src", "to": "a"},
            {"from": "a", "to": "b"},
            {"from": "b", "to": "a"},
            {"from": "b", "to": "snk"},
        ],
        "supervisors": [{"id": "s1", "cpu": 1, "memory": 10}, {"id": "s2", "cpu": 1, "memory": 10}],
        "latency": [[0, 2], [2, 0]],
    }
    inst = load(data)
    # DFS from src: src -> a -> b; b's successors by id: a (on the path: back edge), snk
    assert [inst.edges[e] for e in inst.back_edges] == [(2, 1)]
    # events: src->a 10; a's input counts only src->a: a emits 10; b emits 10 over b->a and b->snk: 5 each
    assert inst.events == (10.0, 10.0, 5.0, 5.0)
    ev = evaluate(inst, placement(src="s1", a="s2", b="s1", snk="s2"))
    # s_lat over src->a->b->snk: 2 + 2 + 2 = 6 (without the back edge the path could loop forever)
    assert ev.metrics["s_lat"] == 6.0
    assert ev.metrics["back_edges_dropped"] == [["b", "a"]]
    assert "back edges" in ev.metrics["note"]
    # the back edge still counts as a cut edge: 4 of 4 edges cut, all events
    assert ev.metrics["s_co"] == 1.0 and ev.metrics["s_event"] == 1.0


def test_single_operator_and_no_edges():
    data = {
        "problem": "latency",
        "operators": [{"id": "only", "cpu": 0.1, "memory": 1}],
        "supervisors": [{"id": "s1", "cpu": 1, "memory": 10}, {"id": "s2", "cpu": 1, "memory": 10}],
        "latency": [[0, 1], [1, 0]],
    }
    ev = evaluate(load(data), placement(only="s2"))
    assert ev.feasible and ev.objective == pytest.approx(1 / 2)  # s_lat 0, s_co 0, s_event 0


BAD = [
    ("edge to an unknown operator", lambda d: d["edges"][0].update({"to": "ghost"}), "edges[0].to"),
    ("self loop", lambda d: d["edges"][0].update({"to": "src"}), "edges[0]"),
    ("duplicate edge", lambda d: d["edges"].append({"from": "src", "to": "a"}), "edges[4]"),
    ("duplicate operator", lambda d: d["operators"][1].update({"id": "src"}), "operators[1].id"),
    ("rate on an inner operator", lambda d: d["operators"][1].update({"rate": 5}), "operators[1].rate"),
    ("source without rate", lambda d: d["operators"][0].pop("rate"), "operators[0].rate"),
    ("matrix of the wrong size", lambda d: d["latency"].pop(), "latency"),
    ("row of the wrong size", lambda d: d["latency"][1].pop(), "latency[1]"),
    ("non-zero diagonal", lambda d: d["latency"][2].__setitem__(2, 1), "latency[2][2]"),
    ("negative latency", lambda d: d["latency"][0].__setitem__(1, -2), "latency[0][1]"),
    ("no latency and no coordinates", lambda d: d.pop("latency"), "supervisors[0].coordinates"),
    ("utilisation above 1", lambda d: d.update({"utilisation_limit": 1.5}), "utilisation_limit"),
    ("negative cpu", lambda d: d["operators"][2].update({"cpu": -1}), "operators[2].cpu"),
    ("a typo", lambda d: d["supervisors"][0].update({"cpus": 2}), "supervisors[0].cpus"),
]


@pytest.mark.parametrize(("case", "mutate", "field"), BAD, ids=[b[0] for b in BAD])
def test_bad_instances_name_the_field(case, mutate, field):
    data = copy.deepcopy(DIAMOND)
    mutate(data)
    with pytest.raises(InputError) as error:
        load(data, "bad.json")
    assert error.value.source == "bad.json"
    assert field in str(error.value), str(error.value)


def test_bad_solutions():
    inst = load(DIAMOND)
    with pytest.raises(InputError, match=r"assignment\.ghost"):
        evaluate(inst, placement(ghost="s1"))
    with pytest.raises(InputError, match="a known supervisor"):
        evaluate(inst, placement(src="s9"))
    with pytest.raises(InputError, match="assignment"):
        evaluate(inst, {"placement": {}})
