"""The paper's distributed mapping algorithm, simulated centrally: a diffusing computation of map messages.

Asaduzzaman & Maheswaran, section 4. Every server runs ``ProcessMap`` (Algorithm 1) when a map message
arrives: the message carries a partial map whose first j components (its *prefix length*) are placed;
the server v tries every x = 0, 1, ... and places the next x components on itself while it hosts their
services and its capacity holds everything the map puts on it (line 14; x = 0 places nothing and only
forwards); a map that reaches the delivery node with every component placed is stored as a feasible
map (line 16); each extended map m_x is sent to every neighbour k whose link carries the bandwidth of
the next pair (line 23), and a map that placed nothing on v may only be forwarded while the current
pair's path stays within ``max_null`` forwarding servers (line 23's empty-hop test, read per pair as in
:mod:`odrp.kinds.pathmap.instance`). The delivery node then picks the cheapest stored map.

Simulation. Messages travel with the delay of the link they use (the instance's ``delay``, in ms) and
are processed in order of arrival (ties in order of sending), so the run is deterministic and the
arrival order -- which matters once maps are pruned -- is the one an asynchronous network with those
delays would produce. Processing takes no time. We count *map messages* (the paper's cost measure: each
one invokes ProcessMap); every map message is acknowledged exactly once (Algorithms 1-2: a regular ack,
or the final ack of the diffusing computation's termination detection), so the ack count equals it and
is not simulated. The spec appended to the first message on each link changes no count either.

Variants (the ``Policy``):

- exhaustive (Algorithm 1 as written): no pruning; it enumerates every feasible map and is exact;
- ``least_cost`` (LeastCostMap, section 4.1.1): each server keeps, per prefix length, the least cost of
  the partial maps it has seen and extends a map only if it is strictly cheaper (Algorithm 3, line 20);
- ``annealed`` (AnnealedLeastCostMap, 4.1.2): a map that LeastCostMap would prune is still extended with
  probability ``anneal_start * exp(-anneal_rate * prefix length)``;
- ``random_neighbours = k`` (RandomNeighbor, 4.1.3): each extended map goes to k neighbours drawn at
  random among those whose link carries it, instead of all of them (no cost pruning);
- ``bimodal`` (ProcessMap2, Algorithm 3, with LeastCostMap pruning): maps are sent to dedicated-link
  neighbours as above and, when v placed at least one component (line 31), to at most
  ``public_fanout`` servers known to host the next service (or to the delivery node when every
  component is placed) over public links carrying the bandwidth (lines 32-36). Which few: the cheapest
  public links, then the shortest delays (our choice: the paper says only "a small subset"). The data
  source may also use a public link for its first hop before anything is placed (otherwise a task
  whose source hosts none of its services could never leave a public-only network).

A hop from v to k uses the cheapest link between them that carries the pair's bandwidth (the reading of
:mod:`odrp.kinds.pathmap.instance` for parallel links); the neighbour rules above only decide who receives.
Paths are walks (cyclic extension is allowed, line 28), so with costs >= 0 the exhaustive run is exact.
A message budget (``max_messages``) and a deadline stop runaway enumerations; the outcome then says
the run is incomplete.
"""

from __future__ import annotations

import heapq
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

EPS = 1e-9


@dataclass(frozen=True)
class Channel:
    """A link as seen from one end: its kind, available bandwidth, cost and delay (ms)."""

    kind: str
    bandwidth: float
    cost: float
    delay: float


@dataclass
class MapNetwork:
    """What the map managers know: local resources, links to neighbours, and who hosts which service."""

    capacity: Sequence[float]
    services: Sequence[frozenset[str]]
    channels: list[dict[int, tuple[Channel, ...]]]
    dedicated: list[tuple[int, ...]]
    public: list[tuple[int, ...]]
    hosts: dict[str, tuple[int, ...]]


@dataclass(frozen=True)
class ChainTask:
    """The task specification T carried by the map messages."""

    source: int
    sink: int
    services: tuple[str, ...]
    cpu: tuple[float, ...]
    bandwidth: tuple[float, ...]
    max_null: int

    @property
    def m(self) -> int:
        return len(self.services)


@dataclass(frozen=True)
class Policy:
    """Which variant of ProcessMap every server runs (see the module docstring)."""

    prune: str = "none"  # none | least_cost | annealed
    anneal_start: float = 0.5
    anneal_rate: float = 0.5
    random_neighbours: int | None = None
    bimodal: bool = False
    public_fanout: int = 3


@dataclass(frozen=True)
class FeasibleMap:
    """A complete map stored at the delivery node."""

    cost: float
    nodes: tuple[int, ...]
    paths: tuple[tuple[int, ...], ...]


@dataclass
class Diffusion:
    """The outcome: feasible maps (cheapest first), map messages, and when the last one arrived (ms)."""

    maps: list[FeasibleMap] = field(default_factory=list)
    messages: int = 0
    last_arrival_ms: float = 0.0
    complete: bool = True
    reason: str = ""

    @property
    def best(self) -> FeasibleMap | None:
        return self.maps[0] if self.maps else None


def best_channel(network: MapNetwork, v: int, k: int, requirement: float) -> Channel | None:
    """The link a hop v -> k uses: the cheapest carrying ``requirement`` (dedicated first on ties)."""
    best = None
    for channel in network.channels[v].get(k, ()):
        if channel.bandwidth < requirement:
            continue
        if (
            best is None
            or channel.cost < best.cost
            or (channel.cost == best.cost and channel.kind == "dedicated" and best.kind != "dedicated")
        ):
            best = channel
    return best


