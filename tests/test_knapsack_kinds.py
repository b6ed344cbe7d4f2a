"""The knapsack kinds: evaluators worked out by hand, bad input, and exact = brute force on tiny cases."""

from __future__ import annotations

import pytest

from odrp.core.errors import InputError
from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force
from tests.knapsack_bruteforce import solutions


def load(data):
    return KINDS[data["problem"]].load(data, "<test>")


def score(data, assignment):
    kind = KINDS[data["problem"]]
    return kind.evaluate(kind.load(data, "<test>"), {"assignment": assignment}, "<test>")


# ------------------------------------------------------------------------- evaluators by hand

KP = {"problem": "kp", "profits": [10, 7, 5], "weights": [4, 3, 2], "capacity": 6}
QKP = {"problem": "qkp", "profits": [[1, 4, 0], [4, 2, 3], [0, 3, 5]], "weights": [1, 1, 1], "capacity": 2}
QM3DKP = {
    "problem": "qm3dkp",
    "components": [
        {"id": "A", "parallelism": 2, "cpu": 30, "memory": 400, "bandwidth": 10},
        {"id": "B", "parallelism": 1, "cpu": 50, "memory": 500, "bandwidth": 20},
    ],
    "edges": [{"from": "A", "to": "B", "weight": 10}],
    "nodes": [
        {"id": "n1", "rack": "r1", "cpu": 100, "memory": 1000, "bandwidth": 100},
        {"id": "n2", "rack": "r1", "cpu": 60, "memory": 1000, "bandwidth": 100},
        {"id": "n3", "rack": "r2", "cpu": 100, "memory": 1000, "bandwidth": 100},
    ],
    "penalty": {"cpu": 2, "bandwidth": 1},
}


def test_kp_evaluator():
    ev = score(KP, [0, None, 0])  # load 4 + 2 = 6 <= 6, profit 10 + 5
    assert ev.feasible and ev.objective == 15
    ev = score(KP, [0, 0, None])  # load 4 + 3 = 7 > 6
    assert not ev.feasible and "exceeds capacity" in ev.violations[0]


def test_mkp_gap_mdkp_evaluators():
    mkp = {"problem": "mkp", "profits": [6, 5, 4], "weights": [3, 2, 2], "capacities": [3, 4]}
    assert score(mkp, [0, 1, 1]).objective == 15  # loads 3 and 2 + 2 = 4, every item packed
    assert not score(mkp, [1, 1, 1]).feasible  # load 7 > 4
    gap = {"problem": "gap", "values": [[2, 9], [5, 1]], "weights": [[1, 1], [1, 1]], "capacities": [1, 1]}
    assert score(gap, [0, 1]).objective == 3  # values[0][0] + values[1][1] = 2 + 1
    assert score(gap, [1, 0]).objective == 14  # 5 + 9
    assert not score(gap, [0, 0]).feasible  # load 2 > 1
    assert not score(gap, [0, None]).feasible  # every item must be assigned
    mdkp = {"problem": "mdkp", "profits": [4, 3, 2], "weights": [[2, 1, 1], [1, 2, 2]], "capacities": [3, 3]}
    assert score(mdkp, [0, None, 0]).objective == 6  # dimension loads 2 + 1 = 3 and 1 + 2 = 3
    assert score(mdkp, [0, 0, None]).objective == 7  # loads 3 and 3
    assert not score(mdkp, [0, 0, 0]).feasible  # loads 4 and 5


def test_quadratic_evaluators():
    assert score(QKP, [0, 0, None]).objective == 7  # linear 1 + 2, pair p01 = 4
    assert score(QKP, [None, 0, 0]).objective == 10  # linear 2 + 5, pair p12 = 3
    assert score(QKP, [0, None, 0]).objective == 6  # linear 1 + 5, p02 = 0
    qmkp = {**QKP, "problem": "qmkp", "capacities": [2, 1]}
    del qmkp["capacity"]
    assert score(qmkp, [0, 0, 1]).objective == 12  # linear 1 + 2 + 5, only (0, 1) share a knapsack: + 4
    assert score(qmkp, [1, 0, 0]).objective == 11  # linear 8, pair (1, 2) = 3
    assert not score(qmkp, [1, 1, 0]).feasible  # knapsack 1 holds 2 > 1


