"""``odrp dataset export DIR --to DEST``: a benchmark dataset as a folder that stands alone, and back.

A dataset written by ``odrp bench`` (:mod:`odrp.bench.dataset`) holds every instance as it was
solved (``DIR/instances/<kind>/<instance_id>.json``) next to its rows. An export is what a reader
needs, in formats any tool reads, and nothing of the toolkit's internals::

    DEST/instances/<kind>/<instance_id>.json   every instance: its canonical JSON, in the kind's documented format
    DEST/schemas/<kind>.json                   the JSON Schema of each kind's instances (``odrp schema KIND``)
    DEST/optima.csv                            one line per instance: its optimum and how it was established
    DEST/results.parquet                       every row of the dataset (the columns of docs/benchmarks.md)
    DEST/grid.yaml                             the grid that made it
    DEST/plugins/<module path>.py              the source of each plugin the grid names (odrp.bench.provenance)
    DEST/README.md                             the datasheet: each kind's model, provenance, generators, versions,
                                               machine, columns, the citation and the data's licence
    DEST/SHA256SUMS                            SHA-256 of every other file (``sha256sum -c SHA256SUMS``)

An instance file's SHA-256 is the ``instance_sha256`` of its rows and of its line in ``optima.csv``:
the file is the instance's canonical JSON (keys sorted, integral floats as integers, no spaces), so
anyone can check that the rows were computed on that file. The dataset is checked against its
manifest first (:func:`odrp.bench.verify.require_intact`): a dataset with damaged files is not
exported. ``odrp dataset verify DEST`` checks an export against ``SHA256SUMS``
(:func:`odrp.bench.verify.check_export`), and ``--resolve K`` re-proves K of its optima with another
solver (:mod:`odrp.bench.resolve`).

The data's licence is ``licence:`` of the grid, else :data:`DEFAULT_LICENCE` (CC-BY-4.0); ``odrp dataset
export --licence TEXT`` overrides both.

**Back into a grid** (``odrp import dataset DEST --out DIR``, :func:`import_export`): the export is
checked, and ``DIR/grid.yaml`` gets the export's studies back, each under its own name, over its own
instance files (copied to ``DIR/instances/<study>/``), with every key that still applies to them:
``exact``, ``methods``, ``repeats`` (so the randomised heuristics get the same seeds), ``time_limit``,
``memory_limit``, ``mip_gap``, ``options``, ``warm_start``. A study's ``solutions:`` made elsewhere come
back as the solution files its rows hold (``DIR/solutions/<study>/<method>/``); the generators, their
parameters and seeds give way to the instance files they made. The plugins come from the export
(``DIR/plugins/``), and the grid is loaded once, so that it is known to run. A study may also list
an export's files directly (``instances: DEST/instances/odrp/*.json``): they are instance files like
any other.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from odrp.bench import dataset, verify
from odrp.bench.optimum import DEFAULT_CERTIFY, bound_of, study_settings
from odrp.bench.provenance import PLUGINS
from odrp.bench.verify import SUMS
from odrp.core.errors import InputError, read_bytes, read_text
from odrp.core.result import VERIFY_RTOL, agrees
from odrp.registry import KINDS, heuristics, load_plugins

OPTIMA = "optima.csv"
RESULTS = "results.parquet"
README = "README.md"
GRID = "grid.yaml"
SCHEMAS = "schemas"
DEFAULT_LICENCE = (
    "CC-BY-4.0 (Creative Commons Attribution 4.0 International, https://creativecommons.org/licenses/by/4.0/)"
)
"""The data's licence unless the grid's ``licence:`` or ``odrp dataset export --licence`` says otherwise."""

#: The certificate's columns of ``optima.csv`` (:mod:`odrp.bench.optimum`); exports made before them lack them.
CERTIFICATE_COLUMNS: dict[str, str] = {
    "tier": "proven: two exact solvers prove the optimum and agree; proven_once: one solver proves it; bounded: "
    "nothing proven, but best_known is within `certify` (relative) of best_bound; open: nothing certified; "
    "empty where `established` is disagree or infeasible",
    "best_known": "the best objective any method reached (exact or not), evaluator-verified",
    "best_known_method": "the method that reached it (exact/<solver> or the heuristic; the first in name order "
    "among equals); its solution is in results.parquet",
    "best_bound": "the best bound the exact runs prove (for max the smallest, for min the largest; an optimal "
    "run's bound is its objective): the optimum lies between best_known and best_bound",
    "bound_solvers": "the exact solvers whose runs give best_bound, separated by spaces",
    "certify": "the relative gap between best_known and best_bound that makes an instance bounded (the study's)",
}

#: The columns of ``optima.csv`` and what each means (the datasheet and the docs list them).
OPTIMA_COLUMNS: dict[str, str] = {
    "instance": "the instance id; its file is instances/<kind>/<instance>.json",
    "kind": "the problem kind (the instance's `problem` field)",
    "sense": "max or min",
    "optimum": "the proven optimal objective (empty when there is none)",
    "established": "proven: every exact solver that proved optimality agrees (within max(1e-6, mip_gap) relative); "
    "disagree: proofs contradict each other; infeasible: proven infeasible; none: nothing proven",
    "solvers": "the exact solvers whose proofs establish it, separated by spaces",
    "mip_gap": "the relative MIP gap the exact solvers were asked for",
    "best_heuristic": "the best objective a heuristic (or a solution made elsewhere) reached, evaluator-verified",
    "best_heuristic_method": "the method that reached it (the first in name order among equals)",
    "size": "the kind's size measure of the instance",
    "size_label": "what `size` counts (operators, items, tasks, ...)",
    "instance_sha256": "SHA-256 of the instance file (its canonical JSON)",
    **CERTIFICATE_COLUMNS,
}

#: The columns of ``results.parquet`` (one row per instance x method x repeat) and what each means.
RESULT_COLUMNS: dict[str, str] = {
    "problem": "the kind",
    "instance_id, study, instance_name": "the instance id, the grid's study that listed it, the instance's own name",
    "generator, params, param_<name>, seed": "how it was generated (params as canonical JSON, one column each)",
    "file": "the instance file the grid read (relative to the grid), for instances read from files",
    "instance_sha256": "SHA-256 of the instance's canonical JSON (the file in instances/)",
    "size, size_label": "the kind's size measure and what it counts",
    "method, solver, options, repeat": "`exact` and its solver, or a heuristic and its repeat index (its seed), "
    "or a method whose solutions were made elsewhere",
    "status": "optimal, feasible, no_solution (nothing feasible found: no proof), infeasible (a proof), "
    "time_limit or error",
    "objective, bound, solver_gap": "the objective (the evaluator's), the method's bound, the solver's own gap",
    "optimum, optimum_status, gap": "the instance's optimum, how it was established (as in optima.csv), and this "
    "row's relative gap to it (0 optimal, larger worse, for both senses)",
    "sense, best_known, best_known_method, best_bound, tier": "the instance's sense and its certificate, as in "
    "optima.csv",
    "gap_known, gap_bound": "this row's gap to the best known and to the best bound (same convention as `gap`): "
    "the true gap to the optimum lies between them",
    "runtime_s, time_limit": "wall seconds of the run and its limit",
    "verified": "the evaluator, which recomputes everything from the instance alone, agrees with the method",
    "message": "notes and error messages",
    "metrics, method_stats, solution": "the evaluator's metrics, the method's statistics, the solution, each as "
    "JSON text (their shapes differ between kinds)",
    "package_version, solver_version": "odrp-toolkit version of the worker, the solver's version",
    "warm_start, warm_start_objective": "for warm-started exact runs: the heuristic run that gave the start",
}


@dataclass
class ExportSummary:
    """What :func:`export` wrote."""

    dest: Path
    instances: int = 0
    rows: int = 0
    files: dict[str, str] = field(default_factory=dict)  # relative path -> SHA-256 of the bytes written

    def line(self) -> str:
        return (
            f"{self.dest}: {self.instances} instances, {self.rows} rows, {len(self.files) + 1} files "
            f"(check: cd {self.dest} && sha256sum -c {SUMS}, or odrp dataset verify {self.dest})"
        )


def _as_json_text(frame: Any) -> Any:
    """``frame`` with ``metrics`` and ``solution`` as canonical JSON text: their shapes differ from kind to
    kind, and one Parquet column holds one type."""
    frame = frame.copy()
    for name in dataset.STRUCT_COLUMNS:
        if name in frame:
            frame[name] = [None if v is None else json.dumps(v, sort_keys=True, default=str) for v in frame[name]]
    return frame


def export(out: str | Path, dest: str | Path, *, licence: str | None = None) -> ExportSummary:
    """Export the dataset ``out`` to the new folder ``dest`` (see the module docstring). ``licence``: the
    data's licence (None: the grid's ``licence:``, else :data:`DEFAULT_LICENCE`)."""
    out, dest = Path(out), Path(dest)
    verify.require_intact(out)
    manifest = dataset.read_manifest(out) or {}
    licence = licence or manifest.get("grid", {}).get("spec", {}).get("licence") or DEFAULT_LICENCE
    plugins = _plugin_files(out, manifest)
    _new_folder(dest)
    frame = dataset.read(out)
    if frame.empty:
        raise InputError(str(out), "", "a dataset with rows to export (it has none)")
    summary = ExportSummary(dest=dest, rows=len(frame))
    instances = _instance_files(out, frame)
    for relative, data in instances.items():
        summary.files[relative] = _write(dest, relative, data)
    summary.instances = len(instances)
    for kind in sorted(frame["problem"].unique()):
        schema = json.dumps(KINDS[kind].schema(), indent=1, sort_keys=True) + "\n"
        summary.files[f"{SCHEMAS}/{kind}.json"] = _write(dest, f"{SCHEMAS}/{kind}.json", schema.encode())
    gaps = _mip_gaps(manifest)
    certify = {study: value for study, (_, value) in study_settings(manifest).items()}
    optima = optima_rows(frame, instances, gaps, certify)
    summary.files[OPTIMA] = _write(dest, OPTIMA, _csv(optima, list(OPTIMA_COLUMNS)))
    table = pa.Table.from_pandas(_as_json_text(frame), preserve_index=False)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    summary.files[RESULTS] = _write(dest, RESULTS, sink.getvalue())
    grid_text = str(manifest.get("grid", {}).get("text", ""))
    summary.files[GRID] = _write(dest, GRID, grid_text.encode())
    for relative, data in plugins.items():
        summary.files[relative] = _write(dest, relative, data)
    sheet = datasheet(manifest, frame, optima, licence)
    summary.files[README] = _write(dest, README, sheet.encode())
    sums = "".join(f"{digest}  {name}\n" for name, digest in sorted(summary.files.items()))
    _write(dest, SUMS, sums.encode())
    return summary


def _new_folder(dest: Path) -> None:
    """``dest`` must not exist yet, or be an empty folder: an export never writes over files."""
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise InputError("command line", "--to", f"a new folder, got {str(dest)!r} (a file or a link)")
    if dest.exists() and any(dest.iterdir()):
        raise InputError("command line", "--to", f"a new or empty folder, got {str(dest)!r}, which holds files")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            "command line", "--to", f"a folder it can create, got {str(dest)!r} ({error.strerror})"
        ) from None


def _write(dest: Path, relative: str, data: bytes) -> str:
    digest, _ = dataset.write_atomic(dest, relative, lambda handle: handle.write(data))
    return digest


def _plugin_files(out: Path, manifest: dict[str, Any]) -> dict[str, bytes]:
    """The plugin sources the dataset keeps (``DIR/plugins/``), each checked against the manifest's SHA-256."""
    files: dict[str, bytes] = {}
    for record in manifest.get("grid", {}).get("plugins", []):
        relative = str(record.get("file", ""))
        parts = Path(relative).parts
        path = out / relative
        if len(parts) < 2 or parts[0] != PLUGINS or ".." in parts or not path.is_file() or path.is_symlink():
            raise InputError(str(path), "", f"the source of plugin {record.get('module')!r} the manifest names")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != record.get("sha256"):
            expected = f"the plugin source that ran (SHA-256 {str(record.get('sha256'))[:16]}... in the manifest)"
            raise InputError(str(path), "", expected)
        files[Path(relative).as_posix()] = data
    return files


