"""Heuristics, one module per family, and the registry: name -> the kinds it solves.

A heuristic is a function ``run(instance, *, seed, time_limit, **options) -> HeuristicOutcome``;
it must be deterministic for a given seed (and, where it has one, a given iteration budget).
The caller (:func:`odrp.methods.run_method`) times it and has the problem's evaluator re-score
its solution. Each module registers its heuristics with :func:`register` when imported; adding a
family is one line in ``MODULES``. Compiled instances carry ``kind`` (the kind's name), so one
heuristic can serve several kinds.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MODULES: tuple[str, ...] = (
    "heuristics.storm",
    "heuristics.odrp",
    "heuristics.pathmap",
    "heuristics.latency",
    "heuristics.rstorm",
    "heuristics.storm_ras",
    "heuristics.knapsack",
    "heuristics.throughput",
)


@dataclass
class HeuristicOutcome:
    """A heuristic's answer: its solution JSON (None if it found none) and its own objective.

    ``bound`` is for methods that also prove a bound on the optimum (a relaxation, or an exhaustive
    enumeration that ran to completion): a lower bound for a minimisation, an upper bound for a
    maximisation; an infinite bound (+inf for min, -inf for max) proves the instance infeasible.
    """

    solution: dict[str, Any] | None
    objective: float | None
    stats: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    bound: float | None = None


@dataclass(frozen=True)
class Heuristic:
    """A registered heuristic.

    ``scores_itself`` is False only for schedulers that optimise nothing (Storm's round-robin
    EvenScheduler, R-Storm's greedy): they report no objective of their own, so there is nothing
    for the evaluator to contradict, and their Result carries the evaluator's score with
    ``verified`` meaning "the evaluator found the placement feasible". Every heuristic that
    computes a score must report it and is verified against the evaluator's.
    """

    name: str
    kinds: tuple[str, ...]
    run: Callable[..., HeuristicOutcome]
    description: str
    randomized: bool = False
    scores_itself: bool = True


REGISTRY: dict[str, Heuristic] = {}
_loaded = False


def register(heuristic: Heuristic) -> Heuristic:
    if heuristic.name in REGISTRY or heuristic.name == "exact":
        raise ValueError(f"method name {heuristic.name!r} is taken")
    REGISTRY[heuristic.name] = heuristic
    return heuristic


def registry() -> dict[str, Heuristic]:
    """Every heuristic, after importing every module in ``MODULES``."""
    global _loaded
    if not _loaded:
        _loaded = True
        for module in MODULES:
            importlib.import_module(module)
    return REGISTRY
