"""The latency kind's textbook MILP and the default ``auto``: brute force, agreement, size, memory refusal."""

from __future__ import annotations

import pytest

from odrp.core.exact import model_size
from odrp.core.memory import ModelTooLarge, memory_budget
from odrp.kinds.latency.exact import textbook
from odrp.kinds.latency.generators import random_topology
from odrp.kinds.latency.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_latency_exact import CASES, brute_force, tiny

LATENCY = KINDS["latency"]


@pytest.mark.parametrize(("seed", "weight", "metric", "cycle", "twins"), CASES)
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_textbook_equals_brute_force(seed, weight, metric, cycle, twins, solver):
    inst = load(tiny(seed, latency_weight=weight, metric=metric, cycle=cycle, twins=twins))
    best, _ = brute_force(inst)
    result = run_method(LATENCY, inst, "exact", solver=solver, formulation="textbook")
    if best is None:
        assert result.status == "infeasible"
        return
    assert result.status == "optimal" and result.verified, result.message
    # no objective scaling in the textbook model: a latency tie-break of 1e-6 sits at the MIP gap
    assert result.objective == pytest.approx(best, rel=2e-6, abs=1e-9)


@pytest.mark.parametrize("seed", [31, 32, 33])
def test_default_equals_the_textbook_optimum(seed):
    inst = load(random_topology(seed=seed, operations=4, parallelism=2))
    default = run_method(LATENCY, inst, "exact")
    textbook_run = run_method(LATENCY, inst, "exact", formulation="textbook")
    assert default.status == textbook_run.status == "optimal"
    assert default.verified and textbook_run.verified
    assert default.objective == pytest.approx(textbook_run.objective, rel=2e-6)
    assert default.objective <= textbook_run.objective * (1 + 1e-9)


def test_textbook_size_is_the_built_model():
    inst = load(random_topology(seed=5, operations=5, parallelism=2))
    variables, constraints, nonzeros = textbook.size(inst)
    built = model_size(textbook.build(inst), nonzeros=True)
    assert (built["variables"], built["constraints"]) == (variables, constraints)
    assert built["nonzeros"] <= nonzeros <= 1.05 * built["nonzeros"]


@pytest.mark.parametrize("formulation", ["auto", "textbook"])
def test_a_model_over_the_memory_budget_is_refused(formulation):
    inst = load(random_topology(seed=5, operations=5, parallelism=2))
    with memory_budget(100_000), pytest.raises(ModelTooLarge, match="--memory-limit"):
        run_method(LATENCY, inst, "exact", formulation=formulation)
