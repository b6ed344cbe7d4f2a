"""The independent evaluator: feasibility and every metric of a solution, recomputed from the instance alone."""

from __future__ import annotations

from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance, parse_solution

# ---------------------------------------------------------------------------------- evaluator


def evaluate(inst: ThroughputInstance, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    """Recompute feasibility, R and every metric from a solution JSON."""
    return evaluate_counts(inst, parse_solution(inst, solution, source))


def machine_terms(inst: ThroughputInstance, counts: Counts) -> tuple[list[float], list[float], list[int]]:
    """Per machine: overhead sum_c MET_cw x_cw, load per unit R sum_c e_cw l_c x_cw / N_c, and tasks."""
    fixed = [0.0] * inst.n_machines
    per_rate = [0.0] * inst.n_machines
    tasks = [0] * inst.n_machines
    for c, per in enumerate(counts):
        n_c = sum(per.values())
        for w, x in per.items():
            fixed[w] += inst.overhead[c][w] * x
            per_rate[w] += inst.coefficient(c, w) * x / n_c
            tasks[w] += x
    return fixed, per_rate, tasks


def rate(inst: ThroughputInstance, counts: Counts) -> float:
    """R(x): the largest input rate every machine sustains (placement assumed feasible)."""
    fixed, per_rate, _ = machine_terms(inst, counts)
    limits = [max(0.0, inst.capacity[w] - fixed[w]) / per_rate[w] for w in range(inst.n_machines) if per_rate[w] > 0]
    assert limits, "load() rejects instances with a rate-free placement"
    return min(limits)


def evaluate_counts(inst: ThroughputInstance, counts: Counts) -> Evaluation:
    """The evaluator on the internal placement form."""
    violations: list[str] = []
    totals = [sum(per.values()) for per in counts]
    for c, n_c in enumerate(totals):
        top = inst.max_instances[c]
        if n_c < 1 or (top is not None and n_c > top):
            violations.append(f"{inst.components[c]}: {n_c} instances, expected 1..{top or 'any'}")
    fixed, per_rate, tasks = machine_terms(inst, counts) if not violations else ([], [], [])
    for w in range(len(fixed)):
        limit = inst.max_tasks[w]
        if limit is not None and tasks[w] > limit:
            violations.append(f"machine {inst.machines[w]}: {tasks[w]} tasks, at most {limit}")
        if fixed[w] > inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL:
            violations.append(
                f"machine {inst.machines[w]}: overheads alone use {fixed[w]:g}, capacity {inst.capacity[w]:g}"
            )
    instances = {inst.components[c]: n for c, n in enumerate(totals)}
    if violations:
        return Evaluation(False, None, {"instances": instances}, violations)
    r = rate(inst, counts)
    utilisation = [fixed[w] + r * per_rate[w] for w in range(inst.n_machines)]
    bottlenecks = [
        inst.machines[w]
        for w in range(inst.n_machines)
        if per_rate[w] > 0 and utilisation[w] >= inst.capacity[w] * (1 - 1e-9) - 1e-9
    ]
    metrics = {
        "input_rate": r,
        "overall_throughput": r * sum(inst.load),
        "component_rates": {inst.components[c]: r * inst.load[c] for c in range(inst.n_components)},
        "instances": instances,
        "total_instances": sum(totals),
        "utilisation": {inst.machines[w]: utilisation[w] for w in range(inst.n_machines)},
        "tasks": {inst.machines[w]: tasks[w] for w in range(inst.n_machines)},
        "bottlenecks": bottlenecks,
    }
    return Evaluation(True, r, metrics, [])
