"""What a heuristic warm start buys an exact solve: time to the proven optimum, cold and warm, per kind.

    python -m benchmarks.warm_start                                   # every kind, HiGHS and CBC
    python -m benchmarks.warm_start --kinds latency --solvers highs
    python -m benchmarks.warm_start --kinds odrp --sets debs,12x8
    python -m benchmarks.warm_start --rows out/warm.jsonl --tables-only

For every instance the exact model is solved cold, then warm-started with the solution of the kind's
start heuristic (seed 0) as a MIP start (``run_method(..., warm_start=...)``), with the same solver and
time limit. Both must prove the same optimum (the script says if not). Each run is timed in wall
seconds and in CPU seconds of this process and its children (CBC runs as a child process); the
solver's own wall seconds (``method_stats.solve_s``) are recorded too, since a warm start can only
shorten that part (route tables, model building and cut separation come first). Rows go to a
JSON-lines file as they come and a rerun resumes. Tables (markdown), over the instances whose cold
solve took 1-60 CPU s (``--band``; easier ones time mostly noise): per kind, set and solver the
geometric mean and median of cold / warm, in CPU and wall seconds, and including the heuristic's
own time; per instance the cold and warm times and whether the solver's log shows it took the start.

Kinds, start heuristics and instance sets (each chosen so that the cold exact solve takes about
1-60 s on a quiet 2-core machine):

- ``odrp``, ``odrp_local_search``: the DEBS 2015 application at 20-120 t/s under three weightings,
  random 12 x 8 and 16 x 10 instances (operators x nodes) under the five weightings;
- ``latency``, ``hill_climbing``: the instance files ``instances/latency/t-*-load0.4.json`` whose
  exact solve takes 1-60 CPU s (T-M2, T-R2, T-R3, T-R5, T-R6, T-R8, T-R9);
- ``pathmap``, ``least_cost_map``: BA networks of 200 servers, tasks of 20 components, load 0.5 (the
  exact solve is mostly route tables and model building: the solver itself takes 0.3-3 s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odrp.core.result import agrees
from odrp.io import read_json
from odrp.kinds.pathmap.generators import ba_instance
from odrp.kinds.replication.generators import debs2015, random_instance
from odrp.registry import KINDS
from odrp.run import run_method

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("response_time", "cost", "availability", "network", "balanced")
CONTINUUM = ROOT / "instances" / "latency"
LATENCY_FILES = ("t-m2", "t-r2", "t-r3", "t-r5", "t-r6", "t-r8", "t-r9")


@dataclass(frozen=True)
class Study:
    """A kind's start heuristic and its instance sets (name -> instance JSONs, built on demand)."""

    heuristic: str
    sets: dict[str, Callable[[], list[dict[str, Any]]]]


STUDIES: dict[str, Study] = {
    "odrp": Study(
        "odrp_local_search",
        {
            "debs": lambda: [
                debs2015(rate, profile)
                for profile in ("response_time", "cost", "balanced")
                for rate in range(20, 121, 20)
            ],
            "12x8": lambda: [
                random_instance(seed=seed, operators=12, nodes=8, weights_profile=profile)
                for seed in (1, 2, 3)
                for profile in PROFILES
            ],
            "16x10": lambda: [
                random_instance(seed=seed, operators=16, nodes=10, weights_profile=profile)
                for seed in (1, 2)
                for profile in PROFILES
            ],
        },
    ),
    "latency": Study(
        "hill_climbing",
        {"continuum": lambda: [read_json(CONTINUUM / f"{name}-load0.4.json") for name in LATENCY_FILES]},
    ),
    "pathmap": Study(
        "least_cost_map",
        {"ba200": lambda: [ba_instance(seed=seed, servers=200, components=20, load=0.5) for seed in range(5)]},
    ),
}


def label(data: dict[str, Any]) -> str:
    """The instance's name; ODRP instances also name their weighting (random ones share a name)."""
    if data.get("problem") != "odrp":
        return str(data["name"])
    weights = data["objective"]["weights"]
    return data["name"] + "/" + next((m for m, w in weights.items() if w == 1), "balanced")


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (CBC)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def timed(kind: Any, inst: Any, method: str, **settings: Any) -> tuple[Any, float]:
    cpu = cpu_seconds()
    result = run_method(kind, inst, method, **settings)
    return result, cpu_seconds() - cpu


def measure(problem: str, data: dict[str, Any], solver: str, time_limit: float) -> dict[str, Any]:
    kind = KINDS[problem]
    inst = kind.load(data, label(data))
    heuristic = STUDIES[problem].heuristic
    start, start_cpu = timed(kind, inst, heuristic, seed=0)
    if start.solution is None or not start.verified:
        raise RuntimeError(f"{heuristic} found no verified solution on {label(data)}: {start.message}")
    cold, cold_cpu = timed(kind, inst, "exact", solver=solver, time_limit=time_limit)
    warm, warm_cpu = timed(kind, inst, "exact", solver=solver, time_limit=time_limit, warm_start=start.solution)
    report = warm.metrics.get("method_stats", {}).get("warm_start", {})
    both = cold.status == warm.status == "optimal"
    return {
        "instance": label(data),
        "solver": solver,
        "heuristic": heuristic,
        "start_objective": start.objective,
        "start_s": start.runtime_s,
        "start_cpu_s": start_cpu,
        "cold_status": cold.status,
        "cold_s": cold.runtime_s,
        "cold_cpu_s": cold_cpu,
        "cold_solve_s": cold.metrics.get("method_stats", {}).get("solve_s"),
        "cold_objective": cold.objective,
        "warm_status": warm.status,
        "warm_s": warm.runtime_s,
        "warm_cpu_s": warm_cpu,
        "warm_solve_s": warm.metrics.get("method_stats", {}).get("solve_s"),
        "warm_objective": warm.objective,
        "accepted": report.get("accepted"),
        "same_optimum": both and agrees(cold.objective, warm.objective),
        "load_average": os.getloadavg()[0],
    }


