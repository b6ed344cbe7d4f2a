"""Throughput on heterogeneous clusters: exact solve times and the heuristics' gaps to the optimum.

    python -m benchmarks.throughput                      # every table (about 10-20 minutes)
    python -m benchmarks.throughput --part paper         # paper-size solve times, CP-SAT / HiGHS / CBC
    python -m benchmarks.throughput --part large         # 10 x 10 and 20 x 30 with a 60 s limit
    python -m benchmarks.throughput --part gaps          # the heuristics vs the optimum, 100 instances
    python -m benchmarks.throughput --part bounds        # fluid, pattern and configuration bounds vs R*
    python -m benchmarks.throughput --part gaps --seeds 20 --solver highs

Prints markdown tables. Times are wall seconds of ``run_method`` (model building, the warm start and
every solver call included) and, beside them, CPU seconds of this process and its children
(``resource.getrusage``): the machine may be shared, and every table prints the ``uptime`` load.
Random instances: ``odrp generate throughput --seed N --components C --machines M --shape S``
(shapes cycle linear, diamond, star, dag over the seeds).
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import subprocess
import time
from pathlib import Path

from odrp.io import load_instance
from odrp.kinds.throughput.evaluator import rate
from odrp.kinds.throughput.exact import bounds, config_bound, pattern_bound
from odrp.kinds.throughput.exact.starts import warm_start
from odrp.kinds.throughput.generators import SHAPES, random_instance
from odrp.kinds.throughput.instance import load
from odrp.registry import KINDS
from odrp.run import run_method

THROUGHPUT = KINDS["throughput"]
HETERO = Path(__file__).resolve().parent.parent / "instances" / "throughput"
PAPER_HOURS = 18.0
"""The paper: its exhaustive search over the 27,405 count vectors of 4 bolts on 3 machines took about 18 h."""


def random_case(seed: int, components: int, machines: int):
    shape = SHAPES[seed % len(SHAPES)]
    return load(random_instance(seed=seed, components=components, machines=machines, shape=shape))


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its (waited-for) children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(inst, method: str, **kwargs):
    """(Result, wall seconds, CPU seconds) of one run_method."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = run_method(THROUGHPUT, inst, method, **kwargs)
    return result, time.perf_counter() - start, cpu_seconds() - cpu


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def paper_table(seeds: int, solvers: list[str]) -> None:
    print("\n### Exact solve time at paper size (5 components incl. the spout, 3 machines, 10 tasks each)\n")
    print(f"uptime: {uptime()}\n")
    cases = [(p.stem, load_instance(p)[1]) for p in sorted(HETERO.glob("*.json"))]
    cases += [(f"random s{seed} ({SHAPES[seed % 4]})", random_case(seed, 5, 3)) for seed in range(seeds)]
    print("| instance | R* | " + " | ".join(f"{s} wall s | {s} CPU s" for s in solvers) + " | rounds | agree |")
    print("|---|---:|" + "---:|---:|" * len(solvers) + "---:|---|")
    walls: dict[str, list[float]] = {s: [] for s in solvers}
    cpus: dict[str, list[float]] = {s: [] for s in solvers}
    run_method(THROUGHPUT, cases[0][1], "exact", solver=solvers[0])  # imports and first-call set-up, untimed
    for name, inst in cases:
        results = {}
        for solver in solvers:
            result, seconds, cpu = timed(inst, "exact", solver=solver)
            assert result.status == "optimal" and result.verified, (name, solver, result.message)
            results[solver] = result
            walls[solver].append(seconds)
            cpus[solver].append(cpu)
        first = results[solvers[0]]
        agree = all(math.isclose(r.objective, first.objective, rel_tol=1e-6) for r in results.values())
        rounds = first.metrics["method_stats"]["iterations"]
        cells = " | ".join(f"{walls[s][-1]:.2f} | {cpus[s][-1]:.2f}" for s in solvers)
        print(f"| {name} | {first.objective:.4f} | {cells} | {rounds} | {'yes' if agree else 'NO'} |")
    print()
    for solver in solvers:
        values = walls[solver]
        print(
            f"- {solver}: wall mean {statistics.mean(values):.2f} s, max {max(values):.2f} s; CPU mean "
            f"{statistics.mean(cpus[solver]):.2f} s, max {max(cpus[solver]):.2f} s over {len(values)} instances; "
            f"the paper's exhaustive search: about {PAPER_HOURS:.0f} h "
            f"({PAPER_HOURS * 3600 / statistics.mean(values):,.0f} times the mean wall time)."
        )
    print(f"\nuptime: {uptime()}")


