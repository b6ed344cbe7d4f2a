"""The paper's heterogeneity-aware scheduler, ``hetero_greedy`` (Nasiri et al. 2023).

``hetero_greedy``: FirstAssignment (the paper's Algorithm 1) followed by MaximizeThroughput
(Algorithm 2) of Nasiri et al. (J. Big Data 2023). The pseudo-code figures are not in the paper's
text; line numbers below are the ones its prose cites ("line 1", "lines 3 and 12", "lines 6-8").

FirstAssignment: at the initial input rate R_0, compute every component's input rate (eq. 6) and give
each component, in the topology's order, one instance on the machine where its TCU (eq. 5) is least,
among the machines where it fits (MAC_w >= TCU and a free task slot).

MaximizeThroughput, with Scale = 1 and Current_IR = R_0:

- line 1: update every machine's MAC_w = capacity - sum of its tasks' TCU at Current_IR;
- lines 2-3: if no machine is over-utilised (every MAC_w >= 0), keep the state as Final_ETG (with
  its rate) and raise Current_IR by Current_IR / Scale; back to line 1;
- lines 6-8: otherwise take the first over-utilised machine (machine order), its hottest task (highest
  TCU; ties by component order) and add one instance of that task's component on the most suitable
  machine, back to line 1;
- lines 10-12: if no machine can take it, stop when Current_IR <= Scale * threshold (the paper's
  "Current_IR <= Scale", i.e. a rate step of at most ``threshold`` = 1 tuple/s); else double Scale
  (halve the step), restore Final_ETG and its rate, and go back to line 1.

Readings where the paper is vague (ours):

- R_0 = 1 tuple/s (setting ``r0``); the paper gives no value.
- "most suitable machine" for a new instance = the machine where the new instance's TCU (at
  Current_IR, with the component's input split over one more instance) is least, among machines with
  a free task slot and MAC_w >= that TCU; ties by machine order. The over-utilised machine itself
  never qualifies (its MAC is negative). A component at ``max_instances`` gets no new instance.
- The result is Final_ETG; its objective is the largest input rate Final_ETG tolerates under eq. (5)
  (the paper: the procedure determines "the maximum value of topology input rate which cluster can
  tolerate"), computed from the final MACs, not the last stable Current_IR (a step below it).
- If no state is ever stable (over-utilised already at R_0 with no room for a new instance), the
  current ETG is returned and scored the same way.

``mkp_view``, the paper's knapsack view, runs the exact model and lives on the exact side
(:mod:`odrp.kinds.throughput.exact.mkp_view`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.kinds.throughput.instance import ThroughputInstance, solution_json


@dataclass(frozen=True)
class HeteroGreedySettings:
    """Settings of ``hetero_greedy`` (``--param NAME=VALUE``)."""

    r0: float = field(default=1.0, metadata={"gt": 0})
    """The initial input rate R_0 in tuples/s (the paper gives no value)."""
    threshold: float = field(default=1.0, metadata={"gt": 0})
    """MaximizeThroughput ends when no machine takes a new instance and the rate step is at most this many
    tuples/s (the paper's "Current_IR <= Scale" with a step of 1 tuple/s)."""
    max_iterations: int = field(default=1_000_000, metadata={"ge": 1})
    """A guard on MaximizeThroughput's iterations (each adds an instance or changes the rate)."""


class Etg:
    """An execution topology graph mapped to machines: instance counts x[c][w], and eq. (5)."""

    def __init__(self, inst: ThroughputInstance) -> None:
        self.inst = inst
        self.x = [[0] * inst.n_machines for _ in range(inst.n_components)]

    def copy(self) -> Etg:
        other = Etg(self.inst)
        other.x = [row[:] for row in self.x]
        return other

    def instances(self, c: int) -> int:
        return sum(self.x[c])

    def tasks(self, w: int) -> int:
        return sum(self.x[c][w] for c in range(self.inst.n_components))

    def tcu(self, c: int, w: int, rate: float, instances: int | None = None) -> float:
        """Eq. (5): TCU of one instance of c on w at topology rate ``rate`` (IR_c split over the instances)."""
        n = instances if instances is not None else self.instances(c)
        ir = self.inst.load[c] * rate / n
        return self.inst.exec_time[c][w] * ir + self.inst.overhead[c][w]

    def mac(self, w: int, rate: float) -> float:
        """MAC_w: what machine w has left at ``rate``."""
        used = sum(self.x[c][w] * self.tcu(c, w, rate) for c in range(self.inst.n_components) if self.x[c][w])
        return self.inst.capacity[w] - used

    def has_slot(self, w: int) -> bool:
        limit = self.inst.max_tasks[w]
        return limit is None or self.tasks(w) < limit

    def max_rate(self) -> float:
        """The largest topology rate at which every MAC stays >= 0 (TCU is affine in the rate)."""
        best = math.inf
        for w in range(self.inst.n_machines):
            fixed = self.inst.capacity[w] - self.mac(w, 0.0)
            slope = (self.inst.capacity[w] - self.mac(w, 1.0)) - fixed
            if slope > 0:
                best = min(best, max(0.0, self.inst.capacity[w] - fixed) / slope)
        return best

    def counts(self) -> list[dict[int, int]]:
        return [{w: k for w, k in enumerate(row) if k} for row in self.x]


def first_assignment(inst: ThroughputInstance, r0: float) -> Etg | None:
    """Algorithm 1: one instance of every component on its least-TCU machine at R_0 (None if one fits nowhere)."""
    etg = Etg(inst)
    for c in inst.topological_order:
        options = []
        for w in range(inst.n_machines):
            tcu = etg.tcu(c, w, r0, instances=1)
            if etg.has_slot(w) and etg.mac(w, r0) >= tcu:
                options.append((tcu, w))
        if not options:
            return None
        etg.x[c][min(options)[1]] += 1
    return etg


def most_suitable_machine(etg: Etg, c: int, rate: float) -> int | None:
    """Where a new instance of c goes (lines 6-8): least TCU among machines with room for it."""
    top = etg.inst.max_instances[c]
    n_new = etg.instances(c) + 1
    if top is not None and n_new > top:
        return None
    options = []
    for w in range(etg.inst.n_machines):
        tcu = etg.tcu(c, w, rate, instances=n_new)
        if etg.has_slot(w) and etg.mac(w, rate) >= tcu:
            options.append((tcu, w))
    return min(options)[1] if options else None


def hottest_component(etg: Etg, w: int, rate: float) -> int:
    """The component of the task with the highest TCU on machine w."""
    placed = [c for c in range(etg.inst.n_components) if etg.x[c][w]]
    return max(placed, key=lambda c: (etg.tcu(c, w, rate), -c))


def maximize_throughput(
    etg: Etg, r0: float, threshold: float, max_iterations: int = HeteroGreedySettings().max_iterations
) -> tuple[Etg, float | None, int]:
    """Algorithm 2: (Final_ETG, its last stable rate, iterations); the current ETG if none was stable."""
    scale = 1.0
    current_ir = r0
    final: tuple[Etg, float] | None = None
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        over = [w for w in range(etg.inst.n_machines) if etg.mac(w, current_ir) < 0]  # line 1
        if not over:  # lines 2-3
            final = (etg.copy(), current_ir)
            current_ir += current_ir / scale
            continue
        c = hottest_component(etg, over[0], current_ir)  # lines 6-8
        target = most_suitable_machine(etg, c, current_ir)
        if target is not None:
            etg.x[c][target] += 1
            continue
        if final is None or current_ir <= scale * threshold:  # termination (lines 10-12)
            break
        scale *= 2
        etg, current_ir = final[0].copy(), final[1]
        current_ir += current_ir / scale
    if final is None:
        return etg, None, iterations
    return final[0], final[1], iterations


def hetero_greedy(
    instance: ThroughputInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: HeteroGreedySettings = HeteroGreedySettings(),
) -> HeuristicOutcome:
    """FirstAssignment + MaximizeThroughput; deterministic (``seed`` is unused)."""
    r0, threshold = float(settings.r0), float(settings.threshold)
    etg = first_assignment(instance, r0)
    if etg is None:
        return HeuristicOutcome(None, None, {}, f"FirstAssignment: a component fits on no machine at R_0 = {r0}")
    final, stable_rate, iterations = maximize_throughput(etg, r0, threshold, settings.max_iterations)
    return HeuristicOutcome(
        solution=solution_json(instance, final.counts()),
        objective=final.max_rate(),
        stats={"last_stable_rate": stable_rate, "iterations": iterations, "r0": r0, "threshold": threshold},
        message="" if stable_rate is not None else "no stable state: over-utilised from R_0 on",
    )


KINDS = ("throughput",)
HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="hetero_greedy",
        kinds=KINDS,
        run=hetero_greedy,
        description="Nasiri et al.'s FirstAssignment + MaximizeThroughput: raise the rate, replicate the hottest task",
        settings=HeteroGreedySettings,
    ),
)
