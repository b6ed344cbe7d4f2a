"""The ideal point of an ODRP instance: an upper bound on F without a model.

F (eq. 21) is a weighted sum of normalised QoS terms, each monotone in its metric: decreasing in the
response time R, the cost C and the network metric N, increasing in log A. Each metric, at its best
over all placements taken alone, gives the term's largest value; their weighted sum bounds F from
above. Every best value below is itself bounded from the right side, from the data in linear time:

- R (eqs. 1, 8-11) is a longest path; operator i's latency is at least
  min_{k stable} R_i(lambda_i / k) / max_{u candidate} S_u, and a stream's delay at least the
  smallest delay between candidates of its two ends, so the longest path over these is at most R.
- C (eqs. 2, 5, 12-14): at least min_{k stable} k c_i Res_i per operator, and a stream's rate times
  the cheapest link between candidates of its ends (its shares of the replica pairs add up to 1).
- N (eqs. 17-20): a stream's bytes per tuple times its rate times the smallest pair weight between
  candidates of its ends (0 where the ends may share a node).
- log A (eqs. 15, 16): each operator uses a node among its candidates and every log term is at most
  0, so log A is at most min_i max_{u candidate of i} log A_u.

The exact method reports it as the bound when its solver has not given one (a time limit that came
while the model was being built, or before its solver started).
"""

from __future__ import annotations

import math

from odrp.kinds.replication.instance import OdrpInstance


def ideal_metrics(inst: OdrpInstance) -> dict[str, float]:
    """Each metric's best value bound (R, C, N from below, log A from above), keyed as in eq. (21)."""
    latency = [
        min(inst.latency(i, k) for k in inst.replica_counts(i)) / max(inst.speedup[u] for u in inst.candidates[i])
        for i in range(inst.n_operators)
    ]

    def cheapest(s: int, weight) -> float:
        st = inst.streams[s]
        return min(weight(u, v) for u in inst.candidates[st.source] for v in inst.candidates[st.target])

    start = [0.0] * inst.n_operators
    for j in inst.topological_order:
        for s in inst.incoming[j]:
            i = inst.streams[s].source
            start[j] = max(start[j], start[i] + latency[i] + cheapest(s, lambda u, v: inst.delay[u][v]))
    response_time = max(start[i] + latency[i] for i in inst.sinks)
    cost = sum(
        min(inst.replica_counts(i)) * inst.op_cost[i] * inst.resources[i] for i in range(inst.n_operators)
    ) + sum(st.rate * cheapest(s, lambda u, v: inst.link_cost[u][v]) for s, st in enumerate(inst.streams))
    network = sum(st.bytes_per_tuple * st.rate * cheapest(s, inst.pair_weight) for s, st in enumerate(inst.streams))
    availability = min(max(math.log(inst.node_availability[u]) for u in cands) for cands in inst.candidates)
    return {"response_time": response_time, "availability": availability, "cost": cost, "network": network}


def ideal_bound(inst: OdrpInstance) -> float:
    """F at the ideal point: an upper bound on F over every feasible placement."""
    best = ideal_metrics(inst)
    return inst.utility(best["response_time"], best["availability"], best["cost"], best["network"])
