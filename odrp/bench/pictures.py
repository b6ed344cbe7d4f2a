"""The pictures of one study, for papers: profiles and size plots (matplotlib; PNG and SVG).

Every picture is drawn from one study's rows, so methods that ran on different instance sets never
share a picture, and each profile is computed over one instance set for every method it draws: the
instances of the study with a proven optimum on which every method of the study has at least one row
(:func:`profile_instances`; how many instances that leaves out is said under the picture).

**Runtime performance profile** (Dolan and Moré 2002). A run *solves* an instance when its verified
objective equals the proven optimum (``gap == 0``): an exact run's time thus includes its proof, a
heuristic's is the time it took to find the optimum. On instance p, t_p is the runtime of the fastest
run of any drawn method that solved p, and a run's ratio is ``runtime / t_p`` (runtimes below
``MIN_TIME`` count as ``MIN_TIME``); a run that did not solve p has ratio +inf (it never counts).
rho_m(tau) is the share of instances on which method m's ratio is at most tau, the repeats of m on
one instance sharing its weight (with one run per instance this is Dolan and Moré's definition).
tau runs from 1 on a log2 axis; rho_m(1) is the share on which m was the fastest to the optimum.

**Gap ECDF.** The same instances and weights, with the gap to the proven optimum instead of the
ratio: rho_m(tau) is the share of instances on which m's gap is at most tau, a run without a gap (no
solution, an error, an objective the evaluator contradicts) counting as gap +inf. tau runs from 0 on
a symlog axis; rho_m(0) is the share solved to optimality. Exact solvers whose every gap there is 0
are named under the picture instead of drawn (their line is 1 everywhere and would hide others).

**Certified gap ECDF** (only when the study has ``bounded`` instances: no proof, best known within
the study's ``certify`` gap of the best bound, :mod:`odrp.bench.optimum`). Its own picture over those
instances, never mixed with the proven ones: per method, the ECDF of ``gap_bound`` (solid; the true
gap is at most this, so the true ECDF is at least this curve) and of ``gap_known`` (dotted, in the same
colour; the true ECDF is at most this one).

**Lines.** Each method has its own colour, marker and dash; methods whose curves coincide exactly are
drawn once, with their names joined by `` = `` in the legend, so no line hides another.

**Size plots** (``gap-vs-size``, ``runtime-vs-size``) only when the study's instances have more than
one size: every run as a faint dot at its instance's size (no jitter), and the median per size as a
line with markers; methods whose median lines coincide are drawn once, as in the profiles.

Under every picture, in small print, the sentence that says which instances and runs it covers.
"""

from __future__ import annotations

import io
import math
import re
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odrp.bench.dataset import write_atomic
from odrp.bench.tables import labelled, method_order

MIN_TIME = 1e-6
"""Runtimes below this (seconds) count as this in the runtime profile (no ratio to a zero time)."""

FORMATS = ("png", "svg")
"""Every picture is written in each format: PNG for screens, SVG for papers."""

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
DASHES = ("-", "--", "-.", ":")
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")


def style(index: int) -> dict[str, str]:
    """The colour, marker and dash of the index-th line (all three change, so lines stay apart in grey too)."""
    return {
        "color": COLOURS[index % len(COLOURS)],
        "marker": MARKERS[index % len(MARKERS)],
        "linestyle": DASHES[index % len(DASHES)],
    }


# ------------------------------------------------------------------------------------ profiles


@dataclass(frozen=True)
class Curve:
    """One drawn line: the methods whose step functions coincide, and the function's steps.

    ``suffix`` names the series after the methods (a certified ECDF draws two per method); ``style`` is
    the index of :func:`style` to draw it with (None: its place among the curves) and ``dash`` a
    matplotlib line style that replaces the style's own."""

    labels: tuple[str, ...]
    taus: tuple[float, ...]
    shares: tuple[float, ...]
    suffix: str = ""
    style: int | None = None
    dash: str | None = None

    @property
    def name(self) -> str:
        return " = ".join(self.labels) + self.suffix


def line_style(curve: Curve, index: int) -> dict[str, str]:
    """The colour, marker and dash of ``curve``, the ``index``-th of its profile."""
    line = style(index if curve.style is None else curve.style)
    return {**line, "linestyle": curve.dash} if curve.dash is not None else line


@dataclass(frozen=True)
class Profile:
    """A profile of one study, ready to draw with matplotlib (:func:`draw_profile`) or Plotly."""

    name: str  # "runtime-profile" or "gap-ecdf"
    title: str
    xlabel: str
    ylabel: str
    xscale: str  # "log2" or "symlog"
    curves: tuple[Curve, ...]
    instances: int
    note: str
    right: float  # the x axis ends here (every curve is extended to it)


