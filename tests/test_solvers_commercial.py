"""Gurobi, CPLEX and Xpress through Pyomo (``--solver gurobi|cplex|xpress``).

Where the package's free size-limited licence runs here, tiny instances of several kinds are solved through
``odrp.solve`` and compared with brute force, a MIP start is reported, and a model over the licence is one
line with exit 2; elsewhere those tests skip, saying why. A solver without its package or without a licence
is always tested, by hiding the package (``sys.modules[name] = None``, Python's way to refuse an import) or
by a licence check that fails: one line and exit 2 in the CLI, a named field in a grid, and its state in
``odrp methods``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time

import pytest

import odrp
from odrp.bench.grid import load_grid
from odrp.cli import main
from odrp.core.errors import InputError
from odrp.core.solvers import commercial
from odrp.kinds.latency.instance import load as load_latency
from odrp.kinds.pathmap.instance import load as load_pathmap
from odrp.kinds.replication.instance import load as load_odrp
from odrp.registry import KINDS
from tests.bruteforce import odrp_optimum
from tests.knapsack_bruteforce import optimum as knapsack_optimum
from tests.pathmap_cases import brute_force as pathmap_optimum
from tests.pathmap_cases import random_tiny
from tests.test_knapsack_kinds import TINY as KNAPSACK_TINY
from tests.test_latency_exact import brute_force as latency_optimum
from tests.test_latency_exact import tiny as latency_tiny
from tests.test_odrp_exact import tiny as odrp_tiny

NAMES = sorted(commercial.SOLVERS)


def runs_here(name: str) -> None:
    """``name`` is installed with a licence that runs here: the test extra (``make test``) installs the
    three packages, whose free licences are size-limited."""
    state = commercial.availability(name)
    assert state in (commercial.AVAILABLE, commercial.LIMITED), f"{name} is {state} here; make test installs it"


def proves(result, best: float, name: str) -> None:
    assert result.solver.startswith(name), result.solver
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


@pytest.fixture
def fresh_availability():
    """Forget what was found about the solvers before and after a test that changes what is installed."""
    commercial.availability.cache_clear()
    yield
    commercial.availability.cache_clear()


# ----------------------------------------------------------------------- with the free licences


@pytest.mark.parametrize("name", NAMES)
def test_tiny_instances_of_several_kinds_equal_brute_force(name):
    runs_here(name)
    for kind, seed in (("kp", 1), ("mkp", 2), ("gap", 1), ("qkp", 3), ("gap", 4)):  # gap 4: infeasible
        data = KNAPSACK_TINY[kind](seed)
        best = knapsack_optimum(kind, KINDS[kind].load(copy.deepcopy(data), "<test>"))
        result = odrp.solve(data, solver=name, time_limit=60)
        if best is None:
            assert result.status == "infeasible" and result.objective is None
        else:
            proves(result, best, name)
    data = odrp_tiny(1, "response_time", "traffic", operators=4)
    proves(odrp.solve(data, solver=name, formulation="textbook"), odrp_optimum(load_odrp(copy.deepcopy(data)))[0], name)
    data = random_tiny(1, servers=5, components=3)
    proves(odrp.solve(data, solver=name), pathmap_optimum(load_pathmap(copy.deepcopy(data), "test")), name)
    data = latency_tiny(3, latency_weight=0.05)
    best, _ = latency_optimum(load_latency(copy.deepcopy(data)))
    result = odrp.solve(data, solver=name, formulation="textbook")
    assert result.status == "optimal" and result.verified and result.objective == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_a_mip_start_is_reported_and_threads_recorded(name):
    runs_here(name)
    data = odrp.generate("kp", seed=3, items=12)
    start = odrp.solve(data, method="greedy")
    result = odrp.solve(data, solver=name, warm_start=start.solution, threads=1)
    assert result.status == "optimal" and result.verified
    report = result.metrics["method_stats"]["warm_start"]
    assert report["accepted"] is not None and report["solver_log"], report
    assert result.metrics["method_stats"]["threads"] == 1


@pytest.mark.parametrize("limit", [(), ("--time-limit", "30")], ids=["no-limit", "limit"])
@pytest.mark.parametrize("name", NAMES)
def test_a_model_over_the_free_licence_is_one_line_and_exit_2(name, limit, tmp_path, capfd):
    """With a time limit too: the default races the textbook model beside ``auto``, and the first member the
    licence refuses ends the run at once, long before the limit."""
    runs_here(name)
    path = tmp_path / "kp.json"
    jobs = commercial.SOLVERS[name].free_size // 2 + 1  # the textbook GAP model: 2 x jobs binaries
    path.write_text(json.dumps(odrp.generate("gap", seed=1, agents=2, jobs=jobs, gap_type="c")))
    began = time.perf_counter()
    code = main(["solve", str(path), "--solver", name, *limit])
    elapsed = time.perf_counter() - began
    out, err = capfd.readouterr()
    if commercial.availability(name) == commercial.AVAILABLE:  # a full licence: the model is solved
        assert code == 0 and "Traceback" not in err, err
        return
    assert code == 2 and (not limit or elapsed < 25), (code, elapsed, err)  # not at the watchdog (30 s + grace)
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and "--solver" in lines[0] and "licence" in lines[0], err


# ------------------------------------------------------------ without the package, without a licence


@pytest.mark.parametrize("name", NAMES)
def test_a_solver_without_its_package_is_one_line_and_exit_2(name, monkeypatch, tmp_path, capfd, fresh_availability):
    monkeypatch.setitem(sys.modules, commercial.SOLVERS[name].package, None)
    path = tmp_path / "kp.json"
    path.write_text(json.dumps(KNAPSACK_TINY["kp"](1)))
    assert main(["solve", str(path), "--solver", name]) == 2
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1 and len(lines[0]) <= 1000 and "Traceback" not in err
    assert "--solver" in lines[0] and "not installed" in lines[0] and f"odrp-toolkit[{name}]" in lines[0]
    assert main(["solve", str(path), "--solver", name, "--json"]) == 2
    assert json.loads(capfd.readouterr().out)["field"] == "--solver"
    assert main(["methods", "--json"]) == 0
    solvers = json.loads(capfd.readouterr().out)["exact"]["solvers"]
    assert solvers[name]["status"] == "not installed" and solvers["scip"]["status"] == "available"
    grid = tmp_path / "grid.yaml"
    grid.write_text(
        "studies:\n  - name: kp\n    problem: kp\n    generator: random\n    params: {items: 6}\n"
        f"    exact: [highs, {name}]\n"
    )
    with pytest.raises(InputError) as caught:
        load_grid(grid)  # checked before Spark starts
    assert "studies[0].exact[1]" in str(caught.value) and "not installed" in str(caught.value)
    with pytest.raises(InputError, match="not installed"):
        odrp.solve(KNAPSACK_TINY["kp"](1), solver=name)


@pytest.mark.parametrize("name", NAMES)
def test_a_solver_without_a_licence_is_one_line_and_exit_2(name, monkeypatch, tmp_path, capfd, fresh_availability):
    def refused(variables: int) -> None:
        raise RuntimeError("no licence found")

    monkeypatch.setattr(commercial, "installed", lambda package: True)
    monkeypatch.setitem(commercial.SOLVERS, name, dataclasses.replace(commercial.SOLVERS[name], probe=refused))
    assert commercial.availability(name) == commercial.NO_LICENCE
    path = tmp_path / "kp.json"
    path.write_text(json.dumps(KNAPSACK_TINY["kp"](1)))
    assert main(["solve", str(path), "--solver", name]) == 2
    lines = capfd.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--solver" in lines[0] and "installed without a licence" in lines[0]


def test_a_licence_that_takes_only_small_models_is_found(monkeypatch, fresh_availability):
    def small(variables: int) -> None:
        if variables > 1:
            raise RuntimeError("Model too large for size-limited license")

    monkeypatch.setattr(commercial, "installed", lambda package: True)
    monkeypatch.setitem(commercial.SOLVERS, "gurobi", dataclasses.replace(commercial.SOLVERS["gurobi"], probe=small))
    assert commercial.availability("gurobi") == commercial.LIMITED
