"""Throughput at 20 components x 30 machines: which side of the gap is weak, and the improvement search.

    python -m benchmarks.throughput_20x30 --descent --seeds 0 1 2 --orders 0 1 2   # the descent, no deadline
    python -m benchmarks.throughput_20x30 --level-search 1:149.4 0:410.3 --time-limit 720
    python -m benchmarks.throughput_20x30 --path --seeds 0 1 2                      # the 60 s path

``--descent``: :func:`.count_descent.search` without a deadline from the packing start (the start of the
60 s path: :func:`.starts.warm_start`, then :func:`.starts.packing_start`), once per random move order
(``--orders``): its rate, LPs, dives and CPU seconds (the numbers do not depend on the machine, only the
seconds do).

``--level-search SEED:RHO``: :mod:`.level_search` at the fixed rate RHO from the packing start (leaves:
P(rho) with CP-SAT on the leaf's count vector, in this process), deadline ``--time-limit`` wall seconds. A
placement found means R* >= RHO (the incumbent was the weak side); the tree emptied means R* < RHO (a bound
that sees the levels' integrality proves RHO); else the node counts say how far it got.
``--path``: the exact method (CP-SAT) with ``--time-limit`` (default 60) wall seconds, with the count
descent's best rate and when it found it, and the ladder's rungs (:mod:`odrp.kinds.throughput.exact.ladder`).
Every run prints the ``uptime`` load before and after (on a shared machine wall seconds buy less CPU).
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.throughput import THROUGHPUT, cpu_seconds, random_case, uptime
from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import bounds, count_descent, starts
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.solve import level_round
from odrp.kinds.throughput.exact.targets import Targets
from odrp.kinds.throughput.instance import Counts, ThroughputInstance
from odrp.run import run_method


def packing_start(inst: ThroughputInstance) -> Counts:
    """The 60 s path's start at this size: the warm start, then the packing search above it."""
    warm, _, _ = starts.warm_start(inst)
    assert warm is not None
    upper = bounds.fluid_bound(inst)
    assert upper is not None
    return starts.packing_start(inst, warm, upper)[0]


def descent_table(seeds: list[int], orders: list[int]) -> None:
    print(f"uptime: {uptime()}\n")
    print("| 20 x 30 seed | start | order seed | descent | LPs | dives | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, 20, 30)
        start = packing_start(inst)
        reached = []
        for order in orders:
            cpu = cpu_seconds()
            found, stats = count_descent.search(inst, start, None, seed=order)
            reached.append(rate(inst, found))
            print(
                f"| {seed} | {rate(inst, start):.3f} | {order} | {reached[-1]:.3f} | {stats['lps']:.0f} | "
                f"{stats['dives']:.0f} | {cpu_seconds() - cpu:.1f} |",
                flush=True,
            )
        print(f"| {seed} | | mean / best | {statistics.mean(reached):.3f} / {max(reached):.3f} | | | |", flush=True)
    print(f"\nuptime: {uptime()}")


def level_search_table(cases: list[tuple[int, float]], time_limit: float) -> None:
    """The level search at a fixed rate (wall-clock deadline, one process)."""
    print(f"uptime: {uptime()}\n")
    print("| 20 x 30 seed | start | rho | verdict | incumbents | nodes | pruned | leaves | undecided | CPU s |")
    print("|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    settings = ThroughputSettings(processes=1)
    for seed, rho in cases:
        inst = random_case(seed, 20, 30)
        start = packing_start(inst)
        best = rate(inst, start)
        cpu = cpu_seconds()
        deadline = time.perf_counter() + time_limit
        # bound rho and reach 1: every target of the search is rho itself (the incumbent is far below it)
        targets = Targets(rho, 1.0, 1e-6, settings.level_wide)
        stats: dict = {"rounds": []}
        searched = level_round(inst, best, start, targets, "cpsat", deadline, settings, Cache.of(settings), stats)
        s = searched.stats
        verdict = "refuted" if searched.proven else ("placement found" if s.incumbents else "open")
        found = " ".join(f"{r:.3f}" for r in s.incumbents) or "-"
        print(
            f"| {seed} | {best:.3f} | {searched.rho:.3f} | {verdict} | {found} | {s.nodes} | {s.pruned} | "
            f"{s.leaves} | {s.undecided} | {cpu_seconds() - cpu:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def path_table(seeds: list[int], time_limit: float) -> None:
    """The 60 s path (wall clock), with the count descent's best and the ladder's rungs."""
    print(f"uptime: {uptime()}\n")
    print(
        "| 20 x 30 seed | status | verified | R (incumbent) | bound | gap | start | config bound | descent "
        "| descent best at s | ladder rungs (rate: nodes, proven) | wall s | CPU s |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, 20, 30)
        begin, cpu = time.perf_counter(), cpu_seconds()
        result = run_method(THROUGHPUT, inst, "exact", solver="cpsat", time_limit=time_limit)
        wall, cpu = time.perf_counter() - begin, cpu_seconds() - cpu
        stats = result.metrics["method_stats"]
        descent = stats.get("count_descent", {})
        rungs = stats.get("ladder", {}).get("rungs", [])
        ladder = ", ".join(f"{r['rho']:.3f}: {r['nodes']}{' proven' if r['proven'] else ''}" for r in rungs)
        print(
            f"| {seed} | {result.status} | {'yes' if result.verified else 'no'} | {result.objective:.3f} | "
            f"{result.bound:.3f} | {100 * result.gap:.2f}% | {stats['start_rate']:.3f} | "
            f"{stats['config_bound']:.3f} | {descent.get('rate', 0.0):.3f} | {descent.get('at', 0.0):.1f} | "
            f"{ladder or '-'} | {wall:.1f} | {cpu:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--descent", action="store_true", help="the count descent without a deadline")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--orders", type=int, nargs="+", default=[0, 1, 2], help="move-order seeds of the descent")
    parser.add_argument("--level-search", nargs="+", default=None, metavar="SEED:RHO")
    parser.add_argument("--path", action="store_true", help="the exact method's 60 s path")
    parser.add_argument("--time-limit", type=float, default=None, help="wall seconds (level search 720, path 60)")
    args = parser.parse_args()
    if args.descent:
        descent_table(args.seeds, args.orders)
    if args.level_search:
        cases = [(int(s), float(r)) for s, r in (case.split(":") for case in args.level_search)]
        level_search_table(cases, args.time_limit or 720.0)
    if args.path:
        path_table(args.seeds, args.time_limit or 60.0)


if __name__ == "__main__":
    main()