def profile_instances(rows: pd.DataFrame) -> tuple[list[str], str]:
    """The instances every profile of this study is computed over, and a sentence on what was left out.

    ``rows`` must be labelled (:func:`labelled`) and belong to one study.
    """
    labels = set(rows["label"])
    status = rows.groupby("instance_id")["optimum_status"].agg(lambda s: "proven" if "proven" in set(s) else "other")
    proven = {i for i, s in status.items() if s == "proven"}
    ran = rows.groupby("instance_id")["label"].agg(set)
    common = sorted(i for i in proven if ran[i] == labels)
    total = rows["instance_id"].nunique()
    parts = [f"{len(common)} of {total} instances"]
    if len(proven) < total:
        parts.append(f"{total - len(proven)} without a proven optimum left out")
    if len(common) < len(proven):
        parts.append(f"{len(proven) - len(common)} where not every method ran left out")
    return common, "; ".join(parts)


def runtime_profile(rows: pd.DataFrame, title: str) -> Profile | None:
    """The Dolan-Moré runtime profile of one study's labelled rows (None without a proven instance)."""
    instances, note = profile_instances(rows)
    if not instances:
        return None
    rows = rows[rows["instance_id"].isin(instances)]
    solved = rows["gap"].notna() & (rows["gap"].astype(float) == 0)
    times = rows["runtime_s"].astype(float).clip(lower=MIN_TIME)
    best = times[solved].groupby(rows.loc[solved, "instance_id"]).min()
    ratio = np.where(solved, times / rows["instance_id"].map(best).to_numpy(float), math.inf)
    curves = _curves(rows.assign(value=ratio), method_order(rows), start=1.0)
    right = _right_edge(curves, minimum=2.0, factor=1.5)
    return Profile(
        name="runtime-profile",
        title=title,
        xlabel="tau: runtime / fastest runtime to the optimum on the instance (log2)",
        ylabel="share of instances solved within tau",
        xscale="log2",
        curves=curves,
        instances=len(instances),
        note=f"{note}; a run solves an instance when its gap to the proven optimum is 0, other runs never count",
        right=right,
    )


def gap_ecdf(rows: pd.DataFrame, title: str) -> Profile | None:
    """The gap ECDF of one study's labelled rows (None without a proven instance or a line to draw)."""
    instances, note = profile_instances(rows)
    if not instances:
        return None
    rows = rows[rows["instance_id"].isin(instances)]
    gaps = rows["gap"].astype(float).fillna(math.inf)
    rows = rows.assign(value=gaps.to_numpy())
    perfect = perfect_exact(rows, "value")
    drawn = [x for x in method_order(rows) if x not in perfect]
    if not drawn:
        return None
    if perfect:
        note += f"; {', '.join(perfect)}: gap 0 on every run (not drawn)"
    curves = _curves(rows[rows["label"].isin(drawn)], drawn, start=0.0)
    return Profile(
        name="gap-ecdf",
        title=title,
        xlabel="tau: gap to the proven optimum (symlog)",
        ylabel="share of instances with gap <= tau",
        xscale="symlog",
        curves=curves,
        instances=len(instances),
        note=f"{note}; a run without a gap (no solution, error) never counts",
        right=_right_edge(curves, minimum=1e-2, factor=1.1),
    )


CERTIFIED_SERIES = (
    ("gap_bound", ": gap to the best bound (certified)", "-"),
    ("gap_known", ": gap to the best known", ":"),
)
"""The two series of :func:`certified_ecdf`: column, legend suffix, dash."""


