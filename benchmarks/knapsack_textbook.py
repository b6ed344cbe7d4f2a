"""The default exact method against the textbook model, side by side on published knapsack sets.

    python -m benchmarks.knapsack_textbook [--root DIR] [--sets gap12,gapabcd,mkp,qkp100,qkp200]
                                           [--time-limit 60] [--every K[,K...]] [--match TEXT]
                                           [--records FILE] [--from FILE ...]

Every instance is solved twice in one process, once with ``--formulation auto`` (the default) and
once with ``--formulation textbook`` (:mod:`odrp.kinds.knapsack.exact.textbook`), HiGHS, the order of
the two alternating from one instance to the next. Per set the table gives: instances; proven
optimal by each; mean and largest wall seconds and mean CPU seconds (process and children) of each;
the geometric mean over the instances of default wall / textbook wall (each time at least 0.01 s,
so that two runs of a few milliseconds count as a tie); the runs where the default has no incumbent
(and how many of them the textbook has one for); the runs where the default found a worse solution
than the textbook; the largest relative gap left (incumbent to bound) by each; the wrong or unverified
answers. ``--records FILE`` appends one JSON line per run; ``--from FILE``
prints the table of recorded runs (several files: one table over all), so that a long comparison can
be split into several runs. The sets are those of :mod:`benchmarks.knapsack_sets` (``--root`` or
``$ODRP_EXTERNAL``); the machine's load is printed with the table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

from benchmarks.knapsack_sets import DEFAULT_ROOT, SETS, cpu_seconds, published_instances
from odrp.registry import KINDS
from odrp.run import run_method

FORMULATIONS = ("auto", "textbook")
FLOOR_S = 0.01
"""Least time counted in the ratio."""


def run(args: argparse.Namespace) -> list[dict]:
    records = []
    for name, every in zip(args.sets, args.every, strict=True):
        spec = SETS[name]
        for position, (data, value, status, sense) in enumerate(published_instances(spec, args.root, None)):
            if position % every or not any(m in data["name"] for m in args.match):
                continue
            kind = KINDS[data["problem"]]
            instance = kind.load(data, data["name"])
            order = FORMULATIONS if position % 2 == 0 else FORMULATIONS[::-1]
            for formulation in order:
                cpu, wall = cpu_seconds(), time.perf_counter()
                result = run_method(
                    kind, instance, "exact", solver="highs", time_limit=args.time_limit, formulation=formulation
                )
                record = {
                    "set": name,
                    "instance": data["name"],
                    "sense": sense,
                    "formulation": formulation,
                    "status": result.status,
                    "objective": result.objective,
                    "bound": result.bound,
                    "verified": result.verified,
                    "published": value,
                    "published_status": status,
                    "wall_s": time.perf_counter() - wall,
                    "cpu_s": cpu_seconds() - cpu,
                    "time_limit": args.time_limit,
                    "load": os.getloadavg()[0],
                }
                records.append(record)
                flag = "" if result.verified or result.objective is None else " NOT VERIFIED"
                print(
                    f"    {name} {data['name']} ({sense}) {formulation}: {result.status} {result.objective} "
                    f"bound {result.bound} published {value} ({status}) {record['wall_s']:.2f} s, "
                    f"cpu {record['cpu_s']:.2f} s{flag}",
                    file=sys.stderr,
                    flush=True,
                )
                if args.records:
                    with args.records.open("a") as out:
                        out.write(json.dumps(record) + "\n")
    return records


HEADER = (
    "| set | instances | proven: default / textbook | mean s: default / textbook | max s: default / textbook "
    "| mean cpu s: default / textbook | geo-mean time ratio default/textbook | default without incumbent "
    "(textbook has one) | default worse than textbook | largest gap left: default / textbook | wrong or unverified |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|"
)


def _better(a: float | None, b: float | None, sense: str) -> bool:
    """a strictly better than b (None is worst)."""
    if a is None:
        return False
    if b is None:
        return True
    eps = 1e-6 * max(1.0, abs(b))
    return a > b + eps if sense == "max" else a < b - eps


def _gap(r: dict) -> float | None:
    """Relative gap of a run (None without incumbent or bound; 0 when proven)."""
    if r["status"] == "optimal":
        return 0.0
    if r["objective"] is None or r["bound"] is None:
        return None
    return abs(r["objective"] - r["bound"]) / max(1e-10, abs(r["objective"]))


def _largest_gap(runs: list[dict]) -> str:
    gaps = [_gap(r) for r in runs]
    if any(g is None for g in gaps):
        return "none for some"
    return f"{max(gaps):.2%}"


def table(records: list[dict]) -> str:
    lines = [HEADER]
    sets = list(dict.fromkeys(r["set"] for r in records))
    for name in sets:
        pairs: dict[tuple[str, str], dict[str, dict]] = {}
        for r in records:
            if r["set"] == name:
                pairs.setdefault((r["instance"], r["sense"]), {})[r["formulation"]] = r
        both = [p for p in pairs.values() if all(f in p for f in FORMULATIONS)]
        if not both:
            continue
        d, t = [p["auto"] for p in both], [p["textbook"] for p in both]
        proven = [sum(r["status"] == "optimal" for r in rs) for rs in (d, t)]
        ratio = math.exp(
            statistics.mean(
                math.log(max(a["wall_s"], FLOOR_S) / max(b["wall_s"], FLOOR_S)) for a, b in zip(d, t, strict=True)
            )
        )
        missing = [a for a in d if a["objective"] is None]
        missing_t = sum(1 for a, b in zip(d, t, strict=True) if a["objective"] is None and b["objective"] is not None)
        worse = [a for a, b in zip(d, t, strict=True) if _better(b["objective"], a["objective"], a["sense"])]
        wrong = sum(
            1
            for r in d + t
            if (r["objective"] is not None and not r["verified"])
            or (
                r["status"] == "optimal"
                and r["published_status"] == "optimal"
                and abs(r["objective"] - r["published"]) > 1e-6 * max(1.0, abs(r["published"]))
            )
        )
        names = ", ".join(f"{a['instance']}" for a in missing) if missing else "none"
        worse_names = ", ".join(a["instance"] for a in worse) if worse else "none"
        lines.append(
            f"| {SETS[name].name if name in SETS else name} | {len(both)} | {proven[0]} / {proven[1]} | "
            f"{statistics.mean(r['wall_s'] for r in d):.2f} / {statistics.mean(r['wall_s'] for r in t):.2f} | "
            f"{max(r['wall_s'] for r in d):.2f} / {max(r['wall_s'] for r in t):.2f} | "
            f"{statistics.mean(r['cpu_s'] for r in d):.2f} / {statistics.mean(r['cpu_s'] for r in t):.2f} | "
            f"{ratio:.2f} | {len(missing)}: {names} ({missing_t}) | {worse_names} | "
            f"{_largest_gap(d)} / {_largest_gap(t)} | {wrong} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="folder of the published sets")
    parser.add_argument("--sets", default="gap12,gapabcd,mkp,qkp100,qkp200", help=f"comma list of {', '.join(SETS)}")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--every", default="1", metavar="K[,K...]", help="only every K-th instance of a set (one K, or one per set)"
    )
    parser.add_argument("--match", action="append", default=None, metavar="TEXT")
    parser.add_argument("--records", type=Path, default=None, help="append one JSON line per run to FILE")
    parser.add_argument("--from", dest="sources", type=Path, nargs="+", default=None, help="table of recorded runs")
    args = parser.parse_args(argv)
    if args.sources:
        records = [json.loads(line) for path in args.sources for line in path.read_text().splitlines() if line]
        print(table(records))
        return 0
    args.match = args.match or [""]
    args.sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in args.sets if s not in SETS]
    if unknown:
        parser.error(f"unknown sets {unknown}")
    every = [int(k) for k in args.every.split(",")]
    if len(every) not in (1, len(args.sets)) or min(every) < 1:
        parser.error("--every: one positive K, or one per set")
    args.every = every * len(args.sets) if len(every) == 1 else every
    args.root = args.root or DEFAULT_ROOT
    print(f"sets from {args.root}, time limit {args.time_limit:g} s, HiGHS, load {os.getloadavg()}\n")
    print(table(run(args)))
    print(f"\nload at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
