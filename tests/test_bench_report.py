"""``odrp report`` on a small hand-written dataset: every table number worked out by hand."""

from __future__ import annotations

import math

import pytest

from odrp.bench import dataset
from odrp.bench.report import report
from odrp.bench.tables import quantile

#: (instance, size, label, status, objective, optimum, optimum_status, gap, runtime_s, verified)
ODRP_ROWS = [
    ("I1", 4, "exact/highs", "optimal", 0.8, 0.8, "proven", 0.0, 2.0, True),
    ("I1", 4, "exact/cbc", "optimal", 0.8, 0.8, "proven", 0.0, 4.0, True),
    ("I1", 4, "h/0", "feasible", 0.6, 0.8, "proven", 0.25, 0.02, True),
    ("I1", 4, "h/1", "feasible", 0.8, 0.8, "proven", 0.0, 0.04, True),
    ("I2", 6, "exact/highs", "optimal", 0.5, 0.5, "proven", 0.0, 1.0, True),
    ("I2", 6, "exact/cbc", "time_limit", 0.45, 0.5, "proven", 0.1, 10.0, True),
    ("I2", 6, "h/0", "feasible", 0.4, 0.5, "proven", 0.2, 0.01, True),
    ("I2", 6, "h/1", "error", None, 0.5, "proven", None, 0.001, False),
    ("I3", 6, "exact/highs", "time_limit", 0.7, None, "none", None, 10.0, True),
    ("I3", 6, "exact/cbc", "error", None, None, "none", None, 0.5, False),
    ("I3", 6, "h/0", "feasible", 0.65, None, "none", None, 0.03, True),
    ("I3", 6, "h/1", "feasible", 0.7, None, "none", None, 0.05, True),
]
#: a minimisation kind with its own parameter columns, in its own partition (its rows say ``sense: min``)
KP_ROWS = [
    ("K1", 10, "exact/highs", "optimal", 10.0, 10.0, "proven", 0.0, 0.5, True),
    ("K1", 10, "h/0", "feasible", 12.0, 10.0, "proven", 0.2, 0.05, True),
]


def rows_of(spec, params, sense=None):
    out = []
    for instance, size, label, status, objective, optimum, optimum_status, gap, runtime, verified in spec:
        method, _, tail = label.partition("/")
        exact = method == "exact"
        out.append(
            {
                "instance_id": instance,
                "study": "hand",
                "instance_name": instance.lower(),
                "generator": "random",
                "file": None,
                "params": params,
                "seed": 0,
                "instance_sha256": "0" * 64,
                "size": size,
                "size_label": "operators",
                "method": method,
                "solver": tail if exact else None,
                "options": {},
                "repeat": 0 if exact else int(tail),
                "status": status,
                "objective": objective,
                "bound": None,
                "solver_gap": None,
                "optimum": optimum,
                "optimum_status": optimum_status,
                "gap": gap,
                "sense": sense,
                "runtime_s": runtime,
                "time_limit": 10.0,
                "verified": verified,
                "message": "boom" if status == "error" else "",
                "metrics": {},
                "method_stats": {},
                "solution": None,
                "package_version": "0.1.0",
                "solver_version": None,
            }
        )
    return out


@pytest.fixture(scope="module")
def hand_dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("hand") / "bench"
    for problem, spec, params in (("odrp", ODRP_ROWS, {"nodes": 3}), ("kp", KP_ROWS, {"items": 10, "kind": "x"})):
        rows = rows_of(spec, params, "min" if problem == "kp" else None)
        schema = dataset.schema(dataset.param_types([params]))
        for instance in sorted({r["instance_id"] for r in rows}):
            mine = [r for r in rows if r["instance_id"] == instance]
            dataset.write_instance(out, problem, instance, dataset.to_table(mine, schema))
    return out


@pytest.fixture(scope="module")
def made(hand_dataset):
    """The report of the hand dataset, into a folder of its own (made once: pictures take seconds)."""
    return report(hand_dataset, hand_dataset.parent / "pictures")


