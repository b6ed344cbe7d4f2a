"""QM3DKP: R-Storm's Quadratic Multiple 3-Dimensional Knapsack Problem (Peng et al., Middleware 2015, section 3).

Tasks are items, nodes are knapsacks. A topology is a set of ``components`` (spouts and bolts),
each with a ``parallelism`` (its number of tasks, named ``<component>#<k>``, k = 0 .. parallelism-1)
and the CPU, memory and bandwidth demand of one task; ``edges`` (from, to, weight) are the streams
between components. The cluster is a set of ``nodes``, each in a ``rack``, with CPU, memory and
bandwidth capacities. The paper's eqs. (1)-(2) state the three budgets W1 (CPU), W2 (bandwidth),
W3 (memory) per node; section 3 makes memory a hard constraint and CPU and bandwidth soft ones,
and its third "challenge" is the quadratic profit of placing communicating tasks close together.
Our reading of the paper as one exact objective, maximised:

    sum over edges (A, B), over task pairs (a of A, b of B):
        weight / (parallelism_A * parallelism_B) * colocation.node  if a and b are on one node,
                                                  * colocation.rack  if on two nodes of one rack,
                                                  * 0                otherwise
    - sum over nodes u: penalty.cpu * max(0, cpu used on u - cpu_u)
                        + penalty.bandwidth * max(0, bandwidth used on u - bandwidth_u)

subject to every task on exactly one node and memory used on u <= memory_u (hard). The weight of
an edge is shared evenly over the task pairs of its two components (shuffle grouping). A solution is
``{"assignment": {"<component>#<k>": "<node id>", ...}}``.

The kind has a task/node view (:mod:`odrp.core.taskview`), so Storm's schedulers and R-Storm
apply to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, NonNegativeFloat, PositiveInt

from odrp.core.errors import InputError
from odrp.core.kind import Strict, require, require_unique, validate
from odrp.core.taskview import task_id

NAME = "qm3dkp"
SENSE = "max"
RESOURCES = ("cpu", "memory", "bandwidth")
CAPACITY_RTOL = 1e-9

# --------------------------------------------------------------------------------- the schema


class ComponentSpec(Strict):
    id: str = Field(min_length=1)
    parallelism: PositiveInt = 1
    cpu: NonNegativeFloat = Field(0.0, description="CPU points of one task (soft)")
    memory: NonNegativeFloat = Field(0.0, description="MB of one task (hard)")
    bandwidth: NonNegativeFloat = Field(0.0, description="bandwidth of one task (soft)")


class EdgeSpec(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    weight: NonNegativeFloat = 1.0


class NodeSpec(Strict):
    id: str = Field(min_length=1)
    rack: str = "rack0"
    cpu: NonNegativeFloat
    memory: NonNegativeFloat
    bandwidth: NonNegativeFloat


class ColocationSpec(Strict):
    node: float = Field(1.0, description="profit factor of a task pair on one node")
    rack: float = Field(0.5, description="profit factor of a task pair on two nodes of one rack")


class PenaltySpec(Strict):
    cpu: NonNegativeFloat = Field(1.0, description="per CPU point of overload on a node")
    bandwidth: NonNegativeFloat = Field(1.0, description="per bandwidth unit of overload on a node")


class Qm3dkpSpec(Strict):
    problem: Literal["qm3dkp"]
    name: str = "unnamed"
    components: list[ComponentSpec] = Field(min_length=1)
    edges: list[EdgeSpec] = []
    nodes: list[NodeSpec] = Field(min_length=1)
    colocation: ColocationSpec = ColocationSpec()
    penalty: PenaltySpec = PenaltySpec()


class SolutionSpec(Strict):
    assignment: dict[str, str | None]


def schema() -> dict[str, Any]:
    return Qm3dkpSpec.model_json_schema(by_alias=True)


# ---------------------------------------------------------------------- the compiled instance


@dataclass(frozen=True)
class Component:
    id: str
    parallelism: int
    cpu: float
    memory: float
    bandwidth: float

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(task_id(self.id, k) for k in range(self.parallelism))


@dataclass(frozen=True)
class Edge:
    source: int
    target: int
    weight: float


@dataclass(frozen=True)
class Qm3dkpNode:
    id: str
    rack: str
    cpu: float
    memory: float
    bandwidth: float


@dataclass(frozen=True)
class Qm3dkpInstance:
    name: str
    components: tuple[Component, ...]
    edges: tuple[Edge, ...]
    nodes: tuple[Qm3dkpNode, ...]
    colocation_node: float
    colocation_rack: float
    penalty_cpu: float
    penalty_bandwidth: float

    kind = NAME
    sense = SENSE

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(t for c in self.components for t in c.tasks)

    @property
    def n_tasks(self) -> int:
        return sum(c.parallelism for c in self.components)

    @property
    def racks(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n.rack for n in self.nodes))


def load(data: Any, source: str = "<instance>") -> Qm3dkpInstance:
    """Validate an instance (parsed JSON) and compile it; bad input raises :class:`InputError`."""
    spec = validate(Qm3dkpSpec, data, source)
    require_unique([c.id for c in spec.components], source, "components")
    require_unique([n.id for n in spec.nodes], source, "nodes")
    for c, comp in enumerate(spec.components):
        require("#" not in comp.id, source, f"components[{c}].id", f"an id without '#', got {comp.id!r}")
    index = {c.id: i for i, c in enumerate(spec.components)}
    edges: list[Edge] = []
    seen: set[tuple[int, int]] = set()
    for e, edge in enumerate(spec.edges):
        where = f"edges[{e}]"
        require(edge.source in index, source, f"{where}.from", f"a known component, got {edge.source!r}")
        require(edge.target in index, source, f"{where}.to", f"a known component, got {edge.target!r}")
        a, b = index[edge.source], index[edge.target]
        require(a != b, source, where, f"two different components (an edge from {edge.source!r} to itself)")
        require((a, b) not in seen, source, where, f"one edge per pair, {edge.source!r} -> {edge.target!r} repeats")
        seen.add((a, b))
        edges.append(Edge(a, b, edge.weight))
    return Qm3dkpInstance(
        name=spec.name,
        components=tuple(Component(c.id, c.parallelism, c.cpu, c.memory, c.bandwidth) for c in spec.components),
        edges=tuple(edges),
        nodes=tuple(Qm3dkpNode(n.id, n.rack, n.cpu, n.memory, n.bandwidth) for n in spec.nodes),
        colocation_node=spec.colocation.node,
        colocation_rack=spec.colocation.rack,
        penalty_cpu=spec.penalty.cpu,
        penalty_bandwidth=spec.penalty.bandwidth,
    )


# ---------------------------------------------------------------------------------- solutions


def parse_solution(inst: Qm3dkpInstance, data: Any, source: str = "<solution>") -> dict[str, str | None]:
    """Read ``{"assignment": {task: node}}``; unknown tasks or nodes are bad input, missing tasks are not."""
    spec = validate(SolutionSpec, data, source)
    tasks = set(inst.tasks)
    nodes = {n.id for n in inst.nodes}
    for task, node in spec.assignment.items():
        if task not in tasks:
            raise InputError(source, f"assignment.{task}", "a task <component>#<k> of the instance")
        if node is not None and node not in nodes:
            raise InputError(source, f"assignment.{task}", f"a known node id or null, got {node!r}")
    return dict(spec.assignment)


def solution_json(assignment: dict[str, str]) -> dict[str, Any]:
    return {"assignment": dict(sorted(assignment.items()))}