LARGE_SIZES = ((10, 10), (20, 30))


def large_table(
    seeds: int, solvers: list[str], time_limit: float, sizes: tuple[tuple[int, int], ...] = LARGE_SIZES
) -> None:
    print(f"\n### Larger instances, time limit {time_limit:.0f} s\n")
    print(f"uptime: {uptime()}\n")
    print(
        "| size | seed | solver | status | R (incumbent) | bound | gap | fluid bound | pattern bound | config bound "
        "| hetero_greedy | packing | warm start | descent | ladder bound (rungs proven) | level-search nodes "
        "| wall s | CPU s |"
    )
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for components, machines in sizes:
        for seed in range(seeds):
            inst = random_case(seed, components, machines)
            for solver in solvers:
                result, seconds, cpu = timed(inst, "exact", solver=solver, time_limit=time_limit)
                stats = result.metrics["method_stats"]
                nodes = sum(r["level_search"]["nodes"] for r in stats["rounds"] if "level_search" in r)
                print(
                    f"| {components} x {machines} | {seed} | {solver} | {result.status} | {result.objective:.3f} | "
                    f"{result.bound:.3f} | {100 * result.gap:.2f}% | {stats['fluid_bound']:.3f} | "
                    f"{stats['pattern_bound']:.3f} | {stats['config_bound']:.3f} | {stats['hetero_greedy']:.3f} | "
                    f"{_rate(stats.get('packing'))} | {stats['start_rate']:.3f} | "
                    f"{_rate(stats.get('count_descent', {}).get('rate'))} | {_ladder(stats)} | {nodes} | "
                    f"{seconds:.1f} | {cpu:.1f} |"
                )
    print(f"\nuptime: {uptime()}")


def _ladder(stats: dict) -> str:
    """The ladder's lowest proven rung and how many rungs it proved (:mod:`odrp.kinds.throughput.exact.ladder`)."""
    if "ladder" not in stats:
        return "-"
    rungs = stats["ladder"]["rungs"]
    proven = sum(r["proven"] for r in rungs)
    return f"{stats['ladder']['bound']:.3f} ({proven} of {len(rungs)})" if proven else f"- (0 of {len(rungs)})"


def _rate(value: float | None) -> str:
    """A rate to three decimals, or '-' where the method found none."""
    return "-" if value is None else f"{value:.3f}"


