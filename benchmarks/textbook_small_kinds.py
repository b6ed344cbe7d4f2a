"""The default exact method (``auto``) against the textbook formulation, side by side: odrp, latency, pathmap.

    python -m benchmarks.textbook_small_kinds --kinds odrp --time-limit 10
    python -m benchmarks.textbook_small_kinds --kinds latency,pathmap --seeds 101,102,103,104,105

Random instances from each kind's generators, per size: both formulations on the same instances
with the same solver and time limit, each run through :func:`odrp.run.run_within_limits` (the
evaluator re-scores every answer). Prints one markdown table per kind: per size, the median size of
the textbook model in nonzeros, how many runs each formulation proved optimal, the mean wall-clock
seconds of each and the longest (a run cut by the limit counts as long as it took; a refused one as
the limit), the geometric-mean ratio of the
default's time to the textbook's, the runs without an incumbent, and the textbook runs refused by
the memory budget before building (counted as the limit and without an incumbent). The command
line, the date and the load average head the output.

The seeds (default 101-105) were not used to choose any constant of these methods; the tuning
instances are named in ``docs/methods/<kind>.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from odrp import methods
from odrp.core.memory import ModelTooLarge, budget, estimate
from odrp.kinds.latency.exact import textbook as latency_textbook
from odrp.kinds.pathmap.exact import textbook as pathmap_textbook
from odrp.kinds.replication.exact.size import paper_size
from odrp.registry import KINDS

# (label, generator, parameters) per kind
SIZES: dict[str, list[tuple[str, str, dict[str, Any]]]] = {
    "odrp": [
        (f"{o} x {n} {profile}", "random", {"operators": o, "nodes": n, "weights_profile": profile})
        for o, n in ((4, 3), (5, 3), (6, 4), (8, 5), (10, 6), (12, 8), (16, 10))
        for profile in ("balanced", "response_time")
    ],
    "latency": [(f"{k} operations", "random", {"operations": k, "parallelism": 2}) for k in (3, 4, 6, 8, 10)],
    "pathmap": [
        ("ba 30 servers, 5 components", "ba", {"servers": 30, "components": 5}),
        ("ba 60 servers, 10 components", "ba", {"servers": 60, "components": 10}),
        ("ba 120 servers, 15 components", "ba", {"servers": 120, "components": 15}),
        ("bimodal 50 servers, 8 components", "bimodal", {"servers": 50, "components": 8}),
        ("bimodal 100 servers, 10 components", "bimodal", {"servers": 100, "components": 10}),
    ],
}


TEXTBOOK_SIZE = {"odrp": paper_size, "latency": latency_textbook.size, "pathmap": pathmap_textbook.size}
"""The closed-form size of each kind's textbook model (the median of its nonzeros heads each row)."""


RUN = getattr(methods, "run_within_limits", methods.run_method)
"""The runner: under the hard time and memory limits where the toolkit has them."""


@dataclass
class Row:
    """The runs of one formulation on the instances of one size."""

    times: list[float] = field(default_factory=list)
    proven: int = 0
    without_incumbent: int = 0
    refused: int = 0


def run(
    kind_name: str, data: dict[str, Any], formulation: str, solver: str, time_limit: float
) -> tuple[float, str, bool]:
    """Wall seconds, status and whether an incumbent came back.

    The run goes through :func:`odrp.run.run_within_limits` where it exists (a solver stuck in C
    code past the limit is then a ``time_limit`` run without a solution); a textbook model whose
    closed-form size is over the memory budget is ``refused`` at the limit without being run.
    """
    kind = KINDS[kind_name]
    instance = kind.load(data, "generated")
    if formulation == "textbook" and estimate(*TEXTBOOK_SIZE[kind_name](instance)) > budget():
        return time_limit, "refused", False
    started = time.perf_counter()
    try:
        result = RUN(kind, instance, "exact", solver=solver, time_limit=time_limit, formulation=formulation)
    except ModelTooLarge:
        return time_limit, "refused", False
    wall = time.perf_counter() - started
    if result.solution is not None and not result.verified:
        raise AssertionError(f"{kind_name} {formulation}: an unverified solution ({result.message})")
    return wall, result.status, result.solution is not None


def table(kind_name: str, seeds: list[int], solver: str, time_limit: float) -> list[str]:
    kind = KINDS[kind_name]
    lines = [
        f"### {kind_name} ({solver}, {time_limit:g} s limit, seeds {','.join(map(str, seeds))})",
        "",
        "| size | textbook nonzeros | runs | proven auto | proven textbook | mean s auto | mean s textbook "
        "| max s auto | max s textbook | geo-mean ratio | no incumbent auto | no incumbent textbook "
        "| textbook refused |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, generator, params in SIZES[kind_name]:
        rows = {"auto": Row(), "textbook": Row()}
        ratios, nonzeros = [], []
        for seed in seeds:
            data = kind.generators[generator](seed=seed, **params)
            nonzeros.append(TEXTBOOK_SIZE[kind_name](kind.load(data, "generated"))[2])
            times = {}
            for formulation, row in rows.items():
                wall, status, incumbent = run(kind_name, data, formulation, solver, time_limit)
                times[formulation] = wall
                row.times.append(wall)
                row.proven += status in ("optimal", "infeasible")
                row.without_incumbent += not incumbent and status != "infeasible"
                row.refused += status == "refused"
            ratios.append(max(times["auto"], 1e-3) / max(times["textbook"], 1e-3))
        ratio = math.exp(statistics.fmean(math.log(r) for r in ratios))
        a, t = rows["auto"], rows["textbook"]
        lines.append(
            f"| {label} | {statistics.median(nonzeros):,.0f} | {len(seeds)} | {a.proven} | {t.proven} | "
            f"{statistics.fmean(a.times):.2f} | {statistics.fmean(t.times):.2f} | {max(a.times):.2f} | "
            f"{max(t.times):.2f} | {ratio:.2f} | {a.without_incumbent} | {t.without_incumbent} | {t.refused} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="odrp,latency,pathmap")
    parser.add_argument("--seeds", default="101,102,103,104,105")
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--time-limit", type=float, default=10.0)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"`python -m benchmarks.textbook_small_kinds {' '.join(sys.argv[1:])}`")
    print()
    load = os.getloadavg()
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print()
    for kind_name in args.kinds.split(","):
        print("\n".join(table(kind_name, seeds, args.solver, args.time_limit)))
        print()
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