def _instance_files(out: Path, frame: Any) -> dict[str, bytes]:
    """The bytes of every instance file the rows name, each checked against its ``instance_sha256``."""
    files: dict[str, bytes] = {}
    built = frame[frame["instance_sha256"].notna()].drop_duplicates("instance_id")
    for problem, instance_id, digest in zip(
        built["problem"], built["instance_id"], built["instance_sha256"], strict=True
    ):
        relative = dataset.instance_file(problem, instance_id)
        path = out / relative
        if not path.is_file() or path.is_symlink():
            raise InputError(
                str(path),
                "",
                "the instance file of its rows (datasets written before odrp bench stored instances cannot be "
                "exported: run the grid again into a new --out)",
            )
        data = read_bytes(path, "instance file")
        if hashlib.sha256(data).hexdigest() != digest:
            raise InputError(str(path), "", f"the instance its rows were computed on (SHA-256 {digest[:16]}...)")
        files[relative] = data
    return files


def _mip_gaps(manifest: dict[str, Any]) -> dict[str, float]:
    """The MIP gap of every study of the dataset's grid (1e-6 where it does not say)."""
    studies = manifest.get("grid", {}).get("spec", {}).get("studies", [])
    return {str(s.get("name")): float(s.get("mip_gap", 1e-6)) for s in studies if isinstance(s, dict)}


