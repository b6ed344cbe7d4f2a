"""``odrp dataset verify DEST --resolve K``: re-prove K optima of an export with a second solver.

K instances are drawn (with a seed) from the export's ``optima.csv`` among those with an optimum or a
proof of infeasibility. Each is read from its file alone (``instances/<kind>/<instance>.json``),
validated as its kind, and solved exactly by a solver of the kind that runs here and is **not** among the
solvers the export records for it (``solvers`` in ``optima.csv``); when the export used every such
solver, by one other than the first it names. The new proof must agree with the recorded one: the same
optimum within the evaluator's tolerance (max(1e-6, the instance's ``mip_gap``) relative, by
:func:`odrp.core.result.agrees`) with a solution the evaluator verifies, or infeasible again. A run
that proves nothing within the time limit is a finding too: nothing was re-proved.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from odrp.bench.export import read_optima
from odrp.bench.verify import Finding
from odrp.core.errors import InputError
from odrp.core.result import VERIFY_RTOL, agrees
from odrp.core.solvers import usable
from odrp.io import load_instance
from odrp.registry import KINDS
from odrp.run import run_within_limits

RESOLVABLE = ("proven", "infeasible")


@dataclass(frozen=True)
class Resolved:
    """One re-proof: the instance file, the solver used, what it found, and a finding if it disagrees."""

    file: str
    solver: str
    recorded: bool  # the export names this solver too: every solver of the kind was used
    status: str
    objective: float | None
    runtime_s: float
    finding: Finding | None

    def line(self, dest: str | Path) -> str:
        if self.finding is not None:
            return self.finding.line(dest)
        value = "infeasible" if self.status == "infeasible" else f"{self.objective:.10g}"
        again = " (also recorded: the export used every solver of the kind)" if self.recorded else ""
        return f"{Path(dest) / self.file}: {self.solver} proves {value} again ({self.runtime_s:.1f} s){again}"


def second_solver(kind: str, recorded: list[str]) -> str:
    """A solver of ``kind`` not in ``recorded`` (the first of the kind's list), else one other than ``recorded[0]``;
    only solvers that run here (a commercial solver needs its package and licence)."""
    solvers = [s for s in KINDS[kind].solvers if usable(s)]
    fresh = [s for s in solvers if s not in recorded]
    if fresh:
        return fresh[0]
    return next(s for s in solvers if not recorded or s != recorded[0])


def resolve(dest: str | Path, count: int, *, seed: int = 0, time_limit: float | None = 60.0) -> list[Resolved]:
    """Re-prove ``count`` sampled optima of the export ``dest`` (all of them when it has fewer)."""
    dest = Path(dest)
    if count < 1:
        raise InputError("command line", "--resolve", f"a number of instances >= 1, got {count}")
    lines = [line for line in read_optima(dest) if line["established"] in RESOLVABLE]
    chosen = random.Random(seed).sample(lines, min(count, len(lines)))
    return [_resolve_one(dest, line, time_limit) for line in sorted(chosen, key=lambda x: x["instance"])]


def _resolve_one(dest: Path, line: dict[str, str], time_limit: float | None) -> Resolved:
    kind_name = line["kind"]
    if kind_name not in KINDS:
        raise InputError(str(dest / "optima.csv"), "kind", f"one of {', '.join(KINDS)}, got {kind_name!r}")
    file = f"instances/{kind_name}/{line['instance']}.json"
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
