"""The independent evaluator: feasibility and every metric of a solution, recomputed from the instance alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.knapsack.instance import Gap, Kp, Mdkp, Mkp, Qkp, Qmkp, fits, parse_assignment
from odrp.kinds.knapsack.qm3dkp_evaluator import evaluate as evaluate_qm3dkp

# --------------------------------------------------------------------------------- evaluators


def _verdict(
    loads: dict[str, float], capacities: dict[str, float], objective: float, metrics: dict[str, Any]
) -> Evaluation:
    violations = [
        f"{name}: load {loads[name]:g} exceeds capacity {capacities[name]:g}"
        for name in loads
        if not fits(loads[name], capacities[name])
    ]
    metrics = {**metrics, "loads": loads}
    if violations:
        return Evaluation(False, None, metrics, violations)
    return Evaluation(True, objective, metrics, [])


def _loads_by_knapsack(assignment: Sequence[int | None], m: int, weight: Callable[[int, int], float]) -> list[float]:
    loads = [0.0] * m
    for j, k in enumerate(assignment):
        if k is not None:
            loads[k] += weight(k, j)
    return loads


def _pair_profit(profits: Sequence[Sequence[float]], together: Callable[[int, int], bool]) -> float:
    n = len(profits)
    return sum(profits[i][j] for i in range(n) for j in range(i + 1, n) if together(i, j))


def evaluate_kp(inst: Kp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    load = sum(inst.weights[j] for j in packed)
    profit = sum(inst.profits[j] for j in packed)
    return _verdict({"knapsack 0": load}, {"knapsack 0": inst.capacity}, profit, {"packed": len(packed)})


def evaluate_mkp(inst: Mkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[j])
    profit = sum(inst.profits[j] for j in range(inst.n_items) if a[j] is not None)
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    return _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        profit,
        {"packed": sum(k is not None for k in a)},
    )


def evaluate_gap(inst: Gap, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    unassigned = [j for j in range(inst.n_items) if a[j] is None]
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[k][j])
    value = sum(inst.values[k][j] for j, k in enumerate(a) if k is not None)
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    evaluation = _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        value,
        {"unassigned": len(unassigned)},
    )
    if unassigned:
        evaluation.feasible, evaluation.objective = False, None
        evaluation.violations.append(f"items {unassigned} are in no knapsack (every item needs exactly one)")
    return evaluation


def evaluate_mdkp(inst: Mdkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    names = [f"dimension {d}" for d in range(len(inst.capacities))]
    loads = {names[d]: sum(row[j] for j in packed) for d, row in enumerate(inst.weights)}
    profit = sum(inst.profits[j] for j in packed)
    return _verdict(loads, dict(zip(names, inst.capacities, strict=True)), profit, {"packed": len(packed)})


def evaluate_qkp(inst: Qkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    load = sum(inst.weights[j] for j in packed)
    linear = sum(inst.profits[j][j] for j in packed)
    pairs = _pair_profit(inst.profits, lambda i, j: a[i] is not None and a[j] is not None)
    return _verdict(
        {"knapsack 0": load},
        {"knapsack 0": inst.capacity},
        linear + pairs,
        {"packed": len(packed), "linear_profit": linear, "pair_profit": pairs},
    )


def evaluate_qmkp(inst: Qmkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[j])
    linear = sum(inst.profits[j][j] for j in range(inst.n_items) if a[j] is not None)
    pairs = _pair_profit(inst.profits, lambda i, j: a[i] is not None and a[i] == a[j])
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    return _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        linear + pairs,
        {"packed": sum(k is not None for k in a), "linear_profit": linear, "pair_profit": pairs},
    )


def evaluator_of(kind: str) -> Callable[[Any, dict[str, Any], str], Evaluation]:
    """The evaluator of a kind of the family, by its name."""
    return {
        "kp": evaluate_kp,
        "mkp": evaluate_mkp,
        "gap": evaluate_gap,
        "mdkp": evaluate_mdkp,
        "qkp": evaluate_qkp,
        "qmkp": evaluate_qmkp,
        "qm3dkp": evaluate_qm3dkp,
    }[kind]
