"""``odrp report DIR``: the tables, pictures and interactive page of a benchmark dataset.

Nothing is pooled over a kind's studies: every table, picture and head-to-head comparison is one study
of one kind (the grid's ``studies:``), and :mod:`odrp.bench.tables` computes the tables (per study,
and per value of each ``--by`` parameter). This module puts the pieces together:

- ``summary.csv`` (and ``summary.md`` / ``summary.tex`` with ``--format``): every table's numbers
  (:mod:`odrp.bench.paper_tables`);
- per study, the pictures for papers in PNG and SVG (:mod:`odrp.bench.pictures`): the runtime
  performance profile, the gap ECDF, and gap and runtime against size when the study has sizes;
- ``index.html``: one self-contained page that works offline (:mod:`odrp.bench.page`).

The console shows the tables, the instance counts and the first error rows.

The dataset is checked first (:func:`odrp.bench.verify.require_intact`): a file that disagrees with
the manifest is named in one line and nothing is reported. Each report file is written whole and
renamed into place (:func:`odrp.bench.dataset.write_atomic`), never through a symbolic link.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from odrp.bench import compare, dataset, page, paper_tables, pictures, tables, verify
from odrp.bench.console import print_table
from odrp.bench.tables import counts_line, method_label, optimum_counts


@dataclass
class Report:
    """The report of one dataset: its tables (:func:`odrp.bench.tables.study_tables`, per problem the
    rows of its studies and ``--by`` values), and the files written."""

    tables: dict[str, pd.DataFrame]
    optimum_counts: dict[str, dict[str, int]]
    errors: pd.DataFrame
    out: Path
    pictures: dict[str, list[Path]] = field(default_factory=dict)  # per problem, every study's files
    html: Path | None = None
    exports: list[Path] = field(default_factory=list)
    sections: list[page.StudySection] = field(default_factory=list)  # per study, what the page shows


# ------------------------------------------------------------------------------------ report


def report(
    out: str | Path, report_dir: str | Path | None = None, by: Sequence[str] = (), formats: Sequence[str] = ()
) -> Report:
    """Tables, pictures and the HTML page of the dataset in ``out`` (pictures in ``report_dir``); the
    tables per study and per value of each ``by`` parameter, also written in each of ``formats``."""
    out = Path(out)
    verify.require_intact(out)
    frame = dataset.read(out)
    summary = tables.study_tables(frame, by)  # an unknown --by name is bad input before any file is written
    target = Path(report_dir) if report_dir is not None else out / "report"
    with dataset.directory(*_root_and_parts(out, target)):  # a linked DIR/report is refused before any work
        pass
    manifest = dataset.read_manifest(out)
    result = Report(tables={}, optimum_counts={}, errors=frame[frame["status"] == "error"], out=target)
    for problem in page.kind_order(frame["problem"].unique()):
        rows = frame[frame["problem"] == problem]
        result.tables[problem] = summary[summary["problem"] == problem].drop(columns="problem").reset_index(drop=True)
        result.optimum_counts[problem] = optimum_counts(rows)
        result.pictures[problem] = []
        for study in page.study_order(problem, rows["study"].unique(), manifest):
            section = study_section(rows[rows["study"] == study], target, problem, study)
            result.sections.append(section)
            result.pictures[problem].extend(f for picture in section.pictures for f in picture.files)
    if result.tables:
        _write(target / "summary.csv", summary.to_csv(index=False).encode())
        pairs = compare.method_pairs(frame, by)  # every two methods of a table: Wilcoxon on their gaps
        _write(target / "pairs.csv", pairs.to_csv(index=False).encode())
        after = partial(compare.pair_sections, pairs)
        for name, text in paper_tables.summary_files(summary, formats, after).items():
            result.exports.append(_write(target / name, text.encode()))
    text = page.render(frame, result.sections, manifest, out.resolve().name)
    result.html = _write(target / "index.html", text.encode())
    return result


def study_section(rows: pd.DataFrame, target: Path, problem: str, study: str) -> page.StudySection:
    """One study's tables (whole, and per value of each parameter it varies), head to head and pictures."""
    drawn, profiles = pictures.study_pictures(rows, target, problem, study)
    varied = [c for c in rows.columns if c.startswith(dataset.PARAM_PREFIX) and rows[c].nunique() > 1]
    by_param = {
        column.removeprefix(dataset.PARAM_PREFIX): [
            (key[column], table) for key, table in tables.split(tables.study_tables(rows, [column]))
        ]
        for column in varied
    }
    return page.StudySection(
        problem=problem,
        study=study,
        counts=optimum_counts(rows),
        table=tables.summary_table(rows),
        by_param=by_param,
        pairs=page.head_to_head(rows),
        profiles=profiles,
        pictures=drawn,
    )


def print_report(result: Report, console: Any = None) -> None:
    import sys

    from rich.console import Console

    console = console or Console(width=None if sys.stdout.isatty() else 150)
    if not result.tables:
        console.print("the dataset has no rows yet")
    for problem, table in result.tables.items():
        for key, group in tables.split(table.assign(problem=problem)):
            title = f"{tables.group_title(key)}: gap to the proven optimum, per method"
            print_table(console, title, *tables.console_view(group))
        console.print(counts_line(result.optimum_counts[problem]))
    if len(result.errors):
        console.print(f"[bold red]{len(result.errors)} error rows[/] (every message on the HTML page):")
        for row in result.errors.head(10).itertuples(index=False):
            label = method_label(row.method, row.solver)
            console.print(f"  {row.instance_id} {label} repeat {row.repeat}: {row.message}")
    console.print(f"report: {result.html}")
    if result.exports:
        console.print("tables: " + ", ".join(str(p) for p in result.exports))
    drawn = [p for files in result.pictures.values() for p in files]
    if drawn:
        console.print(f"pictures: {len(drawn)} files (PNG and SVG, <kind>-<study>-<picture>) in {drawn[0].parent}")


def _root_and_parts(out: Path, target: Path) -> tuple[Path, tuple[str, ...]]:
    """The report folder as (root, parts below it): below ``out`` when it is inside the dataset, so
    that no part of it may be a symbolic link; else the folder the user named."""
    try:
        return out, target.relative_to(out).parts
    except ValueError:
        return target, ()


def _write(path: Path, data: bytes) -> Path:
    """Write a report file whole (its folder was checked by :func:`report`); a link there is replaced."""
    dataset.write_atomic(path.parent, path.name, lambda handle: handle.write(data))
    return path
