"""The arc-flow search against the compact model on Dell'Amico et al.'s SMALL multiple knapsacks.

    python -m benchmarks.mkp_arcflow [--root DIR] [--time-limit 60] [--every K] [--match TEXT]
                                     [--formulations compact,arcflow]

Prints markdown: one row per instance with the published optimum, the bounds of the arc-flow search
before any stage (deterministic: the surrogate bound of :mod:`odrp.kinds.knapsack.exact.bounds`, the
Lagrangian bound L and the cardinality bound N of :mod:`odrp.kinds.knapsack.exact.arcflow`), then per
formulation the status, objective, wall and process CPU seconds (for the arc-flow search also
whether the packing step or a HiGHS stage ended it, and after how many thresholds); a summary row per formulation
(proven optimal, CPU mean and max). ``--match`` keeps the files whose name contains TEXT (e.g.
``M010_N0060``); ``--every K`` every K-th of them. The machine's load is printed with the table.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
from pathlib import Path

from benchmarks.knapsack_sets import DEFAULT_ROOT, cpu_seconds
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import arcflow, bounds
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method

FOLDER = "mkp_dellamico_small"


def root_bounds(instance) -> tuple[float, float, int]:
    """(surrogate bound, Lagrangian bound L, cardinality bound N) as the arc-flow search computes them."""
    family = bounds.reduce_capacities(family_of(instance))
    mkp = arcflow.mkp_of(family)
    cardinality = arcflow.cardinality_bound(mkp, math.inf)
    generation = arcflow.column_generation(mkp, mkp.profit, cardinality, math.inf)
    return bounds.surrogate_bound(family), generation.bound.value, cardinality


def decided_by(stats: dict) -> str:
    """How the arc-flow search ended: ``packing`` (the packing step packed or refuted the last threshold),
    ``graph`` (a HiGHS stage), with the number of thresholds tried; empty for other formulations."""
    stages = stats.get("stages")
    if stages is None:
        return ""
    if not stages:
        return " [no threshold: the incumbent meets the bound]"
    how = "packing" if "packing_sets" in stages[-1] else "graph"
    return f" [{how}, {len(stages)} thresholds]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--every", type=int, default=1, metavar="K")
    parser.add_argument("--match", default="", metavar="TEXT")
    parser.add_argument("--formulations", default="compact,arcflow")
    args = parser.parse_args(argv)
    folder = args.root / FOLDER
    published = {r["instance"]: float(r["optimum"]) for r in csv.DictReader((folder / "optima.csv").open())}
    paths = sorted(p for p in folder.glob("probT1_*.txt") if args.match in p.name)[:: args.every]
    formulations = [f.strip() for f in args.formulations.split(",") if f.strip()]
    print(f"time limit {args.time_limit:g} s, load {os.getloadavg()}\n")
    print("| instance | published | surrogate | L | N | " + " | ".join(formulations) + " |")
    print("|---|---|---|---|---|" + "---|" * len(formulations))
    cpu: dict[str, list[float]] = {f: [] for f in formulations}
    proven: dict[str, int] = dict.fromkeys(formulations, 0)
    kind = KINDS["mkp"]
    for path in paths:
        data = knapsack_io.read("dellamico-mkp", path)[0]
        instance = kind.load(data, data["name"])
        surrogate, lagrangian, cardinality = root_bounds(instance)
        cells = []
        for formulation in formulations:
            start = cpu_seconds()
            result = run_method(kind, instance, "exact", formulation=formulation, time_limit=args.time_limit)
            cpu[formulation].append(cpu_seconds() - start)
            proven[formulation] += result.status == "optimal"
            flag = "" if result.verified else " NOT VERIFIED"
            cells.append(
                f"{result.status} {result.objective:g} ({result.runtime_s:.1f} s, cpu {cpu[formulation][-1]:.1f})"
                f"{decided_by(result.metrics.get('method_stats', {}))}{flag}"
            )
        name = path.name.removeprefix("probT1_").removesuffix(".txt")
        print(
            f"| {name} | {published[path.name]:g} | {surrogate:g} | {lagrangian:.1f} | {cardinality} | "
            + " | ".join(cells)
            + " |",
            flush=True,
        )
    for formulation in formulations:
        if cpu[formulation]:
            print(
                f"\n{formulation}: {proven[formulation]}/{len(paths)} proven optimal, CPU s mean "
                f"{statistics.mean(cpu[formulation]):.2f}, max {max(cpu[formulation]):.2f}"
            )
    print(f"\nload at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
