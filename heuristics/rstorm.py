"""R-Storm (Peng, Hosseini, Hong, Farivar, Campbell, Middleware 2015, section 4), on any task/node view.

- **Task selection** (Algorithms 2 and 3): a breadth-first traversal of the component graph from the
  spouts gives an order of components in which neighbours follow each other closely; tasks are then
  taken one per component in that order, round after round, until every task is ordered.
- **Node selection** (Algorithm 4): the first task goes to the *reference node*, the node with the
  most available resources in the rack with the most available resources. Every later task goes to
  the node, among those with enough available memory (the hard constraint, H_theta >= H_tau), at the
  smallest distance

      sqrt( w_m ((m_tau - m_theta) / M)^2 + w_c ((c_tau - c_theta) / C)^2 + w_b (net(ref, theta) / 3)^2 )

  with m_theta, c_theta the node's *available* memory and CPU, net(ref, theta) = 1 on the reference
  node, 2 in its rack, 3 in another rack, and the node's available resources then reduced by the
  task's demands. CPU (and bandwidth) may be overcommitted: they are soft.

Readings where the paper is vague (our choices):

- BFS: from each spout in component order, neighbours = children then parents (the edge list's
  order); components the traversal misses (no spout reaches them) follow in component order.
- "Most resources": available CPU, memory and bandwidth, each divided by the largest capacity of
  that resource among the nodes, summed (a rack: summed over its nodes); ties go to the first rack
  and node in the view's order. Resources with an infinite capacity (a kind without them) are left
  out of this sum and of the distance.
- The distance normalises each axis (M, C: the largest memory and CPU capacity; 3: the largest
  network distance) so that the weights (``weight_memory``, ``weight_cpu``, ``weight_network``,
  default 1) compare like with like, which is the paper's stated reason for weights. The paper's
  pseudo-code adds ``weight_b * networkDistance`` unsquared under the root; we square it, as the text's
  "Euclidean distance" between the task's vector and the node's (b_theta = the network distance) says.
- A node's ``max_tasks``, when the view sets it, is hard like memory. Ties go to the first node.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.taskview import Node, Task, TaskView, TaskViewAdapter

RESOURCES = ("cpu", "memory", "bandwidth")


def bfs_components(view: TaskView) -> list[str]:
    """Algorithm 2: components in breadth-first order from the spouts (children, then parents)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(view.components)
    graph.add_edges_from((a, b) for a, b, _ in view.edges)

    def neighbours(comp: str) -> Iterator[str]:
        return itertools.chain(graph.successors(comp), graph.predecessors(comp))

    order: list[str] = []
    for root in (*view.spouts, *view.components):
        if root not in order:  # a component not reached from an earlier root starts a traversal of its own
            order += [root, *(comp for _, comp in nx.generic_bfs_edges(graph, root, neighbours))]
    return order


def task_ordering(view: TaskView) -> list[Task]:
    """Algorithm 3: one task of each component in BFS order, round after round."""
    queues = {
        c: deque(sorted((t for t in view.tasks if t.component == c), key=lambda t: t.index)) for c in view.components
    }
    ordering: list[Task] = []
    components = bfs_components(view)
    while len(ordering) < len(view.tasks):
        for comp in components:
            if queues[comp]:
                ordering.append(queues[comp].popleft())
    return ordering


def _finite(nodes: tuple[Node, ...], resource: str) -> bool:
    return all(math.isfinite(getattr(n, resource)) for n in nodes)


class Cluster:
    """Available resources of every node while tasks are being placed."""

    def __init__(self, view: TaskView) -> None:
        self.nodes = view.nodes
        self.resources = tuple(r for r in RESOURCES if _finite(view.nodes, r))
        self.scale = {r: max((getattr(n, r) for n in view.nodes), default=1.0) or 1.0 for r in self.resources}
        self.available = {n.id: {r: getattr(n, r) for r in RESOURCES} for n in view.nodes}
        self.tasks_on = {n.id: 0 for n in view.nodes}

    def amount(self, node: Node) -> float:
        """A node's available resources, each axis divided by its largest capacity, summed."""
        return sum(self.available[node.id][r] / self.scale[r] for r in self.resources)

    def fits(self, task: Task, node: Node) -> bool:
        if node.max_tasks is not None and self.tasks_on[node.id] >= node.max_tasks:
            return False
        return self.available[node.id]["memory"] >= task.memory

    def place(self, task: Task, node: Node) -> None:
        for r in RESOURCES:
            self.available[node.id][r] -= getattr(task, r)
        self.tasks_on[node.id] += 1


