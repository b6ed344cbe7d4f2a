"""The QKP reduction (odrp/kinds/knapsack/exact/qkp_reduction.py): every fixing is checked against brute force.

Brute force here enumerates every subset of items of small random QKPs and asks the kind's evaluator
(tests/knapsack_bruteforce.py), independently of the LP. The claims checked:

- the LP rows (1)-(4) hold at every 0-1 point with z = x x^T (so the LP is a relaxation);
- every solution whose value reaches the target T (known + 1 for integer profits, known otherwise)
  satisfies every fixing, and the bound is >= the optimum;
- the reduced problem has, for every subset y of the free items, value(F1 + y) = constant + value(y)
  and the same feasibility;
- the exact method with the reduction returns the brute-force optimum.
"""

from __future__ import annotations

import itertools
import random

import highspy
import numpy as np
import pytest

from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.exact import qkp_reduction as qr
from odrp.kinds.knapsack.exact import qkp_search
from odrp.kinds.knapsack.exact.settings import TabuSettings
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force
from tests.knapsack_bruteforce import solutions
from tests.test_knapsack_cli import one_line_error

QKP = KINDS["qkp"]


def random_qkp(seed: int, items: int, negative: bool = False) -> dict:
    """A Gallo-type QKP (integer profits 1-100); ``negative``: a fifth of the pair profits below zero and
    every profit a multiple of 0.5 (non-integral, so the target is the known value itself)."""
    data = gen.qkp(seed=seed, items=items, density=0.7)
    if negative:
        rng = random.Random(seed)
        profits = data["profits"]
        for i, j in itertools.combinations(range(items), 2):
            if profits[i][j] and rng.random() < 0.2:
                profits[i][j] = profits[j][i] = -profits[i][j] / 2
        for i in range(items):
            profits[i][i] += 0.5
    return data


def feasible_values(instance) -> list[tuple[np.ndarray, float]]:
    """(chosen items as 0-1 vector, value) of every feasible solution, by the evaluator."""
    out = []
    for solution in solutions("qkp", instance):
        evaluation = QKP.evaluate(instance, solution, "<brute force>")
        if evaluation.feasible:
            out.append((np.array([k is not None for k in solution["assignment"]], dtype=int), evaluation.objective))
    return out


CASES = [(seed, 11, False) for seed in range(1, 7)] + [(seed, 10, True) for seed in range(7, 10)]


@pytest.mark.parametrize(("seed", "items", "negative"), CASES)
def test_every_fixing_holds_in_every_better_solution(seed, items, negative):
    instance = QKP.load(random_qkp(seed, items, negative), "<test>")
    q = qr.qkp_of(family_of(instance))
    every = feasible_values(instance)
    best = max(v for _, v in every)
    values = sorted({v for _, v in every})
    # the optimum itself, and weaker known values: the target then admits a few solutions
    checked = 0
    for known in (best, values[-2], values[-5], values[-10]):
        target = qr.target_of(q, known)
        assert target == (known if negative else known + 1)
        r = qr.reduce(q, known)
        assert r.bound >= best - 1e-6
        if r.stats["proven"]:
            assert best < target
        for chosen, value in every:
            if value >= target:
                assert qr.respects(r, chosen[:, None]), (known, chosen)
                checked += len(r.fixed_one) + len(r.fixed_zero)
        assert sorted([*r.fixed_one, *r.fixed_zero, *r.free]) == list(range(items))
    assert checked > 0  # some fixing met a better solution


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reduced_problem_is_the_problem_with_the_items_fixed(seed):
    instance = QKP.load(random_qkp(seed, 9), "<test>")
    q = qr.qkp_of(family_of(instance))
    ones, free = np.array([1, 4]), np.array([0, 2, 3, 5, 6, 7, 8])  # any split will do: no proof involved
    reduced, constant = q.restrict(ones, free)
    for bits in itertools.product([0, 1], repeat=len(free)):
        y = np.array(bits)
        x = np.zeros(9, dtype=int)
        x[ones], x[free] = 1, y
        evaluation = QKP.evaluate(instance, {"assignment": [0 if b else None for b in x]}, "<test>")
        assert evaluation.feasible == (reduced.weight @ y <= reduced.capacity + 1e-9)
        if evaluation.feasible:
            assert constant + reduced.value(y) == pytest.approx(evaluation.objective)


def rows_of(h: highspy.Highs) -> tuple[np.ndarray, np.ndarray]:
    """The LP's constraint matrix (dense) and row upper bounds (every row is ``<=``)."""
    lp = h.getLp()
    dense = np.zeros((h.getNumRow(), h.getNumCol()))
    matrix = lp.a_matrix_
    outer = h.getNumRow() if matrix.format_ == highspy.MatrixFormat.kRowwise else h.getNumCol()
    for line in range(outer):
        for at in range(matrix.start_[line], matrix.start_[line + 1]):
            if matrix.format_ == highspy.MatrixFormat.kRowwise:
                dense[line, matrix.index_[at]] = matrix.value_[at]
            else:
                dense[matrix.index_[at], line] = matrix.value_[at]
    assert np.all(np.isneginf(lp.row_lower_))
    return dense, np.array(lp.row_upper_)


