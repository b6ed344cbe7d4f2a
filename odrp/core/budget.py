"""The time budget of a run: one type for every method, exact or heuristic.

A :class:`Budget` starts its clock when it is made. It holds an optional wall-clock limit and an
optional limit on *steps* (whatever a method counts: evaluations of the objective, iterations,
nodes), and remembers which of the two ended the run. Methods ask it how much time is left
(:meth:`Budget.left`), whether time is up (:meth:`Budget.expired`), or spend one step at a time
(:meth:`Budget.spend`). A part of a run gets a budget of its own that never outlasts the whole
(:meth:`Budget.share`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Budget:
    """Wall-clock seconds and steps a run may spend; either may be unlimited (None)."""

    time_limit: float | None = None
    """Wall-clock seconds from :attr:`started`; None: no limit."""
    max_steps: int | None = None
    """Steps the run may take; None: no limit."""
    started: float = field(default_factory=time.perf_counter)
    """``time.perf_counter()`` when the budget was made."""
    steps: int = 0
    """Steps spent so far (:meth:`spend`)."""
    stopped: str = ""
    """Why the run stopped: ``"time_limit"``, ``"max_steps"``, or empty while it may go on."""

    @property
    def deadline(self) -> float | None:
        """The ``time.perf_counter()`` value at which time is up, or None."""
        return None if self.time_limit is None else self.started + self.time_limit

    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return time.perf_counter() - self.started

    def left(self) -> float | None:
        """Seconds left (never negative), or None without a time limit."""
        if self.time_limit is None:
            return None
        return max(0.0, self.time_limit - self.elapsed())

    def expired(self) -> bool:
        """True once the time limit has passed (and records it in :attr:`stopped`)."""
        if self.time_limit is not None and self.elapsed() >= self.time_limit:
            self.stopped = self.stopped or "time_limit"
            return True
        return False

    def spend(self) -> bool:
        """Count one step; False, without counting it, once a limit is used up."""
        if self.stopped:
            return False
        if self.max_steps is not None and self.steps >= self.max_steps:
            self.stopped = "max_steps"
            return False
        if self.expired():
            return False
        self.steps += 1
        return True

    def share(self, fraction: float = 1.0, at_most: float | None = None) -> Budget:
        """A budget for a part of the run: ``fraction`` of the time left (at most ``at_most`` s), no step limit."""
        left = self.left()
        parts = [s for s in (None if left is None else fraction * left, at_most) if s is not None]
        return Budget(time_limit=min(parts) if parts else None)

    def stats(self) -> dict[str, Any]:
        """What a Result records of the budget: steps spent and why the run stopped."""
        return {"steps": self.steps, "stopped": self.stopped or "completed"}
