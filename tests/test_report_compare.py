"""``odrp report DIR1 DIR2 --out R``: two hand-built datasets compared on their shared instances, and the
Wilcoxon signed-rank test against a rank sum worked out by hand."""

from __future__ import annotations

import math

import pytest

from odrp.bench import compare, dataset
from tests.report_data import rows_of

#: method h's gaps per instance; I0 only in the first dataset, I7 only in the second
BEFORE_H = {"I0": 0.9, "I1": 0.10, "I2": 0.20, "I3": 0.30, "I4": 0.40, "I5": 0.50, "I6": 0.60}
AFTER_H = {"I1": 0.20, "I2": 0.0, "I3": 0.60, "I4": 0.80, "I5": 1.00, "I6": 0.55, "I7": 0.9}
#: method k: every gap 0.1 before; after, I6 without a solution
BEFORE_K = dict.fromkeys(BEFORE_H, 0.1)
AFTER_K = {"I1": 0.1, "I2": 0.2, "I3": 0.0, "I4": 0.3, "I5": 0.1, "I6": None, "I7": 0.1}


def spec(h_gaps, k_gaps):
    rows = []
    for instance, gap in h_gaps.items():
        rows.append((instance, 5, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 1.0, True))
        rows.append((instance, 5, "h/0", "feasible", 1.0 - gap, 1.0, "proven", gap, 0.1, True))
        k = k_gaps[instance]
        if k is None:
            rows.append((instance, 5, "k/0", "no_solution", None, 1.0, "proven", None, 0.3, False))
        else:
            rows.append((instance, 5, "k/0", "feasible", 1.0 - k, 1.0, "proven", k, 0.2, True))
    return rows


def write(out, h_gaps, k_gaps):
    params = {instance: {"operators": 5} for instance in h_gaps}
    rows = rows_of("odrp", "s", spec(h_gaps, k_gaps), params)
    table_schema = dataset.schema(dataset.param_types(params.values()))
    for instance in sorted({r["instance_id"] for r in rows}):
        mine = [r for r in rows if r["instance_id"] == instance]
        dataset.write_instance(out, "odrp", instance, dataset.to_table(mine, table_schema))
    return out


@pytest.fixture
def pair(tmp_path):
    return write(tmp_path / "before", BEFORE_H, BEFORE_K), write(tmp_path / "after", AFTER_H, AFTER_K)


def test_wilcoxon_against_a_hand_computed_rank_sum():
    # d = [0.1, -0.2, 0.3, 0.4, 0.5, -0.05]; ranks of |d|: 0.05 -> 1, 0.1 -> 2, 0.2 -> 3, 0.3 -> 4,
    # 0.4 -> 5, 0.5 -> 6. W+ = 2 + 4 + 5 + 6 = 17, W- = 1 + 3 = 4; the statistic is min = 4.
    # Exact two-sided p: 2 P(W- <= 4) over the 2^6 = 64 sign patterns; rank subsets summing to <= 4:
    # {}, {1}, {2}, {3}, {1,2}, {4}, {1,3}: 7, so p = 2 x 7 / 64 = 0.21875.
    test = compare.paired_test([0, 0, 0, 0, 0, 0], [0.1, -0.2, 0.3, 0.4, 0.5, -0.05])
    assert (test.pairs, test.nonzero, test.w_plus, test.w_minus, test.statistic) == (6, 6, 17, 4, 4)
    assert test.p_value == pytest.approx(0.21875, abs=1e-12)
    assert test.median_difference == pytest.approx(0.2) and test.note == ""
    # all six positive: W- = 0, p = 2 / 64, below 0.05 with no fewer than MIN_PAIRS differences
    assert compare.paired_test([0] * 6, [1, 2, 3, 4, 5, 6]).p_value == pytest.approx(2 / 64)
    assert compare.MIN_PAIRS == 6 and 2 / 2**5 > 0.05 > 2 / 2**6


def test_zero_differences_are_dropped_and_few_pairs_are_said():
    # pairs (0.1,0.1) (0.1,0.2) (0.1,0.0) (0.1,0.3) (0.1,0.1): d = 0, 0.1, -0.1, 0.2, 0 -> 3 nonzero;
    # ranks of |d|: 0.1, 0.1 tied -> 1.5 each, 0.2 -> 3: W+ = 1.5 + 3 = 4.5, W- = 1.5
    test = compare.paired_test([0.1] * 5, [0.1, 0.2, 0.0, 0.3, 0.1])
    assert (test.pairs, test.nonzero) == (5, 3)
    assert (test.w_plus, test.w_minus) == pytest.approx((4.5, 1.5))
    assert test.note.startswith("too few pairs: 3 nonzero differences")
    same = compare.paired_test([0.2, 0.3], [0.2, 0.3])
    assert (same.nonzero, same.note) == (0, "no difference on any pair") and math.isnan(same.p_value)
    assert compare.paired_test([], []).note == "no pairs"
    # a zero optimum missed on both sides is a tie; missed on one side only, the largest difference
    inf = compare.paired_test([math.inf, 0.1, 0.1], [math.inf, 0.2, math.inf])
    assert (inf.pairs, inf.nonzero, inf.w_plus, inf.w_minus) == (3, 2, 3, 0)


def test_dataset_names_are_unique():
    assert compare.names_of(["a/out", "b/run"]) == ["out", "run"]
    assert compare.names_of(["a/out", "b/out"]) == ["a/out", "b/out"]
    assert compare.names_of(["out", "out", "x"]) == ["out #1", "out #2", "x"]


