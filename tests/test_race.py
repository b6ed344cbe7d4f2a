"""A race of formulations: the first decided answer stops the others; otherwise the best incumbent and bound.

The knapsack family races its textbook model beside the default (``ProblemKind.race``), so that the
default is never worse than the textbook model where it has two cores: checked here on instances whose
optimum is known by brute force, and with test doubles for the stopping rule.
"""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from odrp.core.errors import InputError
from odrp.core.exact import ExactOutcome
from odrp.core.limits import GRACE, MethodDied
from odrp.core.race import race
from odrp.core.solvers import SolverRun
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force

MARGIN = 0.5
TWO_CORES = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a race needs two cores")


def _slow() -> str:
    time.sleep(30)
    return "slow"


def test_a_decided_member_stops_the_others():
    began = time.perf_counter()
    outcomes = race([_slow, lambda: "fast"], decided=lambda value: value == "fast", time_limit=20)
    assert outcomes == [None, "fast"]
    assert time.perf_counter() - began < 5


def test_undecided_members_all_answer_and_errors_come_back_as_values():
    def fails() -> str:
        raise ValueError("no")

    outcomes = race([lambda: "a", fails, lambda: "b"], decided=lambda value: False, time_limit=20)
    assert outcomes[0] == "a" and outcomes[2] == "b" and isinstance(outcomes[1], ValueError)


def test_members_past_the_limit_are_stopped():
    began = time.perf_counter()
    outcomes = race([_slow, lambda: "quick"], decided=lambda value: False, time_limit=0.5)
    assert outcomes == [None, "quick"]
    assert time.perf_counter() - began <= 0.5 + GRACE + MARGIN


def test_a_refused_member_stops_the_others():
    """Bad input from one member (a licence too small for its model) ends the race at once."""

    def refused() -> str:
        raise KeyError("refused")

    began = time.perf_counter()
    outcomes = race(
        [_slow, refused], decided=lambda value: False, refused=lambda e: isinstance(e, KeyError), time_limit=20
    )
    assert outcomes[0] is None and isinstance(outcomes[1], KeyError)
    assert time.perf_counter() - began < 5


@TWO_CORES
def test_the_default_is_refused_when_a_racer_is_refused(monkeypatch):
    """A textbook racer refused as bad input refuses the run, while the default still runs: no wait for the limit."""
    kind = KINDS["qkp"]

    def refused_unless_stuck(instance, **keywords):
        if keywords.get("formulation") == "textbook":
            raise InputError("command line", "--solver", "a solver whose licence covers this model")
        time.sleep(60)
        return ExactOutcome(SolverRun("x", "time_limit", None, None, None, 60.0), None, {})

    monkeypatch.setitem(KINDS, "qkp", dataclasses.replace(kind, exact=refused_unless_stuck))
    instance = kind.load(kind.generators["random"](seed=2, items=12), "tiny")
    began = time.perf_counter()
    with pytest.raises(InputError, match="licence"):
        run_method(KINDS["qkp"], instance, time_limit=30, starts=False)
    assert time.perf_counter() - began < 10


def test_a_member_that_dies_is_reported():
    outcomes = race([lambda: os._exit(3)], decided=lambda value: True, time_limit=5)
    assert isinstance(outcomes[0], MethodDied)


@TWO_CORES
@pytest.mark.parametrize("kind_name", ["qkp", "mkp", "gap"])
def test_the_raced_default_proves_the_brute_force_optimum(kind_name):
    kind = KINDS[kind_name]
    params = {"qkp": {"items": 12}, "mkp": {"items": 9, "knapsacks": 2}, "gap": {"agents": 3, "jobs": 7}}[kind_name]
    instance = kind.load(kind.generators["random"](seed=5, **params), "tiny")
    optimum = brute_force(kind_name, instance)
    result = run_method(kind, instance, time_limit=30)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(optimum, rel=1e-9)
    race_stats = result.metrics["method_stats"]["race"]
    assert [r["formulation"] for r in race_stats] == ["auto", "textbook"]


