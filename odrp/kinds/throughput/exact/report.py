"""What the exact throughput method has found so far, handed out of the run as it is found.

The rate search reports (:mod:`odrp.core.progress`) every placement that raises its incumbent and every rate
it proves out of reach, so that a run the watchdog stops at its limit returns them:

- :func:`incumbent`: a placement (its solution JSON; the progress module re-scores it with the evaluator and
  passes on only an improvement);
- :func:`bound`: an upper bound on R* of the whole problem: the fluid, pattern or configuration bound, a rate
  refuted by P(rho) or by a level search (R* < rho). A rate refuted on a part of the count vectors only (a node,
  a leaf, a rung cut by the deadline) is no bound of the problem and is never reported.

Only the run's own process reports: the level search's worker processes are fresh interpreters outside the
watched run (:func:`odrp.core.progress.active` is false there), and their placements and proofs reach the
parent process, which reports them. Outside a watched run both calls cost nothing.
"""

from __future__ import annotations

from odrp.core import progress
from odrp.kinds.throughput.instance import Counts, ThroughputInstance, solution_json


def incumbent(inst: ThroughputInstance, counts: Counts | None, source: str) -> None:
    """Report the placement ``counts`` found by ``source`` (kept by the run only when it improves)."""
    if counts is not None and progress.active():
        progress.incumbent(solution_json(inst, counts), source)


def bound(value: float | None) -> None:
    """Report ``value``: no placement sustains a higher rate (R* <= value)."""
    if value is not None and progress.active():
        progress.bound(value)
