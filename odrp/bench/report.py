"""``odrp report DIR``: tables and pictures of a benchmark dataset, and one HTML page with both.

Tables: :mod:`odrp.bench.tables` computes them (one row per method; every column explained there);
this module draws, writes and prints.

Pictures (PNG, matplotlib's Agg canvas through ``Figure``, no global backend switch):

- ``profile-<kind>.png``: Dolan-Moré performance profile of the gap. The reference of every
  instance is its proven optimum, so the performance measure is the gap itself: rho_m(tau) is the
  share of method m's runs (on instances with a known optimum) whose gap is at most tau, a run
  without a gap never counting (gap = inf). tau runs on a symlog axis from 0; rho_m(0) is the
  optimal share.
- ``gap-vs-size-<kind>.png``: each run's gap against the instance size (``kind.size``, labelled
  with ``kind.size_label``), with the median per size;
- ``runtime-vs-size-<kind>.png``: runtime against size (log scale).

``index.html`` shows the tables, the pictures, how many instances have a proven optimum, and every
error row. ``summary.csv`` has the tables' numbers unrounded.

The dataset is checked first (:func:`odrp.bench.verify.require_intact`): a file that disagrees with
the manifest is named in one line and nothing is reported. Each report file is written whole and
renamed into place (:func:`odrp.bench.dataset.write_atomic`), never through a symbolic link.
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odrp.bench import dataset, export, tables, verify
from odrp.bench.tables import (
    HEADERS,
    counts_line,
    formatted,
    labelled,
    method_label,
    method_order,
    optimum_counts,
    quantile,
)

__all__ = ["profile_steps", "quantile", "report"]  # quantile: the tables' own, re-exported for older callers


@dataclass
class Report:
    """The report of one dataset: its tables (:func:`odrp.bench.tables.study_tables`, per problem the
    rows of its studies and ``--by`` values), and the files written."""

    tables: dict[str, pd.DataFrame]
    optimum_counts: dict[str, dict[str, int]]
    errors: pd.DataFrame
    out: Path
    pictures: dict[str, list[Path]] = field(default_factory=dict)
    html: Path | None = None
    exports: list[Path] = field(default_factory=list)


# ----------------------------------------------------------------------------------- pictures


def performance_profile(rows: pd.DataFrame, path: Path, title: str) -> Path:
    from matplotlib.figure import Figure

    rows = labelled(rows[rows["optimum"].notna()])
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    gaps = rows["gap"].fillna(math.inf)
    steps = {label: profile_steps(gaps[rows["label"] == label].to_numpy(float)) for label in method_order(rows)}
    right = max([1e-2] + [1.1 * taus[-1] for taus, _ in steps.values()])
    for label, (taus, shares) in steps.items():
        style = "--" if label.startswith("exact/") else "-"
        ax.step([*taus, right], [*shares, shares[-1]], style, where="post", label=label)
    ax.set_xscale("symlog", linthresh=1e-3)
    ax.set_xlim(0, right)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("tau: gap to the proven optimum (symlog)")
    ax.set_ylabel("share of runs with gap <= tau")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return _save(fig, path)


def profile_steps(gaps: np.ndarray) -> tuple[list[float], list[float]]:
    """The step function rho(tau) = share of gaps <= tau at tau = 0 and at every finite gap."""
    n = len(gaps)
    finite = np.sort(gaps[np.isfinite(gaps)])
    taus = [0.0] + [float(g) for g in np.unique(finite) if g > 0]
    shares = [float(np.sum(gaps <= tau)) / n if n else 0.0 for tau in taus]
    return taus, shares


def gap_vs_size(rows: pd.DataFrame, path: Path, title: str, size_label: str) -> Path:
    from matplotlib.figure import Figure

    rows = labelled(rows[rows["gap"].notna() & np.isfinite(rows["gap"].astype(float)) & rows["size"].notna()])
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    labels = method_order(rows)
    for k, label in enumerate(labels):
        runs = rows[rows["label"] == label]
        offset = (k - (len(labels) - 1) / 2) * 0.08
        (line,) = ax.plot(runs["size"] + offset, runs["gap"], "o", alpha=0.45, markersize=4, label=label)
        medians = runs.groupby("size")["gap"].median()
        ax.plot(medians.index + offset, medians.to_numpy(), "-", color=line.get_color(), linewidth=1.5)
    ax.set_xlabel(f"instance size ({size_label})")
    ax.set_ylabel("gap to the proven optimum")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if labels:
        ax.legend(fontsize="small")
    return _save(fig, path)


def runtime_vs_size(rows: pd.DataFrame, path: Path, title: str, size_label: str) -> Path:
    from matplotlib.figure import Figure

    rows = labelled(rows[rows["size"].notna() & (rows["runtime_s"] > 0)])
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    labels = method_order(rows)
    for k, label in enumerate(labels):
        runs = rows[rows["label"] == label]
        offset = (k - (len(labels) - 1) / 2) * 0.08
        ax.plot(runs["size"] + offset, runs["runtime_s"], "o", alpha=0.45, markersize=4, label=label)
    ax.set_yscale("log")
    ax.set_xlabel(f"instance size ({size_label})")
    ax.set_ylabel("runtime (s, log scale)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if labels:
        ax.legend(fontsize="small")
    return _save(fig, path)


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
    result = Report(tables={}, optimum_counts={}, errors=frame[frame["status"] == "error"], out=target)
    for problem in sorted(frame["problem"].unique()):
        rows = frame[frame["problem"] == problem]
        result.tables[problem] = summary[summary["problem"] == problem].drop(columns="problem").reset_index(drop=True)
        result.optimum_counts[problem] = optimum_counts(rows)
        size_label = str(rows["size_label"].dropna().iloc[0]) if rows["size_label"].notna().any() else "size"
        result.pictures[problem] = [
            performance_profile(rows, target / f"profile-{problem}.png", f"{problem}: performance profile of the gap"),
            gap_vs_size(rows, target / f"gap-vs-size-{problem}.png", f"{problem}: gap against size", size_label),
            runtime_vs_size(
                rows, target / f"runtime-vs-size-{problem}.png", f"{problem}: runtime against size", size_label
            ),
        ]
    if result.tables:
        _write(target / "summary.csv", summary.to_csv(index=False).encode())
        for name, text in export.summary_files(summary, formats).items():
            result.exports.append(_write(target / name, text.encode()))
    result.html = write_html(result, out)
    return result


def print_report(result: Report, console: Any = None) -> None:
    import sys

    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=None if sys.stdout.isatty() else 150)
    if not result.tables:
        console.print("the dataset has no rows yet")
    for problem, table in result.tables.items():
        for key, group in tables.split(table.assign(problem=problem)):
            view = Table(title=f"{tables.group_title(key)}: gap to the proven optimum, per method")
            for header in tables.CONSOLE_HEADERS:
                view.add_column(header, justify="left" if header in ("method", "statuses") else "right")
            for row in tables.compact(group):
                view.add_row(*row)
            console.print(view)
        console.print(counts_line(result.optimum_counts[problem]))
    if len(result.errors):
        console.print(f"[bold red]{len(result.errors)} error rows[/] (every message on the HTML page):")
        for row in result.errors.head(10).itertuples(index=False):
            label = method_label(row.method, row.solver)
            console.print(f"  {row.instance_id} {label} repeat {row.repeat}: {row.message}")
    console.print(f"report: {result.html}")
    if result.exports:
        console.print("tables: " + ", ".join(str(p) for p in result.exports))
    for problem, pictures in result.pictures.items():
        console.print(f"pictures ({problem}): " + ", ".join(str(p) for p in pictures))


def write_html(result: Report, out: Path) -> Path:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>odrp benchmark report</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}td:first-child{text-align:left}"
        "img{max-width:48%;margin:4px}.err td{text-align:left}</style></head><body>",
        f"<h1>Benchmark report</h1><p>dataset: <code>{esc(str(out.resolve()))}</code></p>",
    ]
    for problem, table in result.tables.items():
        parts.append(f"<h2>{esc(problem)}</h2><p>{esc(counts_line(result.optimum_counts[problem]))}</p>")
        for key, group in tables.split(table.assign(problem=problem)):
            parts.append(f"<h3>{esc(tables.group_title(key))}</h3><table>")
            parts.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h in HEADERS) + "</tr>")
            for row in formatted(group):
                parts.append("<tr>" + "".join(f"<td>{esc(cell)}</td>" for cell in row) + "</tr>")
            parts.append("</table>")
        for picture in result.pictures[problem]:
            parts.append(f"<img src='{esc(picture.name)}' alt='{esc(picture.stem)}'>")
    parts.append(f"<h2>Error rows ({len(result.errors)})</h2>")
    if len(result.errors):
        parts.append("<table class='err'><tr><th>problem</th><th>instance</th><th>method</th><th>repeat</th>")
        parts.append("<th>message</th></tr>")
        for row in result.errors.itertuples(index=False):
            cells = (row.problem, row.instance_id, method_label(row.method, row.solver), str(row.repeat), row.message)
            parts.append("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in cells) + "</tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    path = result.out / "index.html"
    _write(path, "\n".join(parts).encode())
    return path


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


def _save(fig: Any, path: Path) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return _write(path, buffer.getvalue())
