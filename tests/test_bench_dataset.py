"""A dataset's files against its manifest, without Spark: ``odrp dataset verify``, ``odrp report`` and
``odrp bench --resume`` on datasets whose files were truncated, rewritten, removed, added or linked
out of the directory, and on damaged or stale manifests.

The datasets are built on the driver alone: a grid's instances get the rows of
:func:`odrp.bench.task.failed_outcome` (one error row per planned run, nothing solved), so that a
resume finds every instance stored and starts no Spark. The checksums the tests expect are computed
here with hashlib from the bytes on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from odrp.bench import dataset
from odrp.bench.grid import load_grid
from odrp.bench.runner import bench
from odrp.bench.task import failed_outcome
from odrp.core.errors import InputError

GRID = textwrap.dedent(
    """
    studies:
      - {name: tiny, problem: odrp, generator: random, params: {operators: 3, nodes: 2}, seeds: [1, 2, 3],
         exact: [highs]}
    """
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def stored(tmp_path):
    """(grid file, dataset directory) of a complete dataset: every instance of GRID stored, manifest written."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    out = tmp_path / "out"
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    for task in tasks:
        rows = failed_outcome(task, "stored by the test")["rows"]
        for row in rows:  # a row that looks solved, so that a rewrite can change its objective
            row.update(status="optimal", objective=2.0, message="")
        dataset.write_instance(out, task.problem, task.instance_id, dataset.to_table(rows, table_schema))
    summary = bench(grid, out, resume=True, progress=False)  # nothing to run: no Spark; writes the manifest
    assert (summary.ran, summary.skipped) == (0, 3)
    return grid, out


def halve_objectives(path: Path) -> None:
    """Rewrite a file as valid Parquet with every objective halved (what the manifest must catch)."""
    table = pq.read_table(path)
    column = table.schema.get_field_index("objective")
    table = table.set_column(column, "objective", pc.divide(table.column("objective"), 2.0))
    pq.write_table(table, path)


def test_the_manifest_records_the_bytes_written_and_verify_agrees(stored, run_cli):
    _, out = stored
    manifest = json.loads((out / "manifest.json").read_text())
    names = sorted(p.relative_to(out).as_posix() for p in dataset.files(out))
    assert sorted(manifest["files"]) == names and len(names) == 3
    for name in names:
        assert manifest["files"][name] == {"rows": 1, "errors": 0, "sha256": sha256(out / name)}
    assert not (out / dataset.JOURNAL).exists()  # merged into the manifest
    proc = run_cli("dataset", "verify", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{out}: 3 files, 3 rows, every one as the manifest records it"


def test_verify_names_every_file_that_disagrees(stored, run_cli):
    _, out = stored
    halved, truncated, removed = dataset.files(out)
    halve_objectives(halved)
    truncated.write_bytes(truncated.read_bytes()[:100])
    removed.unlink()
    stray = out / "rows" / "problem=odrp" / "stray.parquet"
    stray.write_bytes(b"not listed")
    proc = run_cli("dataset", "verify", str(out))
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 4 and "Traceback" not in proc.stderr
    found = {line.split(": ", 2)[1]: line for line in lines}
    assert set(found) == {str(halved), str(truncated), str(removed), str(stray)}
    recorded = json.loads((out / "manifest.json").read_text())["files"]
    old = recorded[halved.relative_to(out).as_posix()]["sha256"][:16]
    assert f"expected SHA-256 {old}... and 1 rows" in found[str(halved)]
    assert f"found SHA-256 {sha256(halved)[:16]}... and 1 rows" in found[str(halved)]
    assert "found no readable Parquet" in found[str(truncated)]
    assert "found none" in found[str(removed)] and "not in the manifest" in found[str(stray)]
    assert all(len(line) <= 1000 for line in lines)


def test_verify_of_a_directory_without_a_manifest_is_bad_input(tmp_path, run_cli):
    proc = run_cli("dataset", "verify", str(tmp_path))
    assert proc.returncode == 2
    expected = f"{tmp_path / 'manifest.json'}: a manifest (is this a dataset written by odrp bench?)"
    assert proc.stderr == f"error: {expected}\n"


@pytest.mark.parametrize("damage", ["truncate", "halve"])
def test_report_refuses_a_file_that_disagrees_in_one_line(stored, run_cli, damage):
    _, out = stored
    victim = dataset.files(out)[1]
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:-50])
    else:
        halve_objectives(victim)
    proc = run_cli("report", str(out))
    assert proc.returncode == 2, proc.stdout
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith(f"error: {victim}: expected SHA-256 ")
    assert not (out / "report" / "index.html").exists()


