"""Incumbents and bounds leave a run as they are found, and a run the watchdog kills keeps them.

- The solvers' callbacks (HiGHS, CP-SAT) report each improving solution of a model and its bound:
  checked on a 0-1 knapsack whose optimum is computed by dynamic programming here.
- A method killed by the watchdog after it has reported an incumbent returns that incumbent, verified by
  the evaluator, with status ``time_limit``.
- Every exact run takes its kind's fast heuristics first and is never worse than any of them; a run
  with a 0.5 s limit on a large instance returns an incumbent at least as good as theirs.
"""

from __future__ import annotations

import dataclasses
import random
import time

import pyomo.environ as pyo
import pytest

from odrp.core import progress
from odrp.core.exact import ExactOutcome
from odrp.core.kind import Evaluation
from odrp.core.limits import GRACE
from odrp.core.progress import ModelWatch
from odrp.core.solvers import SolverRun, solve
from odrp.registry import KINDS
from odrp.run import run_method, run_within_limits
from tests.test_odrp_evaluator import SPLIT, TINY

MARGIN = 0.5


def _knapsack(n: int = 60, seed: int = 3) -> tuple[list[int], list[int], int]:
    rng = random.Random(seed)
    weights = [rng.randint(20, 100) for _ in range(n)]
    values = [w + rng.randint(-10, 10) for w in weights]  # strongly correlated: many improving solutions
    return values, weights, sum(weights) // 3


def _best_by_dynamic_programming(values: list[int], weights: list[int], capacity: int) -> int:
    best = [0] * (capacity + 1)
    for v, w in zip(values, weights, strict=True):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


def _evaluate(data, solution, source):
    values, weights, capacity = data
    chosen = solution["chosen"]
    weight = sum(weights[j] for j in chosen)
    return Evaluation(weight <= capacity, float(sum(values[j] for j in chosen)), {})


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_a_solvers_improving_solutions_and_bounds_are_reported(solver):
    data = _knapsack()
    values, weights, capacity = data
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(len(values)), domain=pyo.Binary)
    model.capacity = pyo.Constraint(expr=sum(w * model.x[j] for j, w in enumerate(weights)) <= capacity)
    model.objective = pyo.Objective(expr=sum(v * model.x[j] for j, v in enumerate(values)), sense=pyo.maximize)
    watch = ModelWatch(
        decode=lambda: {"chosen": [j for j in model.x if model.x[j].value > 0.5]}, bound=lambda value: value
    )
    messages: list[tuple[str, object]] = []
    with progress.watching(_evaluate, data, "max", messages.append):
        run = solve(model, solver=solver, time_limit=30, watch=watch)
    optimum = _best_by_dynamic_programming(values, weights, capacity)
    assert run.status == "optimal" and run.objective == pytest.approx(optimum)
    incumbents = [payload[1] for kind, payload in messages if kind == "incumbent"]
    bounds = [payload for kind, payload in messages if kind == "bound"]
    assert incumbents and incumbents == sorted(incumbents)  # only improvements leave the run
    assert incumbents[-1] == pytest.approx(optimum)  # the evaluator's objective of the decoded solution
    assert all(b >= optimum - 1e-6 for b in bounds)  # every bound reported is a bound


def test_outside_a_watched_run_reports_do_nothing():
    assert not progress.active()
    assert progress.incumbent({"chosen": [0]}, "nowhere") is None
    progress.bound(1.0)  # no error, nothing sent


def _with_exact(monkeypatch, exact) -> None:
    monkeypatch.setitem(KINDS, "odrp", dataclasses.replace(KINDS["odrp"], exact=exact))


def test_a_run_killed_after_it_reported_an_incumbent_returns_it_verified(monkeypatch):
    """The exact method reports a placement and a bound, then never returns: the watchdog's Result holds both."""

    def reports_then_hangs(instance, **_):
        progress.incumbent(SPLIT, "test")
        progress.bound(1.0)
        time.sleep(30)

    _with_exact(monkeypatch, reports_then_hangs)
    kind = KINDS["odrp"]
    instance = kind.load(TINY, "tiny")
    began = time.perf_counter()
    result = run_within_limits(kind, instance, time_limit=1.0)
    assert time.perf_counter() - began <= 1.0 + GRACE + MARGIN
    expected = kind.evaluate(instance, SPLIT, "by hand")
    assert result.status == "time_limit" and result.verified
    # the start heuristics ran first and reported too: the incumbent is the best of all reports
    assert result.objective >= expected.objective - 1e-9
    assert result.bound == 1.0 and result.solver.startswith("highs")
    assert "last ones it reported" in result.message


