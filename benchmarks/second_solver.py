"""The second opinion of the reference grids: CBC against SCIP on the top of the reference ladder.

The reference datasets prove each optimum with two solvers that agree; HiGHS (CP-SAT for throughput) is
the first, and the second decides how far the ladder can go. For every study of the grid (by default
``benchmarks/grids/reference.yaml``), the ``--per-study`` instances of the largest size (the kind's
``size``; ties broken by the grid's order) are solved by each candidate solver, one after the other in
this process, the order alternating from one instance to the next, each through
:func:`odrp.run.run_within_limits` with the study's time limit (as a grid runs it). Per kind and solver
the table gives: instances, proven, agreeing with the grid's first solver where both prove, mean and
largest wall seconds, and the largest gap left.

    python -m benchmarks.second_solver [--grid benchmarks/grids/reference.yaml] [--per-study 2]
                                       [--solvers cbc,scip] [--records FILE] [--from FILE ...]

No constant of the toolkit is chosen here; the result chooses the reference grids' second solver
(docs/reference-dataset.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from odrp.bench.grid import load_grid
from odrp.core.result import agrees
from odrp.registry import KINDS
from odrp.run import run_within_limits


def _instance(task: Any) -> Any:
    kind = KINDS[task.problem]
    data = task.data if task.data is not None else kind.generators[task.generator](seed=task.seed, **task.params)
    return kind.load(data, task.instance_id)


def _top(tasks: list[Any], count: int) -> list[tuple[Any, Any]]:
    """The ``count`` largest instances of one study (the kind's size), the grid's order among equals."""
    built = [(task, _instance(task)) for task in tasks]
    built.sort(key=lambda pair: -KINDS[pair[0].problem].size(pair[1]))
    return built[:count]


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    grid = load_grid(args.grid)
    by_study: dict[str, list[Any]] = defaultdict(list)
    for task in grid.tasks:
        by_study[task.study].append(task)
    solvers = args.solvers.split(",")
    records = []
    position = 0
    for study, tasks in by_study.items():
        for task, instance in _top(tasks, args.per_study):
            kind = KINDS[task.problem]
            first = next(r.solver for r in task.runs if r.method == "exact")
            others = [s for s in solvers if s != first]  # a study whose first solver is a candidate: once
            order = [first, *others] if position % 2 == 0 else [first, *others[::-1]]
            position += 1
            for solver in order:
                if solver not in kind.solvers:
                    continue
                began = time.perf_counter()
                result = run_within_limits(kind, instance, "exact", solver=solver, time_limit=task.time_limit)
                record = {
                    "study": study,
                    "kind": task.problem,
                    "instance": task.instance_id,
                    "size": kind.size(instance),
                    "solver": solver,
                    "first": solver == first,
                    "status": result.status,
                    "objective": result.objective,
                    "bound": result.bound,
                    "gap": result.gap,
                    "verified": result.verified,
                    "wall_s": round(time.perf_counter() - began, 3),
                    "load": os.getloadavg()[0],
                }
                records.append(record)
                print(json.dumps(record), file=sys.stderr, flush=True)
                if args.records:
                    with open(args.records, "a") as out:
                        out.write(json.dumps(record) + "\n")
    return records


def table(records: list[dict[str, Any]]) -> str:
    firsts = {r["instance"]: r for r in records if r["first"]}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if not r["first"]:
            groups[(r["kind"], r["solver"])].append(r)
    lines = [
        "| kind | solver | instances | proven | agree with the first solver | mean s | max s | largest gap % |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (kind, solver), rows in sorted(groups.items()):
        proven = [r for r in rows if r["status"] == "optimal" and r["verified"]]
        both = [r for r in proven if firsts.get(r["instance"], {}).get("status") == "optimal"]
        agree = sum(agrees(r["objective"], firsts[r["instance"]]["objective"], 1e-6) for r in both)
        gaps = [100 * r["gap"] for r in rows if r["gap"] is not None]
        times = [r["wall_s"] for r in rows]
        totals[solver][0] += len(rows)
        totals[solver][1] += len(proven)
        lines.append(
            f"| {kind} | {solver} | {len(rows)} | {len(proven)} | {agree}/{len(both)} | "
            f"{statistics.mean(times):.1f} | {max(times):.1f} | {max(gaps) if gaps else 0:.2f} |"
        )
    lines.append("")
    lines += [f"- {solver}: {proven} of {n} proven" for solver, (n, proven) in sorted(totals.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default="benchmarks/grids/reference.yaml")
    parser.add_argument("--per-study", type=int, default=2)
    parser.add_argument("--solvers", default="cbc,scip")
    parser.add_argument("--records", default="")
    parser.add_argument("--from", dest="sources", nargs="*", default=None, metavar="FILE")
    args = parser.parse_args(argv)
    if args.sources is not None:
        records = [json.loads(line) for f in args.sources for line in Path(f).read_text().splitlines() if line]
    else:
        print(f"grid {args.grid}; load before {os.getloadavg()[0]:.2f}", flush=True)
        records = run(args)
        print(f"load after {os.getloadavg()[0]:.2f}")
    print(table(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
