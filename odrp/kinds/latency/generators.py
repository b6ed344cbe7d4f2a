"""Instances of the ``latency`` kind: the paper's topologies on its 11-worker network (section 6.1).

**Network** (section 6.1.1, Fig. 2): workers w1..w11 with w1: 1.5 cores / 2048 MB; w2, w6, w7:
1 core / 1024 MB; w3-w5 and w8-w11: 0.3 core / 768 MB. Fig. 2's link latencies are lost in the text
("low single-digit milliseconds"); **our choice** is a switch tree: a core switch with three access
switches (1.0, 1.5 and 2.0 ms), w1-w4 on the first, w5-w8 on the second, w9-w11 on the third, host
links 0.25-1.0 ms (:data:`HOST_LINKS`); the latency of two workers is the sum of the link
latencies on the path between them (0.5-6.0 ms). ``latency="coordinates"`` (default) gives each
supervisor the network coordinates estimated from noisy measurements of these latencies by the
paper's spring relaxation (:mod:`odrp.kinds.latency.coordinates`; the heuristics in the paper work on
these estimates), ``latency="matrix"`` the exact matrix.

**Random topologies** (section 6.1.2): an operation count uniform in 3..24 (or ``operations``);
start with source -> sink; repeatedly pick an edge uniformly and replace it by one new operation
(probability 0.6) or a diamond of two parallel operations (0.4) until the count is reached. Our
readings: when one operation is missing a diamond would overshoot, so a single operation is
inserted; every inner operation gets ``parallelism`` instances (operators), the source and the sink
one, which reproduces Table 1 exactly (operators = 2 x operations - 2 for every T-R topology); each
instance of an operation sends to each instance of its successors (Storm's shuffle grouping); the
selectivity of each inner operation is 2^U(-1, 1) (between 0.5 and 2: "some output more and others
fewer events than they receive"). ``cycle=True`` adds one edge from an inner operation back to one
of its inner ancestors (T-R8 and T-R9 "contain a cycle"; how the paper made it is not said).

**Manual topologies** (Fig. 3): T-M1 a sequence of 6 operations, T-M2 a source, one operation with
ten instances and a sink, T-M3 a source, one operation and a sink. Selectivity 1.

**Demands** (our choice; the paper measures them at run time): the source emits ``rate`` events/s;
every operator's cpu is proportional to its input events (a source: its rate) times a per-operation
cost per event drawn from U(0.5, 1.5) (1 for manual topologies), scaled so that the total cpu
demand is ``load`` times the network's total cpu (6.6 cores); memory per operation drawn from
32, 64, 96, 128 MB (manual: 64 MB). Edges carry no ``events``: they are derived from the rate and
the selectivities as the kind's semantics say.
"""

from __future__ import annotations

import copy
import functools
import itertools
import random
from typing import Any

import networkx as nx

from odrp.kinds.latency.coordinates import SpringSettings, estimate_coordinates, noisy_measurements
from odrp.kinds.latency.instance import load as load_instance

#: (id, cores, MB) of the paper's 11 workers (section 6.1.1).
WORKERS: tuple[tuple[str, float, float], ...] = tuple(
    (f"w{k}", *((1.5, 2048.0) if k == 1 else (1.0, 1024.0) if k in (2, 6, 7) else (0.3, 768.0))) for k in range(1, 12)
)
#: Our switch tree: access switch of each worker and the latency of its host link (ms).
HOST_LINKS: dict[str, tuple[str, float]] = {
    "w1": ("s1", 0.25),
    "w2": ("s1", 0.5),
    "w3": ("s1", 0.75),
    "w4": ("s1", 1.0),
    "w5": ("s2", 0.75),
    "w6": ("s2", 0.25),
    "w7": ("s2", 0.5),
    "w8": ("s2", 1.0),
    "w9": ("s3", 0.5),
    "w10": ("s3", 0.75),
    "w11": ("s3", 1.0),
}
#: Latency of each access switch's link to the core switch (ms).
CORE_LINKS: dict[str, float] = {"s1": 1.0, "s2": 1.5, "s3": 2.0}
MEASUREMENT_NOISE = 0.05
"""Relative standard deviation of a latency measurement (our choice)."""
MEMORY_CHOICES = (32.0, 64.0, 96.0, 128.0)
SELECTIVITY_RANGE = (-1.0, 1.0)
"""Selectivity is 2^U(a, b)."""


# ------------------------------------------------------------------------------------ network


