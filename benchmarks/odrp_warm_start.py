"""What a heuristic warm start buys the exact ODRP solve: time to the proven optimum, cold and warm.

    python -m benchmarks.odrp_warm_start                              # HiGHS and CBC, every set
    python -m benchmarks.odrp_warm_start --solvers highs --sets debs,12x8
    python -m benchmarks.odrp_warm_start --rows out/warm.jsonl --tables-only

For every instance the compact model is solved cold, then warm-started with the placement of
``odrp_local_search`` (seed 0) as a MIP start (``run_method(..., warm_start=...)``), with the same
solver and time limit. Both must prove the same optimum (the script says if not). Rows go to a
JSON-lines file as they come and a rerun resumes. Tables (markdown): per instance the cold and
warm wall seconds, whether the solver's log shows it took the start, and the ratio; per set and
solver the geometric mean and median of cold / warm (solve only, and including the local search).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from odrp.methods import run_method
from odrp.problems import KINDS
from odrp.problems.odrp import load
from odrp.problems.odrp_generators import debs2015, random_instance
from odrp.result import agrees

ODRP = KINDS["odrp"]
PROFILES = ("response_time", "cost", "availability", "network", "balanced")


def instance_sets() -> dict[str, list[dict[str, Any]]]:
    """The DEBS instances under the paper's three weightings, and random 12 x 8 and 16 x 10 ones."""
    return {
        "debs": [
            debs2015(rate, profile) for profile in ("response_time", "cost", "balanced") for rate in range(20, 121, 20)
        ],
        "12x8": [
            random_instance(seed=seed, operators=12, nodes=8, weights_profile=profile)
            for seed in (1, 2, 3)
            for profile in PROFILES
        ],
        "16x10": [
            random_instance(seed=seed, operators=16, nodes=10, weights_profile=profile)
            for seed in (1, 2)
            for profile in PROFILES
        ],
    }


def label(data: dict[str, Any]) -> str:
    """Instance name and weighting (random instances share a name across weightings)."""
    weights = data["objective"]["weights"]
    return data["name"] + "/" + next((m for m, w in weights.items() if w == 1), "balanced")


def measure(data: dict[str, Any], solver: str, time_limit: float) -> dict[str, Any]:
    inst = load(data)
    start = run_method(ODRP, inst, "odrp_local_search", seed=0)
    cold = run_method(ODRP, inst, "exact", solver=solver, time_limit=time_limit)
    warm = run_method(ODRP, inst, "exact", solver=solver, time_limit=time_limit, warm_start=start.solution)
    report = warm.metrics.get("method_stats", {}).get("warm_start", {})
    both = cold.status == warm.status == "optimal"
    return {
        "instance": label(data),
        "solver": solver,
        "start_objective": start.objective,
        "start_s": start.runtime_s,
        "cold_status": cold.status,
        "cold_s": cold.runtime_s,
        "cold_objective": cold.objective,
        "warm_status": warm.status,
        "warm_s": warm.runtime_s,
        "warm_objective": warm.objective,
        "accepted": report.get("accepted"),
        "same_optimum": both and agrees(cold.objective, warm.objective),
    }


def instance_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| set | instance | solver | local search F (s) | cold s | warm s (start taken) | cold / warm "
        "| optimum agrees |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        cold = f"{r['cold_s']:.2f}" + ("" if r["cold_status"] == "optimal" else f" ({r['cold_status']})")
        warm = f"{r['warm_s']:.2f}" + ("" if r["warm_status"] == "optimal" else f" ({r['warm_status']})")
        accepted = {True: "yes", False: "no", None: "?"}[r["accepted"]]
        lines.append(
            f"| {r['set']} | {r['instance']} | {r['solver']} | {r['start_objective']:.6f} ({r['start_s']:.2f}) | "
            f"{cold} | {warm} ({accepted}) | {r['cold_s'] / r['warm_s']:.2f} | {'yes' if r['same_optimum'] else 'NO'} |"
        )
    return "\n".join(lines)


def summary_table(rows: list[dict[str, Any]]) -> str:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["set"], r["solver"]].append(r)
    lines = [
        "| set | solver | instances | both proven | start taken | warm faster | cold / warm: geo. mean, median "
        "| cold / (local search + warm): geo. mean | optima agree |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (name, solver), group in sorted(groups.items()):
        proven = [r for r in group if r["cold_status"] == r["warm_status"] == "optimal"]
        ratios = [r["cold_s"] / r["warm_s"] for r in proven]
        totals = [r["cold_s"] / (r["warm_s"] + r["start_s"]) for r in proven]
        geo = math.exp(statistics.mean(math.log(x) for x in ratios)) if ratios else float("nan")
        geo_total = math.exp(statistics.mean(math.log(x) for x in totals)) if totals else float("nan")
        median = statistics.median(ratios) if ratios else float("nan")
        lines.append(
            f"| {name} | {solver} | {len(group)} | {len(proven)} | {sum(r['accepted'] is True for r in group)} | "
            f"{sum(x > 1 for x in ratios)} | {geo:.2f}, {median:.2f} | {geo_total:.2f} | "
            f"{'yes' if all(r['same_optimum'] for r in proven) else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--solvers", default="highs,cbc")
    parser.add_argument("--sets", default="debs,12x8,16x10")
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument("--rows", default="odrp-warm-start-rows.jsonl", help="JSON-lines file of rows (resumed)")
    parser.add_argument("--tables-only", action="store_true")
    args = parser.parse_args()
    rows_path = Path(args.rows)
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()] if rows_path.exists() else []
    done = {(r["set"], r["instance"], r["solver"]) for r in rows}
    sets = instance_sets()
    wanted_sets, solvers = args.sets.split(","), args.solvers.split(",")
    if not args.tables_only:
        for name in wanted_sets:
            for data in sets[name]:
                for solver in solvers:
                    if (name, label(data), solver) in done:
                        continue
                    row = {"set": name, **measure(data, solver, args.time_limit)}
                    rows.append(row)
                    with rows_path.open("a") as handle:
                        handle.write(json.dumps(row) + "\n")
                    print(
                        f"{name} {row['instance']} {solver}: cold {row['cold_s']:.2f} s, warm {row['warm_s']:.2f} s",
                        flush=True,
                    )
    rows = [r for r in rows if r["set"] in wanted_sets and r["solver"] in solvers]
    print(f"\nload average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print(summary_table(rows))
    print()
    print(instance_table(rows))


if __name__ == "__main__":
    main()
