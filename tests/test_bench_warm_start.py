"""``warm_start: best_heuristic`` in a grid: the exact runs of an instance start from its best heuristic.

The selection is checked against the heuristic rows themselves (the best verified objective), the
solver's log must show it took the start, and the warm-started optimum must be the cold one (the
same grid without the option) and brute force's.
"""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest

from odrp.bench import dataset
from odrp.bench.grid import load_grid
from odrp.bench.runner import bench
from odrp.bench.task import run_instance
from odrp.core.errors import InputError
from odrp.registry import KINDS
from tests.bench_fixtures import forget_plugins, spark  # noqa: F401 (fixtures)
from tests.bruteforce import odrp_optimum

GRID = """
plugins: [tests.bench_plugins]
studies:
  - name: tiny
    problem: odrp
    generator: random
    params: {operators: 4, nodes: 3, weights_profile: [balanced, cost]}
    seeds: [1, 2]
    exact: [highs, cbc]
    methods: [plugin_first_fit, odrp_greedy, plugin_fails]
    repeats: 2
    time_limit: 60
"""


def grid(tmp_path, text: str = GRID, warm: bool = True):
    path = tmp_path / ("warm.yaml" if warm else "cold.yaml")
    path.write_text(text + ("    warm_start: best_heuristic\n" if warm else ""))
    return load_grid(path)


def test_exact_runs_start_from_the_best_verified_heuristic(tmp_path):
    warm_tasks, cold_tasks = grid(tmp_path).tasks, grid(tmp_path, warm=False).tasks
    assert len(warm_tasks) == 4 and all(t.warm_start == "best_heuristic" for t in warm_tasks)
    for warm_task, cold_task in zip(warm_tasks, cold_tasks, strict=True):
        assert warm_task.instance_id == cold_task.instance_id  # the option changes the plan, not the instance
        rows = run_instance(warm_task)["rows"]
        planned = [(run.method, run.solver, run.repeat) for run in warm_task.runs]
        assert [(r["method"], r["solver"], r["repeat"]) for r in rows] == planned  # plan order kept
        heuristic = [r for r in rows if r["method"] != "exact"]
        verified = [r for r in heuristic if r["verified"]]
        best = max(r["objective"] for r in verified)  # odrp maximises F
        first = next(r for r in verified if r["objective"] == best)
        repeated = sum(run.method == first["method"] for run in warm_task.runs) > 1
        label = f"{first['method']}#{first['repeat']}" if repeated else first["method"]
        instance = KINDS["odrp"].load(KINDS["odrp"].generators["random"](seed=warm_task.seed, **warm_task.params))
        optimum, _ = odrp_optimum(instance)
        cold = {r["solver"]: r for r in run_instance(cold_task)["rows"] if r["method"] == "exact"}
        for row in (r for r in rows if r["method"] == "exact"):
            assert row["warm_start"] == label and row["warm_start_objective"] == best
            report = row["method_stats"]["warm_start"]
            assert report["source"] == label and report["objective"] == pytest.approx(best, rel=1e-12)
            assert report["accepted"] is True or (
                row["solver"] == "cbc"  # CBC's preprocessing may cut off a non-optimal start (coin-or/Cbc#282)
                and "Cbc0045I Warning: mipstart values could not be used to build a solution." in report["solver_log"]
            )
            assert row["status"] == "optimal" and row["verified"] and row["gap"] == 0.0
            assert row["objective"] == pytest.approx(optimum, rel=1e-6, abs=1e-9)
            assert row["objective"] == pytest.approx(cold[row["solver"]]["objective"], rel=1e-6, abs=1e-9)
            assert cold[row["solver"]]["warm_start"] is None
        for row in heuristic:
            assert row["warm_start"] is None and row["warm_start_objective"] is None


def test_without_a_verified_heuristic_solution_the_exact_run_is_cold_and_says_so(tmp_path):
    text = GRID.replace("methods: [plugin_first_fit, odrp_greedy, plugin_fails]", "methods: [plugin_fails]")
    task = grid(tmp_path, text).tasks[0]
    rows = run_instance(task)["rows"]
    exact = [r for r in rows if r["method"] == "exact"]
    assert len(exact) == 2
    for row in exact:
        assert row["status"] == "optimal" and row["warm_start"] is None and "warm_start" not in row["method_stats"]
        assert "warm start: no verified heuristic solution, solved cold" in row["message"]


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ("    methods: []\n", "studies[0].warm_start", "an exact solver and at least one heuristic"),
        ("    exact: []\n", "studies[0].warm_start", "an exact solver and at least one heuristic"),
        ("    warm_start: first_heuristic\n", "studies[0].warm_start", "best_heuristic"),
    ],
)
def test_bad_warm_start_options_are_one_line_errors(tmp_path, change, field, expected):
    text = textwrap.dedent(GRID).replace("    methods: [plugin_first_fit, odrp_greedy, plugin_fails]\n", "")
    text = text.replace("    exact: [highs, cbc]\n", "")
    if "methods" not in change:
        text += "    methods: [odrp_greedy]\n"
    if "exact" not in change:
        text += "    exact: [highs]\n"
    text += change
    if "warm_start" not in change:
        text += "    warm_start: best_heuristic\n"
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        load_grid(path)
    assert error.value.field == field and expected in str(error.value)


@pytest.mark.usefixtures("spark")
def test_a_warm_started_grid_on_spark_records_its_starts(tmp_path):
    path = tmp_path / "warm.yaml"
    path.write_text(GRID.replace("seeds: [1, 2]", "seeds: [1]") + "    warm_start: best_heuristic\n")
    summary = bench(path, tmp_path / "out", master="local[2]", progress=False)
    assert summary.status == "complete" and summary.ran == 2
    frame = dataset.read(tmp_path / "out")
    exact = frame[frame["method"] == "exact"]
    assert len(exact) == 4 and exact["warm_start"].notna().all() and (exact["status"] == "optimal").all()
    for _, row in exact.iterrows():
        heuristic = frame[(frame["instance_id"] == row["instance_id"]) & (frame["method"] != "exact")]
        assert row["warm_start_objective"] == heuristic.loc[heuristic["verified"], "objective"].max()
        assert json.loads(row["method_stats"])["warm_start"]["source"] == row["warm_start"]
    assert frame.loc[frame["method"] != "exact", "warm_start"].isna().all()
    assert pd.isna(frame.loc[frame["method"] != "exact", "warm_start_objective"]).all()
