"""``odrp dataset verify DEST --resolve K``: re-prove K optima, or re-check K bounds, of an export with
another solver.

K instances are drawn (with a seed) from the export's ``optima.csv`` among those with an optimum, a
proof of infeasibility, or a certificate of tier ``bounded`` (:mod:`odrp.bench.optimum`). Each is read
from its file alone (``instances/<kind>/<instance>.json``), validated as its kind, and solved exactly
under the time limit by a solver of the kind that did not produce what is checked
(:func:`second_solver`; SCIP first wherever the kind lists it, so a solver of another lineage than
HiGHS, CBC and CP-SAT gives the second opinion once it is there).

**An optimum** (``established: proven``) is re-proved: the new proof must agree with the recorded one,
the same optimum within the evaluator's tolerance (max(1e-6, the instance's ``mip_gap``) relative, by
:func:`odrp.core.result.agrees`) with a solution the evaluator verifies, or infeasible again. A run
that proves nothing within the time limit is a finding too: nothing was re-proved.

**A bound** (``tier: bounded``) cannot be expected to be re-proved in a short run: the recorded one
may have taken a long one. What is checked is that the two certificates are consistent. The optimum
lies between the recorded best known and best bound, and also between the new run's verified
incumbent and its bound (an optimal run's bound is its objective), so the two intervals must meet
(within that tolerance): for a maximisation the new bound must be at least the recorded best known
(else one of them is wrong), and the new incumbent at most the recorded best bound (else the recorded
bound is wrong); the mirror for a minimisation. A claim of infeasibility contradicts the best known. A
run with neither a bound nor an incumbent checks nothing and is a finding. The line says whether the
new run certifies the best known on its own too (its bound within the export's ``certify`` gap).
Then the best known solution itself is re-scored: its row in ``results.parquet`` (the method
``best_known_method``, verified, with that objective) gives the solution, which the kind's evaluator
must find feasible with the recorded objective (within 1e-6 relative).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odrp.bench.export import RESULTS, read_optima
from odrp.bench.optimum import gap_to_bound
from odrp.bench.verify import Finding
from odrp.core.errors import InputError
from odrp.core.result import VERIFY_RTOL, agrees
from odrp.core.solvers import usable
from odrp.io import load_instance
from odrp.registry import KINDS
from odrp.run import run_within_limits

RESOLVABLE = ("proven", "infeasible")
"""The ``established`` values whose optimum (or infeasibility) is re-proved."""

PREFERRED = ("scip",)
"""Solvers chosen first for a second opinion, where the kind lists them and they did not produce what
is checked: another lineage than HiGHS, CBC and CP-SAT."""


@dataclass(frozen=True)
class Resolved:
    """One check: the instance file, the solver used, what it found, and a finding if it disagrees."""

    file: str
    solver: str
    recorded: bool  # the export names this solver too: every solver of the kind was used
    status: str
    objective: float | None
    runtime_s: float
    finding: Finding | None
    bound: float | None = None
    note: str = ""  # a bound's check: what the new run showed

    @property
    def kind(self) -> str:
        """``optimum`` (re-proved) or ``bound`` (re-checked)."""
        return "bound" if self.note else "optimum"

    def line(self, dest: str | Path) -> str:
        if self.finding is not None:
            return self.finding.line(dest)
        again = " (also recorded: the export used every solver of the kind)" if self.recorded else ""
        if self.note:
            return f"{Path(dest) / self.file}: {self.solver} {self.note} ({self.runtime_s:.1f} s){again}"
        value = "infeasible" if self.status == "infeasible" else f"{self.objective:.10g}"
        return f"{Path(dest) / self.file}: {self.solver} proves {value} again ({self.runtime_s:.1f} s){again}"


def second_solver(kind: str, recorded: list[str]) -> str:
    """A solver of ``kind`` not in ``recorded`` (one of :data:`PREFERRED` first, then the kind's order),
    else one other than ``recorded[0]``; only solvers that run here (a commercial solver needs its package
    and licence)."""
    solvers = [s for s in KINDS[kind].solvers if usable(s)]
    fresh = sorted((s for s in solvers if s not in recorded), key=lambda s: s not in PREFERRED)
    if fresh:
        return fresh[0]
    return next(s for s in solvers if not recorded or s != recorded[0])


def resolve(dest: str | Path, count: int, *, seed: int = 0, time_limit: float | None = 60.0) -> list[Resolved]:
    """Check ``count`` sampled optima and bounds of the export ``dest`` (all of them when it has fewer)."""
    dest = Path(dest)
    if count < 1:
        raise InputError("command line", "--resolve", f"a number of instances >= 1, got {count}")
    lines = [line for line in read_optima(dest) if line["established"] in RESOLVABLE or is_bounded(line)]
    chosen = sorted(random.Random(seed).sample(lines, min(count, len(lines))), key=lambda x: x["instance"])
    results = _solutions(dest, [line["instance"] for line in chosen if is_bounded(line)])
    return [
        _recheck_bound(dest, line, time_limit, results) if is_bounded(line) else _resolve_one(dest, line, time_limit)
        for line in chosen
    ]


def is_bounded(line: dict[str, str]) -> bool:
    """An ``optima.csv`` line of tier ``bounded`` (an export made before tiers has none)."""
    return line.get("tier") == "bounded" and line["established"] not in RESOLVABLE


def summary_line(resolved: list[Resolved]) -> str:
    """``3 optima re-proved by a second solver`` (and ``, 1 bound re-checked``)."""
    optima = sum(item.kind == "optimum" for item in resolved)
    bounds = len(resolved) - optima
    parts = [f"{optima} {'optimum' if optima == 1 else 'optima'} re-proved"] if optima or not bounds else []
    if bounds:
        parts.append(f"{bounds} {'bound' if bounds == 1 else 'bounds'} re-checked")
    return " and ".join(parts) + " by a second solver"


def _kind_and_file(dest: Path, line: dict[str, str]) -> tuple[str, str]:
    kind_name = line["kind"]
    if kind_name not in KINDS:
        raise InputError(str(dest / "optima.csv"), "kind", f"one of {', '.join(KINDS)}, got {kind_name!r}")
    return kind_name, f"instances/{kind_name}/{line['instance']}.json"


def _resolve_one(dest: Path, line: dict[str, str], time_limit: float | None) -> Resolved:
    kind_name, file = _kind_and_file(dest, line)
    solver = second_solver(kind_name, line["solvers"].split())
    kind, instance = load_instance(dest / file)
    mip_gap = float(line["mip_gap"] or VERIFY_RTOL)
    result = run_within_limits(kind, instance, "exact", solver=solver, time_limit=time_limit, mip_gap=mip_gap)
    recorded = line["established"]
    finding = None
    if recorded == "infeasible":
        if result.status != "infeasible":
            finding = Finding(file, "not re-proved", f"infeasible in optima.csv; {solver} finds {result.status}")
    else:
        optimum = float(line["optimum"])
        proved = result.status == "optimal" and result.verified and result.objective is not None
        if not proved:
            detail = f"optimum {optimum:.10g} in optima.csv; {solver} proves nothing ({result.status}"
            finding = Finding(
                file, "not re-proved", f"{detail}{': ' + result.message[:200] if result.message else ''})"
            )
        elif not agrees(float(result.objective), optimum, max(VERIFY_RTOL, mip_gap)):
            detail = f"optimum {optimum:.10g} in optima.csv, {solver} proves {result.objective:.10g}"
            finding = Finding(file, "mismatched", detail)
    recorded_by = solver in line["solvers"].split()
    return Resolved(file, solver, recorded_by, result.status, result.objective, result.runtime_s, finding)


def _producers(line: dict[str, str]) -> list[str]:
    """The exact solvers that produced a bounded line's certificate: its bound's, and its best known's."""
    solvers = line.get("bound_solvers", "").split()
    method = line.get("best_known_method") or ""
    if method.startswith("exact/"):
        solvers.append(method.removeprefix("exact/"))
    return sorted(set(solvers))


def _recheck_bound(
    dest: Path, line: dict[str, str], time_limit: float | None, results: dict[str, list[dict[str, Any]]]
) -> Resolved:
    kind_name, file = _kind_and_file(dest, line)
    producers = _producers(line)
    solver = second_solver(kind_name, producers)
    kind, instance = load_instance(dest / file)
    mip_gap = float(line["mip_gap"] or VERIFY_RTOL)
    tolerance = max(VERIFY_RTOL, mip_gap)
    sense = line["sense"]
    known, bound = float(line["best_known"]), float(line["best_bound"])
    result = run_within_limits(kind, instance, "exact", solver=solver, time_limit=time_limit, mip_gap=mip_gap)
    incumbent = float(result.objective) if result.verified and result.objective is not None else None
    new_bound = incumbent if result.status == "optimal" and incumbent is not None else result.bound
    recorded = f"best known {known:.10g} and best bound {bound:.10g} in optima.csv"

    def beyond(a: float, b: float) -> bool:  # a better than b, farther than the tolerance
        return (a > b if sense == "max" else a < b) and not agrees(a, b, tolerance)

    finding = None
    if result.status == "infeasible":
        finding = Finding(file, "mismatched", f"{recorded}; {solver} claims the instance infeasible")
    elif incumbent is not None and beyond(incumbent, bound):
        detail = f"{recorded}; {solver} finds a verified solution of {incumbent:.10g}, beyond the bound"
        finding = Finding(file, "mismatched", detail)
    elif new_bound is not None and beyond(known, new_bound):
        detail = f"{recorded}; {solver} proves a bound of {new_bound:.10g}, which excludes the best known"
        finding = Finding(file, "mismatched", detail)
    elif new_bound is None and incumbent is None:
        message = f": {result.message[:200]}" if result.message else ""
        detail = f"{recorded}; {solver} gives neither a bound nor a solution ({result.status}{message})"
        finding = Finding(file, "not re-checked", detail)
    finding = finding or _rescore(dest, file, line, kind, instance, results.get(line["instance"], []))
    note = ""
    if finding is None:
        parts = [f"bound {new_bound:.10g}" if new_bound is not None else "no bound"]
        if incumbent is not None:
            parts.append(f"incumbent {incumbent:.10g}")
        width = gap_to_bound(known, known, new_bound, sense)  # type: ignore[arg-type]
        alone = width is not None and width <= float(line.get("certify") or 0)
        note = (
            f"{' and '.join(parts)} agree with the {recorded.removesuffix(' in optima.csv')}"
            f"{' and certify the best known on their own' if alone else ''}; the best known solution "
            f"({line['best_known_method']}) re-scored by the evaluator"
        )
    recorded_by = solver in producers
    return Resolved(file, solver, recorded_by, result.status, incumbent, result.runtime_s, finding, new_bound, note)


def _solutions(dest: Path, instances: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The rows of ``results.parquet`` of ``instances`` (method, solver, verified, objective, solution)."""
    if not instances:
        return {}
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = dest / RESULTS
    columns = ["instance_id", "method", "solver", "verified", "objective", "solution"]
    try:
        table = pq.read_table(path, columns=columns)
    except Exception as error:  # a Parquet file the export's checksums vouch for, but not this toolkit's
        raise InputError(str(path), "", f"a Parquet file with the columns {', '.join(columns)} ({error})") from None
    table = table.filter(pc.is_in(table.column("instance_id"), value_set=pc.cast(instances, table.schema[0].type)))
    out: dict[str, list[dict[str, Any]]] = {}
    for row in table.to_pylist():
        out.setdefault(row["instance_id"], []).append(row)
    return out


def _rescore(
    dest: Path, file: str, line: dict[str, str], kind: Any, instance: Any, rows: list[dict[str, Any]]
) -> Finding | None:
    """The best known solution (from ``results.parquet``) through the kind's evaluator; a finding if it
    is missing, infeasible, or scores otherwise than ``best_known``."""
    known, method = float(line["best_known"]), line["best_known_method"]
    for row in rows:
        label = f"exact/{row['solver']}" if row["method"] == "exact" else row["method"]
        objective = row["objective"]
        if label != method or not row["verified"] or objective is None or not agrees(float(objective), known):
            continue
        if row["solution"] is None:
            continue
        solution = json.loads(row["solution"]) if isinstance(row["solution"], str) else row["solution"]
        evaluation = kind.evaluate(instance, solution, f"{dest / RESULTS} ({line['instance']}, {method})")
        if not evaluation.feasible or evaluation.objective is None:
            detail = f"best known {known:.10g} ({method}): the evaluator finds its solution infeasible"
            return Finding(file, "mismatched", detail)
        if not agrees(float(evaluation.objective), known):
            detail = (
                f"best known {known:.10g} ({method}): the evaluator scores its solution {evaluation.objective:.10g}"
            )
            return Finding(file, "mismatched", detail)
        return None
    detail = f"best known {known:.10g} ({method}): no verified solution of that method with that objective in {RESULTS}"
    return Finding(file, "not re-scored", detail)
