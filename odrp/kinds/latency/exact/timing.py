"""The time limit across the stages of an exact latency solve: the solver gets what the hand-over leaves.

A solver's own time limit starts when it starts searching. Before that the backend takes the model
over (HiGHS through Pyomo's persistent interface, CBC by an LP file it reads, then the solution file
we read back); that grows with the model as its building does, so it is estimated from the time the
building took.
"""

from __future__ import annotations

HAND_OVER = {"highs": 2.5, "cbc": 2.0}
"""Seconds the backend spends taking a model over, per second Python spent building it (HiGHS's
``set_instance`` 2.1-2.4, CBC's LP file 0.5-1.4 plus reading its answer, more under load, on Pyomo models of 7 K to
120 K nonzeros)."""
OVERRUN = {"highs": 0.2, "cbc": 1.0}
"""Seconds a backend runs past its own limit, kept free at the end of the budget."""
LEAST_SOLVE = {"highs": 0.2, "cbc": 1.0}
"""A solver is not started with fewer seconds than this left for it. (CBC takes at least 1 s:
:mod:`odrp.core.solvers.cbc` never gives it less)."""


def solver_limit(left: float | None, solver: str, build_s: float) -> float | None:
    """Seconds to give the solver out of ``left``: None without a limit, 0 when it should not start."""
    if left is None:
        return None
    limit = left - HAND_OVER[solver] * build_s - OVERRUN[solver]
    return limit if limit >= LEAST_SOLVE[solver] else 0.0
