"""The optimum of an instance from its exact rows, and every row's gap to it.

**Optimum.** The best objective among the instance's exact rows that are ``status: optimal`` and
``verified`` (the evaluator re-scored the solution and agrees): the largest for a maximisation, the
smallest for a minimisation. Its ``optimum_status`` says how much to trust it:

- ``proven``: at least one exact solver proved optimality, and every proof agrees with the others
  within ``max(1e-6, mip_gap)`` relative (``odrp.core.result.agrees``);
- ``disagree``: proofs contradict each other (two "optimal" objectives farther apart than that, or
  one solver proves infeasibility while another finds a verified solution). The best verified
  proven objective is still used: it is feasible by the evaluator, so a proof that claims less (for
  a maximisation) is wrong. Every row of the instance says so in its ``message``; it is a bug to
  report, never to average away;
- ``infeasible``: an exact solver proved the instance infeasible and no method found a verified
  solution; there is no optimum and no gap;
- ``none``: no exact solver proved anything (time limit, error, or no exact solver in the study);
  there is no optimum and no gap.

**Gap.** Relative to the optimum and sign-normalised so that 0 is optimal and larger is worse for
both senses:

    max:  gap = (optimum - objective) / |optimum|        min:  gap = (objective - optimum) / |optimum|

An objective that agrees with the optimum (``agrees``: within 1e-6 relative, 1e-6 absolute below 1)
has gap exactly 0. **Zero optimum**: no relative gap exists, so the gap is 0 when the objective
agrees with 0 (|objective| <= 1e-6) and +inf otherwise. An objective better than the optimum gives a
negative gap, kept as it is (the exact side is wrong there). Only verified objectives get a gap:
a row without an objective (error, infeasible, no solution) or whose objective the evaluator
contradicts has ``gap = None``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from odrp.core.result import VERIFY_RTOL, Sense, agrees

OptimumStatus = Literal["proven", "disagree", "infeasible", "none"]


@dataclass(frozen=True)
class Optimum:
    value: float | None
    status: OptimumStatus
    note: str = ""


def best_proven(rows: Iterable[Mapping[str, Any]], sense: Sense, mip_gap: float = 0.0) -> Optimum:
    """The optimum of one instance from its rows (keys ``method, status, objective, verified``)."""
    rows = list(rows)
    exact = [r for r in rows if r["method"] == "exact"]
    proofs = [float(r["objective"]) for r in exact if _proves_optimality(r)]
    claims_infeasible = any(r["status"] == "infeasible" for r in exact)
    feasible_found = any(r["verified"] and r["objective"] is not None for r in rows)
    tolerance = max(VERIFY_RTOL, mip_gap)
    if proofs:
        best = max(proofs) if sense == "max" else min(proofs)
        spread = [p for p in proofs if not agrees(p, best, tolerance)]
        if spread:
            return Optimum(best, "disagree", f"exact solvers disagree: proven optima {sorted(set(proofs))}")
        if claims_infeasible:
            return Optimum(best, "disagree", "an exact solver claims infeasible, another proves an optimum")
        return Optimum(best, "proven")
    if claims_infeasible:
        if feasible_found:
            return Optimum(None, "disagree", "an exact solver claims infeasible, but a verified solution exists")
        return Optimum(None, "infeasible")
    return Optimum(None, "none")


def _proves_optimality(row: Mapping[str, Any]) -> bool:
    return row["status"] == "optimal" and bool(row["verified"]) and row["objective"] is not None


def gap_to_optimum(objective: float | None, optimum: float | None, sense: Sense) -> float | None:
    """Relative, sign-normalised gap of ``objective`` to ``optimum`` (0 optimal, larger worse)."""
    if objective is None or optimum is None:
        return None
    if agrees(objective, optimum):
        return 0.0
    worse_by = optimum - objective if sense == "max" else objective - optimum
    if optimum == 0:
        return math.copysign(math.inf, worse_by)
    return worse_by / abs(optimum)
