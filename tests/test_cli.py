"""The ``odrp`` command as a user runs it: JSON output, exit codes, one-line errors."""

from __future__ import annotations

import copy
import json

import pytest

from tests.test_odrp_evaluator import SPLIT, TINY

ENVELOPE = {
    "problem",
    "instance",
    "method",
    "solver",
    "status",
    "objective",
    "bound",
    "gap",
    "runtime_s",
    "verified",
    "solution",
    "metrics",
}


@pytest.fixture
def tiny_file(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return path


def test_solve_json_prints_one_result_object(run_cli, tiny_file):
    proc = run_cli("solve", str(tiny_file), "--json", check=True)
    result = json.loads(proc.stdout)  # the whole stdout is one JSON object
    assert set(result) >= ENVELOPE
    assert result["status"] == "optimal" and result["verified"] is True
    assert result["solver"].startswith("highs")


def test_solve_with_cbc_and_paper_formulation_agree(run_cli, tiny_file):
    highs = json.loads(run_cli("solve", str(tiny_file), "--json", check=True).stdout)
    cbc = json.loads(
        run_cli("solve", str(tiny_file), "--json", "--solver", "cbc", "--formulation", "paper", check=True).stdout
    )
    assert cbc["solver"].startswith("cbc")
    assert cbc["objective"] == pytest.approx(highs["objective"], rel=1e-6)


def test_evaluate_a_solution_and_a_result(run_cli, tiny_file, tmp_path):
    solution = tmp_path / "split.json"
    solution.write_text(json.dumps(SPLIT))
    out = json.loads(run_cli("evaluate", str(tiny_file), str(solution), "--json", check=True).stdout)
    assert out["feasible"] is True
    assert out["metrics"]["response_time"] == pytest.approx(0.2225)
    result = tmp_path / "result.json"
    result.write_text(run_cli("solve", str(tiny_file), "--json", check=True).stdout)
    again = json.loads(run_cli("evaluate", str(tiny_file), str(result), "--json", check=True).stdout)
    assert again["objective"] == pytest.approx(json.loads(result.read_text())["objective"], rel=1e-9)


def test_generate_is_seeded_and_solvable(run_cli, tmp_path):
    args = ("generate", "odrp", "--seed", "5", "--operators", "5", "--nodes", "3")
    first, second = run_cli(*args, check=True).stdout, run_cli(*args, check=True).stdout
    assert first == second
    other = run_cli("generate", "odrp", "--seed", "6", "--operators", "5", "--nodes", "3", check=True).stdout
    assert other != first
    path = tmp_path / "g.json"
    path.write_text(first)
    result = json.loads(run_cli("solve", str(path), "--json", check=True).stdout)
    assert result["status"] == "optimal" and result["verified"]


def test_methods_and_schema(run_cli):
    methods = json.loads(run_cli("methods", "--json", check=True).stdout)
    assert "odrp" in methods["exact"]["kinds"]
    schema = json.loads(run_cli("schema", "odrp", check=True).stdout)
    assert "operators" in schema["properties"]


def _broken(mutate) -> dict:
    data = copy.deepcopy(TINY)
    mutate(data)
    return data


BAD_INPUTS = [
    ("unknown operator in a stream", lambda d: d["streams"][0].update({"to": "ghost"}), "streams[0].to"),
    ("missing link", lambda d: d["nodes"].append({"id": "c", "capacity": 1}), "links"),
    ("k < 1", lambda d: d["operators"][1].update({"max_replicas": 0}), "operators[1].max_replicas"),
    (
        "bounds with max == min",
        lambda d: d["objective"]["bounds"].update({"cost": [5, 5]}),
        "objective.bounds.cost",
    ),
    ("both latency models", lambda d: d["operators"][2].update({"service_rate": 3}), "operators[2]"),
    ("a cycle", lambda d: d["streams"].append({"from": "snk", "to": "src", "rate": 1}), "streams"),
    ("a typo in a field", lambda d: d["nodes"][0].update({"capacty": 3}), "nodes[0].capacty"),
    ("a weight without bounds", lambda d: d["objective"]["bounds"].pop("network"), "objective.bounds.network"),
]


@pytest.mark.parametrize(("case", "mutate", "field"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_code_2(run_cli, tmp_path, case, mutate, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(mutate)))
    proc = run_cli("solve", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert str(path) in lines[0] and field in lines[0], lines[0]
    assert "Traceback" not in proc.stderr


def test_non_json_and_missing_file(run_cli, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    for target in (path, tmp_path / "absent.json"):
        proc = run_cli("solve", str(target))
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and str(target) in proc.stderr
        assert "Traceback" not in proc.stderr


def test_bad_solution_file(run_cli, tiny_file, tmp_path):
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"placement": {"op": {"a": "two"}}}))
    proc = run_cli("evaluate", str(tiny_file), str(solution))
    assert proc.returncode == 2 and "placement.op.a" in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_method_and_generator_parameter(run_cli, tiny_file):
    proc = run_cli("solve", str(tiny_file), "--method", "nope")
    assert proc.returncode == 2 and "unknown method" in proc.stderr
    proc = run_cli("generate", "odrp", "--colour", "red")
    assert proc.returncode == 2 and "--colour" in proc.stderr


def test_infeasible_instance_is_a_result_not_a_crash(run_cli, tmp_path):
    data = copy.deepcopy(TINY)
    data["nodes"][0]["capacity"] = 1
    data["nodes"][1]["capacity"] = 1
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(data))
    proc = run_cli("solve", str(path), "--json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["status"] == "infeasible"


@pytest.mark.parametrize(("solver", "marker"), [("highs", "HiGHS"), ("cbc", "Cbc"), ("cpsat", "CP-SAT")])
def test_log_shows_the_solvers_own_log_on_stderr_and_keeps_stdout_one_json_object(run_cli, tmp_path, solver, marker):
    path = tmp_path / "kp.json"
    path.write_text(json.dumps({"problem": "kp", "profits": [6, 5, 4], "weights": [4, 3, 2], "capacity": 5}))
    quiet = run_cli("solve", str(path), "--solver", solver, "--json")
    logged = run_cli("solve", str(path), "--solver", solver, "--json", "--log")
    assert quiet.returncode == logged.returncode == 0
    assert marker not in quiet.stderr and marker in logged.stderr
    assert json.loads(logged.stdout)["objective"] == 9  # items 2 and 3: weight 5, profit 9


def test_version(run_cli):
    import odrp

    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"odrp {odrp.__version__}"


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [
        ("--solver", "nope", "--solver"),
        ("--formulation", "nope", "--formulation"),
        ("--method", "nope", "--method"),
        ("--time-limit", "-5", "--time-limit"),
        ("--time-limit", "nan", "--time-limit"),
        ("--mip-gap", "-1", "--mip-gap"),
        ("--memory-limit", "inf", "--memory-limit"),
    ],
)
def test_an_error_names_the_one_option_at_fault_and_json_gets_an_object(run_cli, tmp_path, flag, value, named):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    proc = run_cli("solve", str(path), flag, value, "--json")
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and line.startswith(f"error: command line: {named}: ")
    error = json.loads(proc.stdout)
    assert error == {"error": line.removeprefix("error: "), "file": "command line", "field": named}


