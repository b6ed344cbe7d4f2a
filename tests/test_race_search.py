"""The exact run's race with a search (``ProblemKind.race_search``): ODRP's local search on the core HiGHS leaves idle.

Checked against brute force on tiny instances: the raced run proves the optimum; the search's placement
becomes the run's incumbent when the exact method has none (a stand-in for a branch and bound that
never reaches one), and then the exact method's bound and the search's placement prove the optimum
together; an exact method that fails is not hidden behind the search's answer.
"""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from heuristics.replication import LocalSearchSettings, run_local_search
from odrp.core.exact import ExactOutcome
from odrp.core.solvers import SolverRun
from odrp.kinds.replication.generators import random_instance
from odrp.kinds.replication.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.bruteforce import odrp_optimum
from tests.test_odrp_exact import tiny

TWO_CORES = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a race needs two cores")


def test_the_local_search_without_a_restart_count_runs_until_its_limit():
    inst = load(random_instance(seed=4, operators=12, nodes=8, max_replicas=3))
    began = time.perf_counter()
    out = run_local_search(inst, seed=0, time_limit=1.0, settings=LocalSearchSettings(restarts=None))
    assert time.perf_counter() - began >= 0.95
    assert out.stats["stopped"] == "time_limit"
    evaluations = run_local_search(inst, seed=0, settings=LocalSearchSettings(restarts=None, max_evaluations=2000))
    assert evaluations.stats["stopped"] == "max_evaluations"


def test_without_any_limit_the_local_search_keeps_its_default_restarts():
    inst = load(tiny(7, "balanced", "traffic"))
    out = run_local_search(inst, seed=0, settings=LocalSearchSettings(restarts=None))
    assert out.stats["descents"] <= LocalSearchSettings().restarts + 1
    assert out.stats["stopped"] == "completed"


@TWO_CORES
@pytest.mark.parametrize(("seed", "profile", "metric"), [(7, "balanced", "traffic"), (2, "cost", "traffic")])
def test_the_raced_run_proves_the_brute_force_optimum(seed, profile, metric):
    inst = load(tiny(seed, profile, metric))
    best, _ = odrp_optimum(inst)
    result = run_method(KINDS["odrp"], inst, "exact", time_limit=30)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    members = result.metrics["method_stats"]["race"]
    assert [m["formulation"] for m in members] == ["auto", "odrp_local_search"]
    assert "decided by auto" in result.message


@TWO_CORES
def test_the_searchs_placement_and_the_exact_bound_prove_the_optimum_together(monkeypatch):
    """An exact method with the optimum as its bound and no placement (a branch and bound that found none
    in time): the run's incumbent is the search's, verified, and meets the bound."""
    kind = KINDS["odrp"]
    inst = load(tiny(7, "balanced", "traffic"))
    best, _ = odrp_optimum(inst)

    def bound_only(instance, **keywords):
        time.sleep(0.5)
        return ExactOutcome(SolverRun("stub", "time_limit", None, best, None, 0.5), None, {})

    monkeypatch.setitem(KINDS, "odrp", dataclasses.replace(kind, exact=bound_only))
    result = run_method(KINDS["odrp"], inst, "exact", time_limit=3, starts=False)
    assert result.verified and result.solver == "stub"
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert result.status == "optimal" and result.bound == best
    members = {m["formulation"]: m for m in result.metrics["method_stats"]["race"]}
    assert members["auto"]["objective"] is None
    assert members["odrp_local_search"]["objective"] == pytest.approx(best, rel=1e-6, abs=1e-9)


@TWO_CORES
def test_a_failing_exact_method_is_not_hidden_by_the_search(monkeypatch):
    kind = KINDS["odrp"]

    def fails(instance, **keywords):
        raise RuntimeError("the solver failed")

    monkeypatch.setitem(KINDS, "odrp", dataclasses.replace(kind, exact=fails))
    with pytest.raises(RuntimeError, match="the solver failed"):
        run_method(KINDS["odrp"], load(tiny(7, "balanced", "traffic")), "exact", time_limit=3, starts=False)


@pytest.mark.parametrize("given", [{"formulation": "compact"}, {"options": {"start_kicks": 10}}, {}])
def test_no_search_is_raced_when_the_user_chose_the_method_or_gave_no_limit(given):
    inst = load(tiny(7, "balanced", "traffic"))
    limit = None if not given else 30
    result = run_method(KINDS["odrp"], inst, "exact", time_limit=limit, **given)
    assert result.status == "optimal"
    assert "race" not in result.metrics["method_stats"]


def test_one_thread_races_nothing():
    inst = load(tiny(7, "balanced", "traffic"))
    result = run_method(KINDS["odrp"], inst, "exact", time_limit=30, threads=1)
    assert result.status == "optimal"
    assert "race" not in result.metrics["method_stats"]


@TWO_CORES
def test_a_search_refused_its_memory_leaves_the_exact_method_to_answer(monkeypatch):
    import odrp.run

    def no_memory() -> None:
        raise MemoryError

    monkeypatch.setattr(odrp.run, "_search_member", lambda *args: ("odrp_local_search", no_memory))
    inst = load(tiny(7, "balanced", "traffic"))
    best, _ = odrp_optimum(inst)
    result = run_method(KINDS["odrp"], inst, "exact", time_limit=30)
    assert result.status == "optimal" and result.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    members = {m["formulation"]: m["status"] for m in result.metrics["method_stats"]["race"]}
    assert members["auto"] == "optimal" and members["odrp_local_search"] not in ("optimal", "feasible")


def test_the_raced_search_replays_the_starts_local_search_and_goes_on():
    """From the greedy with the run's seed (its options name the start), the raced search follows the
    ``odrp_local_search`` heuristic's own path, whatever better placement the starts found, and goes on
    past it: its placement is never worse than that heuristic's alone."""
    from odrp.run import _search_member, best_of, run_starts

    kind = KINDS["odrp"]
    inst = load(random_instance(seed=4, operators=12, nodes=8, max_replicas=3))
    alone = run_method(kind, inst, "odrp_local_search", seed=3)
    greedy = run_method(kind, inst, "odrp_greedy")
    floor = run_starts(kind, inst, time_limit=5.0, seed=3)
    assert best_of(kind, inst, floor).objective != pytest.approx(greedy.objective)  # a start better than the greedy
    name, member = _search_member(kind, inst, 2.0, 3, floor)
    raced = member()
    assert name == "odrp_local_search" and raced.verified
    raced_stats, alone_stats = raced.metrics["method_stats"], alone.metrics["method_stats"]
    assert raced_stats["start_objective"] == pytest.approx(greedy.objective)  # it began at the greedy
    assert raced_stats["descents"] > alone_stats["descents"]  # and went on past the heuristic's restarts
    better = raced.objective >= alone.objective if kind.sense == "max" else raced.objective <= alone.objective
    assert better or raced.objective == pytest.approx(alone.objective, rel=1e-9)
