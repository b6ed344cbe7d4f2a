"""``odrp report DIR1 DIR2 ... --out R``: several datasets side by side, on the same instances, with
paired tests of their runs with a solution and of their gaps; and, within one dataset, every two
methods of a study (:func:`method_pairs`).

**Instances** (:func:`match_instances`). An instance is identified by its content: its
``instance_sha256`` (the SHA-256 of its canonical JSON) where every dataset has that digest on one
instance, so an export imported again and run anew, whose ids differ, matches the dataset it came
from. Otherwise by ``instance_id`` (the grid's instance identity: the same generator, parameters and
seed, or the same file, give the same id), unless both datasets have digests and they differ (a
generator that changed between the runs: not the same instance, counted apart). Only the instances
matched in every dataset are compared; how many each dataset has, and how many were matched by what,
is reported per kind. A matched instance belongs to the study (and ``--by`` parameter values) it has
in the first dataset, the baseline.

**Side by side.** For each study (and ``--by`` value) and each method (exact rows per solver), for
each dataset, over the matched instances: runs, runs with a solution, runs with a gap, the mean gap
over those, and the mean runtime (:func:`side_by_side`). The mean gap is always shown beside the runs
with a solution: a method that finds a solution in 8 of 72 runs can have a smaller mean gap than after
a change that makes it find one in 60.

**Runs with a solution** (:func:`paired_tests`). For each later dataset against the baseline and each
method in both, the method's runs are paired by instance and repeat (the same seed), and McNemar's
exact test compares the discordant pairs (a solution in one dataset only): the two-sided binomial
test of their split (``scipy.stats.binomtest``, p = 1/2).

**Paired gaps.** The pairs are the matched instances where the method has a gap in both (a method's
gap on an instance is the mean over its repeats that have one; runs without a solution make no pair:
the success test above counts them). On the differences d = gap(dataset) - gap(baseline) (an infinite
gap, a zero optimum missed, ranks above every finite one; two infinite gaps tie), :func:`paired_test`
runs the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, two-sided, zero differences dropped as
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
from odrp.bench.console import print_table

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


PAIR_COLUMNS = (
    "instances",
    "method_better",
    "ties",
    "other_better",
    "sign_p",
    "method_solved",
    "method_runs",
    "other_solved",
    "other_runs",
    "method_mean",
    "other_mean",
)
"""The columns of :func:`method_pairs` before those of :class:`PairedTest` (see :func:`method_pairs`)."""


def method_pairs(frame: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Within one dataset, per study (and ``by`` value), every two methods on the instances with a proven
    optimum where both ran: the page's head to head, ``pairs.csv`` and the paper tables' pairs.

    **Runs without a solution, one convention.** On an instance, a method's outcome is the share of its
    runs without a solution (no verified objective: no gap) and the mean gap of the others. The method
    with the smaller share is better there; with equal shares, the one with the smaller mean gap; equal
    in both (two methods without any solution included), a tie. With one run each: a run without a
    solution loses to one with a solution and ties with another without.

    Columns: ``instances`` (both ran), ``method_better, ties, other_better`` (by that rule) and
    ``sign_p``, the two-sided sign test of the wins against the losses (``scipy.stats.binomtest``, p =
    1/2; ties left out; NaN without a win or a loss): the test of the ranking the counts show;
    ``method_solved, method_runs, other_solved, other_runs``: the runs with a solution over those
    instances, always shown beside the gaps; then the gaps, over the instances where both have a
    solution in at least one run (each side's mean gap over its runs with one): ``method_mean,
    other_mean``, and :func:`paired_test` of ``gap(other) - gap(method)`` (its ``pairs``, W+, W-,
    p-value, median difference: negative means ``other`` is closer to the optimum)."""
    keys = tables.group_keys(frame, by)
    records = []
    for key, rows in tables.groups(frame, by):
        rows = tables.labelled(rows)
        outcome = _per_instance(rows[rows["optimum_status"] == "proven"]).set_index(["label", "instance_id"])
        labels = tables.method_order(rows)
        for k, method in enumerate(labels):
            for other in labels[k + 1 :]:
                records.append({**key, "method": method, "other": other, **_pair(outcome, method, other)})
    columns = [*keys, "method", "other", *PAIR_COLUMNS, *PairedTest.__dataclass_fields__]
    return pd.DataFrame.from_records(records, columns=columns)