def test_qm3dkp_evaluator():
    # A#0 with B#0 on n1: 10 / (2 * 1) = 5 at factor 1; A#1 on n2, same rack as n1: 5 * 0.5 = 2.5.
    # CPU n1 = 30 + 50 = 80 <= 100, n2 = 30 <= 60: no penalty.
    ev = score(QM3DKP, {"A#0": "n1", "A#1": "n2", "B#0": "n1"})
    assert ev.feasible and ev.objective == pytest.approx(7.5)
    assert ev.metrics["task_pairs"] == {"same_node": 1, "same_rack": 1, "apart": 0}
    # A#0 and B#0 on n2: CPU 80 > 60, overload 20 at 2 per point = 40; pair profit 5; A#1 in the other rack: 0.
    ev = score(QM3DKP, {"A#0": "n2", "A#1": "n3", "B#0": "n2"})
    assert ev.objective == pytest.approx(5 - 40)
    # everything on n1: memory 400 + 400 + 500 = 1300 > 1000 is infeasible (memory is hard)
    ev = score(QM3DKP, {"A#0": "n1", "A#1": "n1", "B#0": "n1"})
    assert not ev.feasible and "memory" in ev.violations[0]
    assert not score(QM3DKP, {"A#0": "n1", "B#0": "n1"}).feasible  # A#1 on no node


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**KP, "weights": [1, 2]}, "weights"),
        ({**KP, "capacity": -1}, "capacity"),
        ({**QKP, "profits": [[1, 4, 0], [5, 2, 3], [0, 3, 5]]}, "profits[0][1]"),
        ({**QM3DKP, "edges": [{"from": "A", "to": "C", "weight": 1}]}, "edges[0].to"),
        ({**QM3DKP, "edges": [{"from": "A", "to": "A", "weight": 1}]}, "edges[0]"),
        ({**QM3DKP, "components": [{"id": "A#1", "parallelism": 1}]}, "components[0].id"),
    ],
)
def test_bad_instances_name_the_field(data, field):
    with pytest.raises(InputError) as error:
        load(data)
    assert error.value.field == field


def test_badsolutions_are_input_errors():
    kind = KINDS["kp"]
    with pytest.raises(InputError, match="one knapsack index or null per item"):
        kind.evaluate(load(KP), {"assignment": [0]}, "<s>")
    with pytest.raises(InputError, match=r"knapsack index in 0\.\.0"):
        kind.evaluate(load(KP), {"assignment": [0, 1, None]}, "<s>")
    with pytest.raises(InputError, match="known node"):
        KINDS["qm3dkp"].evaluate(load(QM3DKP), {"assignment": {"A#0": "n9"}}, "<s>")


# ----------------------------------------------------------------- exact equals brute force

GAP_SEEDS = {1: 1, 2: 6, 3: 8, 4: 2, 5: 10}
"""Type C with 3 x 6 is often infeasible (capacity 0.8 * sum / 3); seed 2 is, the others are not."""

TINY = {
    "kp": lambda s: gen.kp(seed=s, items=8),
    "mkp": lambda s: gen.mkp(seed=s, items=6, knapsacks=2),
    "gap": lambda s: gen.gap(seed=GAP_SEEDS[s], agents=3, jobs=6, gap_type="c", sense="max" if s % 2 else "min"),
    "mdkp": lambda s: gen.mdkp(seed=s, items=8, dimensions=2),
    "qkp": lambda s: gen.qkp(seed=s, items=8),
    "qmkp": lambda s: gen.qmkp(seed=s, items=6, knapsacks=2),
    "qm3dkp": lambda s: gen.qm3dkp(seed=s, components=4, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9),
}


