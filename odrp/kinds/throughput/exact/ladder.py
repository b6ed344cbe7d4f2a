"""A ladder of level searches that lowers the bound of a large instance, on the worker processes.

Above ``config_up_to`` components x machines the configuration LP (:mod:`.config_bound`) gives the first
bound, but it cannot see that a component's instances all come in one size (the levels' integrality);
the level search (:mod:`.level_search`) can, and refutes rates the LP cannot (20 x 30 seed 1: 149.42,
where the LP refutes nothing below 152.2). The rates come down a ladder:

    rho_k = max(R (1 + lift), B (1 - step))          (B: the last rate proven out of reach),

each rung a level search whose proof is the new bound B = rho_k and whose placements found raise the
incumbent R (the rung's rate then rises to the formula at the new R, as after any new incumbent in
:class:`.level_search.Tree`: nothing decided is lost). With ``step`` = 0.5% and ``lift`` = 0.99% the
first rung is, as soon as the incumbent is good, the rate whose proof leaves a gap below 1%; once
R (1 + lift) >= B the rungs bisect between R and B until the gap asked for. Every proven rung is a
bound at once: a rung cut by the deadline loses only itself.

**Where.** The tree stays in this process (:func:`climb`); its nodes go to the workers of
:class:`.parallel.Workers` (the ``rung`` task of :mod:`.worker`: :func:`.level_search.evaluate` with the
leaves of :func:`leaf_solver`). The last worker first runs the count descent from the incumbent (the
``descend`` task: :func:`.count_descent.multistart`, stopped ``patience`` seconds after its last better
placement); each placement it finds comes as a message and raises the tree's incumbent at once
(:meth:`.level_search.Tree.raise_incumbent`; if that raises the rung's rate by more than ``restart`` the
rung starts again from a new tree), and when it stops the worker takes nodes too. A rung open after
``tail`` nodes starts once more from a new tree (the workers' pools differ by then, so its splits do
too). In the last ``last_call`` of the ladder's time a rung still open is raised once, halfway to the
bound (its tree kept), so that the minute ends with a proof nearer the rung than the last bound.
Whatever is open at the deadline is dropped; the workers in flight are killed.

**Leaves** at 20 x 30 are P(rho) at one count vector with 600 machines' worth of variables: CP-SAT can
take a minute on one that is feasible by a hair. A leaf is therefore first tried by the dive
(:func:`.dive.dive`: a placement at those counts by diving on the configuration LP, kept only when its
exact rate reaches rho), then by CP-SAT for at most ``leaf_seconds``; a leaf still undecided is set
aside and the search goes on; the leaves set aside are decided again when nothing else is open, with the
time left (the proof needs them all: a rung with one undecided at the deadline is not proven).

**Proof.** As in :mod:`.parallel`: a node answered at a rate below the current one stays valid; a rung is
proven only when no node is open, in flight or set aside.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import dive, report
from odrp.kinds.throughput.exact.config_bound import Columns, HasColumns
from odrp.kinds.throughput.exact.level_search import Tree, TreePath
from odrp.kinds.throughput.exact.parallel import Workers
from odrp.kinds.throughput.exact.rate_model import BoxSolver, Ranges
from odrp.kinds.throughput.exact.settings import DiveSettings, LadderSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance


def rung(best: float, bound: float, settings: LadderSettings = LadderSettings()) -> float:
    """The next rate to prove out of reach: max(R (1 + lift), B (1 - step)) while that is below B, else
    the bisection point between R and B."""
    target = max(best * (1 + settings.lift), bound * (1 - settings.step))
    return target if target < bound else best + settings.bisect * (bound - best)


@dataclass
class Climbed:
    """What the ladder reached: the incumbent (``best``, ``counts``), the lowest rung proven (``bound``;
    the bound it started from if none), and statistics."""

    best: float
    counts: Counts
    bound: float
    rungs: list[dict[str, Any]] = field(default_factory=list)
    restarts: int = 0
    """Trees given up for a new one: at the rate of a better placement from the descent (``restart``), or at the
    same rate after ``tail`` nodes."""
    descent: dict[str, Any] | None = None
    """The count descent's best rate and placements reported, and its own numbers once it has stopped
    (None: it did not run)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "best": self.best, "bound": self.bound, "rungs": self.rungs, "restarts": self.restarts,
            "descent": self.descent,
        }  # fmt: skip


