"""The throughput evaluator and loader against numbers worked out by hand (eqs. 5 and 6).

The hand instance: spout (alpha 2) -> bolt; machines m1 (type fast, capacity 100, 3 task slots)
and m2 (type slow, capacity 80, no task limit). Profiles (exec_time e, overhead MET):
spout fast (0.1, 2), slow (0.2, 4); bolt fast (0.3, 3), slow (0.5, 5).
Load factors: l_spout = 1, l_bolt = alpha_spout * 1 = 2.
"""

from __future__ import annotations

import copy
import json
import math

import pytest

from odrp.core.errors import InputError
from odrp.kinds.throughput.evaluator import evaluate
from odrp.kinds.throughput.instance import instance_count_vectors, load

HAND = {
    "problem": "throughput",
    "name": "hand",
    "components": [{"id": "spout", "alpha": 2.0}, {"id": "bolt"}],
    "edges": [["spout", "bolt"]],
    "machines": [
        {"id": "m1", "type": "fast", "capacity": 100, "max_tasks": 3},
        {"id": "m2", "type": "slow", "capacity": 80},
    ],
    "profile": {
        "spout": {"fast": {"exec_time": 0.1, "overhead": 2}, "slow": {"exec_time": 0.2, "overhead": 4}},
        "bolt": {"fast": {"exec_time": 0.3, "overhead": 3}, "slow": {"exec_time": 0.5, "overhead": 5}},
    },
}
SPLIT = {"instances": {"spout": {"m1": 1}, "bolt": {"m1": 1, "m2": 2}}}


def test_split_placement_by_hand():
    ev = evaluate(load(HAND), SPLIT)
    assert ev.feasible, ev.violations
    # m1: overheads 2 + 3 = 5; load per unit of R: spout 0.1 * 1 * 1/1 + bolt 0.3 * 2 * 1/3 = 0.3
    #     -> R <= (100 - 5) / 0.3 = 316.67
    # m2: overheads 2 * 5 = 10; load per unit of R: bolt 0.5 * 2 * 2/3 = 2/3 -> R <= (80 - 10) * 3/2 = 105
    assert ev.objective == pytest.approx(105.0, rel=1e-12)
    m = ev.metrics
    assert m["input_rate"] == pytest.approx(105.0, rel=1e-12)
    # overall throughput: IR_spout + IR_bolt = 105 + 210
    assert m["overall_throughput"] == pytest.approx(315.0, rel=1e-12)
    assert m["component_rates"] == pytest.approx({"spout": 105.0, "bolt": 210.0})
    # utilisation at R = 105: m1 5 + 105 * 0.3 = 36.5; m2: two bolt instances at 0.5 * 210/3 + 5 = 40 each
    assert m["utilisation"] == pytest.approx({"m1": 36.5, "m2": 80.0})
    assert m["tasks"] == {"m1": 2, "m2": 2}
    assert m["instances"] == {"spout": 1, "bolt": 3}
    assert m["bottlenecks"] == ["m2"]


def test_one_machine_by_hand():
    ev = evaluate(load(HAND), {"instances": {"spout": {"m1": 1}, "bolt": {"m1": 2}}})
    # m1: overheads 2 + 6 = 8; load 0.1 + 0.3 * 2 * 2/2 = 0.7 -> R = 92 / 0.7; m2 carries nothing
    assert ev.objective == pytest.approx(92 / 0.7, rel=1e-12)
    assert ev.metrics["utilisation"]["m2"] == 0.0


@pytest.mark.parametrize(
    ("solution", "violation"),
    [
        ({"instances": {"spout": {"m1": 1}, "bolt": {"m1": 3}}}, "machine m1: 4 tasks, at most 3"),
        ({"instances": {"spout": {"m1": 1}}}, "bolt: 0 instances"),
        ({"instances": {"spout": {"m2": 21}, "bolt": {"m1": 1}}}, "machine m2: overheads alone use 84"),
    ],
)
def test_infeasible_placements(solution, violation):
    ev = evaluate(load(HAND), solution)
    assert not ev.feasible and ev.objective is None
    assert any(violation in v for v in ev.violations), ev.violations


def test_max_instances():
    data = copy.deepcopy(HAND)
    data["components"][1]["max_instances"] = 2
    ev = evaluate(load(data), SPLIT)
    assert not ev.feasible and "bolt: 3 instances, expected 1..2" in ev.violations[0]


def test_load_factors_of_a_diamond():
    # s -> a, s -> b, a -> c (alpha_a 0.5), b -> c (alpha_b 2): every stream goes to every subscriber,
    # so l_a = l_b = 1 and l_c = 0.5 * 1 + 2 * 1 = 2.5
    data = {
        "problem": "throughput",
        "components": [{"id": "s"}, {"id": "a", "alpha": 0.5}, {"id": "b", "alpha": 2}, {"id": "c"}],
        "edges": [["s", "a"], ["s", "b"], ["a", "c"], ["b", "c"]],
        "machines": [{"id": "m", "type": "t", "max_tasks": 4}],
        "profile": {k: {"t": {"exec_time": 1, "overhead": 1}} for k in "sabc"},
    }
    inst = load(data)
    assert inst.load == (1.0, 1.0, 1.0, 2.5)
    # one of each on m: overhead 4, load 1 + 1 + 1 + 2.5 -> R = 96 / 5.5
    ev = evaluate(inst, {"instances": {k: {"m": 1} for k in "sabc"}})
    assert ev.objective == pytest.approx(96 / 5.5, rel=1e-12)


