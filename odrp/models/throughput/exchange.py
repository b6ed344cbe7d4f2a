"""Exchange ascent on a placement: swap one instance of c on machine v with one of d on machine w.

Block ascent (:mod:`.polish`) adds, removes and moves single instances; when every machine holds one or
two instances and all of them are nearly full, no such move helps, but exchanging two instances between
two machines may (20 x 30 seed 2: the bottleneck machine holds components 1 and 16 at 100.0% of its
capacity, every other machine is at 93-99.9%). A swap keeps every count N_c, so only the two machines
change: with f_w the overheads on w and p_w its load per unit of R (eq. 5), machine w sustains
r_w = (cap_w - f_w) / p_w. A swap is taken when min(r_v, r_w) rises strictly: the machines' rates, sorted,
then rise lexicographically (first R itself, then the next machine's rate, ...), so the ascent ends.
Task limits are unchanged by a swap; a swap that would put more than ``count_bound`` instances of a
component on one machine is skipped.

The best swap over all pairs is taken (steepest ascent); at most ``max_swaps``. Deterministic.
"""

from __future__ import annotations

import math

from odrp.problems.throughput import FEASIBILITY_TOL, Counts, ThroughputInstance


def ascend(inst: ThroughputInstance, counts: Counts, max_swaps: int = 1000) -> Counts:
    """``counts`` after steepest exchange ascent (a placement whose sorted machine rates are no lower)."""
    m = inst.n_machines
    n = [sum(row.values()) for row in counts]
    x = [[row.get(w, 0) for w in range(m)] for row in counts]
    fixed = [sum(inst.overhead[c][w] * x[c][w] for c in range(inst.n_components)) for w in range(m)]
    per = [sum(inst.coefficient(c, w) * x[c][w] / n[c] for c in range(inst.n_components)) for w in range(m)]

    def rate_of(w: int, f: float, p: float) -> float:
        cap = inst.capacity[w]
        if f > cap * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL:
            return -math.inf
        return (cap - f) / p if p > 0 else math.inf

    for _ in range(max_swaps):
        best_gain, best_swap = 0.0, None
        here = [(c, w) for c in range(inst.n_components) for w in range(m) if x[c][w]]
        for i, (c, v) in enumerate(here):
            for d, w in here[i + 1 :]:
                if c == d or v == w or x[c][w] >= inst.count_bound(c, w) or x[d][v] >= inst.count_bound(d, v):
                    continue
                before = min(rate_of(v, fixed[v], per[v]), rate_of(w, fixed[w], per[w]))
                fv = fixed[v] - inst.overhead[c][v] + inst.overhead[d][v]
                pv = per[v] - inst.coefficient(c, v) / n[c] + inst.coefficient(d, v) / n[d]
                fw = fixed[w] - inst.overhead[d][w] + inst.overhead[c][w]
                pw = per[w] - inst.coefficient(d, w) / n[d] + inst.coefficient(c, w) / n[c]
                after = min(rate_of(v, fv, pv), rate_of(w, fw, pw))
                gain = after - before
                if gain > best_gain * (1 + 1e-12) + 1e-12 * abs(before):
                    best_gain, best_swap = gain, (c, v, d, w, fv, pv, fw, pw)
        if best_swap is None:
            break
        c, v, d, w, fixed[v], per[v], fixed[w], per[w] = best_swap
        x[c][v] -= 1
        x[c][w] += 1
        x[d][w] -= 1
        x[d][v] += 1
    return [{w: k for w, k in enumerate(row) if k} for row in x]
