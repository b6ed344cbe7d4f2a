"""The report's tables: one row per method and group, computed in one place for the console, the page
and the exports.

**Groups.** Rows are never pooled across problem kinds or studies: a table is one study of one kind
(the grid's ``studies:``, the dataset's ``study`` column), and with ``--by PARAM`` (repeatable) one
table per value of the generator parameter ``PARAM`` within the study (the ``param_<PARAM>``
column; a study without that parameter gets one table, its value shown as ``-``).
:func:`study_tables` returns every table as one long frame: the group columns (:data:`GROUP`, then
the ``param_*`` columns of ``--by``) and the method's columns below.

**Columns.** One row per method (exact rows per solver, as ``exact/highs``):

- ``instances``: distinct instances the method ran on; ``runs``: its rows (instances x repeats);
- ``optimal, feasible, no_solution, infeasible, time_limit, error``: its runs by ``status``. Every
  run is counted here, those without a solution included: the six counts add up to ``runs``;
- ``with_solution``: runs with a solution (a verified objective), on any instance (``8/72``, of
  ``runs``). Every gap statistic is over runs with a solution only, and every output shows this count
  beside it: a method that rarely finds a solution can have a small mean gap over the few it finds;
- ``with_gap``: runs that have a gap (a verified objective on an instance with a known optimum;
  shown as ``3/6``, of ``runs``). The gap statistics below cover these runs only;
- ``at_optimum`` of ``comparable``: runs with gap 0 among the runs on instances with a known
  optimum (a run there without a solution counts as not at the optimum); ``at_optimum_share``;
- ``gap_mean, gap_median, gap_p95, gap_max``: over the runs with a gap; p95 interpolates linearly
  between order statistics (numpy's default). A gap of ``inf`` (a zero optimum missed) makes the
  mean, and the upper statistics it reaches, ``inf``;
- ``gap_ci_low, gap_ci_high``: a 95% percentile bootstrap interval on ``gap_mean``
  (:func:`bootstrap_interval`: :data:`BOOTSTRAP_RESAMPLES` resamples of the runs with a gap, drawn
  with replacement by ``numpy.random.default_rng(BOOTSTRAP_SEED)``, so the same dataset always gives
  the same interval);
- ``bounded_runs``, ``bounded_with_solution``: runs on the instances of tier ``bounded`` (no proof,
  best known and best bound within the study's ``certify`` gap: :mod:`odrp.bench.optimum`), and those
  with a solution; ``certified_low, certified_high``: the mean ``gap_known`` and the mean ``gap_bound``
  over the latter. Each run's true gap lies between its two, so their mean lies in
  ``[certified_low, certified_high]``: the certified interval, never pooled with the proven gaps
  above; ``certified_max``: the largest ``gap_bound`` there (no run's true gap is larger);
- ``open_runs``, ``open_with_solution``: runs on the instances of tier ``open`` (nothing certified: no
  gap at all), and those with a solution, counted so that they are never hidden;
- ``runtime_mean``: mean ``runtime_s`` over all runs (seconds);
- ``speedup``: geometric mean, over the runs that have a verified objective on instances where an
  exact solver proved optimality, of t_exact / t_run, where t_exact is the runtime of the fastest
  exact row that proved optimality on that instance (so the fastest exact solver scores 1 or less).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from odrp.core.errors import InputError

STATUSES = ("optimal", "feasible", "no_solution", "infeasible", "time_limit", "error")
"""The Result's status vocabulary (``odrp.core.result.Status``), in the tables' order."""

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0
CONFIDENCE = 0.95

GROUP = ("problem", "study")
"""The group columns of every table; ``--by`` adds ``param_<name>`` columns after them."""

COLUMNS = (
    "method",
    "instances",
    "runs",
    *STATUSES,
    "with_solution",
    "with_gap",
    "at_optimum",
    "comparable",
    "at_optimum_share",
    "gap_mean",
    "gap_ci_low",
    "gap_ci_high",
    "gap_median",
    "gap_p95",
    "gap_max",
    "bounded_runs",
    "bounded_with_solution",
    "certified_low",
    "certified_high",
    "certified_max",
    "open_runs",
    "open_with_solution",
    "runtime_mean",
    "speedup",
)


def method_label(method: str, solver: Any) -> str:
    return f"exact/{solver}" if method == "exact" and isinstance(solver, str) else method


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["label"] = [method_label(m, s) for m, s in zip(frame["method"], frame["solver"], strict=True)]
    return frame


def method_order(rows: pd.DataFrame) -> list[str]:
    """Exact solvers first, then the heuristics, each alphabetically (``rows`` has a ``label`` column)."""
    labels = sorted(set(rows["label"]))
    return [x for x in labels if x.startswith("exact/")] + [x for x in labels if not x.startswith("exact/")]


# ------------------------------------------------------------------------------------- numbers


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The per-method table of one group's rows (see the module docstring for each column)."""
    rows = labelled(rows)
    for column in ("optimum_status", "tier", "gap_known", "gap_bound"):  # a frame not read by dataset.read
        if column not in rows.columns:
            rows[column] = None
    reference = _exact_reference_times(rows)
    classes = rows["instance_id"].map(instance_classes(rows))
    records = []
    for label in method_order(rows):
        runs = rows[rows["label"] == label]
        comparable = runs[runs["optimum"].notna()]
        gaps = runs["gap"].dropna().to_numpy(dtype=float)
        at_optimum = int((comparable["gap"] == 0).sum())
        low, high = bootstrap_interval(gaps)
        statuses = runs["status"].value_counts()
        bounded = runs[classes[runs.index] == "bounded"]
        certified = bounded[bounded["gap_known"].notna() & bounded["gap_bound"].notna()]
        open_runs = runs[classes[runs.index] == "open"]
        records.append(
            {
                "method": label,
                "instances": runs["instance_id"].nunique(),
                "runs": len(runs),
                **{status: int(statuses.get(status, 0)) for status in STATUSES},
                "with_solution": int(with_solution(runs).sum()),
                "with_gap": len(gaps),
                "at_optimum": at_optimum,
                "comparable": len(comparable),
                "at_optimum_share": at_optimum / len(comparable) if len(comparable) else math.nan,
                "gap_mean": float(np.mean(gaps)) if len(gaps) else math.nan,
                "gap_ci_low": low,
                "gap_ci_high": high,
                "gap_median": quantile(gaps, 0.5),
                "gap_p95": quantile(gaps, 0.95),
                "gap_max": float(np.max(gaps)) if len(gaps) else math.nan,
                "bounded_runs": len(bounded),
                "bounded_with_solution": len(certified),
                "certified_low": _mean(certified["gap_known"]),
                "certified_high": _mean(certified["gap_bound"]),
                "certified_max": float(certified["gap_bound"].astype(float).max()) if len(certified) else math.nan,
                "open_runs": len(open_runs),
                "open_with_solution": int(with_solution(open_runs).sum()),
                "runtime_mean": float(runs["runtime_s"].mean()),
                "speedup": _speedup(runs, reference),
            }
        )
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def with_solution(runs: pd.DataFrame) -> pd.Series:
    """Which runs have a solution: a verified objective (the evaluator agrees with it)."""
    return runs["verified"].fillna(False).astype(bool) & runs["objective"].notna()


