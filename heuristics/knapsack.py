"""A greedy and an iterated local search for every kind of the knapsack family.

Both work on the general form (:class:`odrp.kinds.knapsack.family.Family`), so they apply to kp,
mkp, gap, mdkp, qkp, qmkp and qm3dkp alike, and report the family's objective of their counts
(which the kind's evaluator then checks). The search itself is :mod:`odrp.heuristics.knapsack_search`
(shared with the exact method's warm start):

- ``greedy``: best gain per room taken, or MTHG's regret order where every item must be placed;
- ``local_search``: iterated local search from the greedy solution (settings:
  :class:`~odrp.heuristics.knapsack_search.LocalSearchSettings`, ``--param iterations=20``,
  ``strength`` and ``exchange_limit``), deterministic for a given seed; ``time_limit`` ends it early.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.heuristics.knapsack_search import LocalSearchSettings, State, construct, local_search
from odrp.kinds.knapsack.family import KINDS, Family
from odrp.kinds.knapsack.mapping import family_of, solution_of

# ------------------------------------------------------------------------------- registration


def _outcome(instance: Any, f: Family, counts: np.ndarray, stats: dict[str, Any]) -> HeuristicOutcome:
    return HeuristicOutcome(solution_of(instance, f, counts), f.objective(counts), stats)


def _greedy(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    f = family_of(instance)
    state = State(f)
    failed = construct(state, deadline)
    if failed is not None:
        return HeuristicOutcome(None, None, {}, f"greedy: {failed}")
    return _outcome(instance, f, state.copy_counts(), {"placed": int(state.n.sum())})


def _local_search(
    instance: Any,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: LocalSearchSettings | None = None,
) -> HeuristicOutcome:
    settings = settings or LocalSearchSettings()
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    f = family_of(instance)
    state = State(f)
    failed = construct(state, deadline)
    if failed is not None:
        return HeuristicOutcome(None, None, {}, f"local_search: its greedy start failed: {failed}")
    start = f.objective(state.n)
    counts = local_search(state, seed, settings, deadline)
    stats = {"greedy_objective": start, "iterations": settings.iterations, "strength": settings.kick_size(f)}
    return _outcome(instance, f, counts, stats)


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="greedy",
        kinds=KINDS,
        run=_greedy,
        description="knapsack family: best gain per room taken, or regret order when every item must be placed",
    ),
    Heuristic(
        name="local_search",
        kinds=KINDS,
        run=_local_search,
        description="knapsack family: iterated local search (add, drop, shift, swap, exchange) from the greedy",
        randomized=True,
        settings=LocalSearchSettings,
    ),
)
