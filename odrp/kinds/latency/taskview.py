"""How Storm's schedulers see this kind: its tasks, nodes and edges (:mod:`odrp.core.taskview`)."""

from __future__ import annotations

from typing import Any

from odrp.core.taskview import Node, Task, TaskView, task_id
from odrp.kinds.latency.instance import LatencyInstance

# ----------------------------------------------------------------------------- the task view


def task_view(instance: LatencyInstance) -> TaskView:
    """Each operator is one component with one task; supervisors are nodes with usable capacity."""
    tasks = tuple(
        Task(component=op, index=0, cpu=instance.cpu[i], memory=instance.memory[i])
        for i, op in enumerate(instance.operators)
    )
    nodes = tuple(
        Node(id=sup, cpu=instance.cpu_limit[u], memory=instance.memory_limit[u])
        for u, sup in enumerate(instance.supervisors)
    )
    edges = tuple(
        (instance.operators[i], instance.operators[j], instance.events[e]) for e, (i, j) in enumerate(instance.edges)
    )
    return TaskView(tasks=tasks, nodes=nodes, edges=edges)


def task_solution(instance: LatencyInstance, assignment: dict[str, str]) -> dict[str, Any]:
    """``{task id: node id}`` (tasks ``<operator>#0``) back to the solution JSON."""
    return {"assignment": {op: assignment[task_id(op, 0)] for op in instance.operators}}