def test_resume_moves_damaged_files_aside_and_never_certifies_them(stored, monkeypatch):
    grid, out = stored
    halved, truncated, kept = dataset.files(out)
    halve_objectives(halved)
    truncated.write_bytes(truncated.read_bytes()[:100])
    halved_bytes, truncated_bytes = halved.read_bytes(), truncated.read_bytes()
    recorded = json.loads((out / "manifest.json").read_text())["files"]

    ran: list[list[str]] = []

    def execute(sc, todo, *args, **kwargs):  # the Spark part: record what would be rerun
        ran.append(sorted(t.instance_id for t in todo))

    monkeypatch.setattr("odrp.bench.runner._execute", execute)
    monkeypatch.setattr("odrp.bench.runner.spark_context", no_spark)
    summary = bench(grid, out, resume=True, progress=False)
    assert ran == [sorted([halved.stem, truncated.stem])]  # both instances are run again
    assert (summary.skipped, len(dataset.files(out))) == (1, 1)
    aside = out / "quarantine" / "rows" / "problem=odrp"
    assert (aside / halved.name).read_bytes() == halved_bytes
    assert (aside / truncated.name).read_bytes() == truncated_bytes
    moved = [w for w in summary.warnings if "moved to" in w]
    assert len(moved) == 2 and all(len(w.splitlines()) == 1 for w in moved)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"] == {kept.relative_to(out).as_posix(): recorded[kept.relative_to(out).as_posix()]}


@contextlib.contextmanager
def no_spark(*args):
    """Stands in for :func:`odrp.bench.runner.spark_context` where ``_execute`` is replaced too."""
    yield SimpleNamespace(master="test", defaultParallelism=1, applicationId="test"), 0.0


def test_a_corrupt_manifest_is_kept_aside_with_one_warning(stored, monkeypatch):
    grid, out = stored
    (out / "manifest.json").write_text('{"format": "odrp-bench/1", "runs": [')
    monkeypatch.setattr("odrp.bench.runner._execute", lambda *args: None)
    monkeypatch.setattr("odrp.bench.runner.spark_context", no_spark)
    summary = bench(grid, out, resume=True, progress=False)
    kept = list(out.glob("manifest.json.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text() == '{"format": "odrp-bench/1", "runs": ['
    warnings = [w for w in summary.warnings if "manifest.json" in w]
    assert len(warnings) == 1 and f"kept aside as {kept[0]}" in warnings[0]
    assert warnings[0].startswith(f"{out / 'manifest.json'}: valid JSON")
    # without a record its files cannot be checked: each is moved aside and rerun, none certified
    assert len(list((out / "quarantine").rglob("*.parquet"))) == 3 and summary.skipped == 0
    assert json.loads((out / "manifest.json").read_text())["files"] == {}


def test_a_killed_run_is_marked_interrupted_on_the_next_start(stored):
    grid, out = stored
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["runs"][-1]["finished"]  # what SIGKILL leaves: the start was written, the end never
    manifest["runs"][-1].pop("status")
    manifest["status"] = "running"
    path.write_text(json.dumps(manifest))
    summary = bench(grid, out, resume=True, progress=False)
    runs = json.loads(path.read_text())["runs"]
    assert [run["status"] for run in runs] == ["interrupted", "complete"]
    assert runs[0]["finished"] is None and "killed" in runs[0]["note"]
    assert any("marked interrupted" in w for w in summary.warnings)


def test_writes_never_follow_a_planted_link(stored, tmp_path, run_cli):
    grid, out = stored
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    (out / ".manifest.json.tmp").symlink_to(victim)
    (out / "report").mkdir()
    (out / "report" / "index.html").symlink_to(victim)
    (out / "report" / ".summary.csv.tmp").symlink_to(victim)
    bench(grid, out, resume=True, progress=False)  # rewrites the manifest
    assert victim.read_text() == "keep me"
    assert run_cli("report", str(out)).returncode == 0
    assert victim.read_text() == "keep me"
    assert not (out / "manifest.json").is_symlink() and not (out / "report" / "index.html").is_symlink()
    assert "<h1>Benchmark report" in (out / "report" / "index.html").read_text()  # the page, written in place


def test_a_linked_folder_of_the_dataset_is_refused(stored, tmp_path, run_cli):
    _, out = stored
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "report").symlink_to(elsewhere, target_is_directory=True)
    proc = run_cli("report", str(out))
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {out / 'report'}: a directory of the dataset")
    assert list(elsewhere.iterdir()) == []
    table = pq.read_table(dataset.files(out)[0])
    linked = tmp_path / "other"
    linked.mkdir()
    (out / "rows" / "problem=kp").symlink_to(linked, target_is_directory=True)
    with pytest.raises(InputError, match="problem=kp: a directory of the dataset"):
        dataset.write_instance(out, "kp", "x", table)
    assert list(linked.iterdir()) == []


def test_a_second_writer_of_a_dataset_is_refused(stored):
    grid, out = stored
    with dataset.writer_lock(out), pytest.raises(InputError, match="another odrp bench holds it"):
        bench(grid, out, resume=True, progress=False)


def test_read_names_an_unreadable_file(stored):
    _, out = stored
    path = dataset.files(out)[0]
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match=f"{path.name}: a readable Parquet file"):
        dataset.read(out)


