"""The independent evaluator: feasibility and every metric of a solution, recomputed from the instance alone."""

from __future__ import annotations

import math
from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.replication.instance import OdrpInstance, Placement, parse_solution

# ---------------------------------------------------------------------------------- evaluator


def evaluate(instance: OdrpInstance, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    """Recompute feasibility, every QoS metric and F from a solution JSON."""
    return evaluate_placement(instance, parse_solution(instance, solution, source))


def evaluate_placement(instance: OdrpInstance, placement: Placement) -> Evaluation:
    """The evaluator on the internal placement form."""
    inst = instance
    violations: list[str] = []
    replicas = [sum(p.values()) for p in placement]
    for i, p in enumerate(placement):
        name = inst.operators[i]
        if not 1 <= replicas[i] <= inst.max_replicas[i]:
            violations.append(f"{name}: {replicas[i]} replicas, expected 1..{inst.max_replicas[i]}")
        for u in p:
            if u not in inst.candidates[i]:
                violations.append(f"{name}: node {inst.nodes[u]} is not a candidate")
        if replicas[i] >= 1 and not math.isfinite(inst.latency(i, replicas[i])):
            violations.append(
                f"{name}: load {inst.arrival_rate[i] / replicas[i]:g} per replica >= "
                f"service rate {inst.service_rate[i]:g}"
            )
    used = [0.0] * inst.n_nodes
    for i, p in enumerate(placement):
        for u, c in p.items():
            used[u] += c * inst.resources[i]
    for u in range(inst.n_nodes):
        if used[u] > inst.capacity[u] * (1 + 1e-9) + 1e-9:
            violations.append(f"node {inst.nodes[u]}: {used[u]:g} resources used, capacity {inst.capacity[u]:g}")
    if violations:
        return Evaluation(False, None, {"replicas": _named_counts(inst, replicas)}, violations)

    # response time (eqs. 1, 4, 8-11): longest path over operator latencies and stream delays
    op_latency = [
        inst.latency(i, replicas[i]) / min(inst.speedup[u] for u in placement[i]) for i in range(inst.n_operators)
    ]
    stream_delay = [
        max(inst.delay[u][v] for u in placement[st.source] for v in placement[st.target]) for st in inst.streams
    ]
    start = [0.0] * inst.n_operators
    for j in inst.topological_order:
        for s in inst.incoming[j]:
            i = inst.streams[s].source
            start[j] = max(start[j], start[i] + op_latency[i] + stream_delay[s])
    response_time = max(start[i] + op_latency[i] for i in inst.sinks)

    # cost (eqs. 2, 5, 12-14), network metric (eqs. 17-20), used links (eq. 16)
    cost = sum(replicas[i] * inst.op_cost[i] * inst.resources[i] for i in range(inst.n_operators))
    network = 0.0
    used_links: set[int] = set()
    for st in inst.streams:
        share = st.rate / (replicas[st.source] * replicas[st.target])
        for u, cu in placement[st.source].items():
            for v, cv in placement[st.target].items():
                cost += share * cu * cv * inst.link_cost[u][v]
                if u != v:
                    network += st.bytes_per_tuple * share * cu * cv * inst.pair_weight(u, v)
                    used_links.add(inst.link_id[u][v])
    used_nodes = sorted({u for p in placement for u in p})
    log_availability = sum(math.log(inst.node_availability[u]) for u in used_nodes) + sum(
        math.log(inst.link_availability[ell]) for ell in used_links
    )
    objective = inst.utility(response_time, log_availability, cost, network)
    metrics = {
        "response_time": response_time,
        "cost": cost,
        "availability": math.exp(log_availability),
        "log_availability": log_availability,
        "network": network,
        "network_metric": inst.network_metric,
        "replicas": _named_counts(inst, replicas),
        "total_replicas": sum(replicas),
        "nodes_used": [inst.nodes[u] for u in used_nodes],
    }
    return Evaluation(True, objective, metrics, [])


def _named_counts(inst: OdrpInstance, counts: list[int]) -> dict[str, int]:
    return {inst.operators[i]: c for i, c in enumerate(counts)}
