"""A worker process of the level search: ``python -m odrp.kinds.throughput.exact.worker PARENT_PID``.

:class:`.parallel.Workers` starts it and sends it, as length-prefixed pickles on its stdin (:mod:`.parallel`),
an instance with the solver and the solve's settings, then tasks until end of file:

- ``node`` (rho, node, columns, seconds left): :func:`.level_search.evaluate` as the one-process search does,
  its leaves solved by :func:`.rounds.box_solver`;
- ``rung`` (the same, the leaves' CP-SAT seconds and the split rule): a node of a ladder's rung
  (:mod:`.ladder`), its leaves dived first (:func:`.ladder.leaf_solver`);
- ``descend`` (a placement, seconds left, patience, a bound or None): the count descent beside the bounds and
  the searches (:func:`.count_descent.multistart`, its patience in this worker's CPU seconds), after the
  packing search when a bound is given (:func:`.starts.packing_start`), each better placement sent as it comes,
  then the descent's numbers.

A new instance replaces the old one, with a new :class:`.cache.Cache` for it. Answers go to a copy of fd 1,
and fd 1 itself to /dev/null, so that solver output cannot mix into them; each carries the worker's CPU
seconds. The worker ignores SIGINT (the parent decides) and dies with its parent: Linux's parent-death
signal, a watchdog thread on its parent id, and end of file on its stdin.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import os
import signal
import sys
import threading
import time
import traceback
from typing import IO

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import count_descent, ladder, polish
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.config_bound import Columns
from odrp.kinds.throughput.exact.level_search import evaluate
from odrp.kinds.throughput.exact.parallel import read_message, write_message
from odrp.kinds.throughput.exact.rounds import box_solver
from odrp.kinds.throughput.exact.settings import LevelSearchSettings, ThroughputSettings
from odrp.kinds.throughput.exact.starts import packing_start
from odrp.kinds.throughput.instance import Counts, ThroughputInstance


def _die_with(parent: int) -> None:
    """Exit when the parent process dies: Linux's parent-death signal, and a watchdog thread."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


class _Instance:
    """What a worker holds for the instance it was sent: the settings, a cache, the leaves' solvers."""

    def __init__(self, inst: ThroughputInstance, solver: str, settings: ThroughputSettings) -> None:
        self.inst, self.settings = inst, settings
        self.cache = Cache.of(settings)
        self.solve_box = box_solver(inst, solver, settings, self.cache.fluid)
        self.improve = functools.partial(polish.improve, inst)
        self.rung_leaf = ladder.leaf_solver(inst, self.solve_box, settings.descent.dive)
        self._by_branch: dict[str, LevelSearchSettings] = {settings.level_search.branch: settings.level_search}

    def level_settings(self, branch: str) -> LevelSearchSettings:
        """The level search's settings with the split rule ``branch``."""
        if branch not in self._by_branch:
            self._by_branch[branch] = dataclasses.replace(self.settings.level_search, branch=branch)  # type: ignore[arg-type]
        return self._by_branch[branch]


def main(parent: int) -> None:
    """Read an instance, then tasks until end of file (see the module's docstring)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with(parent)
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # solver output must not reach the answers
    tasks = sys.stdin.buffer
    held: _Instance | None = None
    while True:
        try:
            message = read_message(tasks)
        except EOFError:
            return
        if message[0] == "instance":
            held = _Instance(*message[1:4])
            write_message(answers, ("ready", None, time.process_time()))
            continue
        assert held is not None
        try:
            if message[0] == "descend":  # the count descent beside the bounds and searches (Workers.descend)
                _descend(held, message[1:], answers)
                continue
            rho, node, columns, left = message[1:5]
            leaf, settings = held.solve_box, held.settings.level_search
            if message[0] == "rung":  # a ladder's node: its leaf dived first, CP-SAT for at most that long
                leaf, settings = held.rung_leaf(message[5]), held.level_settings(message[6])
            deadline = None if left is None else time.perf_counter() + left
            result = evaluate(held.inst, rho, node, columns, leaf, held.cache, settings, held.improve, deadline)
            result.columns = Columns.of(result.columns)
            write_message(answers, ("ok", result, time.process_time()))
        except Exception:
            write_message(answers, ("error", traceback.format_exc(), time.process_time()))


def _descend(held: _Instance, task: tuple, answers: IO[bytes]) -> None:
    """The count descent beside the bounds and searches (:meth:`.parallel.Workers.descend`): with a bound ``upper``
    first the packing search above the placement (:func:`.starts.packing_start`, ``packing_box`` of the time left),
    then the descent from the better of the two; each better placement as it comes, then the descent's numbers."""
    inst, settings = held.inst, held.settings
    counts, left, patience, upper = task
    now = time.perf_counter()
    deadline = None if left is None else now + left
    start = rate(inst, counts)

    def found(placement: Counts) -> None:
        write_message(answers, ("ok", ("placement", rate(inst, placement), placement), time.process_time()))

    packed = None
    if upper is not None:
        box = None if left is None else now + settings.packing_box * left
        counts, packed = packing_start(inst, counts, upper, settings, box)
        if rate(inst, counts) > start:
            found(counts)
    _, stats = count_descent.multistart(
        inst, counts, deadline, settings.improve_seed, None, found, patience, settings.descent, time.process_time
    )
    stats["packing"] = packed
    write_message(answers, ("ok", ("descended", stats), time.process_time()))


if __name__ == "__main__":
    main(int(sys.argv[1]))
