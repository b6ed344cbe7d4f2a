"""Throughput 10 x 10: the exact method (CP-SAT) on the random seeds, wall and CPU seconds side by side.

    python -m benchmarks.throughput_10x10                    # seeds 0-2, 60 s each
    python -m benchmarks.throughput_10x10 --seeds 0 1 2 3 4 5 6 7 8 9      # the seeds the defaults were tuned on
    python -m benchmarks.throughput_10x10 --seeds 10 11 12 13 14 15 16 17 18 19  # held out (and 20-29)
    python -m benchmarks.throughput_10x10 --seeds 0 2 --time-limit 120 --solutions out/10x10
    python -m benchmarks.throughput_10x10 --seeds 0 --proof out/10x10 --time-limit 200
    python -m benchmarks.throughput_10x10 --processes 1        # the level search in this process

``--proof DIR``: only the last proof, the level search at R(x) (1 + 5e-7) started from the placement x
in ``DIR/10x10-seed{seed}.json`` (written by ``--solutions``; at R*, this is the proof of optimality),
through the exact method's own level round (:func:`odrp.kinds.throughput.exact.solve.level_round`); prints
its nodes and time. ``--proof DIR --rate RHO``: the level search at RHO (or above R(x) (1 + 5e-7), after a
better placement) from the same placement: a search above R* that ends, to compare settings (e.g. 10 x 10
seed 2 at 195.6).

``--branch RULE``: the level search's split rule (:attr:`.settings.LevelSearchSettings.branch`: spread, product,
width, size, mass); ``--big MODE``: what it does with the big components (first, refute, both, off). Both are
passed to the method as its settings, in this process and in the workers.

``--processes P``: worker processes of the level search (default 2; 1: in this process). The proof table
reports the level search's nodes per wall second and per CPU second.

Prints a markdown table: status, incumbent, bound, gap, the level search's nodes and leaves, and wall and
CPU seconds of ``run_method`` (``benchmarks.throughput.timed``), where the wall seconds went (the starts, the
P(rho) rounds, the configuration bound, the packing search and count descent before the first level search,
the level searches), with the ``uptime`` load before and after (the machine may be shared: wall time is then
far above CPU time). The 10 x 10 defaults were tuned on seeds 0-9; seeds 10-29 are held out.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import time
from pathlib import Path

from benchmarks.throughput import random_case, timed, uptime
from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import parallel
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.exact.solve import level_round
from odrp.kinds.throughput.exact.targets import Targets
from odrp.kinds.throughput.instance import parse_solution


def table(seeds: list[int], time_limit: float, settings: ThroughputSettings, solutions: Path | None = None) -> None:
    print(f"uptime: {uptime()}\n")
    print(
        "| 10 x 10 seed | processes | status | verified | R (incumbent) | bound | gap | config bound "
        "| level-search nodes | leaves | wall s | CPU s | start s | P(rho) s | config s | descent s | level s |"
    )
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        result, seconds, cpu = timed(
            random_case(seed, 10, 10), "exact", solver="cpsat", time_limit=time_limit, options=settings
        )
        if solutions is not None:
            solutions.mkdir(parents=True, exist_ok=True)
            (solutions / f"10x10-seed{seed}.json").write_text(json.dumps(result.solution))
        stats = result.metrics["method_stats"]
        searches = [r["level_search"] for r in stats["rounds"] if "level_search" in r]
        count = {key: sum(s.get(key, 0) for s in searches) for key in ("nodes", "leaves")}
        stages = stats.get("stage_s", {})
        rounds_s = sum(r.get("seconds", 0.0) for r in stats["rounds"] if "level_search" not in r)
        level_s = sum(s.get("seconds", 0.0) for s in searches)
        where = " | ".join(f"{x:.1f}" for x in (stages.get("start", 0.0), rounds_s, stages.get("config", 0.0)))
        where += f" | {stages.get('descent', 0.0):.1f} | {level_s:.1f}"
        print(
            f"| {seed} | {settings.processes} | {result.status} | {'yes' if result.verified else 'NO'} | "
            f"{result.objective:.3f} | {result.bound:.3f} | {100 * result.gap:.2f}% | "
            f"{stats['config_bound']:.3f} | {count['nodes']} | {count['leaves']} | {seconds:.1f} | {cpu:.1f} | "
            f"{where} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def proof_table(
    seeds: list[int], time_limit: float, settings: ThroughputSettings, solutions: Path, fixed_rate: float | None = None
) -> None:
    """The level search at R(x) (1 + 5e-7) from each seed's saved placement x (gap 1e-6: the final target), or at
    max(``fixed_rate``, R (1 + 5e-7)). Workers are started and imported before the clocks start; CPU s: this
    process's and the workers' (as they report it with every answer)."""
    print(f"uptime: {uptime()}\n")
    print(
        "| 10 x 10 seed | processes | R(x) | rho | proven | nodes | pruned | leaves | boxes refuted "
        "| wall s | CPU s | of which parent | nodes / wall s | nodes / CPU s | a worker idle s |"
    )
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    processes = settings.processes
    for seed in seeds:
        inst = random_case(seed, 10, 10)
        counts = parse_solution(inst, json.loads((solutions / f"10x10-seed{seed}.json").read_text()))
        best = rate(inst, counts)
        nodes = parallel.Workers(inst, processes, "cpsat", settings) if processes > 1 else None
        if nodes is not None:
            nodes.start()
            nodes.warm()
        if fixed_rate is None:  # the rate search's last target, R (1 + 5e-7)
            next_rho = Targets(best * (1 + 1e-6), 0.5, 1e-6, settings.level_wide)
        else:

            def next_rho(found: float, fixed: float = fixed_rate) -> float:
                return max(fixed, found * (1 + 5e-7))

        wall, own = time.perf_counter(), time.process_time()
        workers_cpu = 0.0 if nodes is None else nodes.cpu_seconds()
        with nodes or contextlib.nullcontext():
            searched = level_round(
                inst, best, counts, next_rho, "cpsat", wall + time_limit, settings, Cache.of(settings),
                {"rounds": []}, None, nodes,
            )  # fmt: skip
            workers_cpu = (0.0 if nodes is None else nodes.cpu_seconds()) - workers_cpu
        wall, own = time.perf_counter() - wall, time.process_time() - own
        cpu = own + workers_cpu
        s = searched.stats
        print(
            f"| {seed} | {processes} | {best:.6f} | {searched.rho:.6f} | {'yes' if searched.proven else 'no'} | "
            f"{s.nodes} | {s.pruned} | {s.leaves} | {s.boxes_refuted} | {wall:.1f} | {cpu:.1f} | "
            f"{own:.1f} | {s.nodes / wall:.1f} | {s.nodes / cpu:.1f} | {s.starved:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = ThroughputSettings()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solutions", type=Path, default=None, help="write each incumbent's solution JSON here")
    parser.add_argument("--proof", type=Path, default=None, help="only the final proof from DIR/10x10-seed{seed}.json")
    parser.add_argument(
        "--processes", type=int, default=defaults.processes, help="worker processes of the level search"
    )
    parser.add_argument("--rate", type=float, default=None, help="with --proof: the search at this rate instead")
    parser.add_argument(
        "--branch",
        choices=("spread", "product", "width", "size", "mass"),
        default=defaults.level_search.branch,
        help="the level search's split rule",
    )
    parser.add_argument(
        "--big",
        choices=("first", "refute", "both", "off"),
        default=defaults.level_search.big,
        help="split the big components first, refute nodes by P(rho) on them alone",
    )
    args = parser.parse_args()
    level = dataclasses.replace(defaults.level_search, branch=args.branch, big=args.big)
    settings = dataclasses.replace(defaults, processes=args.processes, level_search=level)
    if args.proof is not None:
        proof_table(args.seeds, args.time_limit, settings, args.proof, args.rate)
    else:
        table(args.seeds, args.time_limit, settings, args.solutions)


if __name__ == "__main__":
    main()