def _sense(kind: str, data: bytes | None) -> str:
    """An instance's sense: its own ``sense`` field where the kind has one (the GAP), else the kind's."""
    if data is not None:
        given = json.loads(data).get("sense")
        if given in ("min", "max"):
            return str(given)
    return KINDS[kind].sense


def optima_rows(
    frame: Any, instances: dict[str, bytes], gaps: dict[str, float], certify: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """One line per instance of ``frame`` (the dataset's rows): the columns of :data:`OPTIMA_COLUMNS`;
    ``certify``: each study's certify gap (:func:`odrp.bench.optimum.study_settings`)."""
    certify = certify or {}
    lines = []
    for (problem, instance_id), rows in frame.groupby(["problem", "instance_id"], sort=True):
        first = rows.iloc[0]
        relative = dataset.instance_file(problem, instance_id)
        sense = _sense(problem, instances.get(relative))
        mip_gap = gaps.get(str(first["study"]), 1e-6)
        optimum = _number(first["optimum"])
        status = str(first["optimum_status"])
        exact = rows[rows["method"] == "exact"]
        tolerance = max(VERIFY_RTOL, mip_gap)
        agreeing = [
            str(solver)
            for solver, state, ok, objective in zip(
                exact["solver"], exact["status"], exact["verified"], exact["objective"], strict=True
            )
            if (status == "infeasible" and state == "infeasible")
            or (
                state == "optimal"
                and bool(ok)
                and optimum is not None
                and _number(objective) is not None
                and agrees(float(objective), optimum, tolerance)
            )
        ]
        best, best_method = _best_heuristic(rows, sense)
        certificate = certificate_line(rows, sense, certify.get(str(first["study"]), DEFAULT_CERTIFY))
        lines.append(
            {
                "instance": instance_id,
                "kind": problem,
                "sense": sense,
                "optimum": optimum,
                "established": status,
                "solvers": " ".join(sorted(set(agreeing))),
                "mip_gap": mip_gap,
                "best_heuristic": best,
                "best_heuristic_method": best_method,
                "size": None if _number(first["size"]) is None else int(first["size"]),
                "size_label": first["size_label"],
                "instance_sha256": first["instance_sha256"],
                **certificate,
            }
        )
    return lines


def certificate_line(rows: Any, sense: str, certify: float) -> dict[str, Any]:
    """The certificate's columns of one instance's line in ``optima.csv`` (:data:`CERTIFICATE_COLUMNS`)."""
    first = rows.iloc[0]
    best_bound = _number(first.get("best_bound"))
    solvers = [
        str(row["solver"])
        for row in rows.to_dict("records")
        if best_bound is not None and (b := bound_of(row)) is not None and agrees(b, best_bound)
    ]
    tier = next((str(t) for t in rows["tier"].dropna()), None) if "tier" in rows else None
    return {
        "tier": tier,
        "best_known": _number(first.get("best_known")),
        "best_known_method": None if _number(first.get("best_known")) is None else first.get("best_known_method"),
        "best_bound": best_bound,
        "bound_solvers": " ".join(sorted(set(solvers))),
        "certify": certify,
    }


def _best_heuristic(rows: Any, sense: str) -> tuple[float | None, str | None]:
    found = [
        (float(objective), str(method))
        for method, objective, ok in zip(rows["method"], rows["objective"], rows["verified"], strict=True)
        if method != "exact" and bool(ok) and _number(objective) is not None
    ]
    if not found:
        return None, None
    best = (max if sense == "max" else min)(value for value, _ in found)
    return best, min(method for value, method in found if value == best)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number else number  # NaN is no number here


def _csv(lines: Iterable[dict[str, Any]], columns: list[str]) -> bytes:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for line in lines:
        writer.writerow(
            {k: "" if line[k] is None else (repr(line[k]) if isinstance(line[k], float) else line[k]) for k in columns}
        )
    return text.getvalue().encode()


def read_optima(dest: str | Path) -> list[dict[str, str]]:
    """The lines of an export's ``optima.csv`` as dicts of strings (bad input names the file)."""
    path = Path(dest) / OPTIMA
    try:
        lines = list(csv.DictReader(io.StringIO(read_text(path, "CSV file"), newline="")))
    except csv.Error as error:
        raise InputError(str(path), "", f"a readable CSV file ({type(error).__name__})") from None
    missing = [c for c in OPTIMA_COLUMNS if c not in CERTIFICATE_COLUMNS and lines and c not in lines[0]]
    if missing:
        raise InputError(str(path), missing[0], "a column of optima.csv (see the export's README.md)")
    return lines


# ---------------------------------------------------------------------------------- datasheet


def datasheet(manifest: dict[str, Any], frame: Any, optima: list[dict[str, Any]], licence: str) -> str:
    """The export's README.md: what it holds, where it came from, how to check it, what every column means."""
    versions = manifest.get("versions", {})
    machine = manifest.get("machine", {})
    runs = manifest.get("runs", [])
    grid = manifest.get("grid", {})
    lines = [
        "# Reference dataset of placement problems with proven optima",
        "",
        f"Exported {time.strftime('%Y-%m-%d %H:%M %Z')} by odrp-toolkit {versions.get('odrp-toolkit', '?')} "
        f"(`odrp dataset export`) from a dataset made by `odrp bench {grid.get('file', 'GRID')}`. "
        f"{len(optima)} instances of {frame['problem'].nunique()} problem kinds, {len(frame)} rows "
        "(one per instance, method and repeat).",
        "",
        "## What it holds",
        "",
        "| kind | instances | sizes | proven optima | infeasible | exact solvers | methods |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in sorted(frame["problem"].unique()):
        rows = frame[frame["problem"] == kind]
        mine = [o for o in optima if o["kind"] == kind]
        sizes = [o["size"] for o in mine if o["size"] is not None]
        label = next((o["size_label"] for o in mine if o["size_label"]), "size")
        span = f"{min(sizes)}-{max(sizes)} {label}" if sizes else "-"
        solvers = " ".join(sorted({str(s) for s in rows.loc[rows["method"] == "exact", "solver"].dropna()}))
        methods = " ".join(sorted(set(rows.loc[rows["method"] != "exact", "method"])))
        proven = sum(o["established"] == "proven" for o in mine)
        infeasible = sum(o["established"] == "infeasible" for o in mine)
        lines.append(f"| {kind} | {len(mine)} | {span} | {proven} | {infeasible} | {solvers} | {methods} |")
    two = sum(o["established"] == "proven" and len(o["solvers"].split()) >= 2 for o in optima)
    lines += [
        "",
        f"{two} of the {len(optima)} optima are proven by two or more exact solvers that agree.",
        "",
        "## Files",
        "",
        "- `instances/<kind>/<instance>.json`: every instance as it was solved, in the kind's documented JSON "
        "format (`schemas/<kind>.json` is its JSON Schema; ## The problems below gives each kind's model). "
        "Each file is the instance's canonical JSON: its SHA-256 is the `instance_sha256` of its rows.",
        "- `schemas/<kind>.json`: the JSON Schema of each kind's instance files.",
        "- `optima.csv`: one line per instance (columns below).",
        "- `results.parquet`: every row of the benchmark (columns below); any Parquet reader opens it "
        "(`pandas.read_parquet`).",
        "- `grid.yaml`: the grid that made the dataset (`odrp bench grid.yaml --out DIR` runs its generated "
        "studies again; `odrp import dataset` writes a grid over the instance files here).",
        f"- `{SUMS}`: the SHA-256 of every other file: `sha256sum -c {SUMS}` checks them.",
        "",
        "## Checking it",
        "",
        "```bash",
        f"sha256sum -c {SUMS}                          # every file as it was exported",
        "odrp dataset verify .                            # the same, with odrp-toolkit",
        "odrp dataset verify . --resolve 10               # re-prove 10 sampled optima with another solver",
        "odrp import dataset . --out mine                 # the instances and a grid that runs them again",
        "```",
        "",
        "Every optimum can also be checked without the toolkit: each instance file is self-contained, and the "
        "model of each kind is written out below (## The problems), as on its page of the toolkit's documentation "
        "(docs/kinds/ in the toolkit's repository, ## Citing).",
        "",
        *problems_section(sorted(frame["problem"].unique())),
        "## Columns of optima.csv",
        "",
        "| column | meaning |",
        "|---|---|",
        *(f"| `{name}` | {meaning} |" for name, meaning in OPTIMA_COLUMNS.items()),
        "",
        "## Columns of results.parquet",
        "",
        "| columns | meaning |",
        "|---|---|",
        *(f"| `{name}` | {meaning} |" for name, meaning in RESULT_COLUMNS.items()),
        "",
        "## Provenance: the studies of the grid",
        "",
        "| study | kind | instances from | parameters | seeds | exact | methods | time limit s | repeats |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for study in grid.get("spec", {}).get("studies", []):
        origin = (
            f"generator `{study.get('generator')}`" if study.get("generator") else f"files `{study.get('instances')}`"
        )
        params = json.dumps(study.get("params") or {}, sort_keys=True)
        lines.append(
            f"| {study.get('name')} | {study.get('problem')} | {origin} | `{params}` | {study.get('seeds') or '-'} "
            f"| {' '.join(study.get('exact') or []) or 'default'} | {' '.join(study.get('methods') or [])} "
            f"| {study.get('time_limit') or '-'} | {study.get('repeats', 1)} |"
        )
    lines += [
        "",
        "Seeds given as a count n mean seeds 0..n-1. The generators are the toolkit's "
        f"(odrp-toolkit {versions.get('odrp-toolkit', '?')}); the instance files make the dataset independent of them.",
        "",
        "## Runs, versions, machine",
        "",
        "| run started | finished | status | master | instances run | wall s |",
        "|---|---|---|---|---|---|",
        *(
            f"| {r.get('started')} | {r.get('finished')} | {r.get('status')} | {r.get('master')} "
            f"| {r.get('ran')} | {r.get('wall_s')} |"
            for r in runs
        ),
        "",
        "| software | version |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in versions.items()),
        "",
        "| machine (the driver of the runs) | |",
        "|---|---|",
        *(f"| {name} | {value} |" for name, value in machine.items()),
        "",
        *citation_section(),
        *licence_section(licence),
    ]
    return "\n".join(lines)


def problems_section(kinds: list[str]) -> list[str]:
    """``## The problems``: each kind's model (objective, constraints) and its solution format, as the kind
    declares them (:attr:`odrp.core.kind.ProblemKind.model`, shown on the kind's documentation page too)."""
    lines = [
        "## The problems",
        "",
        "Each kind's model as the toolkit's documentation states it (equations in LaTeX), and the format of "
        "its solutions (the `solution` column of results.parquet; `odrp evaluate INSTANCE SOLUTION` scores one). "
        "The instance fields are in `schemas/<kind>.json`.",
        "",
    ]
    for name in kinds:
        kind = KINDS[name]
        lines += [
            f"### `{name}`: {kind.title}",
            "",
            kind.model_markdown.rstrip(),
            "",
            f"Solution: `{kind.solution_format}`",
            "",
        ]
    return lines


def citation_section() -> list[str]:
    """``## Citing``: the toolkit's CITATION.cff, its repository and the dataset's own reference."""
    cff = citation()
    url = cff.get("repository-code") or cff.get("url") or project_url()
    lines = [
        "## Citing",
        "",
        "If you use this dataset, cite the toolkit that made it (its CITATION.cff, below) and name the dataset by "
        "the SHA-256 of its SHA256SUMS file, which pins every file.",
        "",
        f"- the toolkit: odrp-toolkit, {'repository ' + url if url else 'its repository (no URL in CITATION.cff)'}",
        "",
    ]
    text = cff.get("text")
    if text:
        lines += ["```yaml", str(text).rstrip(), "```", ""]
    return lines


def licence_section(licence: str) -> list[str]:
    """``## Licence``: the data's licence (the grid's ``licence:`` or ``--licence``), apart from the code's."""
    return [
        "## Licence",
        "",
        f"The data of this export (instances, optima, results, this datasheet) are licensed under {licence}. "
        "The toolkit's code, and the plugin sources in plugins/, keep their own licences (odrp-toolkit: MIT).",
        "",
    ]


def citation() -> dict[str, Any]:
    """The toolkit's ``CITATION.cff`` (its fields and, as ``text``, the file) when it runs from its source
    tree; an empty mapping otherwise."""
    import odrp

    path = Path(odrp.__file__).resolve().parent.parent / "CITATION.cff"
    try:
        text = path.read_text()
        fields = yaml.safe_load(text)
    except (OSError, yaml.YAMLError):
        return {}
    return {**fields, "text": text} if isinstance(fields, dict) else {}


def project_url() -> str | None:
    """The repository URL of the installed distribution's metadata (``[project.urls]``), if it has one."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("odrp-toolkit").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source", "homepage", "code"):
            return url.strip()
    return None


# ---------------------------------------------------------------------------------- import


#: The keys of a study that give way to the instance files in an imported grid.
_GIVE_WAY = ("generator", "params", "seeds", "instances", "solutions")


def import_export(dest: str | Path, out: str | Path) -> list[Path]:
    """Write ``out/grid.yaml`` with the studies of the export ``dest`` over copies of its instance files
    (see the module docstring); the export is checked against ``SHA256SUMS`` first, and the written grid
    is loaded once. Returns the files written, the grid last."""
    from odrp.bench.grid import load_grid  # the grid loader imports the registry's plugins

    dest, out = Path(dest), Path(out)
    check = verify.require_intact_export(dest)
    columns = ["problem", "instance_id", "study", "method", "solver", "repeat", "time_limit", "solution"]
    results = pq.read_table(dest / RESULTS, columns=columns).to_pandas()
    original = _original_grid(dest)
    written: list[Path] = []
    for relative in sorted(check.files):
        if Path(relative).parts[0] == PLUGINS:
            _write(out, relative, (dest / relative).read_bytes())
            written.append(out / relative)
    notes: list[str] = []
    plugins = _loadable_plugins(original.get("plugins") or [], out, notes)
    known = heuristics()
    named = {str(study.get("name")): study for study in original.get("studies") or [] if isinstance(study, dict)}
    order = [name for name in named if name in set(results["study"])]
    order += sorted(set(results["study"]) - set(order))
    folders: set[str] = set()
    studies = []
    for name in order:
        rows = results[results["study"] == name]
        kind = str(rows["problem"].iloc[0])
        folder = _folder(name, folders)
        files = [dataset.instance_file(kind, i) for i in sorted(set(rows["instance_id"]))]
        files = [relative for relative in files if relative in check.files]  # an instance never built has none
        if not files:
            notes.append(f"study {name!r} (no instance of it could be built)")
            continue
        for relative in files:
            target = f"{dataset.INSTANCES}/{folder}/{Path(relative).name}"
            _write(out, target, (dest / relative).read_bytes())
            written.append(out / target)
        study = _imported_study(name, kind, folder, named.get(name), rows, known, notes)
        solutions = _solution_files(out, folder, named.get(name), rows, written)
        if solutions:
            study["solutions"] = solutions
        studies.append(study)
    for name in named:
        if name not in order:
            notes.append(f"study {name!r} has no rows of its own (its instances ran under another study)")
    header = (
        f"# The studies of the export {dest}, over its instance files (odrp import dataset).\n"
        f"#   odrp bench {out / GRID} --out DIR\n" + "".join(f"# Left out: {note}\n" for note in notes)
    )
    spec: dict[str, Any] = {"plugins": plugins} if plugins else {}
    if original.get("licence"):
        spec["licence"] = original["licence"]
    spec["studies"] = studies
    _write(out, GRID, (header + yaml.safe_dump(spec, sort_keys=False)).encode())
    written.append(out / GRID)
    load_grid(out / GRID)  # the grid runs: its files, methods, options and plugins are known here
    return written


def _original_grid(dest: Path) -> dict[str, Any]:
    """The export's ``grid.yaml`` as a mapping (empty when it is empty or not a grid)."""
    try:
        data = yaml.safe_load((dest / GRID).read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _loadable_plugins(modules: list[Any], out: Path, notes: list[str]) -> list[str]:
    """The plugins that load from ``out/plugins`` (where the export's sources went) or ``sys.path``."""
    kept = []
    for module in (str(m) for m in modules):
        try:
            load_plugins([module], str(out / GRID), beside=out)
        except InputError as error:
            notes.append(f"plugin {module} ({error.expected}) and its methods")
            continue
        kept.append(module)
    return kept


def _folder(study: str, taken: set[str]) -> str:
    """A folder name for a study's instances: its name with other characters as ``_``, made unique."""
    base = "".join(c if c.isalnum() or c in "-_." else "_" for c in study).strip(".") or "study"
    folder, k = base, 2
    while folder in taken:
        folder, k = f"{base}-{k}", k + 1
    taken.add(folder)
    return folder


def _imported_study(
    name: str,
    kind: str,
    folder: str,
    given: dict[str, Any] | None,
    rows: Any,
    known: dict[str, Any],
    notes: list[str],
) -> dict[str, Any]:
    """One study of the imported grid: the export's own (minus the keys of :data:`_GIVE_WAY`), or, for a
    study the export's grid does not hold, what its rows show (solvers, methods, repeats, time limit)."""
    study: dict[str, Any] = {"name": name, "problem": kind, "instances": f"{dataset.INSTANCES}/{folder}/*.json"}
    if given is not None:
        study.update((key, value) for key, value in given.items() if key not in (*_GIVE_WAY, *study))
    else:
        exact = rows[rows["method"] == "exact"]
        study["exact"] = sorted({str(s) for s in exact["solver"].dropna()} & set(KINDS[kind].solvers))
        study["methods"] = sorted({str(m) for m in rows.loc[rows["method"] != "exact", "method"]} & set(known))
        repeats = rows.loc[rows["method"].isin(study["methods"]), "repeat"]
        if len(repeats) and int(repeats.max()) > 0:
            study["repeats"] = int(repeats.max()) + 1
        limits = rows["time_limit"].dropna()
        if len(limits):
            study["time_limit"] = float(limits.max())
    methods = [str(m) for m in study.get("methods") or []]
    unknown = [m for m in methods if m not in known or kind not in known[m].kinds]
    if unknown:
        notes.append(f"study {name!r}: methods {', '.join(unknown)} (no plugin of this export declares them)")
        study["methods"] = [m for m in methods if m not in unknown]
        study["options"] = {m: o for m, o in (study.get("options") or {}).items() if m not in unknown}
        if study.get("warm_start") and not study["methods"]:
            del study["warm_start"]
    return study


def _solution_files(
    out: Path, folder: str, given: dict[str, Any] | None, rows: Any, written: list[Path]
) -> list[dict[str, str]]:
    """The study's ``solutions:`` back as files: the solution of each of its rows of such a method."""
    raw = (given or {}).get("solutions") or []
    methods = [str(entry.get("method")) for entry in (raw if isinstance(raw, list) else [raw])]
    sources = []
    for method in methods:
        mine = rows[(rows["method"] == method) & rows["solution"].notna()]
        for instance_id, text in zip(mine["instance_id"], mine["solution"], strict=True):
            target = f"solutions/{folder}/{method}/{instance_id}.json"
            _write(out, target, (str(text) + "\n").encode())
            written.append(out / target)
        if len(mine):
            sources.append({"method": method, "path": f"solutions/{folder}/{method}/*.json"})
    return sources
