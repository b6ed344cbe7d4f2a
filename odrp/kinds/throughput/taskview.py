"""How Storm's schedulers see this kind: its tasks, nodes and edges (:mod:`odrp.core.taskview`)."""

from __future__ import annotations

from typing import Any

from odrp.core.taskview import Node, Task, TaskView
from odrp.kinds.throughput.instance import ThroughputInstance

# ----------------------------------------------------------------------------- the task view


def task_view(inst: ThroughputInstance) -> TaskView:
    """Tasks: ``parallelism`` per component; nodes: the machines (task limits carried over)."""
    tasks = tuple(Task(comp, k) for c, comp in enumerate(inst.components) for k in range(inst.parallelism[c]))
    nodes = tuple(Node(m, max_tasks=inst.max_tasks[w]) for w, m in enumerate(inst.machines))
    edges = tuple((inst.components[a], inst.components[b], 1.0) for a, b in inst.edges)
    return TaskView(tasks=tasks, nodes=nodes, edges=edges)


def task_solution(inst: ThroughputInstance, assignment: dict[str, str]) -> dict[str, Any]:
    """Instance counts per machine from a ``{task id: machine id}`` assignment."""
    out: dict[str, dict[str, int]] = {comp: {} for comp in inst.components}
    for task, machine in assignment.items():
        comp = task.rsplit("#", 1)[0]
        out[comp][machine] = out[comp].get(machine, 0) + 1
    return {"instances": out}
