"""The exact frontier: the four placement kinds from the papers' sizes to about four times them.

For each kind a ladder of sizes (:data:`LADDER`), seeds per size, and per instance:

- the default exact method as a user runs it, ``odrp solve FILE --time-limit S --json`` in a fresh
  process (the CLI: a child process under the watchdog), once per source tree given with ``--tree``
  (``--tree before=/path/to/an/older/checkout --tree after=.``: the runs of one instance follow each
  other, so that both see the same machine load);
- the kind's fast heuristics (``ProblemKind.starts``), each alone with the same time limit, as a user
  runs them, with the newest tree.

Per size and tree it prints: runs, proven optima, median and largest wall time, median and largest gap,
runs without an incumbent, and runs whose incumbent is worse than a fast heuristic's (beyond 1e-6
relative). Every run is also written to ``--out`` as one JSON line (the Result's status, objective,
bound, gap, wall time, the load at its start), so a table can be printed again without running:
``--table FILE``.

    python -m benchmarks.frontier --seeds 1001-1005 --out tuning.jsonl              # the tuning seeds
    python -m benchmarks.frontier --seeds 2001-2005 --tree before=/tmp/old --tree after=. --out report.jsonl
    python -m benchmarks.frontier --table report.jsonl                               # the table again
    python -m benchmarks.frontier --exact-only --tree before=/tmp/old --out before.jsonl  # one tree's exact runs
    python -m benchmarks.frontier --kinds latency --sizes 1 --seeds 2001            # one size of one kind

Seeds 1001-1005 are the tuning seeds of the exact methods' choices and constants; 2001-2005 are held
out for reporting (docs/measurements/frontier.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from odrp.core.result import agrees

LADDER: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "odrp": [
        ("8 x 6", {"operators": 8, "nodes": 6}),
        ("16 x 12", {"operators": 16, "nodes": 12}),
        ("24 x 16", {"operators": 24, "nodes": 16}),
        ("32 x 20", {"operators": 32, "nodes": 20}),
    ],
    "throughput": [
        ("10 x 10", {"components": 10, "machines": 10}),
        ("15 x 15", {"components": 15, "machines": 15}),
        ("20 x 30", {"components": 20, "machines": 30}),
    ],
    "qm3dkp": [
        ("10 on 2 x 4", {"components": 10, "racks": 2, "nodes_per_rack": 4}),
        ("20 on 3 x 4", {"components": 20, "racks": 3, "nodes_per_rack": 4}),
        ("50 on 4 x 8", {"components": 50, "racks": 4, "nodes_per_rack": 8}),
    ],
    "latency": [
        ("20 operations (38 operators)", {"operations": 20}),
        ("30 operations (58 operators)", {"operations": 30}),
        ("42 operations (82 operators)", {"operations": 42}),
    ],
}
"""Per kind, (label, generator parameters of the ``random`` generator) from the papers' size upwards:
ODRP's DEBS 2015 application has 8 operators; Nasiri et al. evaluate up to 30 machines; R-Storm runs on 12
nodes in 2 racks and on 24 nodes; Ecker et al.'s T-R7 has 38 operators (20 operations)."""


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def _odrp(tree: Path, args: list[str], timeout: float) -> dict[str, Any]:
    """``python -m odrp ARGS --json`` with ``tree`` first on the path; the Result object and the wall time."""
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()))
    load = os.getloadavg()[0]
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "odrp", *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        timeout=timeout,
        check=False,
    )
    wall = time.perf_counter() - began
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = {"status": "error", "message": (done.stderr or done.stdout)[-300:]}
    stats = (result.get("metrics") or {}).get("method_stats") or {}
    members = stats.get("race") or stats.get("combined") or []  # what each raced member answered
    return {
        "status": result.get("status"),
        "objective": result.get("objective"),
        "bound": result.get("bound"),
        "gap": result.get("gap"),
        "verified": result.get("verified"),
        "solver": result.get("solver"),
        "message": (result.get("message") or result.get("error") or "")[:300],
        "wall_s": round(wall, 2),
        "load": round(load, 2),
        "members": [
            {key: m.get(key) for key in ("formulation", "method", "status", "objective", "bound") if key in m}
            for m in members
        ],
    }


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from odrp.registry import KINDS

    trees = [(label, Path(path)) for label, _, path in (t.partition("=") for t in args.tree)] or [("after", Path("."))]
    rows: list[dict[str, Any]] = []
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (one line per run, as it ends)
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.kinds.split(","):
            kind = KINDS[name]
            ladder = LADDER[name]
            chosen = [ladder[int(k)] for k in args.sizes.split(",")] if args.sizes else ladder
            for label, params in chosen:
                for seed in _seeds(args.seeds):
                    data = kind.generators["random"](seed=seed, **params)
                    path = Path(scratch) / f"{name}-{seed}.json"
                    path.write_text(json.dumps(data))
                    common = {"kind": name, "size": label, "seed": seed, "time_limit": args.time_limit}
                    runs = [(tree_label, tree, "exact") for tree_label, tree in trees]
                    if not args.exact_only:
                        runs += [("heuristic", trees[-1][1], method) for method in kind.starts]
                    for tree_label, tree, method in runs:
                        argv = ["solve", str(path), "--time-limit", str(args.time_limit)]
                        argv += [] if method == "exact" else ["--method", method]
                        row = {**common, "tree": tree_label, "method": method}
                        row.update(_odrp(tree, argv, timeout=args.time_limit * 3 + 60))
                        rows.append(row)
                        print(json.dumps(row), file=sys.stderr, flush=True)
                        if out is not None:
                            out.write(json.dumps(row) + "\n")
                            out.flush()
    if out is not None:
        out.close()
    return rows


