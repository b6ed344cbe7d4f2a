"""Throughput 10 x 10: the exact method (CP-SAT) on the random seeds, wall and CPU seconds side by side.

    python -m benchmarks.throughput_10x10                    # seeds 0-2, 60 s each
    python -m benchmarks.throughput_10x10 --seeds 0 2 --time-limit 120 --solutions out/10x10
    python -m benchmarks.throughput_10x10 --cpu-clock        # deadlines on this process's CPU clock
    python -m benchmarks.throughput_10x10 --cpu-clock --seeds 0 --proof out/10x10 --time-limit 200
    python -m benchmarks.throughput_10x10 --processes 1        # the level search in this process
    python -m benchmarks.throughput_10x10 --seeds 2 --stall-nodes 0   # never raise a stalled search (main 819b7c1)

``--proof DIR``: only the last proof, the level search at R(x) (1 + 5e-7) started from the placement x
in ``DIR/10x10-seed{seed}.json`` (written by ``--solutions``; at R*, this is the proof of optimality
the 60 s runs do not finish), through the exact method's own level round; prints its nodes and time.

``--cpu-clock`` replaces ``time.perf_counter`` by ``time.process_time`` before the run, so that the
method's deadlines count the CPU seconds it got: on a shared machine that is what a quiet machine's 60
s would give (CP-SAT's own limits stay in wall seconds; a leaf it stops early can end a run as
``feasible`` instead of ``time_limit``). With ``--processes`` P > 1 the clock is this process's CPU
plus the level-search workers' CPU divided by P (:func:`odrp.kinds.throughput.exact.parallel.worker_cpu_seconds`;
the workers count their own deadlines on their CPU clock): the wall time of a quiet machine with P
cores if the workers never wait for a node, so optimistic by the time they do.

``--stall-nodes N``: ``level_search.STALL_NODES`` (a bisecting level search without a new incumbent for N nodes
raises its rate halfway to the bound; 0: never, the rule before stop 17).

``--proof DIR --rate RHO``: the level search at RHO (or above R(x) (1 + 5e-7), after a better placement) from the
same placement: a search above R* that ends, to compare settings (e.g. 10 x 10 seed 2 at 195.6).

``--branch RULE``, ``--strong K``: ``level_search.BRANCH`` and ``level_search.STRONG`` (the split's component; strong
branching on K candidates), in this process and in the workers. ``--node-seconds LO HI``: ``level_search.NODE_SECONDS``
(P(rho) on whole nodes; ``0 0``: never, the search before stop 21).

``--big first|refute|both|off``: ``level_search.BIG`` (``off``: the search before stop 23, no big component split
first, no node refuted by P(rho) on the big components alone).

``--processes P``: worker processes of the level search (default 2; 1: in this process, the code path
before stop 16). The tables report the level search's nodes per wall second and per CPU second.

Prints a markdown table: status, incumbent, bound, gap, the level search's nodes and leaves,
and wall and CPU seconds of ``run_method`` (``benchmarks.throughput.timed``), with the
``uptime`` load before and after (the machine may be shared: wall time is then far above CPU time).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path

from benchmarks.throughput import random_case, timed, uptime
from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import level_search, parallel
from odrp.kinds.throughput.exact import solve as exact_throughput
from odrp.kinds.throughput.instance import parse_solution


def table(seeds: list[int], time_limit: float, processes: int, solutions: Path | None = None) -> None:
    print(f"uptime: {uptime()}\n")
    print(
        "| 10 x 10 seed | processes | status | verified | R (incumbent) | bound | gap | config bound "
        "| level-search nodes | leaves | wall s | CPU s |"
    )
    print("|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        result, seconds, cpu = timed(
            random_case(seed, 10, 10), "exact", solver="cpsat", time_limit=time_limit, options={"processes": processes}
        )
        if solutions is not None:
            solutions.mkdir(parents=True, exist_ok=True)
            (solutions / f"10x10-seed{seed}.json").write_text(json.dumps(result.solution))
        stats = result.metrics["method_stats"]
        searches = [r["level_search"] for r in stats["rounds"] if "level_search" in r]
        count = {key: sum(s.get(key, 0) for s in searches) for key in ("nodes", "leaves")}
        print(
            f"| {seed} | {processes} | {result.status} | {'yes' if result.verified else 'NO'} | "
            f"{result.objective:.3f} | {result.bound:.3f} | {100 * result.gap:.2f}% | "
            f"{stats['config_bound']:.3f} | {count['nodes']} | {count['leaves']} | {seconds:.1f} | {cpu:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def proof_table(
    seeds: list[int], time_limit: float, processes: int, solutions: Path, fixed_rate: float | None = None
) -> None:
    """The level search at R(x) (1 + 5e-7) from each seed's saved placement x (gap 1e-6: the final target).
    Workers are started and imported before the clocks start; CPU s: this process's and the workers' (as
    they report it with every answer)."""
    print(f"uptime: {uptime()}\n")
    print(
        "| 10 x 10 seed | processes | R(x) | rho | proven | nodes | pruned | leaves | boxes refuted | clock s "
        "| wall s | CPU s | of which parent | nodes / wall s | nodes / CPU s | a worker idle s |"
    )
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, 10, 10)
        counts = parse_solution(inst, json.loads((solutions / f"10x10-seed{seed}.json").read_text()))
        best = rate(inst, counts)
        nodes = parallel.Workers(inst, processes, ("cpsat", True, 1)) if processes > 1 else None
        if nodes is not None:
            nodes.start()
            nodes.warm()
        wall, clock, own = time.time(), time.perf_counter(), time.process_time()
        cpu = own + parallel.worker_cpu_seconds()  # the workers' CPU as they reported it
        with nodes or contextlib.nullcontext():
            if fixed_rate is None:
                searched = exact_throughput._level_round(
                    inst, best, counts, best * (1 + 1e-6), 0.5, 1e-6, "cpsat", clock + time_limit, True, 1,
                    {"rounds": []}, None, nodes,
                )  # fmt: skip
            else:  # the search at max(fixed_rate, R (1 + 5e-7)) from the saved placement
                searched = _fixed_rate_search(inst, best, counts, fixed_rate, clock + time_limit, nodes)
        wall, clock, own = time.time() - wall, time.perf_counter() - clock, time.process_time() - own
        cpu = time.process_time() + parallel.worker_cpu_seconds() - cpu
        s = searched.stats
        print(
            f"| {seed} | {processes} | {best:.6f} | {searched.rho:.6f} | {'yes' if searched.proven else 'no'} | "
            f"{s.nodes} | {s.pruned} | {s.leaves} | {s.boxes_refuted} | {clock:.1f} | {wall:.1f} | {cpu:.1f} | "
            f"{own:.1f} | {s.nodes / wall:.1f} | {s.nodes / cpu:.1f} | {s.starved:.1f} |",
            flush=True,
        )
    print(f"\nuptime: {uptime()}")


def _fixed_rate_search(inst, best, counts, fixed_rate, deadline, nodes):
    """The level search at max(``fixed_rate``, R (1 + 5e-7)) (R: the incumbent's rate) from ``counts``."""

    def target(found: float) -> float:
        return max(fixed_rate, found * (1 + 5e-7))

    if nodes is not None:
        return parallel.search(inst, best, counts, nodes, target, deadline)
    solve_box = exact_throughput._box_solver(inst, "cpsat", True, 1)
    improve = exact_throughput._improver(inst)
    return level_search.search(inst, best, counts, solve_box, target, deadline, improve=improve)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solutions", type=Path, default=None, help="write each incumbent's solution JSON here")
    parser.add_argument("--cpu-clock", action="store_true", help="deadlines on the process CPU clock")
    parser.add_argument("--proof", type=Path, default=None, help="only the final proof from DIR/10x10-seed{seed}.json")
    parser.add_argument(
        "--processes", type=int, default=parallel.PROCESSES, help="worker processes of the level search"
    )
    parser.add_argument(
        "--stall-nodes",
        type=int,
        default=level_search.STALL_NODES,
        help="raise a stalled search after N nodes, 0: never",
    )
    parser.add_argument("--rate", type=float, default=None, help="with --proof: the search at this rate instead")
    parser.add_argument(
        "--branch", default=level_search.BRANCH, help="level_search.BRANCH: spread, product, width, size, mass"
    )
    parser.add_argument("--strong", type=int, default=level_search.STRONG, help="level_search.STRONG candidates")
    parser.add_argument(
        "--node-seconds",
        type=float,
        nargs=2,
        default=level_search.NODE_SECONDS,
        help="level_search.NODE_SECONDS: bounds on the time of P(rho) on a whole node (0 0: never)",
    )
    parser.add_argument(
        "--big",
        choices=("first", "refute", "both", "off"),
        default=level_search.BIG,
        help="level_search.BIG: split the big components first, refute nodes by P(rho) on them alone",
    )
    args = parser.parse_args()
    level_search.BIG = args.big
    level_search.STALL_NODES = args.stall_nodes
    level_search.BRANCH, level_search.STRONG = args.branch, args.strong
    level_search.NODE_SECONDS = tuple(args.node_seconds)
    if args.cpu_clock:
        processes = args.processes if args.processes > 1 else 1
        time.perf_counter = lambda: time.process_time() + parallel.worker_cpu_seconds() / processes
        parallel.CPU_CLOCK = True
        print(
            "--cpu-clock: deadlines and the 'wall s' column (the proof table's 'clock s') on the CPU clock: this "
            f"process's CPU + the level-search workers' CPU / {processes}\n"
        )
    if args.proof is not None:
        proof_table(args.seeds, args.time_limit, args.processes, args.proof, args.rate)
    else:
        table(args.seeds, args.time_limit, args.processes, args.solutions)


if __name__ == "__main__":
    main()
