"""Instances past the frontier in the report: each instance's tier, each row's gaps to the best known and
to the best bound, and the certified interval in the tables, the Markdown, the LaTeX, the CSV, the
pictures and the page, on the hand-built ``FRONTIER`` dataset (every number worked out by hand)."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from odrp.bench import dataset, pictures, tables
from odrp.bench.report import report
from tests.report_data import FRONTIER, write_frontier


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frontier") / "bench"
    write_frontier(folder)
    return folder


@pytest.fixture(scope="module")
def made(out):
    return report(out, formats=["markdown", "latex"])


def test_every_instance_has_its_tier(out):
    frame = dataset.read(out)
    tiers = frame.groupby("instance_id")["tier"].agg(set).to_dict()
    assert tiers == {
        "odrp-F1": {"proven"},  # highs and cbc both prove 10
        "odrp-F2": {"bounded"},  # 20 and 20.1: (20.1 - 20) / 20.1 = 0.0050 <= 0.01
        "odrp-F3": {"open"},  # 30 and 40: 0.25
        "odrp-F4": {"proven_once"},  # highs alone proves 5
    }
    first = frame.drop_duplicates("instance_id").set_index("instance_id")
    assert first.loc["odrp-F2", ["best_known", "best_known_method", "best_bound"]].tolist() == [
        20.0,
        "exact/highs",
        20.1,
    ]
    # F3: exact/highs and h1 both reach 30: the first in name order; the one bound is 40
    assert first.loc["odrp-F3", ["best_known", "best_known_method", "best_bound"]].tolist() == [
        30.0,
        "exact/highs",
        40.0,
    ]
    # F4: the proof's objective 5 is the best bound (cbc's 5.5 is weaker)
    assert first.loc["odrp-F4", ["best_known", "best_bound"]].tolist() == [5.0, 5.0]
    assert set(frame["sense"]) == {"max"}


#: (instance, label) -> (gap_known, gap_bound), by hand
GAPS = {
    ("F1", "h1/0"): (0.2, 0.2),  # (10 - 8) / 10 to both
    ("F1", "h2/0"): (0.1, 0.1),
    ("F2", "exact/highs"): (0.0, 0.1 / 20.1),
    ("F2", "exact/cbc"): (1 / 20, 1.1 / 20.1),  # 19: (20 - 19) / 20, (20.1 - 19) / 20.1
    ("F2", "h1/0"): (2 / 20, 2.1 / 20.1),
    ("F2", "h1/1"): (0.5 / 20, 0.6 / 20.1),
    ("F3", "h1/0"): (3 / 30, 13 / 40),
    ("F3", "h2/0"): (6 / 30, 16 / 40),
    ("F4", "exact/cbc"): (0.2, 0.2),
    ("F4", "h2/0"): (0.1, 0.1),
}


def test_every_row_has_its_two_gaps(out):
    frame = tables.labelled(dataset.read(out))
    frame["key"] = [
        (i.removeprefix("odrp-"), label if m == "exact" else f"{label}/{r}")
        for i, label, m, r in zip(frame["instance_id"], frame["label"], frame["method"], frame["repeat"], strict=True)
    ]
    rows = frame.set_index("key")
    for key, (known, bound) in GAPS.items():
        assert rows.loc[[key], "gap_known"].iloc[0] == pytest.approx(known, abs=1e-12), key
        assert rows.loc[[key], "gap_bound"].iloc[0] == pytest.approx(bound, abs=1e-12), key
    # without a solution: no gap of either kind
    assert rows.loc[[("F2", "h2/0")], ["gap_known", "gap_bound"]].isna().all(axis=None)
    # where the instance is proven, both equal the gap to the optimum
    proven = frame[frame["tier"].isin(["proven", "proven_once"]) & frame["gap"].notna()]
    assert len(proven) == 9
    assert (proven["gap"] - proven["gap_known"]).abs().max() < 1e-12
    assert (proven["gap"] - proven["gap_bound"]).abs().max() < 1e-12


def test_the_table_shows_proven_gaps_and_the_certified_interval_apart(made):
    table = made.tables["odrp"].set_index("method")
    h1 = table.loc["h1"]
    # 8 runs, one without a solution (F1); gaps on F1 0.2, F4 0 and 0.2; F2 bounded, F3 open
    assert (h1.runs, h1.with_solution, h1.with_gap) == (8, 7, 3)
    assert h1.gap_mean == pytest.approx(0.4 / 3)
    assert (h1.bounded_runs, h1.bounded_with_solution, h1.open_runs, h1.open_with_solution) == (2, 2, 2, 2)
    assert h1.certified_low == pytest.approx((2 / 20 + 0.5 / 20) / 2)  # 0.0625
    assert h1.certified_high == pytest.approx((2.1 / 20.1 + 0.6 / 20.1) / 2)  # 0.06716
    assert h1.certified_max == pytest.approx(2.1 / 20.1)
    h2 = table.loc["h2"]
    # F2 without a solution: no certified interval, but counted
    assert (h2.runs, h2.with_solution, h2.bounded_runs, h2.bounded_with_solution) == (4, 3, 1, 0)
    assert math.isnan(h2.certified_low) and (h2.open_runs, h2.open_with_solution) == (1, 1)
    assert made.optimum_counts["odrp"] == {
        "proven": 1,
        "proven_once": 1,
        "bounded": 1,
        "open": 1,
        "disagree": 0,
        "infeasible": 0,
    }


def test_markdown_latex_and_csv_carry_the_certified_interval(made):
    markdown = (made.out / "summary.md").read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| h1 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    headers = [h.strip() for h in markdown.splitlines()[4].strip("|").split("|")]
    assert headers == list(tables.HEADERS)
    named = dict(zip(headers, cells, strict=True))
    assert named["with solution"] == "7/8" and named["mean gap"] == "13.33%"
    assert named["bounded: with solution"] == "2/2"
    assert named["bounded: certified mean gap"] == "[6.25%, 6.72%]"
    assert named["bounded: max gap at most"] == "10.45%"
    assert named["open: with solution"] == "2/2"
    latex = (made.out / "summary.tex").read_text()
    assert r"h1 & 8 & 0 & 7 & 1 & 0 & 0 & 0 & 7/8 & 3/8" in latex and r"[6.25\%, 6.72\%] & 10.45\%" in latex
    csv = pd.read_csv(made.out / "summary.csv").set_index("method")
    assert csv.loc["h1", "certified_low"] == pytest.approx(0.0625)
    assert csv.loc["h1", "with_solution"] == 7


def test_the_certified_ecdf_is_a_picture_of_its_own(out, made):
    rows = tables.labelled(dataset.read(out))
    profile = pictures.certified_ecdf(rows, "t")
    assert profile is not None and profile.instances == 1  # F2 alone is bounded
    shown = {c.name: (list(c.taus), list(c.shares)) for c in profile.curves}
    # gap to the best bound: highs 0.1 / 20.1; h1's two repeats, half the weight each; h2 none (inf)
    assert shown["h1: gap to the best bound (certified)"] == (
        [0.0, pytest.approx(0.6 / 20.1), pytest.approx(2.1 / 20.1)],
        [0.0, 0.5, 1.0],
    )
    assert shown["h1: gap to the best known"] == ([0.0, 0.025, 0.1], [0.0, 0.5, 1.0])
    assert shown["h2: gap to the best bound (certified)"] == ([0.0], [0.0])
    assert shown["exact/highs: gap to the best known"] == ([0.0], [1.0])
    assert len(profile.curves) == 8  # two series of four methods, never merged across series
    # the proven ECDF covers F1 and F4 only
    proven = pictures.gap_ecdf(rows, "t")
    assert proven is not None and proven.instances == 2
    names = [p.name for p in made.pictures["odrp"]]
    assert "odrp-frontier-certified-gap-ecdf.svg" in names and "odrp-frontier-gap-ecdf.svg" in names


def test_the_page_shows_certificates(made):
    text = made.html.read_text()
    assert text.count("data-figure='figure-") == 3  # runtime profile, gap ECDF, certified gap ECDF
    data = json.loads(re.search(r"id='odrp-data'>(.*?)</script>", text, flags=re.S).group(1).replace("<\\/", "</"))
    f2 = data["instances"]["odrp-F2"]
    assert f2["certificate"] == (
        "bounded: best known within the study's certify gap of the best bound; best known 20 (exact/highs); "
        "best bound 20.1"
    )
    run = next(r for r in data["runs"] if r["instance"] == "odrp-F2" and r["method"] == "h1" and r["repeat"] == 0)
    assert (run["gap"], run["gap_known"], run["gap_bound"]) == (None, pytest.approx(0.1), pytest.approx(2.1 / 20.1))
    assert "1 bounded (certified gaps" in text and "1 open (no gap there)" in text


def test_console_at_80_columns_keeps_every_method_name_whole(made):
    from rich.console import Console

    from odrp.bench.report import print_report

    console = Console(width=80, record=True)
    print_report(made, console)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    words = set(re.findall(r"[\w/]+", text))
    for method in {label.partition("/")[0] if not label.startswith("exact") else label for _, _, label, *_ in FRONTIER}:
        assert method in words, method
    assert "…" not in "".join(line for line in text.splitlines() if line.startswith("│"))
    assert "[6.25%, 6.72%]" in text


def test_a_dataset_written_before_the_certificate_reads_reports_and_verifies(tmp_path, run_cli):
    """Files without the certificate's columns at all (as written before they existed): read derives them."""
    from tests.report_data import FRONTIER_BOUNDS, rows_of

    out = tmp_path / "old"
    params = {name: {"operators": 5, "nodes": 3} for name in ("F1", "F2", "F3", "F4")}
    rows = rows_of("odrp", "frontier", FRONTIER, params, FRONTIER_BOUNDS)
    table_schema = dataset.schema(dataset.param_types(params.values()))
    new = ["sense", "best_known", "best_known_method", "best_bound", "tier", "gap_known", "gap_bound"]
    for instance in sorted({r["instance_id"] for r in rows}):
        table = dataset.to_table([r for r in rows if r["instance_id"] == instance], table_schema)
        dataset.write_instance(out, "odrp", instance, table.drop_columns(new))
    dataset.write_manifest(out, grid={"spec": {"studies": []}}, runs=[], status="complete", files=dataset.journal(out))
    import pyarrow.parquet as pq

    assert "tier" not in pq.read_schema(next((out / "rows" / "problem=odrp").glob("*.parquet"))).names
    frame = dataset.read(out)
    assert frame.groupby("instance_id")["tier"].first().tolist() == ["proven", "bounded", "open", "proven_once"]
    assert run_cli("dataset", "verify", str(out)).returncode == 0
    proc = run_cli("report", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "1 bounded" in proc.stdout and "[6.25%, 6.72%]" in proc.stdout
