"""The listing of the arc-flow search's packing step, with and without its knapsack tables.

    python -m benchmarks.mkp_listing [--root DIR] [--file NAME ...] [--thresholds 0,1,17,47,64,84]

For each file (default: 0U_M020_N0060_seed09 and 2S_M020_N0060_seed05 of Dell'Amico et al.'s SMALL
set, whose thresholds below floor(L) the listing settles only with the weight in its tables; read from
``--root``/mkp_dellamico_small, else from ``tests/data/mkp_packing``), the root bound L of
:mod:`odrp.kinds.knapsack.exact.arcflow` (column generation run to the end), then per threshold
theta = floor(L) - d (``--thresholds``: the d) the item sets
:func:`~odrp.kinds.knapsack.exact.arcflow.candidate_sets` lists and its time, once with the suffix
knapsack tables (the default ``suffix_table_limit`` of
:class:`~odrp.kinds.knapsack.exact.settings.ArcFlowSettings`) and once with the one-column fallback
(``suffix_table_limit=0``: the profit, surrogate and rho rows checked on every partial set against the
sums of the positive values left, no weight limit), each with the default visit limit ``set_visits``
("limit": the listing gave up) and the set limit raised to 100 000. Prints markdown and the machine's
load.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.knapsack_sets import DEFAULT_ROOT, REPO
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import arcflow, bounds
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS

FOLDER = "mkp_dellamico_small"
DEFAULT_FILES = ("probT1_0U_R50_T002_M020_N0060_seed09.txt", "probT1_2S_R50_T002_M020_N0060_seed05.txt")
PACKING_DATA = REPO / "tests" / "data" / "mkp_packing"
"""The test copies of four SMALL files, among them the two default ones."""


def listing(mkp: arcflow.Mkp, bound: arcflow.Bound, theta: float, table_limit: int) -> tuple[str, float]:
    """(sets listed or "limit", seconds) for one threshold and one table limit."""
    settings = replace(ArcFlowSettings(), set_limit=100_000, suffix_table_limit=table_limit)
    started = time.perf_counter()
    delta = bound.value - theta
    sets = arcflow.candidate_sets(mkp, bound, arcflow.class_bounds(mkp, bound, delta), theta, delta, settings)
    return ("limit" if sets is None else str(len(sets))), time.perf_counter() - started


def find(root: Path, name: str, parser: argparse.ArgumentParser) -> Path:
    """The file ``name`` under ``root``/mkp_dellamico_small, else among the test copies."""
    for path in (root / FOLDER / name, PACKING_DATA / name):
        if path.exists():
            return path
    parser.error(f"--file {name}: not in {root / FOLDER} nor {PACKING_DATA}; give the whole set with --root DIR")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--file", action="append", help="file name in the SMALL folder (repeatable)")
    parser.add_argument("--thresholds", default="0,1,17,47,64,84", help="d in theta = floor(L) - d, comma separated")
    args = parser.parse_args()
    paths = [find(args.root, name, parser) for name in args.file or DEFAULT_FILES]
    print(f"load {os.getloadavg()}\n")
    print("| file | L | theta | sets (tables) | s | sets (sums only) | s |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        data = knapsack_io.read("dellamico-mkp", path)[0]
        family = bounds.reduce_capacities(family_of(KINDS["mkp"].load(data, data["name"])))
        mkp = arcflow.mkp_of(family)
        cardinality = arcflow.cardinality_bound(mkp, math.inf)
        generation = arcflow.column_generation(mkp, mkp.profit, cardinality, math.inf)
        g = generation.bound
        bound = arcflow.lagrangian_bound(mkp, g.beta, g.gamma, g.lam, cardinality)
        top = math.floor(bound.value + arcflow.TOL)
        for d in (int(x) for x in args.thresholds.split(",")):
            with_tables, s1 = listing(mkp, bound, top - d, ArcFlowSettings().suffix_table_limit)
            sums_only, s2 = listing(mkp, bound, top - d, 0)
            print(
                f"| {path.name} | {bound.value:.1f} | {top - d} | {with_tables} | {s1:.2f} | {sums_only} | {s2:.2f} |"
            )
    print(f"\nload at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
