"""One convention for runs without a solution, in every output: a hand-built study where a method finds a
solution in 3 of 24 runs gives the same ranking and the same success counts on the page, in pairs.csv,
in the Markdown and in the LaTeX; and a comparison of two datasets tests the runs with a solution."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest
from scipy.stats import binomtest

from odrp.bench import compare, dataset
from odrp.bench.report import report
from tests.report_data import rows_of

#: random finds a solution on 3 of 24 instances, each closer to the optimum than greedy's
SOLVED_BY_RANDOM = {"I00", "I01", "I02"}


def spec() -> list[tuple]:
    rows = []
    for k in range(24):
        name = f"I{k:02d}"
        rows.append((name, 5, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 1.0, True))
        rows.append((name, 5, "greedy/0", "feasible", 0.7, 1.0, "proven", 0.3, 0.1, True))
        if name in SOLVED_BY_RANDOM:
            rows.append((name, 5, "random/0", "feasible", 0.99, 1.0, "proven", 0.01, 0.1, True))
        else:
            rows.append((name, 5, "random/0", "no_solution", None, 1.0, "proven", None, 0.1, False))
    return rows


def write(out, rows_spec, study="fails"):
    params = {row[0]: {"operators": 5} for row in rows_spec}
    rows = rows_of("odrp", study, rows_spec, params)
    table_schema = dataset.schema(dataset.param_types(params.values()))
    for instance in sorted({r["instance_id"] for r in rows}):
        mine = [r for r in rows if r["instance_id"] == instance]
        dataset.write_instance(out, "odrp", instance, dataset.to_table(mine, table_schema))
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    out = write(tmp_path_factory.mktemp("fails") / "bench", spec())
    return report(out, formats=["markdown", "latex"])


def cells_of(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_every_output_ranks_and_counts_alike(made):
    # by hand: greedy is better on the 21 instances where random has no solution, random on the 3 where it
    # has one (0.01 < 0.3); sign test of 21 against 3; the gaps pair on those 3 only
    p = binomtest(21, 24, 0.5).pvalue
    assert p == pytest.approx(0.000277, abs=1e-6)
    expected = ["greedy", "random", "24", "21", "0", "3", f"{p:.3g}", "24/24", "3/24", "3", "30.00%", "1.00%"]

    pairs = pd.read_csv(made.out / "pairs.csv")
    row = pairs[(pairs["method"] == "greedy") & (pairs["other"] == "random")].iloc[0]
    assert (row.instances, row.method_better, row.ties, row.other_better) == (24, 21, 0, 3)
    assert row.sign_p == pytest.approx(p)
    assert (row.method_solved, row.method_runs, row.other_solved, row.other_runs, row.pairs) == (24, 24, 3, 24, 3)

    markdown = (made.out / "summary.md").read_text()
    line = next(x for x in markdown.splitlines() if x.startswith("| greedy | random |"))
    assert cells_of(line)[: len(expected)] == expected

    latex = (made.out / "summary.tex").read_text()
    line = next(x for x in latex.splitlines() if x.startswith("greedy & random &"))
    assert [c.strip() for c in line.removesuffix(r" \\").split("&")][: len(expected)] == [
        c.replace("%", r"\%") for c in expected
    ]

    page = made.html.read_text()
    head = page[page.index("<table class='sortable pairs'") :]
    head = head[: head.index("</table>")]
    rows = [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", tr)] for tr in re.findall(r"<tr>(.*?)</tr>", head)]
    assert next(r for r in rows if r[:2] == ["greedy", "random"])[: len(expected)] == expected

    # the success counts beside the gaps, in every summary table
    summary = pd.read_csv(made.out / "summary.csv").set_index("method")
    assert summary.loc["random", ["with_solution", "runs"]].tolist() == [3, 24]
    assert "| random | 24 | 0 | 3 | 21 | 0 | 0 | 0 | 3/24 |" in markdown
    assert r"random & 24 & 0 & 3 & 21 & 0 & 0 & 0 & 3/24" in latex
    assert (
        "<td>random</td><td>24</td><td>0</td><td>3</td><td>21</td><td>0</td><td>0</td><td>0</td><td>3/24</td>" in page
    )


def old_new(solved: int, gap: float) -> list[tuple]:
    """72 instances; method m finds a solution on the first ``solved`` of them, with gap ``gap``."""
    rows = []
    for k in range(72):
        name = f"J{k:02d}"
        rows.append((name, 5, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 1.0, True))
        if k < solved:
            rows.append((name, 5, "m/0", "feasible", 1.0 - gap, 1.0, "proven", gap, 0.1, True))
        else:
            rows.append((name, 5, "m/0", "no_solution", None, 1.0, "proven", None, 0.1, False))
    return rows


def test_a_comparison_tests_the_runs_with_a_solution(tmp_path, run_cli):
    """8 of 72 runs with a solution before (mean gap 11.89%), 60 of 72 after (mean gap 15%): the mean gap
    alone says worse; the success counts beside it and McNemar's test say what changed."""
    old = write(tmp_path / "old", old_new(8, 0.1189))
    new = write(tmp_path / "new", old_new(60, 0.15))
    result = compare.compare([old, new], tmp_path / "cmp", formats=["markdown"])
    side = result.side_by_side.set_index(["method", "dataset"])
    assert side.loc[("m", "old"), ["with_solution", "runs"]].tolist() == [8, 72]
    assert side.loc[("m", "new"), ["with_solution", "runs"]].tolist() == [60, 72]
    test = result.tests.set_index("method").loc["m"]
    # the 8 solved before are solved after; 52 more after: p = 2 x (1/2)^52
    assert (test.run_pairs, test.baseline_only, test.dataset_only) == (72, 0, 52)
    assert test.mcnemar_p == pytest.approx(2 * 0.5**52, rel=1e-9)
    assert test.pairs == 8  # the gaps pair where both have one
    text = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "| m | old | 72 | 8/72 | 8/72 | 11.89% |" in text and "| m | new | 72 | 60/72 | 60/72 | 15.00% |" in text
    assert "| m | new vs old | 72 | 0 | 52 | 4.44e-16 |" in text
