"""``odrp bench`` on embedded Spark: error rows, optima against brute force, resume after a kill.

One local[2] SparkContext serves every test here (``tests.bench_fixtures.spark``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from odrp.bench import dataset, verify
from odrp.bench.grid import instance_sha256
from odrp.bench.runner import bench
from odrp.core.errors import InputError
from odrp.kinds.replication.generators import random_instance
from odrp.registry import KINDS
from tests.bench_fixtures import forget_plugins, spark  # noqa: F401 (fixtures)
from tests.bruteforce import odrp_optimum
from tests.conftest import ROOT

pytestmark = pytest.mark.usefixtures("spark")  # one shared local[2] context
ODRP = KINDS["odrp"]
TINY = {"operators": 4, "nodes": 3, "max_replicas": 2, "slots": 4, "pinned": "source"}

GRID = f"""
plugins: [tests.bench_plugins]
studies:
  - name: tiny
    problem: odrp
    generator: random
    params: {json.dumps(TINY)}
    seeds: [11, 12]
    exact: [highs, cbc]
    methods: [plugin_first_fit, plugin_fails]
    repeats: 2
    time_limit: 60
  - name: debs
    problem: odrp
    instances: instances/odrp/debs2015-020.json
    exact: [highs]
    methods: [plugin_first_fit]
"""


def copy_beside(grid, relative: str) -> None:
    """Copy an instance file of the repository beside the grid file (instance globs stay under its folder)."""
    target = grid.parent / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ROOT / relative, target)


def test_failing_method_is_an_error_row_and_optima_match_brute_force(tmp_path):
    from tests.bench_plugins import FAILURE

    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    copy_beside(grid, "instances/odrp/debs2015-020.json")
    summary = bench(grid, tmp_path / "out", master="local[2]", progress=False)
    # per tiny instance: highs, cbc, 2 first-fit repeats, 1 failing run; DEBS: highs and first fit
    assert (summary.ran, summary.rows, summary.failed_tasks) == (3, 2 * 5 + 2, 0)
    frame = dataset.read(tmp_path / "out")
    assert len(frame) == 12 and set(frame["problem"]) == {"odrp"}

    failed = frame[frame["method"] == "plugin_fails"]
    assert len(failed) == 2
    assert (failed["status"] == "error").all() and not failed["verified"].any()
    assert failed["message"].str.contains(f"RuntimeError: {FAILURE}").all()
    assert failed["gap"].isna().all() and failed["optimum"].notna().all()
    assert sorted(e["instance_id"] for e in summary.errors) == sorted(failed["instance_id"])

    for seed in (11, 12):
        rows = frame[frame["seed"] == seed]
        data = random_instance(seed=seed, **TINY)
        best, _ = odrp_optimum(ODRP.load(data, "tiny"))  # enumerates every placement
        assert rows["instance_sha256"].iloc[0] == instance_sha256(data)  # generated in the task, from the seed
        exact = rows[rows["method"] == "exact"]
        assert sorted(exact["solver"]) == ["cbc", "highs"]
        assert (exact["status"] == "optimal").all() and exact["verified"].all()
        assert exact["objective"].tolist() == pytest.approx([best, best], rel=1e-6)
        assert rows["optimum"].tolist() == pytest.approx([best] * 5, rel=1e-6)
        assert (rows["optimum_status"] == "proven").all()
        fits = rows[rows["method"] == "plugin_first_fit"]
        assert sorted(fits["repeat"]) == [0, 1]
        for fit in fits.itertuples():
            evaluation = ODRP.evaluate(ODRP.load(data, "tiny"), fit.solution, "fit")  # a struct: a dict
            assert fit.objective == pytest.approx(evaluation.objective, rel=1e-12)
            assert fit.gap == pytest.approx((best - fit.objective) / abs(best), rel=1e-6, abs=1e-9)

    debs = frame[frame["file"].notna()]
    assert debs["file"].iloc[0].endswith("instances/odrp/debs2015-020.json")
    assert debs["size"].tolist() == [8, 8] and (debs["size_label"] == "operators").all()
    assert debs.loc[debs["method"] == "exact", "status"].tolist() == ["optimal"]

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["rows"] == 12 and manifest["instances"] == 3
    assert manifest["problems"] == {"odrp": {"instances": 3, "rows": 12, "errors": 2}}
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == dataset.sha256_file(tmp_path / "out" / name)
    assert manifest["versions"]["solver highs"].startswith("highs 1.12")
    assert manifest["runs"][0]["ran"] == 3
    with pytest.raises(InputError, match="--resume"):  # a second run into the same directory
        bench(grid, tmp_path / "out", master="local[2]", progress=False)


RESUME_GRID = """
plugins: [tests.bench_plugins]
studies:
  - name: slow
    problem: odrp
    generator: random
    params: {operators: [4, 5], nodes: 3}
    seeds: 3
    exact: [highs]
    methods: [plugin_first_fit, plugin_fails]
    options: {plugin_first_fit: {delay_s: 1.0}}
