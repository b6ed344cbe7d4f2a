"""``odrp report DIR1 DIR2 ... --out R``: several datasets side by side, on the same instances, with a
paired test.

**Instances.** Runs are matched by ``instance_id`` (the grid's instance identity: the same generator,
parameters and seed, or the same file, give the same id in every dataset). Only the instances present
in every dataset are compared; how many each dataset has, and how many they share, is reported per
kind. A shared instance belongs to the study (and ``--by`` parameter values) it has in the first
dataset, the baseline.

**Side by side.** For each study (and ``--by`` value) and each method (exact rows per solver), for
each dataset, over the shared instances: runs, runs with a gap, the mean gap over those, and the mean
runtime (:func:`side_by_side`).

**Paired test.** For each later dataset against the baseline and each method in both, the pairs are
the shared instances where the method has a gap in both (a method's gap on an instance is the mean
over its repeats that have one; runs without a solution make no pair, and are counted in the side by
side table). On the differences d = gap(dataset) - gap(baseline) (an infinite gap, a zero optimum
missed, ranks above every finite one; two infinite gaps tie), :func:`paired_test` runs the
Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, two-sided, zero differences dropped as
Wilcoxon did, scipy choosing the exact distribution or the normal approximation). It reports the
pairs, the nonzero differences, W+ and W- (the rank sums of the positive and negative differences;
scipy's statistic is the smaller), the p-value and the median difference. With fewer than
:data:`MIN_PAIRS` nonzero differences the p-value cannot fall below 0.05 (the smallest two-sided
exact p-value with n differences is 2 / 2^n), and the row says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from odrp.bench import dataset, paper_tables, tables, verify

MIN_PAIRS = 6
"""Nonzero differences needed before a two-sided p-value can fall below 0.05 (2 / 2^6 = 0.031)."""


@dataclass(frozen=True)
class PairedTest:
    """The Wilcoxon signed-rank test of paired gaps (see the module docstring)."""

    pairs: int
    nonzero: int
    w_plus: float
    w_minus: float
    statistic: float
    p_value: float
    median_difference: float
    note: str


def paired_test(first: Any, second: Any) -> PairedTest:
    """Wilcoxon signed-rank test of ``second - first`` (arrays of the same instances' gaps, in order)."""
    from scipy.stats import rankdata, wilcoxon

    a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    with np.errstate(invalid="ignore"):
        difference = np.where(a == b, 0.0, b - a)  # inf on both sides (a zero optimum missed twice): a tie
    nonzero = difference[difference != 0]
    median = float(np.median(difference)) if len(difference) else math.nan
    if len(nonzero) == 0:
        note = "no pairs" if len(difference) == 0 else "no difference on any pair"
        return PairedTest(len(difference), 0, 0.0, 0.0, math.nan, math.nan, median, note)
    ranks = rankdata(np.abs(nonzero))
    w_plus, w_minus = float(ranks[nonzero > 0].sum()), float(ranks[nonzero < 0].sum())
    result = wilcoxon(nonzero)
    note = "" if len(nonzero) >= MIN_PAIRS else f"too few pairs: {len(nonzero)} nonzero differences, p >= 0.05"
    return PairedTest(
        len(difference), len(nonzero), w_plus, w_minus, float(result.statistic), float(result.pvalue), median, note
    )


def method_pairs(frame: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Within one dataset, per study (and ``by`` value), every two methods: :func:`paired_test` of
    ``gap(other) - gap(method)`` on the instances where both have a gap (a method's gap on an
    instance the mean over its repeats that have one). A negative median difference: ``other`` is
    closer to the optimum."""
    keys = tables.group_keys(frame, by)
    records = []
    for key, rows in tables.groups(frame, by):
        rows = tables.labelled(rows)
        wide = _per_instance(rows).pivot(index="instance_id", columns="label", values="gap")
        labels = tables.method_order(rows)
        for k, method in enumerate(labels):
            for other in labels[k + 1 :]:
                both = wide[[method, other]].dropna()
                records.append(
                    {**key, "method": method, "other": other, **paired_test(both[method], both[other]).__dict__}
                )
    return pd.DataFrame.from_records(records, columns=[*keys, "method", "other", *PairedTest.__dataclass_fields__])


@dataclass
class Comparison:
    """Several datasets compared: shared instances, the side by side table, the paired tests, files."""

    names: list[str]
    instances: pd.DataFrame
    side_by_side: pd.DataFrame
    tests: pd.DataFrame
    out: Path
    files: list[Path] = field(default_factory=list)


def names_of(dirs: Sequence[str | Path]) -> list[str]:
    """Each dataset's name: its folder's name, or its path where two folders share a name, numbered
    (``out #2``) where even the paths are the same."""
    names = [Path(d).name or str(d) for d in dirs]
    names = [str(d) if names.count(n) > 1 else n for n, d in zip(names, dirs, strict=True)]
    return [f"{n} #{names[:k].count(n) + 1}" if names.count(n) > 1 else n for k, n in enumerate(names)]


def compare(
    dirs: Sequence[str | Path], out: str | Path, by: Sequence[str] = (), formats: Sequence[str] = ()
) -> Comparison:
    """Compare the datasets in ``dirs`` (the first is the baseline); write the tables into ``out``."""
    frames = []
    for folder in dirs:
        verify.require_intact(Path(folder))
        frames.append(tables.labelled(dataset.read(folder)))
    names = names_of(dirs)
    keys = tables.group_keys(frames[0], by)
    for frame in frames[1:]:
        tables.by_columns(frame, by)  # the same --by names must exist in every dataset
    shared, counts = shared_instances(frames, names)
    groups = frames[0].drop_duplicates("instance_id").set_index("instance_id")[keys]
    per_instance = [_per_instance(frame[frame["instance_id"].isin(shared)]) for frame in frames]
    result = Comparison(
        names=names,
        instances=counts,
        side_by_side=side_by_side(per_instance, names, groups, keys),
        tests=paired_tests(per_instance, names, groups, keys),
        out=Path(out),
    )
    _write(result, formats)
    return result


def shared_instances(frames: Sequence[pd.DataFrame], names: Sequence[str]) -> tuple[set[str], pd.DataFrame]:
    """The instance ids every dataset has, and per kind how many each has and how many are shared."""
    ids = [set(frame["instance_id"]) for frame in frames]
    shared = set.intersection(*ids)
    records = []
    problems = sorted(set().union(*(set(frame["problem"]) for frame in frames)))
    for problem in problems:
        mine = [set(frame.loc[frame["problem"] == problem, "instance_id"]) for frame in frames]
        record = {"problem": problem, **{name: len(m) for name, m in zip(names, mine, strict=True)}}
        record["shared"] = len(set.intersection(*mine))
        records.append(record)
    return shared, pd.DataFrame.from_records(records, columns=["problem", *names, "shared"])


def _per_instance(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (instance, method): runs, runs with a gap, their mean gap (NaN without), total runtime."""
    grouped = rows.groupby(["instance_id", "label"])
    return pd.DataFrame(
        {
            "runs": grouped.size(),
            "with_gap": grouped["gap"].count(),
            "gap": grouped["gap"].mean(),
            "runtime": grouped["runtime_s"].sum(),
        }
    ).reset_index()


def side_by_side(
    per_instance: Sequence[pd.DataFrame], names: Sequence[str], groups: pd.DataFrame, keys: Sequence[str]
) -> pd.DataFrame:
    """One row per group, method and dataset: runs, with_gap, gap_mean (over runs with a gap, each
    instance weighted by its runs with a gap), runtime_mean, on the shared instances."""
    records = []
    for name, table in zip(names, per_instance, strict=True):
        table = table.join(groups, on="instance_id")
        for values, rows in table.groupby([*keys, "label"], dropna=False, sort=True):
            key = dict(zip([*keys, "method"], values, strict=True))
            gaps = rows.dropna(subset=["gap"])
            weight = gaps["with_gap"].sum()
            records.append(
                {
                    **key,
                    "dataset": name,
                    "runs": int(rows["runs"].sum()),
                    "with_gap": int(weight),
                    "gap_mean": float((gaps["gap"] * gaps["with_gap"]).sum() / weight) if weight else math.nan,
                    "runtime_mean": float(rows["runtime"].sum() / rows["runs"].sum()),
                }
            )
    columns = [*keys, "method", "dataset", "runs", "with_gap", "gap_mean", "runtime_mean"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    order = {name: k for k, name in enumerate(names)}
    return frame.sort_values([*keys, "method", "dataset"], key=lambda s: s.map(order) if s.name == "dataset" else s)


def paired_tests(
    per_instance: Sequence[pd.DataFrame], names: Sequence[str], groups: pd.DataFrame, keys: Sequence[str]
) -> pd.DataFrame:
    """One row per later dataset, group and method in both: :class:`PairedTest` against the baseline."""
    records = []
    base = per_instance[0][["instance_id", "label", "gap"]].join(groups, on="instance_id")
    for name, table in zip(names[1:], per_instance[1:], strict=True):
        both = base.merge(table[["instance_id", "label", "gap"]], on=["instance_id", "label"], suffixes=("_a", "_b"))
        for values, rows in both.groupby([*keys, "label"], dropna=False, sort=True):
            key = dict(zip([*keys, "method"], values, strict=True))
            rows = rows.dropna(subset=["gap_a", "gap_b"]).sort_values("instance_id")
            test = paired_test(rows["gap_a"], rows["gap_b"])
            records.append({**key, "baseline": names[0], "dataset": name, **test.__dict__})
    columns = [*keys, "method", "baseline", "dataset", *PairedTest.__dataclass_fields__]
    return pd.DataFrame.from_records(records, columns=columns)


# -------------------------------------------------------------------------------------- output

SIDE_HEADERS = ("method", "dataset", "runs", "with gap", "mean gap", "mean time s")
TEST_HEADERS = ("method", "dataset vs baseline", "pairs", "nonzero", "W+", "W-", "p-value", "median diff", "note")


def side_rows(table: pd.DataFrame) -> list[list[str]]:
    return [
        [
            r.method,
            r.dataset,
            str(r.runs),
            f"{r.with_gap}/{r.runs}",
            tables.percent(r.gap_mean),
            f"{r.runtime_mean:.3g}",
        ]
        for r in table.itertuples(index=False)
    ]


PAIR_HEADERS = ("method", "other", "pairs", "nonzero", "W+", "W-", "p-value", "median diff", "note")


def test_rows(table: pd.DataFrame) -> list[list[str]]:
    """Rows of :data:`TEST_HEADERS` (datasets against the baseline) or, for :func:`method_pairs`'s
    frame, of :data:`PAIR_HEADERS` (two methods of one dataset)."""

    def number(x: float, fmt: str) -> str:
        return "-" if math.isnan(x) else format(x, fmt)

    within = "other" in table.columns
    return [
        [
            r.method,
            r.other if within else f"{r.dataset} vs {r.baseline}",
            str(r.pairs),
            str(r.nonzero),
            number(r.w_plus, "g"),
            number(r.w_minus, "g"),
            number(r.p_value, ".3g"),
            tables.percent(r.median_difference),
            r.note,
        ]
        for r in table.itertuples(index=False)
    ]


def pair_sections(pairs: pd.DataFrame, key: dict[str, Any]) -> list[paper_tables.Section]:
    """The section of :func:`method_pairs`'s rows in the group ``key`` (none if it has none)."""
    mine = tables.matching(pairs, key)
    if not len(mine):
        return []
    heading = f"{tables.group_title(key)}: Wilcoxon signed-rank test of paired gaps, method against method"
    return [(heading, paper_tables.latex_label("pairs", *key.values()), PAIR_HEADERS, test_rows(mine))]


def sections(result: Comparison) -> list[paper_tables.Section]:
    """(heading, LaTeX label, headers, rows) of every table: per group, the side by side and the tests."""
    out = []
    for key, table in tables.split(result.side_by_side):
        title = tables.group_title(key)
        out.append((title, paper_tables.latex_label("side", *key.values()), SIDE_HEADERS, side_rows(table)))
        mine = tables.matching(result.tests, key)
        if len(mine):
            label = paper_tables.latex_label("wilcoxon", *key.values())
            out.append((f"{title}: Wilcoxon signed-rank test of paired gaps", label, TEST_HEADERS, test_rows(mine)))
    return out


def _write(result: Comparison, formats: Sequence[str]) -> None:
    files = {
        "comparison.csv": result.side_by_side.to_csv(index=False),
        "comparison-tests.csv": result.tests.to_csv(index=False),
        "comparison-instances.csv": result.instances.to_csv(index=False),
    }
    title = "Comparison of " + ", ".join(result.names) + f" (baseline {result.names[0]})"
    for fmt in formats:
        files[f"comparison.{paper_tables.FORMATS[fmt]}"] = paper_tables.document(fmt, title, sections(result))
    for name, text in files.items():
        dataset.write_atomic(result.out, name, lambda handle, text=text: handle.write(text.encode()))
        result.files.append(result.out / name)


def print_comparison(result: Comparison, console: Any = None) -> None:
    import sys

    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=None if sys.stdout.isatty() else 150)
    view = Table(title="instances per dataset, and shared by all (only shared instances are compared)")
    for header in result.instances.columns:
        view.add_column(str(header), justify="left" if header == "problem" else "right")
    for row in result.instances.itertuples(index=False):
        view.add_row(*(str(v) for v in row))
    console.print(view)
    for heading, _, headers, rows in sections(result):
        view = Table(title=heading)
        for header in headers:
            view.add_column(header, justify="left" if header in ("method", "dataset", "note") else "right")
        for row in rows:
            view.add_row(*row)
        console.print(view)
    console.print("files: " + ", ".join(str(p) for p in result.files))
