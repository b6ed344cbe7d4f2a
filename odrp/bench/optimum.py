"""The optimum of an instance from its exact rows, its certificate past the frontier, and every row's gaps.

**Optimum.** The best objective among the instance's exact rows that are ``status: optimal`` and
``verified`` (the evaluator re-scored the solution and agrees): the largest for a maximisation, the
smallest for a minimisation. Its ``optimum_status`` says how much to trust it:

- ``proven``: at least one exact solver proved optimality, and every proof agrees with the others
  within ``max(1e-6, mip_gap)`` relative (``odrp.core.result.agrees``);
- ``disagree``: the exact side contradicts itself or a verified solution: two "optimal" objectives
  farther apart than that; one solver proves infeasibility while another finds a verified solution;
  or a verified solution (of any method) is better than the bound of an exact run, a proof's
  included, by more than that tolerance (:func:`certify`). The best verified proven objective is
  still used: it is feasible by the evaluator, so a proof that claims less (for a maximisation) is
  wrong. Every row of the instance says so in its ``message``; it is a bug to report, never to
  average away;
- ``infeasible``: an exact solver proved the instance infeasible and no method found a verified
  solution; there is no optimum and no gap;
- ``none``: no exact solver proved anything (time limit, error, or no exact solver in the study);
  there is no optimum and no gap.

**Certificate** (:func:`certify`). Per instance, over all its rows:

- ``best_known``: the best verified objective of any method (exact or not), and
  ``best_known_method``, the first in name order of the methods (``exact/<solver>`` or the
  heuristic) whose verified objective agrees with it within 1e-6 relative;
- ``best_bound``: the best proven bound of the exact runs: for a maximisation the smallest bound of
  any exact run, for a minimisation the largest. An optimal verified run's bound is its objective;
  any other exact run (optimal unverified, feasible, time limit, no solution) gives its ``bound``
  when it has a finite one, unless the evaluator contradicts its objective (its model is suspect);
  error and infeasible rows give none;
- ``tier``: how far the best known is certified.

  - ``proven``: two exact runs of different solvers are both optimal, verified and agree
    (``optimum_status: proven`` with proofs from at least two solvers);
  - ``proven_once``: proven by one solver (one run, or several runs of one solver);
  - ``bounded``: nothing proven, but the best known's gap to the best bound (its ``gap_bound``,
    below) is at most the study's ``certify`` (relative, 0.01 by default);
  - ``open``: anything else without a proof: no verified solution, no bound, or a gap wider than
    ``certify``.

  ``disagree`` and ``infeasible`` stay what they are: a separate status (``optimum_status``) beside
  the tier, and such an instance has no tier (null). Its ``best_known`` is still recorded (a verified
  solution is a fact), its ``best_bound`` too, but no row gets a ``gap_bound`` there.

**Gap.** Relative to the optimum and sign-normalised so that 0 is optimal and larger is worse for
both senses:

    max:  gap = (optimum - objective) / |optimum|        min:  gap = (objective - optimum) / |optimum|

An objective that agrees with the optimum (``agrees``: within 1e-6 relative, 1e-6 absolute below 1)
has gap exactly 0. **Zero optimum**: no relative gap exists, so the gap is 0 when the objective
agrees with 0 (|objective| <= 1e-6) and +inf otherwise. An objective better than the optimum gives a
negative gap, kept as it is (the exact side is wrong there). Only verified objectives get a gap:
a row without an objective (error, infeasible, no solution) or whose objective the evaluator
contradicts has ``gap = None``.

**Certified gaps** of every verified row, on every instance with a best known (proven, bounded or
open alike):

- ``gap_known``: the gap above with the best known in place of the optimum, relative to
  |best_known| (0 for the best row, never negative);
- ``gap_bound``: the largest gap the row can have to any optimum between the best known and the
  best bound. When the best known and the best bound have one sign, the gap to the optimum changes
  monotonically between them, so this is the larger of the row's gaps to the two: the gap to the best
  bound, relative to |best_bound|, whenever the objective has their sign too (the usual case). When
  they straddle 0 (or one is 0) the optimum may be 0: ``gap_bound`` is +inf, unless the objective
  agrees with 0. No bound, or a ``disagree`` instance: null.

The true gap to the (unknown) optimum thus lies in ``[gap_known, gap_bound]``. Where the instance is
proven, best known and best bound both agree with the optimum, and both gaps equal ``gap`` up to that
tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from odrp.core.result import VERIFY_RTOL, Sense, agrees

OptimumStatus = Literal["proven", "disagree", "infeasible", "none"]
Tier = Literal["proven", "proven_once", "bounded", "open"]

TIERS: tuple[Tier, ...] = ("proven", "proven_once", "bounded", "open")
"""The tiers from the most certain to the least."""

DEFAULT_CERTIFY = 0.01
"""A study's ``certify`` when its grid does not say: best known and best bound within 1% relative."""

