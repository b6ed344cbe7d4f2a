"""The configuration bound's pricing grid and master LPs at 20 x 30.

    python -m benchmarks.config_grid                         # both tables, seeds 0-2, grids 2000 / 20000
    python -m benchmarks.config_grid --part lp --grids 2000 5000 10000 20000
    python -m benchmarks.config_grid --part threshold --seeds 1

``lp``: one configuration LP from scratch (:class:`~odrp.kinds.throughput.exact.config_bound.ConfigurationLP`)
at 1.00999 times the best incumbent known (``INCUMBENTS``): refuting it meets the 1% target there. Per grid:
the verdict, column generation iterations, CPU s in all, in the masters and in the pricing (the LP's own
``seconds``). ``threshold``: the lowest rate each grid refutes, by bisection from that incumbent to the fluid
bound (precision 1e-4), and its CPU s. CPU seconds of this process (``time.process_time``); the tables print
``uptime`` (the machine may be shared).
"""

from __future__ import annotations

import argparse
import subprocess
import time
from typing import Any

from benchmarks.throughput import random_case
from odrp.kinds.throughput.exact import bounds, config_bound

INCUMBENTS = {0: 406.256, 1: 147.955, 2: 150.045}
"""Incumbents of ``python -m benchmarks.throughput --part large --sizes 20x30`` on a quiet machine, with the count
descent and without the ladder (docs/methods/throughput.md, "20 x 30")."""
TARGET = 1.00999
"""A bound at or below TARGET x incumbent is a gap within 1%."""


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def lp_table(seeds: list[int], grids: list[int], size: tuple[int, int]) -> None:
    print(f"\n### One configuration LP at {TARGET} x incumbent, from scratch ({size[0]} x {size[1]})\n")
    print(f"uptime: {uptime()}\n")
    print("| seed | rho | grid | verdict | iterations | CPU s | master CPU s | pricing CPU s |")
    print("|---:|---:|---:|---|---:|---:|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, *size)
        rho = TARGET * INCUMBENTS[seed]
        for grid in grids:
            start = time.process_time()
            lp = config_bound.ConfigurationLP(inst, rho, grid=grid)
            verdict = lp.refutes()
            cpu = time.process_time() - start
            print(
                f"| {seed} | {rho:.3f} | {grid} | {verdict} | {lp.iterations} | {cpu:.2f} | "
                f"{lp.seconds['master']:.2f} | {lp.seconds['pricing']:.2f} |"
            )
    print(f"\nuptime: {uptime()}")


def threshold_table(seeds: list[int], grids: list[int], size: tuple[int, int]) -> None:
    print(f"\n### The lowest rate each grid refutes (bisection, precision 1e-4; {size[0]} x {size[1]})\n")
    print(f"uptime: {uptime()}\n")
    print("| seed | incumbent | fluid bound | grid | bound | gap to incumbent | LPs' CPU s | master CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for seed in seeds:
        inst = random_case(seed, *size)
        fluid = bounds.fluid_bound(inst)
        for grid in grids:
            log: list[dict[str, Any]] = []
            start = time.process_time()
            bound, _ = config_bound.bisect(inst, INCUMBENTS[seed], fluid, None, precision=1e-4, grid=grid, log=log)
            cpu = time.process_time() - start
            gap = bound / INCUMBENTS[seed] - 1
            master = sum(entry["master"] for entry in log)
            print(
                f"| {seed} | {INCUMBENTS[seed]:.3f} | {fluid:.3f} | {grid} | {bound:.3f} | {100 * gap:.2f}% | "
                f"{cpu:.1f} | {master:.1f} |"
            )
    print(f"\nuptime: {uptime()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("lp", "threshold", "all"), default="all")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--grids", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--size", default="20x30", help="components x machines")
    args = parser.parse_args()
    size = tuple(map(int, args.size.split("x")))
    if args.part in ("lp", "all"):
        lp_table(args.seeds, args.grids, size)  # type: ignore[arg-type]
    if args.part in ("threshold", "all"):
        threshold_table(args.seeds, args.grids, size)  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