@pytest.mark.parametrize(("seed", "negative"), [(1, False), (2, False), (7, True)])
def test_every_row_of_the_lp_holds_at_every_product_point(seed, negative):
    """Rows (1)-(4), triangles separated as in a reduction, at x and z = x x^T of every feasible x."""
    instance = QKP.load(random_qkp(seed, 9, negative), "<test>")
    q = qr.qkp_of(family_of(instance))
    lp = qr.Relaxation(q)
    lp.solve()
    assert len(lp.violated_triangles(10**6)) > 0  # the triangles do cut the first LP's optimum
    every_triangle = [(a, j, k) for a in range(9) for j, k in itertools.combinations(range(9), 2) if a not in (j, k)]
    lp.add_triangles(np.array(every_triangle))
    dense, upper = rows_of(lp.h)
    assert dense.shape[0] == 1 + 2 * 36 + 9 + 9 * 28  # (1), (2), (3) for every item (they can all bind), (4)
    for chosen, value in feasible_values(instance):
        z = np.outer(chosen, chosen)[lp.i, lp.j]
        point = np.concatenate([chosen, z])
        assert np.all(dense @ point <= upper + 1e-9)
        assert -np.array(lp.h.getLp().col_cost_) @ point == pytest.approx(value)
    best = brute_force("qkp", instance)
    assert lp.solve() >= best - 1e-6


def test_a_probe_stops_early_at_the_target():
    """HiGHS's objective_bound ends a probe as soon as the dual bound is below the target."""
    instance = QKP.load(random_qkp(3, 11), "<test>")
    lp = qr.Relaxation(qr.qkp_of(family_of(instance)))
    bound = lp.solve()
    x, _ = lp.point()
    k = int(np.argmax(x))  # x_k = 1 in the LP: the probe x_k = 0
    lp.h.changeColBounds(k, 0, 0)
    lp.h.run()
    without_k = -lp.h.getInfo().objective_function_value
    lp.h.changeColBounds(k, 0, 1)
    lp.solve()
    assert without_k < bound
    assert lp.probe(k, 0, without_k + 1e-3, 10**6)  # below the target: fixed to 1
    assert lp.h.getLp().col_lower_[k] == 1
    lp.h.changeColBounds(k, 0, 1)
    lp.solve()
    assert not lp.probe(k, 0, without_k - 1e-3, 10**6)  # the bound stays above: nothing fixed
    assert lp.h.getLp().col_lower_[k] == 0 and lp.h.getLp().col_upper_[k] == 1
    assert lp.h.getModelStatus() != highspy.HighsModelStatus.kObjectiveBound


@pytest.mark.parametrize("solver", ["highs", "cbc"])
@pytest.mark.parametrize(("seed", "negative"), [(1, False), (2, False), (4, False), (8, True)])
def test_exact_with_the_reduction_is_the_brute_force_optimum(seed, negative, solver):
    instance = QKP.load(random_qkp(seed, 11, negative), "<test>")
    result = run_method(QKP, instance, "exact", solver=solver, options={"reduction": True})
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(brute_force("qkp", instance))
    assert result.bound == pytest.approx(result.objective)
    assert "reduction" in result.metrics["method_stats"]


def test_a_warm_start_is_where_the_tabu_search_and_the_reduction_start():
    instance = QKP.load(random_qkp(4, 11), "<test>")
    every = feasible_values(instance)
    poor = sorted(every, key=lambda e: e[1])[len(every) // 2]  # a median solution
    start = {"assignment": [0 if b else None for b in poor[0]]}
    result = run_method(QKP, instance, "exact", options={"reduction": True}, warm_start=start)
    assert result.status == "optimal" and result.objective == pytest.approx(max(v for _, v in every))
    stats = result.metrics["method_stats"]["reduction"]
    assert stats["start"] == poor[1] and stats["tabu_search"] >= poor[1]


def test_the_tabu_search_returns_feasible_solutions_at_their_value():
    for seed in range(1, 5):
        instance = QKP.load(random_qkp(seed, 11, negative=seed % 2 == 0), "<test>")
        q = qr.qkp_of(family_of(instance))
        empty = np.zeros(q.n, dtype=int)
        chosen, value = qkp_search.improve(q, empty, settings=TabuSettings(iterations=200))
        evaluation = QKP.evaluate(instance, {"assignment": [0 if b else None for b in chosen]}, "<test>")
        assert evaluation.feasible and evaluation.objective == pytest.approx(value)
        assert value <= brute_force("qkp", instance) + 1e-9


def test_reduction_on_another_kind_is_a_one_line_error(run_cli, tmp_path):
    path = tmp_path / "kp.json"
    path.write_text('{"problem": "mkp", "profits": [3, 2], "weights": [1, 1], "capacities": [1, 1]}')
    one_line_error(run_cli("solve", str(path), "--param", "reduction=true"), "--param reduction", "qkp")
