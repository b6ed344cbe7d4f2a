"""The optimum of an instance from its exact rows, and the gap to it, on hand-worked numbers."""

from __future__ import annotations

import math

import pytest

from odrp.bench.optimum import best_proven, certify, certify_rows, complete, gap_to_bound, gap_to_optimum


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


# ------------------------------------------------------------------------------- certificates


def run(label, status, objective=None, bound=None, verified=True):
    """A row of method ``label`` (``exact/<solver>`` or a heuristic)."""
    method, _, solver = label.partition("/")
    return {
        "method": method,
        "solver": solver or None,
        "status": status,
        "objective": objective,
        "bound": bound,
        "verified": verified and objective is not None,
        "message": "",
    }


def test_two_solvers_that_agree_make_the_tier_proven_and_every_gap_equal():
    rows = [run("exact/highs", "optimal", 80.0, 80.0), run("exact/cbc", "optimal", 80.0), run("h", "feasible", 60.0)]
    found = certify_rows(rows, "max")
    assert (found.tier, found.best_known, found.best_bound) == ("proven", 80.0, 80.0)
    assert found.best_known_method == "exact/cbc"  # the first in name order of those that reached it
    h = rows[2]
    assert h["gap"] == pytest.approx(0.25)  # (80 - 60) / 80
    assert h["gap_known"] == pytest.approx(0.25) and h["gap_bound"] == pytest.approx(0.25)


def test_one_solver_or_several_runs_of_one_solver_is_proven_once():
    once = [run("exact/highs", "optimal", 80.0), run("exact/cbc", "time_limit", 70.0, 90.0)]
    found = certify(once, "max")
    # the smallest bound for a maximisation: the proof's objective 80, not cbc's 90
    assert (found.tier, found.best_bound, found.optimum.status) == ("proven_once", 80.0, "proven")
    twice = [run("exact/highs", "optimal", 80.0), run("exact/highs", "optimal", 80.0)]
    assert certify(twice, "max").tier == "proven_once"


def test_bounded_within_the_certify_gap_with_hand_computed_gaps():
    # max: best known 99.5 (exact/highs' incumbent), best bound 100: (100 - 99.5) / 100 = 0.005 <= 0.01
    rows = [run("exact/highs", "time_limit", 99.5, 100.0), run("h", "feasible", 95.0)]
    found = certify_rows(rows, "max")
    assert (found.tier, found.best_known, found.best_known_method, found.best_bound) == (
        "bounded",
        99.5,
        "exact/highs",
        100.0,
    )
    h = rows[1]
    assert h["gap"] is None and h["optimum_status"] == "none"
    assert h["gap_known"] == pytest.approx(4.5 / 99.5)  # (99.5 - 95) / 99.5
    assert h["gap_bound"] == pytest.approx(0.05)  # (100 - 95) / 100
    assert rows[0]["gap_known"] == 0.0 and rows[0]["gap_bound"] == pytest.approx(0.005)
    # the same instance with a tighter certify gap is open; its gaps stay
    assert certify(rows, "max", certify_gap=0.004).tier == "open"


def test_bounded_minimisation_takes_the_largest_bound():
    rows = [
        run("exact/cbc", "time_limit", 50.0, 49.75),
        run("exact/highs", "time_limit", 52.0, 49.0),
        run("h", "feasible", 55.0),
    ]
    found = certify_rows(rows, "min")
    # best known 50 (cbc), best bound max(49.75, 49) = 49.75: (50 - 49.75) / 49.75 = 0.005025 <= 0.01
    assert (found.tier, found.best_known, found.best_bound) == ("bounded", 50.0, 49.75)
    assert rows[2]["gap_known"] == pytest.approx(0.1)  # (55 - 50) / 50
    assert rows[2]["gap_bound"] == pytest.approx(5.25 / 49.75)  # (55 - 49.75) / 49.75
    assert rows[1]["gap_known"] == pytest.approx(0.04)  # (52 - 50) / 50


def test_open_without_a_bound_or_a_solution_or_too_wide():
    assert certify([run("exact/highs", "error"), run("h", "feasible", 3.0)], "max").tier == "open"
    assert certify([run("exact/highs", "time_limit", None, 5.0), run("h", "no_solution")], "max").tier == "open"
    wide = certify([run("exact/highs", "time_limit", 50.0, 100.0)], "max")  # (100 - 50) / 100 = 0.5
    assert (wide.tier, wide.best_bound) == ("open", 100.0)


