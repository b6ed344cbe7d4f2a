"""The benchmark dataset: Parquet rows partitioned by problem, one file per instance, and a manifest.

Layout of an output directory ``DIR``::

    DIR/manifest.json                          the grid, row counts, checksums, versions, runs
    DIR/journal.jsonl                          checksums of the files written since the manifest
    DIR/rows/problem=<kind>/<instance_id>.parquet   every row of one instance (hive-partitioned)
    DIR/instances/<kind>/<instance_id>.json    the instance as solved: its canonical JSON
    DIR/plugins/<module path>.py               the source of each plugin of the grid (odrp.bench.provenance)
    DIR/report/                                what ``odrp report DIR`` writes
    DIR/quarantine/                            files that disagreed with the record (``--resume``)
    DIR/.lock                                  held by the one process writing the dataset

One row per instance x method x repeat (exact rows: one per solver). ``problem`` is the partition
column. :func:`read` returns the whole dataset as one pandas DataFrame with ``problem`` as plain
strings (``frame.groupby("problem")`` gives the kinds present, nothing else) and merges the files
of several grids (resumed with a changed grid), whose parameter columns may differ.
:func:`kind_dataset` gives one kind's files as one Arrow dataset, their schemas unified (the
``metrics`` and ``solution`` structs differ between files, and conflict between kinds, so a reader
that takes one file's schema for all fails; a plain ``pandas.read_parquet("DIR/rows")`` would also
make ``problem`` a categorical, whose ``groupby`` crosses every kind with every method unless
``observed=True``).

Columns: ``instance_id, study, instance_name, generator, file, params`` (canonical JSON) and one
``param_<name>`` column per generator parameter of the grid, ``seed, instance_sha256`` (of the
instance's canonical JSON), ``size, size_label`` (``kind.size``), ``method, solver, options`` (JSON),
``repeat, status, objective, bound, solver_gap`` (the solver's own incumbent/bound gap), ``optimum,
optimum_status, gap, sense, best_known, best_known_method, best_bound, tier, gap_known, gap_bound``
(:mod:`odrp.bench.optimum`: the instance's optimum, sense, best verified solution, best proven bound
and tier, and the row's gaps to the optimum, the best known and the best bound; files written before
the certificate's columns existed lack them from ``sense`` on, and :func:`read` derives them),
``runtime_s, time_limit, verified, message, metrics`` (struct), ``method_stats`` (JSON: free-form
per method), ``solution`` (struct),
``package_version, solver_version``, and ``warm_start, warm_start_objective``: on an exact row of a
``warm_start: best_heuristic`` study, the heuristic run whose solution was the MIP start (``method``
or ``method#repeat``) and its objective (else null; rows from before these columns existed have
none: :func:`read` gives null there).

**Structs.** ``metrics`` and ``solution`` are Parquet structs whose type each file infers from its
rows (:func:`nested_column`): the top level's keys are fields (``solution.placement``,
``metrics.cost``), every dict below is a ``map<string, ...>`` (operator, node and knapsack names are
data, not fields), every metric number is a float64, and a run without metrics or a solution has
null. A field that some runs of a file report and others do not is null in the others. :func:`read`
gives both columns as Python dicts and lists, exactly the solution the method returned (JSON text
of older datasets is decoded too).

**Instances.** Every instance that could be built is stored as it was solved, in the kind's
documented JSON format, written as its canonical JSON (keys sorted, integral floats as integers, no
spaces: :func:`odrp.core.canonical.canonical_json`), so the file's SHA-256 is the ``instance_sha256`` of
its rows. The instance file is written before its rows file, and the rows file's record names it
(``instance: {file, sha256}``): a dataset can be handed on without the generators that made it
(``odrp dataset export``, :mod:`odrp.bench.export`). Records written before instances were stored
have no ``instance`` entry, and nothing is expected of them.

Files are written whole and renamed into place (a hidden temporary name first), so a killed run
leaves complete files only: at most the instances in flight are lost. An instance's file is its
record of being done; ``--resume`` reads them back (:func:`stored_instances`).

**The record.** Each file's SHA-256, rows and error rows are computed from the bytes written, before
the rename, and appended as one line to ``DIR/journal.jsonl`` right after it; the manifest's
``files`` is the record of every earlier run, and the journal is merged into it (and removed) when
the manifest is rewritten. A file on disk is never hashed to be certified: :mod:`odrp.bench.verify`
compares it with the record.

**No write follows a symbolic link.** Every write goes through a descriptor of a real directory
inside ``DIR`` (each component opened with ``O_NOFOLLOW``), to a temporary name created with
``O_EXCL | O_NOFOLLOW``, renamed over the target (a rename replaces a link, never writes through it).
A directory of the dataset that is a symbolic link is bad input. ``DIR`` itself is the user's choice.
A corrupt ``manifest.json`` is never replaced: :func:`set_manifest_aside` renames it. One process at
a time writes a dataset (:func:`writer_lock`), so a manifest left ``running`` means its run was killed.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import math
import os
import platform
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import odrp
from odrp.bench.optimum import DERIVED, complete, study_settings
from odrp.core.errors import InputError, read_bytes, read_text

FORMAT = "odrp-bench/1"
ROWS = "rows"
INSTANCES = "instances"
MANIFEST = "manifest.json"
JOURNAL = "journal.jsonl"
QUARANTINE = "quarantine"
LOCK = ".lock"

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
    ("sense", pa.string()),
    ("best_known", pa.float64()),
    ("best_known_method", pa.string()),
    ("best_bound", pa.float64()),
    ("tier", pa.string()),
    ("gap_known", pa.float64()),
    ("gap_bound", pa.float64()),
    ("runtime_s", pa.float64()),
    ("time_limit", pa.float64()),
    ("verified", pa.bool_()),
    ("message", pa.string()),
    ("metrics", pa.null()),  # a struct inferred per file (nested_type)
    ("method_stats", pa.string()),
    ("solution", pa.null()),  # a struct inferred per file (nested_type)
    ("package_version", pa.string()),
    ("solver_version", pa.string()),
    ("warm_start", pa.string()),
    ("warm_start_objective", pa.float64()),
]
JSON_COLUMNS = ("params", "options", "method_stats")
"""Columns stored as canonical JSON text: free-form per method (``method_stats``, ``options``) or
spread into ``param_*`` columns already (``params``)."""
STRUCT_COLUMNS = ("metrics", "solution")
"""Columns stored as Parquet structs (:func:`nested_type`); :func:`read` gives them as dicts."""
OPTIONAL_COLUMNS = ("warm_start", "warm_start_objective", *DERIVED[3:])
"""Columns a row may leave out (null): only exact rows of warm-started studies fill the first two;
the certificate's columns (``sense`` on) are derived by :func:`read` where a row lacks them."""
PARAM_PREFIX = "param_"