def _geo(values: list[float]) -> float:
    return math.exp(statistics.mean(math.log(x) for x in values)) if values else float("nan")


def summary_table(rows: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["kind"], r["set"], r["solver"]].append(r)
    lines = [
        "| kind | set | start | solver | instances | both proven | start taken | warm faster (CPU) "
        "| cold / warm CPU s: geo. mean, median | cold / warm wall s: geo. mean | cold / warm solver s: geo. mean "
        "| cold / (start + warm) CPU s: geo. mean | optima agree |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (kind, name, solver), group in sorted(groups.items()):
        proven = [r for r in group if r["cold_status"] == r["warm_status"] == "optimal"]
        cpu = [r["cold_cpu_s"] / r["warm_cpu_s"] for r in proven]
        wall = [r["cold_s"] / r["warm_s"] for r in proven]
        solve = [r["cold_solve_s"] / r["warm_solve_s"] for r in proven if r["cold_solve_s"] and r["warm_solve_s"]]
        total = [r["cold_cpu_s"] / (r["start_cpu_s"] + r["warm_cpu_s"]) for r in proven]
        median = statistics.median(cpu) if cpu else float("nan")
        lines.append(
            f"| {kind} | {name} | {group[0]['heuristic']} | {solver} | {len(group)} | {len(proven)} | "
            f"{sum(r['accepted'] is True for r in group)} | {sum(x > 1 for x in cpu)} | "
            f"{_geo(cpu):.2f}, {median:.2f} | {_geo(wall):.2f} | {_geo(solve):.2f} | {_geo(total):.2f} | "
            f"{'yes' if all(r['same_optimum'] for r in proven) else 'NO'} |"
        )
    return "\n".join(lines)


def instance_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| kind | set | instance | solver | start objective (CPU s) | cold CPU s (wall) | warm CPU s (wall), "
        "start taken | cold / warm CPU | optimum agrees |",
        "|---|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        cold = f"{r['cold_cpu_s']:.2f} ({r['cold_s']:.2f})" + (
            "" if r["cold_status"] == "optimal" else f" {r['cold_status']}"
        )
        warm = f"{r['warm_cpu_s']:.2f} ({r['warm_s']:.2f})" + (
            "" if r["warm_status"] == "optimal" else f" {r['warm_status']}"
        )
        accepted = {True: "yes", False: "no", None: "?"}[r["accepted"]]
        lines.append(
            f"| {r['kind']} | {r['set']} | {r['instance']} | {r['solver']} | "
            f"{r['start_objective']:.6g} ({r['start_cpu_s']:.2f}) | {cold} | {warm}, {accepted} | "
            f"{r['cold_cpu_s'] / r['warm_cpu_s']:.2f} | {'yes' if r['same_optimum'] else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", default=",".join(STUDIES))
    parser.add_argument("--solvers", default="highs,cbc")
    parser.add_argument("--sets", default=None, help="set names (default: every set of the chosen kinds)")
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--rows", default="warm-start-rows.jsonl", help="JSON-lines file of rows (resumed)")
    parser.add_argument("--tables-only", action="store_true")
    parser.add_argument(
        "--band", default="1,60", help="tabulate only instances whose cold solve took LO,HI CPU s (default 1,60)"
    )
    args = parser.parse_args()
    low, high = (float(x) for x in args.band.split(","))
    kinds, solvers = args.kinds.split(","), args.solvers.split(",")
    wanted = {(k, s) for k in kinds for s in STUDIES[k].sets if args.sets is None or s in args.sets.split(",")}
    rows_path = Path(args.rows)
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()] if rows_path.exists() else []
    done = {(r["kind"], r["set"], r["instance"], r["solver"]) for r in rows}
    if not args.tables_only:
        for kind, name in sorted(wanted):
            for data in STUDIES[kind].sets[name]():
                for solver in solvers:
                    if (kind, name, label(data), solver) in done:
                        continue
                    row = {"kind": kind, "set": name, **measure(kind, data, solver, args.time_limit)}
                    rows.append(row)
                    with rows_path.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(
                        f"{kind} {name} {row['instance']} {solver}: cold {row['cold_cpu_s']:.2f} CPU s, "
                        f"warm {row['warm_cpu_s']:.2f} CPU s (load {row['load_average']:.1f})",
                        flush=True,
                    )
    measured = [r for r in rows if (r["kind"], r["set"]) in wanted and r["solver"] in solvers]
    rows = [r for r in measured if low <= r["cold_cpu_s"] <= high]
    print(f"\n{len(rows)} of {len(measured)} rows have a cold solve of {low:g}-{high:g} CPU s; the tables show those")
    loads = [r["load_average"] for r in rows if "load_average" in r]
    if loads:
        print(f"\nload average (1 min) during the rows: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores")
    print(f"load average now {os.getloadavg()[0]:.1f}\n")
    print(summary_table(rows))
    print()
    print(instance_table(rows))


if __name__ == "__main__":
    main()
