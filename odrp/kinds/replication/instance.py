"""ODRP: Optimal DSP Replication and Placement (Cardellini, Grassi, Lo Presti, Nardelli, 2017).

Instance schema, solution schema and the paper's QoS model (eqs. 1-21), which the evaluator
(:mod:`.evaluator`) computes directly from a placement, in plain Python, without any model:

- placement: for each operator i a multiset U_i of its candidate nodes, 1 <= |U_i| <= k_i;
- lambda_i: the summed rate of i's incoming streams, or ``input_rate`` for a source;
- operator latency (eq. 1): R_{i,U} = R_i(lambda_i / |U|) / min_{u in U} S_u with the M/M/1
  R_i(x) = 1 / (mu_i - x) (a placement with x >= mu_i is infeasible) or a fixed ``latency``;
- stream delay (eq. 4): d_(U,V) = max_{u in U, v in V} d_uv, d_uu = 0;
- response time (eqs. 8-11): R = max over source-to-sink paths of the operator latencies plus the
  stream delays along the path;
- cost (eqs. 2, 5, 12-14): C = sum_i |U_i| C_i Res_i + sum over streams (i, j) and replica pairs
  (u, v) in U_i x U_j, with multiplicity, of lambda_ij U_i(u) U_j(v) / (|U_i| |U_j|) C_uv;
- network metric (eqs. 17-20): the same weighted shares over pairs u != v, times b_ij (traffic T,
  eq. 18), times b_ij d_uv (usage N, eq. 19) or times b_ij d_uv^2 (elastic energy EE, eq. 20);
- availability (eqs. 15-16): log A = sum of log A_u over nodes holding a replica plus the sum of
  log A_l over the links l that carry part of a stream. A link given once serves both directions
  and is one link: it counts once however many directions carry data (our reading; the paper's
  z_(u,v) leaves it open);
- capacity (eq. 23): sum_i U_i(u) Res_i <= Res_u;
- utility (SAW, eq. 21): F = w_r (Rmax - R)/(Rmax - Rmin) + w_a (log A - log Amin)/(log Amax -
  log Amin) + w_c (Cmax - C)/(Cmax - Cmin) + w_z (Zmax - Z)/(Zmax - Zmin), maximised. A metric
  whose weight is 0 contributes nothing and needs no bounds.

ODP (operator placement without replication) is the special case with every k_i = 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import networkx as nx
from pydantic import ConfigDict, Field, NonNegativeFloat, PositiveFloat

from odrp.core.graph import digraph, require_acyclic
from odrp.core.kind import Strict, counts_json, parse_counts, require, require_unique, validate

NAME = "odrp"
SENSE = "max"
METRICS = ("response_time", "availability", "cost", "network")
NETWORK_METRICS = ("traffic", "usage", "elastic_energy")

# --------------------------------------------------------------------------------- the schema


class OperatorSpec(Strict):
    id: str = Field(min_length=1)
    service_rate: PositiveFloat | None = Field(None, description="mu_i in tuples/s (M/M/1 latency)")
    latency: NonNegativeFloat | None = Field(None, description="fixed, load-independent latency in s")
    max_replicas: int = Field(
        1, ge=1, le=1000, description="k_i (at most 1,000; beyond what the candidate nodes can hold, never used)"
    )
    resources: PositiveFloat = Field(1.0, description="Res_i")
    cost: NonNegativeFloat = Field(1.0, description="C_i")
    candidates: list[str] | None = Field(None, description="V_res^i; default: every node")
    input_rate: NonNegativeFloat = Field(0.0, description="tuples/s entering a source operator")


class StreamSpec(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    rate: NonNegativeFloat = Field(description="lambda_(i,j) in tuples/s")
    bytes_per_tuple: NonNegativeFloat = Field(1.0, description="b_(i,j)")


class NodeSpec(Strict):
    id: str = Field(min_length=1)
    capacity: NonNegativeFloat = Field(description="Res_u")
    speedup: PositiveFloat = 1.0
    availability: float = Field(1.0, gt=0.0, le=1.0)


class LinkSpec(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    delay: NonNegativeFloat = Field(description="d_(u,v) in s")
    availability: float = Field(1.0, gt=0.0, le=1.0)
    cost: NonNegativeFloat = Field(0.0, description="C_(u,v) per tuple")


class WeightsSpec(Strict):
    response_time: NonNegativeFloat = 0.0
    availability: NonNegativeFloat = 0.0
    cost: NonNegativeFloat = 0.0
    network: NonNegativeFloat = 0.0


class ObjectiveSpec(Strict):
    weights: WeightsSpec = WeightsSpec(response_time=1.0)
    network_metric: Literal["traffic", "usage", "elastic_energy"] = "traffic"
    bounds: dict[Literal["response_time", "availability", "cost", "network"], tuple[float, float]] = {}


class OdrpSpec(Strict):
    problem: Literal["odrp"]
    name: str = "unnamed"
    operators: list[OperatorSpec] = Field(min_length=1)
    streams: list[StreamSpec] = []
    nodes: list[NodeSpec] = Field(min_length=1)
    links: list[LinkSpec] = []
    objective: ObjectiveSpec = ObjectiveSpec()


class SolutionSpec(Strict):
    placement: dict[str, dict[str, int]]


def schema() -> dict[str, Any]:
    """JSON Schema of an ODRP instance (``odrp schema odrp``)."""
    return OdrpSpec.model_json_schema(by_alias=True)


# ---------------------------------------------------------------------- the compiled instance


@dataclass(frozen=True)
class Stream:
    source: int
    target: int
    rate: float
    bytes_per_tuple: float


Placement = list[dict[int, int]]
"""Internal form of a placement: for each operator index, node index -> replicas there."""


@dataclass(frozen=True)
class OdrpInstance:
    """A validated ODRP instance with every derived quantity the evaluator and models need."""

    name: str
    operators: tuple[str, ...]
    nodes: tuple[str, ...]
    service_rate: tuple[float | None, ...]
    fixed_latency: tuple[float | None, ...]
    max_replicas: tuple[int, ...]
    resources: tuple[float, ...]
    op_cost: tuple[float, ...]
    candidates: tuple[tuple[int, ...], ...]
    arrival_rate: tuple[float, ...]
    streams: tuple[Stream, ...]
    capacity: tuple[float, ...]
    speedup: tuple[float, ...]
    node_availability: tuple[float, ...]
    delay: tuple[tuple[float, ...], ...]
    link_cost: tuple[tuple[float, ...], ...]
    link_id: tuple[tuple[int, ...], ...]
    link_availability: tuple[float, ...]
    weights: dict[str, float]
    network_metric: str
    bounds: dict[str, tuple[float, float]]
    spec: dict[str, Any]

    kind = NAME
    sense = SENSE

    # -- sizes and graph structure --------------------------------------------------------
    @property
    def n_operators(self) -> int:
        return len(self.operators)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def incoming(self) -> tuple[tuple[int, ...], ...]:
        """Stream indices entering each operator."""
        out: list[list[int]] = [[] for _ in self.operators]
        for s, stream in enumerate(self.streams):
            out[stream.target].append(s)
        return tuple(tuple(x) for x in out)

    @cached_property
    def outgoing(self) -> tuple[tuple[int, ...], ...]:
        """Stream indices leaving each operator."""
        out: list[list[int]] = [[] for _ in self.operators]
        for s, stream in enumerate(self.streams):
            out[stream.source].append(s)
        return tuple(tuple(x) for x in out)

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The application graph: operators 0..n-1, an edge per stream carrying its ``index``."""
        return digraph(self.n_operators, ((st.source, st.target) for st in self.streams))

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Sources by index, then operators in the order their last incoming stream is passed (Kahn's FIFO)."""
        return tuple(nx.topological_sort(self.graph))

    @cached_property
    def sinks(self) -> tuple[int, ...]:
        return tuple(i for i in range(self.n_operators) if not self.outgoing[i])

    # -- the QoS model ----------------------------------------------------------------------
    def latency(self, i: int, replicas: int) -> float:
        """R_i(lambda_i / replicas) on the reference processor; ``inf`` when the replica is unstable."""
        fixed = self.fixed_latency[i]
        if fixed is not None:
            return fixed
        mu = self.service_rate[i]
        assert mu is not None
        load = self.arrival_rate[i] / replicas
        return 1.0 / (mu - load) if load < mu else math.inf

    def replica_counts(self, i: int) -> tuple[int, ...]:
        """The replica counts 1..k_i at which every replica of operator i is stable."""
        return tuple(k for k in range(1, self.max_replicas[i] + 1) if math.isfinite(self.latency(i, k)))

    def pair_weight(self, u: int, v: int) -> float:
        """Per-tuple-byte factor of the network metric for data sent from node u to node v."""
        if u == v:
            return 0.0
        d = self.delay[u][v]
        return {"traffic": 1.0, "usage": d, "elastic_energy": d * d}[self.network_metric]

    @property
    def active_metrics(self) -> tuple[str, ...]:
        return tuple(m for m in METRICS if self.weights[m] > 0)

    def normalised(self, metric: str, value: float) -> float:
        """One SAW term of eq. (21) without its weight: 1 at the best bound, 0 at the worst."""
        lo, hi = self.bounds[metric]
        if metric == "availability":
            return (value - math.log(lo)) / (math.log(hi) - math.log(lo))
        return (hi - value) / (hi - lo)

    def utility(self, response_time: float, log_availability: float, cost: float, network: float) -> float:
        """F of eq. (21) from the four QoS values (log A for availability)."""
        values = {
            "response_time": response_time,
            "availability": log_availability,
            "cost": cost,
            "network": network,
        }
        return sum(self.weights[m] * self.normalised(m, values[m]) for m in self.active_metrics)


# ------------------------------------------------------------------------------------ loading


def load(data: Any, source: str = "<instance>") -> OdrpInstance:
    """Validate an instance (parsed JSON) and compile it; bad input raises :class:`InputError`."""
    spec = validate(OdrpSpec, data, source)
    return compile_spec(spec, source)


def compile_spec(spec: OdrpSpec, source: str) -> OdrpInstance:
    ops = [o.id for o in spec.operators]
    nodes = [n.id for n in spec.nodes]
    require_unique(ops, source, "operators", "id")
    require_unique(nodes, source, "nodes", "id")
    op_index = {o: i for i, o in enumerate(ops)}
    node_index = {n: u for u, n in enumerate(nodes)}

    candidates = []
    for i, op in enumerate(spec.operators):
        where = f"operators[{i}]"
        require(
            (op.service_rate is None) != (op.latency is None),
            source,
            where,
            f"operator {op.id!r} needs exactly one of service_rate or latency",
        )
        if op.candidates is None:
            candidates.append(tuple(range(len(nodes))))
            continue
        require(len(op.candidates) > 0, source, f"{where}.candidates", "expected at least one node")
        for c, name in enumerate(op.candidates):
            require(name in node_index, source, f"{where}.candidates[{c}]", f"unknown node {name!r}")
        candidates.append(tuple(sorted({node_index[n] for n in op.candidates})))

    streams = []
    seen_streams: set[tuple[int, int]] = set()
    for s, st in enumerate(spec.streams):
        where = f"streams[{s}]"
        require(st.source in op_index, source, f"{where}.from", f"unknown operator {st.source!r}")
        require(st.target in op_index, source, f"{where}.to", f"unknown operator {st.target!r}")
        i, j = op_index[st.source], op_index[st.target]
        require(i != j, source, where, f"a stream from {st.source!r} to itself")
        require((i, j) not in seen_streams, source, where, f"a second stream {st.source!r} -> {st.target!r}")
        seen_streams.add((i, j))
        streams.append(Stream(i, j, st.rate, st.bytes_per_tuple))

    arrival = [0.0] * len(ops)
    has_input = [False] * len(ops)
    for st in streams:
        arrival[st.target] += st.rate
        has_input[st.target] = True
    for i, op in enumerate(spec.operators):
        if has_input[i]:
            require(
                op.input_rate == 0,
                source,
                f"operators[{i}].input_rate",
                f"input_rate only for operators without incoming streams ({op.id!r} has some)",
            )
        else:
            arrival[i] = op.input_rate

    n = len(nodes)
    delay = [[0.0] * n for _ in range(n)]
    cost = [[0.0] * n for _ in range(n)]
    link_id = [[-1] * n for _ in range(n)]
    link_availability: list[float] = []
    explicit: set[tuple[int, int]] = set()
    for ell, link in enumerate(spec.links):
        where = f"links[{ell}]"
        require(link.source in node_index, source, f"{where}.from", f"unknown node {link.source!r}")
        require(link.target in node_index, source, f"{where}.to", f"unknown node {link.target!r}")
        u, v = node_index[link.source], node_index[link.target]
        require(u != v, source, where, f"a link from {link.source!r} to itself")
        require((u, v) not in explicit, source, where, f"a second link {link.source!r} -> {link.target!r}")
        explicit.add((u, v))
        link_availability.append(link.availability)
        for a, b in ((u, v), (v, u)):
            if (a, b) == (u, v) or (a, b) not in explicit:
                delay[a][b], cost[a][b], link_id[a][b] = link.delay, link.cost, ell
    for u in range(n):
        for v in range(n):
            require(
                u == v or link_id[u][v] >= 0,
                source,
                "links",
                f"a link between {nodes[u]!r} and {nodes[v]!r} (every pair of distinct nodes needs one)",
            )

    objective = spec.objective
    weights = objective.weights.model_dump()
    bounds: dict[str, tuple[float, float]] = {}
    for metric in METRICS:
        if weights[metric] == 0:
            continue
        field_name = f"objective.bounds.{metric}"
        require(metric in objective.bounds, source, field_name, f"bounds [min, max] (weight of {metric} > 0)")
        lo, hi = objective.bounds[metric]
        require(
            math.isfinite(lo) and math.isfinite(hi) and hi > lo,
            source,
            field_name,
            f"min < max, got {[lo, hi]}",
        )
        if metric == "availability":
            require(0 < lo < hi <= 1, source, field_name, f"0 < min < max <= 1, got {[lo, hi]}")
        bounds[metric] = (lo, hi)

    instance = OdrpInstance(
        name=spec.name,
        operators=tuple(ops),
        nodes=tuple(nodes),
        service_rate=tuple(o.service_rate for o in spec.operators),
        fixed_latency=tuple(o.latency for o in spec.operators),
        max_replicas=tuple(
            min(o.max_replicas, max(1, _fitting(o.resources, [spec.nodes[u].capacity for u in candidates[i]])))
            for i, o in enumerate(spec.operators)
        ),
        resources=tuple(o.resources for o in spec.operators),
        op_cost=tuple(o.cost for o in spec.operators),
        candidates=tuple(candidates),
        arrival_rate=tuple(arrival),
        streams=tuple(streams),
        capacity=tuple(nd.capacity for nd in spec.nodes),
        speedup=tuple(nd.speedup for nd in spec.nodes),
        node_availability=tuple(nd.availability for nd in spec.nodes),
        delay=tuple(tuple(r) for r in delay),
        link_cost=tuple(tuple(r) for r in cost),
        link_id=tuple(tuple(r) for r in link_id),
        link_availability=tuple(link_availability),
        weights=weights,
        network_metric=objective.network_metric,
        bounds=bounds,
        spec=spec.model_dump(by_alias=True, exclude_none=True),
    )
    require_acyclic(instance.graph, ops, source, "streams", "operators")
    return instance


# ---------------------------------------------------------------------------------- solutions


def parse_solution(instance: OdrpInstance, data: Any, source: str = "<solution>") -> Placement:
    """Read ``{"placement": {op: {node: count}}}``; unknown names and non-counts are bad input."""
    spec = validate(SolutionSpec, data, source)
    words = ("operator", "node", "replica count")
    return parse_counts(spec.placement, instance.operators, instance.nodes, source, "placement", words)


def solution_json(instance: OdrpInstance, placement: Placement) -> dict[str, Any]:
    """The solution JSON of a placement (operator and node ids, counts)."""
    return {"placement": counts_json(placement, instance.operators, instance.nodes)}


def _fitting(resources: float, capacities: list[float]) -> int:
    """How many replicas needing ``resources`` each the nodes of ``capacities`` can hold at once: the
    most replicas any placement can use (k_i is lowered to it, which keeps every placement)."""
    return sum(math.floor(capacity / resources + 1e-9) for capacity in capacities)
