"""``--threads N``, the API's ``threads=`` and a grid's ``threads:``: checked like the other options, handed to
each backend's own thread setting, and recorded in ``method_stats.threads``."""

from __future__ import annotations

import json
import os

import pyomo.environ as pyo
import pytest

import odrp
from odrp.bench.grid import load_grid
from odrp.bench.task import run_instance
from odrp.cli import main
from odrp.core.errors import InputError
from odrp.core.solvers import highs
from odrp.core.solvers import solve as solve_model
from odrp.core.solvers.highs import run_highspy
from odrp.core.solvers.run import solver_log
from tests.pathmap_cases import HAND
from tests.test_odrp_exact import tiny as odrp_tiny

KP = {"problem": "kp", "profits": [10, 7, 5, 3], "weights": [5, 4, 3, 1], "capacity": 8}
"""By hand: items 0 + 2 and items 1 + 2 + 3 both weigh 8 and profit 15; every set worth more weighs over 8."""


def knapsack() -> pyo.ConcreteModel:
    """A model HiGHS branches on: 30 items of weights i mod 7 + 1, capacity 20, profits i mod 5 + 1."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(30), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum((i % 7 + 1) * m.x[i] for i in range(30)) <= 20)
    m.o = pyo.Objective(expr=sum((i % 5 + 1) * m.x[i] for i in range(30)), sense=pyo.maximize)
    return m


@pytest.mark.parametrize(("solver", "used"), [("highs", 2), ("cbc", 2), ("cpsat", 2), ("scip", 1)])
def test_the_api_records_the_threads_each_solver_was_given(solver, used):
    result = odrp.solve(KP, solver=solver, threads=2)
    assert result.status == "optimal" and result.verified and result.objective == 15
    assert result.metrics["method_stats"]["threads"] == used


def test_the_default_is_the_machines_cores_and_pathmap_takes_threads_too():
    result = odrp.solve(HAND, solver="highs")
    assert result.objective == pytest.approx(5.0) and result.metrics["method_stats"]["threads"] == os.cpu_count()


def test_a_kind_whose_exact_method_takes_no_threads_runs_without_them():
    result = odrp.solve(odrp_tiny(1, "response_time", "traffic", operators=3), threads=2)
    assert result.verified and "threads" not in result.metrics["method_stats"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_a_bad_thread_count_is_bad_input(bad):
    with pytest.raises(InputError, match="threads"):
        odrp.solve(KP, threads=bad)


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_a_bad_threads_option_is_one_line_and_exit_2(value, tmp_path, capfd):
    path = tmp_path / "kp.json"
    path.write_text(json.dumps(KP))
    assert main(["solve", str(path), "--threads", value]) == 2
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "--threads" in lines[0] and "Traceback" not in err


def test_cbc_and_cpsat_logs_show_the_thread_count(capfd):
    with solver_log():
        assert solve_model(knapsack(), "cbc", threads=2).objective == 40
        assert solve_model(knapsack(), "cpsat", threads=2).objective == 40
    err = capfd.readouterr().err
    assert "threads was changed from 0 to 2" in err  # CBC's own echo of the option
    assert "num_workers: 2" in err  # CP-SAT's parameters line


def test_highs_gets_the_thread_count_on_both_routes(monkeypatch):
    import highspy

    given: list[int | None] = []
    real = highs._highs_interface

    def recording(warm_start: bool):
        interface = real(warm_start)
        solve = interface.solve

        def record(model, **config):
            given.append(config.get("threads"))
            return solve(model, **config)

        interface.solve = record
        return interface

    monkeypatch.setattr(highs, "_highs_interface", recording)
    for threads in (2, 1, None):  # a new count after another (HiGHS refuses one unless its scheduler is reset)
        run = solve_model(knapsack(), "highs", threads=threads)
        assert run.status == "optimal" and run.objective == 40 and run.threads == threads
    assert given == [2, 1, None]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVar(0, 1)
    h.changeColCost(0, -1)
    assert run_highspy(h, "min", threads=3).objective == -1 and h.getOptionValue("threads")[1] == 3


GRID = """
studies:
  - name: kp
    problem: kp
    generator: random
    params: {items: 8}
    seeds: [1]
    exact: [highs]
    time_limit: 30
"""


def test_a_grid_runs_its_exact_solvers_on_one_thread_unless_it_says(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    task = load_grid(path).tasks[0]
    assert task.threads == 1
    assert run_instance(task)["rows"][0]["method_stats"]["threads"] == 1
    path.write_text(GRID + "    threads: 2\n")
    task = load_grid(path).tasks[0]
    assert task.threads == 2
    assert run_instance(task)["rows"][0]["method_stats"]["threads"] == 2


@pytest.mark.parametrize("value", ["0", "1.5", "two"])
def test_a_bad_threads_key_names_it(tmp_path, value):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID + f"    threads: {value}\n")
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert "studies[0].threads" in str(caught.value) and len(str(caught.value).splitlines()) == 1


def test_two_studies_that_differ_only_in_threads_cannot_share_an_instance(tmp_path):
    path = tmp_path / "grid.yaml"
    second = GRID.split("studies:\n", 1)[1].replace("name: kp", "name: kp2") + "    threads: 2\n"
    path.write_text(GRID + second)
    with pytest.raises(InputError, match="one plan"):
        load_grid(path)
