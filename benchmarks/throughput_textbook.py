"""Throughput: the default exact method (``auto``) beside the textbook formulation, per size, in one run.

    python -m benchmarks.throughput_textbook                                   # report seeds, every size
    python -m benchmarks.throughput_textbook --sizes 3x3 5x5 --seeds 300 301 302 --time-limit 20
    python -m benchmarks.throughput_textbook --solver highs --sizes 5x5

The textbook formulation is bisection on R over the plain fixed-rate model
(:mod:`odrp.kinds.throughput.exact.textbook`); the default is the rate search with its bounds, starts and level
search (:mod:`odrp.kinds.throughput.exact.solve`). Both run with the same solver and time limit on the same
random instances (``benchmarks.throughput.random_case``: shapes cycle linear, diamond, star, dag over the seeds).
The defaults were tuned on seeds 0-9 (10 x 10) and the paper size; the default seeds here, 300-309, were used
for nothing else.

Prints one row per instance (status, R, bound and wall seconds of each; ``!`` marks a run where the default's
incumbent is below the textbook's) and a summary per size: proven by each, median wall seconds, the
geometric mean of the ratio default / textbook of wall seconds (each at least 0.01 s; an unproven run counts
its whole time), and the runs without an incumbent. ``uptime`` before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import math
import statistics

from benchmarks.throughput import random_case, timed, uptime

SIZES = ("3x3", "5x5", "8x8", "10x10")
REPORT_SEEDS = tuple(range(300, 310))
"""Seeds no default was chosen on."""


def size_of(text: str) -> tuple[int, int]:
    components, machines = text.split("x")
    return int(components), int(machines)


def run_pair(seed: int, components: int, machines: int, solver: str, time_limit: float) -> dict:
    """Both methods on one instance: their Results and wall seconds."""
    inst = random_case(seed, components, machines)
    row = {"seed": seed}
    for name, formulation in (("default", None), ("textbook", "textbook")):
        result, seconds, _ = timed(inst, "exact", solver=solver, formulation=formulation, time_limit=time_limit)
        row[name] = (result, seconds)
    return row


def _cell(result, seconds: float) -> str:
    objective = "-" if result.objective is None else f"{result.objective:.3f}"
    bound = "-" if result.bound is None else f"{result.bound:.3f}"
    return f"{result.status} | {objective} | {bound} | {seconds:.2f}"


def summary(size: str, rows: list[dict]) -> str:
    proven = {n: sum(r[n][0].status == "optimal" for r in rows) for n in ("default", "textbook")}
    median = {n: statistics.median(r[n][1] for r in rows) for n in ("default", "textbook")}
    ratio = math.exp(statistics.fmean(math.log(max(r["default"][1], 0.01) / max(r["textbook"][1], 0.01)) for r in rows))
    empty = {n: sum(r[n][0].objective is None for r in rows) for n in ("default", "textbook")}
    worse = sum(_worse(r) for r in rows)
    return (
        f"| {size} | {len(rows)} | {proven['default']} | {proven['textbook']} | {median['default']:.2f} | "
        f"{median['textbook']:.2f} | {ratio:.2f} | {empty['default']} | {empty['textbook']} | {worse} |"
    )


def _worse(row: dict) -> bool:
    """The default's incumbent below the textbook's (or none where the textbook has one)."""
    mine, plain = row["default"][0].objective, row["textbook"][0].objective
    return plain is not None and (mine is None or mine < plain * (1 - 1e-6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), help="components x machines, e.g. 5x5")
    parser.add_argument("--seeds", nargs="+", type=int, default=list(REPORT_SEEDS))
    parser.add_argument("--solver", default="cpsat", choices=("cpsat", "highs", "cbc"))
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    print(f"uptime: {uptime()}\n")
    print(f"solver {args.solver}, time limit {args.time_limit:g} s, seeds {' '.join(map(str, args.seeds))}\n")
    print(
        "| size | seed | default status | R | bound | wall s | textbook status | R | bound | wall s | default below |"
    )
    print("|---|---:|---|---:|---:|---:|---|---:|---:|---:|---|")
    table: dict[str, list[dict]] = {}
    for size in args.sizes:
        components, machines = size_of(size)
        for seed in args.seeds:
            row = run_pair(seed, components, machines, args.solver, args.time_limit)
            table.setdefault(size, []).append(row)
            print(
                f"| {size} | {seed} | {_cell(*row['default'])} | {_cell(*row['textbook'])} | "
                f"{'!' if _worse(row) else ''} |",
                flush=True,
            )
    print(
        "\n| size | runs | proven default | proven textbook | median default s | median textbook s "
        "| geo-mean ratio default / textbook | no incumbent default | no incumbent textbook | default below |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, rows in table.items():
        print(summary(size, rows))
    print(f"\nuptime: {uptime()}")


if __name__ == "__main__":
    main()