DEFAULT_MIP_GAP = 1e-6
"""A study's ``mip_gap`` when its grid does not say (as in :mod:`odrp.bench.grid`)."""

DERIVED = ("optimum", "optimum_status", "gap", "sense", "best_known", "best_known_method", "best_bound", "tier")
DERIVED += ("gap_known", "gap_bound")
"""The columns :func:`certify_rows` gives every row of an instance."""

BOUNDING_STATUSES = ("optimal", "feasible", "time_limit", "no_solution")
"""Statuses of an exact run whose ``bound`` counts (an error or infeasible row has none)."""


@dataclass(frozen=True)
class Optimum:
    value: float | None
    status: OptimumStatus
    note: str = ""


@dataclass(frozen=True)
class Certificate:
    """An instance's optimum, best known solution, best bound and tier (see the module docstring)."""

    optimum: Optimum
    best_known: float | None
    best_known_method: str | None
    best_bound: float | None
    tier: Tier | None


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
    return row["status"] == "optimal" and bool(row["verified"]) and _value(row["objective"]) is not None


def certify(
    rows: Iterable[Mapping[str, Any]], sense: Sense, mip_gap: float = 0.0, certify_gap: float = DEFAULT_CERTIFY
) -> Certificate:
    """The certificate of one instance from its rows (keys ``method, solver, status, objective, bound,
    verified``; ``solver`` and ``bound`` may be absent)."""
    rows = list(rows)
    optimum = best_proven(rows, sense, mip_gap)
    better = max if sense == "max" else min
    known = [(float(r["objective"]), label(r)) for r in rows if r["verified"] and _value(r["objective"]) is not None]
    best_known = better(v for v, _ in known) if known else None
    best_method = min((m for v, m in known if agrees(v, best_known)), default=None) if known else None
    bounds = [(b, label(r)) for r in rows if (b := bound_of(r)) is not None]
    best_bound = (min if sense == "max" else max)(b for b, _ in bounds) if bounds else None
    tolerance = max(VERIFY_RTOL, mip_gap)
    if best_known is not None:
        beaten = sorted(
            {m for b, m in bounds if _better(best_known, b, sense) and not agrees(best_known, b, tolerance)}
        )
        if beaten:
            solution = f"a verified solution ({best_known:.10g}, {best_method})"
            note = f"{solution} is better than the bound of {', '.join(beaten)}"
            notes = "; ".join(n for n in (optimum.note, note) if n)
            optimum = Optimum(optimum.value, "disagree", notes)
    return Certificate(
        optimum,
        best_known,
        best_method,
        best_bound,
        tier_of(optimum.status, rows, best_known, best_bound, sense, certify_gap),
    )


def tier_of(
    status: str,
    rows: Iterable[Mapping[str, Any]],
    best_known: float | None,
    best_bound: float | None,
    sense: Sense,
    certify_gap: float,
) -> Tier | None:
    """The tier of an instance whose ``optimum_status`` is ``status`` (None for disagree and infeasible)."""
    if status == "proven":
        solvers = {r.get("solver") for r in rows if r["method"] == "exact" and _proves_optimality(r)}
        return "proven" if len(solvers) >= 2 else "proven_once"
    if status == "none":
        width = gap_to_bound(best_known, best_known, best_bound, sense)
        return "bounded" if width is not None and width <= certify_gap else "open"
    return None


def label(row: Mapping[str, Any]) -> str:
    """``exact/<solver>`` for an exact row, else the method (as the report names methods)."""
    solver = row.get("solver")
    return f"exact/{solver}" if row["method"] == "exact" and isinstance(solver, str) else str(row["method"])


def bound_of(row: Mapping[str, Any]) -> float | None:
    """The bound one row proves: none unless it is an exact run (see the module docstring)."""
    if row["method"] != "exact" or row["status"] not in BOUNDING_STATUSES:
        return None
    if _proves_optimality(row):
        return float(row["objective"])
    if _value(row["objective"]) is not None and not row["verified"]:
        return None  # the evaluator contradicts its solution: its model, and so its bound, is suspect
    bound = _value(row.get("bound"))
    return bound if bound is not None and math.isfinite(bound) else None


def _better(a: float, b: float, sense: Sense) -> bool:
    return a > b if sense == "max" else a < b


def _value(value: Any) -> float | None:
    """A number, or None for None and NaN (pandas' missing value)."""
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) else number


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


def gap_to_bound(
    objective: float | None, best_known: float | None, best_bound: float | None, sense: Sense
) -> float | None:
    """The largest gap ``objective`` can have to an optimum between ``best_known`` and ``best_bound``."""
    if objective is None or best_bound is None:
        return None
    ends = (best_bound,) if best_known is None else (best_known, best_bound)
    if min(ends) <= 0 <= max(ends) and not agrees(objective, 0.0):
        return math.inf  # the optimum may be 0: no relative gap is bounded
    gaps = [gap_to_optimum(objective, end, sense) for end in ends]
    return max(g for g in gaps if g is not None)