def diffuse(
    network: MapNetwork,
    task: ChainTask,
    policy: Policy,
    *,
    rng: random.Random | None = None,
    max_messages: int | None = None,
    deadline: float | None = None,
) -> Diffusion:
    """Run the diffusing computation for ``task`` from its data source; see the module docstring."""
    rng = rng or random.Random(0)
    m, hops_allowed = task.m, task.max_null + 1
    out = Diffusion()
    table: dict[tuple[int, int], float] = {}  # LeastCostMap: (server, prefix length) -> least cost seen
    queue: list[tuple[float, int, int, tuple]] = []
    sequence = 0

    forward_cache: dict[tuple[int, int], dict[int, Channel]] = {}
    public_cache: dict[tuple[int, int], list[tuple[int, Channel]]] = {}

    def forward(v: int, prefix: int) -> dict[int, Channel]:
        """Neighbours whose link carries pair ``prefix`` (dedicated links only in the bi-modal variant)."""
        key = (v, prefix)
        if key not in forward_cache:
            requirement = task.bandwidth[prefix]
            pool = network.dedicated[v] if policy.bimodal else sorted(network.channels[v])
            found = {}
            for k in pool:
                if policy.bimodal and not any(
                    c.kind == "dedicated" and c.bandwidth >= requirement for c in network.channels[v][k]
                ):
                    continue
                channel = best_channel(network, v, k, requirement)
                if channel is not None:
                    found[k] = channel
            forward_cache[key] = found
        return forward_cache[key]

    def offers(v: int, prefix: int) -> list[tuple[int, Channel]]:
        """Public-link servers hosting the next service (or the sink), cheapest then nearest first."""
        key = (v, prefix)
        if key not in public_cache:
            requirement = task.bandwidth[prefix]
            targets = (task.sink,) if prefix == m else network.hosts.get(task.services[prefix], ())
            public_links = set(network.public[v])
            found = []
            for k in targets:
                if k == v or k not in public_links:
                    continue
                channel = best_channel(network, v, k, requirement)
                if channel is not None and any(
                    c.kind == "public" and c.bandwidth >= requirement for c in network.channels[v][k]
                ):
                    found.append((channel.cost, channel.delay, k, channel))
            public_cache[key] = [(k, channel) for _, _, k, channel in sorted(found)]
        return public_cache[key]

    def receivers(v: int, prefix: int, segment: tuple[int, ...], placed_here: bool) -> list[tuple[int, Channel]]:
        chosen: dict[int, Channel] = {}
        if placed_here or len(segment) - 1 < hops_allowed:
            chosen = dict(forward(v, prefix))
            if policy.random_neighbours is not None and len(chosen) > policy.random_neighbours:
                keep = rng.sample(sorted(chosen), policy.random_neighbours)
                chosen = {k: chosen[k] for k in keep}
        at_source = prefix == 0 and len(segment) == 1 and v == task.source
        if policy.bimodal and (placed_here or at_source):
            added = 0
            for k, channel in offers(v, prefix):
                if added == policy.public_fanout:
                    break
                if k not in chosen:
                    chosen[k] = channel
                    added += 1
        return sorted(chosen.items())

    def extend(now: float, v: int, state: tuple) -> None:
        nonlocal sequence
        prefix, cost, nodes, done, segment = state
        used = sum(task.cpu[i] for i, u in enumerate(nodes) if u == v)
        for x in range(0, m - prefix + 1):
            if x > 0:
                i = prefix + x - 1
                if task.services[i] not in network.services[v]:
                    break
                used += task.cpu[i]
                if used > network.capacity[v] + EPS:
                    break
                nodes_x = nodes + (v,) * x
                done_x = (*done, segment, *(((v,),) * (x - 1)))
                segment_x: tuple[int, ...] = (v,)
            else:
                nodes_x, done_x, segment_x = nodes, done, segment
            length = prefix + x
            if v == task.sink and length == m:
                out.maps.append(FeasibleMap(cost, nodes_x, (*done_x, segment_x)))
            if policy.prune != "none":
                key = (v, length)
                if cost < table.get(key, math.inf):
                    table[key] = cost
                elif not (
                    policy.prune == "annealed"
                    and rng.random() < policy.anneal_start * math.exp(-policy.anneal_rate * length)
                ):
                    continue
            for k, channel in receivers(v, length, segment_x, x > 0):
                sequence += 1
                out.messages += 1
                message = (length, cost + channel.cost, nodes_x, done_x, (*segment_x, k))
                heapq.heappush(queue, (now + channel.delay, sequence, k, message))

    extend(0.0, task.source, (0, 0.0, (), (), (task.source,)))
    processed = 0
    while queue:
        if max_messages is not None and out.messages >= max_messages:
            out.complete, out.reason = False, f"message budget of {max_messages} exhausted"
            break
        processed += 1
        if deadline is not None and processed % 1024 == 0 and time.perf_counter() > deadline:
            out.complete, out.reason = False, "time limit reached"
            break
        now, _, v, state = heapq.heappop(queue)
        out.last_arrival_ms = now
        extend(now, v, state)
    out.maps.sort(key=lambda fm: fm.cost)
    return out
