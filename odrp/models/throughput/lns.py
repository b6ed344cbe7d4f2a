"""Large-neighbourhood search on a placement: the primal side of the rate search at scale.

Block ascent (:func:`.polish.reinsert`) re-places one component at a time; at 10 machines and more
its local optima are far below the optimum. Here a neighbourhood is a sub-problem of the level
model P(rho) (:mod:`.rate_model`) in which most of the incumbent placement x is frozen:

- a few *free components* S may take any count and spread (caps u_cwn as in P(rho));
- a few *free machines* M' may receive instances of every component;
- every other pair (c, w) keeps at most its x_cw instances (caps x_cw: instances may only leave).

The incumbent satisfies every row at rho = R(x), so the sub-problem is feasible; CP-SAT maximises
the smallest relative slack z at that rho, starting from the incumbent (hint). A solution with
z > 0 sustains a rate above R(x): the placement is re-scored exactly (the evaluator's formula) and
kept when its rate is higher. Neighbourhoods are drawn by a seeded generator (deterministic for a
seed) until the time given runs out. The search only finds placements; it proves nothing, and the
rate search that follows it keeps every proof.
"""

from __future__ import annotations

import random
import time

from odrp.models.throughput import bounds, rate_model
from odrp.problems.throughput import Counts, ThroughputInstance, rate
from odrp.solvers import run_cpsat

FREE_COMPONENTS = 2
FREE_MACHINES = 3
LEVEL_STEP = 1
"""A frozen component's instance count moves by at most this much."""
SUB_TIME = 2.0
"""CPU seconds of one neighbourhood's CP-SAT solve."""


def neighbourhood(
    inst: ThroughputInstance, counts: Counts, components: set[int], machines: set[int]
) -> tuple[list[list[int]], list[list[int]]]:
    """Levels and caps of the sub-problem freeing ``components`` and ``machines`` around ``counts``."""
    caps = [
        [
            inst.count_bound(c, w) if c in components or w in machines else counts[c].get(w, 0)
            for w in range(inst.n_machines)
        ]
        for c in range(inst.n_components)
    ]
    levels = []
    for c in range(inst.n_components):
        top = sum(caps[c])
        if inst.max_instances[c] is not None:
            top = min(top, inst.max_instances[c])
        low = 1
        if c not in components:  # a frozen component changes its count by at most LEVEL_STEP
            n = sum(counts[c].values())
            low, top = max(low, n - LEVEL_STEP), min(top, n + LEVEL_STEP)
        levels.append(list(range(low, top + 1)))
    return levels, caps


def improve(
    inst: ThroughputInstance,
    counts: Counts,
    deadline: float,
    seed: int = 0,
    free_components: int = FREE_COMPONENTS,
    free_machines: int = FREE_MACHINES,
    sub_time: float = SUB_TIME,
) -> tuple[Counts, dict]:
    """A placement at least as good as ``counts`` (feasible), found by LNS until ``deadline``."""
    rng = random.Random(seed)
    best, best_rate = counts, rate(inst, counts)
    tried = improved = 0
    nc, nm = inst.n_components, inst.n_machines
    while time.perf_counter() + 0.1 < deadline and best_rate > 0:
        components = set(rng.sample(range(nc), min(free_components, nc)))
        machines = set(rng.sample(range(nm), min(free_machines, nm)))
        levels, caps = neighbourhood(inst, best, components, machines)
        lo_hi = [bounds.count_range(inst, c, best_rate) for c in range(nc)]
        levels = [[n for n in levels[c] if lo_hi[c][0] <= n <= lo_hi[c][1]] for c in range(nc)]
        tried += 1
        if any(not x for x in levels):
            continue
        rm = rate_model.rate_model(inst, best_rate, levels, caps)
        form = rate_model.build_cpsat(inst, rm, symmetry=False, hint=best)
        left = min(sub_time, deadline - time.perf_counter())
        run, cp = run_cpsat(form.model, "max", left, 0.0)
        if run.objective is None or run.objective <= 0:
            continue
        found = rate_model.decode_cpsat(form, cp, nc)
        found_rate = rate(inst, found)
        if found_rate > best_rate * (1 + 1e-12):
            best, best_rate = found, found_rate
            improved += 1
    return best, {"neighbourhoods": tried, "improvements": improved, "rate": best_rate}
