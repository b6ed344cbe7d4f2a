"""Every ``odrp`` verb on every kind it applies to: exit codes, one JSON object under --json, one-line errors.

The verbs that take one instance (generate, schema, solve, evaluate, model) run on every kind inside this
process through ``odrp.cli.main`` (a process per call would cost seconds of imports each); each verb
also runs once as ``python -m odrp`` in a process of its own, with an error case, and so do bench,
report and dataset verify, on one small grid made from the quick grid (one Spark start for the module).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import highspy
import pytest
import yaml

from odrp.cli import main
from tests.conftest import ROOT

#: Each kind with generator parameters of a tiny instance.
KINDS = {
    "odrp": ["--operators", "4", "--nodes", "3"],
    "throughput": ["--components", "2", "--machines", "2"],
    "kp": ["--items", "8"],
    "mkp": ["--items", "8", "--knapsacks", "2"],
    "gap": ["--agents", "3", "--jobs", "6"],
    "mdkp": ["--items", "8", "--dimensions", "2"],
    "qkp": ["--items", "8"],
    "qmkp": ["--items", "8", "--knapsacks", "2"],
    "qm3dkp": ["--components", "3", "--max-parallelism", "2", "--racks", "1", "--nodes-per-rack", "2"],
    "latency": ["--operations", "3", "--load", "0.2"],
    "pathmap": ["--servers", "10", "--components", "3"],
}

#: Lines that Spark, Hadoop or the JVM print when their logging is not silenced.
JVM_NOISE = ("WARN", "log4j", "NativeCodeLoader", "incubator modules", "SparkContext", "Using Spark's default")


def one_json_object(text: str) -> dict:
    """The whole of ``text`` parsed as JSON: it must be exactly one object."""
    value = json.loads(text)
    assert isinstance(value, dict), text[:200]
    return value


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("error: ") and "Traceback" not in text
    return lines[0]


def run_in_process(capfd, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def methods() -> dict:
    from odrp.run import available_methods

    return available_methods()


ODRP = [sys.executable, "-m", "odrp"]


def run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("kind", KINDS)
def test_every_instance_verb_on_every_kind(kind, capfd, tmp_path, methods):
    code, out, err = run_in_process(capfd, "generate", kind, "--seed", "1", *KINDS[kind])
    assert (code, err) == (0, "")
    assert one_json_object(out)["problem"] == kind
    instance = tmp_path / "instance.json"
    instance.write_text(out)

    code, out, err = run_in_process(capfd, "schema", kind)
    assert (code, err) == (0, "")
    assert one_json_object(out)["type"] == "object"

    heuristic = next(name for name, info in methods.items() if name != "exact" and kind in info["kinds"])
    results = {}
    for method, limit in (("exact", "10"), (heuristic, "2")):  # exact: well under a second, unless the machine is busy
        code, out, err = run_in_process(
            capfd, "solve", str(instance), "--method", method, "--time-limit", limit, "--json"
        )
        assert (code, err) == (0, "")
        results[method] = one_json_object(out)
        assert results[method]["problem"] == kind and results[method]["method"] == method
        if results[method]["status"] in ("optimal", "feasible"):
            assert results[method]["verified"] is True
    code, out, err = run_in_process(capfd, "solve", str(instance), "--method", heuristic, "--time-limit", "2")
    assert code == 0 and kind in out  # the table names the problem

    exact = results["exact"]
    assert exact["status"] == "optimal"  # a tiny feasible instance
    saved = tmp_path / "result.json"
    saved.write_text(json.dumps(exact))
    code, out, err = run_in_process(capfd, "evaluate", str(instance), str(saved), "--json")
    assert (code, err) == (0, "")
    evaluation = one_json_object(out)  # the evaluator agrees with the run it re-scores
    assert evaluation["feasible"] is True
    assert evaluation["objective"] == pytest.approx(exact["objective"], rel=1e-6)
    code, out, err = run_in_process(capfd, "evaluate", str(instance), str(saved))
    assert code == 0 and kind in out

    # model: the textbook model (throughput's: its step P(rho) at the proven optimum) written, solved by HiGHS
    # from the file alone, and its solution read back through the map: the same optimum, verified
    model = tmp_path / "model.mps"
    rho = ["--rho", repr(exact["objective"])] if kind == "throughput" else []
    code, out, err = run_in_process(
        capfd, "model", str(instance), "--formulation", "textbook", "--out", str(model), *rho, "--json"
    )
    assert (code, err) == (0, "")
    assert one_json_object(out)["map_path"] == str(tmp_path / "model.map.json")
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    assert highs.readModel(str(model)) == highspy.HighsStatus.kOk
    highs.run()
    highs.writeSolution(str(tmp_path / "model.sol"), 0)
    code, out, err = run_in_process(
        capfd, "evaluate", str(instance), "--model-solution", str(tmp_path / "model.sol"), "--json"
    )
    assert (code, err) == (0, "")
    back = one_json_object(out)
    assert back["verified"] is True
    assert back["objective"] == pytest.approx(exact["objective"], rel=1e-6)
    code, out, err = run_in_process(capfd, "model", str(instance), "--out", str(tmp_path / "model.txt"), "--json")
    assert code == 2 and "--out" in one_line(err)

    # bad input: a field the kind does not know; a solution naming nothing of the instance
    data = json.loads(instance.read_text())
    data["colour"] = "blue"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    code, out, err = run_in_process(capfd, "solve", str(bad), "--json")
    assert code == 2
    assert "colour" in one_line(err)
    assert one_json_object(out)["field"] == "colour"
    junk = tmp_path / "junk.json"
    junk.write_text(json.dumps({"junk": 1}))
    code, out, err = run_in_process(capfd, "evaluate", str(instance), str(junk), "--json")
    assert code == 2
    assert str(junk) in one_line(err)
    assert one_json_object(out)["file"] == str(junk)


def test_import_writes_one_instance_per_problem_of_a_published_file(capfd, tmp_path):
    published = (
        tmp_path / "gap1.txt"
    )  # OR-Library's GAP format: 1 problem, 2 agents x 3 jobs, costs, weights, capacities
    published.write_text("1\n2 3\n1 2 3\n4 5 6\n1 1 1\n1 1 1\n3 3\n")
    code, out, err = run_in_process(capfd, "import", "orlib-gap", str(published), "--out", str(tmp_path / "out"))
    assert (code, err) == (0, "")
    assert out.splitlines() == [str(tmp_path / "out" / "gap1-1.json")]
    data = json.loads((tmp_path / "out" / "gap1-1.json").read_text())
    assert (data["values"], data["weights"], data["capacities"]) == ([[1, 2, 3], [4, 5, 6]], [[1, 1, 1]] * 2, [3, 3])


def test_generate_list_names_the_flags_generate_takes(capfd):
    """`--list` shows each parameter as the flag that `generate` reads; a bad value's error names that flag."""
    for kind in KINDS:
        code, out, _ = run_in_process(capfd, "generate", kind, "--list")
        assert code == 0
        for line in out.splitlines():
            generator, _, listed = line.partition(": ")
            for item in listed.split(", "):
                flag, default = item.split(" ", 1)
                value = "true" if default in ("True", "False") else default.strip("'")
                code, _, err = run_in_process(capfd, "generate", kind, "--generator", generator, flag, value, "--list")
                assert code == 0, err
    code, _, err = run_in_process(capfd, "generate", "odrp", "--weights-profile", "nope")
    assert code == 2
    assert one_line(err).startswith("error: command line: --weights-profile: expected one of")
    code, _, err = run_in_process(capfd, "generate", "odrp", "--operators", "0")
    assert one_line(err) == "error: command line: --operators: at least 1, got 0"