def reference_node(cluster: Cluster) -> Node:
    """The node with the most available resources in the rack with the most available resources."""
    racks = list(dict.fromkeys(n.rack for n in cluster.nodes))
    rack = max(racks, key=lambda r: (sum(cluster.amount(n) for n in cluster.nodes if n.rack == r), -racks.index(r)))
    in_rack = [n for n in cluster.nodes if n.rack == rack]
    return max(in_rack, key=lambda n: (cluster.amount(n), -in_rack.index(n)))


def network_distance(ref: Node, node: Node) -> int:
    """1 on the reference node, 2 in its rack, 3 in another rack (the issue's reading of Algorithm 4)."""
    if node.id == ref.id:
        return 1
    return 2 if node.rack == ref.rack else 3


def rstorm_schedule(view: TaskView, weights: dict[str, float] | None = None) -> dict[str, str]:
    """Algorithm 1: every task of ``view`` on a node; raises ValueError when a task fits nowhere."""
    w = {"cpu": 1.0, "memory": 1.0, "network": 1.0, **(weights or {})}
    cluster = Cluster(view)
    ref = reference_node(cluster)
    assignment: dict[str, str] = {}
    for position, task in enumerate(task_ordering(view)):
        feasible = [n for n in cluster.nodes if cluster.fits(task, n)]
        if not feasible:
            raise ValueError(f"no node has {task.memory:g} memory left for task {task.id}")
        if position == 0 and ref in feasible:
            node = ref
        else:
            node = min(feasible, key=lambda n: _distance(cluster, task, n, ref, w))
        cluster.place(task, node)
        assignment[task.id] = node.id
    return assignment


def _distance(cluster: Cluster, task: Task, node: Node, ref: Node, w: dict[str, float]) -> float:
    total = w["network"] * (network_distance(ref, node) / 3) ** 2
    for r in ("memory", "cpu"):
        if r in cluster.resources:
            total += w[r] * ((getattr(task, r) - cluster.available[node.id][r]) / cluster.scale[r]) ** 2
    return math.sqrt(total)


@dataclass(frozen=True)
class RStormSettings:
    """Settings of ``rstorm``: the weights of the distance's three terms."""

    weight_cpu: float = field(default=1.0, metadata={"ge": 0})
    """Weight of the cpu term of the distance to a node."""
    weight_memory: float = field(default=1.0, metadata={"ge": 0})
    """Weight of the memory term."""
    weight_network: float = field(default=1.0, metadata={"ge": 0})
    """Weight of the network-distance term."""


def _rstorm(
    instance: Any,
    *,
    adapter: TaskViewAdapter,
    seed: int = 0,
    time_limit: float | None = None,
    settings: RStormSettings = RStormSettings(),
) -> HeuristicOutcome:
    view = adapter.view(instance)
    weights = {"cpu": settings.weight_cpu, "memory": settings.weight_memory, "network": settings.weight_network}
    try:
        assignment = rstorm_schedule(view, weights)
    except ValueError as error:
        return HeuristicOutcome(solution=None, objective=None, message=f"rstorm: {error}")
    return HeuristicOutcome(
        solution=adapter.solution(instance, assignment),
        objective=None,
        stats={"tasks": len(view.tasks), "nodes_used": len(set(assignment.values()))},
    )


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="rstorm",
        kinds=(),
        on_task_view=True,
        run=_rstorm,
        description="R-Storm (Peng et al. 2015): BFS task order, nodes nearest to a reference node, memory hard",
        scores_itself=False,
        settings=RStormSettings,
    ),
)
