"""ODRP seen as Storm sees it: one task per operator (ODP, every k_i = 1) on worker nodes.

Storm's schedulers (:mod:`odrp.heuristics.storm`, R-Storm, Storm's resource-aware strategy) place tasks,
not multisets of replicas; they take the replication degree (the parallelism hint) as given. The
view gives them ODP, the paper's baseline S-ODP (Cardellini et al. 2017, section 6.2: "ODP is a
special case of ODRP where k_i = 1"), so that a Storm scheduler's placement can be scored by the
ODRP evaluator beside the ODRP optimum and its heuristics: the difference is what replication buys.
An operator whose load exceeds its service rate on one replica makes every view placement
infeasible (the evaluator says which operator), as S-ODP_R's unbounded response time does in the
paper's Figure 4.

The mapping:

- **Tasks**: one task ``<operator>#0`` per operator with more than one candidate node. An operator
  with a single candidate node is pinned (the paper's data source and globalRank, "not relocated
  by S-ODRP"): it is not Storm's to place, it stays on its node, and it is not a task.
- **Task demands**: Res_i as both CPU and memory (memory is the hard dimension of R-Storm and
  Storm's resource-aware strategy, so a scheduler that honours it honours eq. 23); bandwidth 0.
- **Nodes**: every ODRP node, rack ``rack0`` (the paper's cluster is one rack), CPU and memory = the
  capacity Res_u minus what the pinned operators there use, and ``ceil(Res / EXECUTORS_PER_SLOT)``
  worker slots: the paper's S-ODRP sets a node's capacity to its worker slots times EPS_max = 4
  executors per slot (6 nodes x 2 slots x 4 = 8 replicas per node in its experiments).
- **Edges**: the streams between two tasks, weighted by their rate lambda_(i,j) in tuples/s.
  Streams from or to a pinned operator are listed in ``extra["pinned_streams"]``;
  ``extra["pinned"]`` maps each pinned operator to its node.
- **Back to a solution**: each task's operator gets one replica on its node, each pinned operator
  one on its node. Candidate restrictions other than pinning are not in the view: a scheduler that
  ignores them gets an infeasible placement from the evaluator.
"""

from __future__ import annotations

import math
from typing import Any

from odrp.core.taskview import Node, Task, TaskView, TaskViewAdapter, task_id
from odrp.kinds.replication.instance import OdrpInstance

EXECUTORS_PER_SLOT = 4
"""EPS_max of the paper's S-ODRP: executors one worker slot hosts."""


def pinned_operators(inst: OdrpInstance) -> dict[int, int]:
    """Operator index -> its only candidate node, for operators with one candidate."""
    return {i: c[0] for i, c in enumerate(inst.candidates) if len(c) == 1}


def view(inst: OdrpInstance) -> TaskView:
    """The ODP task/node view of an ODRP instance (see the module docstring)."""
    pinned = pinned_operators(inst)
    free = [i for i in range(inst.n_operators) if i not in pinned]
    tasks = tuple(
        Task(inst.operators[i], 0, cpu=inst.resources[i], memory=inst.resources[i], bandwidth=0.0) for i in free
    )
    left = list(inst.capacity)
    for i, u in pinned.items():
        left[u] -= inst.resources[i]
    nodes = tuple(
        Node(
            inst.nodes[u],
            rack="rack0",
            slots=max(0, math.ceil(left[u] / EXECUTORS_PER_SLOT - 1e-9)),
            cpu=max(0.0, left[u]),
            memory=max(0.0, left[u]),
        )
        for u in range(inst.n_nodes)
    )
    edges, pinned_streams = [], []
    for st in inst.streams:
        edge = (inst.operators[st.source], inst.operators[st.target], st.rate)
        (pinned_streams if st.source in pinned or st.target in pinned else edges).append(edge)
    extra = {
        "pinned": {inst.operators[i]: inst.nodes[u] for i, u in pinned.items()},
        "pinned_streams": pinned_streams,
    }
    return TaskView(tasks=tasks, nodes=nodes, edges=tuple(edges), extra=extra)


def solution(inst: OdrpInstance, assignment: dict[str, str]) -> dict[str, Any]:
    """The ODP placement of a ``{task id: node id}`` assignment, pinned operators on their nodes."""
    pinned = pinned_operators(inst)
    placement: dict[str, dict[str, int]] = {}
    for i, op in enumerate(inst.operators):
        node = inst.nodes[pinned[i]] if i in pinned else assignment[task_id(op, 0)]
        placement[op] = {node: 1}
    return {"placement": placement}


ADAPTER = TaskViewAdapter(view=view, solution=solution)
