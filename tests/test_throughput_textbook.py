"""The textbook throughput method (bisection on R over the plain P(rho)) against brute force and by hand."""

from __future__ import annotations

import json

import pytest

from odrp.core.memory import ModelTooLarge, memory_budget
from odrp.kinds.throughput.exact import textbook
from odrp.kinds.throughput.generators import random_instance
from odrp.kinds.throughput.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_throughput_exact import brute_force, tiny

THROUGHPUT = KINDS["throughput"]


# CBC on four seeds only: each of its rounds writes a model file
CASES = [(solver, seed) for solver in ("cpsat", "highs") for seed in range(8)] + [("cbc", seed) for seed in range(4)]


@pytest.mark.parametrize(("solver", "seed"), CASES)
def test_textbook_equals_brute_force(seed, solver):
    inst = tiny(seed)
    optimum, feasible = brute_force(inst)  # every placement scored by the evaluator
    assert feasible > 0
    result = run_method(THROUGHPUT, inst, "exact", solver=solver, formulation="textbook")
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert optimum <= result.bound * (1 + 1e-9)
    assert result.metrics["method_stats"]["form"] == "textbook"


def test_textbook_with_fixed_counts_equals_brute_force_over_those_counts():
    inst = tiny(5)
    fixed = {0: 1, 1: 2, 2: 1}
    optimum, _ = brute_force(inst, fixed)
    outcome = textbook.solve(inst, "highs", None, 1e-6, fixed)
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6)


def _two_machines() -> dict:
    # spout s (load 1) -> bolt b (alpha 1: load 1); e = 1 and 2 on machines A and B, no overhead, capacity 100
    return {
        "problem": "throughput",
        "components": [{"id": "s", "max_instances": 2}, {"id": "b", "max_instances": 2}],
        "edges": [["s", "b"]],
        "machines": [{"id": "A", "type": "t1", "max_tasks": 2}, {"id": "B", "type": "t2", "max_tasks": 2}],
        "profile": {
            "s": {"t1": {"exec_time": 1.0, "overhead": 0.0}, "t2": {"exec_time": 2.0, "overhead": 0.0}},
            "b": {"t1": {"exec_time": 1.0, "overhead": 0.0}, "t2": {"exec_time": 2.0, "overhead": 0.0}},
        },
    }


def test_closed_form_bound_and_optimum_by_hand():
    inst = load(_two_machines())
    # sum_w cap_w / sum_c min_w e_cw l_c = 200 / (1 + 1)
    assert textbook.closed_form_bound(inst) == pytest.approx(100.0)
    # by hand: one instance of each on A gives R = 100 / 2 = 50; s on A, b on B gives min(100, 50) = 50; two of
    # each split A/B: A carries R/2 + R/2 = R <= 100, B carries 2 (R/2 + R/2) = 2R <= 100, so R = 50; s whole on
    # A and b split A/B: A carries R + R/2 <= 100 (R <= 66.67), B carries 2 R/2 = R <= 100: R* = 200/3
    result = run_method(THROUGHPUT, inst, "exact", solver="highs", formulation="textbook")
    assert result.status == "optimal"
    assert result.objective == pytest.approx(200 / 3, rel=1e-6)
    assert brute_force(inst)[0] == pytest.approx(200 / 3, rel=1e-12)


def test_model_size_in_closed_form_matches_the_built_model():
    from odrp.kinds.throughput.exact import rate_model

    inst = tiny(2)
    allowed = textbook.levels(inst)
    built = rate_model.build_matrix(inst, textbook.plain_model(inst, 1.0, allowed), symmetry=False).model.size()
    variables, constraints, nonzeros = textbook.model_size(inst)
    assert (built["variables"], built["constraints"]) == (variables, constraints)
    assert built["nonzeros"] <= nonzeros


def test_a_model_over_the_memory_budget_is_refused():
    inst = load(random_instance(seed=0, components=10, machines=10, shape="dag"))
    with memory_budget(100_000), pytest.raises(ModelTooLarge, match="textbook"):
        textbook.solve(inst, "highs", 5.0, 1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_equals_the_textbook_proven_optimum(seed):
    inst = load(random_instance(seed=seed, components=4, machines=3, shape=("linear", "diamond", "star")[seed]))
    plain = run_method(THROUGHPUT, inst, "exact", solver="cpsat", formulation="textbook", time_limit=60)
    default = run_method(THROUGHPUT, inst, "exact", solver="cpsat", time_limit=60)
    assert plain.status == default.status == "optimal"
    assert default.objective == pytest.approx(plain.objective, rel=2e-6)


def test_the_default_refuses_a_level_form_over_the_memory_budget():
    from odrp.kinds.throughput.exact.solve import solve

    inst = load(random_instance(seed=0, components=10, machines=10, shape="dag"))
    with memory_budget(100_000), pytest.raises(ModelTooLarge, match="P\\(rho\\)"):
        solve(inst, "cpsat", 5.0)


def test_the_cli_refuses_the_textbook_model_over_the_budget_with_exit_2(run_cli, tmp_path):
    # 40 x 60: L = 24,000 levels, so 1,464,001 variables and 4,368,060 nonzeros, about 3.1 GB by the estimate
    path = tmp_path / "large.json"
    path.write_text(json.dumps(random_instance(seed=0, components=40, machines=60, shape="linear")))
    proc = run_cli("solve", str(path), "--formulation", "textbook", "--memory-limit", "1")
    assert proc.returncode == 2
    assert "1,464,001 variables" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
