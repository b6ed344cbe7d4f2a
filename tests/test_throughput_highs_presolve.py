"""HiGHS 1.12's presolve, with the tight feasibility tolerances of P(rho), called a feasible P(rho) infeasible.

The instance (``tests/data/throughput_highs_presolve.json``, 8 components on 3 machines, from the reference
grid) has the optimum R* = 96.932716, proven by CP-SAT and by CBC on the textbook model; HiGHS's exact
method once stopped at 96.888911 as "optimal", because the pattern model at rho = 96.888960 came back
infeasible. The placement CP-SAT finds is one of that model's columns, so the model is feasible.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odrp.kinds.throughput.exact import bounds, patterns
from odrp.kinds.throughput.exact.solver_child import solve_highs
from odrp.registry import KINDS
from odrp.run import run_method

DATA = Path(__file__).parent / "data" / "throughput_highs_presolve.json"
OPTIMUM = 96.93271618875592
"""R* as CP-SAT (exact method) and CBC (textbook model) both prove it."""
RHO = 96.88895991919911
"""The level HiGHS's presolve refuted."""


@pytest.fixture(scope="module")
def instance():
    return KINDS["throughput"].load(json.loads(DATA.read_text()), DATA.name)


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_the_exact_method_reaches_the_optimum_both_solvers_prove(instance, solver):
    result = run_method(KINDS["throughput"], instance, "exact", solver=solver, time_limit=60)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(OPTIMUM, rel=1e-6)


def test_highs_finds_the_pattern_model_below_the_optimum_feasible(instance):
    pool = [patterns.candidates(instance, c) for c in range(instance.n_components)]
    ranges = [bounds.count_range(instance, c, RHO) for c in range(instance.n_components)]
    model = patterns.build_matrix(instance, patterns.pattern_model(instance, RHO, ranges, pool)).model
    run, values = solve_highs(model, 30.0)
    assert run.status in ("optimal", "feasible") and values is not None