def bounds_table(seeds: int) -> None:
    """The three upper bounds (no time limit) against R* (paper size, proven) or the search's start (10 x 10)."""
    print("\n### Upper bounds on R: fluid LP, pattern LP, configuration LP (bisection to 1e-4, no time limit)\n")
    print(f"uptime: {uptime()}\n")
    print("| size | seed | reference | fluid | pattern | config | config above reference | config CPU s |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for components, machines in ((5, 3), (10, 10)):
        for seed in range(seeds):
            inst = random_case(seed, components, machines)
            if components * machines <= 15:
                optimum = run_method(THROUGHPUT, inst, "exact")
                reference, label = optimum.objective, "R*"
            else:
                reference, label = rate(inst, warm_start(inst)[0]), "warm start"
            fluid = bounds.fluid_bound(inst)
            pattern = pattern_bound.upper_bound(inst, reference, fluid, None)
            cpu = cpu_seconds()
            config = config_bound.upper_bound(inst, reference, pattern, None, precision=1e-4)
            cpu = cpu_seconds() - cpu
            above = 100 * (config - reference) / reference
            print(
                f"| {components} x {machines} | {seed} | {label} {reference:.3f} | {fluid:.3f} | {pattern:.3f} | "
                f"{config:.3f} | {above:.2f}% | {cpu:.1f} |"
            )
    print(f"\nuptime: {uptime()}")


HEURISTICS = ("hetero_greedy", "mkp_view", "storm_default", "rstorm", "storm_ras")


def gaps_table(seeds: int, solver: str, components: int = 5, machines: int = 3) -> None:
    print(
        f"\n### Heuristics against the optimum: {seeds} random instances of {components} components "
        f"(spouts included) on {machines} machines, 10 tasks each (exact: {solver})\n"
    )
    print(f"uptime: {uptime()}\n")
    gaps: dict[str, list[float]] = {m: [] for m in HEURISTICS}
    infeasible = dict.fromkeys(HEURISTICS, 0)
    optimal_found = dict.fromkeys(HEURISTICS, 0)
    exact_wall, exact_cpu = [], []
    for seed in range(seeds):
        inst = random_case(seed, components, machines)
        optimum, seconds, cpu = timed(inst, "exact", solver=solver)
        assert optimum.status == "optimal" and optimum.verified, optimum.message
        exact_wall.append(seconds)
        exact_cpu.append(cpu)
        for method in HEURISTICS:
            result = run_method(THROUGHPUT, inst, method)
            if result.objective is None or not result.verified:
                assert result.status in ("infeasible", "error") or not result.verified, (seed, method, result.status)
                infeasible[method] += 1
                continue
            assert result.objective <= optimum.objective * (1 + 1e-9), (seed, method)
            gap = (optimum.objective - result.objective) / optimum.objective
            gaps[method].append(gap)
            optimal_found[method] += gap <= 1e-6
    print("| method | mean gap | median gap | worst gap | within 4% | optimal found | infeasible |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for method in HEURISTICS:
        values = gaps[method]
        cells = (
            f"{100 * statistics.mean(values):.1f}% | {100 * statistics.median(values):.1f}% | {100 * max(values):.1f}%"
            if values
            else "- | - | -"
        )
        within = sum(g <= 0.04 for g in values)
        print(f"| {method} | {cells} | {within}/{seeds} | {optimal_found[method]}/{seeds} | {infeasible[method]} |")
    print(
        f"\nGaps are (R* - R) / R* over the instances where the method returns a feasible placement. "
        f"Exact solves: wall mean {statistics.mean(exact_wall):.2f} s, max {max(exact_wall):.2f} s; CPU mean "
        f"{statistics.mean(exact_cpu):.2f} s, max {max(exact_cpu):.2f} s."
    )
    print('The paper: hetero_greedy "within 4% of optimal in the worst case" (its Fig. 15, three topologies).')
    print(f"\nuptime: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("paper", "large", "gaps", "bounds", "all"), default="all")
    parser.add_argument("--seeds", type=int, default=None, help="random instances per table")
    parser.add_argument("--solver", default="cpsat", help="solver of the exact optimum in the gaps table")
    parser.add_argument("--components", type=int, default=5, help="components of the gaps table's instances")
    parser.add_argument("--machines", type=int, default=3, help="machines of the gaps table's instances")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--sizes", nargs="+", default=None, help="components x machines of the large table, e.g. 20x30 (default: both)"
    )
    args = parser.parse_args()
    if args.part in ("paper", "all"):
        paper_table(args.seeds if args.seeds is not None else 10, ["cpsat", "highs", "cbc"])
    if args.part in ("large", "all"):
        sizes = LARGE_SIZES if args.sizes is None else tuple(tuple(map(int, s.split("x"))) for s in args.sizes)
        large_table(args.seeds if args.seeds is not None else 3, ["cpsat", "highs"], args.time_limit, sizes)
    if args.part in ("bounds", "all"):
        bounds_table(args.seeds if args.seeds is not None else 4)
    if args.part in ("gaps", "all"):
        gaps_table(args.seeds if args.seeds is not None else 100, args.solver, args.components, args.machines)


if __name__ == "__main__":
    main()
