"""The report's tables against a hand-built dataset: per study, per ``--by`` value, every status counted,
the gap statistics and the bootstrap interval worked out by hand (or drawn again with numpy as the
documentation says), and the Markdown and LaTeX exports."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from odrp.bench import dataset, paper_tables, tables
from tests.report_data import rows_of

#: (instance, size, label, status, objective, optimum, optimum_status, gap, runtime_s, verified)
STUDY_A = [
    ("A1", 20, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 1.0, True),
    ("A1", 20, "greedy_fit/0", "feasible", 0.9, 1.0, "proven", 0.10, 0.1, True),
    ("A1", 20, "greedy_fit/1", "feasible", 1.0, 1.0, "proven", 0.0, 0.1, True),
    ("A2", 20, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 2.0, True),
    ("A2", 20, "greedy_fit/0", "no_solution", None, 1.0, "proven", None, 0.2, False),
    ("A2", 20, "greedy_fit/1", "feasible", 0.7, 1.0, "proven", 0.30, 0.2, True),
    ("A3", 40, "exact/highs", "time_limit", 0.9, 1.0, "proven", 0.10, 10.0, True),
    ("A3", 40, "exact/cbc", "optimal", 1.0, 1.0, "proven", 0.0, 3.0, True),
    ("A3", 40, "greedy_fit/0", "error", None, 1.0, "proven", None, 0.3, False),
    ("A3", 40, "greedy_fit/1", "feasible", 0.95, 1.0, "proven", 0.05, 0.3, True),
]
STUDY_B = [
    ("B1", 20, "exact/highs", "infeasible", None, None, "infeasible", None, 0.5, False),
    ("B1", 20, "greedy_fit/0", "infeasible", None, None, "infeasible", None, 0.01, False),
    ("B1", 20, "greedy_fit/1", "infeasible", None, None, "infeasible", None, 0.01, False),
]
PARAMS = {"A1": {"items": 20}, "A2": {"items": 20}, "A3": {"items": 40}, "B1": {"items": 20}}


def write(out, studies=(("study-a", STUDY_A), ("study-b", STUDY_B))):
    for study, spec in studies:
        rows = rows_of("odrp", study, spec, PARAMS)
        table_schema = dataset.schema(dataset.param_types(PARAMS.values()))
        for instance in sorted({r["instance_id"] for r in rows}):
            mine = [r for r in rows if r["instance_id"] == instance]
            dataset.write_instance(out, "odrp", instance, dataset.to_table(mine, table_schema))
    return out


@pytest.fixture
def frame(tmp_path):
    return dataset.read(write(tmp_path / "bench"))


def row(long, method, **key):
    mask = long["method"] == method
    for k, v in key.items():
        mask &= long[k] == v
    assert mask.sum() == 1, (method, key)
    return long[mask].iloc[0]


def test_one_table_per_study_with_every_status_counted(frame):
    long = tables.study_tables(frame)
    assert list(long.columns[:2]) == ["problem", "study"]
    assert sorted(set(zip(long["study"], long["method"], strict=True))) == [
        ("study-a", "exact/cbc"),
        ("study-a", "exact/highs"),
        ("study-a", "greedy_fit"),
        ("study-b", "exact/highs"),
        ("study-b", "greedy_fit"),
    ]
    # every run in exactly one status column
    assert (long[list(tables.STATUSES)].sum(axis=1) == long["runs"]).all()

    h = row(long, "greedy_fit", study="study-a")
    assert (h.instances, h.runs) == (3, 6)
    assert [h[s] for s in tables.STATUSES] == [0, 4, 1, 0, 0, 1]  # optimal feasible no_solution infeasible tl error
    assert (h.with_gap, h.at_optimum, h.comparable) == (4, 1, 6)
    # gaps [0.10, 0, 0.30, 0.05]: mean 0.45 / 4; median of [0, .05, .10, .30] = .075; p95 at position
    # 0.95 x 3 = 2.85: 0.10 + 0.85 x 0.20 = 0.27; max 0.30
    assert h.gap_mean == pytest.approx(0.1125)
    assert h.gap_median == pytest.approx(0.075)
    assert h.gap_p95 == pytest.approx(0.27)
    assert h.gap_max == pytest.approx(0.30)
    assert h.runtime_mean == pytest.approx(1.2 / 6)
    assert h.gap_ci_low <= h.gap_mean <= h.gap_ci_high and h.gap_ci_low >= 0 and h.gap_ci_high <= 0.30

    highs = row(long, "exact/highs", study="study-a")
    assert [highs[s] for s in tables.STATUSES] == [2, 0, 0, 0, 1, 0]
    assert (highs.with_gap, highs.at_optimum, highs.gap_max) == (3, 2, pytest.approx(0.10))

    # study-b: all infeasible; counted, no gap statistics, nothing hidden
    b = row(long, "greedy_fit", study="study-b")
    assert (b.runs, b.infeasible, b.with_gap, b.comparable) == (2, 2, 0, 0)
    assert all(math.isnan(b[c]) for c in ("gap_mean", "gap_ci_low", "gap_ci_high", "gap_p95", "gap_max"))
    cells = dict(zip(tables.HEADERS, tables.formatted(long[long["study"] == "study-b"].iloc[[1]])[0], strict=True))
    assert (cells["infeasible"], cells["with gap"], cells["mean gap"], cells["95% CI of mean"]) == (
        "2",
        "0/2",
        "-",
        "-",
    )


def test_by_parameter_splits_a_study_by_value(frame):
    long = tables.study_tables(frame, by=["items"])
    assert "param_items" in long.columns
    h20 = row(long, "greedy_fit", study="study-a", param_items=20)
    h40 = row(long, "greedy_fit", study="study-a", param_items=40)
    # items 20: A1 and A2 -> feasible 3, no_solution 1; gaps [0.10, 0, 0.30]
    assert (h20.runs, h20.feasible, h20.no_solution, h20.error, h20.with_gap) == (4, 3, 1, 0, 3)
    assert h20.gap_mean == pytest.approx(0.4 / 3) and h20.gap_median == pytest.approx(0.10)
    # items 40: A3 -> one error, one gap 0.05
    assert (h40.runs, h40.feasible, h40.error, h40.with_gap) == (2, 1, 1, 1)
    assert (h40.gap_mean, h40.gap_ci_low, h40.gap_ci_high) == pytest.approx((0.05, 0.05, 0.05))  # one gap: no spread
    assert tables.by_columns(frame, ["param_items", "items"]) == ["param_items"]
    keys = [key for key, _ in tables.split(long)]
    assert [tables.group_title(k) for k in keys] == [
        "odrp / study-a / items=20",
        "odrp / study-a / items=40",
        "odrp / study-b / items=20",
    ]


def test_an_unknown_by_parameter_is_bad_input(frame):
    with pytest.raises(Exception, match=r"^--by: nope: a generator parameter of the dataset \(it has: items\)$"):
        tables.study_tables(frame, by=["nope"])


def test_bootstrap_interval_is_the_documented_numpy_draw():
    gaps = np.array([0.10, 0.0, 0.30, 0.05])
    low, high = tables.bootstrap_interval(gaps)
    rng = np.random.default_rng(tables.BOOTSTRAP_SEED)
    means = gaps[rng.integers(0, 4, size=(tables.BOOTSTRAP_RESAMPLES, 4))].mean(axis=1)
    assert (low, high) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])), abs=1e-15)
    assert tables.bootstrap_interval(gaps) == (low, high)  # fixed seed: the same every time
    # a large sample drawn in several blocks gives the same numbers as one draw
    many = np.random.default_rng(5).random(700)
    means = many[np.random.default_rng(0).integers(0, 700, size=(2000, 700))].mean(axis=1)
    assert tables.bootstrap_interval(many) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])), abs=1e-15)


def test_bootstrap_interval_by_hand():
    # one gap: every resample is that gap
    assert tables.bootstrap_interval([0.2]) == (0.2, 0.2)
    # gaps {0, 1}: resample means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so of 2000 draws
    # ~500 are 0 and ~500 are 1: the 2.5% and 97.5% quantiles are 0 and 1
    assert tables.bootstrap_interval([0.0, 1.0]) == (0.0, 1.0)
    assert all(math.isnan(x) for x in tables.bootstrap_interval([]))
    # an infinite gap (a zero optimum missed) makes the upper bound inf, never NaN
    assert tables.bootstrap_interval([0.0, math.inf])[1] == math.inf


def test_markdown_and_latex_exports(frame):
    long = tables.study_tables(frame, by=["items"])
    files = paper_tables.summary_files(long, ["markdown", "latex"])
    markdown, latex = files["summary.md"], files["summary.tex"]
    assert "## odrp / study-a / items=40\n" in markdown
    # greedy_fit at items 40: 2 runs, 1 feasible, 1 error, 1/2 with a solution, 1/2 with a gap of 5%
    assert "| greedy_fit | 2 | 0 | 1 | 0 | 0 | 0 | 1 | 1/2 | 1/2 | 0/2 (0.00%) | 5.00% | [5.00%, 5.00%] |" in markdown
    assert markdown.count("| method | runs | optimal |") == 3
    assert r"\label{tab:odrp-study-a-40}" in latex and r"\caption{odrp / study-a / items=40}" in latex
    assert r"greedy\_fit & 2 & 0 & 1 & 0 & 0 & 0 & 1 & 1/2 & 1/2 & 0/2 (0.00\%) & 5.00\% & [5.00\%, 5.00\%]" in latex
    assert latex.count(r"\begin{tabular}") == latex.count(r"\end{tabular}") == 3
    assert paper_tables.latex_escape(r"a_b&c%d$e#f{g}h~i^j\k") == (
        r"a\_b\&c\%d\$e\#f\{g\}h\textasciitilde{}i\textasciicircum{}j\textbackslash{}k"
    )
    assert paper_tables.markdown_table(["a|b"], [["x|y"]]) == "| a\\|b |\n|:---|\n| x\\|y |\n"


def test_report_by_and_formats_through_the_cli(tmp_path, run_cli):
    out = write(tmp_path / "bench")
    proc = run_cli("report", str(out), "--by", "items", "--format", "markdown", "--format", "latex", check=True)
    assert "odrp / study-a / items=40" in proc.stdout
    report = out / "report"
    markdown = (report / "summary.md").read_text()
    assert markdown.startswith("# Gap to the proven optimum")
    # after each table, its methods' paired test (numbers in test_report_compare.py)
    assert "## odrp / study-a / items=20: method against method on the instances with a proven optimum" in markdown
    assert (report / "pairs.csv").read_text().startswith("problem,study,param_items,method,other,instances,")
    assert r"\begin{table}" in (report / "summary.tex").read_text()
    assert (report / "summary.csv").read_text().splitlines()[0].startswith("problem,study,param_items,method,")
    bad = run_cli("report", str(out), "--by", "nope")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: --by: nope: a generator parameter of the dataset (it has: items)"
    ]


def test_whole_parameter_values_stay_integers_where_another_kind_lacks_the_parameter():
    frame = pd.DataFrame(
        {
            "problem": ["kp", "kp", "odrp"],
            "study": ["a", "a", "b"],
            "param_items": [20.0, 40.0, math.nan],  # as read: odrp has no items, so pandas made them floats
            "instance_id": ["1", "2", "3"],
            "method": "h",
            "solver": None,
            "status": "feasible",
            "objective": 1.0,
            "optimum": 1.0,
            "verified": True,
            "gap": [0.1, 0.2, 0.3],
            "runtime_s": 1.0,
        }
    )
    long = tables.study_tables(frame, ["items"])
    csv = long[["study", "param_items"]].to_csv(index=False).splitlines()
    assert csv == ["study,param_items", "a,20", "a,40", "b,"]
    titles = [tables.group_title(k) for k, _ in tables.split(long)]
    assert titles == ["kp / a / items=20", "kp / a / items=40", "odrp / b / items=-"]