def test_the_journal_records_a_write_before_the_manifest_does(tmp_path):
    out = tmp_path / "out"
    table = pa.table({"status": ["optimal", "error", "error"]})
    name, entry = dataset.write_instance(out, "odrp", "a", table)
    digest = sha256(out / name)
    assert entry == {"rows": 3, "errors": 2, "sha256": digest}
    line = json.loads((out / dataset.JOURNAL).read_text())
    assert line == {"file": "rows/problem=odrp/a.parquet", "rows": 3, "errors": 2, "sha256": digest}
    (out / dataset.JOURNAL).write_text((out / dataset.JOURNAL).read_text() + '{"file": "rows/pro')  # torn
    assert dataset.journal(out) == {name: entry}
    assert os.listdir(out / "rows" / "problem=odrp") == ["a.parquet"]  # no temporary file left


def test_report_and_verify_name_a_damaged_manifest_and_leave_it(stored, run_cli):
    _, out = stored
    (out / "manifest.json").write_text("[1, 2")
    for command in (("report", str(out)), ("dataset", "verify", str(out))):
        proc = run_cli(*command)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.startswith(f"error: {out / 'manifest.json'}: valid JSON (")
        assert len(proc.stderr.splitlines()) == 1
    assert (out / "manifest.json").read_text() == "[1, 2"  # readers never move or rewrite it


def test_a_linked_instance_file_is_not_a_dataset_file(stored, tmp_path, run_cli):
    _, out = stored
    victim = dataset.files(out)[0]
    copy = tmp_path / "copy.parquet"
    copy.write_bytes(victim.read_bytes())  # the very bytes the manifest records, behind a link
    victim.unlink()
    victim.symlink_to(copy)
    proc = run_cli("dataset", "verify", str(out))
    assert proc.returncode == 2
    assert proc.stderr == f"error: {victim}: a regular file, found a symbolic link or other\n"


def test_records_without_error_counts_are_completed_from_checked_files(stored):
    from odrp.bench.verify import check

    _, out = stored
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"].values():  # a manifest written before error counts were recorded
        del entry["errors"]
    result = check(out, manifest)
    assert not result.findings and [e["errors"] for e in result.record.values()] == [0, 0, 0]


# ------------------------------------------------------------------ metrics and solution as structs


def _struct_rows(tasks):
    """Two runs of one instance: a solved one and an error row (no metrics, no solution)."""
    rows = failed_outcome(tasks[0], "boom")["rows"]
    solved = dict(rows[0])
    solved.update(
        status="optimal",
        objective=2.0,
        message="",
        metrics={"cost": 3, "nodes_used": ["w1", "w2"], "replicas": {"op-a": 2, "op-b": 1}, "ok": True},
        solution={"placement": {"op-a": {"w1": 1, "w2": 1}, "op-b": {"w2": 1}}},
    )
    return [solved, rows[0]]


