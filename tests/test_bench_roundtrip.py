"""A dataset that round-trips: a grid with two studies (gap and kp) and a plugin of one's own, then
``odrp bench``, ``odrp dataset export``, ``odrp import dataset`` (from the export alone) and a bench of the
imported grid.

The plugin is the worked example of docs/plugins.md (``docs/examples/lab_heuristics.py``): its outcome has
no objective, so the evaluator scores it, and its rows are verified and get gaps. The kp optima come
from brute force over the instance files and the plugin's objectives from summing its solutions' profits
here, never from the toolkit; the manifest's provenance (the plugin's SHA-256, the toolkit's commit) is
checked against the file's bytes and against git.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from odrp.bench import dataset
from odrp.bench.export import export
from odrp.bench.runner import bench
from odrp.registry import KINDS, unload_plugins
from tests.bench_fixtures import forget_plugins, spark  # noqa: F401 (fixtures)
from tests.conftest import ROOT

PLUGIN = ROOT / "docs" / "examples" / "lab_heuristics.py"

GRID = """
plugins: [lab_heuristics]
licence: CC0-1.0
studies:
  - name: knapsacks
    problem: kp
    generator: random
    params: {items: [6, 7]}
    exact: [highs]
    methods: [greedy, random_fill]
    repeats: 3
    time_limit: 30
  - name: assignments
    problem: gap
    generator: random
    params: {agents: 3, jobs: 10}
    seeds: [1, 2]
    exact: [highs, cbc]
    methods: [random_fill]
    repeats: 2
    time_limit: 30
    options: {random_fill: {tries: 50}}
"""


def brute_force_kp(data: dict) -> float:
    best = 0.0
    for chosen in itertools.product((0, 1), repeat=len(data["profits"])):
        if sum(w for w, c in zip(data["weights"], chosen, strict=True) if c) <= data["capacity"]:
            best = max(best, float(sum(p for p, c in zip(data["profits"], chosen, strict=True) if c)))
    return best


def packed_profit(data: dict, assignment: list) -> float:
    """The profit of a kp assignment, checked to fit, from the JSON alone."""
    assert sum(w for w, k in zip(data["weights"], assignment, strict=True) if k is not None) <= data["capacity"]
    return float(sum(p for p, k in zip(data["profits"], assignment, strict=True) if k is not None))


def forget(module: str = "lab_heuristics") -> None:
    sys.modules.pop(module, None)
    unload_plugins()


@pytest.fixture(scope="module")
def made(tmp_path_factory, spark):  # noqa: F811 (the fixture)
    """(root, dataset dir, export dir): the grid run once and exported, its plugin beside it."""
    root = tmp_path_factory.mktemp("roundtrip")
    shutil.copy(PLUGIN, root / "lab_heuristics.py")
    (root / "grid.yaml").write_text(GRID)
    summary = bench(root / "grid.yaml", root / "out", master="local[2]", progress=False)
    assert summary.ran == 4 and not summary.errors
    export(root / "out", root / "export")
    forget()
    return root, root / "out", root / "export"


def test_the_manifest_records_the_plugin_source_and_the_toolkit_commit(made):
    root, out, _ = made
    manifest = dataset.read_manifest(out)
    source = (root / "lab_heuristics.py").read_bytes()
    digest = hashlib.sha256(source).hexdigest()
    assert manifest["grid"]["plugins"] == [
        {"module": "lab_heuristics", "file": "plugins/lab_heuristics.py", "sha256": digest}
    ]
    assert (out / "plugins" / "lab_heuristics.py").read_bytes() == source
    assert manifest["runs"][-1]["plugins"] == {"lab_heuristics": digest}
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    commit = manifest["versions"]["odrp-toolkit commit"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit) and commit.startswith(head.stdout.strip())
    assert manifest["runs"][-1]["toolkit_commit"] == commit


def test_a_plugin_without_an_objective_gets_verified_rows_with_gaps(made):
    _, out, _ = made
    frame = dataset.read(out)
    mine = frame[frame["method"] == "random_fill"]
    assert len(mine) == 2 * 3 + 2 * 2  # kp: 2 instances x 3 repeats; gap: 2 x 2
    assert mine["verified"].all() and mine["gap"].notna().all()
    for _, row in mine[mine["problem"] == "kp"].iterrows():
        data = json.loads((out / dataset.instance_file("kp", row["instance_id"])).read_text())
        optimum = brute_force_kp(data)
        objective = packed_profit(data, row["solution"]["assignment"])
        assert row["objective"] == objective and row["optimum"] == optimum
        assert row["gap"] == pytest.approx((optimum - objective) / optimum)
        assert "objective from the evaluator" in row["message"]


def test_the_export_ships_the_plugin_models_citation_and_licence(made):
    root, _, dest = made
    assert (dest / "plugins" / "lab_heuristics.py").read_bytes() == (root / "lab_heuristics.py").read_bytes()
    assert "plugins/lab_heuristics.py" in (dest / "SHA256SUMS").read_text()
    sheet = (dest / "README.md").read_text()
    for kind in ("kp", "gap"):
        assert f"### `{kind}`" in sheet and KINDS[kind].model_markdown.strip() in sheet
        assert f"Solution: `{KINDS[kind].solution_format}`" in sheet
    assert "### `odrp`" not in sheet  # only the kinds it holds
    assert "licensed under CC0-1.0" in sheet  # the grid's licence: key
    assert "## Citing" in sheet and (ROOT / "CITATION.cff").read_text().strip() in sheet
    assert "docs/methods/" not in sheet


def test_import_keeps_the_grid_and_a_bench_of_it_reruns_the_same_instances(made, tmp_path, run_cli):
    root, out, dest = made
    (root / "lab_heuristics.py").unlink()  # import works from the export alone
    copy = tmp_path / "export"
    shutil.copytree(dest, copy)
    proc = run_cli("import", "dataset", str(copy), "--out", str(tmp_path / "again"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("4 instances in ")  # kp 2, gap 2 (the plugin and grid files are no instances)
    assert run_cli("dataset", "verify", str(copy)).returncode == 0  # loading its plugin wrote nothing there
    original = yaml.safe_load(GRID)
    imported = yaml.safe_load((tmp_path / "again" / "grid.yaml").read_text())
    assert imported["plugins"] == ["lab_heuristics"] and imported["licence"] == "CC0-1.0"
    for before, after in zip(original["studies"], imported["studies"], strict=True):
        for key in ("name", "problem", "exact", "methods", "repeats", "time_limit"):
            assert after[key] == before[key], key
        assert after.get("options") == before.get("options")
        assert after["instances"] == f"instances/{before['name']}/*.json" and "generator" not in after
    forget()
    summary = bench(tmp_path / "again" / "grid.yaml", tmp_path / "rerun", master="local[2]", progress=False)
    assert summary.ran == 4 and not summary.errors
    first, again = dataset.read(out), dataset.read(tmp_path / "rerun")
    assert set(again["instance_sha256"]) == set(first["instance_sha256"])
    assert set(again["study"]) == {"knapsacks", "assignments"}

    def runs(frame: pd.DataFrame) -> dict:
        keyed = frame.set_index(["instance_sha256", "method", "solver", "repeat"])
        return {key: (row["objective"], row["verified"]) for key, row in keyed.iterrows()}

    assert runs(again) == runs(first)  # the same runs, seeds included, and the same objectives
