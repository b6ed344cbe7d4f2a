"""Latency by column generation: its bound against brute force, its placement through the evaluator.

The brute force (tests/test_latency_exact.py) enumerates every assignment and scores it with the
evaluator; a bound of the column generation must never exceed its optimum, and every placement it
returns is re-scored by the evaluator (``verified``).
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact import colgen
from odrp.kinds.latency.exact.colgen import Column, clustering
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.exact.solve import solve as solve_latency
from odrp.kinds.latency.exact.solve import use_colgen
from odrp.kinds.latency.generators import random_topology
from odrp.kinds.latency.instance import load, parse_solution
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_latency_exact import brute_force, tiny

LATENCY = KINDS["latency"]


def triangle() -> dict:
    """Three operators joined pairwise (45 events/s on each edge), two fit on a supervisor of 1 core."""
    return {
        "problem": "latency",
        "name": "triangle",
        "operators": [
            {"id": "o0", "cpu": 0.4, "memory": 100, "rate": 90},
            {"id": "o1", "cpu": 0.4, "memory": 100},
            {"id": "o2", "cpu": 0.4, "memory": 100},
        ],
        "edges": [{"from": "o0", "to": "o1"}, {"from": "o0", "to": "o2"}, {"from": "o1", "to": "o2"}],
        "supervisors": [{"id": f"s{u}", "cpu": 1, "memory": 1000, "coordinates": [u, 0]} for u in range(3)],
    }


def test_triangle_bound_by_hand():
    """By hand: every edge weighs 1/3 + 45/135 = 2/3, a supervisor 1/3, the constant is 2. A pair and a
    singleton cost 2 + (1/3 - 2/3) + 1/3 = 2 (two of three edges and events cut, two of three
    supervisors); the LP takes each pair at 1/2: 2 + 3/2 (1/3 - 2/3) = 1.5, the set-partitioning bound,
    with 1.5 groups. Branching on that count: one group cannot hold the three operators (1.2 cores), and
    with at least two groups (each pair at a, each singleton at b, 2a + b = 1, 3a + 3b >= 2, so a <= 1/3)
    the LP is 2 + 3a (-1/3) + 3b (1/3) = 3 - 3a >= 2: the bound is 2, the optimum's F. With branching
    on, the box does it at once: three supervisors cost at least 3 (1/3) + 2 (2/3) = 7/3 > 2, the
    incumbent, and one cannot hold the demand, so the LP asks for exactly two groups."""
    inst = load(triangle())
    result = run_method(LATENCY, inst, "exact", options={"colgen": True, "colgen_branching": False})
    assert result.verified, result.message
    assert result.metrics["method_stats"]["method"] == "colgen"
    assert result.bound == pytest.approx(1.5, abs=1e-7)
    assert result.metrics["s_co"] == pytest.approx(2 / 3) and result.metrics["s_sup"] == pytest.approx(2 / 3)
    assert result.objective == pytest.approx(2.0 + 1e-6 * result.metrics["s_lat"], abs=1e-9)
    assert result.status == "feasible"  # the gap is the LP's: nothing proves 2 without branching
    assert result.solver.startswith("highs")
    branched = run_method(LATENCY, inst, "exact", options={"colgen": True})
    assert branched.verified, branched.message
    assert branched.objective == pytest.approx(result.objective, abs=1e-12)
    assert 2.0 - 1e-7 <= branched.bound <= branched.objective  # F's bound is 2; s adds the latency tie-break
    assert branched.metrics["method_stats"]["multisets"] == 1
    assert branched.status == "optimal"


def test_group_costs_add_up_to_the_evaluators_score():
    """F = constant + sum of the group costs, for every placement of a tiny instance with twins."""
    inst = load(tiny(7, operators=5, supervisors=3, twins=True))
    data = clustering(inst)
    pricer = colgen.LatencyPricer(data, LatencySettings())
    item_of = {i: a for a, members in enumerate(data.items) for i in members}
    assert any(len(members) == 2 for members in data.items)
    for p in itertools.product(range(3), repeat=inst.n_operators):
        evaluation = evaluate_assignment(inst, list(p))
        if not evaluation.feasible:
            continue
        total = data.constant
        for u in set(p):
            counts = [0] * len(data.items)
            for i, v in enumerate(p):
                if v == u:
                    counts[item_of[i]] += 1
            total += pricer.cost(0, tuple(counts))
        f = evaluation.objective - inst.weights["latency"] * evaluation.metrics["s_lat"]
        assert total == pytest.approx(f, abs=1e-12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    operators=st.integers(3, 6),
    supervisors=st.integers(2, 4),
    twins=st.booleans(),
    equal=st.booleans(),
    weight=st.sampled_from([0.0, 1e-6, 0.1]),
)
def test_bound_never_exceeds_the_brute_force_optimum(seed, operators, supervisors, twins, equal, weight):
    data = tiny(seed, operators=operators, supervisors=supervisors, latency_weight=weight, twins=twins)
    if equal:  # one class of interchangeable supervisors
        for sup in data["supervisors"]:
            sup.update({"cpu": 1.0, "memory": 800})
    inst = load(data)
    best, _ = brute_force(inst)
    result = run_method(LATENCY, inst, "exact", options={"colgen": True})
    if best is None:
        assert result.solution is None and result.status != "optimal"
        return
    assert result.bound is not None and result.bound <= best + 1e-9
    if result.solution is not None:
        assert result.verified, result.message
        assert result.objective >= best - 1e-9
        assert result.bound <= result.objective + 1e-12
        if result.status == "optimal":
            assert result.objective == pytest.approx(best, rel=1e-6)


def test_auto_chooses_column_generation_by_size():
    small = load(random_topology(seed=1, operations=4))
    chosen = LatencySettings(colgen_operators=small.n_operators)
    assert use_colgen(small, chosen, "highs", None)
    assert not use_colgen(small, LatencySettings(), "highs", None)
    assert not use_colgen(small, chosen, "cbc", None)  # the pricing is HiGHS's
    assert not use_colgen(small, dataclasses.replace(chosen, classes=True), "highs", None)
    assert not use_colgen(small, chosen, "highs", {"assignment": {}})


def test_two_cores_race_both_methods_below_the_column_generations_size():
    """Below ``colgen_operators`` the classes method answers alone on one core and races the column
    generation on two; both prove the same optimum (13 operators on 11 supervisors)."""
    inst = load(random_topology(seed=1, operations=6))
    assert inst.n_operators < LatencySettings().colgen_operators
    alone = solve_latency(inst, time_limit=60, threads=1)
    raced = solve_latency(inst, time_limit=60, threads=2)
    assert alone.stats["method"] == "classes"
    assert raced.stats["method"] == "colgen and classes, raced"
    assert alone.run.status == raced.run.status == "optimal"
    assert raced.run.objective == pytest.approx(alone.run.objective, rel=1e-6)
    placement = parse_solution(inst, raced.solution)
    assert evaluate_assignment(inst, placement).objective == pytest.approx(raced.run.objective, rel=1e-9)


def test_time_limit_returns_incumbent_and_bound_in_time():
    """58 operators (the random generator at 30 operations), 8 s: an incumbent, a bound, on time."""
    inst = load(random_topology(seed=1001, operations=30))
    result = run_method(LATENCY, inst, "exact", time_limit=8)
    # from colgen_operators on the column generation answers alone, its pricings on the run's threads
    assert result.metrics["method_stats"]["method"] == "colgen"
    assert result.verified, result.message
    assert result.bound is not None and result.bound <= result.objective
    assert result.runtime_s < 8.8
    assert result.solver.startswith("highs")


def test_restricted_master_columns_cover_every_operator_once():
    inst = load(tiny(3, operators=6, supervisors=3, twins=True))
    data = clustering(inst)
    columns = [
        Column(0, tuple(1 if a == 0 else 0 for a in range(len(data.items))), 0.0),
        Column(0, tuple(0 if a == 0 else d for a, d in enumerate(data.demand)), 0.0),
    ]
    groups = colgen.groups_of(data, columns)
    assert sorted(i for g in groups for i in g) == list(range(inst.n_operators))
    assert groups[0] == data.items[0][:1]
    assert dataclasses.is_dataclass(data)


def test_incumbents_and_bounds_leave_the_run_as_they_are_found():
    """In a watched run the column generation reports its placements (evaluator-checked) and its bounds."""
    from odrp.core import progress

    inst = load(tiny(5, operators=6, supervisors=3, twins=True))
    best, _ = brute_force(inst)
    messages: list = []
    with progress.watching(LATENCY.evaluate, inst, "min", messages.append):
        colgen.solve(inst, LatencySettings(colgen=True), time_limit=None, mip_gap=1e-6)
    incumbents = [payload[1] for what, payload in messages if what == "incumbent"]
    bounds = [payload for what, payload in messages if what == "bound"]
    assert incumbents and bounds
    assert incumbents == sorted(incumbents, reverse=True) and incumbents[-1] >= best - 1e-9
    assert bounds == sorted(bounds) and bounds[-1] <= best + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_exact_pricing_with_the_rlt_cuts_equals_enumeration(seed):
    """The pricing MILP, RLT capacity cuts included, finds the best group of every type at random duals:
    the largest pi.n + value(n) over every count vector that fits, by enumeration."""
    import numpy as np

    inst = load(tiny(seed, operators=6, supervisors=3, twins=seed % 2 == 0))
    data = clustering(inst)
    pricer = colgen.LatencyPricer(data, LatencySettings())
    rng = np.random.default_rng(seed)
    vectors = [n for n in itertools.product(*(range(b + 1) for b in data.demand)) if any(n)]
    for t in range(len(data.types)):
        fitting = [n for n in vectors if pricer.fits(t, n)]
        for _ in range(3):
            pi = rng.uniform(-0.5, 0.5, size=len(data.demand))
            best = max(float(pi @ np.array(n)) + pricer.value(n) for n in fitting)
            priced = pricer.exact(t, pi, 0.0, None)
            assert priced.least_reduced_cost == pytest.approx(data.per_group - best, abs=1e-7)
            assert priced.columns and all(pricer.fits(t, n) for n in priced.columns)
            assert float(pi @ np.array(priced.columns[0])) + pricer.value(priced.columns[0]) == pytest.approx(best)
            assert len(set(priced.columns)) == len(priced.columns)
            for n in priced.columns[1:]:  # HiGHS's other improving solutions: each one prices out
                assert float(pi @ np.array(n)) + pricer.value(n) > data.per_group


def test_the_start_placement_is_the_first_incumbent():
    """A start placement better than the hybrid heuristic's becomes the first incumbent (and an infeasible one
    is refused, naming it): on a tiny instance the brute-force optimum given as the start is returned."""
    from odrp.core.errors import InputError
    from odrp.kinds.latency.exact.classes import better_known
    from odrp.kinds.latency.instance import solution_json

    inst = load(tiny(2, operators=6, supervisors=3))
    best, placement = brute_force(inst)
    start = solution_json(inst, list(placement))
    assert better_known(inst, (best + 1.0, [0] * inst.n_operators), start, "start")[0] == pytest.approx(best)
    assert better_known(inst, (best - 1.0, [0] * inst.n_operators), start, "start")[0] == pytest.approx(best - 1.0)
    outcome = colgen.solve(inst, LatencySettings(colgen=True), None, 1e-6, start_solution=start)
    assert outcome.run.objective == pytest.approx(best, rel=1e-9)
    crowded = solution_json(inst, [0] * inst.n_operators)
    if not evaluate_assignment(inst, [0] * inst.n_operators).feasible:
        with pytest.raises(InputError, match="start"):
            better_known(inst, None, crowded, "start")


def test_multiset_points_are_the_classes_methods_undominated_multisets():
    """The branching's points: every multiset of classes that covers the demand and is not dominated, each
    at the classes method's bound on that many supervisors less F's constant; the dominated ones left out."""
    from odrp.kinds.latency.exact.classes import multisets, supervisor_classes, supervisors_bound, undominated

    inst = load(random_topology(seed=1001, operations=20))
    data = clustering(inst)
    points = colgen.multiset_points(inst, data)
    classes = supervisor_classes(inst)
    _, dominated = undominated(inst, classes)
    assert set(points) | {small for small, _ in dominated} == set(multisets(inst, classes))
    assert not set(points) & {small for small, _ in dominated}
    on = supervisors_bound(inst)
    assert all(bound == pytest.approx(on(sum(c)) - data.constant) for c, bound in points.items())


def test_pairs_allow_by_hand():
    """Items 0 and 1 of demand 1, item 2 of demand 2: the groups each decision keeps."""
    from odrp.core.colgen import pairs_allow

    demands = [1, 1, 2]
    apart, together, together_twins = [(0, 1, False)], [(0, 1, True)], [(0, 2, True)]
    assert pairs_allow(demands, apart, (1, 0, 2)) and pairs_allow(demands, apart, (0, 1, 1))
    assert not pairs_allow(demands, apart, (1, 1, 0))
    assert pairs_allow(demands, together, (1, 1, 0)) and pairs_allow(demands, together, (0, 0, 2))
    assert not pairs_allow(demands, together, (1, 0, 1)) and not pairs_allow(demands, together, (0, 1, 1))
    # b of demand 2: the group of a holds a unit of b; a group of b alone is another group of b
    assert pairs_allow(demands, together_twins, (1, 0, 1)) and pairs_allow(demands, together_twins, (0, 0, 1))
    assert not pairs_allow(demands, together_twins, (1, 1, 0))


@pytest.mark.parametrize(("seed", "operators"), [(1, 6), (6, 7), (7, 7)])
def test_branching_on_pairs_closes_the_gap_inside_a_multiset(seed, operators):
    """Tiny instances whose set-partitioning LP stays fractional on a single multiset: without the
    branching on pairs the bound stays more than 1% below the brute-force optimum; with it the bound
    reaches the optimum's F (the score less its 1e-6 latency tie-break) and the placement is optimal."""
    inst = load(tiny(seed, operators=operators, supervisors=3))
    best, _ = brute_force(inst)
    without = colgen.solve(inst, LatencySettings(colgen=True, colgen_pairs=False), None, 1e-6)
    assert without.run.bound < best * 0.99
    with_pairs = colgen.solve(inst, LatencySettings(colgen=True), None, 1e-6)
    assert with_pairs.stats["branch_closed"]
    assert with_pairs.run.objective == pytest.approx(best, rel=1e-9)
    assert best - 1e-5 <= with_pairs.run.bound <= best + 1e-9


