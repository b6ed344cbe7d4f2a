"""The QKP reduction, measured: each Billionnet-Soutif instance solved with and without it.

    python -m benchmarks.qkp_reduction [--root DIR] [--time-limit 60] [--only jeu_100_75_9,...] [--without]

Prints one markdown row per instance (n = 100 by default): the density, the start (greedy and local
search) and the tabu search's value, the LP bound of rows (1)-(3) and with the triangle rows (4), the
items the reduction fixed and left free, its seconds, and the exact method's status, objective and
wall / CPU seconds with the reduction (the default) and, with ``--without``, without it
(``reduction=false``: the MILP alone from the search start). The machine's load is printed too.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.knapsack_sets import DEFAULT_ROOT, cpu_seconds
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.registry import KINDS
from odrp.run import run_method

FOLDER = "qkp_billionnet_soutif"


def instance_names(root: Path, only: str | None) -> list[str]:
    if only:
        return [name.strip().removesuffix(".txt") for name in only.split(",") if name.strip()]
    names = [path.stem for path in (root / FOLDER).glob("jeu_100_*.txt")]
    return sorted(names, key=lambda name: [int(part) for part in name.split("_")[1:]])


def solve(instance, time_limit: float, reduction: bool):
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = run_method(KINDS["qkp"], instance, "exact", time_limit=time_limit, options={"reduction": reduction})
    return result, time.perf_counter() - wall, cpu_seconds() - cpu


def cell(result, wall: float, cpu: float) -> str:
    flag = "" if result.verified else " NOT VERIFIED"
    return f"{result.status} {result.objective:.0f} | {wall:.1f} / {cpu:.1f}{flag}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--only", default=None, help="comma list of instance names (default: every jeu_100_*)")
    parser.add_argument("--without", action="store_true", help="also solve each instance without the reduction")
    args = parser.parse_args(argv)
    optima = {r["instance"]: r for r in csv.DictReader((args.root / FOLDER / "optima.csv").open())}
    print(f"time limit {args.time_limit:g} s, load {os.getloadavg()}\n")
    header = (
        "| instance | density | published | start | tabu | LP (1)-(3) | with (4) | fixed 1 / 0 / free "
        "| reduction s | exact | wall / CPU s |"
    )
    if args.without:
        header += " without: exact | wall / CPU s |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for name in instance_names(args.root, args.only):
        data = knapsack_io.read("bs-qkp", args.root / FOLDER / f"{name}.txt")[0]
        instance = KINDS["qkp"].load(data, name)
        profits = np.asarray(data["profits"])
        density = np.count_nonzero(np.triu(profits, 1)) / (len(profits) * (len(profits) - 1) / 2)
        result, wall, cpu = solve(instance, args.time_limit, True)
        r = result.metrics["method_stats"].get("reduction", {})
        known = optima.get(f"{name}.txt")
        published = f"{float(known['optimum']):.0f} ({known['status']})" if known else "-"
        row = (
            f"| {name} | {density:.2f} | {published} | {r.get('start', 0):.0f} | {r.get('tabu_search', 0):.0f} "
            f"| {r.get('lp_bound') or 0:.1f} | {r.get('cut_bound') or 0:.1f} "
            f"| {r.get('fixed_one')} / {r.get('fixed_zero')} / {r.get('free')} | {r.get('seconds', 0):.1f} "
            f"| {cell(result, wall, cpu)} |"
        )
        if args.without:
            row += f" {cell(*solve(instance, args.time_limit, False))} |"
        print(row, flush=True)
    print(f"\nload at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
