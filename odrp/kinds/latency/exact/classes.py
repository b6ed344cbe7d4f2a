"""Exact latency placement by supervisor classes: the score without latency first, latency by labelling.

Write the score of eq. (1) as s = F + w1 s_lat, with F = w2 s_sup + w3 s_co + w4 s_event. F depends
only on the *partition* of the operators into groups (one per supervisor used), not on which
supervisor hosts which group; s_lat depends on that labelling. Supervisors of equal cpu and memory
form a *class*, and a placement uses a *multiset* M of classes (how many supervisors of each class).

Method (setting ``classes`` of :func:`odrp.kinds.latency.exact.solve.solve`):

1. Incumbent s* (the hybrid heuristic's score, :func:`upper_bound`, or the warm start's or the run's start
   placement's if lower: :func:`better_known`).
2. For every capacity-feasible multiset M, in the order of the bound k w2 / N + (k - components)
   min_e (w3 / |E| + w4 t_e / T) (k = |M|, every group of a connected topology is joined to another
   by a cut edge, :func:`supervisors_bound`): skip M if the bound exceeds s*, or if another multiset D
   of as many supervisors *dominates* it (:func:`dominates`: a one-to-one map of M's members to D's
   gives each at least its cpu and memory capacity; then every partition that fits M fits D, with the
   same F, and D's search or D's bound covers M's). Otherwise build the model of
   :func:`odrp.kinds.latency.exact.model.build` on M alone (one supervisor per member of M, all used, w1 = 0:
   the supervisors of a class are interchangeable and ordered, the twins too), separate its
   triangle rows, skip M if the LP bound exceeds s*, and repeat: solve with F <= s* (to the relative
   gap ``find_gap``: a solve only has to find a partition below s*); if infeasible, M
   is done; else take the partition P of the solution, find its best labelling on the real
   supervisors (:func:`best_labelling`: every injective, capacity-feasible map of the groups to
   supervisors, latency exactly as the evaluator computes it), lower s* if it is better, and exclude
   P from M's model (a no-good row per labelling of P on M's supervisors).
3. s* is optimal: a placement p with s(p) < s* has F(p) <= s(p) < s* (s_lat >= 0), so its
   partition, in the model of its multiset (or of a multiset that dominates it), was found and
   labelled (then s* <= s(p)) or the model was infeasible below s*; the symmetry rows keep a
   placement of equal F and equal best labelling (twins swapped, interchangeable supervisors
   relabelled, which leave every score unchanged).

Why: F alone at w1 = 0 has every supervisor symmetry and a model with only k supervisors is small;
the latency tie-break (w1 = 1e-6, of the order of the gap tolerance) is what made the one-model
solve slow, and here it costs one labelling enumeration per partition found. The price is one
infeasibility proof per multiset that survives its bounds (docs/methods/latency.md).

The labelling enumeration is exhaustive with a node limit (``labelling_nodes``), and a partition is
excluded by at most ``max_no_goods`` rows; beyond either the method raises :class:`TooManyGroups` and
:func:`odrp.kinds.latency.exact.solve.solve` answers with the one-model MILP instead.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
import pyomo.environ as pyo

from odrp.core.budget import Budget
from odrp.core.exact import ExactOutcome, checked_start
from odrp.core.result import relative_gap
from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers import solve as run_solver
from odrp.core.solvers.timing import OVERRUN, solver_limit
from odrp.heuristics.latency import AntSystemSettings, Scorer, ant_system, climb
from odrp.kinds.latency.evaluator import evaluate, evaluate_assignment
from odrp.kinds.latency.exact.model import build, components, objective_coefficients, unscaled
from odrp.kinds.latency.exact.separation import separate_triangles
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, parse_solution, solution_json


class TooManyGroups(Exception):
    """A partition whose labellings (or no-good rows) exceed their limit."""


def latency_is_tie_break(inst: LatencyInstance) -> bool:
    """w1 x (an upper bound of s_lat) below the cost of the cheapest cut edge: the default for ``classes``.

    The bound is the longest path over the latency edges with every edge at the largest latency.
    Then no latency difference outweighs a cut edge, few partitions have F below s*, and the method
    labels few; with a heavier latency weight the one-model MILP is used (it sees the latency).
    """
    w1 = inst.weights["latency"]
    if w1 == 0:
        return True
    c = objective_coefficients(inst)
    cheapest = min((c["colocation"] + c["events"] * t for t in inst.events), default=0.0)
    longest = [0.0] * inst.n_operators
    largest = max((max(row) for row in inst.latency), default=0.0)
    for j in inst.latency_order:
        for i in inst.latency_predecessors[j]:
            longest[j] = max(longest[j], longest[i] + largest)
    return w1 * max(longest, default=0.0) < cheapest


def better_known(
    inst: LatencyInstance,
    incumbent: tuple[float, list[int]] | None,
    solution: dict[str, Any] | None,
    what: str,
) -> tuple[float, list[int]] | None:
    """``incumbent`` or the placement of ``solution`` (a warm start, a start heuristic's answer), whichever
    scores lower; ``solution`` is checked by the evaluator (InputError, naming ``what``, if infeasible)."""
    if solution is None:
        return incumbent
    score = checked_start(evaluate, inst, solution)
    placement = [u for u in parse_solution(inst, solution, what) if u is not None]
    return (score, placement) if incumbent is None or score < incumbent[0] else incumbent


def supervisor_classes(inst: LatencyInstance) -> list[list[int]]:
    """Supervisors grouped by (cpu, memory), in order of first appearance."""
    classes: dict[tuple[float, float], list[int]] = {}
    for u in range(inst.n_supervisors):
        classes.setdefault((inst.supervisor_cpu[u], inst.supervisor_memory[u]), []).append(u)
    return list(classes.values())


def multisets(inst: LatencyInstance, classes: list[list[int]]) -> list[tuple[int, ...]]:
    """Counts per class (not all zero) whose summed usable capacities cover the total demand."""
    need_cpu, need_memory = math.fsum(inst.cpu), math.fsum(inst.memory)
    found = []
    for counts in itertools.product(*(range(len(c) + 1) for c in classes)):
        chosen = [u for c, k in zip(classes, counts, strict=True) for u in c[:k]]
        if not chosen:
            continue
        cpu = math.fsum(inst.cpu_limit[u] for u in chosen)
        memory = math.fsum(inst.memory_limit[u] for u in chosen)
        if cpu >= need_cpu * (1 - 1e-12) and memory >= need_memory * (1 - 1e-12):
            found.append(counts)
    return found


def supervisors_bound(inst: LatencyInstance) -> Callable[[int], float]:
    """F (and s) of every placement on k supervisors is at least k w2 / N + (k - components) times the
    cheapest cut edge (w3 / |E| + w4 t_e / T): every group of a connected topology is joined to another
    by a cut edge. Returned as a function of k."""
    coefficients = objective_coefficients(inst)
    n_components = components(inst)
    cheapest = min((coefficients["colocation"] + coefficients["events"] * t for t in inst.events), default=0.0)
    return lambda k: k * coefficients["supervisors"] + max(0, k - n_components) * cheapest


def undominated(
    inst: LatencyInstance, classes: list[list[int]]
) -> tuple[dict[int, list[tuple[int, ...]]], list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """The multisets of :func:`multisets` by their number of supervisors, those that another of as many
    supervisors dominates (:func:`dominates`) left out; and the (left out, by) pairs."""
    levels: dict[int, list[tuple[int, ...]]] = {}
    for counts in multisets(inst, classes):
        levels.setdefault(sum(counts), []).append(counts)
    dominated = []
    for k, level in levels.items():
        kept = []
        for counts in level:
            by = next((big for big in level if dominates(classes, inst, big, counts)), None)
            if by is None:
                kept.append(counts)
            else:
                dominated.append((counts, by))
        levels[k] = kept
    return levels, dominated


def dominates(classes: list[list[int]], inst: LatencyInstance, big: tuple[int, ...], small: tuple[int, ...]) -> bool:
    """``big`` != ``small`` has as many supervisors, and a one-to-one map of the members of ``small`` to
    those of ``big`` gives each at least its cpu and memory capacity (a perfect bipartite matching).

    Then every partition that fits ``small`` (one group per member) fits ``big``, with the same F (F
    depends on the partition alone, and both count as many supervisors used): ``small``'s model
    holds nothing that ``big``'s does not.
    """
    if big == small or sum(big) != sum(small):
        return False
    capacity = [(inst.supervisor_cpu[c[0]], inst.supervisor_memory[c[0]]) for c in classes]
    bigger = [("big", c, r) for c, n in enumerate(big) for r in range(n)]
    smaller = [("small", c, r) for c, n in enumerate(small) for r in range(n)]
    graph = nx.Graph()
    graph.add_nodes_from(bigger + smaller)
    graph.add_edges_from(
        (a, b)
        for a in smaller
        for b in bigger
        if capacity[b[1]][0] >= capacity[a[1]][0] and capacity[b[1]][1] >= capacity[a[1]][1]
    )
    matching = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=smaller)
    return all(a in matching for a in smaller)


def restricted(inst: LatencyInstance, supervisors: list[int]) -> LatencyInstance:
    """The instance on ``supervisors`` alone, w1 = 0, with s_sup still counted out of all N supervisors."""
    weights = dict(inst.weights)
    weights["supervisors"] = inst.weights["supervisors"] * len(supervisors) / inst.n_supervisors
    weights["latency"] = 0.0
    return dataclasses.replace(
        inst,
        supervisors=tuple(inst.supervisors[u] for u in supervisors),
        supervisor_cpu=tuple(inst.supervisor_cpu[u] for u in supervisors),
        supervisor_memory=tuple(inst.supervisor_memory[u] for u in supervisors),
        latency=tuple(tuple(inst.latency[u][v] for v in supervisors) for u in supervisors),
        weights=weights,
    )


def partition_score(inst: LatencyInstance, groups: list[list[int]]) -> float:
    """F (the score without the latency term) of any placement with these groups."""
    where = {i: g for g, members in enumerate(groups) for i in members}
    w = inst.weights
    cut = [e for e, (i, j) in enumerate(inst.edges) if where[i] != where[j]]
    s_co = len(cut) / len(inst.edges) if inst.edges else 0.0
    s_event = math.fsum(inst.events[e] for e in cut) / inst.total_events if inst.total_events > 0 else 0.0
    return w["supervisors"] * len(groups) / inst.n_supervisors + w["colocation"] * s_co + w["events"] * s_event


def _longest_path(inst: LatencyInstance, host: list[int | None]) -> float:
    """s_lat with the latency of an edge counted only when both ends have a supervisor (a lower bound)."""
    arrival = [0.0] * inst.n_operators
    for j in inst.latency_order:
        for i in inst.latency_predecessors[j]:
            u, v = host[i], host[j]
            step = inst.latency[u][v] if u is not None and v is not None else 0.0
            arrival[j] = max(arrival[j], arrival[i] + step)
    return max(arrival, default=0.0)


def best_labelling(
    inst: LatencyInstance, groups: list[list[int]], max_nodes: int = LatencySettings().labelling_nodes
) -> tuple[float, list[int]] | None:
    """The best placement whose groups are ``groups`` (score, supervisor per operator), None if none fits.

    Depth-first over the groups (largest cpu first), each on a distinct supervisor with room for it;
    a branch is cut when F + w1 x (the longest path over the labelled groups) reaches the best score.
    Raises :class:`TooManyGroups` after ``max_nodes`` nodes.
    """
    w1 = inst.weights["latency"]
    f = partition_score(inst, groups)
    order = sorted(range(len(groups)), key=lambda g: -math.fsum(inst.cpu[i] for i in groups[g]))
    fits = [
        [
            u
            for u in range(inst.n_supervisors)
            if math.fsum(inst.cpu[i] for i in groups[g]) <= inst.cpu_limit[u] * (1 + 1e-9) + 1e-9
            and math.fsum(inst.memory[i] for i in groups[g]) <= inst.memory_limit[u] * (1 + 1e-9) + 1e-9
        ]
        for g in range(len(groups))
    ]
    host: list[int | None] = [None] * inst.n_operators
    best: list[Any] = [math.inf, None]
    nodes = [0]

    def extend(depth: int, taken: set[int]) -> None:
        nodes[0] += 1
        if nodes[0] > max_nodes:
            raise TooManyGroups(f"{len(groups)} groups")
        bound = f + w1 * _longest_path(inst, host) if w1 > 0 else f
        if bound >= best[0]:
            return
        if depth == len(order):
            best[0], best[1] = bound, list(host)
            return
        g = order[depth]
        for u in fits[g]:
            if u in taken:
                continue
            for i in groups[g]:
                host[i] = u
            extend(depth + 1, taken | {u})
            for i in groups[g]:
                host[i] = None

    extend(0, set())
    return None if best[1] is None else (best[0], best[1])


def _groups(placement: list[int]) -> list[list[int]]:
    found: dict[int, list[int]] = {}
    for i, u in enumerate(placement):
        found.setdefault(u, []).append(i)
    return list(found.values())


def _exclude(m: pyo.ConcreteModel, lean: LatencyInstance, groups: list[list[int]], max_no_goods: int) -> int:
    """No-good rows: no placement of ``lean`` with these groups, on any of its supervisors.

    Raises :class:`TooManyGroups` when that takes more than ``max_no_goods`` rows.
    """
    n = lean.n_operators
    fits = [
        {
            u
            for u in range(lean.n_supervisors)
            if math.fsum(lean.cpu[i] for i in g) <= lean.cpu_limit[u] * (1 + 1e-9) + 1e-9
            and math.fsum(lean.memory[i] for i in g) <= lean.memory_limit[u] * (1 + 1e-9) + 1e-9
        }
        for g in groups
    ]
    labellings = [
        hosts
        for hosts in itertools.permutations(range(lean.n_supervisors), len(groups))
        if all(u in f for u, f in zip(hosts, fits, strict=True))
    ]
    if len(labellings) > max_no_goods:
        raise TooManyGroups(f"{len(labellings)} labellings of {len(groups)} groups to exclude")
    for hosts in labellings:
        m.no_good.add(sum(m.x[i, u] for g, u in zip(groups, hosts, strict=True) for i in g) <= n - 1)
    return len(labellings)


def solve(
    inst: LatencyInstance,
    settings: LatencySettings,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    warm_start: dict[str, Any] | None = None,
    start_solution: dict[str, Any] | None = None,
) -> ExactOutcome:
    """The method of the module docstring with the ``settings`` of the exact method (the restricted
    models always order interchangeable supervisors). ``start_solution``: a feasible placement (the run's
    start heuristics' best), the first incumbent where it beats the hybrid heuristic's, as a warm start
    is. Raises :class:`TooManyGroups` when a labelling enumeration or a partition's no-good rows are too
    large."""
    start = time.perf_counter()
    restricted_settings = dataclasses.replace(settings, supervisor_symmetry=True)
    incumbent: tuple[float, list[int]] | None = upper_bound(inst, settings.incumbent_iterations)
    incumbent = better_known(inst, incumbent, warm_start, "warm start")
    incumbent = better_known(inst, incumbent, start_solution, "start")
    classes = supervisor_classes(inst)
    on_supervisors = supervisors_bound(inst)

    def quick_bound(counts: tuple[int, ...]) -> float:
        return on_supervisors(sum(counts))

    levels, dominated = undominated(inst, classes)
    log: list[dict[str, Any]] = [
        {"counts": list(counts), "bound": quick_bound(counts), "pruned": "dominated", "by": list(by)}
        for counts, by in dominated
    ]
    seen: set[frozenset[frozenset[int]]] = set()
    mip_s = 0.0
    for k in sorted(levels):  # the quick bound grows with k: a level at a time, each in LP-bound order
        if incumbent is not None and quick_bound(levels[k][0]) > incumbent[0] * (1 + 1e-9):
            log.extend(
                {"counts": list(c), "bound": quick_bound(c), "pruned": "bound"}
                for k2 in sorted(levels)
                if k2 >= k
                for c in levels[k2]
            )
            break
        models = []
        for index, counts in enumerate(levels[k]):  # the restricted models and their LP bounds
            if time_limit is not None and time.perf_counter() - start > time_limit:
                left = [bound for bound, *_ in models] + [quick_bound(c) for c in levels[k][index:]]
                left += [quick_bound(c) for k2 in sorted(levels) if k2 > k for c in levels[k2]]
                return _stopped(inst, solver, incumbent, left, start, log, mip_s)
            entry: dict[str, Any] = {"counts": list(counts), "bound": quick_bound(counts)}
            log.append(entry)
            chosen = [u for c, n in zip(classes, counts, strict=True) for u in c[:n]]
            lean = restricted(inst, chosen)
            built = time.perf_counter()
            m = build(lean, restricted_settings)
            entry["build_s"] = time.perf_counter() - built
            for u in range(lean.n_supervisors):
                m.y[u].fix(1)
            cpu = time.process_time()
            above = None if incumbent is None else incumbent[0] * (1 + 1e-9)
            deadline = None if time_limit is None else start + time_limit - OVERRUN[solver]
            separation = separate_triangles(m, lean, settings, stop_above=above, deadline=deadline)
            entry["lp_bound"] = separation["lp_bound"]
            entry["separation_cpu_s"] = round(time.process_time() - cpu, 2)
            if entry["lp_bound"] is None:
                entry["pruned"] = "lp infeasible"
            else:
                m.no_good = pyo.ConstraintList()
                models.append((entry["lp_bound"], entry, lean, m))
        models.sort(key=lambda item: item[0])
        for position, (lp_bound, entry, lean, m) in enumerate(models):
            if incumbent is not None and lp_bound > incumbent[0] * (1 + 1e-9):
                entry["pruned"] = "lp bound"
                continue
            for known in seen:  # partitions labelled already, in whatever multiset they were found
                _exclude(m, lean, [sorted(g) for g in known], settings.max_no_goods)
            entry["solves"], entry["solve_s"] = 0, []
            while True:
                if incumbent is not None:
                    if hasattr(m, "cutoff"):
                        m.del_component(m.cutoff)
                    m.cutoff = pyo.Constraint(expr=m.objective.expr <= m.scale * incumbent[0] * (1 + 1e-9))
                remaining = None if time_limit is None else time_limit - (time.perf_counter() - start)
                left = [bound for bound, *_ in models[position:]]
                left += [quick_bound(c) for k2 in sorted(levels) if k2 > k for c in levels[k2]]
                limit = solver_limit(remaining, solver, entry["build_s"])
                if limit == 0.0:
                    return _stopped(inst, solver, incumbent, left, start, log, mip_s)
                run = run_solver(
                    m,
                    solver=solver,
                    time_limit=limit,
                    mip_gap=max(mip_gap, settings.find_gap),
                    highs_options={"mip_pscost_minreliable": settings.mip_pscost_minreliable},
                )
                mip_s += run.runtime_s
                entry["solves"] += 1
                entry["solve_s"].append(round(run.runtime_s, 2))
                if run.status == "infeasible":
                    break
                if not run.has_solution:  # its bound in the score's units (the model's objective is scaled)
                    return _stopped(inst, solver, incumbent, left, start, log, mip_s, unscaled(run, m.scale))
                lean_placement = [
                    max(range(lean.n_supervisors), key=lambda u: pyo.value(m.x[i, u])) for i in range(inst.n_operators)
                ]
                groups = _groups(lean_placement)
                key = frozenset(frozenset(g) for g in groups)
                if key not in seen:
                    seen.add(key)
                    labelled = best_labelling(inst, groups, settings.labelling_nodes)
                    if labelled is not None and (incumbent is None or labelled[0] < incumbent[0]):
                        incumbent = labelled
                _exclude(m, lean, groups, settings.max_no_goods)
    runtime = time.perf_counter() - start
    if incumbent is None:
        run = SolverRun(solver_version(solver), "infeasible", None, None, None, runtime)
        return ExactOutcome(run, None, {"multisets": log, "partitions": len(seen), "mip_s": mip_s})
    score, placement = incumbent
    exact = evaluate_assignment(inst, placement).objective
    run = SolverRun(solver_version(solver), "optimal", exact, score, relative_gap(exact, score, "min"), runtime)
    stats = {"method": "classes", "multisets": log, "partitions": len(seen), "mip_s": mip_s}
    return ExactOutcome(run, solution_json(inst, placement), stats)


def _stopped(
    inst: LatencyInstance,
    solver: str,
    incumbent: tuple[float, list[int]] | None,
    bounds: list[float],
    start: float,
    log: list[dict[str, Any]],
    mip_s: float,
    run: SolverRun | None = None,
) -> ExactOutcome:
    """Out of time (or the solver failed): the incumbent, and the smallest LP bound of what is left."""
    bounds = list(bounds)
    if run is not None and run.bound is not None and bounds:
        bounds[0] = max(bounds[0], run.bound)
    bound = min(bounds) if bounds else None
    if incumbent is not None:
        bound = incumbent[0] if bound is None else min(bound, incumbent[0])
    status = run.status if run is not None and run.status == "error" else "time_limit"
    stats = {"method": "classes", "multisets": log, "mip_s": mip_s}
    runtime = time.perf_counter() - start
    if incumbent is None:
        why = "the solver failed" if status == "error" else "the time limit came"
        message = f"by supervisor classes: {why} before any placement was found"
        if run is not None and run.message:
            message += f" ({run.message})"
        return ExactOutcome(SolverRun(solver_version(solver), status, None, bound, None, runtime, message), None, stats)
    score, placement = incumbent
    gap = relative_gap(score, bound, "min") if bound is not None else None
    run_message = run.message if run is not None and status == "error" else ""
    return ExactOutcome(
        SolverRun(solver_version(solver), status, score, bound, gap, runtime, run_message),
        solution_json(inst, placement),
        stats,
    )


def upper_bound(inst: LatencyInstance, iterations: int) -> tuple[float, list[int]] | None:
    """The hybrid heuristic's feasible placement and score, or None if it violates a capacity.

    The ant system (seed 0, default settings) for ``iterations`` colonies, then hill climbing from
    its best ant for at most ``iterations`` steps: deterministic, no wall-clock cap.
    """
    scorer = Scorer(inst)
    p, _ = ant_system(scorer, random.Random(0), Budget(max_steps=iterations), AntSystemSettings())
    p, _ = climb(scorer, p, Budget(max_steps=iterations))
    return None if scorer.violations(p) else (scorer.score(p), p)