def test_a_node_with_large_duals_converges():
    """A node whose exact pricings all solve to optimality has converged, even where the pricings' safety
    margin (1e-9 of duals near 120, the artificial columns') leaves its bound 2e-7 below the LP: seed 6
    with 6 operators, whose branching stopped there and left the root's bound 1.7328 (5.6% below)."""
    inst = load(tiny(6, operators=6, supervisors=3))
    best, _ = brute_force(inst)
    outcome = colgen.solve(inst, LatencySettings(colgen=True, colgen_pairs=False), None, 1e-6)
    assert outcome.stats["branch_closed"]
    assert best - 1e-5 <= outcome.run.bound <= best + 1e-9


@pytest.mark.parametrize(("seed", "operators"), [(1, 6), (7, 7)])
def test_pricing_on_two_threads_proves_the_same_optimum(seed, operators):
    """The exact pricings of a round on two threads at once (each class its own HiGHS model): the same
    proven optimum as on one thread, the brute force's, branching on pairs included."""
    inst = load(tiny(seed, operators=operators, supervisors=3))
    best, _ = brute_force(inst)
    for threads in (1, 2):
        outcome = colgen.solve(inst, LatencySettings(colgen=True), None, 1e-6, threads=threads)
        assert outcome.stats["pricing_threads"] == threads
        assert outcome.run.objective == pytest.approx(best, rel=1e-9)
        assert best - 1e-5 <= outcome.run.bound <= best + 1e-9


def test_from_the_column_generations_size_two_threads_price_in_parallel_without_the_race():
    """From ``colgen_operators`` on, two threads go to the column generation's pricings, not to a race
    with the classes method (58 operators, 5 s)."""
    inst = load(random_topology(seed=1001, operations=30))
    assert inst.n_operators >= LatencySettings().colgen_operators
    outcome = solve_latency(inst, time_limit=5, threads=2)
    assert outcome.stats["method"] == "colgen" and outcome.stats["pricing_threads"] == 2
    assert outcome.run.bound is not None and outcome.run.objective is not None
