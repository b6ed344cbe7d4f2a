"""Check a dataset's files against its record: ``odrp dataset verify DIR``, ``odrp report``, ``--resume``.

The record of a dataset (:mod:`odrp.bench.dataset`) is the manifest's ``files`` (path -> rows, error
rows, SHA-256 of the bytes written), updated by the lines of ``DIR/journal.jsonl`` written since the
manifest was last rewritten. :func:`check` compares it with what is on disk under ``DIR/rows``:

- **mismatched**: a file whose SHA-256 or row count is not the recorded one (rewritten, truncated);
- **missing**: a recorded file that is not there;
- **unlisted**: a file under ``rows/problem=*/`` that the record does not hold (hidden temporary
  files of a killed write excepted: ``--resume`` removes them);
- **unreadable**: a file that cannot be read (permissions, I/O);
- **not a regular file**: a symbolic link or a directory where a file or a partition folder belongs.

The instance files (``DIR/instances/<kind>/<instance_id>.json``) are checked through the record of
their rows file, which names each one and its SHA-256: an instance file that is missing, rewritten or
a link is a finding that also takes its rows file out of the record (``--resume`` reruns the
instance), and a file under ``instances/`` that no record names is unlisted.

Each finding is one line: the file, what was expected, what was found. The files that agree form
the record a new manifest may keep; nothing here re-hashes a file into the record.

**Exports** (:mod:`odrp.bench.export`) have no manifest: their record is ``SHA256SUMS`` (the format
``sha256sum -c`` reads). :func:`check_export` compares every file of the export with it: a file
whose SHA-256 differs, a listed file that is missing, a file the list does not hold, a line that is
not ``<64 hex digits>  <path>``, and a link are findings, one line each.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from odrp.bench import dataset
from odrp.core.errors import InputError, read_bytes

#: At most this many findings in the message of :class:`DamagedDataset` (verify lists every one).
SHOWN = 20


@dataclass(frozen=True)
class Finding:
    """One file that does not agree with the record."""

    file: str  # relative to the dataset directory, POSIX separators
    kind: str  # mismatched, missing, unlisted, unreadable, not a regular file
    detail: str  # what was expected and what was found
    rows: str | None = None  # an instance file's finding: the rows file whose record names it

    def line(self, out: str | Path) -> str:
        return f"{Path(out) / self.file}: {self.detail}"


@dataclass
class Check:
    """The outcome of :func:`check`: the record's entries that agree with their files, and the rest."""

    out: Path
    record: dict[str, dict[str, Any]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(entry["rows"] for entry in self.record.values())

    def summary(self) -> str:
        return f"{self.out}: {len(self.record)} files, {self.rows} rows, every one as the manifest records it"


class DamagedDataset(InputError):
    """Files of a dataset that do not agree with its record: one line per file (at most :data:`SHOWN`)."""

    def __init__(self, out: str | Path, findings: list[Finding]) -> None:
        lines = [finding.line(out) for finding in findings[:SHOWN]]
        if len(findings) > SHOWN:
            lines.append(f"... and {len(findings) - SHOWN} more: `odrp dataset verify {out}` lists every one")
        super().__init__(str(out), "", "a dataset whose files agree with its manifest")
        self.lines = lines
        self.findings = findings

    def __str__(self) -> str:
        return "\n".join(self.lines)


def record_of(out: str | Path, manifest: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The recorded files: the manifest's ``files``, updated by the journal."""
    record = {name: dict(entry) for name, entry in (manifest or {}).get("files", {}).items()}
    record.update(dataset.journal(out))
    return record


def check(out: str | Path, manifest: dict[str, Any] | None) -> Check:
    """Compare every file under ``out/rows`` with the record of ``manifest`` and the journal."""
    out = Path(out)
    record = record_of(out, manifest)
    result = Check(out=out)
    on_disk, odd = _disk_files(out)
    result.findings.extend(odd)
    for name in sorted(set(record) | set(on_disk)):
        entry = record.get(name)
        if entry is None:
            result.findings.append(Finding(name, "unlisted", "not in the manifest: expected only the files it records"))
        elif name not in on_disk:
            if name not in {finding.file for finding in odd}:
                result.findings.append(
                    Finding(name, "missing", f"expected a file of {entry['rows']} rows (in the manifest), found none")
                )
        else:
            finding = _compare(out / name, name, entry) or _compare_instance(out, name, entry)
            if finding is None:
                result.record[name] = entry
            else:
                result.findings.append(finding)
    named = {entry["instance"]["file"] for entry in record.values() if isinstance(entry.get("instance"), dict)}
    result.findings.extend(_unlisted_instances(out, named))
    return result


def _compare_instance(out: Path, name: str, entry: dict[str, Any]) -> Finding | None:
    """The instance file the rows file ``name`` names in its record, against its recorded SHA-256."""
    stored = entry.get("instance")
    if not isinstance(stored, dict):
        return None  # a record from before instances were stored
    file, expected = str(stored.get("file")), str(stored.get("sha256"))
    path = out / file
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return Finding(file, "not a regular file", "a regular file, found a symbolic link or other", rows=name)
    if not path.exists():
        return Finding(file, "missing", f"expected the instance of {name} (in the manifest), found none", rows=name)
    try:
        digest = dataset.sha256_file(path)
    except OSError as error:
        return Finding(file, "unreadable", f"a readable file, found {type(error).__name__}", rows=name)
    if digest != expected:
        detail = f"expected SHA-256 {expected[:16]}... (in the manifest), found {digest[:16]}..."
        return Finding(file, "mismatched", detail, rows=name)
    return None


def _unlisted_instances(out: Path, named: set[str]) -> list[Finding]:
    """Files under ``instances/<kind>/`` (hidden ones excepted) that no record names."""
    found = []
    top = out / dataset.INSTANCES
    if not top.is_dir() or top.is_symlink():
        return found
    for folder in sorted(top.iterdir()):
        if folder.name.startswith(".") or not folder.is_dir() or folder.is_symlink():
            continue
        for item in sorted(folder.iterdir()):
            relative = f"{dataset.INSTANCES}/{folder.name}/{item.name}"
            if not item.name.startswith(".") and relative not in named:
                detail = "not in the manifest: expected only the instances it records"
                found.append(Finding(relative, "unlisted", detail))
    return found


def verify(out: str | Path) -> Check:
    """:func:`check` with the manifest read from ``out``: a missing or damaged manifest is bad input."""
    out = Path(out)
    if not out.is_dir():
        raise InputError(str(out), "", "a dataset directory")
    manifest = dataset.read_manifest(out)  # CorruptManifest (an InputError) when damaged
    if manifest is None and not (out / dataset.JOURNAL).exists():
        raise InputError(str(out / dataset.MANIFEST), "", "a manifest (is this a dataset written by odrp bench?)")
    return check(out, manifest)


def require_intact(out: str | Path) -> Check:
    """:func:`verify`, raising :class:`DamagedDataset` when any file disagrees."""
    result = verify(out)
    if result.findings:
        raise DamagedDataset(out, result.findings)
    return result


def _disk_files(out: Path) -> tuple[set[str], list[Finding]]:
    """The names of the files under ``rows/problem=*/`` (hidden ones excepted), and what is not a file."""
    found: set[str] = set()
    odd: list[Finding] = []
    rows = out / dataset.ROWS
    if rows.is_symlink() or (rows.exists() and not rows.is_dir()):
        return found, [Finding(dataset.ROWS, "not a regular file", "a directory, found a symbolic link or a file")]
    if not rows.exists():
        return found, odd
    for folder in sorted(os.scandir(rows), key=lambda e: e.name):
        if not folder.name.startswith("problem="):
            continue
        name = f"{dataset.ROWS}/{folder.name}"
        if not folder.is_dir(follow_symlinks=False):
            odd.append(Finding(name, "not a regular file", "a partition directory, found a symbolic link or a file"))
            continue
        for item in os.scandir(folder.path):
            if item.name.startswith("."):
                continue
            relative = f"{name}/{item.name}"
            mode = item.stat(follow_symlinks=False).st_mode
            if stat.S_ISREG(mode):
                found.add(relative)
            else:
                odd.append(Finding(relative, "not a regular file", "a regular file, found a symbolic link or other"))
    return found, odd


def _compare(path: Path, name: str, entry: dict[str, Any]) -> Finding | None:
    try:
        digest = dataset.sha256_file(path)
    except OSError as error:
        return Finding(name, "unreadable", f"a readable file, found {type(error).__name__} ({error.strerror})")
    expected = f"SHA-256 {entry['sha256'][:16]}... and {entry['rows']} rows (as in the manifest)"
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except (OSError, pa.ArrowException):
        return Finding(name, "mismatched", f"expected {expected}, found no readable Parquet (truncated?)")
    if digest != entry["sha256"] or rows != entry["rows"]:
        return Finding(name, "mismatched", f"expected {expected}, found SHA-256 {digest[:16]}... and {rows} rows")
    if "errors" not in entry:  # a record from before error counts were recorded: count them now
        statuses = pq.read_table(path, columns=["status"]).column("status").to_pylist()
        entry["errors"] = statuses.count("error")
    return None


# ------------------------------------------------------------------------------------- exports

SUMS = "SHA256SUMS"
"""The record of an export: one ``<SHA-256>  <path>`` line per file (``sha256sum -c`` reads it)."""


def is_export(path: str | Path) -> bool:
    """True when ``path`` is an export (it has ``SHA256SUMS`` and no manifest)."""
    path = Path(path)
    return (path / SUMS).is_file() and not (path / dataset.MANIFEST).exists()


@dataclass
class ExportCheck:
    """The outcome of :func:`check_export`: the listed files that agree, and the rest."""

    out: Path
    files: dict[str, str] = field(default_factory=dict)  # path -> SHA-256, as listed and found
    findings: list[Finding] = field(default_factory=list)

    def summary(self) -> str:
        return f"{self.out}: {len(self.files)} files, every one as {SUMS} records it"


def read_sums(out: str | Path) -> tuple[dict[str, str], list[Finding]]:
    """The paths and SHA-256 of ``SHA256SUMS`` (text or binary mode lines), and its malformed lines."""
    listed: dict[str, str] = {}
    bad: list[Finding] = []
    text = read_bytes(Path(out) / SUMS, "checksum file").decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), 1):
        digest, _, name = line.partition(" ")
        name = name[1:] if name[:1] in (" ", "*") else ""
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not name:
            bad.append(Finding(SUMS, "malformed", f"line {number}: expected '<64 hex digits>  <path>'"))
        elif Path(name).is_absolute() or ".." in Path(name).parts:
            bad.append(Finding(SUMS, "malformed", f"line {number}: a path inside the export, got {name[:100]!r}"))
        else:
            listed[name] = digest
    return listed, bad


