"""Brute force for tiny knapsack-family instances: enumerate every assignment and ask the evaluator.

Independent of the models and of the general family form: it only builds solution JSONs and keeps
the best feasible score the kind's own evaluator gives.
"""

from __future__ import annotations

import itertools
from typing import Any

from odrp.registry import KINDS


def optimum(kind_name: str, instance: Any) -> float | None:
    """The best evaluator score over every assignment (None when none is feasible)."""
    kind = KINDS[kind_name]
    better = (lambda a, b: a > b) if getattr(instance, "sense", kind.sense) == "max" else (lambda a, b: a < b)
    best = None
    for solution in solutions(kind_name, instance):
        evaluation = kind.evaluate(instance, solution, "<brute force>")
        if evaluation.feasible and (best is None or better(evaluation.objective, best)):
            best = evaluation.objective
    return best


def solutions(kind_name: str, instance: Any):
    if kind_name == "qm3dkp":
        tasks, nodes = instance.tasks, [n.id for n in instance.nodes]
        for choice in itertools.product(nodes, repeat=len(tasks)):
            yield {"assignment": dict(zip(tasks, choice, strict=True))}
        return
    options = [None, *range(instance.n_knapsacks)]
    for choice in itertools.product(options, repeat=instance.n_items):
        yield {"assignment": list(choice)}
