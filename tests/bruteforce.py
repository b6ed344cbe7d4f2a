"""Brute force for tiny instances: enumerate every placement and keep the best evaluator score.

Independent of the models: it only enumerates solutions and asks the evaluator. Used by tests to
check exact methods.
"""

from __future__ import annotations

import itertools
from collections import Counter

from odrp.kinds.replication.evaluator import evaluate_placement
from odrp.kinds.replication.instance import OdrpInstance


def odrp_optimum(inst: OdrpInstance) -> tuple[float | None, int]:
    """(best F over every combination of multisets, number of feasible placements); None if none."""
    choices = []
    for i in range(inst.n_operators):
        options = []
        for k in range(1, inst.max_replicas[i] + 1):
            for ms in itertools.combinations_with_replacement(inst.candidates[i], k):
                options.append(dict(Counter(ms)))
        choices.append(options)
    best = None
    feasible = 0
    for placement in itertools.product(*choices):
        ev = evaluate_placement(inst, list(placement))
        if ev.feasible:
            feasible += 1
            if best is None or ev.objective > best:
                best = ev.objective
    return best, feasible