def certified_ecdf(rows: pd.DataFrame, title: str) -> Profile | None:
    """The ECDF of the certified gaps on the study's ``bounded`` instances (None without one): its own
    picture, never mixed with the proven instances' ECDF.

    The instances are the study's of tier ``bounded`` on which every method has a row, weighted as in
    :func:`gap_ecdf`. Each method has two series in one colour: its ``gap_bound`` (solid: the true gap
    is at most this, so the curve is a lower bound of the true ECDF) and its ``gap_known`` (dotted: an
    upper bound of it); the true ECDF lies between them. A run without a solution counts as +inf.
    """
    labels = set(rows["label"])
    tiers = rows.groupby("instance_id")["tier"].agg(lambda t: "bounded" if "bounded" in set(t) else "other")
    bounded = {i for i, t in tiers.items() if t == "bounded"}
    if not bounded:
        return None
    ran = rows.groupby("instance_id")["label"].agg(set)
    common = sorted(i for i in bounded if ran[i] == labels)
    if not common:
        return None
    total = rows["instance_id"].nunique()
    note = f"{len(common)} of {total} instances: the bounded ones (no proof; best known within the study's certify gap"
    note += " of the best bound)"
    if len(common) < len(bounded):
        note += f"; {len(bounded) - len(common)} where not every method ran left out"
    mine = rows[rows["instance_id"].isin(common)]
    order = method_order(mine)
    curves: list[Curve] = []
    for column, suffix, dash in CERTIFIED_SERIES:
        values = mine.assign(value=mine[column].astype(float).fillna(math.inf).to_numpy())
        for curve in _curves(values, order, start=0.0):
            curves.append(Curve(curve.labels, curve.taus, curve.shares, suffix, order.index(curve.labels[0]), dash))
    curves.sort(key=lambda c: (c.style, c.dash != "-"))
    return Profile(
        name="certified-gap-ecdf",
        title=title,
        xlabel="tau: certified gap (symlog)",
        ylabel="share of instances with gap <= tau",
        xscale="symlog",
        curves=tuple(curves),
        instances=len(common),
        note=f"{note}; solid: gap to the best bound, the true gap is at most this; dotted: gap to the best known; "
        "the true curve lies between them; a run without a solution never counts",
        right=_right_edge(curves, minimum=1e-2, factor=1.1),
    )


def perfect_exact(rows: pd.DataFrame, column: str) -> list[str]:
    """The exact solvers whose every row has ``column == 0``: a line at 1 (or 0) that would hide others."""
    return [
        x for x in method_order(rows) if x.startswith("exact/") and (rows.loc[rows["label"] == x, column] == 0).all()
    ]


def _curves(rows: pd.DataFrame, labels: list[str], start: float) -> tuple[Curve, ...]:
    """Each label's weighted step function over the rows' instances, coinciding ones merged."""
    n = rows["instance_id"].nunique()
    found: dict[tuple[tuple[float, ...], tuple[float, ...]], list[str]] = {}
    for label in labels:
        mine = rows[rows["label"] == label]
        weights = 1.0 / mine.groupby("instance_id")["value"].transform("size").to_numpy(float) / n
        taus, shares = weighted_steps(mine["value"].to_numpy(float), weights, start)
        key = (tuple(taus), tuple(round(s, 12) for s in shares))
        found.setdefault(key, []).append(label)
    return tuple(Curve(tuple(names), taus, shares) for (taus, shares), names in found.items())


def weighted_steps(values: Any, weights: Any, start: float) -> tuple[list[float], list[float]]:
    """rho(tau) = sum of the weights of the values <= tau, at tau = start and at every finite value above it.

    Values below ``start`` (a negative gap: the exact side was wrong) get their own steps too.
    """
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    finite = values[np.isfinite(values)]
    taus = sorted({float(start), *(float(v) for v in finite)})
    shares = [float(np.sum(weights[values <= tau])) for tau in taus]
    return taus, shares


def _right_edge(curves: Iterable[Curve], minimum: float, factor: float) -> float:
    return max([minimum] + [factor * c.taus[-1] for c in curves])


# ------------------------------------------------------------------------------------- drawing


@dataclass(frozen=True)
class Picture:
    """One picture of a study: its files (one per format) and the sentence printed under it."""

    name: str
    files: tuple[Path, ...]
    note: str


