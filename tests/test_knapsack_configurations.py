"""The configuration bound of QM3DKP (odrp.kinds.knapsack.exact.configurations) against brute force.

The bound must lie at or above the optimum that brute force finds (every placement scored by the
kind's evaluator), on identical and on unequal nodes, with and without overloads, with a rack factor
below, at and above the node factor; each exact pricing must equal the best configuration found by
enumeration; and on a hand example the bound is the optimum.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from odrp.core.colgen import GenerationSettings
from odrp.core.errors import InputError
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.exact import configurations
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import UnknownMethod, run_method
from tests.knapsack_bruteforce import optimum as brute_force


def load(data):
    return KINDS[data["problem"]].load(data, "<test>")


def unequal_nodes(seed: int, node: float, rack: float) -> dict:
    """Four components of up to two tasks on three nodes of unequal capacities in two racks."""
    rng = random.Random(seed)
    components = [
        {
            "id": f"c{i}",
            "parallelism": rng.randint(1, 2),
            "cpu": rng.randint(10, 50),
            "memory": rng.choice([256, 512, 768]),
            "bandwidth": rng.randint(5, 30),
        }
        for i in range(4)
    ]
    edges = [
        {"from": f"c{i}", "to": f"c{j}", "weight": rng.randint(10, 100)} for i, j in [(0, 1), (1, 2), (0, 3), (2, 3)]
    ]
    nodes = [
        {
            "id": f"n{k}",
            "rack": f"r{k // 2}",
            "cpu": rng.randint(40, 100),
            "memory": rng.choice([1024, 1536, 2048]),
            "bandwidth": rng.randint(20, 60),
        }
        for k in range(3)
    ]
    return {
        "problem": "qm3dkp",
        "components": components,
        "edges": edges,
        "nodes": nodes,
        "colocation": {"node": node, "rack": rack},
    }


def bound_of(instance) -> float:
    family = family_of(instance)
    return configurations.configuration_bound(family, None, None, GenerationSettings(exact_time_limit=None)).bound


CASES = [
    *[
        (f"generated-{s}", gen.qm3dkp(seed=s, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
        for s in range(1, 7)
    ],
    *[
        (f"unequal-{s}-{node}-{rack}", unequal_nodes(s, node, rack))
        for s in (1, 2)
        for node, rack in [(1.0, 0.5), (1.0, 0.0), (0.5, 1.0), (1.0, 1.0)]
    ],
]


@pytest.mark.parametrize("data", [d for _, d in CASES], ids=[name for name, _ in CASES])
def test_the_bound_is_at_least_the_brute_force_optimum(data):
    instance = load(data)
    best = brute_force("qm3dkp", instance)
    assert best is not None
    bound = bound_of(instance)
    assert bound >= best - 1e-6 * max(1.0, abs(best))


def test_the_bound_is_the_optimum_of_a_hand_example():
    # A (1 task) and B (1 task), one edge of weight 10, two nodes of one rack that each hold both.
    # Together on one node: 10 x 1.0 = 10, the optimum; apart in the rack: 10 x 0.5. The knapsack
    # part prices the pair at 1.0 - 0.5 = 0.5 per unit (5 together), the rack part at 0.5 (5 in one
    # rack): 5 + 5 = 10, the optimum.
    data = {
        "problem": "qm3dkp",
        "components": [{"id": "A", "memory": 1}, {"id": "B", "memory": 1}],
        "edges": [{"from": "A", "to": "B", "weight": 10}],
        "nodes": [{"id": f"n{k}", "rack": "r", "cpu": 1, "memory": 2, "bandwidth": 1} for k in range(2)],
    }
    assert bound_of(load(data)) == pytest.approx(10.0)


def enumerated_best(pricer: configurations.PairPricer, t: int, pi: np.ndarray) -> float:
    """max over every configuration of type t that fits: value + pi . counts (the empty one included)."""
    b = pricer.types[t]
    best = 0.0
    for counts in itertools.product(*[range(int(u) + 1) for u in b.upper]):
        if pricer.fits(t, counts):
            best = max(best, pricer.value(t, counts) + float(pi @ np.array(counts)))
    return best


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_exact_pricing_equals_enumeration(seed):
    check_pricing(seed)


def test_the_exact_pricing_holds_after_a_run_on_another_thread_count():
    """HiGHS refuses a run whose thread count differs from that of its running scheduler; the pricing read
    that refusal as a proof that nothing prices out (least reduced cost 0) until it reset the scheduler."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.addVar(0, 1)
    h.changeColCost(0, -1)
    assert run_highspy(h, "min", threads=3).objective == -1  # the scheduler now runs 3 threads
    check_pricing(1)