def climb(
    inst: ThroughputInstance,
    best: float,
    counts: Counts,
    bound: float,
    columns: HasColumns | None,
    deadline: float | None,
    workers: Workers,
    gap: float = 1e-6,
    settings: LadderSettings | None = None,
) -> Climbed:
    """Rung after rung from ``bound`` and the placement ``counts`` (rate ``best``) until the gap is at most
    ``gap`` or ``deadline``, the nodes on ``workers``; with a deadline and two workers or more the last
    worker first runs the count descent from ``counts`` (:func:`.count_descent.multistart`
    with ``settings.patience``), whose placements raise the rungs' incumbent as they come, and joins the
    nodes when it stops. ``settings``: the ladder's (None: those the workers were given)."""
    settings = workers.settings.rungs if settings is None else settings
    workers.start()
    now = time.perf_counter()
    if workers.descent is None and deadline is not None and len(workers.procs) > 1:  # else it runs or has run
        workers.descend(counts, best, max(0.0, deadline - now), settings.patience)
    side = workers.side
    climbed = Climbed(best, counts, bound, descent=workers.descent)
    level = workers.settings.level_search
    tree = Tree(inst, best, counts, _rungs(bound, settings), columns, len(workers.procs), level)
    in_flight: dict[int, tuple[Tree, TreePath, Ranges, HasColumns | None, float | None]] = {}
    aside: list[tuple[TreePath, Ranges, HasColumns | None]] = []
    begin, set_aside, tailed = now, 0, False
    last_call = None if deadline is None else deadline - settings.last_call * (deadline - now)
    try:
        while deadline is None or time.perf_counter() < deadline:
            if (
                tree.stats.nodes >= settings.tail
                and (tree.open or in_flight or aside)
                and not (tree.stats.raised or tailed)
            ):
                # the rung is open after ``tail`` nodes: once, a new tree at the same rate
                tree = _renewed(tree, climbed.bound, len(workers.procs), settings)
                begin, set_aside, aside, tailed = time.perf_counter(), 0, [], True
                climbed.restarts += 1
            if last_call is not None and time.perf_counter() > last_call and not tree.stats.raised:
                tree.raise_rate(tree.rho + 0.5 * (climbed.bound - tree.rho))  # the last call: halfway up
            if not tree.open and not in_flight and not aside:  # the rung is proven: R* < rho
                climbed.bound = tree.rho
                report.bound(tree.rho)
                climbed.rungs.append(_rung_stats(tree, True, set_aside, begin))
                if climbed.bound - tree.best <= gap * tree.best:
                    break
                tree = _renewed(tree, climbed.bound, len(workers.procs), settings)
                begin, set_aside, tailed = time.perf_counter(), 0, False
                continue
            left = None if deadline is None else max(0.0, deadline - time.perf_counter())
            for proc in workers.procs:
                if proc is side or proc.pid in in_flight or not (tree.open or aside):
                    continue
                last_try = not tree.open  # the leaves set aside, with the time left
                path, node, parent = aside.pop() if last_try else tree.pop()
                seconds = None if last_try else settings.leaf_seconds
                plain = None if parent is None else Columns.of(parent)
                workers.send(proc, ("rung", tree.rho, node, plain, left, seconds, settings.branch))
                in_flight[proc.pid] = (tree, path, node, parent, seconds)
            got = workers.receive(None if deadline is None else max(0.0, deadline - time.perf_counter()))
            if got is None:
                continue
            proc, answer = got
            if proc is side:  # the descent: a better placement, or its end (the worker joins the nodes)
                placement = workers.side_answer(answer)
                if placement is None:
                    side = None
                    continue
                rho = tree.rho
                if tree.raise_incumbent(*placement) and tree.rho > rho * (1 + settings.restart):
                    tree = _renewed(tree, climbed.bound, len(workers.procs), settings)
                    begin, set_aside, aside = time.perf_counter(), 0, []
                    climbed.restarts += 1
                continue
            owner, path, node, parent, seconds = in_flight.pop(proc.pid)
            if owner is not tree:  # a node of a tree given up for a new one
                continue
            if answer.verdict == "undecided" and seconds is not None:
                aside.append((path, node, Columns.of(answer.columns)))
                set_aside += 1
                continue
            if not tree.take(path, node, parent, answer):
                break
    finally:
        busy = [proc for proc in workers.procs if proc.pid in in_flight]
        workers.stop(busy + ([side] if side is not None else []))
    if not climbed.rungs or climbed.rungs[-1]["rho"] != tree.rho or tree.open or aside:
        climbed.rungs.append(_rung_stats(tree, False, set_aside, begin))
    climbed.best, climbed.counts = tree.best, tree.counts  # type: ignore[assignment]
    return climbed


def _renewed(tree: Tree, bound: float, processes: int, settings: LadderSettings) -> Tree:
    """A new tree for the rung below ``bound`` at ``tree``'s incumbent, its root from ``tree``'s last columns."""
    return Tree(tree.inst, tree.best, tree.counts, _rungs(bound, settings), tree.last, processes, tree.settings)


def _rungs(bound: float, settings: LadderSettings) -> Callable[[float], float]:
    """The rates of a rung below ``bound`` as a function of the incumbent's rate (:func:`rung`)."""
    return lambda best: rung(best, bound, settings)


def _rung_stats(tree: Tree, proven: bool, aside: int, begin: float) -> dict[str, Any]:
    s = tree.stats
    return {
        "rho": tree.rho, "proven": proven, "nodes": s.nodes, "pruned": s.pruned, "leaves": s.leaves,
        "aside": aside, "incumbents": list(s.incumbents), "raised": list(s.raised), "s": time.perf_counter() - begin,
    }  # fmt: skip


def leaf_solver(
    inst: ThroughputInstance, solve_box: BoxSolver, settings: DiveSettings = DiveSettings()
) -> Callable[[float | None], BoxSolver]:
    """The ladder's leaves (worker side): P(rho) tried by the dive first (a placement only when its exact rate
    reaches rho), then by ``solve_box`` for at most the given seconds (None: until the deadline). The dives
    share one pool of configurations."""
    pool = dive.Pool(len(inst.machine_classes))

    def with_limit(seconds: float | None) -> BoxSolver:
        def solve(
            rho: float, box: Ranges, limit: float | None, kept: list[int] | None = None
        ) -> tuple[str, Counts | None]:
            if kept is not None:  # P(rho) on a subset of the components: no dive (it places every component)
                return solve_box(rho, box, limit, kept)
            if all(lo == hi for lo, hi in box):
                placed = dive.dive(inst, rho, [lo for lo, _ in box], limit, pool, settings)
                if placed is not None and rate(inst, placed) >= rho:
                    return "feasible", placed
            if seconds is not None:
                capped = time.perf_counter() + seconds
                limit = capped if limit is None else min(limit, capped)
            return solve_box(rho, box, limit)

        return solve

    return with_limit