def rows_dir(out: str | Path) -> Path:
    return Path(out) / ROWS


def instance_path(out: str | Path, problem: str, instance_id: str) -> Path:
    return rows_dir(out) / f"problem={problem}" / f"{instance_id}.parquet"


def instance_file(problem: str, instance_id: str) -> str:
    """Where the instance JSON of ``instance_id`` lies, relative to the dataset (POSIX separators)."""
    return f"{INSTANCES}/{problem}/{instance_id}.json"


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
        elif f.name in STRUCT_COLUMNS:
            columns[f.name] = nested_column([row[f.name] for row in rows], numbers_as_float=f.name == "metrics")
        else:
            values = [row.get(f.name) if f.name in OPTIONAL_COLUMNS else row[f.name] for row in rows]
            columns[f.name] = [_finite(v) if f.type == pa.float64() else v for v in values]
    fields = [pa.field(f.name, columns[f.name].type) if f.name in STRUCT_COLUMNS else f for f in table_schema]
    return pa.table(columns, schema=pa.schema(fields))


def nested_column(values: list[Any], numbers_as_float: bool = False) -> pa.Array:
    """One file's ``metrics`` or ``solution`` values as an Arrow array of :func:`nested_type`.

    A value's top-level dict is a struct (its keys are names: ``placement``, ``cost``), every dict
    below it a ``map<string, ...>`` (its keys are data: operators, nodes, knapsacks), so that
    instances with other operator names never add fields to each other. An empty top-level dict is
    null (Parquet has no struct without fields). ``numbers_as_float``: every number a float64 (the
    metrics, so that files agree on their types). Values whose types conflict within the file (a
    plugin returning a list in one run and a dict in another) leave the file's column as JSON text
    (sorted keys, an infinite number as ``Infinity``), which :func:`read` decodes too.
    """
    values = [None if v == {} else v for v in (_plain(v, numbers_as_float) for v in values)]
    try:
        return pa.array(values, type=nested_type(pa.array(values).type))
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        # Python's JSON (an infinite metric as Infinity, which json.loads reads back)
        return pa.array([None if v is None else json.dumps(v, sort_keys=True) for v in values], pa.string())


