"""A constructive start for large instances: decreasing-size packing inside a bisection on the rate.

At a rate rho with instance counts N_c, an instance of component c on machine w costs
s_cw = e_cw l_c rho / N_c + MET_cw percent CPU (eq. 5), so a placement sustains rho exactly when the
instances of every machine fit its capacity and task limit: a bin packing whose item sizes depend on
the machine. With few machines the rounded fluid LP and block ascent (:mod:`.polish`) start the
search well; with 30 machines they keep far more instances than needed (152 on 20 x 30 seed 0,
each paying its overhead MET), and packing whole instances is what decides the rate.

- :func:`pack`: the components in decreasing order of their instances' relative size s_cw / cap_w
  (the smallest over the machines, or the mean: :attr:`.settings.PackingSettings.orders`), each instance
  to the machine where it fits with the least relative capacity left afterwards (best fit; ties to the
  lower machine). Neither order wins everywhere at 20 x 30, so both are tried.
- :func:`counts_at`: starting from each component's least count (:func:`.bounds.count_range`), raise
  the count of the component whose instance did not fit (its instances get smaller) and pack again,
  until everything fits or that count passes its upper bound (then: no placement found at rho).
- :func:`search`: bisection on rho between a rate reached and an upper bound; every placement found
  is scored by its exact rate R(x) >= rho, which becomes the lower end. The packing is a heuristic
  (a failure proves nothing), so the bisection only ever yields placements, never a bound.
"""

from __future__ import annotations

import math
import statistics
import time

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact.bounds import count_range
from odrp.kinds.throughput.exact.settings import PackingSettings
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance


def pack(
    inst: ThroughputInstance,
    rho: float,
    levels: list[int],
    order: str = "smallest",
) -> tuple[int | None, Counts]:
    """Pack ``levels[c]`` instances of every component at rate rho, components in ``order``: (None,
    placement) when all fit, else (the component whose instance did not fit, the partial placement)."""
    m = inst.n_machines
    machines = range(m)
    cap = [inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL for w in machines]
    left = cap[:]
    slots = [math.inf if t is None else t for t in inst.max_tasks]
    sizes = [[inst.coefficient(c, w) * rho / n + inst.overhead[c][w] for w in machines] for c, n in enumerate(levels)]
    relative = [[sizes[c][w] / cap[w] for w in machines] for c in range(len(levels))]
    size_of = min if order == "smallest" else statistics.fmean
    x: list[list[int]] = [[0] * m for _ in levels]
    for c in sorted(range(len(levels)), key=lambda c: (-size_of(relative[c]), c)):
        size, bound = sizes[c], [inst.count_bound(c, w) for w in machines]
        for _ in range(levels[c]):
            chosen, key = None, None
            for w in machines:
                if size[w] > left[w] or slots[w] < 1 or x[c][w] >= bound[w]:
                    continue
                after = (left[w] - size[w]) / cap[w]
                if key is None or after < key:
                    chosen, key = w, after
            if chosen is None:
                return c, _counts(x)
            left[chosen] -= size[chosen]
            slots[chosen] -= 1
            x[c][chosen] += 1
    return None, _counts(x)


def counts_at(
    inst: ThroughputInstance,
    rho: float,
    order: str = "smallest",
    max_raises: int = PackingSettings().max_raises,
    deadline: float | None = None,
) -> Counts | None:
    """A placement that sustains rho, found by packing and raising counts at most ``max_raises`` times (None: none
    found, or ``deadline`` passed)."""
    ranges = [count_range(inst, c, rho) for c in range(inst.n_components)]
    if any(lo > hi for lo, hi in ranges):
        return None
    levels = [lo for lo, _ in ranges]
    for _ in range(max_raises):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        failed, placement = pack(inst, rho, levels, order)
        if failed is None:
            return placement
        levels[failed] += 1
        if levels[failed] > ranges[failed][1]:
            return None
    return None


def search(
    inst: ThroughputInstance,
    low: float,
    high: float,
    settings: PackingSettings = PackingSettings(),
    deadline: float | None = None,
) -> Counts | None:
    """The best placement found by bisection on rho in (low, high] (``settings.steps`` steps) with every order of
    ``settings.orders`` (each bisection from ``low``: packing is not monotone in rho, a rate one order reaches
    another may skip), until ``deadline`` (then the best found so far)."""
    best: Counts | None = None
    best_rate = low
    for order in settings.orders:
        lo, hi = low, high
        for _ in range(settings.steps):
            if hi - lo <= 1e-6 * hi:
                break
            if deadline is not None and time.perf_counter() > deadline:
                return best
            mid = (lo + hi) / 2
            placement = counts_at(inst, mid, order, settings.max_raises, deadline)
            if placement is None:
                hi = mid
                continue
            found = rate(inst, placement)
            lo = max(mid, found)
            if found > best_rate:
                best, best_rate = placement, found
    return best


def _counts(x: list[list[int]]) -> Counts:
    return [{w: k for w, k in enumerate(row) if k} for row in x]
