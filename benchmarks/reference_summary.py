"""The tables of docs/reference-dataset.md, from an export of the reference dataset alone.

    python -m benchmarks.reference_summary EXPORT_DIR

Reads ``optima.csv`` and ``results.parquet`` of an export (``odrp dataset export``) and prints, as
Markdown: per kind, the instances, their sizes, how many optima two solvers proved and agree on, and
the longest exact run; then per kind the report's table of every method (:func:`odrp.bench.report.summary_table`:
how often each method is optimal, its mean and worst gap, its mean time).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from odrp.bench.report import HEADERS, formatted, summary_table


def kinds_table(optima: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    lines = [
        "| kind | instances | sizes | proven by two solvers that agree | other | exact solvers | longest exact run s |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, rows in optima.groupby("kind"):
        exact = results[(results["problem"] == kind) & (results["method"] == "exact")]
        two = int(((rows["established"] == "proven") & (rows["solvers"].fillna("").str.split().str.len() >= 2)).sum())
        other = rows[~((rows["established"] == "proven") & (rows["solvers"].fillna("").str.split().str.len() >= 2))]
        others = ", ".join(f"{n} {s}" for s, n in other["established"].value_counts().items()) or "-"
        label = rows["size_label"].dropna().iloc[0] if rows["size_label"].notna().any() else "size"
        lines.append(
            f"| {kind} | {len(rows)} | {int(rows['size'].min())}-{int(rows['size'].max())} {label} | {two} | {others} "
            f"| {' '.join(sorted(exact['solver'].dropna().unique()))} | {exact['runtime_s'].max():.1f} |"
        )
    return lines


def methods_tables(results: pd.DataFrame) -> list[str]:
    lines = []
    for kind in sorted(results["problem"].unique()):
        table = summary_table(results[results["problem"] == kind])
        lines += [f"### {kind}", "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        lines += ["| " + " | ".join(row) + " |" for row in formatted(table)]
        lines.append("")
    return lines


def main(argv: list[str]) -> int:
    export = Path(argv[0])
    optima = pd.read_csv(export / "optima.csv")
    results = pd.read_parquet(export / "results.parquet")
    print("\n".join([*kinds_table(optima, results), "", *methods_tables(results)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
