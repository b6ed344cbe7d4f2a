"""A ladder of level searches that lowers the bound of a large instance on a worker process (stop 18).

Above ``CONFIG_UP_TO`` components x machines the exact method's 60 s path gets its bound from the
configuration LP (:mod:`.config_bound`) and spends the rest of its time on the incumbent (the count
descent, :mod:`.count_descent`). The configuration LP cannot see that a component's instances all come
in one size (the levels' integrality); the level search (:mod:`.level_search`) can, and refutes rates
the LP cannot (20 x 30 seed 1: 149.4, where the LP refutes nothing below 152.2). One level search at
a rate just within 1% of the incumbent is all or nothing in 60 s, so the rates come down a ladder:

    rho_k = max(R (1 + LIFT), B (1 - STEP))          (B: the last rate proven out of reach),

each rung a level search whose proof is the new bound B = rho_k and whose placements found raise the
incumbent R (the rung's rate then rises to the next rung's formula at the new R, as after any new
incumbent in :class:`.level_search.Tree`). Once R (1 + LIFT) >= B the gap is below 1% and the rungs
bisect between R and B until the gap asked for. Every proven rung is a bound at once: a rung cut by the
deadline loses only itself.

**Where.** On one worker process (:class:`.parallel.Workers` with one process, the ``ladder`` task),
started with the large path and handed the coarse configuration bound, its last LP's columns and the
incumbent; the parent meanwhile refines the bound on the fine grid and runs the count descent on the
other core. The worker reports every proven rung and every better placement at once (a message each),
so that the parent, at its deadline, only reads what has arrived and kills the worker.

**Leaves** at 20 x 30 are P(rho) at one count vector with 600 machines' worth of variables: CP-SAT can
take a minute on one that is feasible by a hair. A leaf is therefore first tried by the dive
(:func:`.dive.dive`: a placement at those counts by diving on the configuration LP, kept only when its
exact rate reaches rho), then by CP-SAT for at most ``LEAF_SECONDS``; a leaf still undecided is set aside
and the search goes on; the leaves set aside are decided again at the end with the time left (the
proof needs them all: a rung with one left undecided at the deadline is not proven).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from odrp.models.throughput import dive
from odrp.models.throughput.level_search import BoxSolver, Columns, HasColumns, Ranges, Tree, TreePath, evaluate
from odrp.problems.throughput import Counts, ThroughputInstance, rate

LIFT = 0.0099
"""A rung is at least this far (relative) above the incumbent: its proof leaves a gap below 1%."""
STEP = 0.01
"""A rung is at least this far (relative) below the last bound proven."""
BISECT = 0.5
"""Below 1% the rungs are at incumbent + BISECT (bound - incumbent)."""
LEAF_SECONDS = 3.0
"""CP-SAT's time on a leaf the dive did not place before the leaf is set aside (decided again at the end)."""

Poll = Callable[[], tuple[float, Counts] | None]
"""The best placement the parent has found since the last call, with its rate (None: none)."""
Report = Callable[[tuple], None]
"""Where the worker sends ``("bound", rho)`` and ``("placement", rate, counts)`` as soon as they are known."""


def rung(best: float, bound: float) -> float:
    """The next rate to prove out of reach: max(R (1 + LIFT), B (1 - STEP)) while that is below B, else
    the bisection point between R and B."""
    target = max(best * (1 + LIFT), bound * (1 - STEP))
    return target if target < bound else best + BISECT * (bound - best)


def climb(
    inst: ThroughputInstance,
    best: float,
    counts: Counts,
    bound: float,
    columns: HasColumns | None,
    deadline: float | None,
    solve_box: BoxSolver,
    improve: Callable[[Counts], Counts] | None,
    report: Report,
    gap: float = 1e-6,
    poll: Poll | None = None,
) -> dict[str, Any]:
    """Rung after rung from the bound ``bound`` and the placement ``counts`` (rate ``best``) until the gap is
    at most ``gap`` or ``deadline``; every proof and better placement goes to ``report`` at once, and the
    placements ``poll`` returns between nodes (the parent's, found meanwhile) raise the incumbent. Returns
    the rungs' statistics."""
    rungs: list[dict[str, Any]] = []
    pool = dive.Pool(len(inst.machine_classes))
    leaf = _leaf_solver(inst, solve_box, pool)
    while (bound - best) > gap * best and (deadline is None or time.perf_counter() < deadline):
        begin = time.perf_counter()

        def next_rho(found: float, bound: float = bound) -> float:
            return rung(found, bound)

        tree = Tree(inst, best, counts, next_rho, columns)
        proven, aside = _search(tree, leaf, improve, deadline, report, poll)
        if tree.best > best:
            best, counts = tree.best, tree.counts  # type: ignore[assignment]
        columns = tree.last
        rungs.append(
            {"rho": tree.rho, "proven": proven, "nodes": tree.stats.nodes, "leaves": tree.stats.leaves,
             "aside": aside, "incumbents": list(tree.stats.incumbents), "s": time.perf_counter() - begin}
        )  # fmt: skip
        if not proven:
            break
        bound = tree.rho
        report(("bound", bound))
    return {"rungs": rungs, "bound": bound, "best": best}