def test_two_sources_both_get_r():
    data = {
        "problem": "throughput",
        "components": [{"id": "s1"}, {"id": "s2"}, {"id": "join"}],
        "edges": [["s1", "join"], ["s2", "join"]],
        "machines": [{"id": "m", "type": "t", "max_tasks": 3}],
        "profile": {k: {"t": {"exec_time": 1, "overhead": 0}} for k in ("s1", "s2", "join")},
    }
    assert load(data).load == (1.0, 1.0, 2.0)


def test_paper_count_of_instance_vectors():
    # the paper: 4 bolts on 3 machines with k_j = 10 tasks each: "checks 27,405 possibilities"
    data = {
        "problem": "throughput",
        "components": [{"id": f"bolt{i}"} for i in range(1, 5)],
        "machines": [{"id": f"m{j}", "type": "t", "max_tasks": 10} for j in range(1, 4)],
        "profile": {f"bolt{i}": {"t": {"exec_time": 0.1, "overhead": 1}} for i in range(1, 5)},
    }
    count = sum(1 for _ in instance_count_vectors(load(data)))
    assert count == 27_405
    assert count == math.comb(30, 4)  # x_1 + ... + x_4 <= 30, x_i >= 1


def _broken(mutate) -> dict:
    data = copy.deepcopy(HAND)
    mutate(data)
    return data


BAD = [
    ("unknown component in an edge", lambda d: d["edges"].append(["bolt", "ghost"]), "edges[1][1]"),
    ("a cycle", lambda d: d["edges"].append(["bolt", "spout"]), "edges"),
    ("a machine type without profile", lambda d: d["machines"][1].update({"type": "i7"}), "profile.spout"),
    ("a repeated machine id", lambda d: d["machines"][1].update({"id": "m1"}), "machines[1].id"),
    ("a typo in a field", lambda d: d["machines"][0].update({"capcity": 3}), "machines[0].capcity"),
    ("parallelism above max_instances", lambda d: d["components"][1].update(parallelism=3, max_instances=2), "para"),
    (
        "all exec_time 0: R unbounded",
        lambda d: [e.update(exec_time=0) for p in d["profile"].values() for e in p.values()],
        "profile",
    ),
    (
        "no bound on the count",
        lambda d: [d["machines"][0].pop("max_tasks"), d["profile"]["bolt"]["fast"].update(overhead=0)],
        "profile.bolt.fast.overhead",
    ),
]


@pytest.mark.parametrize(("case", "mutate", "field"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_names_the_field(case, mutate, field):
    with pytest.raises(InputError) as error:
        load(_broken(mutate), "bad.json")
    assert field in str(error.value)


def test_unbounded_only_when_every_component_can_run_load_free():
    # exec_time 0 on the slow type for both components: a placement with no rate-dependent load
    # exists (both on m2, overheads 4 + 5 <= 80), so R is unbounded
    data = _broken(lambda d: [d["profile"][c]["slow"].update(exec_time=0) for c in ("spout", "bolt")])
    with pytest.raises(InputError, match="unbounded"):
        load(data)
    # ... unless m2 cannot hold both overheads (4 + 5 > 8): then every placement has load, R is bounded
    data["machines"][1]["capacity"] = 8
    assert load(data).name == "hand"


def test_bad_solution_names():
    inst = load(HAND)
    with pytest.raises(InputError, match=r"instances.bolt.m9"):
        evaluate(inst, {"instances": {"bolt": {"m9": 1}}})
    with pytest.raises(InputError, match=r"instances.nope"):
        evaluate(inst, {"instances": {"nope": {"m1": 1}}})


CLI_BAD = [
    ("R unbounded", lambda d: [e.update(exec_time=0) for p in d["profile"].values() for e in p.values()], "profile"),
    ("a cycle", lambda d: d["edges"].append(["bolt", "spout"]), "edges"),
    ("a missing profile entry", lambda d: d["profile"]["bolt"].pop("slow"), "profile.bolt"),
    ("a negative capacity", lambda d: d["machines"][0].update(capacity=-1), "machines[0].capacity"),
]


@pytest.mark.parametrize(("case", "mutate", "field"), CLI_BAD, ids=[b[0] for b in CLI_BAD])
def test_bad_input_through_the_cli(run_cli, tmp_path, case, mutate, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(mutate)))
    for method in ("exact", "hetero_greedy"):
        proc = run_cli("solve", str(path), "--method", method, "--json")
        assert proc.returncode == 2 and json.loads(proc.stdout)["file"] == str(path)  # --json: an error object
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and field in lines[0], proc.stderr
        assert "Traceback" not in proc.stderr


def test_cli_solve_prints_one_json_object(run_cli, tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(HAND))
    for solver in ("highs", "cpsat"):
        result = json.loads(run_cli("solve", str(path), "--solver", solver, "--json", check=True).stdout)
        assert result["status"] == "optimal" and result["verified"] and result["problem"] == "throughput"
