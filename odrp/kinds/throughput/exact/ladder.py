"""A ladder of level searches that lowers the bound of a large instance, on the worker processes (stop 18).

Above ``CONFIG_UP_TO`` components x machines the exact method's 60 s path got its bound from the
configuration LP (:mod:`.config_bound`) alone and spent the rest of its time on the incumbent (the count
descent, :mod:`.count_descent`). The configuration LP cannot see that a component's instances all come
in one size (the levels' integrality); the level search (:mod:`.level_search`) can, and refutes rates
the LP cannot (20 x 30 seed 1: 149.42, where the LP refutes nothing below 152.2). The rates come down a
ladder:

    rho_k = max(R (1 + LIFT), B (1 - STEP))          (B: the last rate proven out of reach),

each rung a level search whose proof is the new bound B = rho_k and whose placements found raise the
incumbent R (the rung's rate then rises to the formula at the new R, as after any new incumbent in
:class:`.level_search.Tree`: nothing decided is lost). With ``STEP`` = 1% and ``LIFT`` = 0.99% the first
rung is, as soon as the incumbent is good, the rate whose proof leaves a gap below 1%; once R (1 + LIFT)
>= B the rungs bisect between R and B until the gap asked for. Every proven rung is a bound at once: a
rung cut by the deadline loses only itself.

**Where.** The tree stays in this process (:func:`climb`); its nodes go to the workers of
:class:`.parallel.Workers` (the ``rung`` task: :func:`.level_search.evaluate` with the leaves below),
two on the benchmark machine. The last worker first runs the count descent from the incumbent (the
``descend`` task: :func:`.count_descent.multistart`, stopped ``PATIENCE`` seconds after its last better
placement); each placement it finds comes as a message and raises the tree's incumbent at once
(:meth:`.level_search.Tree.raise_incumbent`; if that raises the rung's rate by more than ``RESTART`` the rung
starts again from a new tree, stop 19), and when it stops the worker takes nodes too. A rung open after ``TAIL``
nodes starts once more from a new tree. Measured at
20 x 30 (CPU s from the packing start): the descent reaches its best within 9-16 s and nothing after, so
most of the minute goes to the nodes on both cores. Whatever is open at the deadline is dropped; the
workers in flight are killed.

**Leaves** at 20 x 30 are P(rho) at one count vector with 600 machines' worth of variables: CP-SAT can
take a minute on one that is feasible by a hair. A leaf is therefore first tried by the dive
(:func:`.dive.dive`: a placement at those counts by diving on the configuration LP, kept only when its
exact rate reaches rho), then by CP-SAT for at most ``LEAF_SECONDS``; a leaf still undecided is set aside
and the search goes on; the leaves set aside are decided again when nothing else is open, with the time
left (the proof needs them all: a rung with one undecided at the deadline is not proven). (At 20 x 30 the
rungs near 1% met no leaf at all: their nodes are pruned by the LP or split.)

**Proof.** As in :mod:`.parallel`: a node answered at a rate below the current one stays valid; a rung is
proven only when no node is open, in flight or set aside.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import dive
from odrp.kinds.throughput.exact.level_search import BoxSolver, Columns, HasColumns, Ranges, Tree, TreePath
from odrp.kinds.throughput.instance import Counts, ThroughputInstance

if TYPE_CHECKING:
    from odrp.kinds.throughput.exact.parallel import Workers

LIFT = 0.0099
"""A rung is at least this far (relative) above the incumbent: its proof leaves a gap below 1%."""
STEP = 0.005
"""A rung is at least this far (relative) below the last bound proven."""
BISECT = 0.5
"""Below 1% the rungs are at incumbent + BISECT (bound - incumbent)."""
LAST_CALL = 0.4
"""In the last ``LAST_CALL`` of the ladder's time, a rung still open is raised once, halfway to the bound (its
tree kept: a node refuted at a rate is refuted at every higher one), so that the minute ends with a proof
nearer the rung than the last bound. Measured at 20 x 30 seed 0 (``benchmarks.throughput_20x30 --path``, CPU
clock, load 3-6): without it the rung at 412.993 (1% above the incumbent) was open after 236 nodes and the
bound stayed the configuration bound 414.989 (1.48%); with 0.25, 413.991 proven (1.23%); with 0.4, 413.991
and then 413.492 proven (1.11%). Seeds 1 and 2 prove their 1% rung long before (after 9-20 s)."""
BRANCH = "spread"
"""The split rule of the ladder's nodes (:data:`.level_search.BRANCH`, whose default is ``spread`` too; ``product``
was measured there on 10 x 10 and not kept). 20 x 30 seed 1, 60 s wall, quiet machine: with ``spread`` the 1% rung
(149.420) is proven in 13 nodes and 11 s, with ``product`` it took 45 nodes and was raised by the last call first (bound
149.513, 1.05%); seeds 0 and 2 ended the same with both (1.11%, 0.74%)."""
RESTART: float | None = 1e-4
"""A better placement from the count descent that raises the rung's rate by more than this (relative) starts the
rung again from a new tree at its rate (the nodes in flight are dropped) instead of raising the open tree's rate
(None: never). A tree split at a lower rate is a worse tree for the higher one: at 20 x 30 seed 0 (config bound
414.989, descent 408.945 after about 12 s) the ladder begun at the packing start (rung 412.914 = B (1 - STEP))
and at 408.945 (rung 412.993) prove their first rung in 393-461 and 185-237 nodes (``ladder.climb`` alone, 2
workers). Measured on the 60 s path (wall, CP-SAT, quiet machine, seeds 0/1/2 of 20 x 30): raising in place
(1e-3) 1.05%/0.99%/0.56%, restarting on any rise (0) 0.99%/1.49%/0.56%, and with ``TAIL`` 0.99%/1.02-1.05%/0.56%,
1e-4 0.99%/0.99% (seeds 0 and 1). The search is heavy-tailed (seed 1's rung at 149.42 took 15-23 nodes in some
runs and was open after 250-600 in others: the workers' pools, hence the trees, depend on timing), so these are
single runs, and 1e-4 was chosen on them: it restarts seed 0's 0.02% rise and not seed 1's 0.003%."""
TAIL: int | None = 250
"""A rung open after this many nodes (and not raised) starts once more from a new tree at the same rate: the
pools of the workers differ by then, so the new tree's splits do too (None: never). Against the heavy tail
(``RESTART``): the first rungs that met the 1% target took 15-240 nodes, the ones that did not 330-1,300. One
run with it (seed 1, wall): the restarted tree was open too, and the last call ended at 1.02% against 1.49%."""
LEAF_SECONDS = 3.0
"""CP-SAT's time on a leaf the dive did not place before the leaf is set aside (decided again at the end)."""
PATIENCE = 10.0
"""The count descent on the second worker stops after this many seconds without a better placement (then
that worker evaluates nodes too). Measured at 20 x 30 from the packing start (CPU s): seed 0 reached its
best (408.945) after 12.6 s, seed 1 (147.955) after 8.7 s, and nothing better in the 50 s of the run."""


def rung(best: float, bound: float) -> float:
    """The next rate to prove out of reach: max(R (1 + LIFT), B (1 - STEP)) while that is below B, else
    the bisection point between R and B."""
    target = max(best * (1 + LIFT), bound * (1 - STEP))
    return target if target < bound else best + BISECT * (bound - best)


@dataclass
class Climbed:
    """What the ladder reached: the incumbent (``best``, ``counts``), the lowest rung proven (``bound``;
    the bound it started from if none), and statistics."""

    best: float
    counts: Counts
    bound: float
    rungs: list[dict[str, Any]] = field(default_factory=list)
    restarts: int = 0
    """Trees given up for a new one: at the rate of a better placement from the descent (``RESTART``), or at the
    same rate after ``TAIL`` nodes."""
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
    descend: bool = True,
) -> Climbed:
    """Rung after rung from ``bound`` and the placement ``counts`` (rate ``best``) until the gap is at most
    ``gap`` or ``deadline``, the nodes on ``workers``; with ``descend`` (and a deadline and two workers or
    more) the last worker first runs the count descent from ``counts`` (:func:`.count_descent.multistart`
    with ``PATIENCE``), whose placements raise the rungs' incumbent as they come, and joins the nodes when
    it stops."""
    workers.start()
    now = time.perf_counter()
    side = None
    if descend and deadline is not None and len(workers.procs) > 1:
        side = workers.procs[-1]
        workers.send(side, ("descend", counts, max(0.0, deadline - now), PATIENCE))
    climbed = Climbed(best, counts, bound)
    if side is not None:
        climbed.descent = {"rate": best, "placements": 0, "finished": False}
    tree = Tree(inst, best, counts, _rungs(bound), columns, len(workers.procs))
    in_flight: dict[int, tuple[Tree, TreePath, Ranges, HasColumns | None, float | None]] = {}
    aside: list[tuple[TreePath, Ranges, HasColumns | None]] = []
    begin, set_aside, tailed = now, 0, False
    last_call = None if deadline is None else deadline - LAST_CALL * (deadline - now)
    try:
        while deadline is None or time.perf_counter() < deadline:
            if (
                TAIL
                and tree.stats.nodes >= TAIL
                and (tree.open or in_flight or aside)
                and not (tree.stats.raised or tailed)
            ):
                # the rung is open after TAIL nodes: once, a new tree at the same rate
                tree = _renewed(tree, climbed.bound, len(workers.procs))
                begin, set_aside, aside, tailed = time.perf_counter(), 0, [], True
                climbed.restarts += 1
            if last_call is not None and time.perf_counter() > last_call and not tree.stats.raised:
                tree.raise_rate(tree.rho + 0.5 * (climbed.bound - tree.rho))  # the last call: halfway up
            if not tree.open and not in_flight and not aside:  # the rung is proven: R* < rho
                climbed.bound = tree.rho
                climbed.rungs.append(_rung_stats(tree, True, set_aside, begin))
                if climbed.bound - tree.best <= gap * tree.best:
                    break
                tree = _renewed(tree, climbed.bound, len(workers.procs))
                begin, set_aside, tailed = time.perf_counter(), 0, False
                continue
            left = None if deadline is None else max(0.0, deadline - time.perf_counter())
            for proc in workers.procs:
                if proc is side or proc.pid in in_flight or not (tree.open or aside):
                    continue
                last_try = not tree.open  # the leaves set aside, with the time left
                path, node, parent = aside.pop() if last_try else tree.pop()
                seconds = None if last_try else LEAF_SECONDS
                plain = None if parent is None else Columns.of(parent)
                workers.send(proc, ("rung", tree.rho, node, plain, left, seconds, BRANCH))
                in_flight[proc.pid] = (tree, path, node, parent, seconds)
            got = workers.receive(None if deadline is None else max(0.0, deadline - time.perf_counter()))
            if got is None:
                continue
            proc, answer = got
            if proc is side:  # the descent: a better placement, or its end (the worker joins the nodes)
                descent = climbed.descent
                if answer[0] == "placement":
                    rho = tree.rho
                    if (
                        tree.raise_incumbent(answer[1], answer[2])
                        and RESTART is not None
                        and tree.rho > rho * (1 + RESTART)
                    ):
                        tree = _renewed(tree, climbed.bound, len(workers.procs))
                        begin, set_aside, aside = time.perf_counter(), 0, []
                        climbed.restarts += 1
                    descent.update(rate=max(descent["rate"], answer[1]), placements=descent["placements"] + 1)  # type: ignore[union-attr]
                else:
                    side = None
                    descent.update(answer[1], finished=True)  # type: ignore[union-attr]
                continue
            owner, path, node, parent, seconds = in_flight.pop(proc.pid)
            if owner is not tree:  # a node of a tree given up for a new one (RESTART)
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