def _worse(objective: float | None, other: float | None, sense: str) -> bool:
    """``objective`` (None: no incumbent) worse than ``other`` beyond :func:`agrees`."""
    if other is None:
        return False
    if objective is None:
        return True
    return not agrees(objective, other) and (objective < other if sense == "max" else objective > other)


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of :data:`LADDER`'s sizes: one row per kind, size and tree."""
    from odrp.registry import KINDS

    exact: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    heuristics: dict[tuple[str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["method"] == "exact":
            exact[(row["kind"], row["size"], row["tree"])].append(row)
        else:
            heuristics[(row["kind"], row["size"], row["seed"])].append(row)
    lines = [
        "| kind | size | tree | runs | proven | median s | max s | median gap % | max gap % | no incumbent | "
        "worse than a heuristic | load |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    order = {(k, label): (i, j) for i, k in enumerate(LADDER) for j, (label, _) in enumerate(LADDER[k])}
    for key in sorted(exact, key=lambda k: (*order.get(k[:2], (99, 99)), k[2] != "before", k[2])):
        name, size, tree = key
        group = exact[key]
        sense = KINDS[name].sense
        times = [r["wall_s"] for r in group]
        gaps = [100 * r["gap"] for r in group if r["gap"] is not None]
        worse = 0
        for r in group:
            found = [h["objective"] for h in heuristics[(name, size, r["seed"])] if h.get("verified")]
            worse += any(_worse(r["objective"] if r.get("verified") else None, h, sense) for h in found)
        loads = [r["load"] for r in group]
        lines.append(
            f"| {name} | {size} | {tree} | {len(group)} | {sum(r['status'] == 'optimal' for r in group)} | "
            f"{statistics.median(times):.1f} | {max(times):.1f} | "
            + (f"{statistics.median(gaps):.2f} | {max(gaps):.2f} | " if gaps else "- | - | ")
            + f"{sum(r['objective'] is None for r in group)} | {worse} | {min(loads):.1f}-{max(loads):.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default=",".join(LADDER), help="comma-separated kinds (default: all four)")
    parser.add_argument("--sizes", default="", help="comma-separated positions in the kind's ladder (default: all)")
    parser.add_argument("--seeds", default="2001-2005", help="e.g. 1001-1005 (tuning) or 2001-2005 (report)")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH", help="a source tree to run")
    parser.add_argument(
        "--exact-only", action="store_true", help="no heuristic runs (a table of several files takes them from any)"
    )
    parser.add_argument("--out", default="", help="append every run as a JSON line to this file")
    parser.add_argument("--table", nargs="*", default=None, metavar="FILE", help="print the table of these files")
    args = parser.parse_args(argv)
    if args.table is not None:
        rows = [json.loads(line) for f in args.table for line in Path(f).read_text().splitlines() if line.strip()]
    else:
        print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
        rows = run(args)
        print(f"load after: {os.getloadavg()[0]:.2f}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