"""


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """A dataset without what may differ between two runs: runtimes (columns and *_s stats, at any depth:
    the start heuristics' records are nested)."""
    frame = frame.drop(columns=["runtime_s"]).copy()
    frame["method_stats"] = [json.dumps(_untimed(json.loads(s))) for s in frame["method_stats"]]
    return frame.reset_index(drop=True)


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not k.endswith("_s")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def test_resume_after_a_killed_run_gives_the_uninterrupted_dataset(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(RESUME_GRID)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--out", str(killed), "--master", "local[1]"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: the JVM and Python workers die with it
    )
    try:
        deadline = time.monotonic() + 240
        while len(dataset.files(killed)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = len(dataset.files(killed))
    assert 2 <= done < 6, "the run was not caught halfway"
    assert json.loads((killed / "manifest.json").read_text())["status"] == "running"
    partial = killed / "rows" / "problem=odrp" / ".odrp-random-0.parquet.tmp"
    partial.write_bytes(b"half a file")  # what a kill during a write would leave

    summary = bench(grid, killed, master="local[2]", resume=True, progress=False)
    assert (summary.skipped, summary.ran) == (done, 6 - done)
    assert not partial.exists()
    # every instance's failing run is reported, also those written before the kill
    assert sum(e["method"] == "plugin_fails" for e in summary.errors) == 6

    whole = tmp_path / "whole"
    bench(grid, whole, master="local[2]", progress=False)
    pd.testing.assert_frame_equal(comparable(dataset.read(killed)), comparable(dataset.read(whole)))
    manifest = json.loads((killed / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["rows"] == 6 * 3 and len(manifest["runs"]) == 2
    assert [run["status"] for run in manifest["runs"]] == ["interrupted", "complete"]  # the SIGKILL is recorded
    for name, entry in manifest["files"].items():  # the kill's files and the resume's, each as written
        assert entry["sha256"] == hashlib.sha256((killed / name).read_bytes()).hexdigest()

    again = bench(grid, killed, master="local[2]", resume=True, progress=False)
    assert (again.skipped, again.ran, again.errors) == (6, 0, summary.errors)  # errors stay visible
    retried = bench(grid, killed, master="local[2]", resume=True, retry_errors=True, progress=False)
    assert (retried.skipped, retried.ran) == (0, 6)  # each instance had an error row: rerun, replaced
    pd.testing.assert_frame_equal(comparable(dataset.read(killed)), comparable(dataset.read(whole)))

    grid.write_text(RESUME_GRID.replace("options:", "repeats: 2\n    options:"))  # a second first-fit run
    changed = bench(grid, killed, resume=True, progress=False)
    assert (changed.skipped, changed.ran) == (6, 0)  # nothing is replaced by another plan
    assert changed.warnings[0].startswith("6 stored instances lack runs that the grid now plans")


def test_resume_reruns_a_rewritten_file_and_report_then_agrees(tmp_path, run_cli):
    """A file whose objectives were halved (valid Parquet, wrong bytes) is moved aside on --resume and
    its instance solved again: the dataset is again the one Spark wrote, and report accepts it."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        textwrap.dedent(
            """
        studies:
          - {name: two, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [7, 8]}
        """
        )
    )
    out = tmp_path / "out"
    bench(grid, out, master="local[2]", progress=False)
    original = comparable(dataset.read(out))
    victim = dataset.files(out)[0]
    table = pq.read_table(victim)
    column = table.schema.get_field_index("objective")
    pq.write_table(table.set_column(column, "objective", pc.divide(table.column("objective"), 2.0)), victim)
    assert run_cli("report", str(out)).returncode == 2

    summary = bench(grid, out, master="local[2]", resume=True, progress=False)
    assert (summary.skipped, summary.ran) == (1, 1)
    assert any(w.startswith(f"{victim}: expected SHA-256") and "moved to" in w for w in summary.warnings)
    assert (out / "quarantine" / "rows" / "problem=odrp" / victim.name).exists()
    pd.testing.assert_frame_equal(comparable(dataset.read(out)), original)
    proc = run_cli("dataset", "verify", str(out))
    assert proc.returncode == 0 and proc.stdout.startswith(f"{out}: 2 files, 2 rows"), proc.stderr
    assert run_cli("report", str(out)).returncode == 0


def test_a_crashed_task_gives_error_rows_and_the_study_goes_on(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        textwrap.dedent(
            """
        plugins: [tests.bench_plugins]
        studies:
          - {name: crash, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [5],
             methods: [plugin_kills_worker]}
          - {name: fine, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [6]}
        """
        )
    )
    summary = bench(grid, tmp_path / "out", master="local[2]", progress=False)
    assert (summary.ran, summary.failed_tasks) == (2, 1)
    frame = dataset.read(tmp_path / "out")
    crashed = frame[frame["seed"] == 5]
    # the task died with its worker: every planned run of the instance is an error row that says so
    assert sorted(crashed["method"]) == ["exact", "plugin_kills_worker"]
    assert (crashed["status"] == "error").all()
    assert crashed["message"].str.startswith("Spark task failed: ").all()
    fine = frame[frame["seed"] == 6]
    assert fine["status"].tolist() == ["optimal"]
    # the one job of the run failed with the crash; the partitions whose outcomes had not arrived ran again
    assert any(w.startswith("the run's Spark job failed") for w in summary.warnings), summary.warnings


def test_a_method_that_dies_exits_or_hangs_costs_only_its_own_row(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        textwrap.dedent(
            """
        plugins: [tests.bench_plugins]
        studies:
          - {name: rough, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [5],
             methods: [plugin_crashes, plugin_exits, plugin_sleeps, plugin_first_fit], time_limit: 2}
        """
        )
    )
    began = time.perf_counter()
    summary = bench(grid, tmp_path / "out", master="local[2]", progress=False)
    assert summary.failed_tasks == 0
    rows = dataset.read(tmp_path / "out").set_index("method")
    assert rows.loc["exact", "status"] == "optimal"  # the runs around the failures keep their answers
    assert rows.loc["plugin_first_fit", "verified"]
    assert rows.loc["plugin_crashes", "status"] == "error"
    assert "died (exit code 3)" in rows.loc["plugin_crashes", "message"]
    assert rows.loc["plugin_exits", "status"] == "error"
    assert "SystemExit" in rows.loc["plugin_exits", "message"]
    # a 30 s native sleep under a 2 s limit: stopped by the watchdog, a time_limit row without a solution
    assert rows.loc["plugin_sleeps", "status"] == "time_limit"
    assert rows.loc["plugin_sleeps", "runtime_s"] < 2 + 1
    assert rows.loc["plugin_sleeps", "objective"] is None or pd.isna(rows.loc["plugin_sleeps", "objective"])
    assert time.perf_counter() - began < 60


def test_runs_and_workers_are_capped_at_the_studys_memory_budget(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        textwrap.dedent(
            """
        plugins: [tests.bench_plugins]
        studies:
          - {name: capped, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [5],
             methods: [plugin_hogs, plugin_limits], memory_limit: 1}
        """
        )
    )
    bench(grid, tmp_path / "out", master="local[2]", progress=False)
    rows = dataset.read(tmp_path / "out").set_index("method")
    assert rows.loc["exact", "status"] == "optimal"
    assert rows.loc["plugin_hogs", "status"] == "error"
    assert "memory budget of 1 GB" in rows.loc["plugin_hogs", "message"]
    limits = rows.loc["plugin_limits", "method_stats"]
    limits = json.loads(limits) if isinstance(limits, str) else limits
    assert limits["run"] == 1024**3  # the run's own cap: the study's budget
    assert 1024**3 < limits["worker"] < 1024**3 + 2 * 1024**3  # the worker: its own size + headroom + one budget


def test_the_outcome_accumulator_collects_in_a_task_and_hands_over_on_the_driver():
    import queue

    from odrp.bench.stream import Outcomes

    param = Outcomes()
    in_task = param.zero(queue.SimpleQueue())  # what a task starts from: an empty list, whatever the driver holds
    assert in_task == []
    assert param.addInPlace(param.addInPlace(in_task, [{"instance_id": "a"}]), [{"instance_id": "b"}]) == [
        {"instance_id": "a"},
        {"instance_id": "b"},
    ]
    on_driver: queue.SimpleQueue = queue.SimpleQueue()
    assert param.addInPlace(on_driver, [{"instance_id": "a"}, {"instance_id": "b"}]) is on_driver  # keeps nothing
    assert [on_driver.get_nowait()["instance_id"] for _ in range(2)] == ["a", "b"]
    assert on_driver.empty()


def test_bench_prints_no_jvm_warnings_by_default(run_cli, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("studies: [{name: a, problem: odrp, generator: random, params: {operators: 3, nodes: 2}}]")
    proc = run_cli("bench", str(grid), "--out", str(tmp_path / "out"), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # no JVM or Spark line at all
    loud = run_cli("bench", str(grid), "--out", str(tmp_path / "loud"), "--no-progress", "--verbose")
    assert "WARNING: Using incubator modules" in loud.stderr or "log4j" in loud.stderr  # what --verbose keeps


def test_prune_errors_and_replace_move_instances_aside_on_resume(tmp_path):
    """A study fixed after a mistake leaves its failed instances behind; --prune-errors moves them aside."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        textwrap.dedent(
            """
        plugins: [tests.bench_plugins]
        studies:
          - {name: typo, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [1],
             methods: [plugin_fails]}
          - {name: kept, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [2]}
        """
        )
    )
    out = tmp_path / "out"
    bench(grid, out, master="local[2]", progress=False)
    before = dataset.read(out)
    failed = before.loc[before["status"] == "error", "instance_id"].iloc[0]
    kept = before.loc[before["seed"] == 2, "instance_id"].iloc[0]
    fixed = grid.read_text().replace("seeds: [1]", "seeds: [5]").replace("[plugin_fails]", "[plugin_first_fit]")
    grid.write_text(fixed)  # the failed instance (seed 1) is no longer planned
    with pytest.raises(InputError, match="--replace: an instance id the dataset holds"):
        bench(grid, out, master="local[2]", resume=True, replace=["nope"], progress=False)
    with pytest.raises(InputError, match="--prune-errors: only with --resume"):
        bench(grid, tmp_path / "other", master="local[2]", prune_errors=True, progress=False)
    pruned = bench(grid, out, master="local[2]", resume=True, prune_errors=True, progress=False)
    assert any(w.startswith(f"{failed}: moved to ") for w in pruned.warnings)
    after = dataset.read(out)
    assert failed not in set(after["instance_id"]) and not (after["status"] == "error").any()
    assert (out / "quarantine").is_dir() and not verify.verify(out).findings
    replaced = bench(grid, out, master="local[2]", resume=True, replace=[kept], progress=False)
    assert replaced.ran == 1 and any(
        w.startswith(f"{kept}: moved to ") and "runs again" in w for w in replaced.warnings
    )
    assert len(dataset.read(out)) == len(after)
