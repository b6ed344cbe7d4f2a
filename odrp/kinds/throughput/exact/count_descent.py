"""Improvement search on the incumbent: descent on the instance counts, scored by the configuration LP.

At a target rate rho = R_best (1 + step) and instance counts N_c the configuration LP of :mod:`.dive`
(counts fixed, weights rounded up) says how many machines a placement lacks in its relaxation. That
number is 0 wherever a placement with these counts sustains rho (up to the grid), and it falls
smoothly as the counts move towards one (at 20 x 30 seed 1, rho = 146: 0.083 -> 0 with one more
instance of one component, where best-fit packing (:mod:`.improve`) finds nothing). So:

1. start from the best placement's counts;
2. descent: moves N_c +- 1, and N_c -> N_c - floor(N_c / 2) where N_c >= 4, in random order (within
   1..max_instances), the first that lowers the LP's value is taken, until the value is 0 or no move
   lowers it; then the pairs of the ``PAIRS`` best single moves (lowest values, different components)
   are tried, the first that lowers the value is taken and the descent goes on;
3. value 0: :func:`.dive.dive` at rho and these counts; a placement it returns that the evaluator finds
   feasible with a rate above R_best (it sustains rho up to the dive's grid) is the new best, and the
   next target is above it;
4. otherwise (stuck or the dive failed) the step is halved; below ``MIN_STEP`` the search ends.

It returns the best placement it visited, never one below its start, and proves nothing (a value above
0 holds only for the counts tried). The configurations of every LP are pooled and start the next
ones. Deterministic for a given ``seed`` without a deadline.

The halving moves reach counts far from the start in one step (the packing start gives a light
component of seed 1 17-20 instances, each paying its overhead): the descent alone from the packing start,
its step spent (no deadline: the numbers do not depend on the machine), over the random orders of
``seed`` 0, 1, 2: 20 x 30 seed 0 404.093 / 405.321 / 406.606 (mean 405.34), seed 1 147.955 / 146.898 /
146.473 (mean 147.11) with them, against 405.039 / 404.815 / 407.926 (405.93) and 146.661 / 146.473 /
145.327 (146.15) with +- 1 alone, and 408.380 / 404.815 / 407.926 (407.04) and 146.381 / 146.473 /
145.327 (146.06) with the halving moves tried only after every +- 1; seed 2 150.045 in every case. The
spread over the orders (up to 0.8%) is as large as the differences: the mixed moves are kept for seed 1,
the largest gap.

Tried and not kept (20 x 30, 60 s from the packing start, load 4-9): restarting a stuck descent twice
from its counts with 3 of them moved at random before halving the step (406.539 / 146.343 / 150.045 on
seeds 0-2 against 406.632 / 146.358 / 150.045 without); with a deadline, starting again from ``STEP``
once the step is spent (406.392 / 146.661 / 150.045 against 405.039 / 146.661 / - : the pool of
configurations grows and later LPs are slower, seed 1 did 91 LPs in the last 40 s). On seed 2 no move
N_c +- 1 lowers the LP's value above 150.045 (the incumbent's counts lack 0.03 machines at
+0.01%).

**Stop 16: pairs of moves, and several starts** (:func:`multistart`). Measured without a deadline from the
packing start (``python -m benchmarks.throughput_20x30 --descent``; the numbers do not depend on the
machine): over the move orders 0-5 the descent of stop 15 reached 406.256 / 408.945 / 407.803 / 404.470 /
406.644 / 403.239 on seed 0 (mean 406.23, 1.4% apart) and 147.955 / 146.898 / 146.473 / 146.473 / 145.855 /
146.473 on seed 1, each in 4-20 CPU s; every dive it started placed its counts (seed 1: 7 dives, 7 new
incumbents), so where a descent stops is where no move lowers the LP's value. With the pairs (orders 0-2):
seed 0 406.116 / 408.945 / 408.360 (mean 407.81 against 407.67), seed 1 147.955 / 147.764 / 146.473
(147.40 against 147.11), seed 2 150.045. Since the order moves the result more than any change of the
moves, the time left goes to searches in new orders, each from the same start (a new pool each): restarted
from the best placement instead, seed 1 found nothing above 147.955 in 5 restarts (69 CPU s), seed 0
nothing above 406.116 in 2. Tried and not kept: the counts the configuration bound's last LP weighs most
(largest lambda_cn) as the start (seed 0 408.560 / 407.635 / 408.560, seed 1 146.358 / 146.473 /
147.110 over orders 0-2); diving at the highest rate the LP finds no machine missing for the descent's
counts (seed 0 order 1: 406.807 against 408.945); swapping two instances between machines after the
descent (steepest exchange ascent: no improving swap on seeds 0-1's placements nor on seed 2's start).
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable

from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact.dive import Pool, dive, missing
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

STEP = 0.005
"""The first target is R_best (1 + STEP); after a success the same step, after a failure half of it."""
MIN_STEP = 0.0005
"""The search ends when the step falls below this."""
ZERO = 1e-7
"""An LP value at or below this counts as no machine missing."""
PAIRS = 6
"""When no single move lowers the LP's value, the pairs of moves among the ``PAIRS`` best (0: none)."""


