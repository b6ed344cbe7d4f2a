"""The listing of the arc-flow search's packing step, with and without its knapsack tables.

    python -m benchmarks.mkp_listing [--root DIR] [--file NAME ...] [--thresholds 0,1,17,47,64,84]

For each file (default: the two SMALL files left open before the tables, 0U_M020_N0060_seed09 and
2S_M020_N0060_seed05), the root bound L of :mod:`odrp.kinds.knapsack.exact.arcflow` (column generation run to
the end), then per threshold theta = floor(L) - d (``--thresholds``: the d) the item sets
:func:`~odrp.kinds.knapsack.exact.arcflow.candidate_sets` lists and its time, once with the suffix knapsack
tables (``SUFFIX_TABLE_LIMIT`` as set) and once with the one-column fallback (``SUFFIX_TABLE_LIMIT = 0``:
the profit, surrogate and rho rows checked on every partial set against the sums of the positive values
left, no weight limit; the listing before stop 15 checked only the profit sum on partial sets and the
brackets on complete ones, and reached the visit limit at 24 274 on seed09), each with the visit limit
``SET_VISITS`` as set ("limit": the listing gave up) and the set limit raised to 100 000. Prints markdown
and the machine's load.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from benchmarks.knapsack_sets import DEFAULT_ROOT
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import arcflow, bounds
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS

FOLDER = "mkp_dellamico_small"
DEFAULT_FILES = ("probT1_0U_R50_T002_M020_N0060_seed09.txt", "probT1_2S_R50_T002_M020_N0060_seed05.txt")


def listing(mkp: arcflow.Mkp, bound: arcflow.Bound, theta: float, table_limit: int) -> tuple[str, float]:
    """(sets listed or "limit", seconds) for one threshold and one table limit."""
    saved = arcflow.SUFFIX_TABLE_LIMIT
    arcflow.SUFFIX_TABLE_LIMIT = table_limit
    try:
        started = time.perf_counter()
        delta = bound.value - theta
        sets = arcflow.candidate_sets(mkp, bound, arcflow.class_bounds(mkp, bound, delta), theta, delta, 100_000)
        return ("limit" if sets is None else str(len(sets))), time.perf_counter() - started
    finally:
        arcflow.SUFFIX_TABLE_LIMIT = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--file", action="append", help="file name in the SMALL folder (repeatable)")
    parser.add_argument("--thresholds", default="0,1,17,47,64,84", help="d in theta = floor(L) - d, comma separated")
    args = parser.parse_args()
    print(f"load {os.getloadavg()}\n")
    print("| file | L | theta | sets (tables) | s | sets (sums only) | s |")
    print("|---|---|---|---|---|---|---|")
    for name in args.file or DEFAULT_FILES:
        data = knapsack_io.read("dellamico-mkp", args.root / FOLDER / name)[0]
        family = bounds.reduce_capacities(family_of(KINDS["mkp"].load(data, data["name"])))
        mkp = arcflow.mkp_of(family)
        cardinality = arcflow.cardinality_bound(mkp, math.inf)
        generation = arcflow.column_generation(mkp, mkp.profit, cardinality, math.inf)
        g = generation.bound
        bound = arcflow.lagrangian_bound(mkp, g.beta, g.gamma, g.lam, cardinality)
        top = math.floor(bound.value + arcflow.TOL)
        for d in (int(x) for x in args.thresholds.split(",")):
            with_tables, s1 = listing(mkp, bound, top - d, arcflow.SUFFIX_TABLE_LIMIT)
            sums_only, s2 = listing(mkp, bound, top - d, 0)
            print(f"| {name} | {bound.value:.1f} | {top - d} | {with_tables} | {s1:.2f} | {sums_only} | {s2:.2f} |")
    print(f"\nload at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