def _pair(outcome: pd.DataFrame, method: str, other: str) -> dict[str, Any]:
    """One pair's columns of :func:`method_pairs` from the per (label, instance) outcomes."""
    from scipy.stats import binomtest

    labels = set(outcome.index.get_level_values("label"))
    a = outcome.loc[method] if method in labels else outcome.iloc[:0].droplevel("label")
    b = outcome.loc[other] if other in labels else outcome.iloc[:0].droplevel("label")
    both = a.join(b, how="inner", lsuffix="_a", rsuffix="_b").sort_index()
    fail_a = 1 - both["with_gap_a"] / both["runs_a"]
    fail_b = 1 - both["with_gap_b"] / both["runs_b"]
    gap_a, gap_b = both["gap_a"].fillna(math.inf), both["gap_b"].fillna(math.inf)
    a_wins = (fail_a < fail_b) | ((fail_a == fail_b) & (gap_a < gap_b))
    b_wins = (fail_b < fail_a) | ((fail_a == fail_b) & (gap_b < gap_a))
    wins, losses = int(a_wins.sum()), int(b_wins.sum())
    solved = both[(both["with_gap_a"] > 0) & (both["with_gap_b"] > 0)]
    test = paired_test(solved["gap_a"], solved["gap_b"])
    return {
        "instances": len(both),
        "method_better": wins,
        "ties": len(both) - wins - losses,
        "other_better": losses,
        "sign_p": float(binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else math.nan,
        "method_solved": int(both["with_gap_a"].sum()),
        "method_runs": int(both["runs_a"].sum()),
        "other_solved": int(both["with_gap_b"].sum()),
        "other_runs": int(both["runs_b"].sum()),
        "method_mean": float(solved["gap_a"].mean()) if len(solved) else math.nan,
        "other_mean": float(solved["gap_b"].mean()) if len(solved) else math.nan,
        **test.__dict__,
    }


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
    matched, counts = match_instances(frames, names)
    groups = matched[0].drop_duplicates("instance_id").set_index("instance_id")[keys]
    per_instance = [_per_instance(frame) for frame in matched]
    result = Comparison(
        names=names,
        instances=counts,
        side_by_side=side_by_side(per_instance, names, groups, keys),
        tests=paired_tests(per_instance, names, groups, keys, matched),
        out=Path(out),
    )
    _write(result, formats)
    return result


MATCH_COLUMNS = ("shared", "by_sha256", "by_id", "same_id_other_content")
"""The counts of :func:`match_instances` after each dataset's own count of instances."""


def match_instances(frames: Sequence[pd.DataFrame], names: Sequence[str]) -> tuple[list[pd.DataFrame], pd.DataFrame]:
    """The instances every dataset has, matched by content; each frame reduced to them and renamed to
    the baseline's ids, and per kind how many each dataset has and how they were matched.

    An instance is matched by its ``instance_sha256`` (the SHA-256 of its canonical JSON) where every
    dataset has that digest on exactly one of its instances: the same content under other ids (an
    export imported again, a grid that reads the files a generator made) is the same instance. The
    others are matched by ``instance_id`` where every dataset has the id and their digests do not
    differ (a dataset without digests, or a digest two of its instances share); the same id with other
    content in two datasets (a generator changed between them) is no match, and is counted."""
    info = [
        frame.groupby("instance_id").agg(problem=("problem", "first"), sha=("instance_sha256", _first_present))
        for frame in frames
    ]
    unique = [
        {sha: ids[0] for sha, ids in table.groupby("sha").groups.items() if len(ids) == 1 and sha} for table in info
    ]
    mapping: list[dict[str, str]] = [{} for _ in frames]
    how: dict[str, str] = {}  # baseline id -> "by_sha256" or "by_id"
    for sha, base in unique[0].items():
        if all(sha in u for u in unique[1:]):
            for k, u in enumerate(unique):
                mapping[k][u[sha]] = base
            how[base] = "by_sha256"
    differs: dict[str, int] = {}
    for instance in sorted(set.intersection(*(set(table.index) for table in info))):
        if any(instance in m for m in mapping):
            continue
        digests = {table.at[instance, "sha"] for table in info}
        if None not in digests and len(digests) > 1:
            problem = str(info[0].at[instance, "problem"])
            differs[problem] = differs.get(problem, 0) + 1
            continue
        for m in mapping:
            m[instance] = instance
        how[instance] = "by_id"
    matched = [
        frame[frame["instance_id"].isin(m)].assign(instance_id=lambda f, m=m: f["instance_id"].map(m))
        for frame, m in zip(frames, mapping, strict=True)
    ]
    records = []
    for problem in sorted(set().union(*(set(frame["problem"]) for frame in frames))):
        record = {"problem": problem}
        record.update({name: int((t["problem"] == problem).sum()) for name, t in zip(names, info, strict=True)})
        mine = [base for base in how if info[0].at[base, "problem"] == problem]
        record["shared"] = len(mine)
        record["by_sha256"] = sum(how[base] == "by_sha256" for base in mine)
        record["by_id"] = sum(how[base] == "by_id" for base in mine)
        record["same_id_other_content"] = differs.get(problem, 0)
        records.append(record)
    return matched, pd.DataFrame.from_records(records, columns=["problem", *names, *MATCH_COLUMNS])


def _first_present(values: pd.Series) -> str | None:
    present = values.dropna()
    return str(present.iloc[0]) if len(present) else None


def _per_instance(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (instance, method): runs, runs with a solution, runs with a gap, their mean gap (NaN without),
    total runtime."""
    rows = rows.assign(solved=tables.with_solution(rows))
    grouped = rows.groupby(["instance_id", "label"])
    return pd.DataFrame(
        {
            "runs": grouped.size(),
            "with_solution": grouped["solved"].sum().astype(int),
            "with_gap": grouped["gap"].count(),
            "gap": grouped["gap"].mean(),
            "runtime": grouped["runtime_s"].sum(),
        }
    ).reset_index()


def side_by_side(
    per_instance: Sequence[pd.DataFrame], names: Sequence[str], groups: pd.DataFrame, keys: Sequence[str]
) -> pd.DataFrame:
    """One row per group, method and dataset: runs, with_solution, with_gap, gap_mean (over runs with a
    gap, each instance weighted by its runs with a gap), runtime_mean, on the shared instances."""
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
                    "with_solution": int(rows["with_solution"].sum()),
                    "with_gap": int(weight),
                    "gap_mean": float((gaps["gap"] * gaps["with_gap"]).sum() / weight) if weight else math.nan,
                    "runtime_mean": float(rows["runtime"].sum() / rows["runs"].sum()),
                }
            )
    columns = [*keys, "method", "dataset", "runs", "with_solution", "with_gap", "gap_mean", "runtime_mean"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    order = {name: k for k, name in enumerate(names)}
    return frame.sort_values([*keys, "method", "dataset"], key=lambda s: s.map(order) if s.name == "dataset" else s)


SUCCESS_COLUMNS = ("run_pairs", "baseline_only", "dataset_only", "mcnemar_p")
"""The success test's columns of :func:`paired_tests` (before those of :class:`PairedTest`)."""


def paired_tests(
    per_instance: Sequence[pd.DataFrame],
    names: Sequence[str],
    groups: pd.DataFrame,
    keys: Sequence[str],
    frames: Sequence[pd.DataFrame],
) -> pd.DataFrame:
    """One row per later dataset, group and method in both: the success test and :class:`PairedTest`
    against the baseline.

    **Success** (McNemar's exact test): the runs of the method are paired by instance and repeat (the
    same seed); ``baseline_only`` pairs have a solution in the baseline only, ``dataset_only`` in the
    later dataset only, and ``mcnemar_p`` is the two-sided binomial test of ``dataset_only`` among the
    discordant pairs (``scipy.stats.binomtest``, p = 1/2; NaN without a discordant pair).
    **Gaps**: :func:`paired_test` on the instances where the method has a gap in both."""
    from scipy.stats import binomtest

    records = []
    base = per_instance[0][["instance_id", "label", "gap"]].join(groups, on="instance_id")
    runs = [_solved_runs(frame) for frame in frames]
    for name, table, solved in zip(names[1:], per_instance[1:], runs[1:], strict=True):
        both = base.merge(table[["instance_id", "label", "gap"]], on=["instance_id", "label"], suffixes=("_a", "_b"))
        paired_runs = runs[0].merge(solved, on=["instance_id", "label", "repeat"], suffixes=("_a", "_b"))
        for values, rows in both.groupby([*keys, "label"], dropna=False, sort=True):
            key = dict(zip([*keys, "method"], values, strict=True))
            mine = paired_runs[
                (paired_runs["label"] == key["method"]) & paired_runs["instance_id"].isin(set(rows["instance_id"]))
            ]
            only_a = int((mine["solved_a"] & ~mine["solved_b"]).sum())
            only_b = int((mine["solved_b"] & ~mine["solved_a"]).sum())
            p = float(binomtest(only_b, only_a + only_b, 0.5).pvalue) if only_a + only_b else math.nan
            rows = rows.dropna(subset=["gap_a", "gap_b"]).sort_values("instance_id")
            test = paired_test(rows["gap_a"], rows["gap_b"])
            records.append(
                {
                    **key,
                    "baseline": names[0],
                    "dataset": name,
                    "run_pairs": len(mine),
                    "baseline_only": only_a,
                    "dataset_only": only_b,
                    "mcnemar_p": p,
                    **test.__dict__,
                }
            )
    columns = [*keys, "method", "baseline", "dataset", *SUCCESS_COLUMNS, *PairedTest.__dataclass_fields__]
    return pd.DataFrame.from_records(records, columns=columns)


def _solved_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Each run's (instance, label, repeat) and whether it has a solution."""
    return frame.assign(solved=tables.with_solution(frame))[["instance_id", "label", "repeat", "solved"]]


# -------------------------------------------------------------------------------------- output

SIDE_HEADERS = ("method", "dataset", "runs", "with solution", "with gap", "mean gap", "mean time s")
TEST_HEADERS = (
    "method",
    "dataset vs baseline",
    "run pairs",
    "solved in baseline only",
    "solved in dataset only",
    "McNemar p",
    "gap pairs",
    "nonzero",
    "W+",
    "W-",
    "Wilcoxon p",
    "median diff",
    "note",
)


def side_rows(table: pd.DataFrame) -> list[list[str]]:
    return [
        [
            r.method,
            r.dataset,
            str(r.runs),
            f"{r.with_solution}/{r.runs}",
            f"{r.with_gap}/{r.runs}",
            tables.percent(r.gap_mean),
            f"{r.runtime_mean:.3g}",
        ]
        for r in table.itertuples(index=False)
    ]


PAIR_HEADERS = (
    "method A",
    "method B",
    "instances",
    "A better",
    "ties",
    "B better",
    "sign test p",
    "A with solution",
    "B with solution",
    "gap pairs",
    "A mean gap",
    "B mean gap",
    "W+",
    "W-",
    "Wilcoxon p",
    "median B - A",
    "note",
)
"""The headers of :func:`pair_rows`: the page's head to head and the paper tables' pairs alike."""


def pair_rows(pairs: pd.DataFrame) -> list[list[str]]:
    """:func:`method_pairs`'s rows as the strings the page and the paper tables show (:data:`PAIR_HEADERS`)."""
    return [
        [
            r.method,
            r.other,
            *(str(n) for n in (r.instances, r.method_better, r.ties, r.other_better)),
            _number(r.sign_p, ".3g"),
            f"{r.method_solved}/{r.method_runs}",
            f"{r.other_solved}/{r.other_runs}",
            str(r.pairs),
            tables.percent(r.method_mean),
            tables.percent(r.other_mean),
            _number(r.w_plus, "g"),
            _number(r.w_minus, "g"),
            _number(r.p_value, ".3g"),
            tables.percent(r.median_difference),
            r.note,
        ]
        for r in pairs.itertuples(index=False)
    ]


def _number(x: float, fmt: str) -> str:
    return "-" if math.isnan(x) else format(x, fmt)


def test_rows(table: pd.DataFrame) -> list[list[str]]:
    """Rows of :data:`TEST_HEADERS`: each dataset against the baseline."""
    return [
        [
            r.method,
            f"{r.dataset} vs {r.baseline}",
            str(r.run_pairs),
            str(r.baseline_only),
            str(r.dataset_only),
            _number(r.mcnemar_p, ".3g"),
            str(r.pairs),
            str(r.nonzero),
            _number(r.w_plus, "g"),
            _number(r.w_minus, "g"),
            _number(r.p_value, ".3g"),
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
    heading = f"{tables.group_title(key)}: method against method on the instances with a proven optimum"
    return [(heading, paper_tables.latex_label("pairs", *key.values()), PAIR_HEADERS, pair_rows(mine))]


def sections(result: Comparison) -> list[paper_tables.Section]:
    """(heading, LaTeX label, headers, rows) of every table: per group, the side by side and the tests."""
    out = []
    for key, table in tables.split(result.side_by_side):
        title = tables.group_title(key)
        out.append((title, paper_tables.latex_label("side", *key.values()), SIDE_HEADERS, side_rows(table)))
        mine = tables.matching(result.tests, key)
        if len(mine):
            label = paper_tables.latex_label("wilcoxon", *key.values())
            heading = f"{title}: runs with a solution (McNemar's exact test) and paired gaps (Wilcoxon signed-rank)"
            out.append((heading, label, TEST_HEADERS, test_rows(mine)))
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

    console = console or Console(width=None if sys.stdout.isatty() else 150)
    headers = [str(h).replace("_", " ") for h in result.instances.columns]
    rows = [[str(v) for v in row] for row in result.instances.itertuples(index=False)]
    print_table(console, "instances per dataset, and matched in all (only those are compared)", headers, rows)
    console.print(matched_line(result.instances))
    for heading, _, headers, rows in sections(result):
        print_table(console, heading, headers, rows, left=("method", "dataset", "dataset vs baseline", "note"))
    console.print("files: " + ", ".join(str(p) for p in result.files))


def matched_line(counts: pd.DataFrame) -> str:
    """``matched 12 instances: 12 by instance_sha256 (content), 0 by instance_id`` (and any same id with
    other content)."""
    total = {c: int(counts[c].sum()) for c in MATCH_COLUMNS}
    line = (
        f"matched {total['shared']} instances: {total['by_sha256']} by instance_sha256 (the instance's content), "
        f"{total['by_id']} by instance_id"
    )
    if total["same_id_other_content"]:
        line += f"; {total['same_id_other_content']} with the same id but other content left out"
    return line
