"""Limits that hold whatever a method does: each run in a child process, stopped and capped from outside.

A method is asked to honour its time limit, and the toolkit's own methods do. A plugin, a heuristic
that never looks at the clock, or a solver stuck in C code may not. :func:`run_limited` therefore runs
a function in a forked child process:

- **time**: the parent waits until ``time_limit + GRACE`` seconds; a child still running then is
  killed with its whole process group (solver subprocesses and workers included), and
  :class:`TimeLimitKilled` is raised;
- **memory**: the child's data segment (``RLIMIT_DATA``: heap and private mappings, what a model and
  a solver allocate) is capped at the memory budget (:mod:`odrp.core.memory`). An allocation past it
  fails inside the child (Python's ``MemoryError``, a solver's ``bad_alloc``), and the run ends with
  :class:`MemoryLimitExceeded`, never by the kernel's out-of-memory killer;
- **failures**: whatever the child raises (``BaseException`` included) is raised again in the parent,
  and a child that dies without answering raises :class:`MethodDied`: only its own run is lost;
- **progress**: before its answer the child may send what it has found so far (incumbents and
  bounds, :mod:`odrp.core.progress`, through :func:`report_to_parent`); the parent keeps the best of
  them, and a run killed at its time limit raises :class:`TimeLimitKilled` with them in ``found``.

The child is forked, so it sees everything the parent has imported and set (registered plugins,
monkeypatches in tests) without pickling the function; only the return value travels back, pickled
through a pipe.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from pathlib import Path
from typing import Any, TypeVar

from odrp.core.memory import gigabytes, memory_budget
from odrp.core.progress import Found

T = TypeVar("T")

GRACE = 0.8
"""Seconds the watchdog waits past the time limit before it kills the run."""

HEADROOM = 256 * 1024**2
"""Bytes a budget must leave above the process's own data segment at the fork (interpreter, imports)."""

_NEAR_BUDGET = 0.9
"""A child that died with a peak resident size above this share of the budget died of memory."""


class LimitError(Exception):
    """A run that a limit ended from outside."""


class TimeLimitKilled(LimitError):
    """The run was still going ``GRACE`` seconds after its time limit and was killed; ``found`` holds the
    incumbent and bound it had reported (:mod:`odrp.core.progress`), if any."""

    def __init__(self, message: str, found: Found | None = None) -> None:
        super().__init__(message)
        self.found = found or Found()


class MemoryLimitExceeded(LimitError):
    """The run needed more memory than its budget."""


class MethodDied(LimitError):
    """The child process running the method died without an answer (a signal, ``os._exit``)."""


_TO_PARENT: tuple[Connection, threading.Lock, int] | None = None
"""In a child of :func:`run_limited`: the pipe to the parent, the lock its senders share, and the child's
pid (a process the child forks in turn inherits the pipe, and must not write to it)."""


def report_to_parent(message: tuple[str, Any]) -> None:
    """Send a progress message (``("incumbent", ...)`` or ``("bound", ...)``) to the watching parent;
    nothing outside a child of :func:`run_limited`. Safe to call from a solver's callback thread."""
    if not in_limited_child():
        return
    pipe, lock, _ = _TO_PARENT
    with lock, contextlib.suppress(Exception):
        pipe.send(message)


def in_limited_child() -> bool:
    """True in the child process of :func:`run_limited` (where :func:`report_to_parent` reaches a parent)."""
    return _TO_PARENT is not None and _TO_PARENT[2] == os.getpid()


class _Raised(Exception):
    """An exception of the child that could not be pickled, as its type name and message."""


def run_limited(
    function: Callable[..., T],
    *args: Any,
    time_limit: float | None = None,
    memory_limit: int | None = None,
    **kwargs: Any,
) -> T:
    """``function(*args, **kwargs)`` in a child process under the time limit and the memory budget.

    ``time_limit``: seconds (None: no watchdog); ``memory_limit``: bytes (None: the budget in force,
    :func:`odrp.core.memory.budget`). Returns the function's value or raises what it raised, or one
    of :class:`TimeLimitKilled`, :class:`MemoryLimitExceeded`, :class:`MethodDied`.
    """
    with memory_budget(memory_limit) as limit:
        own = data_size()
        if limit < own + HEADROOM:
            raise MemoryLimitExceeded(
                f"a memory budget above {gigabytes(own + HEADROOM)} (the toolkit itself uses {gigabytes(own)}), "
                f"got {gigabytes(limit)}"
            )
        receive, pid = start_child(function, limit, *args, **kwargs)
        found = Found()
        try:
            answer = _wait(receive, pid, None if time_limit is None else time.monotonic() + time_limit + GRACE, found)
        except BaseException:
            stop_child(pid)
            raise
        finally:
            receive.close()
        if answer == "late":
            raise TimeLimitKilled(
                f"stopped {GRACE} s after the time limit of {time_limit:g} s: the method did not return", found
            )
        return child_answer(answer, pid, limit)


