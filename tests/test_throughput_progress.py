"""The exact throughput method reports what it finds as it finds it, and takes the run's incumbent.

Every incumbent it reports (:mod:`odrp.core.progress`) is a placement the evaluator accepts and each improves
on the last; every bound it reports is at least the brute-force optimum (tiny instances, every placement
scored by the evaluator: :func:`tests.test_throughput_exact.brute_force`). The ``incumbent`` keyword (the run's
fast heuristics' best placement) is the search's start when it beats the search's own.
"""

from __future__ import annotations

import pytest

from odrp.core import progress
from odrp.kinds.throughput.evaluator import evaluate
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.solve import solve
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_throughput_exact import brute_force, tiny

THROUGHPUT = KINDS["throughput"]


def _watched(inst, **kwargs):
    messages: list[tuple[str, object]] = []
    with progress.watching(evaluate, inst, "max", messages.append):
        outcome = solve(inst, **kwargs)
    incumbents = [payload[1] for kind, payload in messages if kind == "incumbent"]
    bounds = [payload for kind, payload in messages if kind == "bound"]
    return outcome, incumbents, bounds


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("formulation", ["patterns", "levels"])
def test_reports_are_improving_placements_and_bounds_that_keep_the_brute_force_optimum(seed, formulation):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    outcome, incumbents, bounds = _watched(inst, formulation=formulation, settings=ThroughputSettings(processes=1))
    assert outcome.run.status == "optimal" and outcome.run.objective == pytest.approx(optimum, rel=1e-6)
    assert incumbents and incumbents == sorted(incumbents) and len(set(incumbents)) == len(incumbents)
    assert incumbents[-1] == pytest.approx(optimum, rel=1e-6)
    assert bounds and all(b >= optimum * (1 - 1e-9) for b in bounds)
    assert bounds == sorted(bounds, reverse=True)


@pytest.mark.parametrize("seed", [0, 3])
def test_with_counts_fixed_no_bound_is_reported(seed):
    """A bound of the packing at fixed counts (mkp_view) is no bound of the problem."""
    inst = tiny(seed)
    fixed = {c: 1 for c in range(inst.n_components)}
    _, incumbents, bounds = _watched(inst, fixed_instances=fixed, settings=ThroughputSettings(processes=1))
    assert bounds == []
    assert all(value <= brute_force(inst)[0] * (1 + 1e-9) for value in incumbents)


@pytest.mark.parametrize("seed", [0, 3, 6])
def test_the_runs_incumbent_starts_the_search_when_it_is_better(seed):
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    start = run_method(THROUGHPUT, inst, "storm_default")
    assert start.verified
    outcome = solve(inst, incumbent=start.solution, settings=ThroughputSettings(search_start=False, processes=1))
    assert outcome.run.status == "optimal" and outcome.run.objective == pytest.approx(optimum, rel=1e-6)
    taken = outcome.stats["incumbent"]
    assert taken["accepted"] is True and taken["objective"] == pytest.approx(start.objective, rel=1e-12)


def test_an_infeasible_incumbent_is_ignored_and_a_warm_start_is_offered_first():
    inst = tiny(1)
    optimum, _ = brute_force(inst)
    everything = {"instances": {c: {m: 50 for m in inst.machines} for c in inst.components}}
    outcome = solve(inst, incumbent=everything, settings=ThroughputSettings(processes=1))
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6) and "incumbent" not in outcome.stats
    weak = run_method(THROUGHPUT, inst, "storm_default")
    best = run_method(THROUGHPUT, inst, "exact")
    quiet = ThroughputSettings(processes=1, search_start=False)
    outcome = solve(inst, warm_start=best.solution, incumbent=weak.solution, settings=quiet)
    assert outcome.stats["warm_start"]["accepted"] is True
    assert outcome.stats["incumbent"]["accepted"] is (weak.objective > best.objective)