def test_a_solution_better_than_a_bound_is_a_disagreement_without_a_tier():
    rows = [run("exact/highs", "time_limit", 8.0, 10.0), run("h", "feasible", 11.0)]
    found = certify_rows(rows, "max")
    assert (found.optimum.status, found.tier, found.best_known) == ("disagree", None, 11.0)
    assert "better than the bound of exact/highs" in rows[0]["message"]
    assert rows[0]["gap_known"] == pytest.approx(3 / 11) and rows[0]["gap_bound"] is None
    # a proof that a verified heuristic solution beats: best_proven alone calls it proven
    proof = [run("exact/highs", "optimal", 0.5), run("h", "feasible", 0.95)]
    assert best_proven(proof, "max").status == "proven"
    found = certify_rows(proof, "max")
    assert (found.optimum.status, found.optimum.value, found.tier) == ("disagree", 0.5, None)
    assert proof[1]["gap"] == pytest.approx(-0.9)  # kept negative, with its note
    assert "exact side is wrong" in proof[1]["message"]
    # within the tolerance max(1e-6, mip_gap) it is no contradiction
    close = [run("exact/highs", "optimal", 100.0), run("h", "feasible", 100.05)]
    assert certify(close, "max", mip_gap=1e-3).optimum.status == "proven"


def test_infeasible_has_no_tier_and_no_best_known():
    found = certify([run("exact/highs", "infeasible"), run("h", "no_solution")], "min")
    assert (found.optimum.status, found.tier, found.best_known, found.best_bound) == ("infeasible", None, None, None)


def test_a_run_the_evaluator_contradicts_gives_no_bound():
    rows = [run("exact/highs", "optimal", 9.0, 9.0, verified=False), run("exact/cbc", "time_limit", None, 12.0)]
    rows[0]["objective"] = 9.0  # an objective the evaluator does not agree with
    assert certify(rows, "max").best_bound == 12.0


def test_gap_bound_when_the_range_straddles_zero_or_the_objective_has_the_other_sign():
    # max, best known -1, best bound 2: the optimum may be 0, so no relative gap is bounded
    assert gap_to_bound(-3.0, -1.0, 2.0, "max") == math.inf
    assert gap_to_bound(0.0, -1.0, 2.0, "max") == 1.0  # at 0: the largest gap, (2 - 0) / 2 = 1
    # best known 2, best bound 4, objective -2: gaps (2 + 2) / 2 = 2 and (4 + 2) / 4 = 1.5; the optimum
    # x in [2, 4] gives 1 + 2 / x, at most 2: the larger of the two
    assert gap_to_bound(-2.0, 2.0, 4.0, "max") == pytest.approx(2.0)
    assert gap_to_bound(None, 2.0, 4.0, "max") is None and gap_to_bound(1.0, 2.0, None, "max") is None


def test_older_rows_get_the_certificate_and_keep_what_was_written():
    import pandas as pd

    rows = [
        {**run("exact/highs", "time_limit", 99.5, 100.0), "optimum": None, "optimum_status": "none", "gap": None},
        {**run("h", "feasible", 95.0), "optimum": None, "optimum_status": "none", "gap": None},
        {**run("exact/highs", "optimal", 4.0), "optimum": 4.0, "optimum_status": "proven", "gap": 0.0},
        {**run("h", "feasible", 3.0), "optimum": 4.0, "optimum_status": "proven", "gap": 0.25000001},
    ]
    frame = pd.DataFrame(rows)
    frame["problem"], frame["study"] = "odrp", "s"
    frame["instance_id"] = ["a", "a", "b", "b"]
    frame = complete(frame, {"s": (1e-6, 0.01)}, lambda problem, instance: "max")
    assert list(frame["tier"]) == ["bounded", "bounded", "proven_once", "proven_once"]
    assert list(frame["sense"]) == ["max"] * 4
    assert frame.loc[1, "gap_bound"] == pytest.approx(0.05)
    assert frame.loc[3, "gap"] == 0.25000001  # as written
    assert frame.loc[3, "gap_known"] == pytest.approx(0.25)
