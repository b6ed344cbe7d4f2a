"""Improvement search on an incumbent placement: packing at perturbed instance counts.

At a rate rho with instance counts N_c a placement that sustains rho is a bin packing with
machine-dependent item sizes s_cw = e_cw l_c rho / N_c + MET_cw (eq. 5; :mod:`.packing`). The packing
start fixes its counts by raising, from the least ones, the count of the component that did not fit;
the counts it ends with are one choice among many, and at 20 x 30 (about 55-80 instances on 30
machines) the rate depends on them: each instance pays its overhead MET_cw, each missing instance
makes the others of its component larger. Above ``CONFIG_UP_TO`` components x machines no P(rho)
round decides within a minute; this search uses that time on the primal side:

1. counts: the best placement's N_c, with 1 to ``MAX_CHANGES`` counts drawn at random moved by +-1
   (within 1..max_instances);
2. rate: rho drawn uniformly in (R_best, R_best (1 + ``STEP``)];
3. :func:`.packing.pack` at rho and these counts, components in decreasing order of their relative
   size (``smallest`` or ``mean`` at random) times a random factor in [1, 1 + ``NOISE``], best fit,
   raising the count of a component that does not fit (at most ``RAISES`` times);
4. a placement that fits sustains rho > R_best: its exact rate (the evaluator's formula, :func:`rate`)
   makes it the new best.

It returns the best placement it visited, never one below its start, and proves nothing (the bound
side stays with the configuration LP). Deterministic for a given ``seed`` and number of tries (under a
deadline the number of tries depends on the machine's speed).
"""

from __future__ import annotations

import random
import time

from odrp.models.throughput.packing import ORDERS, pack
from odrp.problems.throughput import Counts, ThroughputInstance, rate

MAX_CHANGES = 3
"""At most this many counts N_c are moved by one per try."""
STEP = 0.003
"""The target rate of a try is drawn in (R_best, R_best (1 + STEP)]."""
NOISE = 0.2
"""Relative random perturbation of the packing order's sizes."""
RAISES = 20
"""At most this many count raises per try (then the try fails)."""


def search(
    inst: ThroughputInstance,
    counts: Counts,
    deadline: float | None,
    seed: int = 0,
    max_tries: int | None = None,
) -> tuple[Counts, dict[str, int]]:
    """The best placement found from ``counts`` (a feasible placement) until ``deadline`` (wall clock) or
    ``max_tries`` tries (one of them must be given), and the numbers of tries and improvements."""
    if deadline is None and max_tries is None:
        raise ValueError("improve.search needs a deadline or a number of tries")
    rng = random.Random(seed)
    best, best_rate = counts, rate(inst, counts)
    tries = improvements = 0
    while (deadline is None or time.perf_counter() < deadline) and (max_tries is None or tries < max_tries):
        tries += 1
        levels = _perturbed(inst, [sum(row.values()) for row in best], rng)
        rho = best_rate * (1 + STEP * (1 - rng.random()))
        order = rng.choice(ORDERS)
        for _ in range(RAISES):
            failed, placement = pack(inst, rho, levels, order, rng, NOISE)
            if failed is None:
                found = rate(inst, placement)  # the evaluator's formula decides
                if found > best_rate:
                    best, best_rate, improvements = placement, found, improvements + 1
                break
            top = inst.max_instances[failed]
            if top is not None and levels[failed] >= top:
                break
            levels[failed] += 1
    return best, {"tries": tries, "improvements": improvements}


def _perturbed(inst: ThroughputInstance, levels: list[int], rng: random.Random) -> list[int]:
    """``levels`` with 1 to ``MAX_CHANGES`` random counts moved by +-1 (kept within 1..max_instances)."""
    for _ in range(rng.randint(1, MAX_CHANGES)):
        c = rng.randrange(len(levels))
        top = inst.max_instances[c]
        moved = max(1, levels[c] + rng.choice((-1, 1)))
        levels[c] = moved if top is None else min(moved, top)
    return levels
