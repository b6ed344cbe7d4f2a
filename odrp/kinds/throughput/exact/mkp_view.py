"""The paper's multiple-knapsack view of scheduling (Nasiri et al. 2023), solved exactly.

The paper maps scheduling to a multiple knapsack problem (MKP): "each task as an item that has
specific profit (PT_iw) and weight (TCU_iw) and each machine as a knapsack with a specific capacity
(MAC_w)". Our reading: the items are the tasks of a *given* execution graph, as in Storm, where the
user fixes each component's number of tasks (``parallelism``, default 1); the knapsack view does not
choose instance counts. An item's weight TCU_iw = e IR_c / N_c + MET depends on the input rate R, and
its profit PT_i = IR_c / N_c is what it processes, so a packing of every item earns R sum_c l_c:
maximising the profit of packing all items is maximising R. ``mkp_view`` therefore returns the optimal
packing of the given tasks, solved exactly by the throughput model with the instance counts fixed;
the gap between it and the exact optimum is the value of choosing the instance counts, which the
knapsack view leaves out. It is listed with the heuristics (a method the paper compares with) but
lives on the exact side, since it runs the exact model.
"""

from __future__ import annotations

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.kinds.throughput.exact.solve import solve
from odrp.kinds.throughput.instance import ThroughputInstance


def mkp_view(instance: ThroughputInstance, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    """Pack the tasks of the given execution graph (``parallelism``) optimally: the knapsack view."""
    counts = {c: instance.parallelism[c] for c in range(instance.n_components)}
    outcome = solve(instance, time_limit=time_limit, fixed_instances=counts)
    run = outcome.run
    stats = {"status": run.status, "bound": run.bound, "instances": list(instance.parallelism)}
    if outcome.solution is None:
        return HeuristicOutcome(None, None, stats, run.message or f"the given tasks do not fit ({run.status})")
    return HeuristicOutcome(outcome.solution, run.objective, stats, "")


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="mkp_view",
        kinds=("throughput",),
        run=mkp_view,
        description="the paper's multiple-knapsack view: optimal packing of the given tasks (parallelism hints)",
    ),
)
