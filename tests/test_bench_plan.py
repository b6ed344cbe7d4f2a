"""``odrp bench --dry-run``: the plan of a grid (instances x methods x repeats, rows, a time bound), no Spark."""

from __future__ import annotations

import json
import time

import pytest

from odrp.bench.plan import parallelism

GRID = """
studies:
  - name: kp
    problem: kp
    generator: random
    params: {items: [5, 6]}
    seeds: 2
    exact: [highs, cbc]
    methods: [greedy, local_search]
    repeats: 3
    time_limit: 10
  - name: gap
    problem: gap
    generator: random
    params: {agents: 2, jobs: 4}
    methods: [local_search]
    repeats: 2
    time_limit: 4
"""


def test_dry_run_prints_the_plan_and_an_upper_bound_without_spark(run_cli, tmp_path):
    grid, out = tmp_path / "grid.yaml", tmp_path / "out"
    grid.write_text(GRID)
    started = time.perf_counter()
    proc = run_cli("bench", str(grid), "--out", str(out), "--dry-run", "--json", "--master", "local[2]")
    assert proc.returncode == 0, proc.stderr
    assert time.perf_counter() - started < 60 and not out.exists()  # no Spark (its start alone takes 10-20 s)
    plan = json.loads(proc.stdout)
    kp, gap = plan["studies"]
    # kp: 2 sizes x 2 seeds = 4 instances, each with highs, cbc, greedy (deterministic: once) and
    # local_search (randomised: 3 repeats) = 6 runs; gap: 1 instance, the default solver + 2 repeats = 3 runs
    assert (kp["instances"], kp["runs"], kp["rows"]) == (
        4,
        {"exact highs": 1, "exact cbc": 1, "greedy": 1, "local_search": 3},
        24,
    )
    assert (gap["instances"], gap["runs"], gap["rows"]) == (1, {"exact highs": 1, "local_search": 2}, 3)
    assert plan["rows"] == 27 and plan["instances"] == 5 and plan["parallelism"] == 2
    # every run at its limit plus the watchdog's 0.8 s: kp 4 x 6 x 10.8 = 259.2 s, gap 3 x 4.8 = 14.4 s;
    # on 2 slots at most 273.6 / 2 + (1 - 1/2) x 64.8 (the longest instance: 6 x 10.8) = 169.2 s
    assert kp["bound_s"] == pytest.approx(259.2) and gap["bound_s"] == pytest.approx(14.4)
    assert plan["runs_bound_s"] == pytest.approx(273.6) and plan["wall_bound_s"] == pytest.approx(169.2)
    text = run_cli("bench", str(grid), "--out", str(out), "--dry-run", "--master", "local[2]")
    assert text.returncode == 0 and "upper bound of 169 s" in text.stdout
    assert "4 instances x [exact highs, exact cbc, greedy, local_search x3] = 24 rows" in text.stdout


def test_dry_run_checks_the_grid_and_says_when_there_is_no_bound(run_cli, tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID.replace("    time_limit: 4\n", ""))
    proc = run_cli("bench", str(grid), "--out", str(tmp_path / "out"), "--dry-run")
    assert proc.returncode == 0 and "no upper bound (a study without time_limit)" in proc.stdout
    grid.write_text(GRID.replace("repeats: 3", "repeat: 3"))
    proc = run_cli("bench", str(grid), "--out", str(tmp_path / "out"), "--dry-run")
    assert proc.returncode == 2 and "studies[0].repeat" in proc.stderr and "did you mean 'repeats'?" in proc.stderr
    grid.write_text(GRID)
    proc = run_cli("bench", str(grid), "--out", "x", "--dry-run", "--master", "spark://127.0.0.1:7077", "--json")
    plan = json.loads(proc.stdout)  # a cluster's cores are unknown here: only the runs' sum is bounded
    assert plan["parallelism"] is None and plan["wall_bound_s"] is None
    assert plan["runs_bound_s"] == pytest.approx(273.6)


def test_parallelism_of_a_master():
    assert parallelism("local[3]") == 3 and parallelism("local") == 1 and parallelism("local[4]", 2) == 2
    assert parallelism("spark://127.0.0.1:7077") is None and parallelism(None) >= 1