def test_tables_have_the_hand_worked_numbers(made):
    result = made
    table = result.tables["odrp"].set_index("method")
    assert list(table.index) == ["exact/cbc", "exact/highs", "h"]

    h = table.loc["h"]
    # 3 instances, 6 runs, 1 error; runs on instances with an optimum: I1 x 2, I2 x 2; optimal: I1/1
    assert (h.instances, h.runs, h.error, h.at_optimum, h.comparable) == (3, 6, 1, 1, 4)
    assert h.at_optimum_share == 0.25
    # gaps [0.25, 0, 0.2]: mean 0.45 / 3 = 0.15, median 0.2, p95 at position 0.95 x 2 = 1.9 of
    # [0, 0.2, 0.25]: 0.2 + 0.9 x 0.05 = 0.245, max 0.25
    assert h.gap_mean == pytest.approx(0.15)
    assert h.gap_median == pytest.approx(0.2)
    assert h.gap_p95 == pytest.approx(0.245)
    assert h.gap_max == pytest.approx(0.25)
    # (0.02 + 0.04 + 0.01 + 0.001 + 0.03 + 0.05) / 6 = 0.151 / 6
    assert h.runtime_mean == pytest.approx(0.151 / 6)
    # fastest proof: I1 2.0 s (highs), I2 1.0 s (highs; cbc hit its limit), I3 none. Runs with a
    # verified objective there: 2.0/0.02 = 100, 2.0/0.04 = 50, 1.0/0.01 = 100 -> (5e5)^(1/3)
    assert h.speedup == pytest.approx(500000 ** (1 / 3))

    cbc = table.loc["exact/cbc"]
    # comparable I1 (optimal) and I2 (time limit, gap 0.1): 1/2; gaps [0, 0.1]
    assert (cbc.instances, cbc.runs, cbc.error, cbc.at_optimum, cbc.comparable) == (3, 3, 1, 1, 2)
    assert (cbc.gap_mean, cbc.gap_median, cbc.gap_max) == pytest.approx((0.05, 0.05, 0.1))
    assert cbc.gap_p95 == pytest.approx(0.095)  # 0 + 0.95 x 0.1
    assert cbc.runtime_mean == pytest.approx(14.5 / 3)  # (4 + 10 + 0.5) / 3
    assert cbc.speedup == pytest.approx(math.sqrt(0.5 * 0.1))  # 2/4 and 1/10

    highs = table.loc["exact/highs"]
    assert (highs.at_optimum, highs.comparable, highs.gap_max) == (2, 2, 0.0)
    assert highs.runtime_mean == pytest.approx(13 / 3)
    assert highs.speedup == pytest.approx(1.0)  # the fastest proof on both instances

    # I1 proven by highs and cbc, I2 by highs alone (cbc hit its limit), I3 nothing proven and no bound: open
    assert result.optimum_counts["odrp"] == {
        "proven": 1,
        "proven_once": 1,
        "bounded": 0,
        "open": 1,
        "disagree": 0,
        "infeasible": 0,
    }
    kp = result.tables["kp"].set_index("method").loc["h"]
    assert (kp.gap_mean, kp.speedup) == pytest.approx((0.2, 10.0))  # 0.5 / 0.05
    assert len(result.errors) == 2


def test_pictures_and_page_exist(made):
    result = made
    folder = made.out
    pictures = ["runtime-profile", "gap-ecdf", "gap-vs-size", "runtime-vs-size"]  # sizes 4 and 6 in odrp
    expected = {"odrp": pictures, "kp": pictures[:2]}  # one size in kp: no size axis
    assert list(result.pictures) == ["odrp", "kp"]  # the registry's order of kinds
    for problem, names in expected.items():
        files = [f"{problem}-hand-{name}.{suffix}" for name in names for suffix in ("png", "svg")]
        assert [p.name for p in result.pictures[problem]] == files
        for picture in result.pictures[problem]:
            assert picture.parent == folder
            start = b"\x89PNG\r\n\x1a\n" if picture.suffix == ".png" else b"<?xml"
            assert picture.read_bytes().startswith(start) and picture.stat().st_size > 5000
    page = (folder / "index.html").read_text()
    assert "odrp-hand-gap-ecdf.svg" in page and "24.50%" in page and "boom" in page
    assert (folder / "summary.csv").read_text().count("\n") == 1 + 3 + 2


def test_read_merges_problems_with_different_parameter_columns(hand_dataset):
    frame = dataset.read(hand_dataset)
    assert len(frame) == len(ODRP_ROWS) + len(KP_ROWS)
    assert frame.loc[frame["problem"] == "kp", "param_items"].tolist() == [10, 10]
    assert frame.loc[frame["problem"] == "odrp", "param_items"].isna().all()
    assert frame.loc[frame["problem"] == "odrp", "param_nodes"].tolist() == [3] * len(ODRP_ROWS)


def test_report_through_the_cli(run_cli, hand_dataset):
    proc = run_cli("report", str(hand_dataset), check=True)
    assert "odrp / hand: gap to the proven optimum" in proc.stdout
    assert "1/4 (25.00%)" in proc.stdout and "24.50%" in proc.stdout and "79.4x" in proc.stdout
    assert "2 with a proven optimum (1 by two solvers, 1 by one)" in proc.stdout and "1 open" in proc.stdout
    assert (hand_dataset / "report" / "index.html").exists()


def test_report_of_an_empty_directory_is_bad_input(run_cli, tmp_path):
    proc = run_cli("report", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {tmp_path}: a dataset directory")


def test_quantile():
    assert quantile([0.0, 0.1, 0.2, 0.3, 0.4], 0.95) == pytest.approx(0.38)  # 0.3 + 0.8 x 0.1
    assert quantile([1.0, math.inf], 0.95) == math.inf
    assert math.isnan(quantile([], 0.5))
