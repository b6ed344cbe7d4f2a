"""The independent evaluator: feasibility and every metric of a solution, recomputed from the instance alone."""

from __future__ import annotations

import itertools
from typing import Any

from odrp.core.kind import Evaluation
from odrp.kinds.pathmap.instance import PathmapInstance, parse_solution

# ---------------------------------------------------------------------------------- evaluator


def evaluate(instance: PathmapInstance, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    """Recompute feasibility and the cost of a solution JSON."""
    nodes, paths = parse_solution(instance, solution, source)
    return evaluate_mapping(instance, nodes, paths)


def evaluate_mapping(
    instance: PathmapInstance, nodes: tuple[int, ...], paths: tuple[tuple[int, ...], ...]
) -> Evaluation:
    """The evaluator on server indices (-1 marks an unplaced component)."""
    inst = instance
    violations: list[str] = []
    used = [0.0] * inst.n_servers
    for i, u in enumerate(nodes):
        name = inst.components[i]
        if u < 0:
            violations.append(f"{name}: not placed")
            continue
        if inst.component_service[i] not in inst.services[u]:
            violations.append(f"{name}: server {inst.servers[u]} does not host service {inst.component_service[i]!r}")
        used[u] += inst.cpu[i]
    for u in range(inst.n_servers):
        if used[u] > inst.capacity[u] * (1 + 1e-9) + 1e-9:
            violations.append(f"server {inst.servers[u]}: cpu {used[u]:g} > capacity {inst.capacity[u]:g}")
    if len(paths) != inst.n_pairs:
        violations.append(f"{len(paths)} paths, expected {inst.n_pairs} (one per consecutive pair)")
        return Evaluation(False, None, {}, violations)

    ends = (inst.source, *nodes, inst.sink)
    cost = delay = 0.0
    hops = {"dedicated": 0, "public": 0}
    for p, path in enumerate(paths):
        pair = _pair_name(inst, p)
        if ends[p] >= 0 and path[0] != ends[p]:
            violations.append(f"path {p} ({pair}) starts at {inst.servers[path[0]]}, expected {inst.servers[ends[p]]}")
        if ends[p + 1] >= 0 and path[-1] != ends[p + 1]:
            violations.append(
                f"path {p} ({pair}) ends at {inst.servers[path[-1]]}, expected {inst.servers[ends[p + 1]]}"
            )
        if len(path) - 1 > inst.max_hops:
            violations.append(f"path {p} ({pair}) has {len(path) - 1} links, at most {inst.max_hops} allowed")
        for a, b in itertools.pairwise(path):
            if not inst.between.get((a, b)):
                violations.append(f"path {p} ({pair}): no link between {inst.servers[a]} and {inst.servers[b]}")
                continue
            chosen = inst.hop_link(a, b, inst.bandwidth[p])
            if chosen is None:
                best = max(inst.links[e].bandwidth for e in inst.between[(a, b)])
                violations.append(
                    f"path {p} ({pair}): link {inst.servers[a]}-{inst.servers[b]} has bandwidth {best:g} "
                    f"< {inst.bandwidth[p]:g}"
                )
                continue
            link = inst.links[chosen]
            cost += link.cost
            delay += link.delay
            hops[link.kind] += 1
    metrics = {
        "dedicated_hops": hops["dedicated"],
        "public_hops": hops["public"],
        "path_links": [len(path) - 1 for path in paths],
        "delay": delay,
        "servers_used": sorted({inst.servers[u] for u in nodes if u >= 0}),
    }
    if violations:
        return Evaluation(False, None, metrics, violations)
    metrics["cost"] = cost
    return Evaluation(True, cost, metrics, [])


def _pair_name(inst: PathmapInstance, p: int) -> str:
    names = ("source", *inst.components, "sink")
    return f"{names[p]} -> {names[p + 1]}"
