"""Latency-aware operator placement in the compute continuum (Ecker, Karagiannis, Sober, Schulte).

Instance schema, solution schema and the evaluator of the paper's cost function (eq. 1), in plain
Python, never touching a model. A placement x assigns every operator to one supervisor.

- **Constraints** (section 4.2): every operator on exactly one supervisor; on every supervisor the
  summed cpu and memory of its operators stay within ``utilisation_limit`` (0.95, "the utilization
  of a supervisor is allowed to reach up to 95%") times its capacity.
- **s_lat** (section 4.2): s_lat(o) = 0 for a source, s_lat(o) = max_p (s_lat(p) + l_{p(p),p(o)})
  over o's predecessors, s_lat(T) = max over the sinks; l is the supervisor-to-supervisor latency
  (``latency`` matrix in ms, or the Euclidean distance between the supervisors' ``coordinates``
  when the matrix is absent), 0 within a supervisor. Since latencies are non-negative this is the
  longest path of link latencies in the topology. **Cyclic topologies**: the back edges of a depth-
  first search are dropped for s_lat only (they still count in s_co and s_event), and the metrics
  list them (``back_edges_dropped``). The DFS starts from the sources (operators without incoming
  edges) sorted by id, then from any operator still unvisited, sorted by id, and visits successors
  sorted by id; an edge to an operator on the current DFS path is a back edge.
- **s_sup** = supervisors used / supervisors; **s_co** = edges whose ends are on different
  supervisors / edges (0 without edges); **s_event** = events on such edges / events on all edges
  (0 when no edge carries events).
- **Score** (eq. 1), minimised: s = w1 s_lat + w2 s_sup + w3 s_co + w4 s_event with w1..w4 the
  ``weights`` latency, supervisors, colocation, events (the paper: 1e-6, 1, 1, 1).

**Events of an edge** (the paper's t(e)): an edge's ``events`` when given; otherwise its source
operator's emitted events divided evenly over the operator's outgoing edges (the paper: "t(e) can be
approximated by dividing the operator-based statistic by the count of outgoing edges"). A source
emits its ``rate``; any other operator emits its input (the events of its incoming edges) times its
``selectivity`` (default 1). In a cyclic topology the input counts the edges kept by the DFS above
(a back edge carries its source's share like any other outgoing edge but feeds no derivation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import networkx as nx
from pydantic import ConfigDict, Field, NonNegativeFloat

from odrp.core.errors import InputError
from odrp.core.graph import digraph
from odrp.core.kind import Strict, require, require_unique, validate

NAME = "latency"
SENSE = "min"
TERMS = ("latency", "supervisors", "colocation", "events")
"""The weights' names, in the order w1..w4 of eq. (1)."""

# --------------------------------------------------------------------------------- the schema


class OperatorSpec(Strict):
    id: str = Field(min_length=1)
    cpu: NonNegativeFloat = Field(description="cpu demand in cores")
    memory: NonNegativeFloat = Field(description="memory demand in MB")
    rate: NonNegativeFloat | None = Field(None, description="events/s emitted by a source")
    selectivity: NonNegativeFloat | None = Field(None, description="events emitted per input event (default 1)")


