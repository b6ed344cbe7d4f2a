"""``odrp import`` and the knapsack kinds through the command line: files written, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data" / "external"


def one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_import_writes_one_json_per_problem_and_solves(run_cli, tmp_path):
    proc = run_cli(
        "import", "orlib-gap", str(DATA / "gap_orlib" / "gap1.txt"), "--out", str(tmp_path), "--sense", "max"
    )
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == [f"gap1-{k}.json" for k in range(1, 6)]
    first = json.loads((tmp_path / "gap1-1.json").read_text())
    assert first["problem"] == "gap" and first["name"] == "gap1.txt#1" and first["sense"] == "max"
    result = json.loads(run_cli("solve", str(tmp_path / "gap1-1.json"), "--json", check=True).stdout)
    assert result["status"] == "optimal" and result["verified"] and result["objective"] == 336  # OR-Library


def test_import_qkp_and_bound_it(run_cli, tmp_path):
    source = DATA / "qkp_billionnet_soutif" / "jeu_100_75_1.txt"
    run_cli("import", "bs-qkp", str(source), "--out", str(tmp_path), check=True)
    path = tmp_path / "jeu_100_75_1.json"
    result = json.loads(run_cli("solve", str(path), "--json", "--time-limit", "30", check=True).stdout)
    assert result["verified"] and result["bound"] >= 189137 >= result["objective"]  # the published optimum


def test_cpsat_from_the_command_line(run_cli, tmp_path):
    run_cli("import", "orlib-gap", str(DATA / "gap_orlib" / "gap1.txt"), "--out", str(tmp_path), check=True)
    result = json.loads(
        run_cli("solve", str(tmp_path / "gap1-2.json"), "--json", "--solver", "cpsat", check=True).stdout
    )
    assert result["solver"].startswith("cpsat") and result["verified"]
    assert result["status"] == "optimal" and result["objective"] == 269  # gap1.txt#2, minimisation


def test_import_bad_files(run_cli, tmp_path):
    truncated = tmp_path / "gap.txt"
    truncated.write_text("1\n2 3\n1 2 3\n4 5 6\n1 1 1\n1 1 1\n5\n")  # 2 agents but one capacity
    one_line_error(run_cli("import", "orlib-gap", str(truncated)), "gap.txt", "capacities b[i]", "2 numbers, only 1")
    word = tmp_path / "mkp.txt"
    word.write_text("2\n3\n10\nten\n")
    one_line_error(run_cli("import", "dellamico-mkp", str(word)), "mkp.txt", "capacities", "'ten'")
    one_line_error(run_cli("import", "bs-qkp", str(tmp_path / "missing.txt")), "missing.txt", "file not found")
    one_line_error(run_cli("import", "nope", str(word)), "FORMAT", "orlib-gap")


def test_solve_bad_knapsack_input(run_cli, tmp_path):
    path = tmp_path / "kp.json"
    path.write_text(json.dumps({"problem": "kp", "profits": [1, 2], "weights": [1], "capacity": 1}))
    one_line_error(run_cli("solve", str(path)), "kp.json", "weights", "2 entries")
    path.write_text(json.dumps({"problem": "kp", "profits": [1, 2], "weights": [1, 1], "capacity": 1}))
    one_line_error(run_cli("solve", str(path), "--formulation", "paper"), "formulation")
    one_line_error(run_cli("solve", str(path), "--method", "rstorm"), "does not apply")
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": [0, 3]}))
    one_line_error(run_cli("evaluate", str(path), str(solution)), "s.json", "assignment[1]")


@pytest.mark.parametrize("method", ["rstorm", "storm_ras", "storm_default", "local_search"])
def test_schedulers_on_an_instance_file(run_cli, method):
    path = Path(__file__).resolve().parent.parent / "instances" / "qm3dkp" / "star-network.json"
    result = json.loads(run_cli("solve", str(path), "--method", method, "--json", check=True).stdout)
    assert result["verified"] and result["problem"] == "qm3dkp"
