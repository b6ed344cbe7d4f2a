"""Peak memory of the exact models of odrp, latency and pathmap against their closed-form size estimates.

    python -m benchmarks.odrp_model_memory                  # the default cases
    python -m benchmarks.odrp_model_memory --time-limit 20

Each case runs in a fresh Python process: it loads the instance (and computes pathmap's routes),
reads its peak resident size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), builds the model
without a deadline, hands it to HiGHS for the time limit given (default 2 s), and reads the peak
again. The difference is the memory the model
took; beside it, the closed-form estimate (variables, constraints, nonzeros) the method checks
before building, and the bytes per nonzero. A least-squares fit of bytes per variable, per constraint
and per nonzero over every case follows (the constants of :mod:`odrp.core.memory`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import numpy as np

# (kind, generator, parameters, formulation)
CASES = [
    ("odrp", "random", {"operators": 10, "nodes": 6}, "textbook"),
    ("odrp", "random", {"operators": 12, "nodes": 8}, "textbook"),
    ("odrp", "random", {"operators": 16, "nodes": 10}, "textbook"),
    ("odrp", "random", {"operators": 16, "nodes": 10}, "compact"),
    ("odrp", "random", {"operators": 30, "nodes": 12}, "compact"),
    ("odrp", "random", {"operators": 40, "nodes": 16}, "compact"),
    ("latency", "random", {"operations": 10, "parallelism": 3}, "textbook"),
    ("latency", "random", {"operations": 16, "parallelism": 3}, "textbook"),
    ("pathmap", "ba", {"servers": 200, "components": 20}, "textbook"),
    ("pathmap", "bimodal", {"servers": 200, "components": 20}, "auto"),
]

CHILD = """
import json, resource, sys
from odrp.core.exact import model_size
from odrp.core.solvers import solve
from odrp.registry import KINDS
kind_name, generator, params, formulation, time_limit = json.loads(sys.argv[1])
kind = KINDS[kind_name]
inst = kind.load(kind.generators[generator](seed=1, **params), "generated")
if kind_name == "pathmap":
    from odrp.kinds.pathmap.routes import pair_routes
    tables = pair_routes(inst)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if kind_name == "odrp":
    from odrp.kinds.replication.exact import compact, paper, size
    from odrp.kinds.replication.exact.settings import OdrpSettings
    if formulation == "textbook":
        estimate, model = size.paper_size(inst), paper.build(inst)
    else:
        estimate, model = size.compact_size(inst, OdrpSettings()), compact.build(inst, OdrpSettings())
elif kind_name == "latency":
    from odrp.kinds.latency.exact import textbook
    estimate, model = textbook.size(inst), textbook.build(inst)
else:
    from odrp.kinds.pathmap.exact import model as flow, textbook
    if formulation == "textbook":
        estimate, model = textbook.size(inst), textbook.build(inst, tables)
    else:
        estimate, model = flow.size(inst), flow.build(inst, tables, flow.stages(inst, tables))
run = solve(model, solver="highs", time_limit=time_limit)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
size = model_size(model, nonzeros=True)
built = [size["variables"], size["constraints"], size["nonzeros"]]
print(json.dumps({"kb": after - before, "estimate": estimate, "built": built, "status": run.status}))
"""


def measure(case: tuple, time_limit: float) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([*case, time_limit])], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=2.0)
    args = parser.parse_args()
    print(f"`python -m benchmarks.odrp_model_memory {' '.join(sys.argv[1:])}`")
    load = os.getloadavg()
    print(f"\n{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")
    print(
        "| kind | instance | formulation | variables | constraints | nonzeros (estimate) "
        "| built variables / rows / nonzeros | peak MB over the instance | bytes per nonzero | status |"
    )
    print("|---|---|---|---:|---:|---:|---|---:|---:|---|")
    rows, peaks = [], []
    for case in CASES:
        kind_name, generator, params, formulation = case
        got = measure(case, args.time_limit)
        variables, constraints, nonzeros = got["estimate"]
        peak = got["kb"] * 1024
        rows.append((variables, constraints, nonzeros))
        peaks.append(peak)
        label = f"{generator} " + " ".join(f"{k}={v}" for k, v in params.items())
        built = got["built"]
        print(
            f"| {kind_name} | {label} | {formulation} | {variables:,} | {constraints:,} | {nonzeros:,} | "
            f"{built[0]:,} / {built[1]:,} / {built[2]:,} | {peak / 1e6:.0f} | {peak / max(1, nonzeros):.0f} | "
            f"{got['status']} |",
            flush=True,
        )
    fit, *_ = np.linalg.lstsq(np.array(rows, dtype=float), np.array(peaks, dtype=float), rcond=None)
    print(f"\nleast squares: {fit[0]:.0f} bytes per variable, {fit[1]:.0f} per constraint, {fit[2]:.0f} per nonzero")


if __name__ == "__main__":
    main()
