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

Each finding is one line: the file, what was expected, what was found. The files that agree form
the record a new manifest may keep; nothing here re-hashes a file into the record.
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
from odrp.core.errors import InputError

#: At most this many findings in the message of :class:`DamagedDataset` (verify lists every one).
SHOWN = 20


@dataclass(frozen=True)
class Finding:
    """One file that does not agree with the record."""

    file: str  # relative to the dataset directory, POSIX separators
    kind: str  # mismatched, missing, unlisted, unreadable, not a regular file
    detail: str  # what was expected and what was found

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
            finding = _compare(out / name, name, entry)
            if finding is None:
                result.record[name] = entry
            else:
                result.findings.append(finding)
    return result


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
