"""Max-throughput scheduling of a Storm topology on a heterogeneous cluster (Nasiri et al., J. Big Data 2023).

Choose how many instances (tasks) each component of a topology gets and the machine of each
instance, so that the topology input rate R is as high as possible without overloading a machine.
The paper's model, with its symbols:

- Input rates (eq. 6): a source component (no incoming edge) receives R; any other component c
  receives IR_c = sum over its upstream components u of alpha_u IR_u (Storm delivers a stream to every
  subscribing component). Hence IR_c = l_c R with a *load factor* l_c fixed by the graph (l = 1 at a
  source); shuffle grouping splits IR_c evenly over c's N_c instances.
- CPU usage (eq. 5): an instance of c on machine w uses TCU = e_cw IR_c / N_c + MET_cw (percent CPU),
  with e (``exec_time``) and MET (``overhead``) profiled per component and machine *type*.
- Feasible: 1 <= N_c <= ``max_instances`` (default unbounded); on every machine w the summed TCU is at
  most ``capacity`` (MAC_w, default 100) and the number of tasks at most ``max_tasks`` (k_j, default
  unbounded).
- Objective: maximise R. For a placement x (x_cw instances of c on w) every machine sustains the rates
  R <= (cap_w - sum_c MET_cw x_cw) / (sum_c e_cw l_c x_cw / N_c), so R(x) is the smallest of these
  ratios (a machine without rate-dependent load sets no limit). ``metrics`` also gives the overall
  throughput sum_c IR_c (the paper's sum of task processing throughputs, eq. 2), each machine's
  utilisation (summed TCU at R) and task count, and the instance counts.

Bad input (raises :class:`~odrp.core.errors.InputError`): unknown or repeated ids, a cycle, a machine type
without a profile entry for some component, a component-machine pair whose instance count nothing
bounds (no ``max_instances``, no ``max_tasks`` and zero overhead: the exact model needs a finite
count), and an instance whose R is unbounded: some placement respects every overhead and task limit
while putting every instance where it has no rate-dependent load (e.g. all exec_time 0).

Solution JSON: ``{"instances": {component: {machine: count}}}``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import networkx as nx
from pydantic import Field, NonNegativeFloat

from odrp.core.graph import digraph, require_acyclic
from odrp.core.kind import Strict, counts_json, parse_counts, require, require_unique, validate

NAME = "throughput"
SENSE = "max"
DEFAULT_CAPACITY = 100.0
FEASIBILITY_TOL = 1e-9
"""Relative tolerance of the capacity check (a machine at exactly its capacity is feasible)."""

# --------------------------------------------------------------------------------- the schema


class ComponentSpec(Strict):
    id: str = Field(min_length=1)
    alpha: NonNegativeFloat = Field(1.0, description="output tuples per input tuple (the paper's alpha)")
    max_instances: int | None = Field(None, ge=1, description="upper bound on N_c (default unbounded)")
    parallelism: int = Field(1, ge=1, description="Storm's parallelism hint (tasks for storm_default)")


class MachineSpec(Strict):
    id: str = Field(min_length=1)
    type: str = Field(min_length=1, description="machine type, a key of each component's profile")
    capacity: NonNegativeFloat = Field(DEFAULT_CAPACITY, description="MAC_w in percent CPU")
    max_tasks: int | None = Field(None, ge=0, description="k_j: tasks the machine runs at most")


class ProfileEntry(Strict):
    exec_time: NonNegativeFloat = Field(description="e: percent CPU per tuple/s of one instance's input")
    overhead: NonNegativeFloat = Field(description="MET: fixed percent CPU of one instance")


class ThroughputSpec(Strict):
    problem: Literal["throughput"]
    name: str = "unnamed"
    components: list[ComponentSpec] = Field(min_length=1)
    edges: list[tuple[str, str]] = []
    machines: list[MachineSpec] = Field(min_length=1)
    profile: dict[str, dict[str, ProfileEntry]]


class SolutionSpec(Strict):
    instances: dict[str, dict[str, int]]


def schema() -> dict[str, Any]:
    """JSON Schema of a throughput instance (``odrp schema throughput``)."""
    return ThroughputSpec.model_json_schema()


# ---------------------------------------------------------------------- the compiled instance

Counts = list[dict[int, int]]
"""Internal form of a placement: for each component index, machine index -> instances there."""


@dataclass(frozen=True)
class ThroughputInstance:
    """A validated throughput instance, with load factors and per-machine profiles."""

    name: str
    components: tuple[str, ...]
    machines: tuple[str, ...]
    machine_type: tuple[str, ...]
    capacity: tuple[float, ...]
    max_tasks: tuple[int | None, ...]
    alpha: tuple[float, ...]
    max_instances: tuple[int | None, ...]
    parallelism: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    load: tuple[float, ...]
    """l_c: IR_c = l_c R."""
    exec_time: tuple[tuple[float, ...], ...]
    """e[c][w], expanded from the machine's type."""
    overhead: tuple[tuple[float, ...], ...]
    """MET[c][w], expanded from the machine's type."""
    spec: dict[str, Any]

    kind = NAME
    sense = SENSE

    @property
    def n_components(self) -> int:
        return len(self.components)

    @property
    def n_machines(self) -> int:
        return len(self.machines)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Sources by index, then components in the order their last incoming edge is passed (Kahn's FIFO)."""
        return tuple(nx.topological_sort(digraph(self.n_components, self.edges)))

    @cached_property
    def sources(self) -> tuple[int, ...]:
        targets = {b for _, b in self.edges}
        return tuple(c for c in range(self.n_components) if c not in targets)

    def coefficient(self, c: int, w: int) -> float:
        """e_cw l_c: percent CPU on w per unit of R when all of c's input runs there."""
        return self.exec_time[c][w] * self.load[c]

    def count_bound(self, c: int, w: int) -> int:
        """The most instances of c that machine w can hold on its own (overhead, task limit, max_instances)."""
        bound = math.inf
        if self.max_instances[c] is not None:
            bound = self.max_instances[c]
        if self.max_tasks[w] is not None:
            bound = min(bound, self.max_tasks[w])
        if self.overhead[c][w] > 0:
            bound = min(bound, math.floor(self.capacity[w] * (1 + FEASIBILITY_TOL) / self.overhead[c][w]))
        assert math.isfinite(bound), "load() rejects unbounded counts"
        return int(bound)

    def instance_bound(self, c: int) -> int:
        """An upper bound on N_c: max_instances, or what the machines can hold next to one of each other."""
        total = sum(self.count_bound(c, w) for w in range(self.n_machines))
        if self.max_instances[c] is not None:
            total = min(total, self.max_instances[c])
        return total

    @cached_property
    def machine_classes(self) -> tuple[tuple[int, ...], ...]:
        """Groups of interchangeable machines (same type, capacity and task limit), in machine order."""
        groups: dict[tuple[str, float, int | None], list[int]] = {}
        for w in range(self.n_machines):
            groups.setdefault((self.machine_type[w], self.capacity[w], self.max_tasks[w]), []).append(w)
        return tuple(tuple(g) for g in groups.values())


# ------------------------------------------------------------------------------------ loading


def load(data: Any, source: str = "<instance>") -> ThroughputInstance:
    """Validate an instance (parsed JSON) and compile it; bad input raises :class:`InputError`."""
    spec = validate(ThroughputSpec, data, source)
    return compile_spec(spec, source)


def compile_spec(spec: ThroughputSpec, source: str) -> ThroughputInstance:
    comps = [c.id for c in spec.components]
    machines = [m.id for m in spec.machines]
    require_unique(comps, source, "components")
    require_unique(machines, source, "machines")
    index = {c: i for i, c in enumerate(comps)}

    edges: list[tuple[int, int]] = []
    for e, (a, b) in enumerate(spec.edges):
        require(a in index, source, f"edges[{e}][0]", f"a known component, got {a!r}")
        require(b in index, source, f"edges[{e}][1]", f"a known component, got {b!r}")
        require(a != b, source, f"edges[{e}]", f"an edge between two components, got {a!r} -> itself")
        require((index[a], index[b]) not in edges, source, f"edges[{e}]", f"one edge {a!r} -> {b!r}, it repeats")
        edges.append((index[a], index[b]))
    graph = digraph(len(comps), edges)
    require_acyclic(graph, comps, source, "edges", "components")
    order = nx.topological_sort(graph)
    load_factor = [0.0] * len(comps)
    has_input = {b for _, b in edges}
    for c in order:
        if c not in has_input:
            load_factor[c] = 1.0
        for a, b in edges:
            if a == c:
                load_factor[b] += spec.components[c].alpha * load_factor[c]

    for c, comp in enumerate(spec.components):
        require(comp.id in spec.profile, source, "profile", f"an entry for component {comp.id!r}")
        cap = comp.max_instances
        require(
            cap is None or comp.parallelism <= cap,
            source,
            f"components[{c}].parallelism",
            f"at most max_instances = {cap}, got {comp.parallelism}",
        )
    for name in spec.profile:
        require(name in index, source, f"profile.{name}", "a known component")
    exec_time, overhead = [], []
    for comp in spec.components:
        e_row, o_row = [], []
        for w, machine in enumerate(spec.machines):
            entry = spec.profile[comp.id].get(machine.type)
            require(
                entry is not None,
                source,
                f"profile.{comp.id}",
                f"an entry for machine type {machine.type!r} (machines[{w}] is of that type)",
            )
            assert entry is not None
            e_row.append(entry.exec_time)
            o_row.append(entry.overhead)
            require(
                comp.max_instances is not None or machine.max_tasks is not None or entry.overhead > 0,
                source,
                f"profile.{comp.id}.{machine.type}.overhead",
                f"> 0, or max_instances for {comp.id!r} or max_tasks for {machine.id!r}: nothing else bounds "
                "the number of instances",
            )
        exec_time.append(tuple(e_row))
        overhead.append(tuple(o_row))

    instance = ThroughputInstance(
        name=spec.name,
        components=tuple(comps),
        machines=tuple(machines),
        machine_type=tuple(m.type for m in spec.machines),
        capacity=tuple(m.capacity for m in spec.machines),
        max_tasks=tuple(m.max_tasks for m in spec.machines),
        alpha=tuple(c.alpha for c in spec.components),
        max_instances=tuple(c.max_instances for c in spec.components),
        parallelism=tuple(c.parallelism for c in spec.components),
        edges=tuple(edges),
        load=tuple(load_factor),
        exec_time=tuple(exec_time),
        overhead=tuple(overhead),
        spec=spec.model_dump(exclude_none=True),
    )
    witness = rate_free_placement(instance)
    require(
        witness is None,
        source,
        "profile",
        "a bounded input rate R; it is unbounded: every component can run on a machine where its exec_time "
        f"times its input is 0 ({_describe(instance, witness)}) within every overhead and task limit",
    )
    return instance


def rate_free_placement(inst: ThroughputInstance) -> list[int] | None:
    """A placement with no rate-dependent load at all, if one exists (then R is unbounded).

    One instance per component suffices (more instances only add overhead and tasks), so this is a
    small assignment search: component c may go to machine w only when e_cw l_c = 0, within every
    machine's capacity (overheads) and task limit. Returns the machine of each component, or None.
    """
    options = [[w for w in range(inst.n_machines) if inst.coefficient(c, w) == 0] for c in range(inst.n_components)]
    if any(not opts for opts in options):
        return None
    order = sorted(range(inst.n_components), key=lambda c: len(options[c]))
    room = [cap * (1 + FEASIBILITY_TOL) for cap in inst.capacity]
    slots = [math.inf if t is None else t for t in inst.max_tasks]
    chosen = [-1] * inst.n_components

    def place(k: int) -> bool:
        if k == len(order):
            return True
        c = order[k]
        for w in options[c]:
            if slots[w] >= 1 and inst.overhead[c][w] <= room[w]:
                room[w] -= inst.overhead[c][w]
                slots[w] -= 1
                chosen[c] = w
                if place(k + 1):
                    return True
                room[w] += inst.overhead[c][w]
                slots[w] += 1
        return False

    return chosen if place(0) else None


def _describe(inst: ThroughputInstance, witness: list[int] | None) -> str:
    if witness is None:
        return ""
    return ", ".join(f"{inst.components[c]} on {inst.machines[w]}" for c, w in enumerate(witness))


def instance_count_vectors(inst: ThroughputInstance) -> Iterator[tuple[int, ...]]:
    """Every vector (N_c) with 1 <= N_c <= max_instances and sum_c N_c <= sum_j k_j.

    The paper's exhaustive search space (its eq. 1): x_1 + ... + x_n <= sum_j k_j with x_i >= 1, which
    has C(sum_j k_j, n) solutions without max_instances (27,405 for n = 4, m = 3, k_j = 10).
    """
    if any(t is None for t in inst.max_tasks):
        raise ValueError("the count vectors are finite only when every machine has max_tasks")
    slots = sum(t for t in inst.max_tasks if t is not None)
    tops = [slots if m is None else m for m in inst.max_instances]

    def extend(prefix: tuple[int, ...], left: int) -> Iterator[tuple[int, ...]]:
        c = len(prefix)
        if c == inst.n_components:
            yield prefix
            return
        still = inst.n_components - c - 1  # one slot for each later component
        for n in range(1, min(tops[c], left - still) + 1):
            yield from extend((*prefix, n), left - n)

    yield from extend((), slots)


# ---------------------------------------------------------------------------------- solutions


def parse_solution(inst: ThroughputInstance, data: Any, source: str = "<solution>") -> Counts:
    """Read ``{"instances": {component: {machine: count}}}``; unknown names and negative counts are bad input."""
    spec = validate(SolutionSpec, data, source)
    words = ("component", "machine", "instance count")
    return parse_counts(spec.instances, inst.components, inst.machines, source, "instances", words)


def solution_json(inst: ThroughputInstance, counts: Counts) -> dict[str, Any]:
    """The solution JSON of a placement (component and machine ids, counts)."""
    return {"instances": counts_json(counts, inst.components, inst.machines)}
