"""The independent evaluator of QM3DKP."""

from __future__ import annotations

from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.knapsack.qm3dkp import CAPACITY_RTOL, RESOURCES, Qm3dkpInstance, parse_solution

# ---------------------------------------------------------------------------------- evaluator


def evaluate(inst: Qm3dkpInstance, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    """Recompute memory feasibility, the co-location profit and the soft-overload penalty, task by task."""
    assignment = parse_solution(inst, solution, source)
    violations = [f"task {t} is on no node" for t in inst.tasks if assignment.get(t) is None]
    used = {n.id: dict.fromkeys(RESOURCES, 0.0) for n in inst.nodes}
    for comp in inst.components:
        for t in comp.tasks:
            node = assignment.get(t)
            if node is not None:
                for r in RESOURCES:
                    used[node][r] += getattr(comp, r)
    for n in inst.nodes:
        if used[n.id]["memory"] > n.memory + CAPACITY_RTOL * max(1.0, n.memory):
            violations.append(f"node {n.id}: memory {used[n.id]['memory']:g} used, capacity {n.memory:g}")
    metrics: dict[str, Any] = {"used": used}
    if violations:
        return Evaluation(False, None, metrics, violations)

    rack = {n.id: n.rack for n in inst.nodes}
    same_node = same_rack = 0.0
    pairs = {"same_node": 0, "same_rack": 0, "apart": 0}
    for edge in inst.edges:
        a, b = inst.components[edge.source], inst.components[edge.target]
        share = edge.weight / (a.parallelism * b.parallelism)
        for ta in a.tasks:
            for tb in b.tasks:
                u, v = assignment[ta], assignment[tb]
                if u == v:
                    same_node += share
                    pairs["same_node"] += 1
                elif rack[u] == rack[v]:
                    same_rack += share
                    pairs["same_rack"] += 1
                else:
                    pairs["apart"] += 1
    profit = inst.colocation_node * same_node + inst.colocation_rack * same_rack
    cpu_over = {n.id: max(0.0, used[n.id]["cpu"] - n.cpu) for n in inst.nodes}
    bandwidth_over = {n.id: max(0.0, used[n.id]["bandwidth"] - n.bandwidth) for n in inst.nodes}
    penalty = inst.penalty_cpu * sum(cpu_over.values()) + inst.penalty_bandwidth * sum(bandwidth_over.values())
    metrics.update(
        {
            "colocation_profit": profit,
            "penalty": penalty,
            "weight_same_node": same_node,
            "weight_same_rack": same_rack,
            "task_pairs": pairs,
            "cpu_overload": sum(cpu_over.values()),
            "bandwidth_overload": sum(bandwidth_over.values()),
            "nodes_used": sorted({v for v in assignment.values() if v is not None}),
        }
    )
    return Evaluation(True, profit - penalty, metrics, [])