class EdgeSpec(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    events: NonNegativeFloat | None = Field(None, description="t(e), events/s on the edge")


class SupervisorSpec(Strict):
    id: str = Field(min_length=1)
    cpu: NonNegativeFloat = Field(description="cpu capacity in cores")
    memory: NonNegativeFloat = Field(description="memory capacity in MB")
    coordinates: list[float] | None = Field(None, min_length=1, description="position in the latency space (ms)")


class WeightsSpec(Strict):
    latency: NonNegativeFloat = 1e-6
    supervisors: NonNegativeFloat = 1.0
    colocation: NonNegativeFloat = 1.0
    events: NonNegativeFloat = 1.0


class LatencySpec(Strict):
    problem: Literal["latency"]
    name: str = "unnamed"
    operators: list[OperatorSpec] = Field(min_length=1)
    edges: list[EdgeSpec] = []
    supervisors: list[SupervisorSpec] = Field(min_length=1)
    latency: list[list[NonNegativeFloat]] | None = None
    utilisation_limit: float = Field(0.95, gt=0.0, le=1.0)
    weights: WeightsSpec = WeightsSpec()


class SolutionSpec(Strict):
    assignment: dict[str, str]


def schema() -> dict[str, Any]:
    """JSON Schema of a latency instance (``odrp schema latency``)."""
    return LatencySpec.model_json_schema(by_alias=True)


# ---------------------------------------------------------------------- the compiled instance


@dataclass(frozen=True)
class LatencyInstance:
    """A validated instance with every derived quantity the evaluator, model and heuristics need."""

    name: str
    operators: tuple[str, ...]
    supervisors: tuple[str, ...]
    cpu: tuple[float, ...]
    memory: tuple[float, ...]
    supervisor_cpu: tuple[float, ...]
    supervisor_memory: tuple[float, ...]
    edges: tuple[tuple[int, int], ...]
    events: tuple[float, ...]
    latency: tuple[tuple[float, ...], ...]
    latency_source: str
    utilisation_limit: float
    weights: dict[str, float]
    back_edges: tuple[int, ...]
    """Indices of the edges dropped for s_lat (DFS back edges); empty for a DAG."""
    spec: dict[str, Any]

    kind = NAME
    sense = SENSE

    @property
    def n_operators(self) -> int:
        return len(self.operators)

    @property
    def n_supervisors(self) -> int:
        return len(self.supervisors)

    @property
    def cpu_limit(self) -> tuple[float, ...]:
        """Usable cpu per supervisor: ``utilisation_limit`` times its capacity."""
        return tuple(self.utilisation_limit * c for c in self.supervisor_cpu)

    @property
    def memory_limit(self) -> tuple[float, ...]:
        return tuple(self.utilisation_limit * m for m in self.supervisor_memory)

    @cached_property
    def total_events(self) -> float:
        return math.fsum(self.events)

    @cached_property
    def latency_edges(self) -> tuple[int, ...]:
        """The edges that s_lat follows: every edge but the dropped back edges."""
        dropped = set(self.back_edges)
        return tuple(e for e in range(len(self.edges)) if e not in dropped)

    @cached_property
    def latency_order(self) -> tuple[int, ...]:
        """A topological order of the operators over :attr:`latency_edges`."""
        return _topological_order(self.n_operators, [self.edges[e] for e in self.latency_edges])

    @cached_property
    def latency_predecessors(self) -> tuple[tuple[int, ...], ...]:
        """For each operator, its predecessors over :attr:`latency_edges`."""
        out: list[list[int]] = [[] for _ in self.operators]
        for e in self.latency_edges:
            i, j = self.edges[e]
            out[j].append(i)
        return tuple(tuple(p) for p in out)


# ------------------------------------------------------------------------------------ loading


def load(data: Any, source: str = "<instance>") -> LatencyInstance:
    """Validate an instance (parsed JSON) and compile it; bad input raises :class:`InputError`."""
    spec = validate(LatencySpec, data, source)
    return compile_spec(spec, source)


def compile_spec(spec: LatencySpec, source: str) -> LatencyInstance:
    ops = [o.id for o in spec.operators]
    sups = [s.id for s in spec.supervisors]
    require_unique(ops, source, "operators")
    require_unique(sups, source, "supervisors")
    op_index = {o: i for i, o in enumerate(ops)}

    edges: list[tuple[int, int]] = []
    for e, edge in enumerate(spec.edges):
        where = f"edges[{e}]"
        require(edge.source in op_index, source, f"{where}.from", f"a known operator, got {edge.source!r}")
        require(edge.target in op_index, source, f"{where}.to", f"a known operator, got {edge.target!r}")
        i, j = op_index[edge.source], op_index[edge.target]
        require(i != j, source, where, f"an edge between two operators, not from {edge.source!r} to itself")
        require((i, j) not in edges, source, where, f"one edge {edge.source!r} -> {edge.target!r}, found a second")
        edges.append((i, j))

    back_edges = dfs_back_edges(ops, edges)
    events = _derive_events(spec, edges, back_edges, source)
    latency, latency_source = _latency_matrix(spec, source)

    return LatencyInstance(
        name=spec.name,
        operators=tuple(ops),
        supervisors=tuple(sups),
        cpu=tuple(o.cpu for o in spec.operators),
        memory=tuple(o.memory for o in spec.operators),
        supervisor_cpu=tuple(s.cpu for s in spec.supervisors),
        supervisor_memory=tuple(s.memory for s in spec.supervisors),
        edges=tuple(edges),
        events=tuple(events),
        latency=latency,
        latency_source=latency_source,
        utilisation_limit=spec.utilisation_limit,
        weights=spec.weights.model_dump(),
        back_edges=tuple(back_edges),
        spec=spec.model_dump(by_alias=True, exclude_none=True),
    )


def dfs_back_edges(ops: list[str], edges: list[tuple[int, int]]) -> list[int]:
    """Indices of the back edges of the depth-first search described in the module docstring."""
    index = {edge: e for e, edge in enumerate(edges)}
    has_input = {j for _, j in edges}
    by_id = sorted(range(len(ops)), key=lambda i: ops[i])
    graph = nx.DiGraph()
    graph.add_nodes_from([i for i in by_id if i not in has_input] + [i for i in by_id if i in has_input])  # roots
    graph.add_edges_from(edges)
    on_path: set[int] = set()
    back: list[int] = []
    for i, j, label in nx.dfs_labeled_edges(graph, sort_neighbors=lambda out: sorted(out, key=ops.__getitem__)):
        if label == "forward":
            on_path.add(j)
        elif label == "reverse":
            on_path.discard(j)
        elif label == "nontree" and j in on_path:
            back.append(index[i, j])
    return sorted(back)


def _topological_order(n: int, edges: list[tuple[int, int]]) -> tuple[int, ...]:
    """Kahn's algorithm, smallest index first among the ready operators."""
    return tuple(nx.lexicographical_topological_sort(digraph(n, edges)))


def _derive_events(spec: LatencySpec, edges: list[tuple[int, int]], back_edges: list[int], source: str) -> list[float]:
    """t(e) for every edge: given, or the source operator's emitted events over its out-degree."""
    n = len(spec.operators)
    outgoing: list[list[int]] = [[] for _ in range(n)]
    incoming: list[list[int]] = [[] for _ in range(n)]
    dropped = set(back_edges)
    for e, (i, j) in enumerate(edges):
        outgoing[i].append(e)
        if e not in dropped:
            incoming[j].append(e)
    is_source = [True] * n
    for _, j in edges:
        is_source[j] = False
    for i, op in enumerate(spec.operators):
        if op.rate is not None:
            require(is_source[i], source, f"operators[{i}].rate", f"rate only on a source ({op.id!r} has inputs)")
        if op.selectivity is not None:
            require(not is_source[i], source, f"operators[{i}].selectivity", f"no selectivity on a source ({op.id!r})")
    events: list[float | None] = [edge.events for edge in spec.edges]
    order = _topological_order(n, [edges[e] for e in range(len(edges)) if e not in dropped])
    for i in order:
        derived = [e for e in outgoing[i] if events[e] is None]
        if not derived:
            continue
        op = spec.operators[i]
        if is_source[i]:
            require(
                op.rate is not None,
                source,
                f"operators[{i}].rate",
                f"the source's rate (an edge out of {op.id!r} has no events)",
            )
            emitted = float(op.rate)  # type: ignore[arg-type]
        else:  # every kept edge into i comes from an operator earlier in the order: its events are known
            selectivity = 1.0 if op.selectivity is None else op.selectivity
            emitted = selectivity * math.fsum(events[e] or 0.0 for e in incoming[i])
        share = emitted / len(outgoing[i])
        for e in derived:
            events[e] = share
    return [float(x) for x in events if x is not None]


def _latency_matrix(spec: LatencySpec, source: str) -> tuple[tuple[tuple[float, ...], ...], str]:
    n = len(spec.supervisors)
    if spec.latency is not None:
        require(len(spec.latency) == n, source, "latency", f"a {n} x {n} matrix (one row per supervisor)")
        for u, row in enumerate(spec.latency):
            require(len(row) == n, source, f"latency[{u}]", f"{n} entries (one per supervisor)")
            require(all(math.isfinite(x) for x in row), source, f"latency[{u}]", "finite latencies")
            require(row[u] == 0, source, f"latency[{u}][{u}]", "0 (no latency within a supervisor)")
        return tuple(tuple(float(x) for x in row) for row in spec.latency), "matrix"
    points: list[list[float]] = []
    for u, sup in enumerate(spec.supervisors):
        where = f"supervisors[{u}].coordinates"
        require(sup.coordinates is not None, source, where, "coordinates on every supervisor (or a latency matrix)")
        point = sup.coordinates or []
        require(all(math.isfinite(x) for x in point), source, where, "finite coordinates")
        require(
            len(point) == len(points[0]) if points else True, source, where, "the same dimension on every supervisor"
        )
        points.append(point)
    return tuple(tuple(math.dist(p, q) for q in points) for p in points), "coordinates"


# ---------------------------------------------------------------------------------- solutions

Assignment = list[int | None]
"""Internal form of a placement: supervisor index of each operator (None: not placed)."""


def parse_solution(instance: LatencyInstance, data: Any, source: str = "<solution>") -> Assignment:
    """Read ``{"assignment": {operator: supervisor}}``; unknown names are bad input."""
    spec = validate(SolutionSpec, data, source)
    op_index = {o: i for i, o in enumerate(instance.operators)}
    sup_index = {s: u for u, s in enumerate(instance.supervisors)}
    assignment: Assignment = [None] * instance.n_operators
    for op, sup in spec.assignment.items():
        if op not in op_index:
            raise InputError(source, f"assignment.{op}", "a known operator")
        if sup not in sup_index:
            raise InputError(source, f"assignment.{op}", f"a known supervisor, got {sup!r}")
        assignment[op_index[op]] = sup_index[sup]
    return assignment


def solution_json(instance: LatencyInstance, assignment: list[int]) -> dict[str, Any]:
    """The solution JSON of an assignment given as supervisor indices."""
    return {"assignment": {op: instance.supervisors[u] for op, u in zip(instance.operators, assignment, strict=True)}}