def check_export(out: str | Path) -> ExportCheck:
    """Every file of the export ``out`` against ``SHA256SUMS`` (see the module docstring)."""
    out = Path(out)
    if not is_export(out):
        raise InputError(str(out / SUMS), "", "an export written by odrp dataset export (no SHA256SUMS found)")
    result = ExportCheck(out=out)
    listed, bad = read_sums(out)
    result.findings.extend(bad)
    present: set[str] = set()
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out).as_posix()
        if relative == SUMS or any(part.startswith(".") for part in path.relative_to(out).parts):
            continue
        if path.is_symlink() or (not path.is_file() and not path.is_dir()):
            result.findings.append(Finding(relative, "not a regular file", "a regular file, found a symbolic link"))
        elif path.is_file():
            present.add(relative)
    for name in sorted(set(listed) | present):
        if name not in listed:
            result.findings.append(Finding(name, "unlisted", f"not in {SUMS}: expected only the files it lists"))
        elif name not in present:
            if not (out / name).is_symlink():
                result.findings.append(Finding(name, "missing", f"expected a file (in {SUMS}), found none"))
        else:
            try:
                digest = dataset.sha256_file(out / name)
            except OSError as error:
                result.findings.append(Finding(name, "unreadable", f"a readable file ({error.strerror})"))
                continue
            if digest != listed[name]:
                detail = f"expected SHA-256 {listed[name][:16]}... (in {SUMS}), found {digest[:16]}..."
                result.findings.append(Finding(name, "mismatched", detail))
            else:
                result.files[name] = digest
    return result


def require_intact_export(out: str | Path) -> ExportCheck:
    """:func:`check_export`, raising :class:`DamagedDataset` when any file disagrees."""
    result = check_export(out)
    if result.findings:
        raise DamagedDataset(out, result.findings)
    return result
