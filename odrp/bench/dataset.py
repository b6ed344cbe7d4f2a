"""The benchmark dataset: Parquet rows partitioned by problem, one file per instance, and a manifest.

Layout of an output directory ``DIR``::

    DIR/manifest.json                          the grid, row counts, checksums, versions, runs
    DIR/rows/problem=<kind>/<instance_id>.parquet   every row of one instance (hive-partitioned)
    DIR/report/                                what ``odrp report DIR`` writes

One row per instance x method x repeat (exact rows: one per solver). ``problem`` is the partition
column (``pandas.read_parquet("DIR/rows")`` returns it); every file written from one grid has the
same columns, so any Parquet reader takes the directory as one table. :func:`read` also merges the
files of several grids (resumed with a changed grid), whose parameter columns may differ.

Columns: ``instance_id, study, instance_name, generator, file, params`` (canonical JSON) and one
``param_<name>`` column per generator parameter of the grid, ``seed, instance_sha256`` (of the
instance's canonical JSON), ``size, size_label`` (``kind.size``), ``method, solver, options, repeat,
status, objective, bound, solver_gap`` (the solver's own incumbent/bound gap), ``optimum,
optimum_status, gap`` (:mod:`odrp.bench.optimum`), ``runtime_s, time_limit, verified, message,
metrics, method_stats, solution`` (JSON), ``package_version, solver_version``, and ``warm_start,
warm_start_objective``: on an exact row of a ``warm_start: best_heuristic`` study, the heuristic run
whose solution was the MIP start (``method`` or ``method#repeat``) and its objective (else null;
rows from before these columns existed have none: :func:`read` gives null there).

Files are written whole and renamed into place (a hidden temporary name first), so a killed run
leaves complete files only: at most the instances in flight are lost. An instance's file is its
record of being done; ``--resume`` reads them back (:func:`stored_instances`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import odrp

FORMAT = "odrp-bench/1"
ROWS = "rows"
MANIFEST = "manifest.json"

#: Columns before the parameter columns, and after them. ``problem`` is the partition directory.
HEAD = [
    ("instance_id", pa.string()),
    ("study", pa.string()),
    ("instance_name", pa.string()),
    ("generator", pa.string()),
    ("file", pa.string()),
    ("params", pa.string()),
]
TAIL = [
    ("seed", pa.int64()),
    ("instance_sha256", pa.string()),
    ("size", pa.int64()),
    ("size_label", pa.string()),
    ("method", pa.string()),
    ("solver", pa.string()),
    ("options", pa.string()),
    ("repeat", pa.int64()),
    ("status", pa.string()),
    ("objective", pa.float64()),
    ("bound", pa.float64()),
    ("solver_gap", pa.float64()),
    ("optimum", pa.float64()),
    ("optimum_status", pa.string()),
    ("gap", pa.float64()),
    ("runtime_s", pa.float64()),
    ("time_limit", pa.float64()),
    ("verified", pa.bool_()),
    ("message", pa.string()),
    ("metrics", pa.string()),
    ("method_stats", pa.string()),
    ("solution", pa.string()),
    ("package_version", pa.string()),
    ("solver_version", pa.string()),
    ("warm_start", pa.string()),
    ("warm_start_objective", pa.float64()),
]
JSON_COLUMNS = ("params", "options", "metrics", "method_stats", "solution")
OPTIONAL_COLUMNS = ("warm_start", "warm_start_objective")
"""Columns a row may leave out (null): only exact rows of warm-started studies fill them."""
PARAM_PREFIX = "param_"


def rows_dir(out: str | Path) -> Path:
    return Path(out) / ROWS


def instance_path(out: str | Path, problem: str, instance_id: str) -> Path:
    return rows_dir(out) / f"problem={problem}" / f"{instance_id}.parquet"


# ------------------------------------------------------------------------------------- the schema


def param_types(params: Iterable[dict[str, Any]]) -> dict[str, pa.DataType]:
    """One Arrow type per parameter name over every instance of a grid.

    bool if every value is a bool, int64 if every value is an int, float64 if every value is a
    number, else string (strings as they are, anything else as JSON).
    """
    seen: dict[str, list[Any]] = {}
    for p in params:
        for name, value in p.items():
            seen.setdefault(name, []).append(value)
    types: dict[str, pa.DataType] = {}
    for name, values in sorted(seen.items()):
        if all(isinstance(v, bool) for v in values):
            types[name] = pa.bool_()
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            types[name] = pa.int64()
        elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            types[name] = pa.float64()
        else:
            types[name] = pa.string()
    return types


def schema(types: dict[str, pa.DataType]) -> pa.Schema:
    params = [(PARAM_PREFIX + name, t) for name, t in sorted(types.items())]
    return pa.schema(HEAD + params + TAIL)


def to_table(rows: list[dict[str, Any]], table_schema: pa.Schema) -> pa.Table:
    """Rows (dicts from :mod:`odrp.bench.task`) as an Arrow table of ``table_schema``."""
    columns: dict[str, list[Any]] = {}
    for f in table_schema:
        if f.name.startswith(PARAM_PREFIX):
            name = f.name[len(PARAM_PREFIX) :]
            columns[f.name] = [_param_value(row["params"].get(name), f.type) for row in rows]
        elif f.name in JSON_COLUMNS:
            columns[f.name] = [_json(row[f.name]) for row in rows]
        else:
            values = [row.get(f.name) if f.name in OPTIONAL_COLUMNS else row[f.name] for row in rows]
            columns[f.name] = [_finite(v) if f.type == pa.float64() else v for v in values]
    return pa.table(columns, schema=table_schema)


def _param_value(value: Any, arrow_type: pa.DataType) -> Any:
    if value is None or arrow_type != pa.string() or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, allow_nan=False)


def _finite(value: Any) -> Any:
    """Floats pass (inf is a legal gap); NaN becomes null."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


