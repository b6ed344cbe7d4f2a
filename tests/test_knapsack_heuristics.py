"""Heuristics of the knapsack family and the Storm schedulers on R-Storm's view.

Every heuristic's assignment must evaluate to what it reports and never beat the brute-force
optimum; R-Storm and Storm's resource-aware strategy must never break the hard memory constraint.
The small scheduler examples are worked out by hand from the papers' and Storm's rules.
"""

from __future__ import annotations

import time

import pytest

from odrp.core.taskview import Node, Task, TaskView
from odrp.heuristics.rstorm import Cluster as RStormCluster
from odrp.heuristics.rstorm import bfs_components, network_distance, reference_node, rstorm_schedule, task_ordering
from odrp.heuristics.storm_ras import executor_order, ras_schedule
from odrp.kinds.knapsack import generators as gen
from odrp.registry import KINDS, heuristics
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force
from tests.test_knapsack_kinds import TINY, load

FAMILY_HEURISTICS = ("greedy", "local_search")
STORM = ("storm_default", "rstorm", "storm_ras")


@pytest.mark.parametrize("kind", sorted(TINY))
def test_heuristics_evaluate_to_what_they_report_and_never_beat_the_optimum(kind):
    for seed in (1, 3, 5):
        instance = load(TINY[kind](seed))
        best = brute_force(kind, instance)
        sense = getattr(instance, "sense", KINDS[kind].sense)
        for name, heuristic in heuristics().items():
            if kind not in heuristic.kinds:
                continue
            result = run_method(KINDS[kind], instance, name, seed=seed)
            if result.solution is None or result.status == "no_solution":
                # only allowed where nothing is feasible, or for Storm's CPU-hard strategy
                assert best is None or name in ("storm_ras", "storm_default"), (name, result.message)
                continue
            assert result.verified, (name, result.message)
            if heuristic.scores_itself:  # its own objective is the evaluator's
                assert result.metrics["method_objective"] == pytest.approx(result.objective, rel=1e-9, abs=1e-9)
            assert best is not None
            if sense == "max":
                assert result.objective <= best + 1e-6, name
            else:
                assert result.objective >= best - 1e-6, name


def test_local_search_is_deterministic_per_seed_and_improves_on_greedy():
    instance = load(gen.qmkp(seed=7, items=14, knapsacks=3))
    first = run_method(KINDS["qmkp"], instance, "local_search", seed=3)
    again = run_method(KINDS["qmkp"], instance, "local_search", seed=3)
    greedy = run_method(KINDS["qmkp"], instance, "greedy")
    assert first.solution == again.solution
    assert first.objective >= greedy.objective


@pytest.mark.parametrize("seed", range(1, 9))
def test_rstorm_and_storm_ras_never_break_memory(seed):
    # memory filled to 95%: tight, but every task fits somewhere
    data = gen.qm3dkp(seed=seed, components=6, max_parallelism=4, racks=2, nodes_per_rack=3, load=0.95)
    instance = load(data)
    capacity = {n.id: n.memory for n in instance.nodes}
    demand = {t: c.memory for c in instance.components for t in c.tasks}
    for name in ("rstorm", "storm_ras"):
        result = run_method(KINDS["qm3dkp"], instance, name, options={"cpu_hard": False} if name == "storm_ras" else {})
        if result.solution is None:
            continue  # giving up is allowed, breaking memory is not
        used = dict.fromkeys(capacity, 0.0)
        for task, node in result.solution["assignment"].items():
            used[node] += demand[task]
        assert all(used[n] <= capacity[n] for n in capacity), name
        assert result.status == "feasible" and result.verified


# ------------------------------------------------------------------------------------- R-Storm


def test_rstorm_bfs_and_interleaved_task_order():
    # spout -> a -> b and spout -> c: BFS from the spout visits its children a, c, then b (Algorithm 2);
    # tasks one per component per round (Algorithm 3).
    tasks = (Task("spout", 0), Task("spout", 1), Task("a", 0), Task("b", 0), Task("c", 0), Task("c", 1))
    view = TaskView(tasks=tasks, nodes=(Node("n1"),), edges=(("spout", "a", 1), ("a", "b", 1), ("spout", "c", 1)))
    assert bfs_components(view) == ["spout", "a", "c", "b"]
    assert [t.id for t in task_ordering(view)] == ["spout#0", "a#0", "c#0", "b#0", "spout#1", "c#1"]


def test_rstorm_reference_node_is_in_the_richest_rack():
    # scales: cpu 200, memory 2000, bandwidth 100. Amounts: n1 = 100/200 + 1000/2000 + 1 = 2,
    # n2 = 0.5 + 1 + 1 = 2.5, n3 = 1 + 1 + 1 = 3. Racks: r1 = 4.5 > r2 = 3, so r1's richest node n2
    # (not the richest node overall, n3).
    nodes = (
        Node("n1", rack="r1", cpu=100, memory=1000, bandwidth=100),
        Node("n2", rack="r1", cpu=100, memory=2000, bandwidth=100),
        Node("n3", rack="r2", cpu=200, memory=2000, bandwidth=100),
    )
    view = TaskView(tasks=(Task("s", 0, memory=500),), nodes=nodes)
    ref = reference_node(RStormCluster(view))
    assert ref.id == "n2"
    assert [network_distance(ref, n) for n in nodes] == [2, 1, 3]
    assert rstorm_schedule(view) == {"s#0": "n2"}  # the first task goes to the reference node


