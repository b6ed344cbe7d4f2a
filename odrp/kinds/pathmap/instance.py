"""Pathmap: mapping a stream-processing service chain on a bi-modal network (Asaduzzaman & Maheswaran).

Section 3.1 of the paper: servers G_R = (V_R, E_R) with available capacity C_av(v) and the services
S(v) they host, joined by undirected links e with available bandwidth B_av(e) and an additive cost
W(e) ("dedicated" links of a preferential-attachment network and "public" Internet links). A task is
a path s_J = v_0, v_1, ..., v_m, v_{m+1} = t_J: a data source, m service components (each with a
service and a cpu requirement C_req) and a delivery node; consecutive pairs (v_p, v_{p+1}),
p = 0..m, have bandwidth requirements B_req(p). The source and the sink are pinned on given servers
and use no cpu.

A mapping places each component on a server (M_v) and each consecutive pair on a server path (M_e).
It is feasible when

- every component sits on a server that hosts its service;
- the summed cpu of the components on a server stays within its capacity (section 3.1, first
  constraint);
- every pair's path starts where the pair's first end is placed and ends where its second end is
  placed, consecutive servers on it are joined by a link, and every link on it has bandwidth >= the
  pair's requirement (section 3.1, second constraint: B(e_J) <= min B(e_R) over e_R in M_e(e_J));
- every pair's path has at most ``max_null`` + 1 links (Algorithm 1, line 23: at most ``max_null``
  forwarding-only servers between two consecutive components).

Cost W = sum over the pairs of the costs of the links on their paths; a zero-length path (both ends
on one server) costs 0. Minimise W.

Readings (the paper leaves them open; the kind's specification fixes the first two):

- **Bandwidth is checked per pair, not summed.** Two pairs of the task may share a link, and each is
  checked against the link's available bandwidth on its own (the paper's constraint is written per
  task edge, its Algorithm 1 compares each hop with B_av(v, k) without deducting earlier hops, and
  it states that two mapped paths may have common edges). Summing is the reservation's business
  (the platform simulation sums reservations of all tasks on a link).
- **A path is a walk.** A path is any sequence of servers in which consecutive servers are joined by
  a link (Algorithm 1 allows cyclic extension); each traversal of a link counts once in the cost and
  in the hop count. With non-negative costs a walk is never cheaper than a simple path, so this
  changes no optimum.
- **Parallel links.** Two servers may be joined by one dedicated and one public link (the bi-modal
  network has a public link between every two servers). A hop between two servers uses the cheapest
  of the links between them whose bandwidth meets the pair's requirement (ties: dedicated first,
  then the link listed first); the metrics say which kind each hop used. At most one link of each
  kind joins two servers.
- ``delay`` does not enter the cost; the metrics report the summed delay of the links used, and the
  distributed heuristics use it as the message latency.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, NonNegativeFloat, NonNegativeInt

from odrp.core.errors import InputError
from odrp.core.kind import Strict, require, validate

NAME = "pathmap"
SENSE = "min"
LINK_KINDS = ("dedicated", "public")

# --------------------------------------------------------------------------------- the schema


FiniteNonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
"""Costs, delays and requirements; a capacity or a link bandwidth may be infinite (unlimited)."""


class ServerSpec(Strict):
    id: str = Field(min_length=1)
    capacity: NonNegativeFloat = Field(description="C_av(v): available cpu")
    services: list[str] = Field(default_factory=list, description="S(v): the services the server hosts")


class LinkSpec(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    source: str = Field(alias="from")
    target: str = Field(alias="to")
    bandwidth: NonNegativeFloat = Field(description="B_av(e)")
    cost: FiniteNonNegative = Field(description="W(e), additive")
    delay: FiniteNonNegative = Field(0.0, description="propagation delay (ms); not part of the cost")
    kind: Literal["dedicated", "public"] = "dedicated"


class ComponentSpec(Strict):
    id: str = Field(min_length=1)
    service: str = Field(min_length=1)
    cpu: FiniteNonNegative = Field(description="C_req(v_i)")


class TaskSpec(Strict):
    source: str = Field(description="server of the data source s_J")
    sink: str = Field(description="server of the delivery node t_J")
    components: list[ComponentSpec] = Field(min_length=1)
    bandwidth: list[FiniteNonNegative] = Field(description="B_req of source->c1, c1->c2, ..., cm->sink")
    max_null: NonNegativeInt = Field(1, description="forwarding-only servers allowed between consecutive components")


class PathmapSpec(Strict):
    problem: Literal["pathmap"]
    name: str = "unnamed"
    servers: list[ServerSpec] = Field(min_length=1)
    links: list[LinkSpec] = []
    task: TaskSpec


class SolutionSpec(Strict):
    nodes: dict[str, str]
    paths: list[list[str]]


def schema() -> dict[str, Any]:
    """JSON Schema of a pathmap instance (``odrp schema pathmap``)."""
    return PathmapSpec.model_json_schema(by_alias=True)


# ---------------------------------------------------------------------- the compiled instance


@dataclass(frozen=True)
class Link:
    """One undirected link between servers ``u`` and ``v`` (indices)."""

    u: int
    v: int
    bandwidth: float
    cost: float
    delay: float
    kind: str


@dataclass(frozen=True)
class PathmapInstance:
    """A validated pathmap instance; servers and components are referred to by index."""

    name: str
    servers: tuple[str, ...]
    capacity: tuple[float, ...]
    services: tuple[frozenset[str], ...]
    links: tuple[Link, ...]
    source: int
    sink: int
    components: tuple[str, ...]
    component_service: tuple[str, ...]
    cpu: tuple[float, ...]
    bandwidth: tuple[float, ...]
    max_null: int
    spec: dict[str, Any]

    kind = NAME
    sense = SENSE

    @property
    def n_servers(self) -> int:
        return len(self.servers)

    @property
    def n_components(self) -> int:
        return len(self.components)

    @property
    def n_pairs(self) -> int:
        """m + 1 consecutive pairs: source -> c1, ..., cm -> sink."""
        return len(self.components) + 1

    @property
    def max_hops(self) -> int:
        """Links allowed on one pair's path: ``max_null`` + 1."""
        return self.max_null + 1

    @cached_property
    def between(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """(u, v) -> indices of the links joining u and v (both orders), dedicated first."""
        out: dict[tuple[int, int], list[int]] = {}
        for index, link in enumerate(self.links):
            out.setdefault((link.u, link.v), []).append(index)
            out.setdefault((link.v, link.u), []).append(index)
        return {key: tuple(sorted(ids, key=lambda i: LINK_KINDS.index(self.links[i].kind))) for key, ids in out.items()}

    @cached_property
    def neighbours(self) -> tuple[tuple[int, ...], ...]:
        """Servers joined to each server by at least one link, by index."""
        out: list[set[int]] = [set() for _ in self.servers]
        for link in self.links:
            out[link.u].add(link.v)
            out[link.v].add(link.u)
        return tuple(tuple(sorted(s)) for s in out)

    @cached_property
    def hosts(self) -> dict[str, tuple[int, ...]]:
        """service -> servers hosting it."""
        out: dict[str, list[int]] = {}
        for u, services in enumerate(self.services):
            for service in services:
                out.setdefault(service, []).append(u)
        return {s: tuple(us) for s, us in out.items()}

    def candidates(self, i: int) -> tuple[int, ...]:
        """Servers that host component i's service and have room for it alone."""
        return tuple(u for u in self.hosts.get(self.component_service[i], ()) if self.cpu[i] <= self.capacity[u])

    def hop_link(self, u: int, v: int, requirement: float) -> int | None:
        """The link a hop u -> v uses for a pair needing ``requirement``: the cheapest that carries it."""
        best = None
        for index in self.between.get((u, v), ()):
            link = self.links[index]
            if link.bandwidth >= requirement and (best is None or link.cost < self.links[best].cost):
                best = index
        return best


# ------------------------------------------------------------------------------------ loading


def load(data: Any, source: str = "<instance>") -> PathmapInstance:
    """Validate an instance (parsed JSON) and compile it; bad input raises :class:`InputError`."""
    spec = validate(PathmapSpec, data, source)
    return compile_spec(spec, source)


def compile_spec(spec: PathmapSpec, source: str) -> PathmapInstance:
    names = [s.id for s in spec.servers]
    index: dict[str, int] = {}
    for u, name in enumerate(names):
        require(name not in index, source, f"servers[{u}].id", f"a unique id, {name!r} repeats")
        index[name] = u

    links = []
    seen: set[tuple[int, int, str]] = set()
    for e, link in enumerate(spec.links):
        where = f"links[{e}]"
        require(link.source in index, source, f"{where}.from", f"a known server, got {link.source!r}")
        require(link.target in index, source, f"{where}.to", f"a known server, got {link.target!r}")
        u, v = index[link.source], index[link.target]
        require(u != v, source, where, f"two different servers (a link from {link.source!r} to itself)")
        key = (min(u, v), max(u, v), link.kind)
        require(key not in seen, source, where, f"one {link.kind} link between {link.source!r} and {link.target!r}")
        seen.add(key)
        links.append(Link(u, v, link.bandwidth, link.cost, link.delay, link.kind))

    task = spec.task
    require(task.source in index, source, "task.source", f"a known server, got {task.source!r}")
    require(task.sink in index, source, "task.sink", f"a known server, got {task.sink!r}")
    ids: set[str] = set()
    for i, component in enumerate(task.components):
        require(component.id not in ids, source, f"task.components[{i}].id", f"a unique id, {component.id!r} repeats")
        ids.add(component.id)
    m = len(task.components)
    require(
        len(task.bandwidth) == m + 1,
        source,
        "task.bandwidth",
        f"{m + 1} entries (one per consecutive pair source -> c1 ... c{m} -> sink), got {len(task.bandwidth)}",
    )
    return PathmapInstance(
        name=spec.name,
        servers=tuple(names),
        capacity=tuple(s.capacity for s in spec.servers),
        services=tuple(frozenset(s.services) for s in spec.servers),
        links=tuple(links),
        source=index[task.source],
        sink=index[task.sink],
        components=tuple(c.id for c in task.components),
        component_service=tuple(c.service for c in task.components),
        cpu=tuple(c.cpu for c in task.components),
        bandwidth=tuple(task.bandwidth),
        max_null=task.max_null,
        spec=spec.model_dump(by_alias=True),
    )


# ---------------------------------------------------------------------------------- solutions

Mapping = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]
"""Internal form of a solution: (server of each component, server path of each pair)."""


