"""The knapsack family's search start: from the run's start placement, and to its end on a qm3dkp.

- Given the run's start placement (``incumbent=``, the fast heuristics' best), the search start's local
  search goes on from it: its value is at least the placement's (the evaluator's), and it equals the
  local search of :mod:`odrp.heuristics.knapsack_search` run independently from the same counts.
- On a qm3dkp the search start runs its rounds to their end (``search_to_end``), not a share of the
  limit: with a zero share it still gives what the full search gives; with ``search_to_end=false`` and
  a zero share it is the placement itself.
- The optimum is unchanged: the default exact run equals brute force.
"""

from __future__ import annotations

import pytest

from odrp.heuristics import knapsack_search as search
from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack.exact import bounds
from odrp.kinds.knapsack.exact.settings import KnapsackSettings
from odrp.kinds.knapsack.exact.solve import solve
from odrp.kinds.knapsack.mapping import counts_of_solution, family_of
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force


def qm3dkp(seed: int, components: int = 4):
    data = gen.qm3dkp(seed=seed, components=components, max_parallelism=2, racks=2, nodes_per_rack=2, load=0.9)
    return KINDS["qm3dkp"].load(data, "<test>")


def independent_search(instance, placement, settings: KnapsackSettings) -> float:
    """The local search from ``placement``'s counts on the family the exact method builds, run here."""
    family = bounds.reduce_capacities(family_of(instance), settings.dp_limit)
    state = search.State(family)
    state.reset(counts_of_solution(instance, family, placement, "<test>"))
    return family.objective(search.local_search(state, 0, settings.search, None))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_search_starts_from_the_run_placement_and_runs_to_its_end(seed):
    instance = qm3dkp(seed, components=8)
    placement = run_method(KINDS["qm3dkp"], instance, "greedy").solution
    given = KINDS["qm3dkp"].evaluate(instance, placement, "<t>").objective
    settings = KnapsackSettings(search_share=0.0)  # no share: only the rule "to its end" gives it time
    outcome = solve(instance, solver="highs", time_limit=30.0, settings=settings, incumbent=placement)
    found = outcome.stats["search_start"]
    assert found >= given - 1e-9
    assert found == pytest.approx(independent_search(instance, placement, settings))


def test_without_the_rule_a_zero_share_leaves_the_placement():
    instance = qm3dkp(2, components=8)
    placement = run_method(KINDS["qm3dkp"], instance, "greedy").solution
    given = KINDS["qm3dkp"].evaluate(instance, placement, "<t>").objective
    settings = KnapsackSettings(search_share=0.0, search_to_end=False)
    outcome = solve(instance, solver="highs", time_limit=30.0, settings=settings, incumbent=placement)
    assert outcome.stats["search_start"] == pytest.approx(given)


@pytest.mark.parametrize("seed", [4, 5])
def test_the_default_run_still_equals_brute_force(seed):
    instance = qm3dkp(seed)
    result = run_method(KINDS["qm3dkp"], instance, "exact", time_limit=60.0)
    assert result.status == "optimal" and result.verified
    assert result.objective == pytest.approx(brute_force("qm3dkp", instance))
