"""A race: several methods on one instance at once, one process each, sharing what they find.

A portfolio of exact methods proves what its best member proves: when one of them decides the
instance (an optimum or an infeasibility proof), the others are stopped, and otherwise the race
returns every member's answer for the caller to combine (the best incumbent with the best bound).
Each member runs in a forked child process, as :func:`odrp.core.limits.run_limited` runs a method:
its own process group, the memory budget shared among the members (``RLIMIT_DATA`` each; equal parts unless
weighted), and
killed with its subprocesses when the race is decided or past its time limit plus
:data:`~odrp.core.limits.GRACE`.

While the race runs, every incumbent and bound a member reports (:mod:`odrp.core.progress`) reaches
the race's process, which reports it in turn (re-scored by the evaluator, improvements only), so the
best of all members leaves the run as it is found.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import wait
from typing import Any, TypeVar

from odrp.core import limits, progress
from odrp.core.memory import budget

T = TypeVar("T")


def race(
    members: Sequence[Callable[[], T]],
    *,
    decided: Callable[[T], bool],
    refused: Callable[[BaseException], bool] | None = None,
    time_limit: float | None = None,
    weights: Sequence[float] | None = None,
) -> list[T | BaseException | None]:
    """Run ``members`` at once; per member its value, what it raised, or None (stopped, or died).

    The race ends when every member has answered, when one answers a value for which ``decided`` is
    true or raises an error for which ``refused`` is true (the others are killed), or ``GRACE`` seconds
    after ``time_limit`` (the members still running are killed). ``weights``: the members' parts of the
    memory budget, in proportion (None: equal parts).
    """
    weights = [1.0] * len(members) if weights is None else list(weights)
    shares = [int(budget() * w / sum(weights)) for w in weights]
    running: dict[Any, tuple[int, int]] = {}
    outcomes: list[T | BaseException | None] = [None] * len(members)
    for position, member in enumerate(members):
        receive, pid = limits.start_child(member, shares[position])
        running[receive] = (position, pid)
    deadline = None if time_limit is None else time.monotonic() + time_limit + limits.GRACE
    try:
        while running:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait(list(running), timeout)
            if not ready and deadline is not None and time.monotonic() >= deadline:
                break
            for receive in ready:
                position, pid = running[receive]
                try:
                    message = receive.recv()
                except (EOFError, OSError):
                    message = None
                if isinstance(message, tuple) and message and message[0] == "incumbent":
                    solution, _, source, _ = message[1]
                    progress.incumbent(solution, source)
                    continue
                if isinstance(message, tuple) and message and message[0] == "bound":
                    progress.bound(message[1])
                    continue
                del running[receive]
                receive.close()
                outcomes[position] = _outcome(message, pid, shares[position])
                value = outcomes[position]
                if isinstance(value, BaseException):
                    if refused is not None and refused(value):
                        return outcomes
                elif value is not None and decided(value):
                    return outcomes
    finally:
        for receive, (_, pid) in running.items():
            limits.stop_child(pid)
            receive.close()
    return outcomes


def _outcome(message: Any, pid: int, share: int) -> Any:
    """A member's answer as a value, the exception it raised, or None when it died without one."""
    try:
        return limits.child_answer(message, pid, share)
    except BaseException as error:
        return error
