"""SCIP (``--solver scip``) on every kind with a MILP formulation, against brute force, through ``odrp.solve``.

Every run goes through the evaluator (``verified``) and the run's limits (a forked child); the optima come
from the brute forces of the kinds' own tests, which enumerate solutions and ask the evaluator only. Then
what SCIP's backend maps: a time limit, an infeasible model, the memory budget, a MIP start, its log.
"""

from __future__ import annotations

import copy
import json

import pyomo.environ as pyo
import pytest

import odrp
from odrp.cli import main
from odrp.core.limits import MemoryLimitExceeded, data_size
from odrp.core.memory import GB, memory_budget
from odrp.core.solvers import scip
from odrp.core.solvers import solve as solve_model
from odrp.kinds.latency.instance import load as load_latency
from odrp.kinds.pathmap.instance import load as load_pathmap
from odrp.kinds.replication.instance import load as load_odrp
from odrp.kinds.throughput.generators import random_instance as throughput_instance
from odrp.kinds.throughput.instance import load as load_throughput
from odrp.registry import KINDS
from tests.bruteforce import odrp_optimum
from tests.knapsack_bruteforce import optimum as knapsack_optimum
from tests.pathmap_cases import HAND, random_tiny
from tests.pathmap_cases import brute_force as pathmap_optimum
from tests.test_knapsack_kinds import TINY as KNAPSACK_TINY
from tests.test_latency_exact import brute_force as latency_optimum
from tests.test_latency_exact import tiny as latency_tiny
from tests.test_odrp_exact import tiny as odrp_tiny
from tests.test_throughput_exact import SHAPES
from tests.test_throughput_exact import brute_force as throughput_optimum


def proves(result, best: float) -> None:
    """SCIP proved ``best`` and the evaluator agrees with its objective."""
    assert result.solver.startswith("scip 10."), result.solver
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert result.bound == pytest.approx(best, rel=1e-6, abs=1e-9)


# ------------------------------------------------------------------- every kind against brute force


@pytest.mark.parametrize(("seed", "profile", "metric"), [(1, "response_time", "traffic"), (4, "network", "traffic")])
@pytest.mark.parametrize("formulation", ["textbook", "compact"])
def test_odrp_equals_brute_force(seed, profile, metric, formulation):
    data = odrp_tiny(seed, profile, metric, operators=4)
    best, feasible = odrp_optimum(load_odrp(copy.deepcopy(data)))
    assert feasible > 0
    proves(odrp.solve(data, solver="scip", formulation=formulation, time_limit=60), best)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("formulation", ["patterns", "levels", "textbook"])
def test_throughput_equals_brute_force(seed, formulation):
    machines = 2 + seed % 2
    data = throughput_instance(
        seed=seed, components=3, machines=machines, shape=SHAPES[seed % 4], max_tasks=5 - machines
    )
    best, feasible = throughput_optimum(load_throughput(copy.deepcopy(data)))
    assert feasible > 0
    result = odrp.solve(data, solver="scip", formulation=formulation, time_limit=60)
    assert result.solver.startswith("scip 10."), result.solver
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize(("seed", "weight", "metric", "cycle"), [(1, 1e-6, True, False), (3, 0.05, True, False)])
@pytest.mark.parametrize("formulation", ["textbook", "auto"])
def test_latency_equals_brute_force(seed, weight, metric, cycle, formulation):
    data = latency_tiny(seed, latency_weight=weight, metric=metric, cycle=cycle)
    best, _ = latency_optimum(load_latency(copy.deepcopy(data)))
    assert best is not None
    result = odrp.solve(data, solver="scip", formulation=formulation, time_limit=60)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("formulation", ["auto", "textbook"])
def test_pathmap_equals_brute_force(seed, formulation):
    data = random_tiny(seed, servers=4 + seed % 2, components=2 + seed % 2)
    best = pathmap_optimum(load_pathmap(copy.deepcopy(data), "test"))
    result = odrp.solve(data, solver="scip", formulation=formulation, time_limit=60)
    if best is None:
        assert result.status == "infeasible" and result.solution is None
    else:
        proves(result, best)


@pytest.mark.parametrize("kind", sorted(KNAPSACK_TINY))
@pytest.mark.parametrize("seed", [1, 4])
def test_knapsack_family_equals_brute_force(kind, seed):
    data = KNAPSACK_TINY[kind](seed)
    best = knapsack_optimum(kind, KINDS[kind].load(copy.deepcopy(data), "<test>"))
    result = odrp.solve(data, solver="scip", time_limit=60)
    if best is None:  # gap seed 4: no feasible assignment
        assert result.status == "infeasible" and result.objective is None
    else:
        proves(result, best)


# ---------------------------------------------------------------------- limits, proofs, starts, log


