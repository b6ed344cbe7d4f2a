"""Whole published knapsack sets and the R-Storm instances, solved exactly with a time limit.

    python -m benchmarks.knapsack_sets [--root DIR] [--sets gap12,mkp,...] [--time-limit 60]
                                       [--solver highs|cbc|cpsat] [--limit N] [--every K] [--detail]
                                       [--match TEXT ...]

Prints markdown: one row per set (instances, solved to proven optimality, published optima
reproduced, best-known values reached, mean and largest wall and process CPU seconds per instance
(on a shared machine the CPU seconds are the better guide to a quiet machine's wall time), largest
gap left), and for the R-Storm instances one row per instance with the optimum and the gap of
every scheduler to it. The published sets are read from ``--root`` (or ``$ODRP_EXTERNAL``), a folder
with one subfolder per set as in ``tests/data/external``; without either, from ``tests/data/external``
itself, which holds a few files of each set (a set with no file there, such as ``gapabcd``, then needs
``--root``). A set whose folder is missing under ``--root`` is skipped with a message. The R-Storm
instances come from ``instances/qm3dkp``. The machine's load (``os.getloadavg``) is printed with the
tables.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odrp.core.result import Result
from odrp.io import load_instance
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.registry import KINDS
from odrp.run import run_method

REPO = Path(__file__).resolve().parent.parent
TEST_ROOT = REPO / "tests" / "data" / "external"
"""A few files of every published set, with their optima (what the tests use)."""
DEFAULT_ROOT = Path(os.environ["ODRP_EXTERNAL"]) if os.environ.get("ODRP_EXTERNAL") else TEST_ROOT
"""``$ODRP_EXTERNAL`` (the whole sets) when it is set, else :data:`TEST_ROOT`."""


@dataclass(frozen=True)
class PublishedSet:
    """A published set: where its files are, how to read them, which instances to take."""

    name: str
    folder: str
    fmt: str
    pattern: str
    senses: tuple[str, ...] = ("max",)
    keep: tuple[str, ...] = ()
    """Substrings of the file names to keep (all files when empty)."""


SETS = {
    "gap12": PublishedSet("gap1-12 (OR-Library)", "gap_orlib", "orlib-gap", "gap[0-9]*.txt", ("max", "min")),
    "gapabcd": PublishedSet("gapa-d (Chu & Beasley)", "gap_orlib", "orlib-gap", "gap[a-d].txt", ("min",)),
    "mknap": PublishedSet("mknap1, mknap2 (OR-Library)", "mknap_orlib", "orlib-mknap*", "mknap[12].txt"),
    "mknapcb1": PublishedSet("mknapcb1 (Chu & Beasley)", "mknap_orlib", "orlib-mknap", "mknapcb1.txt"),
    "mkp": PublishedSet("MKP SMALL (Dell'Amico et al.)", "mkp_dellamico_small", "dellamico-mkp", "probT1_*.txt"),
    "qkp100": PublishedSet("QKP n = 100 (Billionnet & Soutif)", "qkp_billionnet_soutif", "bs-qkp", "jeu_100_*.txt"),
    "qkp200": PublishedSet("QKP n = 200 (Billionnet & Soutif)", "qkp_billionnet_soutif", "bs-qkp", "jeu_200_*.txt"),
    "qkp": PublishedSet("QKP all (Billionnet & Soutif)", "qkp_billionnet_soutif", "bs-qkp", "jeu_*.txt"),
    "qmkp100": PublishedSet("QMKP n = 100 (Hiley & Julstrom)", "qmkp_hiley_julstrom", "hj-qmkp", "jeu_100_*.txt"),
    "qmkp": PublishedSet("QMKP all (Hiley & Julstrom)", "qmkp_hiley_julstrom", "hj-qmkp", "jeu_*.txt"),
}
DEFAULT_SETS = ("gap12", "mknap", "mkp", "qkp100", "qmkp100", "rstorm")
SCHEDULERS = ("storm_default", "rstorm", "storm_ras", "greedy", "local_search")


@dataclass
class Row:
    name: str
    runs: list[tuple[Result, float, str, str]] = field(default_factory=list)
    """(result, published value, status of the value, sense)."""
    cpu: list[float] = field(default_factory=list)
    """CPU seconds of each run, this process and its children (HiGHS, CP-SAT in process; CBC a child)."""


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (CBC runs as a child process)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def published_instances(spec: PublishedSet, root: Path, limit: int | None) -> Iterator[tuple[dict, float, str, str]]:
    folder = root / spec.folder
    optima = {
        (r["instance"], r["sense"]): (float(r["optimum"]), r["status"])
        for r in csv.DictReader((folder / "optima.csv").open())
    }
    count = 0
    for path in sorted(folder.glob(spec.pattern), key=_natural):
        fmt = spec.fmt if "*" not in spec.fmt else ("orlib-mknap2" if path.name == "mknap2.txt" else "orlib-mknap")
        for sense in spec.senses:
            options = {"sense": sense} if fmt == "orlib-gap" else {}
            for data in knapsack_io.read(fmt, path, **options):
                if (data["name"], sense) not in optima:
                    continue
                if limit is not None and count >= limit:
                    return
                count += 1
                yield (data, *optima[data["name"], sense], sense)


def _natural(path: Path) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path.name))


def run_set(spec: PublishedSet, root: Path, args: argparse.Namespace) -> Row:
    row = Row(spec.name)
    for position, (data, value, status, sense) in enumerate(published_instances(spec, root, args.limit)):
        if position % args.every or not any(m in data["name"] for m in args.match):
            continue
        kind = KINDS[data["problem"]]
        instance = kind.load(data, data["name"])
        cpu = cpu_seconds()
        result = run_method(kind, instance, "exact", solver=args.solver, time_limit=args.time_limit)
        row.cpu.append(cpu_seconds() - cpu)
        row.runs.append((result, value, status, sense))
        if args.detail:
            print(
                f"    {data['name']} ({sense}): {result.status} {result.objective} bound {result.bound} "
                f"published {value} ({status}) {result.runtime_s:.2f} s, cpu {row.cpu[-1]:.2f} s"
                + ("" if result.verified else ", NOT VERIFIED"),
                file=sys.stderr,
                flush=True,
            )
    return row


def _reaches(a: float | None, b: float, sense: str) -> bool:
    if a is None:
        return False
    return a >= b - 1e-6 * max(1.0, abs(b)) if sense == "max" else a <= b + 1e-6 * max(1.0, abs(b))


def summary(row: Row) -> str:
    runs = row.runs
    solved = [r for r, *_ in runs if r.status == "optimal"]
    optimal_rows = [(r, v, s) for r, v, st, s in runs if st == "optimal"]
    reproduced = sum(
        1 for r, v, s in optimal_rows if r.status == "optimal" and abs(r.objective - v) <= 1e-6 * max(1, abs(v))
    )
    wrong = sum(1 for r, v, s in optimal_rows if r.status == "optimal" and abs(r.objective - v) > 1e-6 * max(1, abs(v)))
    known = [(r, v, s) for r, v, st, s in runs if st == "best_known"]
    bound_ok = sum(1 for r, v, s in known if _reaches(r.bound, v, s))
    proven_ok = sum(1 for r, v, s in known if r.status == "optimal" and _reaches(r.objective, v, s))
    times = [r.runtime_s for r, *_ in runs]
    gaps = [r.gap for r, *_ in runs if r.status != "optimal" and r.gap is not None]
    unverified = sum(1 for r, *_ in runs if r.objective is not None and not r.verified)
    return (
        f"| {row.name} | {len(runs)} | {len(solved)} | {reproduced}/{len(optimal_rows)}"
        + (f" ({wrong} WRONG)" if wrong else "")
        + f" | {proven_ok} proven, {bound_ok} bounded / {len(known)} | {statistics.mean(times):.2f} | "
        f"{max(times):.2f} | {statistics.mean(row.cpu):.2f} | {max(row.cpu):.2f} | "
        f"{sum(c < 1 for c in row.cpu)} | {max(gaps) if gaps else 0:.2%} | {unverified} |"
        if runs
        else f"| {row.name} | 0 | | | | | | | | | | |"
    )


HEADER = (
    "| set | instances | proven optimal | = published optimum | >= best known | mean s | max s | mean cpu s "
    "| max cpu s | cpu < 1 s | largest gap left | unverified |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def rstorm_table(args: argparse.Namespace) -> str:
    lines = [
        "| instance | tasks | exact | optimum | s | cpu s | " + " | ".join(SCHEDULERS) + " |",
        "|---|---|---|---|---|---|" + "---|" * len(SCHEDULERS),
    ]
    for path in sorted((REPO / "instances" / "qm3dkp").glob("*.json")):
        kind, instance = load_instance(path)
        cpu = cpu_seconds()
        exact = run_method(kind, instance, "exact", solver=args.solver, time_limit=args.time_limit)
        cpu = cpu_seconds() - cpu
        cells = []
        for name in SCHEDULERS:
            r = run_method(kind, instance, name, seed=0)
            cells.append(_gap_cell(r, exact))
        lines.append(
            f"| {path.stem} | {kind.size(instance)} | {exact.status} | {_num(exact.objective)} | "
            f"{exact.runtime_s:.1f} | {cpu:.1f} | " + " | ".join(cells) + " |"
        )
        if args.detail:
            print("    " + lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def _gap_cell(r: Result, exact: Result) -> str:
    if r.objective is None:
        return "fails" if r.status == "error" else r.status
    if exact.objective is None or exact.status != "optimal":
        return _num(r.objective)
    gap = (exact.objective - r.objective) / max(abs(exact.objective), 1e-10)
    return f"{_num(r.objective)} ({gap:.1%})"


def _num(x: Any) -> str:
    return "-" if x is None else f"{x:.6g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help=f"folder of the published sets (default: $ODRP_EXTERNAL, else the few files of {TEST_ROOT})",
    )
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help=f"comma list of {', '.join([*SETS, 'rstorm'])}")
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solver", default=None, help="default: each kind's default solver")
    parser.add_argument("--limit", type=int, default=None, help="at most N instances per set")
    parser.add_argument("--every", type=int, default=1, metavar="K", help="only every K-th instance of a set")
    parser.add_argument("--detail", action="store_true", help="one line per instance on stderr")
    parser.add_argument(
        "--match",
        action="append",
        default=None,
        metavar="TEXT",
        help="only instances whose name contains TEXT (repeatable)",
    )
    args = parser.parse_args(argv)
    args.match = args.match or [""]
    names = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in names if s not in SETS and s != "rstorm"]
    if unknown:
        parser.error(f"unknown sets {unknown}")
    args.root = args.root or DEFAULT_ROOT
    if args.root.resolve() == TEST_ROOT.resolve():
        absent = [s for s in names if s in SETS and not any((args.root / SETS[s].folder).glob(SETS[s].pattern))]
        if absent:
            parser.error(
                f"--sets {','.join(absent)}: no file of {'it' if len(absent) == 1 else 'them'} in {args.root}; "
                "give the folder of the whole sets with --root DIR or $ODRP_EXTERNAL"
            )
    print(
        f"sets from {args.root}, time limit {args.time_limit:g} s, solver {args.solver or 'per-kind default'}, "
        f"load {os.getloadavg()}\n"
    )
    published = [s for s in names if s in SETS]
    if published:
        print(HEADER)
        for name in published:
            spec = SETS[name]
            if not (args.root / spec.folder / "optima.csv").exists():
                print(f"| {spec.name} | skipped: {args.root / spec.folder} not found | | | | | | | | | | |")
                continue
            print(summary(run_set(spec, args.root, args)), flush=True)
    if "rstorm" in names:
        print("\nR-Storm instances (qm3dkp): objective of each scheduler and its gap to the optimum\n")
        print(rstorm_table(args))
    print(f"\nload at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