def parse_solution(instance: PathmapInstance, data: Any, source: str = "<solution>") -> Mapping:
    """Read ``{"nodes": {component: server}, "paths": [[server, ...], ...]}``.

    Unknown components or servers and empty paths are bad input; a missing component or a wrong
    number of paths is left to the evaluator, which reports it as a violation.
    """
    spec = validate(SolutionSpec, data, source)
    comp_index = {c: i for i, c in enumerate(instance.components)}
    server_index = {s: u for u, s in enumerate(instance.servers)}
    nodes = [-1] * instance.n_components
    for component, server in spec.nodes.items():
        if component not in comp_index:
            raise InputError(source, f"nodes.{component}", "a component of the task")
        if server not in server_index:
            raise InputError(source, f"nodes.{component}", f"a known server, got {server!r}")
        nodes[comp_index[component]] = server_index[server]
    paths = []
    for p, path in enumerate(spec.paths):
        if not path:
            raise InputError(source, f"paths[{p}]", "at least one server (a zero-length path is [server])")
        for h, server in enumerate(path):
            if server not in server_index:
                raise InputError(source, f"paths[{p}][{h}]", f"a known server, got {server!r}")
        paths.append(tuple(server_index[s] for s in path))
    return tuple(nodes), tuple(paths)


def solution_json(instance: PathmapInstance, nodes: tuple[int, ...], paths: tuple[tuple[int, ...], ...]) -> dict:
    """The solution JSON of a mapping given by server indices."""
    return {
        "nodes": {c: instance.servers[u] for c, u in zip(instance.components, nodes, strict=True)},
        "paths": [[instance.servers[u] for u in path] for path in paths],
    }
