"""The bi-modal stream-processing platform of Asaduzzaman & Maheswaran, section 6: a discrete-event simulation.

**Platform** (section 6.1). N servers; dedicated links grown by preferential attachment
(:func:`odrp.kinds.pathmap.generators.preferential_links`), bandwidth uniform in 1-10 Mbps, delay
1-10 ms; every server also reaches every other one over the public Internet through its last-mile
uplink (uniform in 1-2 Mbps), with a delay of 10-100 ms per pair. A server of degree d hosts 1 + d of
25 service types and has cpu for k = 2 instances of each at the mean delivery rate (one cpu unit per
Mbps). The three settings of section 6.2 share servers and workload: ``dedicated`` (no public links),
``public`` (no dedicated links) and ``bimodal`` (both).

**Workload**. Poisson arrivals (default 60 tasks per hour); a task has 10 components with services
drawn from the 25 types, a source and a delivery server, a delivery rate r uniform in 0.5-1.5 Mbps
(mean 1 Mbps), a volume uniform in 50-150 MB (mean 100 MB) and a price per MB uniform in 1-10. Every
component needs r cpu units and every consecutive pair r Mbps (cpu usage and bandwidth shrinkage
factors of 1).

**Mapping and reservation** (section 3, Figure 3). On arrival the task is mapped by the diffusing
computation on the resources available at that instant: LeastCostMap over dedicated links in the
dedicated setting, ProcessMap2 otherwise (:mod:`odrp.heuristics.pathmap_diffusion`). A dedicated hop costs 1
(the forwarding price of section 2.4), a public hop ``public_cost`` (3: dearer than any dedicated path
within the hop limit, the paper's preference for dedicated hops). The diffusing computation's
termination takes twice the arrival time of its last map message (the acks retrace the map messages; our
reading). Then the delivery node probes the feasible maps, cheapest first (all of them, or the
``max_probes`` cheapest): a probe reserves, atomically, the cpu of every component on its server, r on
every dedicated link of the map and r on the uplink of every public hop's sender (the platform
"allocates only the uplink bandwidth" of a public hop, section 4.3). Reservations of one task and of
different tasks are summed. A probe that finds a resource short is rolled back and the next map is
probed; when none succeeds the task is rejected. A resource is short either because another task
reserved it while this one was mapped (the concurrency of Figure 3) or because the map's own pairs
together oversubscribe a link or an uplink: the mapping checks each pair against the available bandwidth
on its own (section 3.1), the reservation sums them. ``self_conflicts`` counts the second kind among the
rollbacks.

**Execution**. An accepted task streams from the next scheduling epoch on. Every 10 ms (``tick_s``) the
rate of each public hop is perturbed: allocated rate x 2^(sigma Z), Z standard normal, sigma = 1 (the
log-ratio model of section 6.1, base 2 as in the paper's "one fourth to four times" at 2 sigma). A
dedicated hop carries its allocated rate. The task delivers at min(r, its slowest hop) per tick -- its
servers reserve cpu for r, so it never runs faster -- and ends when its volume is delivered; then all its
resources are released.

**Dynamic re-allocation** (Algorithm 4), every epoch (``epoch_s``, 5 s; the paper gives no period), in
the settings with public links: every flow (a pair whose ends are on different servers) is released
and re-assigned in order of priority = price per MB x the rate it needs (r): first a direct dedicated
link between its ends while the link has capacity (line 7; the two directions share one pool, as in
the instance format), then -- the task's budget allowing ``max_null`` + 1 > 1 hops -- a dedicated path
of at most that many links with capacity (lines 12-13; the probe is taken to complete at once), else
the public network (line 16): the flows sent from one server share its uplink in proportion to their
rates. In the dedicated setting nothing varies and nothing is re-allocated.

**Measures** (Figure 9), over [first arrival, last completion]: acceptance ratio; throughput (tasks
completed per hour, and Mbps delivered); time-averaged server utilisation (cpu reserved / cpu) and
dedicated link utilisation (bandwidth reserved / bandwidth; a multi-hop flow counts on each link);
SLA deviation: per accepted task the mean over its monitoring windows (one per epoch) of (r - r^)/r
with r^ the delivered rate, averaged over accepted tasks, in percent; elongation of the execution time
against volume / r.

With ``audit=True`` every event checks the bookkeeping: no server, dedicated link or uplink holds more
than its capacity, every allocation equals the sum of the accepted tasks' holdings, and at the end
nothing is held. Runs are deterministic in ``seed``; the network and the workload of a seed are the
same in the three settings.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from odrp.heuristics.pathmap_diffusion import ChainTask, Channel, FeasibleMap, MapNetwork, Policy, best_channel, diffuse
from odrp.kinds.pathmap.generators import preferential_links, service_names

NETWORKS = ("dedicated", "public", "bimodal")
EPS = 1e-9
VOLUME_TOLERANCE_MB = 1e-9  # float residue of summing ticks; a task this close to its volume is done


@dataclass(frozen=True)
class SimulationConfig:
    """Every parameter of one run (defaults: the paper's section 6.1 where it gives them, else ours)."""

    network: str = "bimodal"
    """Which links exist: ``dedicated``, ``public`` or ``bimodal`` (both)."""
    servers: int = 100
    """N, the number of servers."""
    dedicated_links: int = 99
    """Dedicated links, grown by preferential attachment (ignored by the public setting)."""
    tasks: int = 500
    """Tasks in the workload trace."""
    arrivals_per_hour: float = 60.0
    """Rate of the Poisson arrivals."""
    components: int = 10
    """Service components per task."""
    service_types: int = 25
    """Service types the components are drawn from."""
    instances_per_service: int = 2
    """k: a server of degree d gets cpu for k instances of each of its 1 + d services at the mean rate."""
    mean_rate_mbps: float = 1.0
    """Mean delivery rate r of a task (r uniform in 0.5-1.5 times it)."""
    mean_volume_mb: float = 100.0
    """Mean volume of a task (uniform in 0.5-1.5 times it)."""
    max_null: int = 1
    """Forwarding servers allowed between two consecutive components (the hop budget is this + 1)."""
    public_cost: float = 3.0
    """Cost of a public hop (a dedicated hop costs 1): dearer than any dedicated path within the hop budget."""
    public_fanout: int = 3
    """ProcessMap2's public neighbours per map (the paper's "small subset")."""
    epoch_s: float = 5.0
    """Scheduling epoch: Algorithm 4's period and the SLA monitoring window (the paper gives no period)."""
    tick_s: float = 0.01
    """Period of the public-hop rate perturbation."""
    sigma: float = 1.0
    """Standard deviation of the base-2 log-ratio of a public hop's rate to its allocated rate."""
    reallocate: bool = True
    """Run Algorithm 4 every epoch in the settings with public links."""
    max_probes: int | None = None
    """Feasible maps the delivery node probes, cheapest first; None: all of them."""
    max_messages: int = 200_000
    """Map messages after which a task's diffusing computation stops (with the maps found so far)."""
    seed: int = 0
    """Seed of the platform, the workload, the mapping and the rate noise."""
    audit: bool = False
    """Check the bookkeeping after every event (:meth:`Simulation.audit`; for tests, slow)."""

    def __post_init__(self) -> None:
        if self.network not in NETWORKS:
            raise ValueError(f"network: expected one of {', '.join(NETWORKS)}, got {self.network!r}")
        if self.servers < 2 or self.tasks < 0 or self.arrivals_per_hour <= 0 or self.epoch_s <= 0:
            raise ValueError("servers >= 2, tasks >= 0, arrivals_per_hour > 0 and epoch_s > 0 are required")
        if round(self.epoch_s / self.tick_s) < 1:
            raise ValueError("tick_s must not exceed epoch_s")


# ------------------------------------------------------------------------------- the platform


@dataclass(frozen=True)
class DedicatedLink:
    u: int
    v: int
    bandwidth: float
    delay_ms: float


@dataclass(frozen=True)
class Platform:
    """Servers, dedicated links and last-mile uplinks (all three settings share one platform per seed)."""

    capacity: tuple[float, ...]
    services: tuple[frozenset[str], ...]
    links: tuple[DedicatedLink, ...]
    uplink: tuple[float, ...]
    public_delay_ms: np.ndarray
    dedicated: bool
    public: bool

    @property
    def n(self) -> int:
        return len(self.capacity)


def build_platform(config: SimulationConfig) -> Platform:
    rng = random.Random(f"{config.seed}-platform")
    edges = preferential_links(config.servers, config.dedicated_links, rng)
    degree = [0] * config.servers
    for u, v in edges:
        degree[u] += 1
        degree[v] += 1
    types = service_names(config.service_types)
    services = tuple(frozenset(rng.sample(types, min(len(types), 1 + d))) for d in degree)
    capacity = tuple(float(config.instances_per_service * (1 + d) * config.mean_rate_mbps) for d in degree)
    links = tuple(DedicatedLink(u, v, rng.uniform(1.0, 10.0), rng.uniform(1.0, 10.0)) for u, v in edges)
    uplink = tuple(rng.uniform(1.0, 2.0) for _ in range(config.servers))
    delay = np.zeros((config.servers, config.servers))
    for u in range(config.servers):
        for v in range(u + 1, config.servers):
            delay[u, v] = delay[v, u] = rng.uniform(10.0, 100.0)
    return Platform(
        capacity=capacity,
        services=services,
        links=links if config.network != "public" else (),
        uplink=uplink,
        public_delay_ms=delay,
        dedicated=config.network != "public",
        public=config.network != "dedicated",
    )


# ------------------------------------------------------------------------------- the workload


@dataclass(frozen=True)
class TaskSpec:
    """One stream-processing task of the workload trace."""

    id: int
    arrival_s: float
    source: int
    sink: int
    services: tuple[str, ...]
    rate: float
    volume_mb: float
    price_per_mb: float


def build_workload(config: SimulationConfig) -> list[TaskSpec]:
    rng = random.Random(f"{config.seed}-workload")
    types = service_names(config.service_types)
    out, now = [], 0.0
    for k in range(config.tasks):
        now += rng.expovariate(config.arrivals_per_hour / 3600.0)
        source, sink = rng.sample(range(config.servers), 2)
        out.append(
            TaskSpec(
                id=k,
                arrival_s=now,
                source=source,
                sink=sink,
                services=tuple(rng.choice(types) for _ in range(config.components)),
                rate=config.mean_rate_mbps * rng.uniform(0.5, 1.5),
                volume_mb=config.mean_volume_mb * rng.uniform(0.5, 1.5),
                price_per_mb=rng.uniform(1.0, 10.0),
            )
        )
    return out


# ------------------------------------------------------------------------------ the live state


@dataclass
class Flow:
    """The stream of one consecutive pair whose ends are on different servers, and what it holds."""

    task: int
    pair: int
    u: int
    v: int
    rate: float
    links: list[int] = field(default_factory=list)  # dedicated links held, r each
    uplinks: list[int] = field(default_factory=list)  # servers whose uplink it uses, ``share`` each
    share: float = 0.0


@dataclass
class Plan:
    """What one feasible map asks the probe to reserve."""

    cpu: dict[int, float]
    flows: list[Flow]
    self_conflict: bool = False  # its own pairs oversubscribe a link or uplink (checked one by one)


@dataclass
class RunningTask:
    spec: TaskSpec
    admitted_s: float
    cpu: dict[int, float]
    flows: list[Flow]
    messages: int
    delivered_mb: float = 0.0
    deviations: list[float] = field(default_factory=list)
    finished_s: float | None = None


class Ledger:
    """What is reserved on every server, dedicated link and uplink."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.cpu = [0.0] * platform.n
        self.link = [0.0] * len(platform.links)
        self.uplink = [0.0] * platform.n

    def hold(self, task: RunningTask, sign: float = 1.0) -> None:
        for u, amount in task.cpu.items():
            self.cpu[u] += sign * amount
        for flow in task.flows:
            self.hold_flow(flow, sign)

    def hold_flow(self, flow: Flow, sign: float = 1.0) -> None:
        for e in flow.links:
            self.link[e] += sign * flow.rate
        for u in flow.uplinks:
            self.uplink[u] += sign * flow.share

    def clean(self) -> None:
        """Snap float residue of releases to exact zeros."""
        for values in (self.cpu, self.link, self.uplink):
            for i, x in enumerate(values):
                if abs(x) < 1e-9:
                    values[i] = 0.0


# ---------------------------------------------------------------------------------- results


@dataclass
class SimulationResult:
    config: SimulationConfig
    arrived: int
    accepted: int
    completed: int
    rollbacks: int
    self_conflicts: int
    span_s: float
    acceptance_ratio: float
    throughput_tasks_per_hour: float
    throughput_mbps: float
    server_utilisation: float
    dedicated_link_utilisation: float
    sla_deviation_pct: float
    elongation_pct: float
    mean_map_messages: float
    moved_to_dedicated: int = 0
    moved_to_public: int = 0
    audit_violations: list[str] = field(default_factory=list)
    holdings_at_end: float = 0.0

    def row(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("config", "audit_violations")}
        out["network"] = self.config.network
        out["dedicated_links"] = self.config.dedicated_links
        out["seed"] = self.config.seed
        return out


# ------------------------------------------------------------------------------- simulation


class _Channels(Mapping[int, tuple[Channel, ...]]):
    """Server u's links to every other server, built on demand (the public ones reach everybody)."""

    def __init__(self, sim: Simulation, u: int, dedicated: dict[int, Channel], uplink_free: float) -> None:
        self.sim, self.u, self.dedicated, self.uplink_free = sim, u, dedicated, uplink_free
        self.public = sim.platform.public

    def __getitem__(self, k: int) -> tuple[Channel, ...]:
        out = (self.dedicated[k],) if k in self.dedicated else ()
        if self.public and k != self.u:
            delay = float(self.sim.platform.public_delay_ms[self.u, k])
            out = (*out, Channel("public", self.uplink_free, self.sim.config.public_cost, delay))
        if not out:
            raise KeyError(k)
        return out

    def __iter__(self) -> Iterator[int]:
        return iter(self.sim.everyone_but[self.u] if self.public else sorted(self.dedicated))

    def __len__(self) -> int:
        return len(self.sim.everyone_but[self.u]) if self.public else len(self.dedicated)


_COMPLETE, _EPOCH, _MAPPED, _ARRIVE = 0, 1, 2, 3  # order of events at one instant


class Simulation:
    """One run; :meth:`run` returns the :class:`SimulationResult`."""

    def __init__(
        self, config: SimulationConfig, platform: Platform | None = None, workload: list[TaskSpec] | None = None
    ) -> None:
        self.config = config
        self.platform = platform or build_platform(config)
        self.workload = build_workload(config) if workload is None else workload
        self.ledger = Ledger(self.platform)
        self.noise = np.random.default_rng(config.seed)
        self.rng = random.Random(f"{config.seed}-mapping")
        self.running: dict[int, RunningTask] = {}
        self.finished: list[RunningTask] = []
        self.events: list[tuple[float, int, int, Any]] = []
        self.sequence = 0
        self.rollbacks = self.self_conflicts = 0
        self.moved_to_dedicated = self.moved_to_public = 0
        self.violations: list[str] = []
        self.now = 0.0
        self.area_cpu = self.area_link = 0.0
        self.adjacency: list[list[tuple[int, int]]] = [[] for _ in range(self.platform.n)]
        for e, link in enumerate(self.platform.links):
            self.adjacency[link.u].append((link.v, e))
            self.adjacency[link.v].append((link.u, e))
        self.direct: dict[tuple[int, int], int] = {}
        for e, link in enumerate(self.platform.links):
            self.direct[(link.u, link.v)] = self.direct[(link.v, link.u)] = e
        n = self.platform.n
        self.graph = graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((link.u, link.v) for link in self.platform.links)
        hops = config.max_null + 1
        self.within_budget = [set(nx.single_source_shortest_path_length(graph, u, cutoff=hops)) for u in range(n)]
        self.everyone_but = [tuple(v for v in range(n) if v != u) for u in range(n)]
        hosts: dict[str, list[int]] = defaultdict(list)
        for u, services in enumerate(self.platform.services):
            for service in services:
                hosts[service].append(u)
        self.hosts = {service: tuple(us) for service, us in hosts.items()}

    # -- events ---------------------------------------------------------------------------
    def push(self, time_s: float, kind: int, payload: Any) -> None:
        self.sequence += 1
        heapq.heappush(self.events, (time_s, kind, self.sequence, payload))

    def advance(self, time_s: float) -> None:
        """Integrate the reserved cpu and dedicated bandwidth up to ``time_s``."""
        dt = time_s - self.now
        if dt > 0:
            self.area_cpu += sum(self.ledger.cpu) * dt
            self.area_link += sum(self.ledger.link) * dt
            self.now = time_s

    def run(self) -> SimulationResult:
        for spec in self.workload:
            self.push(spec.arrival_s, _ARRIVE, spec)
        if self.workload:
            self.push(0.0, _EPOCH, None)
        pending_arrivals = len(self.workload)
        pending_mappings = 0
        while self.events:
            time_s, kind, _, payload = heapq.heappop(self.events)
            self.advance(time_s)
            if kind == _ARRIVE:
                pending_arrivals -= 1
                pending_mappings += 1
                self.arrive(payload)
            elif kind == _MAPPED:
                pending_mappings -= 1
                self.probe(*payload)
            elif kind == _COMPLETE:
                self.complete(payload)
            else:
                if not self.running and not pending_arrivals and not pending_mappings:
                    continue
                self.epoch()
                self.push(self.next_epoch(), _EPOCH, None)
            if self.config.audit:
                self.audit(f"t={time_s:.3f}")
        return self.result()

    def next_epoch(self) -> float:
        """The next epoch boundary; idle stretches (nothing running, nothing mapped) are skipped."""
        step = self.config.epoch_s
        following = self.now + step
        if not self.running:
            upcoming = [t for t, k, _, _ in self.events if k in (_ARRIVE, _MAPPED)]
            if upcoming:
                following = max(following, math.ceil(min(upcoming) / step) * step)
        return following

    # -- mapping, reservation, rollback -----------------------------------------------------
    def map_network(self) -> MapNetwork:
        """What the map managers see now: available cpu, link bandwidth and uplink bandwidth."""
        p, ledger = self.platform, self.ledger
        dedicated: list[dict[int, Channel]] = [{} for _ in range(p.n)]
        for e, link in enumerate(p.links):
            free = link.bandwidth - ledger.link[e]
            dedicated[link.u][link.v] = Channel("dedicated", free, 1.0, link.delay_ms)
            dedicated[link.v][link.u] = Channel("dedicated", free, 1.0, link.delay_ms)
        uplink_free = [p.uplink[u] - ledger.uplink[u] for u in range(p.n)]
        return MapNetwork(
            capacity=[p.capacity[u] - ledger.cpu[u] for u in range(p.n)],
            services=p.services,
            channels=[_Channels(self, u, dedicated[u], uplink_free[u]) for u in range(p.n)],
            dedicated=[tuple(sorted(d)) for d in dedicated],
            public=[self.everyone_but[u] for u in range(p.n)] if p.public else [() for _ in range(p.n)],
            hosts=self.hosts,
        )

    def arrive(self, spec: TaskSpec) -> None:
        network = self.map_network()
        chain = ChainTask(
            spec.source,
            spec.sink,
            spec.services,
            (spec.rate,) * len(spec.services),
            (spec.rate,) * (len(spec.services) + 1),
            self.config.max_null,
        )
        policy = Policy(prune="least_cost", bimodal=self.platform.public, public_fanout=self.config.public_fanout)
        run = diffuse(network, chain, policy, rng=self.rng, max_messages=self.config.max_messages)
        maps = run.maps[: self.config.max_probes]
        plans = [self.plan(spec, network, fm) for fm in maps]
        latency_s = 2.0 * run.last_arrival_ms / 1000.0
        self.push(self.now + latency_s, _MAPPED, (spec, plans, run.messages))

    def plan(self, spec: TaskSpec, network: MapNetwork, fm: FeasibleMap) -> Plan:
        """The cpu and the flows a map asks for, with the links each hop used when it was mapped."""
        cpu: dict[int, float] = defaultdict(float)
        for u in fm.nodes:
            cpu[u] += spec.rate
        flows = []
        for p, path in enumerate(fm.paths):
            if len(path) < 2:
                continue
            flow = Flow(spec.id, p, path[0], path[-1], spec.rate, share=spec.rate)
            for a, b in itertools.pairwise(path):
                channel = best_channel(network, a, b, spec.rate)
                assert channel is not None
                if channel.kind == "dedicated":
                    flow.links.append(self.direct[(a, b)])
                else:
                    flow.uplinks.append(a)
            flows.append(flow)
        plan = Plan(dict(cpu), flows)
        plan.self_conflict = not self.fits(plan)  # the resources are still those the map was made on
        return plan

    def fits(self, plan: Plan) -> bool:
        """Whether the plan's summed demands fit what is free now."""
        p, ledger = self.platform, self.ledger
        need_link: dict[int, float] = defaultdict(float)
        need_uplink: dict[int, float] = defaultdict(float)
        for flow in plan.flows:
            for e in flow.links:
                need_link[e] += flow.rate
            for u in flow.uplinks:
                need_uplink[u] += flow.share
        return (
            all(ledger.cpu[u] + c <= p.capacity[u] + EPS for u, c in plan.cpu.items())
            and all(ledger.link[e] + b <= p.links[e].bandwidth + EPS for e, b in need_link.items())
            and all(ledger.uplink[u] + b <= p.uplink[u] + EPS for u, b in need_uplink.items())
        )

    def probe(self, spec: TaskSpec, plans: list[Plan], messages: int) -> None:
        """Reserve the first plan that still fits; roll back the others (Figure 3)."""
        for plan in plans:
            if not self.fits(plan):
                self.rollbacks += 1
                self.self_conflicts += plan.self_conflict
                continue
            task = RunningTask(spec, self.now, plan.cpu, plan.flows, messages)
            self.ledger.hold(task)
            self.running[spec.id] = task
            return
        self.finished.append(RunningTask(spec, self.now, {}, [], messages, finished_s=None))

    def complete(self, task_id: int) -> None:
        task = self.running.pop(task_id)
        self.ledger.hold(task, -1.0)
        self.ledger.clean()
        task.cpu, task.flows = {}, []
        self.finished.append(task)

    # -- one epoch: Algorithm 4, then the streams progress ------------------------------------
    def epoch(self) -> None:
        """Algorithm 4 (where public links exist), then every admitted task streams for one epoch."""
        if self.platform.public and self.config.reallocate:
            self.reallocate()
        for task in list(self.running.values()):
            if task.finished_s is None:
                self.progress(task)

    def reallocate(self) -> None:
        """Algorithm 4 at every server at once: direct link, then multi-hop dedicated, then public."""
        p, ledger = self.platform, self.ledger
        flows = [f for task in self.running.values() if task.finished_s is None for f in task.flows]
        was_public = {id(f): bool(f.uplinks) for f in flows}
        for flow in flows:
            ledger.hold_flow(flow, -1.0)
            flow.links, flow.uplinks, flow.share = [], [], 0.0
        price = {tid: task.spec.price_per_mb for tid, task in self.running.items()}
        flows.sort(key=lambda f: (-price[f.task] * f.rate, f.task, f.pair))
        waiting = []
        for flow in flows:  # line 7: the direct dedicated link, top priority first
            e = self.direct.get((flow.u, flow.v))
            if e is not None and ledger.link[e] + flow.rate <= p.links[e].bandwidth + EPS:
                flow.links = [e]
                ledger.hold_flow(flow)
            else:
                waiting.append(flow)
        public = []
        for flow in waiting:  # lines 12-13: a multi-hop dedicated path within the budget
            near = self.config.max_null >= 1 and flow.v in self.within_budget[flow.u]
            route = self.dedicated_route(flow) if near else None
            if route:
                flow.links = route
                ledger.hold_flow(flow)
            else:
                public.append(flow)
        demand: dict[int, float] = defaultdict(float)
        for flow in public:  # line 16: the public network; a server's uplink shared by rate
            demand[flow.u] += flow.rate
        for flow in public:
            flow.uplinks = [flow.u]
            flow.share = flow.rate * min(1.0, p.uplink[flow.u] / demand[flow.u])
            ledger.hold_flow(flow)
        for flow in flows:
            if was_public[id(flow)] and not flow.uplinks:
                self.moved_to_dedicated += 1
            elif flow.uplinks and not was_public[id(flow)]:
                self.moved_to_public += 1

    def dedicated_route(self, flow: Flow) -> list[int] | None:
        """Fewest-hop dedicated path u -> v of at most max_null + 1 links with room for the flow."""
        p, ledger = self.platform, self.ledger
        reached_by: dict[int, int] = {}  # a server -> the link breadth-first search first reached it by

        def open_links(node: int) -> Iterator[int]:
            for other, e in self.adjacency[node]:
                if ledger.link[e] + flow.rate <= p.links[e].bandwidth + EPS:
                    reached_by.setdefault(other, e)
                    yield other

        routes: dict[int, list[int]] = {flow.u: []}
        for node, other in nx.generic_bfs_edges(self.graph, flow.u, open_links, self.config.max_null + 1):
            routes[other] = [*routes[node], reached_by[other]]
            if other == flow.v:
                return routes[other]
        return None

    def progress(self, task: RunningTask) -> None:
        """Stream for one epoch: per tick, min(r, slowest hop); schedule the completion if it falls inside."""
        config = self.config
        ticks = round(config.epoch_s / config.tick_s)
        rate = np.full(ticks, task.spec.rate)
        for flow in task.flows:
            if flow.uplinks:
                draws = self.noise.standard_normal((len(flow.uplinks), ticks))
                rate = np.minimum(rate, (flow.share * np.exp2(config.sigma * draws)).min(axis=0))
        delivered = np.cumsum(rate) * config.tick_s / 8.0  # Mb per s -> MB
        remaining = task.spec.volume_mb - task.delivered_mb
        if delivered[-1] < remaining - VOLUME_TOLERANCE_MB:
            task.delivered_mb += float(delivered[-1])
            task.deviations.append(1.0 - float(delivered[-1]) * 8.0 / (task.spec.rate * config.epoch_s))
            return
        last = min(int(np.searchsorted(delivered, remaining - VOLUME_TOLERANCE_MB)), ticks - 1)
        active = (last + 1) * config.tick_s
        task.delivered_mb = task.spec.volume_mb
        task.deviations.append(1.0 - remaining * 8.0 / (task.spec.rate * active))
        task.finished_s = self.now + active
        self.push(task.finished_s, _COMPLETE, task.spec.id)

    # -- bookkeeping and measures -------------------------------------------------------------
    def audit(self, when: str) -> None:
        p, ledger = self.platform, self.ledger
        cpu = [0.0] * p.n
        link = [0.0] * len(p.links)
        uplink = [0.0] * p.n
        for task in self.running.values():
            for u, c in task.cpu.items():
                cpu[u] += c
            for flow in task.flows:
                for e in flow.links:
                    link[e] += flow.rate
                for u in flow.uplinks:
                    uplink[u] += flow.share
        checks = (
            ("server", cpu, ledger.cpu, p.capacity),
            ("dedicated link", link, ledger.link, [x.bandwidth for x in p.links]),
            ("uplink", uplink, ledger.uplink, p.uplink),
        )
        for name, held, booked, capacity in checks:
            for i, (h, b, c) in enumerate(zip(held, booked, capacity, strict=True)):
                if b > c + 1e-6:
                    self.violations.append(f"{when}: {name} {i} holds {b:g} > capacity {c:g}")
                if abs(h - b) > 1e-6:
                    self.violations.append(f"{when}: {name} {i} booked {b:g} but tasks hold {h:g}")

    def result(self) -> SimulationResult:
        config = self.config
        accepted = [t for t in self.finished if t.finished_s is not None]
        arrived = len(self.workload)
        start = self.workload[0].arrival_s if self.workload else 0.0
        end = max([t.finished_s for t in accepted], default=start)
        span = max(end - start, 1e-9)
        cpu_total = sum(self.platform.capacity)
        link_total = sum(x.bandwidth for x in self.platform.links)
        held = sum(self.ledger.cpu) + sum(self.ledger.link) + sum(self.ledger.uplink)
        return SimulationResult(
            config=config,
            arrived=arrived,
            accepted=len(accepted),
            completed=len(accepted),
            rollbacks=self.rollbacks,
            self_conflicts=self.self_conflicts,
            span_s=span,
            acceptance_ratio=len(accepted) / arrived if arrived else 0.0,
            throughput_tasks_per_hour=len(accepted) / span * 3600.0,
            throughput_mbps=sum(t.spec.volume_mb for t in accepted) * 8.0 / span,
            server_utilisation=self.area_cpu / (cpu_total * span) if cpu_total else 0.0,
            dedicated_link_utilisation=self.area_link / (link_total * span) if link_total else 0.0,
            sla_deviation_pct=100.0 * float(np.mean([np.mean(t.deviations) for t in accepted])) if accepted else 0.0,
            elongation_pct=100.0
            * float(
                np.mean([(t.finished_s - t.admitted_s) / (t.spec.volume_mb * 8.0 / t.spec.rate) - 1 for t in accepted])
            )
            if accepted
            else 0.0,
            mean_map_messages=float(np.mean([t.messages for t in self.finished])) if self.finished else 0.0,
            moved_to_dedicated=self.moved_to_dedicated,
            moved_to_public=self.moved_to_public,
            audit_violations=self.violations,
            holdings_at_end=held,
        )


def simulate(config: SimulationConfig) -> SimulationResult:
    """Run the platform simulation of section 6 for one configuration."""
    return Simulation(config).run()