def draw_profile(profile: Profile, target: Path, stem: str) -> Picture:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for k, curve in enumerate(profile.curves):
        taus = [*curve.taus, profile.right]
        shares = [*curve.shares, curve.shares[-1]]
        line = line_style(curve, k)
        ax.step(taus, shares, where="post", label=curve.name, color=line["color"], linestyle=line["linestyle"])
        ax.plot(curve.taus, curve.shares, line["marker"], color=line["color"], markersize=5, fillstyle="none")
    if profile.xscale == "log2":
        ax.set_xscale("log", base=2)
        ax.set_xlim(1, profile.right)
    else:
        ax.set_xscale("symlog", linthresh=1e-3)
        ax.set_xlim(min(0.0, *(c.taus[0] for c in profile.curves)), profile.right)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(profile.xlabel)
    ax.set_ylabel(profile.ylabel)
    ax.set_title(profile.title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    _footnote(fig, profile.note)
    return Picture(profile.name, save(fig, target, f"{stem}-{profile.name}"), profile.note)


def _footnote(fig: Any, note: str) -> None:
    """The picture's sentence (which instances, what was left out) under it, so a PNG alone says it."""
    fig.supxlabel(textwrap.fill(note, 110), fontsize="x-small", color="#555555")


def size_pictures(rows: pd.DataFrame, target: Path, stem: str, title: str, size_label: str) -> list[Picture]:
    """Gap and runtime against the instance size, when the study has more than one size."""
    sized = rows[rows["size"].notna()]
    if sized["size"].nunique() < 2:
        return []
    gaps = sized[sized["gap"].notna() & np.isfinite(sized["gap"].astype(float))]
    perfect = perfect_exact(gaps, "gap")
    gaps = gaps[~gaps["label"].isin(perfect)]
    no_gap = len(sized) - len(sized[sized["gap"].notna()])
    gap_note = f"{len(gaps)} runs with a gap" + (f"; {no_gap} runs without one not drawn" if no_gap else "")
    if perfect:
        gap_note += f"; {', '.join(perfect)}: gap 0 on every run (not drawn)"
    timed = sized[sized["runtime_s"].astype(float) > 0]
    return [
        _by_size(gaps, "gap", target, f"{stem}-gap-vs-size", f"{title}: gap against size", size_label, gap_note),
        _by_size(
            timed,
            "runtime_s",
            target,
            f"{stem}-runtime-vs-size",
            f"{title}: runtime against size",
            size_label,
            f"{len(timed)} runs",
        ),
    ]


def _by_size(
    rows: pd.DataFrame, column: str, target: Path, name: str, title: str, size_label: str, note: str
) -> Picture:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    medians: dict[tuple[tuple[float, float], ...], list[str]] = {}  # identical median lines are drawn once
    for label in method_order(rows):
        series = rows[rows["label"] == label].groupby("size")[column].median()
        medians.setdefault(tuple(zip(series.index.astype(float), series.to_numpy(float), strict=True)), []).append(
            label
        )
    for k, (points, labels) in enumerate(medians.items()):
        runs = rows[rows["label"].isin(labels)]
        line = style(k)
        ax.plot(runs["size"], runs[column], ".", color=line["color"], alpha=0.35)
        ax.plot(
            [x for x, _ in points],
            [y for _, y in points],
            color=line["color"],
            marker=line["marker"],
            linestyle=line["linestyle"],
            label=f"{' = '.join(labels)} (median)",
        )
    if column == "runtime_s":
        ax.set_yscale("log")
        ax.set_ylabel("runtime (s, log scale)")
    else:
        ax.set_ylabel("gap to the proven optimum")
    ax.set_xticks(sorted(rows["size"].unique()) if len(rows) else [])
    ax.set_xlabel(f"instance size ({size_label})")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    if len(rows):
        ax.legend(loc="best", fontsize="small")
    _footnote(fig, note)
    kind = "runtime-vs-size" if column == "runtime_s" else "gap-vs-size"
    return Picture(kind, save(fig, target, name), note)


def study_pictures(rows: pd.DataFrame, target: Path, problem: str, study: str) -> tuple[list[Picture], list[Profile]]:
    """Every picture of one study (its rows, any columns of the dataset), and the profiles drawn."""
    rows = labelled(rows)
    stem = file_stem(problem, study)
    title = f"{problem} / {study}"
    profiles = [
        p
        for p in (
            runtime_profile(rows, f"{title}: runtime performance profile"),
            gap_ecdf(rows, f"{title}: ECDF of the gap to the optimum"),
            certified_ecdf(rows, f"{title}: ECDF of the certified gaps (bounded instances)"),
        )
        if p is not None
    ]
    pictures = [draw_profile(p, target, stem) for p in profiles]
    size_label = str(rows["size_label"].dropna().iloc[0]) if rows["size_label"].notna().any() else "size"
    pictures += size_pictures(rows, target, stem, title, size_label)
    return pictures, profiles


def file_stem(problem: str, study: str) -> str:
    """``<problem>-<study>`` with anything but letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{problem}-{study}")


def save(fig: Any, target: Path, name: str) -> tuple[Path, ...]:
    """The figure in every format of :data:`FORMATS`, each file written whole."""
    paths = []
    for extension in FORMATS:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=extension, dpi=150, metadata={"Date": None} if extension == "svg" else None)
        data = buffer.getvalue()
        write_atomic(target, f"{name}.{extension}", lambda handle, data=data: handle.write(data))
        paths.append(target / f"{name}.{extension}")
    return tuple(paths)
