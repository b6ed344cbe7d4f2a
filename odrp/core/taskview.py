"""The task/node view of a placement problem: what Storm's schedulers see.

Storm schedules *tasks* (instances of a topology's components, named ``<component>#<k>``) onto
*nodes* (supervisors, grouped in racks, each with worker slots and CPU, memory and bandwidth
capacities). Several problem kinds are placements of this shape: ``qm3dkp`` (R-Storm), ``throughput``
(instances of components on machines), ``latency`` (operators on supervisors) and ``odrp`` with one
replica per operator (ODP). A kind that can be seen this way gives a :class:`TaskViewAdapter`:
``view(instance)`` builds the :class:`TaskView`, ``solution(instance, assignment)`` turns a
``{task id: node id}`` assignment back into the kind's solution JSON, which the kind's evaluator
then judges. The Storm schedulers in :mod:`odrp.heuristics.storm` (and R-Storm, Storm's resource-aware
strategy) are written once against this view and apply to every such kind.

Demands and capacities are in the kind's own units (R-Storm: CPU points and MB; a kind without
a dimension leaves it at 0 demand and infinite capacity). ``slots`` is Storm's number of worker
ports per supervisor (``supervisor.slots.ports``, four by default).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_SLOTS = 4
"""Storm's default ``supervisor.slots.ports``: 6700, 6701, 6702, 6703."""


@dataclass(frozen=True)
class Task:
    """One task (executor) of a component: its demands per instance."""

    component: str
    index: int
    cpu: float = 0.0
    memory: float = 0.0
    bandwidth: float = 0.0

    @property
    def id(self) -> str:
        return task_id(self.component, self.index)


@dataclass(frozen=True)
class Node:
    """A supervisor (worker node): rack, worker slots and capacities."""

    id: str
    rack: str = "rack0"
    slots: int = DEFAULT_SLOTS
    cpu: float = math.inf
    memory: float = math.inf
    bandwidth: float = math.inf
    max_tasks: int | None = None


@dataclass(frozen=True)
class TaskView:
    """Tasks, nodes and the component graph of one instance."""

    tasks: tuple[Task, ...]
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, str, float], ...] = ()
    """Component-level streams ``(from, to, weight)``; weight 1 when the kind has none."""
    workers: int | None = None
    """Storm's ``topology.workers``; None means one worker per available slot."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def components(self) -> tuple[str, ...]:
        """Component ids in the order their tasks first appear."""
        return tuple(dict.fromkeys(t.component for t in self.tasks))

    @property
    def spouts(self) -> tuple[str, ...]:
        """Components with no incoming edge, in component order."""
        targets = {b for _, b, _ in self.edges}
        return tuple(c for c in self.components if c not in targets)


@dataclass(frozen=True)
class TaskViewAdapter:
    """How a problem kind is seen as tasks on nodes, and how an assignment comes back."""

    view: Callable[[Any], TaskView]
    solution: Callable[[Any, dict[str, str]], dict[str, Any]]


def task_id(component: str, index: int) -> str:
    """Tasks are named ``<component>#<k>``, k from 0 (the knapsack issue's convention)."""
    return f"{component}#{index}"
