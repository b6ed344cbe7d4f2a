"""Improvement search on the incumbent: descent on the instance counts, scored by the configuration LP.

At a target rate rho = R_best (1 + step) and instance counts N_c the configuration LP of :mod:`.dive`
(counts fixed) says how many machines a placement lacks in its relaxation. That number is 0 wherever a
placement with these counts sustains rho (up to the grid), and it falls smoothly as the counts move
towards one (at 20 x 30 seed 1, rho = 146: 0.083 -> 0 with one more instance of one component, where
best-fit packing finds nothing). So :func:`search`:

1. starts from the best placement's counts;
2. descends: moves N_c +- 1, and N_c -> N_c - floor(N_c / 2) where N_c >= 4, in random order (within
   1..max_instances); the first that lowers the LP's value is taken, until the value is 0 or no move
   lowers it; then the pairs of the ``settings.pairs`` best single moves (lowest values, different
   components) are tried, the first that lowers the value is taken and the descent goes on;
3. at value 0 dives (:func:`.dive.dive`) at rho and these counts; a placement it returns that the
   evaluator finds feasible with a rate above R_best (it sustains rho up to the dive's grid) is the new
   best, and the next target is above it;
4. otherwise (stuck, or the dive failed) halves the step; below ``settings.min_step`` the search ends.

It returns the best placement it visited, never one below its start, and proves nothing (a value above
0 holds only for the counts tried). The configurations of every LP are pooled and start the next ones.
Deterministic for a given ``seed`` without a deadline.

The halving moves reach counts far from the start in one step (a start may give a light component many
instances, each paying its overhead). Where a descent ends depends on its random move order as much as
on any change of the moves (up to 1.4% at 20 x 30), so :func:`multistart` spends the time left on
descents in one move order after another, each from the same start with a new pool.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable

from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact.dive import Pool, dive, missing
from odrp.kinds.throughput.exact.settings import DescentSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

ZERO = 1e-7
"""An LP value at or below this counts as no machine missing."""


def search(
    inst: ThroughputInstance,
    counts: Counts,
    deadline: float | None,
    seed: int = 0,
    found: Callable[[Counts], None] | None = None,
    settings: DescentSettings = DescentSettings(),
) -> tuple[Counts, dict[str, float]]:
    """The best placement found from ``counts`` (a feasible placement) until ``deadline`` (wall clock) or
    until the step falls below ``settings.min_step``; with the numbers of LPs, dives and improvements.
    ``found`` is called with every placement better than the best so far (e.g. to pass it to the ladder,
    :mod:`.ladder`)."""
    rng = random.Random(seed)
    pool = Pool(len(inst.machine_classes))
    best, best_rate = counts, rate(inst, counts)
    stats: dict[str, float] = {"lps": 0, "dives": 0, "improvements": 0}
    step = settings.step

    def live() -> bool:
        return deadline is None or time.perf_counter() < deadline

    while step >= settings.min_step and live():
        rho = best_rate * (1 + step)
        levels = [sum(row.values()) for row in best]
        value = missing(inst, rho, levels, pool, deadline, settings.dive)
        stats["lps"] += 1
        levels, value = _descend(inst, rho, levels, value, pool, deadline, rng, stats, settings)
        placement = None
        if value is not None and value <= ZERO and live():
            stats["dives"] += 1
            placement = dive(inst, rho, levels, deadline, pool, settings.dive)
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
    settings: DescentSettings = DescentSettings(),
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Counts, dict[str, float]]:
    """:func:`search` from ``counts`` in the move orders ``seed``, ``seed`` + 1, ... (each with a new pool of
    configurations), until ``deadline`` or after ``starts`` searches (one of them must be given); the best
    placement found and the summed numbers (``searches``: how many ran; ``at``: seconds to the best).
    ``found``: called with every placement better than every one before it (across the searches);
    ``patience``: no search starts this many seconds of ``clock`` after the last better placement (or the start;
    wall seconds by default, :func:`time.process_time` for the process's CPU seconds, which the machine's load
    does not stretch)."""
    if deadline is None and starts is None:
        raise ValueError("count_descent.multistart needs a deadline or a number of starts")
    begin = time.perf_counter()
    last = clock()
    best, best_rate = counts, rate(inst, counts)
    total: dict[str, float] = {"searches": 0, "at": 0.0}

    def better(placement: Counts) -> None:
        nonlocal best, best_rate, last
        if rate(inst, placement) > best_rate:
            best, best_rate, last = placement, rate(inst, placement), clock()
            total["at"] = time.perf_counter() - begin
            if found is not None:
                found(placement)

    def go_on() -> bool:
        now = time.perf_counter()
        return (
            (deadline is None or now < deadline)
            and (starts is None or total["searches"] < starts)
            and (patience is None or clock() < last + patience)
        )

    while go_on():
        _, stats = search(inst, counts, deadline, seed + int(total["searches"]), better, settings)
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
    settings: DescentSettings,
) -> tuple[list[int], float | None]:
    """First-improvement descent on the LP's value at rho from ``levels``: single moves in random order; when
    none lowers the value, the pairs of the ``settings.pairs`` best single moves (on different components)."""
    pairs = settings.pairs

    def live() -> bool:
        return deadline is None or time.perf_counter() < deadline

    def value_at(trial: list[int]) -> float | None:
        stats["lps"] += 1
        return missing(inst, rho, trial, pool, deadline, settings.dive)

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
        if improved is None and pairs and value is not None:
            chosen: list[tuple[int, int]] = []
            for _, c, d in sorted(scanned):
                if len(chosen) < pairs and all(c != other for other, _ in chosen):
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