def network_latency() -> list[list[float]]:
    """The exact worker-to-worker latency of our switch tree (ms)."""
    ids = [w[0] for w in WORKERS]
    matrix = []
    for a in ids:
        row = []
        for b in ids:
            (sa, la), (sb, lb) = HOST_LINKS[a], HOST_LINKS[b]
            if a == b:
                row.append(0.0)
            elif sa == sb:
                row.append(la + lb)
            else:
                row.append(la + CORE_LINKS[sa] + CORE_LINKS[sb] + lb)
        matrix.append(row)
    return matrix


def network(latency: str = "coordinates", network_seed: int = 0) -> dict[str, Any]:
    """The ``supervisors`` (and, for ``latency="matrix"``, the ``latency``) of an instance."""
    return copy.deepcopy(_network(latency, network_seed))


@functools.cache
def _network(latency: str, network_seed: int) -> dict[str, Any]:
    supervisors: list[dict[str, Any]] = [{"id": w, "cpu": cpu, "memory": mem} for w, cpu, mem in WORKERS]
    exact = network_latency()
    if latency == "matrix":
        return {"supervisors": supervisors, "latency": exact}
    if latency != "coordinates":
        raise ValueError(f"latency: expected coordinates or matrix, got {latency!r}")
    measure = noisy_measurements(exact, MEASUREMENT_NOISE, seed=network_seed)
    points = estimate_coordinates(len(WORKERS), measure, seed=network_seed, settings=SpringSettings())
    for sup, point in zip(supervisors, points, strict=True):
        sup["coordinates"] = [round(x, 4) for x in point]
    return {"supervisors": supervisors}


# --------------------------------------------------------------------------------- topologies


def random_operations(rng: random.Random, operations: int) -> tuple[list[str], list[tuple[str, str]]]:
    """The paper's DAG growth: operation names (source first, sink last) and edges between them."""
    if operations < 2:
        raise ValueError(f"operations: at least 2 (a source and a sink), got {operations}")
    inner: list[str] = []
    edges = [("src", "snk")]
    while len(inner) + 2 < operations:
        e = rng.randrange(len(edges))
        a, b = edges[e]
        diamond = rng.random() < 0.4 and len(inner) + 4 <= operations
        if diamond:
            c, d = f"op{len(inner) + 1}", f"op{len(inner) + 2}"
            inner += [c, d]
            edges[e] = (a, c)
            edges += [(a, d), (c, b), (d, b)]
        else:
            c = f"op{len(inner) + 1}"
            inner.append(c)
            edges[e] = (a, c)
            edges.append((c, b))
    return ["src", *inner, "snk"], edges


def add_cycle(rng: random.Random, names: list[str], edges: list[tuple[str, str]]) -> tuple[str, str]:
    """Add one edge from an inner operation to one of its inner ancestors (a cycle); return it."""
    graph = nx.DiGraph(edges)
    inner = names[1:-1]
    pairs = []
    for y in inner:
        pairs += [(x, y) for x in sorted(nx.descendants(graph, y)) if x in inner and (x, y) not in edges]
    if not pairs:
        raise ValueError("cycle: the topology needs two inner operations in sequence (try more operations)")
    edge = pairs[rng.randrange(len(pairs))]
    edges.append(edge)
    return edge


