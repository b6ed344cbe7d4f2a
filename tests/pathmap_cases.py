"""Pathmap test material: a hand-worked instance, random tiny instances, and a brute force.

The brute force is independent of every model and heuristic: it enumerates each placement of the
components on servers hosting their services and each combination of simple paths with at most
``max_null`` + 1 links (networkx), and keeps the cheapest mapping the evaluator accepts. Walks are
never cheaper than the simple paths they contain (costs are >= 0), so simple paths suffice.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx

from odrp.kinds.pathmap.evaluator import evaluate_mapping
from odrp.kinds.pathmap.instance import PathmapInstance

# S1 (source) -- S2 {a, b}, cap 5 -- S3 {b}, cap 4 -- S4 {c}, cap 10 -- S5 (sink)
# S2-S3 has a dedicated (bandwidth 3, cost 1) and a public link (bandwidth 8, cost 4).
HAND = {
    "problem": "pathmap",
    "name": "hand",
    "servers": [
        {"id": "S1", "capacity": 0, "services": []},
        {"id": "S2", "capacity": 5, "services": ["a", "b"]},
        {"id": "S3", "capacity": 4, "services": ["b"]},
        {"id": "S4", "capacity": 10, "services": ["c"]},
        {"id": "S5", "capacity": 0, "services": []},
    ],
    "links": [
        {"from": "S1", "to": "S2", "bandwidth": 10, "cost": 2, "delay": 1, "kind": "dedicated"},
        {"from": "S2", "to": "S3", "bandwidth": 3, "cost": 1, "delay": 2, "kind": "dedicated"},
        {"from": "S3", "to": "S2", "bandwidth": 8, "cost": 4, "delay": 30, "kind": "public"},
        {"from": "S3", "to": "S4", "bandwidth": 6, "cost": 3, "delay": 1, "kind": "dedicated"},
        {"from": "S2", "to": "S4", "bandwidth": 2, "cost": 1, "delay": 5, "kind": "dedicated"},
        {"from": "S4", "to": "S5", "bandwidth": 9, "cost": 2, "delay": 1, "kind": "dedicated"},
        {"from": "S1", "to": "S3", "bandwidth": 1, "cost": 0, "delay": 50, "kind": "public"},
    ],
    "task": {
        "source": "S1",
        "sink": "S5",
        "components": [
            {"id": "c1", "service": "a", "cpu": 3},
            {"id": "c2", "service": "b", "cpu": 2},
            {"id": "c3", "service": "c", "cpu": 4},
        ],
        "bandwidth": [5, 4, 2, 6],
        "max_null": 1,
    },
}

# c1, c2 on S2 (3 + 2 = 5 = its capacity), c3 on S4:
# S1-S2 (2) + zero-length (0) + S2-S4 (bandwidth 2 >= 2, cost 1) + S4-S5 (2) = 5.
OPTIMAL = {"nodes": {"c1": "S2", "c2": "S2", "c3": "S4"}, "paths": [["S1", "S2"], ["S2"], ["S2", "S4"], ["S4", "S5"]]}
# c2 on S3: the pair c1 -> c2 needs 4, the dedicated S2-S3 carries 3, so the public link (cost 4):
# 2 + 4 + S3-S4 (3) + 2 = 11, one public hop; delay 1 + 30 + 1 + 1 = 33.
VIA_PUBLIC = {
    "nodes": {"c1": "S2", "c2": "S3", "c3": "S4"},
    "paths": [["S1", "S2"], ["S2", "S3"], ["S3", "S4"], ["S4", "S5"]],
}


def random_tiny(seed: int, servers: int = 5, components: int = 3) -> dict:
    """A small random instance: sparse dedicated links, some public twins, tight capacities."""
    rng = random.Random(seed)
    ids = [f"S{u + 1}" for u in range(servers)]
    services = ["a", "b", "c"]
    server_list = [
        {"id": s, "capacity": rng.choice([2, 3, 4, 6]), "services": rng.sample(services, rng.randint(1, 2))}
        for s in ids
    ]
    links = []
    pairs = [(u, v) for u in range(servers) for v in range(u + 1, servers)]
    for u, v in rng.sample(pairs, rng.randint(servers - 1, len(pairs) - 2)):
        links.append(
            {
                "from": ids[u],
                "to": ids[v],
                "bandwidth": rng.randint(1, 5),
                "cost": rng.randint(0, 6),
                "kind": "dedicated",
            }
        )
        if rng.random() < 0.3:
            links.append(
                {
                    "from": ids[v],
                    "to": ids[u],
                    "bandwidth": rng.randint(1, 5),
                    "cost": rng.randint(1, 8),
                    "kind": "public",
                }
            )
    source, sink = rng.sample(ids, 2)
    return {
        "problem": "pathmap",
        "name": f"tiny-{seed}",
        "servers": server_list,
        "links": links,
        "task": {
            "source": source,
            "sink": sink,
            "components": [
                {"id": f"c{i + 1}", "service": rng.choice(services), "cpu": rng.randint(1, 3)}
                for i in range(components)
            ],
            "bandwidth": [rng.randint(1, 4) for _ in range(components + 1)],
            "max_null": rng.randint(0, 1),
        },
    }


def brute_force(inst: PathmapInstance) -> float | None:
    """The least evaluator cost over every placement and every combination of simple paths."""
    graph = nx.Graph()
    graph.add_nodes_from(range(inst.n_servers))
    graph.add_edges_from((link.u, link.v) for link in inst.links)

    def paths(u: int, v: int) -> list[tuple[int, ...]]:
        if u == v:
            return [(u,)]
        return [tuple(p) for p in nx.all_simple_paths(graph, u, v, cutoff=inst.max_null + 1)]

    hosts = [[u for u in range(inst.n_servers) if service in inst.services[u]] for service in inst.component_service]
    best = None
    for nodes in itertools.product(*hosts):
        ends = (inst.source, *nodes, inst.sink)
        for combination in itertools.product(*(paths(ends[p], ends[p + 1]) for p in range(inst.n_pairs))):
            evaluation = evaluate_mapping(inst, tuple(nodes), combination)
            if evaluation.feasible and (best is None or evaluation.objective < best):
                best = evaluation.objective
    return best