def test_rstorm_keeps_memory_hard_and_prefers_the_reference_rack():
    # Two 600 MB tasks and nodes of 1000 MB: the second cannot join the first.
    nodes = (Node("a", rack="r1", cpu=100, memory=1000), Node("b", rack="r1", cpu=100, memory=1000),
             Node("c", rack="r2", cpu=100, memory=1000))  # fmt: skip
    tasks = (Task("x", 0, cpu=10, memory=600), Task("x", 1, cpu=10, memory=600))
    assignment = rstorm_schedule(TaskView(tasks=tasks, nodes=nodes))
    # reference node a (first in the richest rack); x#1 does not fit on a (400 left); b and c are
    # equally close in memory and CPU, b is in the reference rack (distance 2 < 3)
    assert assignment == {"x#0": "a", "x#1": "b"}
    with pytest.raises(ValueError, match="no node"):
        rstorm_schedule(TaskView(tasks=(Task("big", 0, memory=1500),), nodes=nodes))


# ----------------------------------------------------------------------------- Storm's RAS


def test_executor_order_by_connection_count():
    # sizes spout 2, bolt1 3, bolt2 1; connections spout 2*3 = 6, bolt1 2*3 + 1*3 = 9, bolt2 3.
    # bolt1 first; its neighbours by tasks * 3 ascending: bolt2 (3), spout (6); rounds of one task each.
    tasks = (*(Task("spout", k) for k in range(2)), *(Task("bolt1", k) for k in range(3)), Task("bolt2", 0))
    view = TaskView(tasks=tasks, nodes=(Node("n"),), edges=(("spout", "bolt1", 1), ("bolt1", "bolt2", 1)))
    assert [t.id for t in executor_order(view)] == ["bolt1#0", "bolt2#0", "spout#0", "bolt1#1", "spout#1", "bolt1#2"]


def test_storm_ras_backtracks_and_counts_states():
    # Order Q (2 connections), then P, R. Q -> n1 (state 1); P -> n1 (2): R (600 MB) then fits nowhere.
    # Backtracking moves P through n1's other slots (states 3, 4, 5), then to n2 (6); R -> n1 (7).
    nodes = (Node("n1", cpu=100, memory=1000), Node("n2", cpu=100, memory=500))
    tasks = (Task("Q", 0, memory=400), Task("P", 0, memory=400), Task("R", 0, memory=600))
    view = TaskView(tasks=tasks, nodes=nodes, edges=(("Q", "P", 1), ("Q", "R", 1)))
    assignment, stats = ras_schedule(view)
    assert assignment == {"Q#0": "n1", "P#0": "n2", "R#0": "n1"}
    assert stats == {"states": 7, "backtracks": 4}
    assert ras_schedule(view, max_states=6)[0] == assignment
    assert ras_schedule(view, max_states=5)[0] is None  # the search limit stops it


def test_storm_ras_cpu_is_hard_unless_told_otherwise():
    view = TaskView(tasks=(Task("a", 0, cpu=80), Task("a", 1, cpu=80)), nodes=(Node("n", cpu=100, memory=1000),))
    assert ras_schedule(view)[0] is None
    assert ras_schedule(view, cpu_hard=False)[0] == {"a#0": "n", "a#1": "n"}


def test_schedulers_on_the_rstorm_linear_instance():
    instance = KINDS["qm3dkp"].load(gen.rstorm("linear", "computation"), "<linear>")
    optimum = run_method(KINDS["qm3dkp"], instance, "exact")
    assert optimum.status == "optimal" and optimum.verified
    for name in STORM + FAMILY_HEURISTICS:
        result = run_method(KINDS["qm3dkp"], instance, name)
        assert result.verified and result.objective <= optimum.objective + 1e-6, name


@pytest.mark.parametrize("name", FAMILY_HEURISTICS)
def test_the_heuristics_keep_their_time_limit_on_a_large_instance(name):
    """In the method's own process (as the exact method's starts run them): a GAP of 2,501 jobs, whose regret
    greedy takes seconds, ends at a 0.5 s limit without a placement and says why; a knapsack keeps what it
    has packed by then, a feasible solution."""
    gap = KINDS["gap"].load(gen.gap(seed=1, agents=2, jobs=2501, gap_type="c"), "large")
    began = time.perf_counter()
    result = run_method(KINDS["gap"], gap, name, time_limit=0.5)
    assert time.perf_counter() - began < 0.5 + 1.0
    assert result.solution is None and "time limit" in result.message, result.message
    kp = KINDS["kp"].load(gen.kp(seed=1, items=20000), "large")
    began = time.perf_counter()
    result = run_method(KINDS["kp"], kp, name, time_limit=0.5)
    assert time.perf_counter() - began < 0.5 + 1.0
    assert result.verified and result.objective >= 0, result.message
