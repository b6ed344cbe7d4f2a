"""ODRP instance generators: the paper's DEBS 2015 application and seeded random instances.

``debs2015``: the reference application of Cardellini et al. (2017), section 6: the DEBS 2015 Grand
Challenge query 1 on 6 worker nodes with 8 replica slots each, service rates and normalisation
factors of Table 2, k_i = 3 except the pinned data source and globalRank and the metronome (k = 1),
network delays drawn in [12, 32] ms, half the nodes at 99% availability. Numbers the paper does not
give (stream rates, bytes per tuple, the metronome's place in the graph) are our choices and are
listed in ``instances/README.md``.

``random``: a random DAG of operators on random heterogeneous nodes, with normalisation bounds
computed from the instance so that every SAW term lies in [0, 1].
"""

from __future__ import annotations

import math
import random
from typing import Any

from odrp.core.generator import at_least
from odrp.kinds.replication.instance import OdrpSpec, compile_spec

WEIGHT_PROFILES: dict[str, dict[str, float]] = {
    "response_time": {"response_time": 1.0},
    "cost": {"cost": 1.0},
    "availability": {"availability": 1.0},
    "network": {"network": 1.0},
    "balanced": {"response_time": 0.25, "availability": 0.25, "cost": 0.25, "network": 0.25},
}


def weights(profile: str) -> dict[str, float]:
    if profile not in WEIGHT_PROFILES:
        raise ValueError(f"weights_profile: expected one of {', '.join(WEIGHT_PROFILES)}, got {profile!r}")
    return {m: WEIGHT_PROFILES[profile].get(m, 0.0) for m in ("response_time", "availability", "cost", "network")}


# ------------------------------------------------------------------------------- DEBS 2015

#: Table 2 of the paper: service rate per operator (tuples/s).
DEBS_SERVICE_RATES = {
    "source": 284.0,
    "parser": 233.0,
    "filterByCoordinates": 253.0,
    "computeRouteID": 253.0,
    "metronome": 190.0,
    "countByWindow": 335.0,
    "partialRank": 2371.0,
    "globalRank": 185.0,
}
#: k_i: 3, except the pinned source and globalRank and the metronome.
DEBS_MAX_REPLICAS = {op: 1 if op in ("source", "globalRank", "metronome") else 3 for op in DEBS_SERVICE_RATES}
#: Stream rates per tuple/s emitted by the source (our choice; see instances/README.md). With 31
#: tuples per source tuple, partialRank receives 2480 t/s at 80 t/s (the paper: "on average 2500
#: tuples/s, i.e. 5% more than its service rate") and 3100 t/s at 100 t/s ("30% more").
DEBS_STREAMS = (
    ("source", "parser", 1.0),
    ("parser", "filterByCoordinates", 1.0),
    ("filterByCoordinates", "computeRouteID", 0.95),
    ("filterByCoordinates", "metronome", 0.95),
    ("computeRouteID", "countByWindow", 0.95),
    ("metronome", "countByWindow", 0.1),
    ("countByWindow", "partialRank", 31.0),
    ("partialRank", "globalRank", 0.5),
)
DEBS_BYTES_PER_TUPLE = 100.0
#: Table 2: normalisation factors (R in s, A as a probability, C in replica units, Z in bytes/s:
#: the paper's 3400 tuples/s times our 100 bytes per tuple).
DEBS_BOUNDS = {
    "response_time": [0.005, 0.450],
    "availability": [0.95, 1.0],
    "cost": [8.0, 18.0],
    "network": [0.0, 340000.0],
}


def debs2015(rate: float = 80.0, weights_profile: str = "response_time", seed: int = 2017) -> dict[str, Any]:
    """The DEBS 2015 query-1 application of the paper at source rate ``rate`` tuples/s."""
    rng = random.Random(seed)
    nodes = [
        {"id": f"w{u + 1}", "capacity": 8, "speedup": 1.0, "availability": 1.0 if u < 3 else 0.99} for u in range(6)
    ]
    links = []
    for u in range(6):
        for v in range(u + 1, 6):
            delay = round(rng.uniform(0.012, 0.032), 4)
            links.append({"from": nodes[u]["id"], "to": nodes[v]["id"], "delay": delay})
    operators = []
    for op, mu in DEBS_SERVICE_RATES.items():
        entry: dict[str, Any] = {"id": op, "service_rate": mu, "max_replicas": DEBS_MAX_REPLICAS[op]}
        if op == "source":
            entry["input_rate"] = float(rate)
        if op in ("source", "globalRank"):
            entry["candidates"] = ["w1"]  # pinned on a 100%-available node
        operators.append(entry)
    streams = [
        {"from": a, "to": b, "rate": round(factor * rate, 6), "bytes_per_tuple": DEBS_BYTES_PER_TUPLE}
        for a, b, factor in DEBS_STREAMS
    ]
    return {
        "problem": "odrp",
        "name": f"debs2015-{int(rate):03d}" + ("" if weights_profile == "response_time" else f"-{weights_profile}"),
        "operators": operators,
        "streams": streams,
        "nodes": nodes,
        "links": links,
        "objective": {
            "weights": weights(weights_profile),
            "network_metric": "traffic",
            "bounds": DEBS_BOUNDS,
        },
    }


