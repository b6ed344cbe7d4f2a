"""What a run has found so far: incumbents and bounds, handed out of the run as they are found.

Every run goes on in a child process under the watchdog (:mod:`odrp.core.limits`), which kills it
:data:`~odrp.core.limits.GRACE` seconds after its time limit; a solver that overruns its own limit
(HiGHS's presolve on a large model, a MIP start processed without a look at the clock) would take its
incumbent with it. So a method says what it has found *as it finds it*:

- :func:`incumbent` with a solution JSON of the kind, whenever it holds a new best solution (a
  start heuristic's placement, a solver's improving solution, the best of a stage);
- :func:`bound` with a bound of the whole problem (an upper bound for a maximisation, a lower bound
  for a minimisation), whenever it proves a better one. A bound of a sub-model that is not a bound of
  the problem must not be reported.

Inside a watched run (:func:`watching`, which :func:`odrp.run.run_within_limits` opens in the child)
each incumbent is re-scored by the kind's evaluator on the spot, and only a feasible solution that
improves on the best one so far leaves the process; the parent keeps the last of each
(:class:`Found`) and, when it has to kill the run, returns them as a ``time_limit`` Result that the
evaluator judges like any other. Outside a watched run (a method called directly, a test) the calls
cost nothing and do nothing.

Solver backends take a :class:`ModelWatch`: how to turn the model's current variable values into the
kind's solution (``decode``), and, where the model's bound is a bound of the problem, how to map it
(``bound``). They call :func:`solver_incumbent` and :func:`solver_bound` from their callbacks (HiGHS's
improving-solution and logging callbacks, CP-SAT's solution callback).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from odrp.core.result import Sense

Send = Callable[[tuple[str, Any]], None]


@dataclass
class Found:
    """The best of what a run reported: its incumbent (evaluator-scored) and its best bound."""

    solution: dict[str, Any] | None = None
    objective: float | None = None
    source: str = ""
    bound: float | None = None
    at_s: float | None = None
    """Seconds into the run when the incumbent was found."""

    def take(self, message: tuple[str, Any]) -> None:
        """Keep what one progress message says (the child sends only improvements)."""
        kind, payload = message
        if kind == "incumbent":
            self.solution, self.objective, self.source, self.at_s = payload
        elif kind == "bound":
            self.bound = payload


@dataclass(frozen=True)
class ModelWatch:
    """How a solver's improving solutions and bounds of one model become the problem's.

    ``decode()`` reads the model's variables (the backend has loaded the improving solution into
    them) and returns the kind's solution JSON, or None. ``bound(value)`` maps the model's bound to
    a bound of the problem (unscaling, say); None when the model's bound is no bound of the problem
    (a sub-model, a model restricted below an incumbent).
    """

    decode: Callable[[], dict[str, Any] | None]
    bound: Callable[[float], float] | None = None
    source: str = "solver"


@dataclass
class _Watch:
    evaluate: Callable[[Any, dict[str, Any], str], Any]
    instance: Any
    sense: Sense
    send: Send
    started: float = field(default_factory=time.perf_counter)
    best: float | None = None
    best_bound: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def better(self, value: float, than: float | None, *, bound: bool = False) -> bool:
        if than is None:
            return True
        # an incumbent improves upwards for max, a bound downwards (and the other way for min)
        up = (self.sense == "max") != bound
        scale = max(1.0, abs(than))
        return value > than + 1e-12 * scale if up else value < than - 1e-12 * scale


_WATCH: _Watch | None = None


@contextlib.contextmanager
def watching(evaluate: Callable[..., Any], instance: Any, sense: Sense, send: Send) -> Iterator[None]:
    """Inside the block, :func:`incumbent` and :func:`bound` score and send what they are given."""
    global _WATCH
    saved, _WATCH = _WATCH, _Watch(evaluate, instance, sense, send)
    try:
        yield
    finally:
        _WATCH = saved


def active() -> bool:
    """True inside :func:`watching`: reports are taken (a backend installs its callbacks only then)."""
    return _WATCH is not None


def incumbent(solution: dict[str, Any] | None, source: str = "") -> float | None:
    """Report a solution; returns its objective when it is feasible and improves, else None.

    Outside a watched run: nothing happens and None is returned.
    """
    watch = _WATCH
    if watch is None or solution is None:
        return None
    with watch.lock:
        try:
            evaluation = watch.evaluate(watch.instance, solution, "incumbent")
        except Exception:  # a malformed decoding is a bug of the caller, not a reason to end the run
            return None
        if not evaluation.feasible or evaluation.objective is None:
            return None
        objective = float(evaluation.objective)
        if not watch.better(objective, watch.best):
            return None
        watch.best = objective
        watch.send(("incumbent", (solution, objective, source, time.perf_counter() - watch.started)))
        return objective


def bound(value: float | None) -> None:
    """Report a bound of the whole problem (kept when it improves on the last one reported)."""
    watch = _WATCH
    if watch is None or value is None or math.isnan(value):
        return
    with watch.lock:
        if watch.better(float(value), watch.best_bound, bound=True):
            watch.best_bound = float(value)
            watch.send(("bound", float(value)))


def solver_incumbent(watch: ModelWatch | None) -> None:
    """A backend's callback found an improving solution, loaded into the model: decode and report it."""
    if watch is None or _WATCH is None:
        return
    try:
        solution = watch.decode()
    except Exception:
        return
    incumbent(solution, watch.source)


def solver_bound(watch: ModelWatch | None, value: float | None) -> None:
    """A backend's callback has the model's bound: report it when it is a bound of the problem."""
    if watch is None or watch.bound is None or value is None or not math.isfinite(value) or _WATCH is None:
        return
    bound(watch.bound(value))
