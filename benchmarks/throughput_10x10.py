"""Throughput 10 x 10: the exact method (CP-SAT) on the random seeds, wall and CPU seconds side by side.

    python -m benchmarks.throughput_10x10                    # seeds 0-2, 60 s each
    python -m benchmarks.throughput_10x10 --seeds 0 2 --time-limit 120 --solutions out/10x10
    python -m benchmarks.throughput_10x10 --cpu-clock        # deadlines on this process's CPU clock
    python -m benchmarks.throughput_10x10 --cpu-clock --seeds 0 --proof out/10x10 --time-limit 200

``--proof DIR``: only the last proof, the level search at R(x) (1 + 5e-7) started from the placement x
in ``DIR/10x10-seed{seed}.json`` (written by ``--solutions``; at R*, this is the proof of optimality
the 60 s runs do not finish), through the exact method's own level round; prints its nodes and time.

``--cpu-clock`` replaces ``time.perf_counter`` by ``time.process_time`` before the run, so that the
method's deadlines count the CPU seconds it got: on a shared machine that is what a quiet machine's 60
s would give (CP-SAT's own limits stay in wall seconds; a leaf it stops early can end a run as
``feasible`` instead of ``time_limit``).

Prints a markdown table: status, incumbent, bound, gap, the level search's nodes and leaves,
and wall and CPU seconds of ``run_method`` (``benchmarks.throughput.timed``), with the
``uptime`` load before and after (the machine may be shared: wall time is then far above CPU time).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.throughput import cpu_seconds, random_case, timed, uptime
from odrp.models import throughput as exact_throughput
from odrp.problems.throughput import parse_solution, rate


def table(seeds: list[int], time_limit: float, solutions: Path | None = None) -> None:
    print(f"uptime: {uptime()}\n")
    print(
        "| 10 x 10 seed | status | verified | R (incumbent) | bound | gap | config bound | level-search nodes | leaves "
        "| wall s | CPU s |"
    )
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        result, seconds, cpu = timed(random_case(seed, 10, 10), "exact", solver="cpsat", time_limit=time_limit)
        if solutions is not None:
            solutions.mkdir(parents=True, exist_ok=True)
            (solutions / f"10x10-seed{seed}.json").write_text(json.dumps(result.solution))
        stats = result.metrics["method_stats"]
        searches = [r["level_search"] for r in stats["rounds"] if "level_search" in r]
        count = {key: sum(s.get(key, 0) for s in searches) for key in ("nodes", "leaves")}
        print(
            f"| {seed} | {result.status} | {'yes' if result.verified else 'NO'} | {result.objective:.3f} | "
            f"{result.bound:.3f} | {100 * result.gap:.2f}% | "
            f"{stats['config_bound']:.3f} | {count['nodes']} | {count['leaves']} | {seconds:.1f} | {cpu:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def proof_table(seeds: list[int], time_limit: float, solutions: Path) -> None:
    """The level search at R(x) (1 + 5e-7) from each seed's saved placement x (gap 1e-6: the final target)."""
    print(f"uptime: {uptime()}\n")
    print("| 10 x 10 seed | R(x) | rho | proven | nodes | pruned | leaves | boxes refuted | wall s | CPU s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, 10, 10)
        counts = parse_solution(inst, json.loads((solutions / f"10x10-seed{seed}.json").read_text()))
        best = rate(inst, counts)
        start, cpu = time.perf_counter(), cpu_seconds()
        searched = exact_throughput._level_round(
            inst, best, counts, best * (1 + 1e-6), 0.5, 1e-6, "cpsat", start + time_limit, True, 1, {"rounds": []}, None
        )
        s = searched.stats
        print(
            f"| {seed} | {best:.6f} | {searched.rho:.6f} | {'yes' if searched.proven else 'no'} | {s.nodes} | "
            f"{s.pruned} | {s.leaves} | {s.boxes_refuted} | {time.perf_counter() - start:.1f} | "
            f"{cpu_seconds() - cpu:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solutions", type=Path, default=None, help="write each incumbent's solution JSON here")
    parser.add_argument("--cpu-clock", action="store_true", help="deadlines on the process CPU clock")
    parser.add_argument("--proof", type=Path, default=None, help="only the final proof from DIR/10x10-seed{seed}.json")
    args = parser.parse_args()
    if args.cpu_clock:
        time.perf_counter = time.process_time
        print("--cpu-clock: deadlines and the 'wall s' column on the process CPU clock\n")
    if args.proof is not None:
        proof_table(args.seeds, args.time_limit, args.proof)
    else:
        table(args.seeds, args.time_limit, args.solutions)


if __name__ == "__main__":
    main()