def expand(
    names: list[str],
    edges: list[tuple[str, str]],
    parallelism: dict[str, int],
    selectivity: dict[str, float],
    cost: dict[str, float],
    memory: dict[str, float],
    rate: float,
    load: float,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Operations into operators (instances), all-to-all edges, cpu demands scaled to ``load``.

    An operator's cpu is its operation's cost per event times its input events as the kind derives
    them (a source: its rate), scaled so that the total is ``load`` times the network's cpu.
    """

    instances = {n: [n] if parallelism[n] == 1 else [f"{n}-{k}" for k in range(parallelism[n])] for n in names}
    op_edges = [{"from": a, "to": b} for x, y in edges for a in instances[x] for b in instances[y]]
    operators: list[dict[str, Any]] = []
    operation_of: list[str] = []
    for n in names:
        for a in instances[n]:
            entry: dict[str, Any] = {"id": a, "cpu": 0.0, "memory": memory[n]}
            if n == names[0]:
                entry["rate"] = rate
            elif selectivity.get(n, 1.0) != 1.0:
                entry["selectivity"] = selectivity[n]
            operators.append(entry)
            operation_of.append(n)
    draft = load_instance(
        {
            "problem": "latency",
            "operators": operators,
            "edges": op_edges,
            "supervisors": [{"id": "w", "cpu": 1, "memory": 1, "coordinates": [0]}],
        },
        "<generator>",
    )
    inputs = [0.0] * len(operators)
    for e in draft.latency_edges:
        inputs[draft.edges[e][1]] += draft.events[e]
    weight = [cost[n] * (rate if n == names[0] else inputs[i]) for i, n in enumerate(operation_of)]
    scale = load * sum(w[1] for w in WORKERS) / sum(weight)
    for entry, w in zip(operators, weight, strict=True):
        entry["cpu"] = round(w * scale, 4)
    return operators, op_edges


def random_topology(
    seed: int = 0,
    operations: int = 0,
    parallelism: int = 2,
    cycle: bool = False,
    rate: float = 1000.0,
    load: float = 0.4,
    latency: str = "coordinates",
    network_seed: int = 0,
    name: str = "",
) -> dict[str, Any]:
    """A random topology by the paper's procedure on the 11-worker network.

    ``operations`` 0 draws the count uniformly from 3..24 (the paper); ``load`` is the total cpu
    demand as a share of the network's 6.6 cores.
    """
    rng = random.Random(seed)
    count = operations or rng.randint(3, 24)
    names, edges = random_operations(rng, count)
    if cycle:
        add_cycle(rng, names, edges)
    inner = names[1:-1]
    selectivity = {n: round(2 ** rng.uniform(*SELECTIVITY_RANGE), 3) for n in inner}
    cost = {n: rng.uniform(0.5, 1.5) for n in names}
    memory = {n: rng.choice(MEMORY_CHOICES) for n in names}
    width = {n: 1 if n in (names[0], names[-1]) else parallelism for n in names}
    operators, op_edges = expand(names, edges, width, selectivity, cost, memory, rate, load)
    return {
        "problem": "latency",
        "name": name or f"random-{count}ops{'-cycle' if cycle else ''}-load{load:g}-s{seed}",
        "operators": operators,
        "edges": op_edges,
        **network(latency, network_seed),
        "utilisation_limit": 0.95,
        "weights": {"latency": 1e-6, "supervisors": 1.0, "colocation": 1.0, "events": 1.0},
    }


MANUAL = ("t-m1", "t-m2", "t-m3")
#: Table 1's random topologies: (operations, our seed, contains a cycle). The paper's draws (Java's
#: Random seeded with digits of pi) cannot be replayed: these are our draws of the same sizes.
RANDOM: dict[str, tuple[int, int, bool]] = {
    "t-r1": (16, 1, False),
    "t-r2": (7, 2, False),
    "t-r3": (12, 3, False),
    "t-r4": (15, 4, False),
    "t-r5": (11, 5, False),
    "t-r6": (11, 6, False),
    "t-r7": (22, 7, False),
    "t-r8": (8, 8, True),
    "t-r9": (10, 9, True),
}
PAPER = (*MANUAL, *RANDOM)


def paper_topology(
    topology: str = "t-r7",
    load: float = 0.4,
    rate: float = 1000.0,
    latency: str = "coordinates",
    network_seed: int = 0,
) -> dict[str, Any]:
    """The paper's twelve topologies of Table 1 (T-M1..T-M3, T-R1..T-R9) on the 11-worker network."""
    if topology in MANUAL:
        return manual_topology(topology, rate, load, latency, network_seed)
    if topology not in RANDOM:
        raise ValueError(f"topology: expected one of {', '.join(PAPER)}, got {topology!r}")
    operations, seed, cycle = RANDOM[topology]
    return random_topology(
        seed=seed,
        operations=operations,
        cycle=cycle,
        rate=rate,
        load=load,
        latency=latency,
        network_seed=network_seed,
        name=f"{topology}-load{load:g}",
    )


def manual_topology(
    topology: str = "t-m1",
    rate: float = 1000.0,
    load: float = 0.2,
    latency: str = "coordinates",
    network_seed: int = 0,
) -> dict[str, Any]:
    """The paper's manual topologies T-M1 (a chain of 6), T-M2 (fan-out to 10 instances), T-M3."""
    if topology == "t-m1":
        names = ["src", "op1", "op2", "op3", "op4", "snk"]
        width = dict.fromkeys(names, 1)
    elif topology in ("t-m2", "t-m3"):
        names = ["src", "op1", "snk"]
        width = {"src": 1, "op1": 10 if topology == "t-m2" else 1, "snk": 1}
    else:
        raise ValueError(f"topology: expected one of {', '.join(MANUAL)}, got {topology!r}")
    edges = list(itertools.pairwise(names))
    ones = dict.fromkeys(names, 1.0)
    operators, op_edges = expand(names, edges, width, ones, ones, dict.fromkeys(names, 64.0), rate, load)
    return {
        "problem": "latency",
        "name": f"{topology}-load{load:g}",
        "operators": operators,
        "edges": op_edges,
        **network(latency, network_seed),
        "utilisation_limit": 0.95,
        "weights": {"latency": 1e-6, "supervisors": 1.0, "colocation": 1.0, "events": 1.0},
    }