def test_metrics_and_solution_are_parquet_structs_read_back_as_dicts(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    out = tmp_path / "out"
    dataset.write_instance(out, "odrp", tasks[0].instance_id, dataset.to_table(_struct_rows(tasks), table_schema))
    stored = pq.read_table(dataset.files(out)[0]).schema
    # top-level keys are fields, the operator and node names below them map keys, metric numbers floats
    assert stored.field("solution").type == pa.struct(
        [("placement", pa.map_(pa.string(), pa.map_(pa.string(), pa.int64())))]
    )
    metrics = stored.field("metrics").type
    assert pa.types.is_struct(metrics) and metrics.field("cost").type == pa.float64()
    assert metrics.field("replicas").type == pa.map_(pa.string(), pa.float64())
    assert metrics.field("ok").type == pa.bool_() and metrics.field("nodes_used").type == pa.list_(pa.string())
    frame = dataset.read(out).set_index("status")
    assert frame.loc["optimal", "solution"] == {"placement": {"op-a": {"w1": 1, "w2": 1}, "op-b": {"w2": 1}}}
    assert frame.loc["optimal", "metrics"] == {
        "cost": 3.0,
        "nodes_used": ["w1", "w2"],
        "replicas": {"op-a": 2.0, "op-b": 1.0},
        "ok": True,
    }
    assert frame.loc["error", "solution"] is None and frame.loc["error", "metrics"] is None  # {} has no struct
    assert isinstance(frame.loc["optimal", "method_stats"], str)  # free-form per method: JSON text


def test_conflicting_values_in_one_file_stay_json_and_read_back(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    rows = _struct_rows(tasks)
    rows[1] = dict(rows[0], repeat=1, solution={"placement": [1, 2]})  # a list where the other run has a dict
    out = tmp_path / "out"
    dataset.write_instance(out, "odrp", tasks[0].instance_id, dataset.to_table(rows, table_schema))
    assert pq.read_table(dataset.files(out)[0]).schema.field("solution").type == pa.string()
    frame = dataset.read(out)
    assert frame["solution"].tolist() == [rows[0]["solution"], {"placement": [1, 2]}]


def test_datasets_with_json_text_columns_are_still_read(tmp_path):
    """A file written before metrics and solution were structs: JSON text, decoded by read."""
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    rows = _struct_rows(tasks)
    table = dataset.to_table(rows, table_schema)
    for name in dataset.STRUCT_COLUMNS:
        text = pa.array([None if r[name] is None else json.dumps(r[name]) for r in rows], pa.string())
        table = table.set_column(table.schema.get_field_index(name), name, text)
    dataset.write_instance(tmp_path / "old", "odrp", tasks[0].instance_id, table)
    frame = dataset.read(tmp_path / "old")
    assert frame["solution"].tolist() == [rows[0]["solution"], None]
    assert frame["metrics"].tolist()[0]["replicas"] == {"op-a": 2, "op-b": 1}


def test_problem_is_plain_text_so_a_groupby_gives_only_what_is_there(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    out = tmp_path / "out"
    for problem, task, method in (("odrp", tasks[0], "greedy"), ("kp", tasks[1], "ratio")):
        rows = [dict(r, method=method) for r in failed_outcome(task, "boom")["rows"]]
        dataset.write_instance(out, problem, task.instance_id, dataset.to_table(rows, table_schema))
    frame = dataset.read(out)
    assert frame["problem"].dtype == object
    assert sorted(frame.groupby(["problem", "method"]).size().index) == [("kp", "ratio"), ("odrp", "greedy")]


def test_one_kind_reads_as_one_arrow_dataset_even_with_an_all_error_instance(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    tasks = load_grid(grid).tasks
    table_schema = dataset.schema(dataset.param_types(t.params for t in tasks))
    out = tmp_path / "out"
    solved = _struct_rows(tasks)[:1]
    dataset.write_instance(out, "odrp", tasks[0].instance_id, dataset.to_table(solved, table_schema))
    failed = failed_outcome(tasks[1], "boom")["rows"]  # every run failed: null metrics and solution columns
    dataset.write_instance(out, "odrp", tasks[1].instance_id, dataset.to_table(failed, table_schema))
    types = {pq.read_schema(p).field("solution").type for p in dataset.files(out)}
    assert pa.null() in types and len(types) == 2
    table = dataset.kind_dataset(out, "odrp").to_table()
    by_id = {r["instance_id"]: r for r in table.to_pylist(maps_as_pydicts="strict")}
    assert by_id[tasks[0].instance_id]["solution"] == solved[0]["solution"]
    assert by_id[tasks[1].instance_id]["solution"] is None
    with pytest.raises(InputError, match="a folder of Parquet files of that kind"):
        dataset.kind_dataset(out, "kp")


def test_conflicting_values_keep_an_infinite_metric(tmp_path):
    values = [{"a": [1], "b": math.inf}, {"a": {"x": 1}, "b": 1.0}]  # a list, then a dict: no one struct
    column = dataset.nested_column(values, numbers_as_float=True)
    assert column.type == pa.string()
    pq.write_table(pa.table({"metrics": column}), tmp_path / "m.parquet")
    assert dataset.decoded(pq.read_table(tmp_path / "m.parquet").column("metrics")) == [
        {"a": [1.0], "b": math.inf},
        {"a": {"x": 1.0}, "b": 1.0},
    ]
