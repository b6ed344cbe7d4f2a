"""The independent evaluator: feasibility and every metric of a solution, recomputed from the instance alone."""

from __future__ import annotations

import math
from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.latency.instance import Assignment, LatencyInstance, parse_solution

# ---------------------------------------------------------------------------------- evaluator


def evaluate(instance: LatencyInstance, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    """Recompute feasibility, every term of eq. (1) and the score from a solution JSON."""
    return evaluate_assignment(instance, parse_solution(instance, solution, source))


def evaluate_assignment(instance: LatencyInstance, assignment: Assignment) -> Evaluation:
    """The evaluator on the internal form (supervisor index per operator)."""
    inst = instance
    violations = [f"operator {inst.operators[i]} is not assigned" for i, u in enumerate(assignment) if u is None]
    if violations:
        return Evaluation(False, None, {}, violations)
    p: list[int] = [u for u in assignment if u is not None]

    cpu_used = [0.0] * inst.n_supervisors
    memory_used = [0.0] * inst.n_supervisors
    for i, u in enumerate(p):
        cpu_used[u] += inst.cpu[i]
        memory_used[u] += inst.memory[i]
    for u, sup in enumerate(inst.supervisors):
        for what, used, limit in (
            ("cpu", cpu_used[u], inst.cpu_limit[u]),
            ("memory", memory_used[u], inst.memory_limit[u]),
        ):
            if used > limit * (1 + 1e-9) + 1e-9:
                violations.append(f"supervisor {sup}: {what} {used:g} > {inst.utilisation_limit:g} x capacity")

    # s_lat: longest accumulated link latency, sources at 0, over the edges kept for s_lat
    arrival = [0.0] * inst.n_operators
    for j in inst.latency_order:
        for i in inst.latency_predecessors[j]:
            arrival[j] = max(arrival[j], arrival[i] + inst.latency[p[i]][p[j]])
    s_lat = max(arrival)

    used = sorted(set(p))
    s_sup = len(used) / inst.n_supervisors
    cut = [e for e, (i, j) in enumerate(inst.edges) if p[i] != p[j]]
    s_co = len(cut) / len(inst.edges) if inst.edges else 0.0
    cut_events = math.fsum(inst.events[e] for e in cut)
    s_event = cut_events / inst.total_events if inst.total_events > 0 else 0.0

    w = inst.weights
    score = w["latency"] * s_lat + w["supervisors"] * s_sup + w["colocation"] * s_co + w["events"] * s_event
    metrics: dict[str, Any] = {
        "s_lat": s_lat,
        "s_sup": s_sup,
        "s_co": s_co,
        "s_event": s_event,
        "supervisors_used": [inst.supervisors[u] for u in used],
        "cut_edges": len(cut),
        "edges": len(inst.edges),
        "cut_events": cut_events,
        "total_events": inst.total_events,
        "cpu_used": {inst.supervisors[u]: cpu_used[u] for u in used},
        "memory_used": {inst.supervisors[u]: memory_used[u] for u in used},
        "latency_source": inst.latency_source,
        "back_edges_dropped": [[inst.operators[i] for i in inst.edges[e]] for e in inst.back_edges],
    }
    if inst.back_edges:
        metrics["note"] = "cyclic topology: s_lat ignores the DFS back edges listed in back_edges_dropped"
    if violations:
        return Evaluation(False, None, metrics, violations)
    return Evaluation(True, score, metrics, [])
