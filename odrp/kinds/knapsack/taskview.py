"""How Storm's schedulers see a QM3DKP instance: its tasks, nodes and edges (:mod:`odrp.core.taskview`)."""

from __future__ import annotations

from typing import Any

from odrp.core.taskview import Node, Task, TaskView
from odrp.kinds.knapsack.qm3dkp import Qm3dkpInstance, solution_json

# ------------------------------------------------------------------------------- task view


def task_view(inst: Qm3dkpInstance) -> TaskView:
    """Tasks with their demands, nodes with rack and capacities, component edges with their weights."""
    tasks = tuple(
        Task(c.id, k, cpu=c.cpu, memory=c.memory, bandwidth=c.bandwidth)
        for c in inst.components
        for k in range(c.parallelism)
    )
    nodes = tuple(Node(n.id, rack=n.rack, cpu=n.cpu, memory=n.memory, bandwidth=n.bandwidth) for n in inst.nodes)
    edges = tuple((inst.components[e.source].id, inst.components[e.target].id, e.weight) for e in inst.edges)
    return TaskView(tasks=tasks, nodes=nodes, edges=edges)


def task_solution(inst: Qm3dkpInstance, assignment: dict[str, str]) -> dict[str, Any]:
    return solution_json(assignment)