@TWO_CORES
def test_the_textbook_racer_decides_when_the_default_is_stuck(monkeypatch):
    """A default that never ends (a stand-in for a stage that stalls) loses the race to the textbook model."""
    kind = KINDS["qkp"]
    exact = kind.exact

    def stuck_unless_textbook(instance, **keywords):
        if keywords.get("formulation") != "textbook":
            time.sleep(60)
            return ExactOutcome(SolverRun("x", "time_limit", None, None, None, 60.0), None, {})
        return exact(instance, **keywords)

    monkeypatch.setitem(KINDS, "qkp", dataclasses.replace(kind, exact=stuck_unless_textbook))
    instance = kind.load(kind.generators["random"](seed=2, items=12), "tiny")
    began = time.perf_counter()
    result = run_method(KINDS["qkp"], instance, time_limit=30)
    assert time.perf_counter() - began < 20
    assert result.status == "optimal" and result.objective == pytest.approx(brute_force("qkp", instance), rel=1e-9)
    assert "decided by textbook" in result.message


def test_a_member_killed_inside_pyomos_output_capture_leaves_the_parent_free_to_solve():
    """Pyomo's capture lock (held while a capture starts and ends) is shared with forked children once
    multiprocessing is imported; a member killed while holding it must not block the parent's next solve
    (each child takes a lock of its own). The member below holds it as a solver's capture would."""
    import multiprocessing  # noqa: F401  (Pyomo makes its capture lock a multiprocessing one once imported)

    import pyomo.common.dependencies as dependencies

    def holds_the_capture_lock() -> str:
        dependencies.capture_output_lock.acquire()
        time.sleep(30)
        return "never"

    outcomes = race([holds_the_capture_lock, _after(0.5, "done")], decided=lambda value: value == "done", time_limit=20)
    assert outcomes == [None, "done"]
    assert dependencies.capture_output_lock.acquire(timeout=2)
    dependencies.capture_output_lock.release()


def _after(seconds: float, value: str):
    def wait_then_answer() -> str:
        time.sleep(seconds)
        return value

    return wait_then_answer


def _outcome(status, objective, bound, solution=None):
    return ExactOutcome(SolverRun("x", status, objective, bound, None, 1.0), solution, {"method": status})


def test_outcomes_combine_into_the_best_incumbent_and_the_best_bound():
    """By hand, for a minimisation: incumbents 5 and 4, lower bounds 3.5 and 3.9: 4 with 3.9 (gap 2.5%)."""
    from odrp.core.exact import best_outcome

    combined = best_outcome(
        [_outcome("time_limit", 5.0, 3.9, {"a": 1}), _outcome("time_limit", 4.0, 3.5, {"a": 2})], "min", 1e-6
    )
    assert combined.solution == {"a": 2} and combined.run.objective == 4.0 and combined.run.bound == 3.9
    assert combined.run.gap == pytest.approx(0.1 / 4.0) and combined.run.status == "time_limit"
    # an incumbent meeting another method's bound is a proof; a bound the incumbent beats is dropped
    proof = best_outcome([_outcome("time_limit", 4.0, 3.0, {"a": 3}), _outcome("time_limit", None, 4.0)], "min", 1e-6)
    assert proof.run.status == "optimal" and proof.run.bound == 4.0
    wrong = best_outcome([_outcome("time_limit", 4.0, 3.0, {"a": 3}), _outcome("time_limit", None, 4.5)], "min", 1e-6)
    assert wrong.run.bound == 3.0


def test_the_memory_budget_is_shared_in_proportion_to_the_weights():
    import resource

    from odrp.core.memory import GB, memory_budget

    def limit() -> int:
        return resource.getrlimit(resource.RLIMIT_DATA)[0]

    with memory_budget(4 * GB):
        equal = race([limit, limit], decided=lambda value: False, time_limit=20)
        weighted = race([limit, limit], decided=lambda value: False, time_limit=20, weights=[3.0, 1.0])
    assert equal == [2 * GB, 2 * GB]
    assert weighted == [3 * GB, 1 * GB]
