"""The rate search's primal side before and between its proofs: starting placements and their improvement.

- :func:`warm_start`: the better of ``hetero_greedy``'s placement (the paper's heuristic) and the fluid LP's
  optimum rounded to placements (:func:`.polish.round_fluid`, N_c scaled by each of ``rounding_scales``),
  each improved by block ascent (:func:`.polish.reinsert`);
- :func:`packing_start`: the packing search above the incumbent (:mod:`.packing`), then block ascent;
- :func:`improved`: the count descent from the incumbent (:func:`.count_descent.multistart`), then block
  ascent.

Each returns the better of what it found and the placement it started from, so the incumbent's rate never
falls.
"""

from __future__ import annotations

import time
from typing import Any

from odrp.heuristics.throughput import hetero_greedy
from odrp.kinds.throughput.evaluator import evaluate_counts, rate
from odrp.kinds.throughput.exact import bounds, count_descent, packing, polish, report
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance, parse_solution


def warm_start(
    inst: ThroughputInstance, settings: ThroughputSettings = ThroughputSettings(), deadline: float | None = None
) -> tuple[Counts | None, float | None, float | None]:
    """The best of several starts, each improved by block ascent (:func:`.polish.reinsert`): hetero_greedy's
    placement, and the fluid LP's optimum rounded to a placement at each of ``settings.rounding_scales`` (those
    not begun by ``deadline`` are skipped). Returns the placement, the greedy rate and the best rounded start's
    rate after block ascent (None where every such start fails)."""
    starts: list[Counts] = []
    greedy_rate = rounded_rate = None
    outcome = hetero_greedy(inst)
    if outcome.solution is not None:
        counts = parse_solution(inst, outcome.solution)
        if evaluate_counts(inst, counts).feasible:
            starts.append(polish.reinsert(inst, counts, deadline=deadline))
            greedy_rate = rate(inst, counts)
    fluid = bounds.fluid_solution(inst)
    for scale in settings.rounding_scales if fluid is not None else ():
        if deadline is not None and time.perf_counter() > deadline and starts:
            break
        rounded = polish.round_fluid(inst, fluid[1], fluid[2], scale)  # type: ignore[index]
        if rounded is not None and evaluate_counts(inst, rounded).feasible:
            starts.append(polish.reinsert(inst, rounded, deadline=deadline))
            rounded_rate = max(rounded_rate or 0.0, rate(inst, starts[-1]))
    if not starts:
        return None, greedy_rate, rounded_rate
    return max(starts, key=lambda counts: rate(inst, counts)), greedy_rate, rounded_rate


def packing_start(
    inst: ThroughputInstance,
    incumbent: Counts,
    upper: float,
    settings: ThroughputSettings = ThroughputSettings(),
    deadline: float | None = None,
) -> tuple[Counts, float | None]:
    """The better of ``incumbent`` and the packing search above its rate (:mod:`.packing`, until ``deadline``,
    then block ascent), and the rate that search reached (None: no placement above the incumbent)."""
    found = packing.search(inst, rate(inst, incumbent), upper, settings.packing, deadline)
    if found is None:
        return incumbent, None
    found = polish.reinsert(inst, found, deadline=deadline)
    found_rate = rate(inst, found)
    return (found, found_rate) if found_rate > rate(inst, incumbent) else (incumbent, found_rate)


def improved(
    inst: ThroughputInstance,
    incumbent: Counts,
    deadline: float | None,
    stats: dict[str, Any],
    settings: ThroughputSettings = ThroughputSettings(),
    starts: int | None = None,
    patience: float | None = None,
) -> tuple[Counts, float]:
    """The better of ``incumbent`` and the improvement search from it, with its rate: the descent on instance
    counts scored by the configuration LP (:func:`.count_descent.multistart` from ``incumbent`` in one random
    move order after another, the first ``settings.improve_seed``, until ``deadline``, after ``starts``
    descents or ``patience`` seconds after the last better placement), then block ascent. Records
    ``stats["count_descent"]`` and ``stats["improve"]``."""
    descended, stats["count_descent"] = count_descent.multistart(
        inst, incumbent, deadline, settings.improve_seed, starts, patience=patience, settings=settings.descent,
        found=lambda placement: report.incumbent(inst, placement, "count descent"),
    )  # fmt: skip
    stats["count_descent"]["rate"] = rate(inst, descended)
    ascended = polish.reinsert(inst, descended, deadline=deadline)
    before, after = rate(inst, incumbent), rate(inst, ascended)
    stats["improve"] = {"start": before, "rate": after}
    report.incumbent(inst, ascended, "block ascent")
    return (ascended, after) if after > before else (incumbent, before)
