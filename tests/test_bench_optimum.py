"""The optimum of an instance from its exact rows, and the gap to it, on hand-worked numbers."""

from __future__ import annotations

import math

import pytest

from odrp.bench.optimum import best_proven, gap_to_optimum


@pytest.mark.parametrize(
    ("objective", "optimum", "sense", "gap"),
    [
        (0.6, 0.8, "max", 0.25),  # (0.8 - 0.6) / 0.8
        (-3.0, -2.0, "max", 0.5),  # (-2 - (-3)) / |-2|
        (50.0, 40.0, "min", 0.25),  # (50 - 40) / 40
        (-8.0, -10.0, "min", 0.2),  # (-8 - (-10)) / |-10|
        (0.9, 0.8, "max", -0.125),  # better than the optimum: (0.8 - 0.9) / 0.8, kept negative
        (30.0, 40.0, "min", -0.25),  # (30 - 40) / 40
        (100.0 - 5e-5, 100.0, "max", 0.0),  # agrees within 1e-6 x 100 = 1e-4: exactly 0
        (0.8, 0.8, "min", 0.0),
    ],
)
def test_gap_is_relative_and_sign_normalised(objective, optimum, sense, gap):
    assert gap_to_optimum(objective, optimum, sense) == pytest.approx(gap, rel=1e-12, abs=0)


def test_a_gap_just_beyond_the_tolerance_is_not_zero():
    # 2e-4 below an optimum of 100 is 2e-6 relative, twice the tolerance
    assert gap_to_optimum(100.0 - 2e-4, 100.0, "max") == pytest.approx(2e-6, rel=1e-9)


def test_zero_optimum():
    assert gap_to_optimum(0.0, 0.0, "min") == 0.0
    assert gap_to_optimum(5e-7, 0.0, "min") == 0.0  # |objective| <= 1e-6: agrees with 0
    assert gap_to_optimum(3.0, 0.0, "min") == math.inf
    assert gap_to_optimum(-1.0, 0.0, "max") == math.inf
    assert gap_to_optimum(1.0, 0.0, "max") == -math.inf  # better than a zero optimum


def test_no_objective_or_no_optimum_has_no_gap():
    assert gap_to_optimum(None, 1.0, "max") is None
    assert gap_to_optimum(1.0, None, "min") is None


def row(method="exact", status="optimal", objective=None, verified=True):
    return {"method": method, "status": status, "objective": objective, "verified": verified}


def test_agreeing_proofs_give_the_best_of_them():
    rows = [row(objective=0.5), row(objective=0.5 + 1e-8), row("h", "feasible", 0.4)]
    assert best_proven(rows, "max").value == 0.5 + 1e-8
    assert best_proven(rows, "max").status == "proven"
    assert best_proven(rows, "min").value == 0.5


def test_disagreeing_proofs_keep_the_best_and_say_so():
    rows = [row(objective=0.5), row(objective=0.4)]
    found = best_proven(rows, "max")
    assert (found.value, found.status) == (0.5, "disagree")
    assert "0.4" in found.note and "0.5" in found.note
    assert best_proven(rows, "min").value == 0.4


def test_the_mip_gap_sets_what_counts_as_agreement():
    rows = [row(objective=100.0), row(objective=100.05)]
    # |100.05 - 100| = 0.05 <= 1e-3 x 100.05 with mip_gap 1e-3; > 1e-6 x 100.05 with the default
    assert best_proven(rows, "max", mip_gap=1e-3).status == "proven"
    assert best_proven(rows, "max").status == "disagree"


def test_only_verified_optimal_exact_rows_prove_anything():
    rows = [
        row(objective=0.9, verified=False),  # the evaluator contradicts this "optimum"
        row(objective=0.5),
        row("h", "feasible", 0.95),  # a heuristic is never a proof
        row(status="time_limit", objective=0.97),  # nor an incumbent
    ]
    assert best_proven(rows, "max").value == 0.5
    assert best_proven([row(status="time_limit", objective=0.97)], "max").status == "none"
    assert best_proven([row("h", "feasible", 0.95)], "max").status == "none"
    assert best_proven([row(status="error", verified=False)], "max").value is None


def test_infeasibility():
    assert best_proven([row(status="infeasible", verified=False)], "min").status == "infeasible"
    contradicted = best_proven([row(status="infeasible", verified=False), row("h", "feasible", 3.0)], "min")
    assert (contradicted.value, contradicted.status) == (None, "disagree")
    both = best_proven([row(objective=2.0), row(status="infeasible", verified=False)], "min")
    assert (both.value, both.status) == (2.0, "disagree")
