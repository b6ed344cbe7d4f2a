"""Pathmap through the ``odrp`` command: solve, heuristics, generate, and one-line errors for bad input."""

from __future__ import annotations

import copy
import json

import pytest

from odrp.cli import main
from tests.pathmap_cases import HAND, OPTIMAL


@pytest.fixture
def hand_file(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(HAND))
    return path


def test_solve_exact_and_a_heuristic(run_cli, hand_file):
    result = json.loads(run_cli("solve", str(hand_file), "--json", check=True).stdout)
    assert result["problem"] == "pathmap" and result["status"] == "optimal" and result["verified"]
    assert result["objective"] == pytest.approx(5.0)
    lcm = json.loads(run_cli("solve", str(hand_file), "--method", "least_cost_map", "--json", check=True).stdout)
    assert lcm["verified"] and lcm["metrics"]["method_stats"]["map_messages"] > 0
    bound = json.loads(run_cli("solve", str(hand_file), "--method", "multistage_bound", "--json", check=True).stdout)
    assert bound["bound"] == pytest.approx(4.0) and bound["solution"] is None


def test_evaluate_and_generate(run_cli, hand_file, tmp_path):
    solution = tmp_path / "sol.json"
    solution.write_text(json.dumps(OPTIMAL))
    out = json.loads(run_cli("evaluate", str(hand_file), str(solution), "--json", check=True).stdout)
    assert out["feasible"] and out["objective"] == pytest.approx(5.0)
    args = ("generate", "pathmap", "--seed", "3", "--servers", "30")
    first = run_cli(*args, check=True).stdout
    assert first == run_cli(*args, check=True).stdout
    data = json.loads(first)
    assert data["problem"] == "pathmap" and len(data["servers"]) == 30 and len(data["task"]["components"]) == 10
    bimodal = json.loads(
        run_cli(
            "generate",
            "pathmap",
            "--generator",
            "bimodal",
            "--servers",
            "12",
            "--dedicated-links",
            "11",
            "--network",
            "public",
            check=True,
        ).stdout
    )
    assert {link["kind"] for link in bimodal["links"]} == {"public"} and len(bimodal["links"]) == 12 * 11 // 2


def _broken(mutate) -> dict:
    data = copy.deepcopy(HAND)
    mutate(data)
    return data


BAD_INPUTS = [
    ("link to an unknown server", lambda d: d["links"][0].update({"to": "S9"}), "links[0].to"),
    ("a link kind that is neither", lambda d: d["links"][0].update({"kind": "satellite"}), "links[0].kind"),
    ("a self-loop", lambda d: d["links"][0].update({"to": "S1"}), "links[0]"),
    ("a second dedicated link", lambda d: d["links"].append(dict(d["links"][0])), "links[7]"),
    ("bandwidth list too short", lambda d: d["task"]["bandwidth"].pop(), "task.bandwidth"),
    ("unknown sink", lambda d: d["task"].update({"sink": "S0"}), "task.sink"),
    ("repeated server id", lambda d: d["servers"][1].update({"id": "S1"}), "servers[1].id"),
    ("negative cpu", lambda d: d["task"]["components"][0].update({"cpu": -1}), "task.components[0].cpu"),
    ("negative max_null", lambda d: d["task"].update({"max_null": -1}), "task.max_null"),
    ("no components", lambda d: d["task"].update({"components": []}), "task.components"),
    ("a typo", lambda d: d["servers"][0].update({"capacty": 1}), "servers[0].capacty"),
]


@pytest.mark.parametrize(("case", "mutate", "field"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, capsys, case, mutate, field):
    # in-process through the CLI's entry point (the subprocess path is exercised below)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(mutate)))
    assert main(["solve", str(path)]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and str(path) in lines[0] and field in lines[0], err


def test_bad_input_through_a_subprocess(run_cli, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_broken(lambda d: d["links"][0].update({"to": "S9"}))))
    proc = run_cli("solve", str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "links[0].to" in lines[0]
    assert "Traceback" not in proc.stderr


def test_bad_solution_and_bad_option(run_cli, hand_file, tmp_path):
    solution = tmp_path / "sol.json"
    solution.write_text(json.dumps({"nodes": {"c1": "S7"}, "paths": []}))
    proc = run_cli("evaluate", str(hand_file), str(solution))
    assert proc.returncode == 2 and "nodes.c1" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("solve", str(hand_file), "--method", "random_neighbor", "--param", "k=0")
    assert proc.returncode == 2 and "k" in proc.stderr and "Traceback" not in proc.stderr


def test_infeasible_instance_is_a_result(run_cli, tmp_path):
    data = copy.deepcopy(HAND)
    data["task"]["components"][0]["service"] = "nobody"
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(data))
    proc = run_cli("solve", str(path), "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "infeasible"
