"""The time limit across the stages of an exact solve: model building, hand-over, solver.

A solver's own time limit starts when it starts searching. Before that, Python builds the model,
and the backend takes it over: HiGHS through Pyomo's persistent interface (``set_instance``), CBC
by writing an LP file that the binary reads, and reading the solution file back. Both grow with the
model as its building does, so the time the hand-over will take is estimated from the time the
building took (:data:`HAND_OVER`); the solver gets what is left after it (:func:`solver_limit`), and
a long building stops at the point where the hand-over would no longer fit (:class:`BuildClock`,
:exc:`OutOfTime`). CP-SAT takes its model from Python directly (no estimate is needed for it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

HAND_OVER = {"highs": 2.5, "cbc": 2.0, "cpsat": 0.0, "scip": 3.0, "gurobi": 2.5, "cplex": 2.5, "xpress": 2.5}
"""Seconds the backend spends taking a model over, per second Python spent building it. Measured on
the compact ODRP models of 16 x 10 to 40 x 20 and the latency models of 7 K to 120 K nonzeros:
HiGHS's ``set_instance`` 2.1-2.4, CBC's LP file 0.5-1.4 plus reading its answer, more under load;
SCIP's reading and building (:mod:`odrp.core.solvers.scip`) 1.4-3.0 on the compact ODRP models of 16 x 10
to 30 x 14 and the textbook latency models of 10 to 30 operations. The commercial solvers take the model
through Pyomo's direct interfaces, the same translation as HiGHS's; their free licences refuse models
of the sizes measured, so they get HiGHS's figure."""
OVERRUN = {"highs": 0.2, "cbc": 1.0, "cpsat": 0.2, "scip": 0.5, "gurobi": 0.5, "cplex": 0.5, "xpress": 0.5}
"""Seconds a backend runs past its own limit (CBC ends its current round of cuts, then writes and we
read its solution file; HiGHS stops within a node; SCIP stops within 0.01 s of its limit, then takes
0.1-0.3 s to hand its solution back, and the first SCIP run of a process imports PySCIPOpt, about 0.4 s),
kept free at the end of the budget."""
LEAST_SOLVE = {"highs": 0.2, "cbc": 1.0, "cpsat": 0.2, "scip": 0.2, "gurobi": 0.2, "cplex": 0.2, "xpress": 0.2}
"""A solver is not started with fewer seconds than this left for it: the run ends with what the
earlier stages found (CBC takes at least 1 s: :mod:`odrp.core.solvers.cbc` never gives it less)."""


class OutOfTime(Exception):
    """The time limit came while a model was being built (the message says which model)."""


@dataclass
class BuildClock:
    """The deadline of a model's building; :meth:`check` raises :exc:`OutOfTime` past it."""

    deadline: float | None
    what: str = "the model"
    calls: int = 0

    def check(self) -> None:
        """Raise :exc:`OutOfTime` if the deadline has passed (looks at the clock every 64th call)."""
        self.calls += 1
        if self.deadline is not None and self.calls % 64 == 0 and time.perf_counter() > self.deadline:
            raise OutOfTime(f"the time limit came while building {self.what}")

    def stage(self) -> None:
        """Look at the clock now (between two families of rows)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfTime(f"the time limit came while building {self.what}")


def build_clock(left: float | None, solver: str, what: str) -> BuildClock:
    """A clock for building a model with ``left`` seconds to go (None: no limit): it stops the building
    once the hand-over and the least solve would no longer fit."""
    if left is None:
        return BuildClock(None, what)
    usable = left - OVERRUN[solver] - LEAST_SOLVE[solver]
    return BuildClock(time.perf_counter() + max(0.0, usable) / (1 + HAND_OVER[solver]), what)


def solver_limit(left: float | None, solver: str, build_s: float) -> float | None:
    """Seconds to give the solver out of ``left``: what is left after the estimated hand-over and
    overrun. None without a time limit; 0 when less than :data:`LEAST_SOLVE` is left (do not start it)."""
    if left is None:
        return None
    limit = left - HAND_OVER[solver] * build_s - OVERRUN[solver]
    return limit if limit >= LEAST_SOLVE[solver] else 0.0