def agrees_with_brute_force(result, best):
    if best is None:  # no feasible assignment at all
        assert result.status == "infeasible" and result.objective is None
        return
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == pytest.approx(best, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("kind", sorted(TINY))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exact_equals_brute_force(kind, seed):
    instance = load(TINY[kind](seed))
    agrees_with_brute_force(run_method(KINDS[kind], instance, "exact"), brute_force(kind, instance))


@pytest.mark.parametrize("kind", ["mkp", "gap", "qmkp", "qm3dkp"])
@pytest.mark.parametrize("solver", ["cbc", "cpsat"])
def test_other_solvers_agree_with_brute_force(kind, solver):
    for seed in (4, 5):  # gap seed 4 (generator seed 2) has no feasible assignment: the solvers must say so
        instance = load(TINY[kind](seed))
        agrees_with_brute_force(run_method(KINDS[kind], instance, "exact", solver=solver), brute_force(kind, instance))


@pytest.mark.parametrize("kind", ["qmkp", "qm3dkp"])
@pytest.mark.parametrize(
    "options",
    [
        {"formulation": "compact"},
        {"formulation": "patterns"},
        {"formulation": "compact", "options": {"linearisation": "glover", "capacity_cuts": False}},
        {"formulation": "compact", "options": {"symmetry": False, "tighten": False}},
        {"formulation": "compact", "options": {"search_start": False, "capacity_cuts": True}},
        {"formulation": "patterns", "options": {"search_start": False}},
    ],
)
def test_formulations_agree_with_brute_force(kind, options):
    instance = load(TINY[kind](5))
    result = run_method(
        KINDS[kind], instance, "exact", formulation=options["formulation"], options=options.get("options")
    )
    agrees_with_brute_force(result, brute_force(kind, instance))
    assert result.metrics["method_stats"]["formulation"] == options["formulation"]


def test_hand_example_qm3dkp_optimum():
    # Brute force over the 3^3 placements: the optimum keeps both A tasks in rack r1 beside B.
    instance = load(QM3DKP)
    best = brute_force("qm3dkp", instance)
    for solver in ("highs", "cpsat"):
        result = run_method(KINDS["qm3dkp"], instance, "exact", solver=solver)
        assert result.objective == pytest.approx(best) and result.verified


def test_infeasible_gap_is_a_result():
    data = {"problem": "gap", "values": [[1, 1]], "weights": [[2, 2]], "capacities": [3]}  # 4 > 3
    result = run_method(KINDS["gap"], load(data), "exact")
    assert result.status == "infeasible" and result.objective is None


def test_fractional_profits_with_cpsat_are_scaled_exactly():
    data = {"problem": "kp", "profits": [0.1, 0.2, 0.35], "weights": [1, 1, 1], "capacity": 2}
    result = run_method(KINDS["kp"], load(data), "exact", solver="cpsat")
    assert result.objective == pytest.approx(0.55) and result.verified  # 0.2 + 0.35


def test_cpsat_says_when_it_cannot_scale():
    data = {"problem": "kp", "profits": [2**0.5, 1.0], "weights": [1, 1], "capacity": 1}
    result = run_method(KINDS["kp"], load(data), "exact", solver="cpsat")
    assert result.status == "error" and "scale exactly" in result.message


@pytest.mark.parametrize("kind", sorted(TINY))
def test_general_form_scores_every_assignment_like_the_evaluator(kind):
    """The mapping into the general family is checked on every assignment of a tiny instance:
    feasibility and objective of the family form equal the kind's own evaluator."""
    instance = load(TINY[kind](1))
    family = family_of(instance)
    nodes = {n.id: u for u, n in enumerate(getattr(instance, "nodes", ()))}
    checked = 0
    for solution in solutions(kind, instance):
        evaluation = KINDS[kind].evaluate(instance, solution, "<s>")
        raw = solution["assignment"]
        where = {t: nodes[v] for t, v in raw.items()} if kind == "qm3dkp" else dict(enumerate(raw))
        counts = family.counts_of(where)
        assert (not family.violations(counts)) == evaluation.feasible
        if evaluation.feasible:
            assert family.objective(counts) == pytest.approx(evaluation.objective, rel=1e-9, abs=1e-9)
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("formulation", ["compact", "patterns"])
def test_identical_knapsacks_that_hold_nothing(formulation):
    # capacities 3 and 3 fit neither item (weights 10, 9): only the third knapsack packs, best item 5 alone
    mkp = {"problem": "mkp", "profits": [5, 4], "weights": [10, 9], "capacities": [3, 3, 12]}
    result = run_method(KINDS["mkp"], load(mkp), "exact", formulation=formulation)
    assert result.status == "optimal" and result.objective == 5