# ------------------------------------------------------------------------------------ writing


def write_instance(out: str | Path, problem: str, instance_id: str, table: pa.Table) -> Path:
    """Write one instance's rows atomically: a hidden temporary file, then a rename."""
    path = instance_path(out, problem, instance_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)
    return path


def remove_partial_files(out: str | Path) -> int:
    """Delete temporary files a killed run left behind; returns how many."""
    removed = 0
    for tmp in rows_dir(out).glob("problem=*/.*.tmp"):
        tmp.unlink()
        removed += 1
    return removed


# ------------------------------------------------------------------------------------ reading


def files(out: str | Path) -> list[Path]:
    return sorted(rows_dir(out).glob("problem=*/*.parquet"))


def read(out: str | Path) -> Any:
    """The whole dataset as a pandas DataFrame, ``problem`` included, sorted by instance and run."""
    import pandas as pd

    paths = files(out)
    if not paths:
        names = [n for n, _ in HEAD] + [n for n, _ in TAIL]
        return pd.DataFrame(columns=["problem", *names])
    tables = []
    for path in paths:
        table = pq.read_table(path)
        problem = path.parent.name.split("=", 1)[1]
        tables.append(table.append_column("problem", pa.array([problem] * table.num_rows, pa.string())))
    frame = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    order = ["problem"] + [c for c in frame.columns if c != "problem"]
    frame = frame[order].sort_values(["problem", "instance_id", "method", "solver", "repeat"], na_position="first")
    return frame.reset_index(drop=True)


@dataclass
class StoredInstance:
    """What an instance's file holds: its runs (method, solver, repeat) and how many rows failed."""

    runs: set[tuple[str, str, int]] = field(default_factory=set)
    errors: int = 0


def stored_instances(out: str | Path) -> dict[str, StoredInstance]:
    """Every instance already in ``out``, from its file (unreadable files count as absent)."""
    stored: dict[str, StoredInstance] = {}
    for path in files(out):
        try:
            table = pq.read_table(path, columns=["instance_id", "method", "solver", "repeat", "status"])
        except (OSError, pa.ArrowException):
            continue
        for row in table.to_pylist():
            entry = stored.setdefault(row["instance_id"], StoredInstance())
            entry.runs.add((row["method"], row["solver"] or "", row["repeat"]))
            entry.errors += row["status"] == "error"
    return stored


# ----------------------------------------------------------------------------------- manifest


def versions() -> dict[str, str]:
    """Versions of the toolkit, Python, the data stack and the solvers."""
    from odrp.core.solvers import SOLVERS, solver_version  # only here: the report reads datasets without solvers

    out = {"odrp-toolkit": odrp.__version__, "python": platform.python_version()}
    for package in ("pyspark", "pyarrow", "pandas", "numpy", "pyomo", "highspy", "pulp", "ortools"):
        try:
            out[package] = version(package)
        except PackageNotFoundError:
            out[package] = "not installed"
    for solver in SOLVERS:
        try:
            out[f"solver {solver}"] = solver_version(solver)
        except Exception as error:  # a missing solver binary is worth recording, not fatal
            out[f"solver {solver}"] = f"unavailable ({type(error).__name__})"
    return out


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(out: str | Path) -> dict[str, Any] | None:
    path = Path(out) / MANIFEST
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError:
        return None


def write_manifest(out: str | Path, *, grid: dict[str, Any], runs: list[dict[str, Any]], status: str) -> dict[str, Any]:
    """Rewrite ``DIR/manifest.json`` from the files on disk: counts, checksums, versions, runs."""
    problems: dict[str, dict[str, int]] = {}
    entries: dict[str, dict[str, Any]] = {}
    for path in files(out):
        problem = path.parent.name.split("=", 1)[1]
        statuses = pq.read_table(path, columns=["status"]).column("status").to_pylist()
        counts = problems.setdefault(problem, {"instances": 0, "rows": 0, "errors": 0})
        counts["instances"] += 1
        counts["rows"] += len(statuses)
        counts["errors"] += statuses.count("error")
        entries[path.relative_to(out).as_posix()] = {"rows": len(statuses), "sha256": sha256_file(path)}
    manifest = {
        "format": FORMAT,
        "status": status,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "grid": grid,
        "rows": sum(c["rows"] for c in problems.values()),
        "instances": sum(c["instances"] for c in problems.values()),
        "problems": problems,
        "versions": versions(),
        "runs": runs,
        "files": entries,
    }
    path = Path(out) / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{MANIFEST}.tmp")
    tmp.write_text(json.dumps(manifest, indent=1, allow_nan=False) + "\n")
    os.replace(tmp, path)
    return manifest


def error_rows(out: str | Path) -> list[dict[str, Any]]:
    """Every row with ``status: error`` in ``out``, with its message (never hidden by --resume)."""
    found = []
    for path in files(out):
        table = pq.read_table(path, columns=["instance_id", "method", "solver", "repeat", "status", "message"])
        found.extend(row for row in table.to_pylist() if row.pop("status") == "error")
    return found