def nested_type(inferred: pa.DataType, top: bool = True) -> pa.DataType:
    """Arrow's inferred type with every struct below the top one turned into a map of string keys
    (its value type the permissive union of the struct's field types)."""
    if pa.types.is_struct(inferred):
        children = [nested_type(inferred.field(k).type, top=False) for k in range(inferred.num_fields)]
        if top:
            if not children:
                return pa.null()
            return pa.struct([pa.field(inferred.field(k).name, t) for k, t in enumerate(children)])
        return pa.map_(pa.string(), _union(children))
    if pa.types.is_list(inferred) or pa.types.is_large_list(inferred):
        return pa.list_(nested_type(inferred.value_type, top=False))
    return inferred


def _union(types: list[pa.DataType]) -> pa.DataType:
    if not types:
        return pa.null()
    schemas = [pa.schema([pa.field("value", t)]) for t in types]
    return pa.unify_schemas(schemas, promote_options="permissive").field("value").type


def _plain(value: Any, numbers_as_float: bool) -> Any:
    """``value`` with NaN as null and, if asked, every int (not bool) as a float."""
    if isinstance(value, dict):
        return {str(k): _plain(v, numbers_as_float) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, numbers_as_float) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    if numbers_as_float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def decoded(column: pa.ChunkedArray) -> list[Any]:
    """A ``metrics`` or ``solution`` column as Python values: structs and maps as dicts, JSON text
    (a file whose values conflicted, or a dataset written before these columns were structs) parsed."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        return [None if v is None else json.loads(v) for v in column.to_pylist()]
    if pa.types.is_null(column.type):
        return [None] * len(column)
    return column.to_pylist(maps_as_pydicts="strict")


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


@contextlib.contextmanager
def directory(root: str | Path, parts: Sequence[str] = (), *, create: bool = True) -> Iterator[int]:
    """A descriptor of ``root/parts...``, every part a real directory (created if missing), never a link.

    ``root`` is opened as given (the user chose it); a part that is a symbolic link or a file is bad
    input: the dataset writes only inside ``root``.
    """
    root = Path(root)
    if create:
        root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(parts, 1):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                where = str(root.joinpath(*parts[:depth]))
                raise InputError(
                    where, "", "a directory of the dataset, found a symbolic link or a file (writes stay inside it)"
                ) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def write_atomic(root: str | Path, relative: str, write: Callable[[Any], None]) -> tuple[str, int]:
    """Write ``root/relative`` whole: ``write(binary handle)`` fills a hidden temporary file (created
    with ``O_EXCL | O_NOFOLLOW``), which is then renamed over the target. Returns (SHA-256, bytes) of
    what was written. A leftover or planted temporary name is removed first, never written through."""
    *parts, name = Path(relative).parts
    tmp = f".{name}.tmp"
    with directory(root, parts) as fd:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=fd)
        handle_fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        try:
            with os.fdopen(handle_fd, "wb") as handle:
                write(handle)
            digest, size = _sha256_fd(os.open(tmp, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd))
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
    return digest, size


def _sha256_fd(fd: int) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with os.fdopen(fd, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def write_instance(
    out: str | Path, problem: str, instance_id: str, table: pa.Table, instance: bytes | None = None
) -> tuple[str, dict[str, Any]]:
    """Write one instance's rows atomically and record them in the journal; returns the file's name
    (relative to ``out``) and its record entry (rows, errors, SHA-256 of the bytes written).

    ``instance``: the instance's canonical JSON, written first to :func:`instance_file`; the entry
    then names it and its SHA-256 (``instance: {file, sha256}``)."""
    stored: dict[str, Any] = {}
    if instance is not None:
        name = instance_file(problem, instance_id)
        digest, _ = write_atomic(out, name, lambda handle: handle.write(instance))
        stored = {"instance": {"file": name, "sha256": digest}}
    path = instance_path(out, problem, instance_id)
    relative = path.relative_to(out).as_posix()
    digest, _ = write_atomic(out, relative, lambda handle: pq.write_table(table, handle))
    statuses = table.column("status").to_pylist()
    entry = {"rows": table.num_rows, "errors": statuses.count("error"), "sha256": digest, **stored}
    append_journal(out, relative, entry)
    return relative, entry


def append_journal(out: str | Path, relative: str, entry: dict[str, Any]) -> None:
    """One line ``{"file": relative, **entry}`` at the end of ``DIR/journal.jsonl`` (one write call)."""
    line = json.dumps({"file": relative, **entry}, sort_keys=True) + "\n"
    with directory(out) as fd:
        handle = os.open(JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        try:
            os.write(handle, line.encode())
        finally:
            os.close(handle)


def journal(out: str | Path) -> dict[str, dict[str, Any]]:
    """The journal's entries by file, the last line of a file winning (a torn last line is skipped)."""
    path = Path(out) / JOURNAL
    entries: dict[str, dict[str, Any]] = {}
    if not path.exists() or path.is_symlink():
        return entries
    try:
        text = read_bytes(path, "journal").decode("utf-8", errors="replace")
    except InputError:  # no regular file: no journal
        return entries
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if _valid_entry(entry) and isinstance(entry.get("file"), str):
            entries[entry.pop("file")] = entry
    return entries


