"""The Result envelope that every method returns and that ``odrp solve --json`` prints."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["optimal", "feasible", "no_solution", "infeasible", "time_limit", "error"]
"""What a run established:

- ``optimal``: a solution proven optimal (within the MIP gap asked for);
- ``feasible``: a solution, not proven optimal;
- ``no_solution``: a heuristic that found no feasible solution (none at all, or one the evaluator
  rejects, kept for inspection): it proves nothing about the instance;
- ``infeasible``: a proof that the instance has no feasible solution (an exact method, or a
  heuristic that enumerated everything or bounds the objective at infinity);
- ``time_limit``: the limit came first (with the incumbent and bound found so far, if any);
- ``error``: the method failed (its message says how).
"""
Sense = Literal["max", "min"]

#: The tolerance of the evaluator rule: a method's objective and the evaluator's agree when
#: |a - b| <= VERIFY_RTOL * max(1, |a|, |b|).
VERIFY_RTOL = 1e-6


@dataclass
class Result:
    """What a method (exact or heuristic) returns, after the evaluator has re-scored it."""

    problem: str
    instance: str
    method: str
    solver: str | None
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    verified: bool
    solution: dict[str, Any] | None
    metrics: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return _json_safe(asdict(self))

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)


def agrees(a: float, b: float, rtol: float = VERIFY_RTOL) -> bool:
    """True when two objective values agree within ``rtol`` (relative, with unit floor)."""
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def relative_gap(objective: float | None, bound: float | None, sense: Sense) -> float | None:
    """Relative gap between an incumbent and a proven bound, 0 when they meet, never negative.

    gap = (bound - objective) / max(|objective|, 1e-10) for a maximisation, the mirror for a
    minimisation; the same definition HiGHS uses for its relative MIP gap.
    """
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    diff = bound - objective if sense == "max" else objective - bound
    return max(0.0, diff) / max(abs(objective), 1e-10)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value