def check_pricing(seed: int) -> None:
    """The exact pricing of every type of a tiny instance, at random duals, against enumeration."""
    instance = load(gen.qm3dkp(seed=seed, components=5, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    node_types, group_types = configurations.bin_types(family_of(instance))
    rng = np.random.default_rng(seed)
    for types in (node_types, group_types):
        pricer = configurations.PairPricer(types)
        for t in range(len(types)):
            for _ in range(3):
                pi = rng.uniform(-60, 20, size=len(types[t].upper))
                priced = pricer.exact(t, pi, 0.0, None)
                best = enumerated_best(pricer, t, pi)
                assert priced.least_reduced_cost == pytest.approx(-best, abs=1e-6)
                column = priced.columns[0]
                assert pricer.fits(t, column)
                assert pricer.value(t, column) + float(pi @ np.array(column)) == pytest.approx(best, abs=1e-6)
                for found in pricer.heuristic(t, pi, 0.0, list(types[t].upper), []):  # never above the optimum
                    assert pricer.fits(t, found)
                    assert pricer.value(t, found) + float(pi @ np.array(found)) <= best + 1e-6


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_formulation_is_never_above_its_bound_nor_the_bound_below_brute_force(seed):
    instance = load(gen.qm3dkp(seed=seed, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    best = brute_force("qm3dkp", instance)
    result = run_method(KINDS["qm3dkp"], instance, "exact", formulation="configurations", starts=False)
    assert result.verified and result.objective <= best + 1e-6
    assert result.bound >= best - 1e-6
    assert result.metrics["method_stats"]["formulation"] == "configurations"
    if result.status == "optimal":  # proven only where the incumbent meets the bound
        assert result.objective == pytest.approx(best) and result.bound == pytest.approx(best)
    else:
        assert result.bound > result.objective


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_default_races_it_and_equals_brute_force(seed):
    instance = load(gen.qm3dkp(seed=seed, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    result = run_method(KINDS["qm3dkp"], instance, "exact", threads=2)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(brute_force("qm3dkp", instance))
    assert [r["formulation"] for r in result.metrics["method_stats"]["race"]] == ["auto", "configurations"]


def test_it_is_raced_beside_highs_only():
    # a second opinion proves with its own solver: no HiGHS search beside CBC
    instance = load(gen.qm3dkp(seed=1, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    result = run_method(KINDS["qm3dkp"], instance, "exact", solver="cbc", threads=2)
    assert result.status == "optimal" and "race" not in result.metrics["method_stats"]


def test_the_formulation_is_refused_where_it_does_not_apply():
    instance = load(gen.qkp(seed=1, items=8))
    with pytest.raises(UnknownMethod, match="formulation"):
        run_method(KINDS["qkp"], instance, "exact", formulation="configurations")
    qm3dkp = load(gen.qm3dkp(seed=1, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    with pytest.raises(InputError, match="highs"):
        run_method(KINDS["qm3dkp"], qm3dkp, "exact", formulation="configurations", solver="cbc")


def test_the_bound_is_skipped_when_its_pricing_model_is_over_the_memory_budget():
    # One component of 60 tasks beside another of 60, memory 1 each, on two nodes that hold all of them:
    # the exact pricing of one node has 120 binaries and 3 600 products (the estimate of model_size),
    # over a budget of a few kilobytes, while the compact model (counts, not copies) is far smaller.
    from odrp.core.memory import estimate, memory_budget

    data = {
        "problem": "qm3dkp",
        "components": [{"id": "A", "parallelism": 60, "memory": 1}, {"id": "B", "parallelism": 60, "memory": 1}],
        "edges": [{"from": "A", "to": "B", "weight": 36}],
        "nodes": [{"id": f"n{k}", "rack": "r", "cpu": 1, "memory": 120, "bandwidth": 1} for k in range(2)],
        "penalty": {"cpu": 0, "bandwidth": 0},
    }
    instance = load(data)
    pricer = configurations.PairPricer(configurations.bin_types(family_of(instance))[0])
    assert pricer.model_size(0)[0] == 60 + 60 + 60 * 60
    compact = 10 * estimate(2 * 2 + 2 * 61, 200, 2000)  # what the compact model of 2 counts x 2 nodes needs
    with memory_budget(compact):
        result = run_method(KINDS["qm3dkp"], instance, "exact", formulation="configurations", starts=False)
    # every task pair on one node: 60 x 60 pairs x 36 / 3600 = 36, which the local search finds, unproven
    assert result.verified and result.objective == pytest.approx(36.0)
    assert result.bound is None and result.status == "feasible"  # no time limit, no bound
    assert "skipped" in result.metrics["method_stats"]["configurations"]


def test_a_warm_start_is_its_first_incumbent_and_recorded():
    instance = load(gen.qm3dkp(seed=2, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9))
    given = run_method(KINDS["qm3dkp"], instance, "greedy").solution
    result = run_method(
        KINDS["qm3dkp"], instance, "exact", formulation="configurations", warm_start=given, starts=False
    )
    record = result.metrics["method_stats"]["warm_start"]
    assert record["accepted"] and record["objective"] == pytest.approx(
        KINDS["qm3dkp"].evaluate(instance, given, "<t>").objective
    )
    assert result.verified and result.objective >= record["objective"] - 1e-9
