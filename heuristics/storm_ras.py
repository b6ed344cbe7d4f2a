"""Storm's resource-aware scheduler of today (``DefaultResourceAwareStrategy``), on any task/node view.

Apache Storm 2.x, storm-server ``org.apache.storm.scheduler.resource.strategies.scheduling``:
``BaseResourceAwareStrategy.scheduleExecutorsOnNodes``, ``sorter.ExecSorterByConnectionCount`` and
``sorter.NodeSorterHostProximity`` (COMMON sort type), read from Storm's public source and written
anew here against the task/node view.

1. **Executor order** (``ExecSorterByConnectionCount``): components by their number of potential
   connections, sum over neighbours (children and parents) of tasks(neighbour) * tasks(component),
   descending, ties by component id. For each component in that order, its neighbours sorted by
   tasks(neighbour) * tasks(component) *ascending*, ties by id; then, round after round, one
   not-yet-ordered task of the component followed by one of each neighbour, until a round adds
   nothing. The task queues are shared, so later components find theirs partly drained.
2. **Node order**, recomputed whenever an executor's component differs from the previous one's:
   racks, then the nodes inside each rack, sorted by (a) the number of this topology's executors
   already there, descending; (b) the average over resources (CPU and memory) of the object's
   available amount divided by the available amount of the whole (cluster for a rack, rack for a
   node), descending; (c) the minimum of those shares (starting from 100%), descending; (d) id.
3. **Depth-first search with backtracking**: executor i tries the slots of the nodes in that order
   (every node has ``slots`` worker slots, tried in turn); a slot fits when the node's available CPU
   and memory cover the executor's demand (both are hard for Storm). The first fitting slot takes
   the executor and the search moves to executor i + 1; when no slot fits, executor i - 1 is taken
   back and resumes after the slot position it had used. Positions are counted as Storm's
   ``progressIdx`` counts them: from 0 after each re-sort of the nodes, and on from the previous
   executor's count while the order is not re-sorted (consecutive executors of one component).
   Every assignment tried counts as a searched state; the search stops unsuccessful
   after ``max_states`` states (Storm's ``topology.ras.constraint.max.state.search``, 10 000 by
   default) or when ``time_limit`` runs out.

Left out (no counterpart in the task/node view): ackers and system executors, the per-worker heap
limit ``topology.worker.max.heap.size.mb``, favoured / unfavoured / grey-listed nodes, hosts with
several supervisors (a node is its own host), generic resources. Bandwidth is not a Storm resource.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.taskview import Node, Task, TaskView, TaskViewAdapter

MAX_STATES = 10_000
"""Storm's default ``topology.ras.constraint.max.state.search``."""
RESOURCES = ("cpu", "memory")


def executor_order(view: TaskView) -> list[Task]:
    """``ExecSorterByConnectionCount.sortExecutors`` for the view's tasks."""
    tasks = {
        c: deque(sorted((t for t in view.tasks if t.component == c), key=lambda t: t.index)) for c in view.components
    }
    size = {c: len(q) for c, q in tasks.items()}
    neighbours: dict[str, set[str]] = {c: set() for c in view.components}
    for a, b, _ in view.edges:
        neighbours[a].add(b)
        neighbours[b].add(a)

    def connections(c: str) -> int:
        return sum(size[n] * size[c] for n in neighbours[c])

    ordered: list[Task] = []
    for comp in sorted(view.components, key=lambda c: (-connections(c), c)):
        near = sorted(neighbours[comp], key=lambda n: (size[n] * size[comp], n))
        progress = True
        while progress:
            progress = False
            for c in (comp, *near):
                if tasks[c]:
                    ordered.append(tasks[c].popleft())
                    progress = True
    return ordered


class _State:
    """Available resources and this topology's executors per node during the search."""

    def __init__(self, view: TaskView, cpu_hard: bool) -> None:
        self.view = view
        self.resources = tuple(r for r in RESOURCES if all(math.isfinite(getattr(n, r)) for n in view.nodes))
        self.hard = tuple(r for r in self.resources if r == "memory" or cpu_hard)
        self.available = {n.id: {r: float(getattr(n, r)) for r in RESOURCES} for n in view.nodes}
        self.executors = {n.id: 0 for n in view.nodes}
        self.racks = list(dict.fromkeys(n.rack for n in view.nodes))

    def could_ever_fit(self, task: Task, node: Node) -> bool:
        return all(getattr(node, r) >= getattr(task, r) for r in self.hard)

    def fits(self, task: Task, node: Node) -> bool:
        if node.max_tasks is not None and self.executors[node.id] >= node.max_tasks:
            return False
        return all(self.available[node.id][r] >= getattr(task, r) for r in self.hard)

    def assign(self, task: Task, node: Node, sign: int = 1) -> None:
        for r in RESOURCES:
            self.available[node.id][r] -= sign * getattr(task, r)
        self.executors[node.id] += sign

    def sorted_nodes(self) -> list[Node]:
        """Racks in order, and the nodes of each rack in order (``NodeSorterHostProximity``)."""
        by_rack = {r: [n for n in self.view.nodes if n.rack == r] for r in self.racks}
        rack_avail = {
            r: {x: sum(self.available[n.id][x] for n in by_rack[r]) for x in self.resources} for r in self.racks
        }
        cluster = {x: sum(rack_avail[r][x] for r in self.racks) for x in self.resources}
        rack_key = {
            r: (-sum(self.executors[n.id] for n in by_rack[r]), *_shares(rack_avail[r], cluster), r) for r in self.racks
        }
        out: list[Node] = []
        for r in sorted(self.racks, key=lambda r: rack_key[r]):
            whole = rack_avail[r]
            out.extend(
                sorted(
                    by_rack[r],
                    key=lambda n: (-self.executors[n.id], *_shares(self.available[n.id], whole), n.id),
                )
            )
        return out


