"""Time limits of the throughput exact methods (default and textbook) on instances too large to be solved early,
and the worker and solver processes they leave behind (none)."""

from __future__ import annotations

import os
import time

import pytest

from odrp.kinds.throughput.exact import parallel, solver_child
from odrp.kinds.throughput.exact.solve import solve
from odrp.kinds.throughput.generators import random_instance
from odrp.kinds.throughput.instance import load

LIMIT = 3.0
SLACK = 2.0
"""Seconds past the limit a run may take here: the contract is 1 s on a quiet machine; tests share theirs."""


@pytest.fixture(scope="module")
def large():
    return load(random_instance(seed=0, components=20, machines=30, shape="linear"))


@pytest.mark.parametrize("solver", ["cpsat", "highs", "cbc"])
@pytest.mark.parametrize("formulation", ["auto", "textbook"])
def test_a_time_limit_is_kept_and_no_process_outlives_the_run(large, solver, formulation):
    before = set(solver_child.descendants(os.getpid()))  # a Spark JVM of an earlier test may live on
    began = time.perf_counter()
    outcome = solve(large, solver, LIMIT, formulation=formulation)
    wall = time.perf_counter() - began
    assert wall < LIMIT + SLACK
    assert outcome.run.status == "time_limit", outcome.run.message
    if formulation == "auto":  # the starts give an incumbent, the fluid LP a bound
        assert outcome.run.objective is not None and outcome.run.bound >= outcome.run.objective
    assert set(solver_child.descendants(os.getpid())) <= before


def test_no_worker_process_starts_without_a_level_search(monkeypatch):
    # paper size: the pattern form proves the optimum by P(rho) rounds, with no level search
    started = []
    monkeypatch.setattr(parallel.Workers, "start", lambda self: started.append(self))
    inst = load(random_instance(seed=1, components=5, machines=3, shape="diamond"))
    outcome = solve(inst, "cpsat", 30.0)
    assert outcome.run.status == "optimal"
    assert not any("level_search" in r for r in outcome.stats["rounds"])
    assert started == []


def test_a_small_models_building_time_sets_no_pace():
    from odrp.kinds.throughput.exact.rounds import PACE_ITEMS, _build_estimate
    from odrp.kinds.throughput.exact.settings import ThroughputSettings

    settings = ThroughputSettings()
    # a worker's first model: 20 items in 0.7 s (the CP-SAT import included); a leaf of 300 items follows
    stats = {"rounds": [{"items": 20, "model_s": 0.7}]}
    assert _build_estimate(stats, 300, settings) == pytest.approx(300 * settings.item_seconds)
    # a model of PACE_ITEMS items or more sets the pace: 2,000 items in 0.2 s, so 300 items in 0.03 s
    stats["rounds"].append({"items": 2 * PACE_ITEMS, "model_s": 0.2})
    assert _build_estimate(stats, 300, settings) == pytest.approx(300 * 0.2 / (2 * PACE_ITEMS))


def test_an_empty_row_reaches_cbc():
    """A P(rho) row without a column (a machine no component can use) made to_pyomo raise "a trivial
    Boolean" (CBC's level-search workers failed on 10 x 10 seed 0); satisfied it is left out, violated
    it makes the model infeasible."""
    from odrp.core.solvers import solve
    from odrp.kinds.throughput.exact.matrix import MatrixModel

    model = MatrixModel(sense="max")
    x = model.column(0, 3, integer=True, cost=1.0)
    model.row({x: 1.0}, upper=2.0)
    model.row({}, upper=5.0)  # 0 <= 5: no constraint
    run = solve(model.to_pyomo(), "cbc", 10, 1e-6)
    assert run.status == "optimal" and run.objective == 2.0
    model.row({}, lower=1.0)  # 0 >= 1: infeasible
    assert solve(model.to_pyomo(), "cbc", 10, 1e-6).status == "infeasible"