def test_a_time_limited_run_returns_an_incumbent_and_a_bound():
    data = odrp.generate("mdkp", seed=1, items=150, dimensions=10)  # SCIP needs far more than 2 s to prove it
    result = odrp.solve(data, solver="scip", time_limit=2)
    assert result.status == "time_limit" and result.verified, result.message
    assert result.objective is not None and result.bound is not None
    assert result.bound >= result.objective and result.gap > 0
    assert result.runtime_s < 2 + 1.0


def test_an_infeasible_instance_is_proven_infeasible():
    data = copy.deepcopy(HAND)
    data["servers"][1]["capacity"] = 4.5
    data["servers"][2]["services"] = []  # c1 and c2 must share S2: 3 + 2 > 4.5, the solver proves it
    result = odrp.solve(data, solver="scip")
    assert result.status == "infeasible" and result.solution is None and result.solver.startswith("scip")


def _model(constant_row: bool = False) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.y = pyo.Var(bounds=(0, 5))
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
    m.d = pyo.Constraint(expr=m.y <= m.x[0] + m.x[1])
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2] + m.y + 10, sense=pyo.maximize)
    if constant_row:
        m.x[2].fix(1)
        m.e = pyo.Constraint(expr=m.x[2] <= 0)  # no variable left once x2 is fixed, and violated
    return m


def test_the_backend_by_hand():
    # max x0 + 2 x1 + 3 x2 + y + 10, at most two x, y <= x0 + x1 <= 5: x1 = x2 = 1, y = 1 gives 16
    m = _model()
    run = solve_model(m, "scip")
    assert (run.status, run.objective, run.bound, run.threads) == ("optimal", 16.0, 16.0, 1)
    assert [round(m.x[i].value) for i in range(3)] == [0, 1, 1] and m.y.value == pytest.approx(1.0)
    m.infeasible = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] >= 3)
    assert solve_model(m, "scip").status == "infeasible"
    assert solve_model(_model(constant_row=True), "scip").status == "infeasible"


def test_a_nonlinear_model_is_an_error_run():
    m = _model()
    m.q = pyo.Constraint(expr=m.x[0] * m.x[1] <= 1)
    run = solve_model(m, "scip")
    assert run.status == "error" and "not linear" in run.message


def test_the_memory_budget_becomes_scips_memory_limit(monkeypatch):
    import pyscipopt

    set_params: dict[str, float] = {}

    class Recorded(pyscipopt.Model):
        def setParam(self, name, value):
            set_params[name] = value
            return super().setParam(name, value)

    monkeypatch.setattr(pyscipopt, "Model", Recorded)
    with memory_budget(data_size() + 2 * GB):
        solve_model(_model(), "scip", time_limit=5, mip_gap=1e-4)
    assert set_params["limits/memory"] == pytest.approx(2 * 1024, abs=50)  # MB: the budget less what is in use
    assert set_params["limits/time"] == 5 and set_params["limits/gap"] == 1e-4


def test_scips_memory_limit_ends_the_run_as_over_budget_or_with_its_incumbent(monkeypatch):
    data = odrp.generate("mdkp", seed=1, items=150, dimensions=10)
    monkeypatch.setattr(scip, "memory_limit_mb", lambda: 1.0)  # below what SCIP needs to start searching
    with pytest.raises(MemoryLimitExceeded):
        odrp.solve(data, solver="scip", time_limit=20)
    monkeypatch.setattr(scip, "memory_limit_mb", lambda: 6.0)  # enough to find solutions, not to prove one
    result = odrp.solve(data, solver="scip", time_limit=20)
    assert result.status == "feasible" and result.verified and "memory limit" in result.message


def test_a_mip_start_is_completed_and_reported():
    data = odrp.generate("kp", seed=3, items=12)
    start = odrp.solve(data, method="greedy")
    result = odrp.solve(data, solver="scip", warm_start=start.solution)
    report = result.metrics["method_stats"]["warm_start"]
    assert report["accepted"] is True and report["solver_objective"] == pytest.approx(start.objective)
    assert any("completesol" in line for line in report["solver_log"])
    infeasible_start = _model()
    for i in range(3):
        infeasible_start.x[i].value = 1  # three x: breaks c
    run = solve_model(infeasible_start, "scip", warm_start=True)
    assert run.status == "optimal" and run.objective == 16.0 and run.warm_start["accepted"] is False


def test_the_log_goes_to_stderr_and_stdout_holds_one_json_object(tmp_path, capfd):
    path = tmp_path / "kp.json"
    path.write_text(json.dumps(odrp.generate("kp", seed=3, items=12)))
    assert main(["solve", str(path), "--solver", "scip", "--log", "--json"]) == 0
    out, err = capfd.readouterr()
    result = json.loads(out)
    assert result["solver"].startswith("scip") and result["verified"]
    assert "SCIP Status" in err and "SCIP Status" not in out
    assert result["metrics"]["method_stats"]["threads"] == 1  # SCIP's branch and bound runs on one thread