def _shares(available: dict[str, float], whole: dict[str, float]) -> tuple[float, float]:
    """(-average share, -minimum share) in percent, Storm's ``calculateAverage/MinPercentageUsedBy``."""
    shares = [available[x] / whole[x] for x in whole if whole[x] != 0]
    average = 100.0 * sum(shares) / len(shares) if shares else 100.0
    minimum = 100.0 * min([1.0, *shares])
    return -average, -minimum


def ras_schedule(
    view: TaskView, max_states: int = MAX_STATES, time_limit: float | None = None, cpu_hard: bool = True
) -> tuple[dict[str, str] | None, dict[str, int]]:
    """The search of ``scheduleExecutorsOnNodes``: (assignment or None, search statistics)."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    state = _State(view, cpu_hard)
    order = executor_order(view)
    tried = [-1] * len(order)  # progressIdxForExec: the last slot position tried by executor i
    placed: list[Node | None] = [None] * len(order)
    stats = {"states": 0, "backtracks": 0}
    i, nodes, progress = 0, None, -1
    while 0 <= i < len(order):
        if stats["states"] > max_states or (deadline is not None and time.perf_counter() > deadline):
            return None, stats
        task = order[i]
        if nodes is None or order[i - 1].component != task.component:
            nodes, progress = state.sorted_nodes(), -1
        chosen, progress = _first_fit(state, task, nodes, tried, i, progress)
        if chosen is not None:
            stats["states"] += 1
            state.assign(task, chosen)
            placed[i] = chosen
            i += 1
            continue
        nodes = None  # backtrack: take executor i - 1 back and let it try its next slot
        tried[i] = -1
        i -= 1
        if i >= 0:
            stats["backtracks"] += 1
            state.assign(order[i], placed[i], sign=-1)  # type: ignore[arg-type]
            placed[i] = None
    if i < 0:
        return None, stats
    return {t.id: n.id for t, n in zip(order, placed, strict=True) if n is not None}, stats


def _first_fit(
    state: _State, task: Task, nodes: list[Node], tried: list[int], i: int, progress: int
) -> tuple[Node | None, int]:
    """The first fitting slot after position ``tried[i]``; positions count on from ``progress``
    (Storm's progressIdx, reset only when the nodes are re-sorted)."""
    for node in nodes:
        if not state.could_ever_fit(task, node):
            continue
        for _slot in range(max(1, node.slots)):
            progress += 1
            if progress <= tried[i]:
                continue
            tried[i] = progress
            if state.fits(task, node):
                return node, progress
    return None, progress


@dataclass(frozen=True)
class StormRasSettings:
    """Settings of ``storm_ras``."""

    max_states: int = field(default=MAX_STATES, metadata={"ge": 1})
    """Search states before the backtracking search gives up (Storm's ``topology.ras.constraint.max.state.search``)."""
    cpu_hard: bool = True
    """Whether cpu is a hard limit on a node, like memory (Storm's default strategy checks both)."""


def _storm_ras(
    instance: Any,
    *,
    adapter: TaskViewAdapter,
    seed: int = 0,
    time_limit: float | None = None,
    settings: StormRasSettings = StormRasSettings(),
) -> HeuristicOutcome:
    view = adapter.view(instance)
    assignment, stats = ras_schedule(
        view, max_states=settings.max_states, time_limit=time_limit, cpu_hard=settings.cpu_hard
    )
    if assignment is None:
        return HeuristicOutcome(
            None, None, stats, "storm_ras: not every executor fits (search exhausted or limit reached)"
        )
    return HeuristicOutcome(
        solution=adapter.solution(instance, assignment),
        objective=None,
        stats={**stats, "tasks": len(view.tasks), "nodes_used": len(set(assignment.values()))},
    )


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="storm_ras",
        kinds=(),
        on_task_view=True,
        run=_storm_ras,
        description="Storm's DefaultResourceAwareStrategy: connection-count order, sorted racks/nodes, backtracking",
        scores_itself=False,
        settings=StormRasSettings,
    ),
)
