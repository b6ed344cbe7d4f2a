"""What a method other than the exact one is: a heuristic's declaration and its answer.

A heuristic is a function ``run(instance, *, seed, time_limit, settings) -> HeuristicOutcome``, where
``settings`` is an instance of the frozen dataclass the heuristic declares (:mod:`odrp.core.settings`;
a heuristic without settings declares none and takes none). It must be deterministic for a given
seed (and, where it has one, a given iteration budget). The caller (:func:`odrp.run.run_method`)
times it and has the kind's evaluator re-score its solution. Heuristic modules declare their
heuristics in a module-level tuple ``HEURISTICS``; the registry (:mod:`odrp.registry`) is the one
place that collects them. Compiled instances carry ``kind`` (the kind's name), so one heuristic can
serve several kinds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class HeuristicOutcome:
    """A heuristic's answer: its solution JSON (None if it found none) and its own objective.

    ``objective`` None means "the evaluator scores it": the Result's objective is the evaluator's, and
    ``verified`` means the evaluator found the solution feasible. A heuristic that computes an objective
    should report it, so that the evaluator checks it (a disagreement leaves the row unverified).

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
    """A heuristic as the registry lists it.

    ``scores_itself`` is False only for schedulers that optimise nothing (Storm's round-robin
    EvenScheduler, R-Storm's greedy): they report no objective of their own, so there is nothing
    for the evaluator to contradict, and their Result carries the evaluator's score with
    ``verified`` meaning "the evaluator found the placement feasible". An outcome whose
    ``objective`` is None is treated the same way, whatever ``scores_itself`` says. Every heuristic
    that computes a score should report it and is verified against the evaluator's.

    ``settings`` is the frozen dataclass of the heuristic's tunables (None: it has none); the
    caller builds it from ``--param`` or a grid's ``options:`` and passes it as ``settings=``.

    ``on_task_view`` marks Storm's schedulers, which see any kind through its task view: they apply
    to every kind that has one (the registry fills in ``kinds``), and ``run`` receives the kind's
    :class:`~odrp.core.taskview.TaskViewAdapter` as the keyword ``adapter``.
    """

    name: str
    kinds: tuple[str, ...]
    run: Callable[..., HeuristicOutcome]
    description: str
    randomized: bool = False
    scores_itself: bool = True
    on_task_view: bool = False
    settings: type | None = None
