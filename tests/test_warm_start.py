"""Warm starts (MIP starts) for the exact ODRP models, with HiGHS and CBC.

A warm-started solve must prove the same optimum as the cold one (brute force gives it
independently), the solver's log must show that it took the start, and a placement mapped into a
model's variables must be worth, with its integers fixed, exactly what the evaluator says.
"""

from __future__ import annotations

import copy
import json

import pyomo.environ as pyo
import pytest

from odrp.core.solvers import solve
from odrp.kinds.replication.evaluator import evaluate
from odrp.kinds.replication.exact import compact, paper
from odrp.kinds.replication.instance import load, parse_solution
from odrp.registry import KINDS
from odrp.run import run_method
from tests.bruteforce import odrp_optimum
from tests.test_odrp_evaluator import SPLIT, TINY
from tests.test_odrp_exact import tiny

ODRP = KINDS["odrp"]


@pytest.mark.parametrize(("seed", "profile"), [(1, "response_time"), (7, "balanced"), (4, "network"), (2, "cost")])
@pytest.mark.parametrize(
    ("formulation", "solver"), [("compact", "highs"), ("compact", "cbc"), ("paper", "highs"), ("paper", "cbc")]
)
def test_warm_started_solve_proves_the_same_optimum(seed, profile, formulation, solver):
    inst = load(tiny(seed, profile, "traffic"))
    best, _ = odrp_optimum(inst)
    start = run_method(ODRP, inst, "odrp_greedy")
    assert start.verified
    # the MIP start itself: the compact model also where the response-time model would serve
    plain = {"response_model": False} if formulation == "compact" else None
    cold = run_method(ODRP, inst, "exact", solver=solver, formulation=formulation, options=plain)
    warm = run_method(
        ODRP, inst, "exact", solver=solver, formulation=formulation, warm_start=start.solution, options=plain
    )
    for result in (cold, warm):
        assert result.status == "optimal" and result.verified, result.message
        assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    report = warm.metrics["method_stats"]["warm_start"]
    assert report["objective"] == pytest.approx(start.objective, rel=1e-12)
    # the solver's own log: it took the start as an incumbent worth the greedy's F. CBC's
    # preprocessing may cut off a non-optimal start (coin-or/Cbc#282); its log then says so.
    if solver == "cbc":
        placement = parse_solution(inst, start.solution)
        ones = len(placement) + sum(len(p) for p in placement)  # compact: one w and one h per node used
        if formulation == "paper":  # x per operator, y per stream, z per node and link used
            nodes = {u for p in placement for u in p}
            links = {
                inst.link_id[u][v]
                for st in inst.streams
                for u in placement[st.source]
                for v in placement[st.target]
                if u != v
            }
            ones = len(placement) + len(inst.streams) + len(nodes) + len(links)
        assert f"MIPStart values read for {ones} variables." in report["solver_log"]
        if report["accepted"] is not True:
            assert "Cbc0045I Warning: mipstart values could not be used to build a solution." in report["solver_log"]
            return
    assert report["accepted"] is True, report["solver_log"]
    if solver == "highs":
        assert report["solver_objective"] == pytest.approx(start.objective, rel=1e-5, abs=1e-6)
    else:  # CBC's mipstart cost can leave out the objective's constant term (see odrp.core.solvers)
        assert report["solver_objective"] <= start.objective + 1e-6


