"""The report's tables: one row per method, computed in one place for the console, the page and the exports.

Per problem kind, one table row per method (exact rows per solver, as ``exact/highs``):

- ``instances``: distinct instances the method ran on; ``runs``: its rows (instances x repeats);
- ``errors``: runs with ``status: error``;
- ``optimal``: runs with gap 0 among the runs on instances with a known optimum (a run without a
  solution counts as not optimal);
- ``mean / median / p95 / max gap``: over the runs that have a gap (verified objective, known
  optimum); p95 interpolates linearly between order statistics (numpy's default);
- ``mean time s``: mean ``runtime_s`` over all runs;
- ``speed-up``: geometric mean, over the runs that have a verified objective on instances where an
  exact solver proved optimality, of t_exact / t_run, where t_exact is the runtime of the fastest
  exact row that proved optimality on that instance (so the fastest exact solver scores 1 or less).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = (
    "method",
    "instances",
    "runs",
    "errors",
    "optimal",
    "comparable",
    "optimal_share",
    "gap_mean",
    "gap_median",
    "gap_p95",
    "gap_max",
    "runtime_mean",
    "speedup",
)


def method_label(method: str, solver: Any) -> str:
    return f"exact/{solver}" if method == "exact" and isinstance(solver, str) else method


def labelled(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["label"] = [method_label(m, s) for m, s in zip(frame["method"], frame["solver"], strict=True)]
    return frame


def summary_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The per-method table of one problem's rows (see the module docstring for each column)."""
    rows = labelled(rows)
    reference = _exact_reference_times(rows)
    records = []
    for label in method_order(rows):
        runs = rows[rows["label"] == label]
        comparable = runs[runs["optimum"].notna()]
        gaps = runs["gap"].dropna().to_numpy(dtype=float)
        optimal = int((comparable["gap"] == 0).sum())
        records.append(
            {
                "method": label,
                "instances": runs["instance_id"].nunique(),
                "runs": len(runs),
                "errors": int((runs["status"] == "error").sum()),
                "optimal": optimal,
                "comparable": len(comparable),
                "optimal_share": optimal / len(comparable) if len(comparable) else math.nan,
                "gap_mean": float(np.mean(gaps)) if len(gaps) else math.nan,
                "gap_median": float(np.median(gaps)) if len(gaps) else math.nan,
                "gap_p95": quantile(gaps, 0.95),
                "gap_max": float(np.max(gaps)) if len(gaps) else math.nan,
                "runtime_mean": float(runs["runtime_s"].mean()),
                "speedup": _speedup(runs, reference),
            }
        )
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


def quantile(values: np.ndarray, q: float) -> float:
    """Linear interpolation between order statistics (numpy's default), with inf handled."""
    if len(values) == 0:
        return math.nan
    ordered = np.sort(values)
    position = q * (len(ordered) - 1)
    lower = math.floor(position)
    fraction = position - lower
    if fraction == 0 or lower + 1 >= len(ordered):
        return float(ordered[lower])
    low, high = float(ordered[lower]), float(ordered[lower + 1])
    return math.inf if math.isinf(high) else low + (high - low) * fraction


def method_order(rows: pd.DataFrame) -> list[str]:
    labels = sorted(set(rows["label"]))
    return [x for x in labels if x.startswith("exact/")] + [x for x in labels if not x.startswith("exact/")]


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


def optimum_counts(rows: pd.DataFrame) -> dict[str, int]:
    """How many instances have each optimum status (proven, disagree, infeasible, none)."""
    per_instance = rows.groupby("instance_id")["optimum_status"].agg(_instance_status)
    counts = {status: 0 for status in ("proven", "disagree", "infeasible", "none")}
    counts.update(per_instance.value_counts().to_dict())
    return {k: int(v) for k, v in counts.items()}


def _instance_status(statuses: pd.Series) -> str:
    """An instance's optimum status (its rows agree, except error rows of a dead task: 'none')."""
    found = set(statuses)
    for status in ("disagree", "proven", "infeasible"):
        if status in found:
            return status
    return "none"


def formatted(table: pd.DataFrame) -> list[list[str]]:
    """The table's rows as the strings the console and the HTML page show."""

    def pct(x: float) -> str:
        return "-" if math.isnan(x) else ("inf" if math.isinf(x) else f"{100 * x:.2f}%")

    out = []
    for r in table.itertuples(index=False):
        optimal = f"{r.optimal}/{r.comparable}" + ("" if math.isnan(r.optimal_share) else f" ({pct(r.optimal_share)})")
        speedup = "-" if math.isnan(r.speedup) else f"{r.speedup:.3g}x"
        out.append(
            [
                r.method,
                str(r.instances),
                str(r.runs),
                str(r.errors),
                optimal,
                pct(r.gap_mean),
                pct(r.gap_median),
                pct(r.gap_p95),
                pct(r.gap_max),
                f"{r.runtime_mean:.3g}",
                speedup,
            ]
        )
    return out


HEADERS = (
    "method",
    "instances",
    "runs",
    "errors",
    "optimal",
    "mean gap",
    "median gap",
    "p95 gap",
    "max gap",
    "mean time s",
    "speed-up",
)


def counts_line(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    return (
        f"{total} instances: {counts['proven']} with a proven optimum, {counts['disagree']} where the exact "
        f"solvers disagree, {counts['infeasible']} proven infeasible, {counts['none']} without a proof "
        "(no gap there)"
    )
