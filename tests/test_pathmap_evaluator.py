"""The pathmap evaluator on the hand-worked instance of tests/pathmap_cases.py (numbers in comments)."""

from __future__ import annotations

import copy

import pytest

from odrp.core.errors import InputError
from odrp.kinds.pathmap.evaluator import evaluate
from odrp.kinds.pathmap.instance import load
from tests.pathmap_cases import HAND, OPTIMAL, VIA_PUBLIC


@pytest.fixture
def hand():
    return load(copy.deepcopy(HAND), "hand.json")


def _with(solution: dict, **changes) -> dict:
    out = copy.deepcopy(solution)
    out.update(changes)
    return out


def test_optimal_mapping_costs_five(hand):
    ev = evaluate(hand, OPTIMAL)
    assert ev.feasible, ev.violations
    # 2 (S1-S2) + 0 (zero-length) + 1 (S2-S4) + 2 (S4-S5)
    assert ev.objective == pytest.approx(5.0)
    assert ev.metrics["dedicated_hops"] == 3 and ev.metrics["public_hops"] == 0
    assert ev.metrics["path_links"] == [1, 0, 1, 1]
    assert ev.metrics["delay"] == pytest.approx(1 + 5 + 1)


def test_parallel_links_the_cheapest_that_carries_the_pair(hand):
    ev = evaluate(hand, VIA_PUBLIC)
    assert ev.feasible, ev.violations
    # c1 -> c2 needs 4: dedicated S2-S3 carries 3, so the public one (cost 4): 2 + 4 + 3 + 2
    assert ev.objective == pytest.approx(11.0)
    assert ev.metrics["public_hops"] == 1 and ev.metrics["delay"] == pytest.approx(33.0)
    # the pair c2 -> c3 (needs 2) on S2 -> S3 -> S4 takes the dedicated S2-S3 (cost 1, not the public 4)
    walk = _with(OPTIMAL, paths=[["S1", "S2"], ["S2"], ["S2", "S3", "S4"], ["S4", "S5"]])
    ev = evaluate(hand, walk)
    assert ev.feasible and ev.objective == pytest.approx(2 + 0 + (1 + 3) + 2)


def test_one_link_may_carry_several_pairs_each_checked_alone(hand):
    # The pair c1 -> c2 (needs 4) walks S2-S1-S2 over the link S1-S2 (bandwidth 10) that the pair
    # source -> c1 (needs 5) also uses: 5 + 4 + 4 = 13 > 10 if summed, but each pair is checked
    # alone. Cost: 2 + (2 + 2) + 1 + 2 = 9.
    data = _with(OPTIMAL, paths=[["S1", "S2"], ["S2", "S1", "S2"], ["S2", "S4"], ["S4", "S5"]])
    ev = evaluate(hand, data)
    assert ev.feasible, ev.violations
    assert ev.objective == pytest.approx(9.0)


@pytest.mark.parametrize(
    ("solution", "fragment"),
    [
        (_with(OPTIMAL, nodes={"c1": "S2", "c2": "S2", "c3": "S3"}), "does not host service 'c'"),
        (_with(OPTIMAL, paths=[["S1", "S3", "S2"], ["S2"], ["S2", "S4"], ["S4", "S5"]]), "bandwidth 1 < 5"),
        (_with(OPTIMAL, paths=[["S1", "S2", "S3", "S2"], ["S2"], ["S2", "S4"], ["S4", "S5"]]), "at most 2 allowed"),
        (_with(OPTIMAL, paths=[["S1", "S2"], ["S2"], ["S2", "S3"], ["S4", "S5"]]), "ends at S3, expected S4"),
        (_with(OPTIMAL, paths=[["S1", "S4"], ["S2"], ["S2", "S4"], ["S4", "S5"]]), "no link between S1 and S4"),
        (_with(OPTIMAL, paths=[["S1", "S2"], ["S2", "S4"], ["S4", "S5"]]), "3 paths, expected 4"),
        (_with(OPTIMAL, nodes={"c1": "S2", "c3": "S4"}), "c2: not placed"),
    ],
)
def test_violations(hand, solution, fragment):
    ev = evaluate(hand, solution)
    assert not ev.feasible and ev.objective is None
    assert any(fragment in v for v in ev.violations), ev.violations


def test_capacity_is_summed_per_server():
    data = copy.deepcopy(HAND)
    data["servers"][1]["capacity"] = 4.5  # c1 (3) + c2 (2) = 5 > 4.5
    ev = evaluate(load(data, "x"), OPTIMAL)
    assert not ev.feasible and any("cpu 5 > capacity 4.5" in v for v in ev.violations)


def test_max_null_zero_allows_direct_links_only():
    data = copy.deepcopy(HAND)
    data["task"]["max_null"] = 0
    inst = load(data, "x")
    assert evaluate(inst, OPTIMAL).feasible
    walk = _with(OPTIMAL, paths=[["S1", "S2"], ["S2"], ["S2", "S3", "S4"], ["S4", "S5"]])
    assert any("at most 1 allowed" in v for v in evaluate(inst, walk).violations)


def test_bad_solution_names_are_input_errors(hand):
    with pytest.raises(InputError, match=r"nodes\.c9"):
        evaluate(hand, _with(OPTIMAL, nodes={"c9": "S2"}))
    with pytest.raises(InputError, match=r"paths\[2\]\[1\]"):
        evaluate(hand, _with(OPTIMAL, paths=[["S1", "S2"], ["S2"], ["S2", "S9"], ["S4", "S5"]]))
    with pytest.raises(InputError, match=r"paths\[1\]"):
        evaluate(hand, _with(OPTIMAL, paths=[["S1", "S2"], [], ["S2", "S4"], ["S4", "S5"]]))