def start_child(function: Callable[..., Any], limit: int, *args: Any, **kwargs: Any) -> tuple[Connection, int]:
    """Fork a child that runs ``function(*args, **kwargs)`` capped at ``limit`` bytes and answers through the
    returned pipe (its progress messages first); the pipe and the child's pid (also its process group)."""
    receive, send = Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        receive.close()
        _child(send, limit, function, args, kwargs)
    send.close()
    return receive, pid


def _child(send: Connection, limit: int, function: Callable[..., Any], args: Any, kwargs: Any) -> None:
    """Run the function in the child and send ``("value", v)`` or ``("raised", exception)``; then exit."""
    global _TO_PARENT
    code = 0
    lock = threading.Lock()
    _TO_PARENT = (send, lock, os.getpid())
    _own_capture_lock()
    try:
        os.setpgid(0, 0)  # its own process group: the watchdog kills its subprocesses with it
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; a Ctrl-C reaches it
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        try:
            answer: tuple[str, Any] = ("value", function(*args, **kwargs))
        except MemoryError:
            answer = ("memory", None)  # the traceback and what it holds are freed here
        except BaseException as error:
            answer = ("raised", error)
        with lock:  # a solver's callback thread may still be reporting
            try:
                send.send(answer)
            except Exception:  # an exception or value that does not pickle: send what it says
                kind, value = answer
                raised = value if kind == "raised" else TypeError(f"the method's value does not pickle: {value!r:.200}")
                text = "".join(traceback.format_exception_only(type(raised), raised)).strip()
                send.send(("raised", _Raised(text)))
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _own_capture_lock() -> None:
    """Give this child a lock of its own for Pyomo's output capture.

    Pyomo guards the capture of the process's stdout and stderr with a lock that it makes a
    ``multiprocessing.Lock`` (a semaphore shared with forked processes) once multiprocessing is imported.
    A child killed while a solver runs inside that capture (the watchdog, a race that another member
    decided) would leave it taken for good, and every later solve of the parent and of its other
    children would wait 200 s for it and fail. A forked child captures its own file descriptors only,
    so a lock of its own loses nothing.
    """
    dependencies = sys.modules.get("pyomo.common.dependencies")
    if dependencies is not None and hasattr(dependencies, "capture_output_lock"):
        dependencies.capture_output_lock = threading.Lock()


_PROGRESS = ("incumbent", "bound")


def _wait(receive: Connection, pid: int, deadline: float | None, found: Found) -> tuple[str, Any] | str | None:
    """The child's answer, None when it died without one; ``"late"`` (the child killed) past the deadline.
    Progress messages on the way are kept in ``found``."""
    while True:
        wait = 1.0 if deadline is None else min(1.0, max(0.0, deadline - time.monotonic()))
        if receive.poll(wait):
            try:
                message = receive.recv()
            except (EOFError, OSError, pickle.UnpicklingError):
                return None
            if isinstance(message, tuple) and message and message[0] in _PROGRESS:
                found.take(message)
                continue
            return message
        if deadline is not None and time.monotonic() >= deadline:
            stop_child(pid)
            return "late"
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            while receive.poll(0):
                try:
                    message = receive.recv()
                except (EOFError, OSError, pickle.UnpicklingError):
                    return None
                if not (isinstance(message, tuple) and message and message[0] in _PROGRESS):
                    return message
                found.take(message)
            return None


def child_answer(answer: tuple[str, Any] | None, pid: int, limit: int) -> Any:
    """Reap the child and return its value, or raise what it raised (:class:`MethodDied` when it died
    without an answer, :class:`MemoryLimitExceeded` when it ran out of its ``limit``)."""
    status, peak = _reap(pid)
    over = f"the run needed more than the memory budget of {gigabytes(limit)}"
    if answer is None:
        if peak >= _NEAR_BUDGET * limit:
            raise MemoryLimitExceeded(over)
        raise MethodDied(f"the method's process died ({_describe_status(status)}) without an answer")
    kind, value = answer
    if kind == "value":
        return value
    if kind == "memory" or isinstance(value, MemoryError):
        raise MemoryLimitExceeded(over) from None
    if isinstance(value, _Raised):
        raise MethodDied(str(value)) from None
    raise value


def data_size() -> int:
    """This process's data segment in bytes (what ``RLIMIT_DATA`` counts), 0 where /proc has no answer."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reap(pid: int) -> tuple[int, int]:
    """Wait for the child; its exit status and its peak resident size in bytes."""
    try:
        _, status, usage = os.wait4(pid, 0)
    except ChildProcessError:
        return 0, 0
    return status, usage.ru_maxrss * 1024


def stop_child(pid: int) -> None:
    """Kill the child and its process group, and reap it."""
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    _reap(pid)


def _describe_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else f"status {status}"