# ---------------------------------------------------------------------------------- random


def random_instance(
    seed: int = 0,
    operators: int = 8,
    nodes: int = 6,
    max_replicas: int = 3,
    slots: int = 8,
    load: float = 1.0,
    weights_profile: str = "balanced",
    network_metric: str = "traffic",
    extra_edges: float = 0.3,
    pinned: str = "endpoints",
) -> dict[str, Any]:
    """A random ODRP instance: a connected DAG of ``operators`` on ``nodes`` heterogeneous nodes.

    Operator 0 is the source, with an input rate in [50, 150] t/s; every other operator gets a
    parent among the three before it (and with probability ``extra_edges`` a second one among all
    earlier ones). Each stream carries its upstream operator's output rate (input times a
    selectivity in [0.5, 1.5]). ``pinned="endpoints"`` (the paper's setting: "if sources and sinks
    are external applications, their placement is fixed") pins the source on n0 and every sink on
    a random node, with one replica each; ``"source"`` pins the source only; ``"none"`` nothing.
    A single replica of any other operator runs at a utilisation in [0.2, 1.6] x ``load`` (capped
    so that ``max_replicas`` replicas are stable; one operator in five has k = 1), so higher loads
    force replication. Nodes have ``slots`` resources (about half of them ``slots // 2``),
    speed-ups in {1, 1, 1.5, 2}, availability in {0.99, 0.995, 1}; link delays are 5 ms plus up to
    about 35 ms by the distance of random points; links are 99.9% available with probability 0.3
    and cost up to 0.002 per tuple.
    """
    at_least(1, operators=operators, nodes=nodes, max_replicas=max_replicas, slots=slots)
    if pinned not in ("endpoints", "source", "none"):
        raise ValueError(f"pinned: expected endpoints, source or none, got {pinned!r}")
    rng = random.Random(seed)
    ops = [f"op{i}" for i in range(operators)]
    parents: list[list[int]] = [[] for _ in ops]
    for j in range(1, operators):
        first = rng.randrange(max(0, j - 3), j)
        parents[j].append(first)
        if j >= 2 and rng.random() < extra_edges:
            second = rng.randrange(0, j)
            if second != first:
                parents[j].append(second)
    has_child = {i for j in range(operators) for i in parents[j]}
    arrival = [0.0] * operators
    output = [0.0] * operators
    arrival[0] = round(rng.uniform(50, 150), 1)
    for j in range(operators):
        if j > 0:
            arrival[j] = sum(output[i] for i in parents[j])
        output[j] = round(arrival[j] * rng.uniform(0.5, 1.5), 3)
    streams = [
        {"from": ops[i], "to": ops[j], "rate": output[i], "bytes_per_tuple": rng.choice([50, 100, 200])}
        for j in range(1, operators)
        for i in sorted(parents[j])
    ]

    node_specs = []
    points = []
    for u in range(nodes):
        node_specs.append(
            {
                "id": f"n{u}",
                "capacity": slots if rng.random() < 0.5 else max(1, slots // 2),
                "speedup": rng.choice([1.0, 1.0, 1.5, 2.0]),
                "availability": rng.choice([0.99, 0.995, 1.0]),
            }
        )
        points.append((rng.random(), rng.random()))

    op_specs = []
    for i in range(operators):
        is_pinned = (i == 0 and pinned != "none") or (pinned == "endpoints" and i > 0 and i not in has_child)
        k = 1 if is_pinned or rng.random() < 0.2 else max_replicas
        utilisation = min(rng.uniform(0.2, 0.8 if is_pinned else 1.6) * load, 0.9 * k)
        spec: dict[str, Any] = {
            "id": ops[i],
            "service_rate": round(max(arrival[i], 1.0) / utilisation, 3),
            "max_replicas": k,
        }
        if i == 0:
            spec["input_rate"] = arrival[0]
        if is_pinned:
            home = 0 if i == 0 else rng.randrange(nodes)
            spec["candidates"] = [f"n{home}"]
            pinned_here = sum(1 for o in op_specs if o.get("candidates") == [f"n{home}"]) + 1
            node_specs[home]["capacity"] = max(node_specs[home]["capacity"], pinned_here)
        op_specs.append(spec)
    # make sure the fewest stable replicas fit: grow the largest node until they do
    needed = sum(math.floor(arrival[i] / spec["service_rate"]) + 1 for i, spec in enumerate(op_specs))
    total = sum(n["capacity"] for n in node_specs)
    if total < needed:
        max(node_specs, key=lambda n: n["capacity"])["capacity"] += needed - total

    links = []
    for u in range(nodes):
        for v in range(u + 1, nodes):
            links.append(
                {
                    "from": f"n{u}",
                    "to": f"n{v}",
                    "delay": round(0.005 + 0.025 * math.dist(points[u], points[v]), 5),
                    "availability": 1.0 if rng.random() < 0.7 else 0.999,
                    "cost": round(rng.uniform(0.0, 0.002), 5),
                }
            )
    instance: dict[str, Any] = {
        "problem": "odrp",
        "name": f"random-o{operators}-n{nodes}-k{max_replicas}-s{seed}",
        "operators": op_specs,
        "streams": streams,
        "nodes": node_specs,
        "links": links,
        "objective": {"weights": weights(weights_profile), "network_metric": network_metric, "bounds": {}},
    }
    instance["objective"]["bounds"] = natural_bounds(instance)
    return instance


def natural_bounds(data: dict[str, Any]) -> dict[str, list[float]]:
    """Normalisation bounds that every feasible placement of ``data`` lies within.

    R: from the longest path of the smallest possible latencies with no delays, to that of the
    largest latencies plus the largest delay on every stream; C: from one replica of everything
    and no link cost to k_i replicas and the dearest link on every stream; A: from every node and
    link used to nothing lost; Z: from 0 to every stream crossing the heaviest pair.
    """

    probe = dict(data)
    probe["objective"] = {"weights": {}, "bounds": {}, "network_metric": data["objective"]["network_metric"]}
    inst = compile_spec(OdrpSpec.model_validate(probe), "<generator>")
    best_lat, worst_lat = [], []
    for i in range(inst.n_operators):
        counts = inst.replica_counts(i) or (inst.max_replicas[i],)
        speeds = [inst.speedup[u] for u in inst.candidates[i]]
        lat = [inst.latency(i, k) for k in counts]
        best_lat.append(min(lat) / max(speeds))
        worst_lat.append(max(lat) / min(speeds))
    max_delay = max((max(row) for row in inst.delay), default=0.0)

    def longest(weight: list[float], edge: float) -> float:
        start = [0.0] * inst.n_operators
        for j in inst.topological_order:
            for s in inst.incoming[j]:
                i = inst.streams[s].source
                start[j] = max(start[j], start[i] + weight[i] + edge)
        return max(start[i] + weight[i] for i in inst.sinks)

    r_lo, r_hi = longest(best_lat, 0.0), longest(worst_lat, max_delay)
    c_lo = sum(inst.op_cost[i] * inst.resources[i] for i in range(inst.n_operators))
    max_link_cost = max((max(row) for row in inst.link_cost), default=0.0)
    c_hi = sum(inst.max_replicas[i] * inst.op_cost[i] * inst.resources[i] for i in range(inst.n_operators))
    c_hi += sum(st.rate * max_link_cost for st in inst.streams)
    a_lo = math.prod(inst.node_availability) * math.prod(inst.link_availability)
    max_pair = max(
        (inst.pair_weight(u, v) for u in range(inst.n_nodes) for v in range(inst.n_nodes) if u != v),
        default=0.0,
    )
    z_hi = sum(st.rate * st.bytes_per_tuple * max_pair for st in inst.streams)
    return {
        "response_time": _interval(r_lo, r_hi),
        "availability": [min(a_lo, 0.999999), 1.0] if a_lo < 1 else [0.99, 1.0],
        "cost": _interval(c_lo, c_hi),
        "network": _interval(0.0, z_hi),
    }


def _interval(lo: float, hi: float) -> list[float]:
    lo, hi = round(lo, 9), round(hi, 9)
    return [lo, hi] if hi > lo else [lo, lo + max(1.0, abs(lo)) * 0.1]
