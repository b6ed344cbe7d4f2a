"""Storm's default scheduler (EvenScheduler), on any kind that has a task/node view.

Apache Storm's ``EvenScheduler`` (the default scheduler's core, storm-server
``org.apache.storm.scheduler.EvenScheduler``):

1. **Slots** are sorted by ``sortSlots``: grouped by node (nodes in id order, as Storm's TreeMap
   keeps them), ports ascending within a node, groups stably sorted by their number of free slots,
   largest first, then interleaved: the first port of every node, then the second port, ...
2. The topology uses ``min(topology.workers, free slots)`` slots, the first ones of that order.
3. **Executors** (one task each, the default) are sorted by start task id. Storm numbers tasks
   component by component in sorted component-id order, so this is "sorted by component id, then
   task index".
4. Executor i goes to slot ``i mod slots``: round-robin, regardless of resources.

Readings: ``topology.workers`` defaults to one worker per free slot (Storm's own default of 1
would put every task on one node; the papers compare with Storm spread over the cluster); acker
and system executors are left out. Nothing here knows a problem kind: the kind's
:class:`~odrp.core.taskview.TaskViewAdapter` builds the view and turns the assignment back
into a solution, which the kind's evaluator judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.taskview import Node, Task, TaskView, TaskViewAdapter

Slot = tuple[str, int]
"""A worker slot: (node id, port index); port index 0 is Storm's port 6700."""


def sort_slots(nodes: tuple[Node, ...] | list[Node]) -> list[Slot]:
    """Storm's ``EvenScheduler.sortSlots`` over every slot of ``nodes``."""
    groups = [[(node.id, port) for port in range(node.slots)] for node in sorted(nodes, key=lambda n: n.id)]
    groups.sort(key=len, reverse=True)  # stable: equal sizes keep node-id order
    order: list[Slot] = []
    for port in range(max((len(g) for g in groups), default=0)):
        order.extend(group[port] for group in groups if port < len(group))
    return order


def executor_order(tasks: tuple[Task, ...] | list[Task]) -> list[Task]:
    """Tasks by Storm's start task id: sorted component id, then task index."""
    return sorted(tasks, key=lambda t: (t.component, t.index))


def even_schedule(view: TaskView) -> dict[str, str]:
    """The EvenScheduler's assignment of every task of ``view``: task id -> node id."""
    slots = sort_slots(view.nodes)
    if not slots:
        raise ValueError("no worker slots: every node has slots = 0")
    used = slots[: min(view.workers or len(slots), len(slots))]
    return {task.id: used[i % len(used)][0] for i, task in enumerate(executor_order(view.tasks))}


@dataclass(frozen=True)
class StormDefaultSettings:
    """Settings of ``storm_default``."""

    workers: int | None = field(default=None, metadata={"ge": 1})
    """Storm's ``topology.workers``: slots the topology uses; None: the task view's own (a kind's default)."""


def _storm_default(
    instance: Any,
    *,
    adapter: TaskViewAdapter,
    seed: int = 0,
    time_limit: float | None = None,
    settings: StormDefaultSettings = StormDefaultSettings(),
) -> HeuristicOutcome:
    view = adapter.view(instance)
    if settings.workers is not None:
        view = TaskView(view.tasks, view.nodes, view.edges, settings.workers, view.extra)
    assignment = even_schedule(view)
    return HeuristicOutcome(
        solution=adapter.solution(instance, assignment),
        objective=None,
        stats={"tasks": len(view.tasks), "nodes_used": len(set(assignment.values()))},
    )


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="storm_default",
        kinds=(),
        on_task_view=True,
        run=_storm_default,
        description="Storm's default EvenScheduler: tasks by component id dealt round-robin over interleaved slots",
        scores_itself=False,
        settings=StormDefaultSettings,
    ),
)