def _valid_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("sha256"), str)
        and isinstance(entry.get("rows"), int)
        and isinstance(entry.get("errors", 0), int)
    )


def remove_partial_files(out: str | Path) -> int:
    """Delete temporary files a killed run left behind (links among them: the link); returns how many."""
    removed = 0
    for top, prefix in ((ROWS, "problem="), (INSTANCES, "")):
        if not (Path(out) / top).is_dir() or (Path(out) / top).is_symlink():
            continue
        with directory(out, (top,), create=False) as folder:
            for entry in os.scandir(folder):
                if not (entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False)):
                    continue
                with directory(out, (top, entry.name), create=False) as problem:
                    for item in os.scandir(problem):
                        if item.name.startswith(".") and item.name.endswith(".tmp"):
                            os.unlink(item.name, dir_fd=problem)
                            removed += 1
    return removed


def quarantine(out: str | Path, relative: str) -> Path:
    """Move ``DIR/relative`` to ``DIR/quarantine/relative`` (a timestamp added if that is taken)."""
    *parts, name = Path(relative).parts
    target = name
    with directory(out, parts, create=False) as source, directory(out, (QUARANTINE, *parts)) as aside:
        if _exists(target, aside):
            target = f"{name}.{time.strftime('%Y%m%dT%H%M%S')}"
            serial = 1
            while _exists(target, aside):
                target, serial = f"{name}.{time.strftime('%Y%m%dT%H%M%S')}.{serial}", serial + 1
        os.rename(name, target, src_dir_fd=source, dst_dir_fd=aside)
    return Path(out, QUARANTINE, *parts, target)


def _exists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


