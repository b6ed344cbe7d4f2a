"""Reference datasets that stand alone: instances stored by ``odrp bench``, ``odrp dataset export``,
``odrp dataset verify`` of an export (checksums, ``--resolve``), ``odrp import dataset``, and solutions
made elsewhere scored in a grid.

One small grid runs once on the shared ``local[2]`` context (``tests.bench_fixtures.spark``) and is
exported once; every test reads that export or a copy of it. The optima are checked against brute
force enumeration of the 0-1 knapsack instances, read from the exported files alone with the JSON
module, and against a second solver the grid did not run (CP-SAT).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import shutil
import subprocess
import textwrap

import pandas as pd
import pytest

import odrp
from odrp.bench import dataset
from odrp.bench.compare import compare
from odrp.bench.export import export
from odrp.bench.grid import canonical_json, generated_instance_id, load_grid
from odrp.bench.runner import bench
from odrp.core.errors import InputError
from odrp.registry import KINDS
from tests.bench_fixtures import forget_plugins, spark  # noqa: F401 (fixtures)

GRID = """
studies:
  - name: kp
    problem: kp
    generator: random
    params: {items: [7, 9]}
    seeds: 2
    exact: [highs]
    methods: [greedy]
    time_limit: 30
    solutions: {method: outside, path: external/*.json}
  - name: gap-max
    problem: gap
    generator: random
    params: {agents: 3, jobs: 6, sense: max}
    seeds: 1
    exact: [highs, cbc]
    methods: [greedy]
    time_limit: 30
  - name: odrp
    problem: odrp
    generator: random
    params: {operators: 3, nodes: 2}
    seeds: 1
    exact: [highs]
    methods: [odrp_greedy]
    time_limit: 30
"""


def kp_instances() -> list[tuple[str, dict]]:
    """The kp instances of GRID: (id, JSON), from the grid itself (no Spark)."""
    return [
        (task.instance_id, KINDS["kp"].generators["random"](**task.params, seed=task.seed))
        for task in load_grid_text(GRID).tasks
        if task.problem == "kp"
    ]


def load_grid_text(text: str, folder=None):
    import tempfile
    from pathlib import Path

    folder = Path(folder or tempfile.mkdtemp())
    (folder / "probe.yaml").write_text(text.replace("solutions: {method: outside, path: external/*.json}", ""))
    return load_grid(folder / "probe.yaml")


def brute_force_kp(data: dict) -> float:
    """The 0-1 knapsack optimum by enumerating every subset, from the JSON fields alone."""
    best = 0.0
    n = len(data["profits"])
    for chosen in itertools.product((0, 1), repeat=n):
        if sum(w for w, c in zip(data["weights"], chosen, strict=True) if c) <= data["capacity"]:
            best = max(best, float(sum(p for p, c in zip(data["profits"], chosen, strict=True) if c)))
    return best


def packed_value(data: dict, items: list[int]) -> float:
    return float(sum(data["profits"][i] for i in items))


@pytest.fixture(scope="module")
def made(tmp_path_factory, spark):  # noqa: F811 (the fixture)
    """(dataset dir, export dir, the kp instances, the external solutions' expected values)."""
    root = tmp_path_factory.mktemp("reference")
    (root / "grid.yaml").write_text(textwrap.dedent(GRID))
    (root / "external").mkdir()
    kp = kp_instances()
    (first_id, first), (second_id, second), (third_id, _) = kp[0], kp[1], kp[2]
    # a feasible placement: the items in order while they fit (worked out here, not by the toolkit)
    room, items = first["capacity"], []
    for i, w in enumerate(first["weights"]):
        if w <= room:
            items.append(i)
            room -= w
    feasible = {"assignment": [0 if i in items else None for i in range(len(first["weights"]))]}
    (root / "external" / f"{first_id}.json").write_text(json.dumps(feasible))
    # infeasible: every item packed (their weights exceed the capacity), as a Result JSON of a Java tool
    assert sum(second["weights"]) > second["capacity"]
    everything = {"assignment": [0] * len(second["weights"])}
    result = {"status": "feasible", "objective": None, "runtime_s": 0.25, "solution": everything}
    (root / "external" / f"{second_id}.json").write_text(json.dumps(result))
    (root / "external" / f"{third_id}.json").write_text('{"assignment": [0, 1')  # malformed: cut short
    summary = bench(root / "grid.yaml", root / "out", master="local[2]", progress=False)
    assert summary.ran == 6
    dest = root / "export"
    export(root / "out", dest)
    return root / "out", dest, dict(kp), packed_value(first, items)


def read_csv(path) -> list[dict[str, str]]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def write_csv(path, lines: list[dict[str, str]]) -> None:
    """Rewrite an export's CSV file with ``lines`` (the columns of the first)."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(lines[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(lines)


def forge_checksums(folder) -> None:
    """Rewrite ``folder``'s SHA256SUMS to agree with its files, by coreutils' sha256sum (as a forger would)."""
    sums = subprocess.run(
        "sha256sum $(find . -type f ! -name SHA256SUMS | sed 's|^./||' | sort)",
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / "SHA256SUMS").write_text(sums)


def test_bench_stores_every_instance_as_solved(made, run_cli):
    out, _, kp, _ = made
    frame = dataset.read(out)
    assert frame["instance_id"].nunique() == 6
    for instance_id, rows in frame.groupby("instance_id"):
        first = rows.iloc[0]
        path = out / "instances" / first["problem"] / f"{instance_id}.json"
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == first["instance_sha256"]
        if instance_id in kp:  # the very instance the generator makes
            assert data == canonical_json(kp[instance_id]).encode()
    proc = run_cli("dataset", "verify", str(out))
    assert proc.returncode == 0, proc.stderr


def test_the_export_holds_what_a_reader_needs(made):
    _, dest, _, _ = made
    names = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert {"optima.csv", "results.parquet", "README.md", "SHA256SUMS", "grid.yaml", "schemas/kp.json"} <= set(names)
    assert len([n for n in names if n.startswith("instances/")]) == 6
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=dest, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count(": OK") == len(names) - 1
    assert len(pd.read_parquet(dest / "results.parquet")) == len(dataset.read(made[0]))
    sheet = (dest / "README.md").read_text()
    for words in ("## Columns of optima.csv", "## Provenance", "highspy", "## Licence", "| kp | 4 |"):
        assert words in sheet


def test_optima_are_reproved_from_the_exported_files_alone(made):
    """Every kp optimum of optima.csv by brute force over the exported file, and every optimum by a solver
    the grid did not run (CP-SAT; CBC for ODRP); the GAP's sense is the instance's own (max)."""
    _, dest, _, _ = made
    lines = read_csv(dest / "optima.csv")
    assert len(lines) == 6 and all(line["established"] == "proven" for line in lines)
    for line in lines:
        path = dest / "instances" / line["kind"] / f"{line['instance']}.json"
        data = json.loads(path.read_text())
        assert hashlib.sha256(path.read_bytes()).hexdigest() == line["instance_sha256"]
        assert line["solvers"] in ("highs", "cbc highs")
        if line["kind"] == "kp":
            assert float(line["optimum"]) == brute_force_kp(data)
        other = "cpsat" if "cpsat" in KINDS[line["kind"]].solvers else "cbc"  # ODRP: HiGHS and CBC only
        assert other not in line["solvers"].split()
        again = odrp.solve(str(path), solver=other, time_limit=30)
        assert again.status == "optimal" and again.verified
        assert again.objective == pytest.approx(float(line["optimum"]), rel=1e-6)
        if line["kind"] == "gap":
            assert line["sense"] == "max" and line["solvers"] == "cbc highs"
            assert float(line["best_heuristic"]) <= float(line["optimum"]) + 1e-9  # max: no heuristic above it


def test_tampering_with_an_exported_file_fails_verify_in_one_line(made, tmp_path, run_cli):
    _, dest, _, _ = made
    ok = run_cli("dataset", "verify", str(dest))
    assert ok.returncode == 0, ok.stderr
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy)
    target = sorted((copy / "instances" / "kp").glob("*.json"))[0]
    data = json.loads(target.read_text())
    data["capacity"] += 1  # a plausible edit: still a valid instance
    target.write_text(canonical_json(data))
    proc = run_cli("dataset", "verify", str(copy))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "SHA256SUMS" in lines[0] and len(lines[0]) <= 1000
    (copy / "extra.json").write_text("{}")
    proc = run_cli("dataset", "verify", str(copy))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 2 and "extra.json" in proc.stderr


def test_resolve_finds_a_forged_optimum_even_with_matching_checksums(made, tmp_path, run_cli):
    _, dest, _, _ = made
    proc = run_cli("dataset", "verify", str(dest), "--resolve", "3", "--seed", "1")
    assert proc.returncode == 0, proc.stderr
    assert "3 optima re-proved by a second solver" in proc.stdout
    copy = tmp_path / "forged"
    shutil.copytree(dest, copy)
    lines = read_csv(copy / "optima.csv")
    for line in lines:
        line["optimum"] = repr(float(line["optimum"]) + 1.0)  # every optimum one better than it is
    write_csv(copy / "optima.csv", lines)
    forge_checksums(copy)
    assert run_cli("dataset", "verify", str(copy)).returncode == 0  # the checksums agree: it takes a solver
    proc = run_cli("dataset", "verify", str(copy), "--resolve", "1")
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/instances/" in errors[0] and "optima.csv" in errors[0]


def test_an_export_comes_back_as_a_grid_with_the_same_optima(made, tmp_path, run_cli):
    out, dest, _, _ = made
    proc = run_cli("import", "dataset", str(dest), "--out", str(tmp_path / "again"))
    assert proc.returncode == 0, proc.stderr
    grid = load_grid(tmp_path / "again" / "grid.yaml")
    assert len(grid.tasks) == 6
    summary = bench(tmp_path / "again" / "grid.yaml", tmp_path / "rerun", master="local[2]", progress=False)
    assert summary.ran == 6 and not summary.errors
    optima = {line["instance_sha256"]: float(line["optimum"]) for line in read_csv(dest / "optima.csv")}
    rows = dataset.read(tmp_path / "rerun")
    for digest, optimum in rows.groupby("instance_sha256")["optimum"].first().items():
        assert optimum == pytest.approx(optima[digest], rel=1e-6)
    assert set(rows["method"]) == {"exact", "greedy", "odrp_greedy", "outside"}
    # the solutions made elsewhere come back as the solutions their rows hold, and score the same
    before = dataset.read(out).query("method == 'outside'").set_index("instance_sha256")
    after = rows.query("method == 'outside'").set_index("instance_sha256")
    assert sorted(before.index) == sorted(after.index)
    for digest, row in before.iterrows():
        again = after.loc[digest]
        if row["solution"] is None:  # the malformed file and the missing one: no solution to bring back
            assert again["message"] == "no solution file for this instance"
        else:
            assert again["status"] == row["status"] and again["solution"] == row["solution"]
            assert (pd.isna(again["objective"]) and pd.isna(row["objective"])) or again["objective"] == row["objective"]
    # the comparison matches every instance by content, whatever the ids the import gave them
    result = compare([made[0], tmp_path / "rerun"], tmp_path / "cmp")
    counts = result.instances.set_index("problem")
    assert counts["shared"].sum() == 6 and counts["by_sha256"].sum() == 6
    assert counts["same_id_other_content"].sum() == 0
    side = result.side_by_side
    assert set(side.loc[side["method"] == "greedy", "dataset"]) == {"out", "rerun"}


def test_solutions_made_elsewhere_are_scored_like_a_method(made):
    out, _, kp, expected = made
    frame = dataset.read(out)
    rows = frame[frame["method"] == "outside"].set_index("instance_id")
    ids = [instance_id for instance_id, _ in kp_instances()]
    assert len(rows) == 4  # every kp instance, one without a file
    feasible, infeasible, malformed, absent = (rows.loc[i] for i in ids)
    optimum = brute_force_kp(kp[ids[0]])
    assert feasible["status"] == "feasible" and feasible["verified"]
    assert feasible["objective"] == expected
    assert feasible["gap"] == pytest.approx((optimum - expected) / optimum)
    assert infeasible["status"] == "no_solution" and pd.isna(infeasible["objective"])
    assert "infeasible" in infeasible["message"] and pd.isna(infeasible["gap"])
    assert infeasible["runtime_s"] == 0.25
    assert malformed["status"] == "error" and "\n" not in malformed["message"]
    assert f"external/{ids[2]}.json" in malformed["message"] and "valid JSON" in malformed["message"]
    assert absent["status"] == "no_solution" and absent["message"] == "no solution file for this instance"


def test_solution_files_are_checked_with_the_grid_before_spark(tmp_path):
    (tmp_path / "external").mkdir()
    (tmp_path / "external" / "nobody.json").write_text("{}")
    grid = tmp_path / "grid.yaml"
    study = "{name: kp, problem: kp, generator: random, params: {items: 5}, solutions: %s}"
    grid.write_text(f"studies:\n  - {study % '{method: mine, path: external/*.json}'}\n")
    with pytest.raises(InputError, match=r"studies\[0\]\.solutions\[0\]\.path: .*nobody.json names none"):
        load_grid(grid)
    (tmp_path / "external" / "nobody.json").rename(
        tmp_path / "external" / f"{generated_instance_id('kp', 'random', {'items': 5}, 0)}.json"
    )
    assert load_grid(grid).tasks[0].external[0].text == "{}"
    grid.write_text(f"studies:\n  - {study % '{method: greedy, path: external/*.json}'}\n")
    with pytest.raises(InputError, match=r"studies\[0\]\.solutions\[0\]\.method: a method name of its own"):
        load_grid(grid)
    grid.write_text(f"studies:\n  - {study % '{method: mine, path: elsewhere/*.json}'}\n")
    with pytest.raises(InputError, match=r"studies\[0\]\.solutions\[0\]\.path: a glob that matches solution files"):
        load_grid(grid)


def test_a_rewritten_instance_file_of_a_dataset_fails_verify(made, tmp_path, run_cli):
    out, _, _, _ = made
    copy = tmp_path / "dataset"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns(".lock"))
    target = sorted((copy / "instances" / "odrp").glob("*.json"))[0]
    target.write_text(target.read_text() + " ")
    proc = run_cli("dataset", "verify", str(copy))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(target) in lines[0] and "expected SHA-256" in lines[0]
    with pytest.raises(InputError):
        export(copy, tmp_path / "refused")


def test_resume_moves_a_rewritten_instance_file_aside_with_its_rows(made, tmp_path):
    """What ``odrp bench --resume`` does first: both files go to quarantine/, so the instance is run again."""
    from odrp.bench.runner import _checked_record

    out, _, _, _ = made
    copy = tmp_path / "dataset"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns(".lock"))
    target = sorted((copy / "instances" / "odrp").glob("*.json"))[0]
    target.write_text(target.read_text() + " ")
    rows = f"rows/problem=odrp/{target.stem}.parquet"
    warnings: list[str] = []
    _, record = _checked_record(copy, warnings)
    assert rows not in record and len(record) == 5
    assert not target.exists() and not (copy / rows).exists()
    assert (copy / "quarantine" / "instances" / "odrp" / target.name).exists()
    assert (copy / "quarantine" / rows).exists()
    assert len(warnings) == 1 and "its instance is rerun" in warnings[0]
    assert target.stem not in dataset.stored_instances(copy)


def test_results_hold_solutions_of_every_shape_as_json_text():
    """One results.parquet over kinds whose solutions differ in shape (a list for one, a number for another:
    the quick grid's pathmap and ODRP rows) stays one Parquet column: JSON text that reads back as it was."""
    import pyarrow as pa

    from odrp.bench.export import _as_json_text

    frame = pd.DataFrame({"problem": ["pathmap", "odrp"], "solution": [{"route": [1, 2]}, {"route": 3}]})
    frame["metrics"] = [{"cost": 1.5}, None]
    with pytest.raises(pa.ArrowInvalid):
        pa.Table.from_pandas(frame, preserve_index=False)
    table = pa.Table.from_pandas(_as_json_text(frame), preserve_index=False)
    assert [json.loads(v) for v in table.column("solution").to_pylist()] == [{"route": [1, 2]}, {"route": 3}]
    assert table.column("metrics").to_pylist() == ['{"cost": 1.5}', None]
