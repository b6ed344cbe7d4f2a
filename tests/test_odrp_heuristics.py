"""ODRP heuristics: feasible multisets, F as the evaluator scores it, never above the optimum.

Optima come from brute force over every multiset combination (tests/bruteforce.py, which only
enumerates and asks the evaluator) or from the exact model; hand calculations are shown inline.
"""

from __future__ import annotations

import copy
import json
import math
import random
import statistics

import pytest

from odrp.heuristics.replication import Effort, TabuSettings, greedy, random_state, target_replicas
from odrp.heuristics.replication_moves import neighbourhood, realise
from odrp.heuristics.replication_state import PlacementState, Tables
from odrp.kinds.replication.evaluator import evaluate, evaluate_placement
from odrp.kinds.replication.generators import debs2015, random_instance
from odrp.kinds.replication.instance import load, parse_solution
from odrp.registry import KINDS, heuristics
from odrp.run import run_method
from tests.bruteforce import odrp_optimum
from tests.test_odrp_evaluator import TINY
from tests.test_odrp_exact import CASES, tiny

ODRP = KINDS["odrp"]
HEURISTICS = ("odrp_greedy", "odrp_local_search", "odrp_tabu")


def assert_state_matches_evaluator(state: PlacementState) -> None:
    ev = evaluate_placement(state.t.inst, state.placement())
    assert ev.feasible, ev.violations
    assert state.utility() == pytest.approx(ev.objective, rel=1e-9, abs=1e-12)
    assert state.response_time() == pytest.approx(ev.metrics["response_time"], rel=1e-9, abs=1e-12)
    assert state.cost() == pytest.approx(ev.metrics["cost"], rel=1e-9, abs=1e-12)
    assert state.log_availability == pytest.approx(ev.metrics["log_availability"], rel=1e-9, abs=1e-12)
    if state.t.with_network:  # Z is tracked only when it carries weight
        assert state.network() == pytest.approx(ev.metrics["network"], rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------- incremental evaluation


@pytest.mark.parametrize(
    ("seed", "profile", "metric"),
    [
        (1, "balanced", "traffic"),
        (2, "balanced", "usage"),
        (3, "network", "elastic_energy"),
        (4, "availability", "traffic"),
        (5, "cost", "traffic"),
    ],
)
def test_incremental_evaluation_equals_the_evaluator_along_random_moves(seed, profile, metric):
    """Random walks of add/remove/move/swap moves: after every move and every undo, F and each
    QoS value of the state equal the evaluator's on the same placement."""
    data = random_instance(
        seed=seed, operators=9, nodes=5, max_replicas=3, weights_profile=profile, network_metric=metric
    )
    # every weight on, so that every term is tracked (availability and link costs included)
    data["objective"]["weights"] = {"response_time": 0.4, "availability": 0.2, "cost": 0.3, "network": 0.1}
    inst = load(data)
    tables = Tables(inst)
    rng = random.Random(seed)
    state = random_state(tables, rng)
    assert state is not None
    assert_state_matches_evaluator(state)
    for step in range(150):
        moves = neighbourhood(state)
        undo = state.apply(realise(state, rng.choice(moves)))
        assert_state_matches_evaluator(state)
        if step % 3 == 0:
            state.revert(undo)
            assert_state_matches_evaluator(state)


def test_partial_placement_by_hand():
    """The greedy's partial F on the tiny instance (weights 0.25 each; bounds R [0.1, 0.5],
    A [0.8, 1], C [3, 13], Z [0, 100]); src is on a, snk not yet placed.

    op on a: R = R_src + R_op = 1/(20-10) + 1/(15-10) = 0.3 (the stream to snk carries nothing),
    C = 2 replicas, A = 1, Z = 0: F = 0.25 (0.2/0.4) + 0.25 + 0.25 (11/10) + 0.25 = 0.9.
    op on b (speed-up 2): R = 0.1 + 0.01 + 0.2/2 = 0.21, C = 2 + 10 t/s x 0.5 = 7,
    A = 0.9 x 0.95 = 0.855, Z = 10 t/s x 2 B = 20:
    F = 0.25 (0.29/0.4) + 0.25 (log 0.855 - log 0.8)/(-log 0.8) + 0.25 (6/10) + 0.25 (80/100).
    """
    tables = Tables(load(TINY))
    on_a = PlacementState(tables, [{0: 1}, {0: 1}, {}])
    assert on_a.utility() == pytest.approx(0.9, rel=1e-12)
    on_b = PlacementState(tables, [{0: 1}, {1: 1}, {}])
    expected = 0.25 * 0.29 / 0.4 + 0.25 * (math.log(0.855) - math.log(0.8)) / -math.log(0.8) + 0.25 * 0.6 + 0.25 * 0.8
    assert on_b.utility() == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------------ greedy


def test_greedy_replica_counts_by_hand():
    """DEBS at 100 t/s: partialRank receives 31 x 100 = 3100 t/s at mu = 2371: one replica runs at
    1.31, two at 0.65 <= 0.8, so two; parser (100 / 233 = 0.43) keeps one. At a 0.5 target
    partialRank needs three (3100 / (3 x 2371) = 0.436) and parser still one."""
    inst = load(debs2015(100, "response_time"))
    counts = dict(zip(inst.operators, target_replicas(inst, 0.8), strict=True))
    assert counts["partialRank"] == 2 and counts["parser"] == 1 and counts["source"] == 1
    counts = dict(zip(inst.operators, target_replicas(inst, 0.5), strict=True))
    assert counts["partialRank"] == 3 and counts["parser"] == 1


def test_greedy_on_the_tiny_instance_by_hand():
    """src is pinned on a; op (10 / 15 = 0.67 <= 0.8: one replica) goes to a, where F = 0.9 beats
    0.61 on b (see test_partial_placement_by_hand); a is then full, so snk goes to b."""
    inst = load(TINY)
    state, message = greedy(Tables(inst), 0.8, Effort())
    assert state is not None and message == ""
    assert state.placement() == [{0: 1}, {0: 1}, {1: 1}]


# ------------------------------------------------------------------- every heuristic, judged


@pytest.mark.parametrize(("seed", "profile", "metric"), CASES)
def test_heuristics_are_feasible_verified_and_never_beat_brute_force(seed, profile, metric):
    inst = load(tiny(seed, profile, metric))
    best, _ = odrp_optimum(inst)
    for method in HEURISTICS:
        result = run_method(ODRP, inst, method, seed=seed)
        assert result.status == "feasible", result.message
        assert result.verified, result.message
        placement = parse_solution(inst, result.solution)
        for i, nodes in enumerate(placement):  # a multiset of candidate nodes, 1 <= |U_i| <= k_i
            assert inst.max_replicas[i] >= sum(nodes.values()) >= 1
            assert set(nodes) <= set(inst.candidates[i])
        assert evaluate(inst, result.solution).objective == pytest.approx(result.metrics["method_objective"], rel=1e-9)
        assert result.objective <= best + 1e-9


def test_local_search_is_near_the_brute_force_optimum_on_tiny_instances():
    """The local search's quality target (a gap of 2 % on average, 10 % at worst) on the brute-force cases."""
    gaps = []
    for seed, profile, metric in CASES:
        inst = load(tiny(seed, profile, metric))
        best, _ = odrp_optimum(inst)
        result = run_method(ODRP, inst, "odrp_local_search", seed=seed)
        gaps.append((best - result.objective) / abs(best))
    assert statistics.mean(gaps) <= 0.02 and max(gaps) <= 0.10, gaps


@pytest.mark.parametrize("profile", ["response_time", "balanced"])
def test_heuristics_never_beat_the_exact_optimum_on_debs(profile):
    inst = load(debs2015(100, profile))
    optimum = run_method(ODRP, inst, "exact")
    assert optimum.status == "optimal"
    for method in HEURISTICS:
        result = run_method(ODRP, inst, method)
        assert result.verified, result.message
        assert result.objective <= optimum.objective + 1e-9


@pytest.mark.parametrize("method", ["odrp_local_search", "odrp_tabu"])
def test_deterministic_per_seed(method):
    inst = load(random_instance(seed=7, operators=10, nodes=6, weights_profile="balanced"))
    first = run_method(ODRP, inst, method, seed=3)
    again = run_method(ODRP, inst, method, seed=3)
    assert first.solution == again.solution and first.objective == again.objective
    assert first.metrics["method_stats"]["evaluations"] == again.metrics["method_stats"]["evaluations"]


def test_local_search_from_a_random_start_and_from_a_given_solution():
    inst = load(tiny(2, "cost", "traffic"))
    best, _ = odrp_optimum(inst)
    from_random = run_method(ODRP, inst, "odrp_local_search", seed=1, options={"start": "random"})
    assert from_random.verified and from_random.objective <= best + 1e-9
    start = run_method(ODRP, inst, "odrp_greedy").solution
    from_given = run_method(ODRP, inst, "odrp_tabu", options=TabuSettings(start=start, iterations=5))
    assert from_given.verified
    assert from_given.objective >= from_given.metrics["method_stats"]["start_objective"] - 1e-12


def test_budgets_stop_the_search_with_a_feasible_answer():
    inst = load(random_instance(seed=5, operators=12, nodes=8, weights_profile="balanced"))
    result = run_method(ODRP, inst, "odrp_local_search", options={"max_evaluations": 50})
    stats = result.metrics["method_stats"]
    assert result.verified and stats["stopped"] == "max_evaluations" and stats["evaluations"] == 50
    result = run_method(ODRP, inst, "odrp_tabu", time_limit=0.05)
    assert result.verified and result.metrics["method_stats"]["stopped"] == "time_limit"


def test_infeasible_instances_give_no_solution():
    data = copy.deepcopy(TINY)
    data["operators"][1]["service_rate"] = 4  # 10 t/s over at most 2 replicas of mu = 4
    for method in HEURISTICS:
        result = run_method(ODRP, load(data), method)
        assert result.status == "no_solution" and result.solution is None
        assert "stable" in result.message


def test_registered_for_odrp():
    for method in HEURISTICS:
        assert heuristics()[method].kinds == ("odrp",)


# --------------------------------------------------------------------- the ODP task/node view


def test_task_view_of_debs_by_hand():
    """source and globalRank are pinned on w1 (8 slots of capacity, 2 used): six tasks, w1 keeps 6,
    the others 8; ceil(8 / 4) = ceil(6 / 4) = 2 worker slots each (the paper's 2 slots x 4
    executors); the six streams between free operators are edges weighted by their rate."""
    inst = load(debs2015(40, "response_time"))
    view = ODRP.taskview.view(inst)
    assert [t.id for t in view.tasks] == [
        "parser#0",
        "filterByCoordinates#0",
        "computeRouteID#0",
        "metronome#0",
        "countByWindow#0",
        "partialRank#0",
    ]
    assert [(n.id, n.memory, n.slots) for n in view.nodes] == [("w1", 6, 2)] + [(f"w{u}", 8, 2) for u in range(2, 7)]
    assert ("countByWindow", "partialRank", 31 * 40) in view.edges and len(view.edges) == 6
    assert view.extra["pinned"] == {"source": "w1", "globalRank": "w1"}


def test_storm_default_is_odp_and_never_beats_the_odrp_optimum():
    """At 40 t/s one replica each is stable and Storm's placement is feasible; at 80 t/s
    partialRank receives 2480 t/s > mu = 2371 on its single replica: only replication helps."""
    inst = load(debs2015(40, "response_time"))
    storm = run_method(ODRP, inst, "storm_default")
    assert storm.status == "feasible" and storm.verified
    assert all(count == 1 for count in storm.metrics["replicas"].values())
    assert storm.solution["placement"]["source"] == {"w1": 1}
    optimum = run_method(ODRP, inst, "exact")
    assert storm.objective <= optimum.objective + 1e-9
    overloaded = run_method(ODRP, load(debs2015(80, "response_time")), "storm_default")
    assert overloaded.status == "no_solution" and "partialRank" in overloaded.message  # not a proof


def test_bad_heuristic_options_are_one_line_errors(run_cli, tmp_path):
    instance = tmp_path / "tiny.json"
    instance.write_text(json.dumps(TINY))
    for option, named in (("foo=1", "--param foo: an option of this method"), ("start=bogus", "--param start")):
        proc = run_cli("solve", str(instance), "--method", "odrp_local_search", "--param", option)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and named in proc.stderr, proc.stderr


def test_search_starts_from_a_random_placement_when_the_greedy_finds_none():
    """c is pinned on n3; a (n1 or n2) is placed before b (n1 or n3) and, nothing telling the
    nodes apart, takes n1 (the lower index): b then fits nowhere. The one feasible placement is
    a on n2, b on n1, c on n3, which a random start finds."""
    data = {
        "problem": "odrp",
        "operators": [
            {"id": "a", "latency": 0.01, "candidates": ["n1", "n2"]},
            {"id": "b", "latency": 0.01, "candidates": ["n1", "n3"]},
            {"id": "c", "latency": 0.01, "candidates": ["n3"]},
        ],
        "nodes": [{"id": f"n{u}", "capacity": 1} for u in (1, 2, 3)],
        "links": [
            {"from": "n1", "to": "n2", "delay": 0.01},
            {"from": "n1", "to": "n3", "delay": 0.01},
            {"from": "n2", "to": "n3", "delay": 0.01},
        ],
        "objective": {"weights": {"cost": 1}, "bounds": {"cost": [3, 4]}},
    }
    inst = load(data)
    assert run_method(ODRP, inst, "odrp_greedy").status == "no_solution"
    for method in ("odrp_local_search", "odrp_tabu"):
        result = run_method(ODRP, inst, method)
        assert result.verified and "started from a random placement" in result.message
        assert result.solution["placement"] == {"a": {"n2": 1}, "b": {"n1": 1}, "c": {"n3": 1}}