@contextlib.contextmanager
def writer_lock(out: str | Path) -> Iterator[None]:
    """Hold ``DIR/.lock`` (``flock``) while writing: a second writer of the same dataset is bad input."""
    with directory(out) as fd:
        try:
            handle = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        except OSError as error:
            if error.errno != errno.ELOOP:
                raise
            raise InputError(str(Path(out) / LOCK), "", "a lock file, found a symbolic link") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                str(out), "--out", "a dataset no other process is writing (another odrp bench holds it)"
            ) from None
        yield
    finally:
        os.close(handle)


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
    tables, nested = [], {name: [] for name in STRUCT_COLUMNS}
    for path in paths:
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as error:
            raise InputError(str(path), "", f"a readable Parquet file ({type(error).__name__})") from None
        for name in STRUCT_COLUMNS:  # each file's own types: never widened by another instance's fields
            nested[name].extend(decoded(table.column(name)) if name in table.column_names else [None] * len(table))
            if name in table.column_names:
                table = table.drop_columns(name)
        problem = path.parent.name.split("=", 1)[1]
        tables.append(table.append_column("problem", pa.array([problem] * table.num_rows, pa.string())))
    frame = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    for name, values in nested.items():
        frame[name] = pd.Series(values, index=frame.index, dtype=object)
    frame = complete(frame, study_settings(_manifest_or_none(out)), partial(_sense, out))
    written = [n for n, _ in HEAD] + [c for c in frame.columns if c.startswith(PARAM_PREFIX)] + [n for n, _ in TAIL]
    order = ["problem"] + [c for c in written if c in frame.columns]
    order += [c for c in frame.columns if c not in order]
    frame = frame[order].sort_values(["problem", "instance_id", "method", "solver", "repeat"], na_position="first")
    return frame.reset_index(drop=True)


def _manifest_or_none(out: str | Path) -> dict[str, Any] | None:
    try:
        return read_manifest(out)
    except InputError:
        return None  # a damaged manifest: the defaults of every study (verify names the damage)


def _sense(out: str | Path, problem: str, instance_id: str) -> str:
    """An instance's sense: its stored file's ``sense`` field where the kind has one (the GAP), else the kind's."""
    from odrp.registry import KINDS  # only here: reading a dataset that has its columns needs no kinds

    path = Path(out) / instance_file(problem, instance_id)
    with contextlib.suppress(OSError, ValueError):
        if path.is_file() and not path.is_symlink():
            given = json.loads(path.read_bytes()).get("sense")
            if given in ("min", "max"):
                return str(given)
    if problem not in KINDS:
        raise InputError(
            str(rows_dir(out) / f"problem={problem}"), "problem", f"a kind of the toolkit ({', '.join(KINDS)})"
        )
    return KINDS[problem].sense


def kind_dataset(out: str | Path, problem: str) -> Any:
    """One kind's files as one ``pyarrow.dataset.Dataset`` (for pyarrow, DuckDB or Polars), their schemas
    unified: a struct's fields joined over the files, a null column (an instance whose every run failed)
    read as the others' type. Reading ``DIR/rows/problem=<kind>`` with a reader that takes one file's
    schema for all fails on such files."""
    import pyarrow.dataset as ds

    paths = sorted((rows_dir(out) / f"problem={problem}").glob("*.parquet"))
    if not paths:
        raise InputError(str(rows_dir(out) / f"problem={problem}"), "", "a folder of Parquet files of that kind")
    unified = pa.unify_schemas([pq.read_schema(p) for p in paths], promote_options="permissive")
    return ds.dataset([str(p) for p in paths], schema=unified, format="parquet")


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
    from odrp.bench.provenance import toolkit_commit
    from odrp.core.solvers import SOLVERS, solver_version  # only here: the report reads datasets without solvers

    out = {"odrp-toolkit": odrp.__version__, "python": platform.python_version()}
    commit = toolkit_commit()
    if commit is not None:  # a git checkout: the commit it runs from, -dirty when tracked files changed
        out["odrp-toolkit commit"] = commit
    for package in ("pyspark", "pyarrow", "pandas", "numpy", "pyomo", "highspy", "pulp", "ortools", "pyscipopt"):
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


def machine() -> dict[str, Any]:
    """The driver's machine: operating system, processor, cores and memory (the manifest's ``machine``)."""
    from odrp.core.memory import GB, machine_memory

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "memory_gb": round(machine_memory() / GB, 1),
    }