def test_a_killed_run_without_a_report_says_why(monkeypatch):
    def hangs(instance, **_):
        time.sleep(30)

    _with_exact(monkeypatch, hangs)
    kind = KINDS["odrp"]
    result = run_within_limits(kind, kind.load(TINY, "tiny"), time_limit=0.5, starts=False)
    assert result.status == "time_limit" and result.objective is None and result.solution is None
    assert result.message.startswith("no solution:") and result.solver.startswith("highs")


def test_an_exact_answer_worse_than_a_start_heuristic_is_replaced_by_the_heuristics(monkeypatch):
    """An exact method that ends without a solution, or with a worse one, returns the start's placement."""
    kind = KINDS["odrp"]
    instance = kind.load(TINY, "tiny")
    worst = kind.evaluate(instance, SPLIT, "by hand").objective

    def finds_nothing(inst, **_):
        return ExactOutcome(SolverRun("test", "time_limit", None, 2.0, None, 0.1, "stopped"), None, {})

    _with_exact(monkeypatch, finds_nothing)
    result = run_method(KINDS["odrp"], instance, time_limit=5, threads=1)  # one core: the starts alone, no race
    starts = result.metrics["method_stats"]["starts"]
    best_start = max(s["objective"] for s in starts if s["verified"])
    assert result.verified and result.objective == pytest.approx(best_start) and best_start >= worst - 1e-12
    assert result.status == "time_limit" and result.bound == 2.0
    assert "the incumbent is the start" in result.message


def test_an_optimal_claim_beaten_by_a_start_is_reported_not_kept(monkeypatch):
    kind = KINDS["odrp"]
    instance = kind.load(TINY, "tiny")
    low = kind.evaluate(instance, SPLIT, "by hand").objective - 0.5  # below every feasible placement here

    def wrong_proof(inst, **_):
        return ExactOutcome(SolverRun("test", "optimal", low, low, 0.0, 0.1), None, {})

    _with_exact(monkeypatch, wrong_proof)
    result = run_method(KINDS["odrp"], instance, time_limit=5)
    assert result.status == "feasible" and result.bound is None and result.verified
    assert "contradicted" in result.message and "dropped" in result.message


@pytest.mark.parametrize(
    ("kind_name", "params", "greedy"),
    [
        ("odrp", {"operators": 32, "nodes": 20}, "odrp_greedy"),
        ("latency", {"operations": 42}, None),
        ("qm3dkp", {"components": 50, "racks": 4, "nodes_per_rack": 8}, "greedy"),
        ("throughput", {"components": 20, "machines": 30}, "hetero_greedy"),
    ],
)
def test_a_half_second_run_on_a_large_instance_keeps_the_heuristics_incumbent(kind_name, params, greedy):
    """A 0.5 s exact run on a large instance returns a verified incumbent, at least as good as every start
    heuristic it ran (when it ends by itself, its record of them), and at least as good as the kind's
    greedy run alone (instant and independent of the clock; latency has none: its starts stop on time)."""
    kind = KINDS[kind_name]
    instance = kind.load(kind.generators["random"](seed=7, **params), "generated")
    result = run_within_limits(kind, instance, time_limit=0.5)
    assert result.verified and result.solution is not None and result.solver
    better = (lambda a, b: a >= b - 1e-9) if kind.sense == "max" else (lambda a, b: a <= b + 1e-9)
    for start in result.metrics.get("method_stats", {}).get("starts", []):
        assert not start["verified"] or better(result.objective, start["objective"]), start
    if greedy is not None:
        alone = run_method(kind, instance, greedy)
        assert alone.verified and better(result.objective, alone.objective)