# ------------------------------------------------------------------ each verb in a process of its own


@pytest.fixture(scope="module", autouse=True)
def bench_started(tmp_path_factory):
    """The quick grid cut to one instance, HiGHS and one heuristic per study, benched into a dataset.

    It starts with the module's first test and runs while the others do; :func:`bench_run` waits for it.
    """
    here = tmp_path_factory.mktemp("verbs")
    grid = yaml.safe_load((ROOT / "benchmarks/grids/quick.yaml").read_text())
    for study in grid["studies"]:
        study.update(time_limit=5, exact=["highs"], methods=study["methods"][:1])
        if "instances" in study:
            study["instances"] = str(ROOT / "instances/odrp/debs2015-020.json")
        else:
            study["seeds"] = [1]
            study["params"] = {k: v[0] if isinstance(v, list) else v for k, v in study.get("params", {}).items()}
    path = here / "grid.yaml"
    path.write_text(yaml.safe_dump(grid))
    out = here / "dataset"
    args = [*ODRP, "bench", str(path), "--out", str(out), "--allow-outside", "--json"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    yield {"grid": grid, "out": out, "proc": proc}
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


@pytest.fixture(scope="module")
def bench_run(bench_started) -> dict:
    stdout, stderr = bench_started["proc"].communicate(timeout=600)
    return {**bench_started, "code": bench_started["proc"].returncode, "stdout": stdout, "stderr": stderr}


def check_in_processes(cases: list[tuple[list[str], int, bool, str | None]]) -> list[subprocess.CompletedProcess]:
    """Run each case (arguments, exit code, stdout one JSON object?, what the error line names) as `odrp`."""
    with ThreadPoolExecutor(4) as pool:
        procs = list(pool.map(lambda case: run([*ODRP, *case[0]]), cases))
    for (args, code, is_json, named), proc in zip(cases, procs, strict=True):
        assert proc.returncode == code, (args, proc.stderr)
        if is_json:
            one_json_object(proc.stdout)
        if code == 0:
            assert proc.stderr == "", (args, proc.stderr)
        else:
            assert named is not None and named in one_line(proc.stderr), (args, proc.stderr)
    return procs


def test_every_instance_verb_in_a_process(tmp_path):
    """Each verb once as a user runs it, mostly its error cases (its good runs on every kind are above)."""
    instance = str(ROOT / "instances/odrp/debs2015-020.json")
    bad_grid = tmp_path / "bad-grid.yaml"
    bad_grid.write_text("studies: [{name: a, problem: odrp, generator: random, colour: blue}]")
    published = tmp_path / "gap1.txt"
    published.write_text("1\n2 3\n1 2 x\n")
    missing = str(tmp_path / "absent.json")
    check_in_processes(
        [
            (["solve", missing, "--json"], 2, True, missing),
            (["evaluate", instance, missing, "--json"], 2, True, missing),
            (["model", instance, "--out", str(tmp_path / "m.mps"), "--json"], 0, True, None),
            (["model", instance, "--out", str(tmp_path / "m.txt")], 2, False, "--out"),
            (["evaluate", instance, "--model-solution", missing], 2, False, missing),
            (["generate", "gap", "--gap-type", "x"], 2, False, "--gap-type"),
            (["import", "orlib-gap", str(published), "--out", str(tmp_path / "out")], 2, False, str(published)),
            (["methods", "--json"], 0, True, None),
            (["methods", "--json", "--colour"], 2, True, "--colour"),  # argparse's errors are one line too
            (["schema", "knapsack"], 2, False, "KIND"),
            (["bench", str(bad_grid), "--out", str(tmp_path / "never"), "--json"], 2, True, "colour"),
        ]
    )


def test_bench_makes_a_dataset_without_jvm_noise(bench_run):
    assert bench_run["code"] == 0, bench_run["stderr"]
    summary = one_json_object(bench_run["stdout"])
    assert summary["status"] == "complete" and summary["errors"] == []
    assert summary["ran"] == len(bench_run["grid"]["studies"])  # one instance per study
    # stderr holds the toolkit's own lines (Spark starting, the progress bar), nothing from Spark or the JVM
    stderr = bench_run["stderr"]
    assert stderr.startswith("odrp bench: starting Spark")
    assert all(line.startswith("odrp bench") for line in stderr.strip().splitlines()), stderr
    for line in (bench_run["stdout"] + stderr).splitlines():
        assert not any(noise in line for noise in JVM_NOISE), line


def test_report_and_dataset_verify_in_a_process(bench_run, tmp_path):
    assert bench_run["code"] == 0
    out = bench_run["out"]
    damaged = tmp_path / "damaged"
    damaged_file = _damage_a_copy(out, damaged)
    procs = check_in_processes(
        [
            (["report", str(out), "--out", str(tmp_path / "report")], 0, False, None),
            (["report", str(tmp_path / "report")], 2, False, str(tmp_path / "report")),
            (["dataset", "verify", str(out), "--json"], 0, True, None),
            (["dataset", "verify", str(damaged), "--json"], 2, True, damaged_file),
        ]
    )
    assert (tmp_path / "report" / "index.html").exists()
    verified = one_json_object(procs[2].stdout)
    assert verified["findings"] == [] and verified["rows"] > 0
    assert [finding["kind"] for finding in one_json_object(procs[3].stdout)["findings"]] == ["mismatched"]


def _damage_a_copy(out: Path, copy: Path) -> str:
    """A copy of the dataset ``out`` with one Parquet file's bytes changed; returns that file's path."""
    shutil.copytree(out, copy)
    target = sorted((copy / "rows").rglob("*.parquet"))[0]
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    return str(target)