def test_evaluate_prints_a_table_like_solve(run_cli, tmp_path):
    path, solution = tmp_path / "tiny.json", tmp_path / "split.json"
    path.write_text(json.dumps(TINY))
    solution.write_text(json.dumps(SPLIT))
    out = run_cli("evaluate", str(path), str(solution)).stdout
    assert "│ feasible" in out and "│ objective" in out and "│ violations" in out


def test_a_reader_that_goes_away_ends_the_output_quietly():
    """``odrp generate kp --items 20000 | head -c 10``: no traceback when the pipe closes."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "odrp", "generate", "kp", "--items", "20000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


KP = {"problem": "kp", "name": "three", "profits": [10, 7, 5], "weights": [4, 3, 2], "capacity": 5}
"""Worked by hand: items 1 and 2 fill the capacity 5 exactly for 7 + 5 = 12; item 0 alone gives 10."""


def test_solve_prints_the_table_on_stdout_and_the_solution_only_where_asked(run_cli, tmp_path):
    path, saved = tmp_path / "kp.json", tmp_path / "best.json"
    path.write_text(json.dumps(KP))
    table = run_cli("solve", str(path), check=True)
    assert "│ objective" in table.stdout and "12" in table.stdout
    lines = table.stdout.splitlines()
    assert "assignment" not in table.stdout and not any(line.startswith(("{", "}", " ")) for line in lines[1:])
    assert "--save FILE" in table.stderr
    quiet = run_cli("solve", str(path), "--save", str(saved), check=True)
    assert "assignment" not in quiet.stdout and "--save" not in quiet.stderr
    assert json.loads(saved.read_text()) == {"assignment": [None, 0, 0]}
    result = json.loads(run_cli("solve", str(path), "--json", check=True).stdout)  # one object, nothing else
    assert result["objective"] == 12 and result["solution"] == {"assignment": [None, 0, 0]}


@pytest.mark.parametrize(
    ("text", "field", "suggestion"),
    [
        ('"capacty": 5', "capacty", "capacity"),  # a misspelt field is also a missing one: the misspelling is named
        ('"capacity": 5, "profit": [1, 1, 1]', "profit", "profits"),
    ],
)
def test_a_misspelt_instance_field_gets_a_did_you_mean(run_cli, tmp_path, text, field, suggestion):
    path = tmp_path / "kp.json"
    path.write_text('{"problem": "kp", "profits": [10, 7, 5], "weights": [4, 3, 2], ' + text + "}")
    proc = run_cli("solve", str(path))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and line.startswith(f"error: {path}: {field}: ")
    assert line.endswith(f"(did you mean {suggestion!r}?)")


def test_a_misspelt_grid_key_parameter_or_option_gets_a_did_you_mean(run_cli, tmp_path):
    grid = tmp_path / "grid.yaml"
    study = "studies:\n  - {name: a, problem: kp, generator: random, params: {items: 5}, methods: [local_search]"
    for extra, field, suggestion in (
        (", reapets: 2}", "studies[0].reapets", "repeats"),
        (", options: {local_search: {iteratons: 3}}}", "studies[0].options.local_search.iteratons", "iterations"),
    ):
        grid.write_text(study + extra + "\n")
        proc = run_cli("bench", str(grid), "--out", str(tmp_path / "out"))
        [line] = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and line.startswith(f"error: {grid}: {field}: ")
        assert line.endswith(f"(did you mean {suggestion!r}?)")
    grid.write_text(study.replace("items: 5", "itemz: 5") + "}\n")
    proc = run_cli("bench", str(grid), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "studies[0].params.itemz" in proc.stderr and "did you mean 'items'?" in proc.stderr