@pytest.mark.parametrize("solver", ["highs", "cbc"])
@pytest.mark.parametrize("seed", [1, 5])
def test_the_response_time_model_takes_a_warm_start_as_its_incumbent(seed, solver):
    """Where the response-time model serves (w_r and w_a only), a warm start is the incumbent that
    prunes it (with or without the model's own local-search start): the optimum is the cold one."""
    inst = load(tiny(seed, "response_time", "traffic"))
    best, _ = odrp_optimum(inst)
    start = run_method(ODRP, inst, "odrp_greedy")
    for local_search in (True, False):
        # without the run's start heuristics, whose incumbent would set the ceiling too
        warm = run_method(
            ODRP,
            inst,
            "exact",
            solver=solver,
            warm_start=start.solution,
            options={"local_search": local_search},
            starts=False,
        )
        assert warm.status == "optimal" and warm.verified, warm.message
        assert warm.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
        stats = warm.metrics["method_stats"]
        assert stats["model"] == "response"
        assert stats["warm_start"]["objective"] == pytest.approx(start.objective, rel=1e-12)
        if not local_search:  # the start alone set the response-time ceiling
            assert stats["start_objective"] == pytest.approx(start.objective, rel=1e-12)
            assert stats["start_source"] == "warm start" and stats["warm_start"]["accepted"] is True
        else:  # the better of the two: the warm start only if the local search found less
            assert stats["warm_start"]["accepted"] is (stats["start_source"] == "warm start")
            assert stats["start_objective"] >= start.objective - 1e-12


@pytest.mark.parametrize("module", [compact, paper])
@pytest.mark.parametrize("seed", [3, 8])
def test_a_placement_mapped_into_the_model_is_worth_its_evaluator_score(module, seed):
    """Map a placement into the model (set_start), fix every integer variable there and solve
    what is left (an LP): its optimum is the placement's F, so the mapping is exact."""
    inst = load(tiny(seed, "balanced", "usage"))
    start = run_method(ODRP, inst, "odrp_local_search", seed=seed)
    model = module.build(inst)
    module.set_start(model, inst, parse_solution(inst, start.solution))
    for var in model.component_data_objects(pyo.Var):
        if var.is_binary() or var.is_integer():
            var.fix()
    run = solve(model, "highs")
    assert run.status == "optimal"
    assert run.objective == pytest.approx(evaluate(inst, start.solution).objective, rel=1e-9, abs=1e-12)
    assert module.placement(model, inst) == parse_solution(inst, start.solution)


def test_starting_from_the_optimum_keeps_it():
    inst = load(TINY)
    optimum = run_method(ODRP, inst, "exact")
    for solver in ("highs", "cbc"):
        again = run_method(ODRP, inst, "exact", solver=solver, warm_start=optimum.solution)
        assert again.status == "optimal" and again.objective == pytest.approx(optimum.objective, rel=1e-9)
        assert again.metrics["method_stats"]["warm_start"]["accepted"] is True


def test_an_infeasible_start_is_bad_input(run_cli, tmp_path):
    instance = tmp_path / "tiny.json"
    instance.write_text(json.dumps(TINY))
    crowded = copy.deepcopy(SPLIT)
    crowded["placement"]["op"] = {"a": 2}  # a holds src too: 3 replicas on 2 slots
    start = tmp_path / "start.json"
    start.write_text(json.dumps(crowded))
    proc = run_cli("solve", str(instance), "--warm-start", str(start), "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["file"] == "warm start"
    assert proc.stderr.count("\n") == 1 and "warm start" in proc.stderr and "capacity" in proc.stderr


def test_cli_warm_start_from_a_method_and_from_a_result_file(run_cli, tmp_path):
    instance = tmp_path / "tiny.json"
    instance.write_text(json.dumps(TINY))
    from_method = json.loads(
        run_cli("solve", str(instance), "--warm-start", "odrp_greedy", "--json", check=True).stdout
    )
    assert from_method["status"] == "optimal" and from_method["verified"]
    origin = from_method["metrics"]["method_stats"]["warm_start"]
    assert origin["source"] == "odrp_greedy" and origin["accepted"] is True
    result_file = tmp_path / "greedy.json"
    result_file.write_text(run_cli("solve", str(instance), "--method", "odrp_greedy", "--json", check=True).stdout)
    from_file = json.loads(
        run_cli(
            "solve", str(instance), "--warm-start", str(result_file), "--solver", "cbc", "--json", check=True
        ).stdout
    )
    assert from_file["objective"] == pytest.approx(from_method["objective"], rel=1e-6)
    assert from_file["metrics"]["method_stats"]["warm_start"]["source"] == "solution"
    wrong = run_cli("solve", str(instance), "--method", "odrp_greedy", "--warm-start", "odrp_tabu")
    assert wrong.returncode == 2 and "warm start applies to --method exact" in wrong.stderr
