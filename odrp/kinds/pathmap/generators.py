"""Pathmap instance generators: the paper's two experimental settings, seeded.

``ba`` (section 4.2, the heuristics' evaluation): a Barabasi-Albert network of dedicated links
(networkx's ``barabasi_albert_graph``, as BRITE's BA model) of 30 to 120 servers; link bandwidths
from a power law truncated to [10 Mbps, 1 Gbps]; a task of 10 components whose cpu and bandwidth
requirements are Normal around ``load`` = 50% of the network's mean capacity and mean link
bandwidth (standard deviation a quarter of the mean, floored at 1).

``bimodal`` (section 6.1, the platform's setting): dedicated links grown by preferential attachment
(:func:`preferential_links`, any number of links, N - 1 giving a spanning tree) with bandwidth
uniform in 1-10 Mbps and delay 1-10 ms, and/or public links between every two servers whose
bandwidth is the smaller of the two servers' last-mile rates (uniform in 1-2 Mbps) and whose delay
is 10-100 ms; a server of degree d hosts 1 + d services and has cpu for k = 2 instances of each at
the mean delivery rate (1 Mbps, one cpu unit per Mbps); the task's delivery rate is uniform in
0.5-1.5 Mbps and every pair needs that rate.

Choices of ours where the paper is silent (all parameters of the functions):

- Every server hosts 1 + degree distinct services drawn from 25 types (both settings; the paper
  states it for section 6.1); capacities are proportional to the degree (section 4.2 drew them from
  a volunteer-computing distribution; the kind's specification asks for "proportional to degree");
- dedicated link costs are integers uniform in 1..10; public links cost ``public_cost`` (default
  10, so one public hop costs as much as the dearest dedicated hop: the paper's cost metric prefers
  dedicated hops and charges the uncertainty of the public network);
- the source and the sink are two distinct servers drawn uniformly; components' services are drawn
  uniformly (with repetition) from the 25 types;
- ``routable=True`` redraws the task (not the network) until every consecutive pair can be routed
  between some servers hosting its services with the bandwidth and hop limit (capacity is not
  checked, so a few instances remain infeasible). The paper scores only feasible mappings; draws
  are deterministic in the seed.
"""

from __future__ import annotations

import random
from typing import Any

import networkx as nx

from odrp.core.generator import at_least
from odrp.kinds.pathmap.instance import load
from odrp.kinds.pathmap.routes import pair_routes

SERVICE_TYPES = 25


def service_names(count: int = SERVICE_TYPES) -> list[str]:
    return [f"svc{k:02d}" for k in range(count)]


def truncated_power_law(rng: random.Random, low: float, high: float, exponent: float) -> float:
    """A draw from the density proportional to x^-exponent on [low, high] (inverse CDF; exponent != 1)."""
    a = 1.0 - exponent
    u = rng.random()
    return (low**a + u * (high**a - low**a)) ** (1.0 / a)


def preferential_links(n: int, links: int, rng: random.Random) -> list[tuple[int, int]]:
    """Dedicated links grown by preferential attachment (section 6.1), ``links`` of them.

    Servers join in a random order and each links to one earlier server chosen with probability
    proportional to its degree + 1 (the first N - 1 links: a spanning tree, the paper's default of
    99 links for 100 servers; with fewer links the later servers stay without dedicated links).
    Further links join a server drawn uniformly to a server it is not yet linked with, again with
    probability proportional to degree + 1 ("preferably with the most connected server").
    """
    if links > n * (n - 1) // 2:
        raise ValueError(f"dedicated_links: at most {n * (n - 1) // 2} for {n} servers, got {links}")
    order = list(range(n))
    rng.shuffle(order)
    degree = [0] * n
    edges: set[tuple[int, int]] = set()
    out: list[tuple[int, int]] = []

    def add(u: int, v: int) -> None:
        edges.add((min(u, v), max(u, v)))
        out.append((u, v))
        degree[u] += 1
        degree[v] += 1

    for t in range(1, n):
        if len(out) >= links:
            return out
        earlier = order[:t]
        v = rng.choices(earlier, weights=[degree[w] + 1 for w in earlier])[0]
        add(order[t], v)
    while len(out) < links:
        u = rng.randrange(n)
        others = [w for w in range(n) if w != u and (min(u, w), max(u, w)) not in edges]
        if not others:
            continue
        v = rng.choices(others, weights=[degree[w] + 1 for w in others])[0]
        add(u, v)
    return out


def _services(rng: random.Random, degree: int, types: list[str]) -> list[str]:
    return sorted(rng.sample(types, min(len(types), 1 + degree)))


def _normal_at_least_one(rng: random.Random, mean: float) -> float:
    return max(1.0, round(rng.gauss(mean, mean / 4)))


