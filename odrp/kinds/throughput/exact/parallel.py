"""The level search (:mod:`.level_search`) on several cores: worker processes evaluate its nodes.

**Design.** The parent keeps the tree (:class:`.level_search.Tree`: the open nodes in depth-first
order, the incumbent and the rate rho) and hands the next nodes of that order to ``processes`` worker
processes (the second worker looks ahead: it takes the node depth-first search would take after the
first one's subtree; a late answer's children still go where depth-first search puts them). A worker
evaluates one node exactly as the one-process search does (:func:`.level_search.evaluate`: the node's
configuration LP from its parent's columns, then the leaf's P(rho) on CP-SAT, or the split) and sends
back its verdict, the children's ranges, the LP's columns (they start the children's LPs) and any
placement found (improved by block ascent). The parent applies it with the same
:meth:`.level_search.Tree.take` as the one-process search, then gives that worker the next node.

Workers are fresh interpreters (``python -m odrp.kinds.throughput.exact.worker``, not a fork: HiGHS and
CP-SAT start threads, see :mod:`.solver_child`), started once per solve, when the first level search
becomes likely (the configuration bound runs meanwhile, so their imports overlap it); the instance and
the solve's settings are pickled to each once, and each worker keeps its own :class:`.cache.Cache` for
them. Messages are length-prefixed pickles on the worker's stdin and on a copy of its stdout (fd 1
itself goes to /dev/null, so that solver output cannot mix into them). The parent reads the workers'
pipes unbuffered: a buffered reader that took two messages in one read would keep the second in its
buffer, where the selector does not look, and a search without a deadline would wait for it forever (a
worker's "ready" and its first answer arriving together).

**Proof with nodes in flight.** A node is evaluated at the rate rho_e current when it was handed out;
the rate may rise before its answer arrives (a leaf found a better placement). Every answer stays valid
at the current rate rho >= rho_e:

- a node pruned at rho_e (its LP refutes rho_e for every count vector in it) is pruned at rho: a
  placement that sustains rho sustains rho_e;
- a leaf's vector refuted at rho_e is refuted at rho for the same reason, and the children cover the
  node minus the vector, so nothing that could sustain rho is lost;
- a split at rho_e partitions the node's ranges narrowed at rho_e (:func:`.bounds.count_range` and the
  fluid LP at R = rho_e: relaxations, so every count vector sustaining rho_e, hence every one
  sustaining rho, lies in them): the children contain every count vector of the node that can
  sustain rho (their ranges are supersets of those a split at rho would narrow to);
- a placement found is a placement (the incumbent if better); a leaf found or undecided at rho_e < rho
  is evaluated again at rho (``stats.again``).

So the tree, together with the nodes in flight, always covers every count vector that may sustain rho,
and the proof (R* < rho) holds only when no node is open **and** none is in flight.

**Lifetime.** :class:`Workers` is a context manager: on exit (a result, the deadline, an exception,
Ctrl-C) it kills and reaps every worker. A level search that stops with nodes in flight (deadline,
undecided leaf) kills those workers; new ones start if another search follows. A worker also dies
with its parent on its own (:mod:`.worker`: Linux's parent-death signal, a watchdog thread that checks
its parent id, and end of file on its stdin); it ignores SIGINT (the parent decides). Every answer
carries the worker's CPU seconds so far (:meth:`Workers.cpu_seconds`, for benchmarks).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import struct
import subprocess
import sys
import time
import weakref
from collections.abc import Callable
from typing import IO, Any

from odrp.kinds.throughput.exact.config_bound import Columns, HasColumns
from odrp.kinds.throughput.exact.level_search import LevelSearch, Tree, TreePath
from odrp.kinds.throughput.exact.rate_model import Ranges
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

_HEADER = struct.Struct("<Q")


def write_message(stream: IO[bytes], message: object) -> None:
    """One message: its pickle, after its length."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    data = memoryview(_HEADER.pack(len(body)) + body)
    while data:  # an unbuffered stream may take part of it
        written = stream.write(data)
        data = data[written if written is not None else len(data) :]
    stream.flush()