def certify_rows(
    rows: list[dict[str, Any]], sense: Sense, mip_gap: float = 0.0, certify_gap: float = DEFAULT_CERTIFY
) -> Certificate:
    """Give every row of one instance the columns of :data:`DERIVED` (in place), and notes in ``message``."""
    found = certify(rows, sense, mip_gap, certify_gap)
    optimum = found.optimum
    trusted = found.tier is not None
    for row in rows:
        objective = _value(row["objective"]) if row["verified"] else None
        gap = gap_to_optimum(objective, optimum.value, sense)
        row.update(
            optimum=optimum.value,
            optimum_status=optimum.status,
            gap=gap,
            sense=sense,
            best_known=found.best_known,
            best_known_method=found.best_known_method,
            best_bound=found.best_bound,
            tier=found.tier,
            gap_known=gap_to_optimum(objective, found.best_known, sense),
            gap_bound=gap_to_bound(objective, found.best_known, found.best_bound, sense) if trusted else None,
        )
        message = row.get("message") or ""
        notes = [message] if message else []
        if optimum.note and optimum.note not in message:
            notes.append(optimum.note)
        if gap is not None and gap < 0 and NEGATIVE_GAP not in message:
            notes.append(NEGATIVE_GAP)
        row["message"] = "; ".join(notes)
    return found


NEGATIVE_GAP = "objective better than the proven optimum: the exact side is wrong here"


# ------------------------------------------------------------------------------- old datasets


def study_settings(manifest: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """Each study's ``(mip_gap, certify)`` from a dataset's manifest (its grid), defaults where it is silent."""
    studies = (((manifest or {}).get("grid") or {}).get("spec") or {}).get("studies") or []
    out = {}
    for study in studies:
        if isinstance(study, Mapping):
            mip_gap = _value(study.get("mip_gap"))
            certify_gap = _value(study.get("certify"))
            out[str(study.get("name"))] = (
                DEFAULT_MIP_GAP if mip_gap is None else mip_gap,
                DEFAULT_CERTIFY if certify_gap is None else certify_gap,
            )
    return out


def complete(frame: Any, settings: Mapping[str, tuple[float, float]], sense_of: Callable[[str, str], Sense]) -> Any:
    """``frame`` (:func:`odrp.bench.dataset.read`) with the columns of :data:`DERIVED` derived for every
    instance whose rows lack them (written before these columns existed: ``sense`` is null there).

    ``settings``: each study's ``(mip_gap, certify)`` (:func:`study_settings`); ``sense_of(problem,
    instance_id)``: the instance's sense. Rows that have the columns keep what was written. Rows
    without them keep their written ``optimum`` and ``gap`` and, unless a bound now contradicts a
    verified solution (``disagree``, with its note), their ``optimum_status`` and ``message``: a
    dataset reads as it did before; the tier follows the status."""
    import pandas as pd

    for column in DERIVED:
        if column not in frame.columns:
            frame[column] = None
    missing = frame["sense"].isna()
    if not missing.any():
        return frame
    frame = frame.astype({c: object for c in (*DERIVED, "message") if frame[c].dtype != object})
    index: list[Any] = []
    derived: dict[str, list[Any]] = {column: [] for column in (*DERIVED, "message")}
    lacking = frame[missing]
    instances: dict[tuple[str, str], list[tuple[Any, dict[str, Any]]]] = {}
    for position, row in zip(lacking.index, lacking.to_dict("records"), strict=True):
        instances.setdefault((str(row["problem"]), str(row["instance_id"])), []).append((position, row))
    for (problem, instance_id), group in instances.items():
        rows = [row for _, row in group]
        for row in rows:
            row["message"] = "" if _missing(row.get("message")) else row["message"]
            row["verified"] = False if _missing(row.get("verified")) else bool(row["verified"])
        study = str(rows[0]["study"])
        mip_gap, certify_gap = settings.get(study, (DEFAULT_MIP_GAP, DEFAULT_CERTIFY))
        written = [{c: row.get(c) for c in ("optimum", "optimum_status", "gap", "message")} for row in rows]
        sense = sense_of(str(problem), str(instance_id))
        found = certify_rows(rows, sense, mip_gap, certify_gap)
        before = next((w["optimum_status"] for w in written if not _missing(w["optimum_status"])), "none")
        if not (found.optimum.status == "disagree" and before != "disagree"):
            tier = tier_of(str(before), rows, found.best_known, found.best_bound, sense, certify_gap)
            for row, kept in zip(rows, written, strict=True):
                row.update(kept, tier=tier)
                if tier is None:
                    row["gap_bound"] = None
        index.extend(position for position, _ in group)
        for column, values in derived.items():  # verified stays as it was read
            values.extend(row[column] for row in rows)
    for column, values in derived.items():
        frame.loc[index, column] = pd.Series(values, index=index, dtype=object)
    for column in ("optimum", "gap", "best_known", "best_bound", "gap_known", "gap_bound"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    return frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or str(value) == "<NA>"