def search(
    inst: ThroughputInstance,
    counts: Counts,
    deadline: float | None,
    seed: int = 0,
    found: Callable[[Counts], None] | None = None,
) -> tuple[Counts, dict[str, float]]:
    """The best placement found from ``counts`` (a feasible placement) until ``deadline`` (wall clock) or
    until the step falls below ``MIN_STEP``; with the numbers of LPs, dives and improvements. ``found`` is
    called with every placement better than the best so far (e.g. to pass it to the ladder, :mod:`.ladder`)."""
    rng = random.Random(seed)
    pool = Pool(len(inst.machine_classes))
    best, best_rate = counts, rate(inst, counts)
    stats: dict[str, float] = {"lps": 0, "dives": 0, "improvements": 0}
    step = STEP

    def live() -> bool:
        return deadline is None or time.perf_counter() < deadline

    while step >= MIN_STEP and live():
        rho = best_rate * (1 + step)
        levels = [sum(row.values()) for row in best]
        value = missing(inst, rho, levels, pool, deadline)
        stats["lps"] += 1
        levels, value = _descend(inst, rho, levels, value, pool, deadline, rng, stats)
        placement = None
        if value is not None and value <= ZERO and live():
            stats["dives"] += 1
            placement = dive(inst, rho, levels, deadline, pool)
        if placement is not None and _better(inst, placement, best_rate):
            best, best_rate = placement, rate(inst, placement)
            stats["improvements"] += 1
            if found is not None:
                found(best)
        else:
            step /= 2
    return best, stats


def multistart(
    inst: ThroughputInstance,
    counts: Counts,
    deadline: float | None,
    seed: int = 0,
    starts: int | None = None,
    found: Callable[[Counts], None] | None = None,
    patience: float | None = None,
) -> tuple[Counts, dict[str, float]]:
    """:func:`search` from ``counts`` in the move orders ``seed``, ``seed`` + 1, ... (each with a new pool of
    configurations), until ``deadline`` or after ``starts`` searches (one of them must be given); the best
    placement found and the summed numbers (``searches``: how many ran; ``at``: seconds to the best).
    ``found``: called with every placement better than every one before it (across the searches);
    ``patience``: no search starts this many seconds after the last better placement (or the start)."""
    if deadline is None and starts is None:
        raise ValueError("count_descent.multistart needs a deadline or a number of starts")
    begin = last = time.perf_counter()
    best, best_rate = counts, rate(inst, counts)
    total: dict[str, float] = {"searches": 0, "at": 0.0}

    def better(placement: Counts) -> None:
        nonlocal best, best_rate, last
        if rate(inst, placement) > best_rate:
            best, best_rate, last = placement, rate(inst, placement), time.perf_counter()
            total["at"] = last - begin
            if found is not None:
                found(placement)

    def go_on() -> bool:
        now = time.perf_counter()
        return (
            (deadline is None or now < deadline)
            and (starts is None or total["searches"] < starts)
            and (patience is None or now < last + patience)
        )

    while go_on():
        _, stats = search(inst, counts, deadline, seed=seed + int(total["searches"]), found=better)
        total["searches"] += 1
        for key, value in stats.items():
            total[key] = total.get(key, 0) + value
    return best, total


def _descend(
    inst: ThroughputInstance,
    rho: float,
    levels: list[int],
    value: float | None,
    pool: Pool,
    deadline: float | None,
    rng: random.Random,
    stats: dict[str, float],
) -> tuple[list[int], float | None]:
    """First-improvement descent on the LP's value at rho from ``levels``: single moves in random order; when
    none lowers the value, the pairs of the ``PAIRS`` best single moves (on different components)."""

    def live() -> bool:
        return deadline is None or time.perf_counter() < deadline

    def value_at(trial: list[int]) -> float | None:
        stats["lps"] += 1
        return missing(inst, rho, trial, pool, deadline)

    while (value is None or value > ZERO) and live():
        moves = [(c, d) for c in range(inst.n_components) for d in (-1, 1)]
        moves += [(c, -(levels[c] // 2)) for c in range(inst.n_components) if levels[c] >= 4]
        rng.shuffle(moves)
        scanned: list[tuple[float, int, int]] = []
        improved = None
        for c, d in moves:
            top = inst.max_instances[c]
            if levels[c] + d < 1 or (top is not None and levels[c] + d > top) or not live():
                continue
            trial = levels[:]
            trial[c] += d
            found = value_at(trial)
            if found is None:
                continue
            if value is None or found < value - 1e-9:
                improved = trial, found
                break
            scanned.append((found, c, d))
        if improved is None and PAIRS and value is not None:
            chosen: list[tuple[int, int]] = []
            for _, c, d in sorted(scanned):
                if len(chosen) < PAIRS and all(c != other for other, _ in chosen):
                    chosen.append((c, d))
            for (c1, d1), (c2, d2) in itertools.combinations(chosen, 2):
                if not live():
                    break
                trial = levels[:]
                trial[c1] += d1
                trial[c2] += d2
                found = value_at(trial)
                if found is not None and found < value - 1e-9:
                    improved = trial, found
                    stats["pairs"] = stats.get("pairs", 0) + 1
                    break
        if improved is None:
            break
        levels, value = improved
    return levels, value


def _better(inst: ThroughputInstance, placement: Counts, best_rate: float) -> bool:
    """Whether the evaluator finds ``placement`` feasible with a rate above ``best_rate`` (a dive's grid may
    overfill a machine by a little, so its placement is checked from scratch)."""
    evaluation = evaluate_counts(inst, placement)
    return evaluation.feasible and evaluation.objective is not None and evaluation.objective > best_rate
