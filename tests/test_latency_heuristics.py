"""Hill climbing, ant system, hybrid and Storm's default scheduler on the latency kind.

Every heuristic must report the score the evaluator gives its placement (``verified``), never beat
the brute-force optimum, and return the same placement for the same seed and iteration budget.
"""

from __future__ import annotations

import json

import pytest

from odrp.heuristics.latency import Scorer, greedy_start
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.generators import random_topology
from odrp.kinds.latency.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_latency_evaluator import DIAMOND
from tests.test_latency_exact import brute_force, tiny

LATENCY = KINDS["latency"]
HEURISTICS = ("hill_climbing", "ant_system", "hybrid")


@pytest.mark.parametrize("method", HEURISTICS)
@pytest.mark.parametrize(("seed", "weight", "cycle"), [(1, 1e-6, False), (3, 0.05, False), (5, 1.0, True)])
def test_reported_score_is_the_evaluators_and_never_below_the_optimum(method, seed, weight, cycle):
    inst = load(tiny(seed, latency_weight=weight, cycle=cycle))
    best, _ = brute_force(inst)
    result = run_method(LATENCY, inst, method, seed=7, options={"iterations": 30})
    assert result.status == "feasible", result.message
    assert result.verified, result.message  # the evaluator's score equals the heuristic's own
    assert result.objective >= best - 1e-12


@pytest.mark.parametrize("method", HEURISTICS)
def test_deterministic_per_seed_and_budget(method):
    inst = load(random_topology(seed=4, operations=12))
    runs = [run_method(LATENCY, inst, method, seed=3, options={"iterations": 12}) for _ in range(2)]
    assert runs[0].solution == runs[1].solution
    assert runs[0].objective == runs[1].objective
    assert runs[0].metrics["method_stats"]["stopped_by"] != "time"


def test_ant_system_depends_on_its_seed():
    inst = load(random_topology(seed=4, operations=12))
    solutions = {
        json.dumps(run_method(LATENCY, inst, "ant_system", seed=s, options={"iterations": 3}).solution, sort_keys=True)
        for s in range(4)
    }
    assert len(solutions) > 1


def test_iteration_budgets():
    inst = load(random_topology(seed=4, operations=12))
    ants = run_method(LATENCY, inst, "ant_system", options={"iterations": 5})
    assert ants.metrics["method_stats"]["colonies"] == 5
    climb = run_method(LATENCY, inst, "hill_climbing", options={"iterations": 2})
    assert climb.metrics["method_stats"]["steps"] == 2
    # hybrid: ceil(5/2) = 3 colonies, then at most floor(5/2) = 2 climbing steps
    hybrid = run_method(LATENCY, inst, "hybrid", options={"iterations": 5})
    stats = hybrid.metrics["method_stats"]
    assert stats["colonies"] == 3 and stats["steps"] <= 2


def test_hill_climbing_ends_in_a_local_optimum_of_its_three_moves():
    inst = load(tiny(2, operators=5, latency_weight=0.05))
    result = run_method(LATENCY, inst, "hill_climbing", options={"iterations": 1000})
    assert result.metrics["method_stats"]["stopped_by"] == "local_optimum"
    p = [inst.supervisors.index(result.solution["assignment"][op]) for op in inst.operators]
    here = evaluate_assignment(inst, p)
    n, m = inst.n_operators, inst.n_supervisors
    # no single move, swap or move-all keeps feasibility and improves the score
    neighbours = [[v if k == i else p[k] for k in range(n)] for i in range(n) for v in range(m)]
    neighbours += [
        [p[k] if k not in (i, j) else p[j] if k == i else p[i] for k in range(n)] for i in range(n) for j in range(n)
    ]
    neighbours += [[v if p[k] == u else p[k] for k in range(n)] for u in range(m) for v in range(m)]
    for q in neighbours:
        ev = evaluate_assignment(inst, q)
        assert not (ev.feasible and ev.objective < here.objective * (1 - 1e-12))


def test_greedy_start_spreads_by_free_memory():
    # topological order src, a, b, snk; free memory 950, 380, 380 (limit 0.95):
    # src -> s1 (950); a -> s1 (850 left > 380); b -> s1 (650 > 380); snk -> s1 (350 left < 380: s2)
    scorer = Scorer(load(DIAMOND))
    assert greedy_start(scorer) == [0, 0, 0, 1]


def test_storm_default_applies_and_is_scored():
    """EvenScheduler: tasks by component id (a, b, snk, src) dealt over slots s1, s2, s3, s1, ...

    a -> s1, b -> s2, snk -> s3, src -> s1: the spread placement scored by hand in
    test_latency_evaluator (1e-6 x 6 + 1 + 0.75 + 175/225).
    """
    inst = load(DIAMOND)
    result = run_method(LATENCY, inst, "storm_default")
    assert result.solution == {"assignment": {"src": "s1", "a": "s1", "b": "s2", "snk": "s3"}}
    assert result.status == "feasible" and result.verified
    assert result.objective == pytest.approx(1e-6 * 6 + 1 + 0.75 + 175 / 225, rel=1e-12)


def test_storm_default_ignores_capacity_and_is_judged_infeasible():
    inst = load(random_topology(seed=0, operations=7))
    result = run_method(LATENCY, inst, "storm_default")
    assert result.status == "no_solution" and result.objective is None  # infeasible is for proofs
    assert "cpu" in result.message


def test_default_cap_is_one_second():
    inst = load(random_topology(seed=1, operations=22))
    result = run_method(LATENCY, inst, "ant_system", options={"max_iterations": 10**6, "patience": 10**6})
    assert result.metrics["method_stats"]["stopped_by"] == "time"
    assert result.runtime_s < 3.0  # the cap is checked between colonies (a loaded machine is slow)