def _search(
    tree: Tree,
    leaf: Callable[[float | None], BoxSolver],
    improve: Callable[[Counts], Counts] | None,
    deadline: float | None,
    report: Report,
    poll: Poll | None,
) -> tuple[bool, int]:
    """One rung: :func:`.level_search.search` with undecided leaves set aside and decided again at the end
    (with the time left). Returns whether the rung's rate is proven out of reach, and how many leaves
    were set aside."""
    aside: list[tuple[TreePath, Ranges, HasColumns | None]] = []
    set_aside = 0
    while tree.open or aside:
        if deadline is not None and time.perf_counter() > deadline:
            return False, set_aside
        told = None if poll is None else poll()
        if told is not None:
            tree.raise_incumbent(*told)
        last_try = not tree.open
        path, node, parent = aside.pop() if last_try else tree.pop()
        before = tree.best
        solve_box = leaf(None if last_try else LEAF_SECONDS)
        result = evaluate(tree.inst, tree.rho, node, parent, solve_box, improve, deadline)
        if result.verdict == "undecided" and not last_try:
            aside.append((path, node, Columns(result.columns.columns)))
            set_aside += 1
            continue
        if not tree.take(path, node, parent, result):
            return False, set_aside
        if tree.best > before:
            report(("placement", tree.best, tree.counts))
    return True, set_aside


def _leaf_solver(
    inst: ThroughputInstance, solve_box: BoxSolver, pool: dive.Pool
) -> Callable[[float | None], BoxSolver]:
    """The leaves' P(rho): the dive first (a placement only when its exact rate reaches rho), then
    ``solve_box`` for at most the given seconds (None: until the deadline)."""

    def with_limit(seconds: float | None) -> BoxSolver:
        def solve(rho: float, box: Ranges, limit: float | None) -> tuple[str, Counts | None]:
            if all(lo == hi for lo, hi in box):
                placed = dive.dive(inst, rho, [lo for lo, _ in box], limit, pool)
                if placed is not None and rate(inst, placed) >= rho:
                    return "feasible", placed
            if seconds is not None:
                capped = time.perf_counter() + seconds
                limit = capped if limit is None else min(limit, capped)
            return solve_box(rho, box, limit)

        return solve

    return with_limit


class Climber:
    """The parent's side: one worker process (:class:`.parallel.Workers`) climbing the ladder, and what it
    has reported so far (``bound``: the lowest rung proven, ``best`` / ``counts``: its best placement)."""

    def __init__(self, inst: ThroughputInstance, box: tuple[str, bool, int]) -> None:
        from odrp.models.throughput.parallel import Workers

        self.workers = Workers(inst, 1, box)
        self.bound = math.inf
        self.best = -math.inf
        self.counts: Counts | None = None
        self.stats: dict[str, Any] | None = None
        """The worker's rung statistics (:func:`climb`), once it has finished."""
        self.climbing = False

    def __enter__(self) -> Climber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.workers.close()

    def start(self) -> None:
        """Start the worker (non-blocking: it imports while the caller goes on)."""
        self.workers.start()

    def climb(
        self,
        best: float,
        counts: Counts,
        bound: float,
        columns: HasColumns | None,
        deadline: float | None,
        gap: float,
    ) -> None:
        """Hand the worker the ladder from ``bound`` and the placement ``counts`` (rate ``best``)."""
        self.workers.start()
        left = None if deadline is None else max(0.0, deadline - time.perf_counter())
        plain = None if columns is None else Columns(columns.columns)
        self.workers.send(self.workers.procs[0], ("ladder", best, counts, bound, plain, left, gap))
        self.climbing = True

    def tell(self, counts: Counts) -> None:
        """Pass a placement found here to the ladder (it raises the rungs' incumbent, hence their rates)."""
        if self.climbing and self.workers.procs:
            self.workers.send(self.workers.procs[0], ("incumbent", rate(self.workers.inst, counts), counts))

    def collect(self, patience: float = 0.0) -> None:
        """Take every report that has arrived; wait up to ``patience`` wall seconds for the worker to finish
        its ladder (it stops at the deadline it was given, after the node it is on)."""
        until = time.monotonic() + patience
        while self.workers.procs and self.stats is None:
            ready = len(self.workers.ready)
            got = self.workers.receive(max(0.0, until - time.monotonic()))
            if got is not None:
                self._take(got[1])
            elif len(self.workers.ready) == ready:  # nothing more within the patience
                return

    def _take(self, item: tuple) -> None:
        if item[0] == "bound":
            self.bound = min(self.bound, item[1])
        elif item[0] == "placement" and item[1] > self.best:
            self.best, self.counts = item[1], item[2]
        elif item[0] == "done":
            self.stats = item[1]
