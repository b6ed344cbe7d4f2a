"""The tables of docs/reference-dataset.md and docs/reference-large.md, from an export alone.

    python -m benchmarks.reference_summary EXPORT_DIR

Reads ``optima.csv`` and ``results.parquet`` of an export (``odrp dataset export``) and prints, as
Markdown:

- per kind, the instances, their sizes, how many optima two solvers proved and agree on, the other
  instances by what was established, and the longest exact run;
- per study, the instances by tier (``proven`` by two solvers, ``proven_once``, ``bounded`` within the
  study's ``certify`` gap, ``open``) and the largest gap between an instance's best known solution and
  its best bound;
- per study and method, the runs with a solution, the median gap to the best known solution and the
  largest gap to the best bound: the true gap of every run is at most the latter, proven or not;
- per kind, the report's table of every method (:func:`odrp.bench.tables.summary_table`: how often
  each method is optimal, its mean and worst gap, its certified gaps on bounded instances, its time).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from odrp.bench.tables import HEADERS, formatted, method_label, percent, summary_table
from odrp.core.result import relative_gap

TIERS = ("proven", "proven_once", "bounded", "open")


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


def certificate_gap(row: pd.Series) -> float:
    """How far an instance's best known solution may be from the optimum: its relative gap to the best bound."""
    if pd.isna(row["best_known"]) or pd.isna(row["best_bound"]):
        return float("nan")
    gap = relative_gap(float(row["best_known"]), float(row["best_bound"]), row["sense"])
    return float("nan") if gap is None else gap


def tiers_table(optima: pd.DataFrame, results: pd.DataFrame) -> list[str]:
    """Per study: instances by tier, and the largest gap between best known and best bound."""
    study = results.drop_duplicates("instance_id").set_index("instance_id")["study"]
    optima = optima.assign(study=optima["instance"].map(study), certificate=optima.apply(certificate_gap, axis=1))
    lines = [
        "| study | instances | " + " | ".join(TIERS) + " | largest gap, best known to best bound |",
        "|---|---|" + "---|" * len(TIERS) + "---|",
    ]
    for name, rows in optima.groupby("study", sort=False):
        counts = rows["tier"].value_counts()
        lines.append(
            f"| {name} | {len(rows)} | "
            + " | ".join(str(int(counts.get(t, 0))) for t in TIERS)
            + f" | {percent(float(rows['certificate'].max()))} |"
        )
    counts = optima["tier"].value_counts()
    lines.append(f"| all | {len(optima)} | " + " | ".join(str(int(counts.get(t, 0))) for t in TIERS) + " | |")
    return lines


def certified_table(results: pd.DataFrame) -> list[str]:
    """Per study and method: runs with a solution, median gap to the best known, largest gap to the best bound."""
    lines = [
        "| study | method | runs | with solution | median gap to best known | largest gap to best bound |",
        "|---|---|---|---|---|---|",
    ]
    results = results.assign(
        label=[method_label(m, s) for m, s in zip(results["method"], results["solver"], strict=True)]
    )
    for (name, label), runs in results.groupby(["study", "label"], sort=False):
        solved = runs[runs["verified"].fillna(False).astype(bool) & runs["objective"].notna()]
        lines.append(
            f"| {name} | {label} | {len(runs)} | {len(solved)} | {percent(float(solved['gap_known'].median()))} "
            f"| {percent(float(solved['gap_bound'].max()))} |"
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
    sections = [
        kinds_table(optima, results),
        tiers_table(optima, results),
        certified_table(results),
        methods_tables(results),
    ]
    print("\n\n".join("\n".join(section) for section in sections))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