def _read(stream: IO[bytes], size: int) -> bytes:
    """Exactly ``size`` bytes (an unbuffered stream returns what the pipe holds; EOFError at its end)."""
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_message(stream: IO[bytes]) -> Any:
    """The next message (EOFError at the end of the stream)."""
    return pickle.loads(_read(stream, _HEADER.unpack(_read(stream, _HEADER.size))[0]))


class Workers:
    """``processes`` worker processes for the nodes of :func:`search` on one instance.

    ``solver`` and ``settings``: how the workers solve their leaves' P(rho) and evaluate their nodes, as the
    exact method does (:func:`.rounds.box_solver`, :func:`.level_search.evaluate`).
    """

    def __init__(
        self,
        inst: ThroughputInstance,
        processes: int,
        solver: str = "cpsat",
        settings: ThroughputSettings = ThroughputSettings(),
    ) -> None:
        self.inst = inst
        self.processes = processes
        self.solver = solver
        self.settings = settings
        self.procs: list[subprocess.Popen] = []
        self.side: subprocess.Popen | None = None
        """The worker running the count descent beside the searches (:meth:`descend`), until it stops."""
        self.descent: dict[str, Any] | None = None
        """The side descent's best rate and placements reported, and its own numbers once it has stopped."""
        self.ready: set[int] = set()
        self.cpu: dict[int, float] = {}
        """CPU seconds each worker (by pid) reported with its last answer."""
        self.selector = selectors.DefaultSelector()
        self._finalizer = weakref.finalize(self, _kill, self.procs)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the missing workers (non-blocking: they import while the caller goes on)."""
        while len(self.procs) < self.processes:
            proc = subprocess.Popen(
                [sys.executable, "-m", "odrp.kinds.throughput.exact.worker", str(os.getpid())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,  # unbuffered: a message read leaves the next in the pipe, where the selector sees it
            )
            self.procs.append(proc)
            self.selector.register(proc.stdout, selectors.EVENT_READ, proc)  # type: ignore[arg-type]
            self._load(proc)

    def use(self, inst: ThroughputInstance, settings: ThroughputSettings | None = None) -> None:
        """Evaluate nodes of ``inst`` from now on, with ``settings`` if given (idle workers only: between
        searches)."""
        if self.side is not None:  # a descent of the old instance
            self.stop([self.side])
        self.inst, self.descent = inst, None
        self.settings = self.settings if settings is None else settings
        self.ready.clear()
        for proc in self.procs:
            self._load(proc)

    def _load(self, proc: subprocess.Popen) -> None:
        write_message(proc.stdin, ("instance", self.inst, self.solver, self.settings))  # type: ignore[arg-type]

    def cpu_seconds(self) -> float:
        """CPU seconds of every worker started so far, as of their last answers."""
        return sum(self.cpu.values())

    def warm(self) -> None:
        """Wait until every worker has imported its modules and read the instance (for benchmarks)."""
        while len(self.ready) < len(self.procs):
            self.receive(None)

    def send(self, proc: subprocess.Popen, task: tuple) -> None:
        write_message(proc.stdin, task)  # type: ignore[arg-type]

    def receive(self, timeout: float | None) -> tuple[subprocess.Popen, Any] | None:
        """The next answer of any worker (None: none within ``timeout`` seconds). A worker's first message
        says it is ready; it is recorded (``ready``) and returned as None."""
        for key, _ in self.selector.select(timeout):
            proc = key.data
            try:
                kind, answer, cpu = read_message(proc.stdout)
            except EOFError:
                code = proc.poll()
                raise RuntimeError(f"a level-search worker exited (code {code})") from None
            if kind == "error":
                raise RuntimeError(f"a level-search worker failed:\n{answer}")
            self.cpu[proc.pid] = cpu
            if kind == "ready":
                self.ready.add(proc.pid)
                return None
            return proc, answer
        return None

    def descend(
        self, counts: Counts, best: float, left: float | None, patience: float, upper: float | None = None
    ) -> None:
        """Start the count descent from ``counts`` (rate ``best``) on the last worker (started here if needed): the
        *side* worker, whose placements come as answers (:meth:`side_answer`) until it stops ``patience`` of its CPU
        seconds after its last better placement, or after ``left`` seconds; it then takes nodes like the others.
        With a bound ``upper`` the packing search above ``counts`` runs first (:mod:`.worker`)."""
        self.start()
        self.side = self.procs[-1]
        self.descent = {"rate": best, "placements": 0, "finished": False}
        self.send(self.side, ("descend", counts, left, patience, upper))

    def side_answer(self, answer: Any) -> tuple[float, Counts] | None:
        """What an answer of the side worker says: a better placement (its rate and counts), or None when the descent
        has stopped (the worker is free from now on)."""
        assert self.descent is not None
        if answer[0] == "placement":
            self.descent.update(rate=max(self.descent["rate"], answer[1]), placements=self.descent["placements"] + 1)
            return answer[1], answer[2]
        self.descent.update(answer[1], finished=True)
        self.side = None
        return None

    def drain(self) -> list[tuple[float, Counts]]:
        """The side worker's placements that have arrived (without waiting; between searches, when no node is in
        flight)."""
        found = []
        while self.side is not None:
            got = self.receive(0.0)
            if got is None:
                break
            proc, answer = got
            if proc is self.side:
                placement = self.side_answer(answer)
                if placement is not None:
                    found.append(placement)
        return found

    def stop(self, procs: list[subprocess.Popen]) -> None:
        """Kill and reap these workers (their answers are no longer wanted)."""
        for proc in procs:
            if proc is self.side:
                self.side = None
            self.selector.unregister(proc.stdout)
            self.procs.remove(proc)
            self.ready.discard(proc.pid)
        _kill(procs)

    def close(self) -> None:
        self.stop(list(self.procs))


def _kill(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()  # type: ignore[union-attr]


def search(
    inst: ThroughputInstance,
    best: float,
    counts: Counts | None,
    workers: Workers,
    next_rho: Callable[[float], float],
    deadline: float | None = None,
    columns: HasColumns | None = None,
) -> LevelSearch:
    """:func:`.level_search.search` with the nodes evaluated by ``workers`` (started here if needed)."""
    workers.start()
    tree = Tree(inst, best, counts, next_rho, columns, workers.processes, workers.settings.level_search)
    in_flight: dict[int, tuple[subprocess.Popen, TreePath, Ranges, HasColumns | None]] = {}
    proven = False
    try:
        while True:
            if not tree.open and not in_flight:
                proven = True
                break
            now = time.perf_counter()
            if deadline is not None and now > deadline:
                break
            for proc in workers.procs:
                if proc is not workers.side and proc.pid not in in_flight and tree.open:
                    path, node, parent = tree.pop()
                    left = None if deadline is None else deadline - now
                    plain = None if parent is None else Columns.of(parent)
                    workers.send(proc, ("node", tree.rho, node, plain, left))
                    in_flight[proc.pid] = (proc, path, node, parent)
            waiting = time.perf_counter()
            answer = workers.receive(None if deadline is None else max(0.0, deadline - waiting))
            if len(in_flight) + (workers.side is not None) < workers.processes:  # a worker had no node to evaluate
                tree.stats.starved += time.perf_counter() - waiting
            if answer is None:  # the deadline, or a worker that became ready
                continue
            proc, result = answer
            if proc is workers.side:  # the side descent: a better placement raises the incumbent, or it stopped
                placement = workers.side_answer(result)
                if placement is not None:
                    tree.raise_incumbent(*placement)
                continue
            _, path, node, parent = in_flight.pop(proc.pid)
            if not tree.take(path, node, parent, result):
                break
    finally:
        workers.stop([proc for proc, *_ in in_flight.values()])
    return tree.outcome(proven)
