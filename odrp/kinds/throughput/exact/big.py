"""The big components of the level search: which they are, and P(rho) on a tier of them alone.

A component's *share* at rate rho is what its whole input on one instance would take of a machine,
(e_cw l_c rho + MET_cw) / cap_w (eq. 5 with N_c = 1), on the machine where that is least. It must be
replicated when its share is above 1, and it is *big* when its share is above ``big_share`` (a third by
default: no machine holds three such instances; these are the big items of bin packing).

The configuration LP (:mod:`.config_bound`) mixes the configurations of big items fractionally, so it
cannot see that, say, six instances of one big component and three of another fit no cluster above
some rate, whatever the other components do. P(rho) on a tier of big components alone, the other
components left out with their least CPU and task slots reserved on the cluster as a whole
(:func:`.rate_model.rate_model` with ``kept``), is a small integer program that knows it, and a
relaxation of every placement whose counts fix the tier's: infeasible, it refutes the node of the level
search. The level search also splits the biggest big component first (:func:`big_tiers` orders them).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from odrp.kinds.throughput.exact.rate_model import BoxSolver, Ranges, cluster_room, cluster_use
from odrp.kinds.throughput.exact.settings import LevelSearchSettings
from odrp.kinds.throughput.instance import ThroughputInstance


def big_tiers(inst: ThroughputInstance, rho: float, big_share: float) -> list[list[int]]:
    """The big components at rho (share above ``big_share``), biggest first, in tiers: those that must be
    replicated, then (if there are others) every big component."""
    share = {}
    for c in range(inst.n_components):
        machines = [w for w in range(inst.n_machines) if inst.count_bound(c, w) > 0]
        share[c] = min((inst.coefficient(c, w) * rho + inst.overhead[c][w]) / inst.capacity[w] for w in machines)
    big = sorted((c for c in share if share[c] > big_share), key=lambda c: (-share[c], c))
    tiers = [tier for tier in ([c for c in big if share[c] > 1.0], big) if tier]
    if len(tiers) == 2 and tiers[0] == tiers[1]:
        tiers.pop()
    return tiers


@dataclass
class BigChecks:
    """P(rho) on a tier of big components (:func:`big_tiers`) at the nodes that fix the count of each of them and
    of no other big component, remembered by (rho, those components and counts) for one instance, and the tiers
    of the last (instance, rate). One object per solve, or per worker process and instance.

    The relaxation's rows are the same at every node with the same fixed big counts but its two cluster rows,
    whose room (:func:`.rate_model.cluster_room`) depends on the least counts of the components left out: a
    placement of the kept components found at one node answers every later node with the same key where it
    still fits the room, a refutation every later node with no more room; otherwise CP-SAT is asked again."""

    settings: LevelSearchSettings = field(default_factory=LevelSearchSettings)
    """``big_share``, ``big_seconds`` (CP-SAT's time per check) and ``big_kept`` (answers kept at most)."""
    found: dict[tuple, tuple[float, int]] = field(default_factory=dict)
    """key -> CPU and task slots a placement found there takes on the cluster."""
    refuted: dict[tuple, tuple[float, float]] = field(default_factory=dict)
    """key -> the room (CPU, slots; inf: no limit) at which P(rho) there was infeasible."""
    solved: int = 0
    """CP-SAT runs (the rest were answered from memory)."""
    inst: ThroughputInstance | None = None
    """The instance the answers are about (another one clears them)."""
    _tiers: tuple[ThroughputInstance | None, float, list[list[int]]] = field(
        default=(None, math.nan, []), init=False, repr=False
    )

    def tiers(self, inst: ThroughputInstance, rho: float) -> list[list[int]]:
        """:func:`big_tiers` at ``settings.big_share``, remembered for the last instance and rate."""
        if self._tiers[0] is not inst or self._tiers[1] != rho:
            self._tiers = (inst, rho, big_tiers(inst, rho, self.settings.big_share))
        return self._tiers[2]

    def refutes(
        self, inst: ThroughputInstance, rho: float, levels: Ranges, solve_box: BoxSolver, deadline: float | None
    ) -> bool:
        """Whether P(rho) on the big components that ``levels`` fixes (the others left out) is infeasible; False
        when they are not a tier."""
        tiers = self.tiers(inst, rho)
        kept = [c for c in (tiers[-1] if tiers else []) if levels[c][0] == levels[c][1]]  # biggest first
        if kept not in tiers or len(kept) == inst.n_components:
            return False
        if inst is not self.inst:
            self.found.clear()
            self.refuted.clear()
            self.inst = inst
        key = (rho, tuple((c, levels[c][0]) for c in sorted(kept)))
        cpu, slots = cluster_room(inst, rho, [lo for lo, _ in levels], kept)
        room = (cpu, math.inf if slots is None else slots)
        if key in self.found and self.found[key][0] <= room[0] and self.found[key][1] <= room[1]:
            return False
        if key in self.refuted and room[0] <= self.refuted[key][0] and room[1] <= self.refuted[key][1]:
            return True
        if len(self.found) + len(self.refuted) > self.settings.big_kept:
            self.found.clear()
            self.refuted.clear()
        soon = time.perf_counter() + self.settings.big_seconds
        status, placed = solve_box(rho, levels, soon if deadline is None else min(deadline, soon), kept)
        self.solved += 1
        if placed is not None:
            self.found[key] = cluster_use(inst, rho, placed)
        elif status == "infeasible":
            self.refuted[key] = room
        return status == "infeasible"