def _renewed(tree: Tree, bound: float, processes: int) -> Tree:
    """A new tree for the rung below ``bound`` at ``tree``'s incumbent, its root from ``tree``'s last columns."""
    return Tree(tree.inst, tree.best, tree.counts, _rungs(bound), tree.last, processes)


def _rungs(bound: float) -> Callable[[float], float]:
    """The rates of a rung below ``bound`` as a function of the incumbent's rate (:func:`rung`)."""
    return lambda best: rung(best, bound)


def _rung_stats(tree: Tree, proven: bool, aside: int, begin: float) -> dict[str, Any]:
    s = tree.stats
    return {
        "rho": tree.rho, "proven": proven, "nodes": s.nodes, "pruned": s.pruned, "leaves": s.leaves,
        "aside": aside, "incumbents": list(s.incumbents), "raised": list(s.raised), "s": time.perf_counter() - begin,
    }  # fmt: skip


def leaf_solver(inst: ThroughputInstance, solve_box: BoxSolver) -> Callable[[float | None], BoxSolver]:
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
                placed = dive.dive(inst, rho, [lo for lo, _ in box], limit, pool)
                if placed is not None and rate(inst, placed) >= rho:
                    return "feasible", placed
            if seconds is not None:
                capped = time.perf_counter() + seconds
                limit = capped if limit is None else min(limit, capped)
            return solve_box(rho, box, limit)

        return solve

    return with_limit