def _mean(values: pd.Series) -> float:
    return float(np.mean(values.to_numpy(dtype=float))) if len(values) else math.nan


def quantile(values: Any, q: float) -> float:
    """Linear interpolation between order statistics (numpy's default), with inf handled."""
    if len(values) == 0:
        return math.nan
    ordered = np.sort(np.asarray(values, dtype=float))
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    fraction = position - lower
    if fraction == 0 or lower + 1 >= len(ordered):
        return float(ordered[lower])
    low, high = float(ordered[lower]), float(ordered[lower + 1])
    return math.inf if math.isinf(high) else low + (high - low) * fraction


def bootstrap_interval(
    gaps: Any, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Percentile bootstrap interval on the mean of ``gaps``: (nan, nan) without gaps.

    The resamples are one draw ``numpy.random.default_rng(seed).integers(0, n, size=(resamples, n))``
    (made in blocks of rows, which gives the same numbers, so memory stays small); the interval is
    the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resamples' means
    (:func:`quantile`, so an ``inf`` gap gives an ``inf`` bound, never NaN).
    """
    values = np.asarray(gaps, dtype=float)
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    block = max(1, min(resamples, 1_000_000 // n))
    means = np.empty(resamples)
    with np.errstate(invalid="ignore"):
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            means[start:stop] = values[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1 - confidence) / 2
    return quantile(means, tail), quantile(means, 1 - tail)


def _exact_reference_times(rows: pd.DataFrame) -> dict[str, float]:
    proofs = rows[(rows["method"] == "exact") & (rows["status"] == "optimal") & rows["verified"].astype(bool)]
    return proofs.groupby("instance_id")["runtime_s"].min().to_dict()


def _speedup(runs: pd.DataFrame, reference: dict[str, float]) -> float:
    ratios = [
        reference[i] / t
        for i, t, ok, objective in zip(
            runs["instance_id"], runs["runtime_s"], runs["verified"], runs["objective"], strict=True
        )
        if i in reference and t > 0 and bool(ok) and pd.notna(objective)
    ]
    return float(np.exp(np.mean(np.log(ratios)))) if ratios else math.nan


# ------------------------------------------------------------------------------------- groups


def by_columns(frame: pd.DataFrame, by: Sequence[str]) -> list[str]:
    """The ``param_*`` columns of ``--by`` names (``items`` or ``param_items``); an unknown name is
    bad input listing the parameters the dataset has."""
    have = sorted(c for c in frame.columns if c.startswith("param_"))
    out = []
    for name in by:
        column = name if name.startswith("param_") else f"param_{name}"
        if column not in have:
            known = ", ".join(c.removeprefix("param_") for c in have) or "none"
            raise InputError("--by", name, f"a generator parameter of the dataset (it has: {known})")
        if column not in out:
            out.append(column)
    return out


def group_keys(frame: pd.DataFrame, by: Sequence[str] = ()) -> list[str]:
    return [*GROUP, *by_columns(frame, by)]


def groups(frame: pd.DataFrame, by: Sequence[str] = ()) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """Each group's key (column -> value, a missing parameter as None) and its rows, in sorted order."""
    keys = group_keys(frame, by)
    if frame.empty:
        return
    for values, rows in frame.groupby(keys, dropna=False, sort=True):
        key = {k: (None if _missing(v) else v) for k, v in zip(keys, values, strict=True)}
        yield key, rows


def study_tables(frame: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Every group's table as one frame: the group columns, then :data:`COLUMNS`."""
    keys = group_keys(frame, by)
    parts, labels = [], []
    for key, rows in groups(frame, by):
        parts.append(summary_table(rows))
        labels.extend([key] * len(parts[-1]))
    if not parts:
        return pd.DataFrame(columns=[*keys, *COLUMNS])
    long = pd.concat(parts, ignore_index=True)
    for position, k in enumerate(keys):
        long.insert(position, k, _key_column([label[k] for label in labels], frame[k]))
    return long


def _key_column(values: list[Any], source: pd.Series) -> pd.Series:
    """A group column of the long table: the source's type, except that whole numbers a missing value
    turned into floats (a kind without the parameter) come back as nullable integers (20, not 20.0)."""
    column = pd.Series(values, dtype=source.dtype)
    present = column.dropna()
    if pd.api.types.is_float_dtype(column) and len(present) and (present == present.round()).all():
        return column.astype("Int64")
    return column


def split(long: pd.DataFrame) -> Iterator[tuple[dict[str, Any], pd.DataFrame]]:
    """The tables of :func:`study_tables` one by one: (group key, its method rows), in order."""
    keys = [c for c in long.columns if c in GROUP or c.startswith("param_")]
    if long.empty:
        return
    for values, table in long.groupby(keys, dropna=False, sort=False):
        key = {k: (None if _missing(v) else v) for k, v in zip(keys, values, strict=True)}
        yield key, table.drop(columns=keys).reset_index(drop=True)


def matching(frame: pd.DataFrame, key: dict[str, Any]) -> pd.DataFrame:
    """The rows of ``frame`` in the group ``key`` (a value None matches a missing one)."""
    mask = pd.Series(True, index=frame.index)
    for k, v in key.items():
        mask &= frame[k].isna() if v is None else frame[k] == v
    return frame[mask]


def group_title(key: dict[str, Any]) -> str:
    """``odrp / study-a / items=20, correlation=0.5`` (a parameter the study lacks: ``items=-``)."""
    params = [f"{k.removeprefix('param_')}={_value(v)}" for k, v in key.items() if k.startswith("param_")]
    title = " / ".join(str(key[k]) for k in GROUP if k in key)
    return title + (" / " + ", ".join(params) if params else "")


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------------- instances


CLASSES = ("proven", "proven_once", "bounded", "open", "disagree", "infeasible")
"""What an instance is to the report: its tier (:data:`odrp.bench.optimum.TIERS`), or the exact side's
``disagree`` or ``infeasible`` (which have no tier)."""


def instance_classes(rows: pd.DataFrame) -> pd.Series:
    """Each instance's class (:data:`CLASSES`), indexed by ``instance_id``."""
    if rows.empty:
        return pd.Series(dtype=object)
    return rows.groupby("instance_id").apply(_instance_class, include_groups=False)


def _instance_class(rows: pd.DataFrame) -> str:
    statuses = set(rows["optimum_status"].dropna())
    for status in ("disagree", "infeasible"):
        if status in statuses:
            return status
    tiers = [t for t in rows["tier"].dropna() if t in CLASSES]
    return tiers[0] if tiers else "open"


def optimum_counts(rows: pd.DataFrame) -> dict[str, int]:
    """How many instances are of each class (:data:`CLASSES`)."""
    counts = {name: 0 for name in CLASSES}
    counts.update(instance_classes(rows).value_counts().to_dict())
    return {k: int(v) for k, v in counts.items()}


def counts_line(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    proven = counts["proven"] + counts["proven_once"]
    return (
        f"{total} instances: {proven} with a proven optimum ({counts['proven']} by two solvers, "
        f"{counts['proven_once']} by one), {counts['bounded']} bounded (certified gaps, best known within the "
        f"study's certify gap of the best bound), {counts['open']} open (no gap there), {counts['disagree']} where "
        f"the exact side disagrees, {counts['infeasible']} proven infeasible"
    )


# --------------------------------------------------------------------------------- as strings

HEADERS = (
    "method",
    "runs",
    "optimal",
    "feasible",
    "no solution",
    "infeasible",
    "time limit",
    "error",
    "with solution",
    "with gap",
    "at optimum",
    "mean gap",
    "95% CI of mean",
    "median gap",
    "p95 gap",
    "max gap",
    "bounded: with solution",
    "bounded: certified mean gap",
    "bounded: max gap at most",
    "open: with solution",
    "mean time s",
    "speed-up",
)
"""The headers of :func:`formatted`'s columns (the page, Markdown and LaTeX; the console's are
:data:`CONSOLE_HEADERS`). The gaps to the proven optimum come first, then, never mixed with them, the
certified interval ``[gap_known, gap_bound]`` on bounded instances, then the open instances' runs."""


def percent(x: float) -> str:
    if math.isnan(x):
        return "-"
    return "inf" if math.isinf(x) else f"{100 * x:.2f}%"


def interval(low: float, high: float) -> str:
    """``[1.00%, 2.50%]``, or ``-`` without values."""
    return "-" if math.isnan(low) else f"[{percent(low)}, {percent(high)}]"


CONSOLE_HEADERS = (
    "method",
    "runs",
    "statuses",
    "with\nsolution",
    "with gap",
    "at optimum",
    "mean gap\n[95% CI]",
    "median\ngap",
    "p95 gap",
    "max gap",
    "bounded:\nwith solution",
    "bounded:\ncertified\nmean gap",
    "bounded:\nmax gap\nat most",
    "open: with\nsolution",
    "mean\ntime s",
    "speed-up",
)
"""The console's columns (:func:`compact`): the status counts in one cell, zeros left out; the headers
broken into lines (:func:`odrp.bench.console.print_table` splits the table where the terminal is narrow)."""


def compact(table: pd.DataFrame) -> list[list[str]]:
    """The rows of :func:`formatted` for a terminal: statuses as ``3 feasible, 1 error``, the interval
    beside the mean (:data:`CONSOLE_HEADERS`)."""
    out = []
    first = HEADERS.index("with solution")
    mean = HEADERS.index("mean gap")
    for r, cells in zip(table.itertuples(index=False), formatted(table), strict=True):
        statuses = ", ".join(f"{getattr(r, s)} {s.replace('_', ' ')}" for s in STATUSES if getattr(r, s))
        gap = cells[mean] if cells[mean + 1] == "-" else f"{cells[mean]} {cells[mean + 1]}"
        out.append([cells[0], cells[1], statuses, *cells[first:mean], gap, *cells[mean + 2 :]])
    return out


def console_view(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """:data:`CONSOLE_HEADERS` and :func:`compact`'s rows, without the bounded columns where no method ran
    on a bounded instance, and without the open column where none ran on an open one (a terminal is
    narrow; the page and the exports keep every column)."""
    headers, rows = list(CONSOLE_HEADERS), compact(table)
    drop = set()
    if not table["bounded_runs"].any():
        drop |= {k for k, h in enumerate(headers) if h.startswith("bounded:")}
    if not table["open_runs"].any():
        drop |= {k for k, h in enumerate(headers) if h.startswith("open:")}
    keep = [k for k in range(len(headers)) if k not in drop]
    return [headers[k] for k in keep], [[row[k] for k in keep] for row in rows]


def formatted(table: pd.DataFrame) -> list[list[str]]:
    """The table's rows as the strings the console, the page and the exports show (:data:`HEADERS`)."""
    out = []
    for r in table.itertuples(index=False):
        share = "" if math.isnan(r.at_optimum_share) else f" ({percent(r.at_optimum_share)})"
        out.append(
            [
                r.method,
                str(r.runs),
                *(str(getattr(r, status)) for status in STATUSES),
                f"{r.with_solution}/{r.runs}",
                f"{r.with_gap}/{r.runs}",
                f"{r.at_optimum}/{r.comparable}{share}",
                percent(r.gap_mean),
                interval(r.gap_ci_low, r.gap_ci_high),
                percent(r.gap_median),
                percent(r.gap_p95),
                percent(r.gap_max),
                f"{r.bounded_with_solution}/{r.bounded_runs}",
                interval(r.certified_low, r.certified_high),
                percent(r.certified_max),
                f"{r.open_with_solution}/{r.open_runs}",
                f"{r.runtime_mean:.3g}",
                "-" if math.isnan(r.speedup) else f"{r.speedup:.3g}x",
            ]
        )
    return out