def sha256_file(path: Path) -> str:
    """SHA-256 of a regular file (a symbolic link raises OSError: it is never followed; so does a FIFO or a
    device, opened without blocking and refused before it is read)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    os.set_blocking(fd, True)
    return _sha256_fd(fd)[0]


class CorruptManifest(InputError):
    """``DIR/manifest.json`` is not a manifest: not JSON, the wrong shape, or a symbolic link."""


def read_manifest(out: str | Path) -> dict[str, Any] | None:
    """The manifest of ``out``; None if it has none. A damaged one raises :class:`CorruptManifest`."""
    path = Path(out) / MANIFEST
    if path.is_symlink():
        raise CorruptManifest(str(path), "", "a regular file, found a symbolic link")
    if not path.exists():
        return None
    try:
        data = json.loads(read_text(path, "JSON file"))
    except InputError as error:  # a FIFO or a device in its place, or unreadable
        raise CorruptManifest(error.source, error.field, error.expected) from None
    except (json.JSONDecodeError, RecursionError) as error:
        raise CorruptManifest(str(path), "", f"valid JSON ({str(error)[:200]})") from None
    problem = _manifest_problem(data)
    if problem:
        raise CorruptManifest(str(path), "", problem)
    return data


def _manifest_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "a JSON object"
    if data.get("format") != FORMAT:
        return f"format {FORMAT!r}, got {str(data.get('format'))[:80]!r}"
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        return "runs: a list of objects"
    entries = data.get("files", {})
    if not isinstance(entries, dict) or not all(_valid_entry(entry) for entry in entries.values()):
        return "files: an object of {rows, sha256} per file"
    return None


def set_manifest_aside(out: str | Path) -> Path:
    """Rename a damaged ``manifest.json`` to ``manifest.json.corrupt-<time>``, keeping it; returns the new path."""
    stamp = time.strftime("%Y%m%dT%H%M%S")
    with directory(out, create=False) as fd:
        target, serial = f"{MANIFEST}.corrupt-{stamp}", 1
        while _exists(target, fd):
            target, serial = f"{MANIFEST}.corrupt-{stamp}.{serial}", serial + 1
        os.rename(MANIFEST, target, src_dir_fd=fd, dst_dir_fd=fd)
    return Path(out) / target


def write_manifest(
    out: str | Path,
    *,
    grid: dict[str, Any],
    runs: list[dict[str, Any]],
    status: str,
    files: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Rewrite ``DIR/manifest.json`` with the record ``files`` (path -> rows, errors, SHA-256), then drop
    the journal, which the record includes. Counts come from the record: no file is read or hashed."""
    problems: dict[str, dict[str, int]] = {}
    for name, entry in sorted(files.items()):
        problem = Path(name).parent.name.split("=", 1)[1]
        counts = problems.setdefault(problem, {"instances": 0, "rows": 0, "errors": 0})
        counts["instances"] += 1
        counts["rows"] += entry["rows"]
        counts["errors"] += entry.get("errors", 0)
    manifest = {
        "format": FORMAT,
        "status": status,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "grid": grid,
        "rows": sum(c["rows"] for c in problems.values()),
        "instances": sum(c["instances"] for c in problems.values()),
        "problems": problems,
        "versions": versions(),
        "machine": machine(),
        "runs": runs,
        "files": dict(sorted(files.items())),
    }
    text = json.dumps(manifest, indent=1, allow_nan=False) + "\n"
    write_atomic(out, MANIFEST, lambda handle: handle.write(text.encode()))
    with directory(out) as fd, contextlib.suppress(FileNotFoundError):
        os.unlink(JOURNAL, dir_fd=fd)
    return manifest


def error_rows(out: str | Path) -> list[dict[str, Any]]:
    """Every row with ``status: error`` in ``out``, with its message (never hidden by --resume)."""
    found = []
    for path in files(out):
        table = pq.read_table(path, columns=["instance_id", "method", "solver", "repeat", "status", "message"])
        found.extend(row for row in table.to_pylist() if row.pop("status") == "error")
    return found