def ba_instance(
    seed: int = 0,
    servers: int = 60,
    attachment: int = 2,
    components: int = 10,
    max_null: int = 2,
    load: float = 0.5,
    capacity_per_link: float = 20.0,
    bandwidth_min: float = 10.0,
    bandwidth_max: float = 1000.0,
    exponent: float = 2.0,
    routable: bool = True,
) -> dict[str, Any]:
    """Section 4.2: a BA dedicated network and a chain of ``components`` services (see the module)."""
    at_least(2, servers=servers)
    if not 1 <= attachment < servers:
        raise ValueError(f"attachment: expected 1 <= attachment < servers = {servers}, got {attachment}")
    rng = random.Random(seed)
    graph = nx.barabasi_albert_graph(servers, attachment, seed=rng.randrange(2**31))
    types = service_names()
    ids = [f"S{u + 1}" for u in range(servers)]
    server_list = [
        {
            "id": ids[u],
            "capacity": capacity_per_link * graph.degree[u],
            "services": _services(rng, graph.degree[u], types),
        }
        for u in range(servers)
    ]
    link_list = [
        {
            "from": ids[u],
            "to": ids[v],
            "bandwidth": round(truncated_power_law(rng, bandwidth_min, bandwidth_max, exponent), 1),
            "cost": rng.randint(1, 10),
            "delay": round(rng.uniform(1.0, 10.0), 2),
            "kind": "dedicated",
        }
        for u, v in sorted(graph.edges)
    ]
    mean_capacity = sum(s["capacity"] for s in server_list) / servers
    mean_bandwidth = sum(link["bandwidth"] for link in link_list) / len(link_list)

    def draw_task() -> dict[str, Any]:
        source, sink = rng.sample(ids, 2)
        return {
            "source": source,
            "sink": sink,
            "components": [
                {
                    "id": f"c{i + 1}",
                    "service": rng.choice(types),
                    "cpu": _normal_at_least_one(rng, load * mean_capacity),
                }
                for i in range(components)
            ],
            "bandwidth": [_normal_at_least_one(rng, load * mean_bandwidth) for _ in range(components + 1)],
            "max_null": max_null,
        }

    data = {
        "problem": "pathmap",
        "name": f"ba-{servers}-{seed}",
        "servers": server_list,
        "links": link_list,
        "task": draw_task(),
    }
    return _redraw_until_routable(data, draw_task) if routable else data


def bimodal_instance(
    seed: int = 0,
    servers: int = 100,
    dedicated_links: int = 99,
    network: str = "bimodal",
    components: int = 10,
    max_null: int = 1,
    instances_per_service: int = 2,
    public_cost: float = 10.0,
    routable: bool = True,
) -> dict[str, Any]:
    """Section 6.1: one task on the platform's network (``network``: dedicated | public | bimodal)."""
    if network not in ("dedicated", "public", "bimodal"):
        raise ValueError(f"network: expected dedicated, public or bimodal, got {network!r}")
    at_least(2, servers=servers)
    rng = random.Random(seed)
    edges = preferential_links(servers, dedicated_links, rng)
    degree = [0] * servers
    for u, v in edges:
        degree[u] += 1
        degree[v] += 1
    types = service_names()
    ids = [f"S{u + 1}" for u in range(servers)]
    server_list = [
        {
            "id": ids[u],
            "capacity": float(instances_per_service * (1 + degree[u])),
            "services": _services(rng, degree[u], types),
        }
        for u in range(servers)
    ]
    last_mile = [round(rng.uniform(1.0, 2.0), 3) for _ in range(servers)]
    dedicated = [
        {
            "from": ids[u],
            "to": ids[v],
            "bandwidth": round(rng.uniform(1.0, 10.0), 3),
            "cost": rng.randint(1, 10),
            "delay": round(rng.uniform(1.0, 10.0), 2),
            "kind": "dedicated",
        }
        for u, v in edges
    ]
    public = [
        {
            "from": ids[u],
            "to": ids[v],
            "bandwidth": min(last_mile[u], last_mile[v]),
            "cost": public_cost,
            "delay": round(rng.uniform(10.0, 100.0), 2),
            "kind": "public",
        }
        for u in range(servers)
        for v in range(u + 1, servers)
    ]
    link_list = (dedicated if network != "public" else []) + (public if network != "dedicated" else [])
    rng = random.Random(f"{seed}-task")  # the same task in the three settings (until a redraw)

    def draw_task() -> dict[str, Any]:
        source, sink = rng.sample(ids, 2)
        rate = round(rng.uniform(0.5, 1.5), 3)
        return {
            "source": source,
            "sink": sink,
            "components": [{"id": f"c{i + 1}", "service": rng.choice(types), "cpu": rate} for i in range(components)],
            "bandwidth": [rate] * (components + 1),
            "max_null": max_null,
        }

    data = {
        "problem": "pathmap",
        "name": f"bimodal-{network}-{servers}-{dedicated_links}-{seed}",
        "servers": server_list,
        "links": link_list,
        "task": draw_task(),
    }
    return _redraw_until_routable(data, draw_task) if routable else data


def _redraw_until_routable(data: dict[str, Any], draw_task: Any, attempts: int = 200) -> dict[str, Any]:
    """Redraw the task until its chain can be routed (bandwidth and hops; capacity not checked)."""

    for _ in range(attempts):
        if chain_routable(load(data, "<generator>")):
            return data
        data["task"] = draw_task()
    return data


def chain_routable(instance: Any) -> bool:
    """True when some choice of servers hosting each service connects source to sink pair by pair."""

    tables = pair_routes(instance)
    reach = {instance.source}
    for p in range(instance.n_components):
        cost = tables[p].cost
        reach = {v for v in instance.candidates(p) if any(cost[u, v] < float("inf") for u in reach)}
        if not reach:
            return False
    return any(tables[-1].cost[u, instance.sink] < float("inf") for u in reach)