def test_two_datasets_side_by_side_on_their_shared_instances(pair, tmp_path):
    before, after = pair
    result = compare.compare([before, after], tmp_path / "cmp")
    assert result.names == ["before", "after"]
    # every instance of these hand-built datasets has the digest "0" * 64: not one instance's, so by id
    assert result.instances.to_dict("records") == [
        {
            "problem": "odrp",
            "before": 7,
            "after": 7,
            "shared": 6,
            "by_sha256": 0,
            "by_id": 6,
            "same_id_other_content": 0,
        }
    ]

    side = result.side_by_side.set_index(["method", "dataset"])
    # h over I1..I6 only (I0's and I7's 0.9 left out): 2.1 / 6 before, 3.15 / 6 after
    assert side.loc[("h", "before"), "gap_mean"] == pytest.approx(0.35)
    assert side.loc[("h", "after"), "gap_mean"] == pytest.approx(0.525)
    assert side.loc[("h", "after"), ["runs", "with_gap"]].tolist() == [6, 6]
    # k after: I6 has no solution: counted as a run, not as a gap; mean of 0.1, 0.2, 0, 0.3, 0.1
    assert side.loc[("k", "after"), ["runs", "with_solution", "with_gap"]].tolist() == [6, 5, 5]
    assert side.loc[("k", "after"), "gap_mean"] == pytest.approx(0.14)
    assert side.loc[("k", "after"), "runtime_mean"] == pytest.approx((5 * 0.2 + 0.3) / 6)

    tests = result.tests.set_index("method")
    h = tests.loc["h"]  # after - before = 0.1, -0.2, 0.3, 0.4, 0.5, -0.05: the hand-worked sample above
    assert (h.pairs, h.nonzero, h.w_plus, h.w_minus) == (6, 6, 17, 4)
    assert h.p_value == pytest.approx(0.21875) and (h.baseline, h.dataset) == ("before", "after")
    assert (h.run_pairs, h.baseline_only, h.dataset_only) == (6, 0, 0) and math.isnan(h.mcnemar_p)
    k = tests.loc["k"]  # I6 makes no pair; I1 and I5 differ by 0
    assert (k.pairs, k.nonzero, k.w_plus, k.w_minus) == (5, 3, 4.5, 1.5)
    assert k.note.startswith("too few pairs")
    # runs: I6 has a solution before only: one discordant pair, two-sided binomial p of 0 of 1 is 1
    assert (k.run_pairs, k.baseline_only, k.dataset_only, k.mcnemar_p) == (6, 1, 0, 1.0)
    assert tests.loc["exact/highs", "note"] == "no difference on any pair"

    names = sorted(p.name for p in result.files)
    assert names == ["comparison-instances.csv", "comparison-tests.csv", "comparison.csv"]


def test_comparison_through_the_cli(pair, tmp_path, run_cli):
    before, after = pair
    proc = run_cli("report", str(before), str(after), "--out", str(tmp_path / "cmp"), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert "paired gaps (Wilcoxon signed-rank)" in proc.stdout and "0.219" in proc.stdout
    assert "matched 6 instances: 0 by instance_sha256 (the instance's content), 6 by instance_id" in proc.stdout
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "| h | after vs before | 6 | 0 | 0 | - | 6 | 6 | 17 | 4 | 0.219 | 20.00% |  |" in text
    assert "| k | after | 6 | 5/6 | 5/6 | 14.00% |" in text
    missing = run_cli("report", str(before), str(after))
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: command line: --out: a folder for the comparison of several datasets"
    empty = run_cli("report", str(before), str(tmp_path / "nothing"), "--out", str(tmp_path / "x"))
    assert empty.returncode == 2 and "a dataset directory written by odrp bench" in empty.stderr


def test_every_two_methods_of_a_study_are_tested_on_their_shared_gaps(tmp_path):
    from tests.test_report_tables import write as write_studies

    frame = dataset.read(write_studies(tmp_path / "bench"))
    pairs = compare.method_pairs(frame).set_index(["study", "method", "other"])
    # study-a, per instance: exact/highs A1 0, A2 0, A3 0.10; greedy_fit the mean of its repeats with a
    # gap: A1 (0.10 + 0) / 2 = 0.05, A2 0.30 (its other run found nothing), A3 0.05 (the other an error).
    # d = greedy_fit - highs = 0.05, 0.30, -0.05: |d| ranks 1.5, 3, 1.5 -> W+ = 4.5, W- = 1.5
    h = pairs.loc[("study-a", "exact/highs", "greedy_fit")]
    assert (h.pairs, h.nonzero, h.w_plus, h.w_minus) == (3, 3, 4.5, 1.5)
    assert h.median_difference == pytest.approx(0.05) and h.note.startswith("too few pairs")
    # the ranking: highs is better on A1 (0 < 0.05), on A2 and A3 (greedy_fit lacks a solution in one of two
    # runs there, highs in none): 3 wins, no loss, sign test 2 x (1/2)^3 = 0.25; runs with a solution 3/3, 4/6
    assert (h.method_better, h.ties, h.other_better, h.sign_p) == (3, 0, 0, 0.25)
    assert (h.method_solved, h.method_runs, h.other_solved, h.other_runs) == (3, 3, 4, 6)
    # exact/cbc ran on A3 only: one pair with each
    assert pairs.loc[("study-a", "exact/cbc", "exact/highs"), "pairs"] == 1
    # study-b: nothing has a gap
    assert pairs.loc[("study-b", "exact/highs", "greedy_fit"), "note"] == "no pairs"
