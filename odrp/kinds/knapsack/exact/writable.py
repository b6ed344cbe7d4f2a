"""The knapsack family's models that leave as files (``odrp model``): each formulation's one MILP and its decoder.

- ``textbook``: the plain model of :mod:`.textbook` (one binary per item and knapsack).
- ``compact``: the model of :mod:`.milp` on the family as :func:`.solve.solve` builds it (identical items
  merged, capacities tightened, the surrogate bound as a row, the capacity cuts and symmetry rows the
  settings ask for). Two steps of the method are searches and are not written: the search start's
  objective row (a floor at a heuristic's value) and the QKP reduction's fixings.
- ``patterns``: the configuration model of :mod:`.patterns` (one integer per knapsack type and pattern),
  when its patterns number at most ``pattern_limit``.
- ``arcflow``, ``lagrangian`` and ``configurations``: searches over many models, no one MILP.
- ``auto``: the model ``auto`` solves with HiGHS, when that is one model (the compact or the configuration
  model, or the textbook one for a large GAP); where ``auto`` runs the arc-flow search (a multiple
  knapsack) or the Lagrangian search (a small GAP), the textbook model.

The solution is read as the counts n[c, k] (copies of class c in knapsack k; a class is one item unless
identical items were merged), or, in the configuration model, the patterns y[t, p] handed to the
knapsacks of type t in order; :func:`.mapping.solution_of` turns counts into the kind's solution.
Variables are named by item (or R-Storm task) and knapsack (or node): n(item3,knapsack_1).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pyomo.environ as pyo

from odrp.core.modelfile import NoModel, PyomoModel, Writable
from odrp.kinds.knapsack.exact import bounds, milp, patterns, textbook
from odrp.kinds.knapsack.exact.milp import Options, infeasible_classes
from odrp.kinds.knapsack.exact.settings import KnapsackSettings
from odrp.kinds.knapsack.exact.solve import (  # auto's choices, made as solve() makes them
    _arcflow_pays,
    _lagrangian_pays,
    _model,
    _textbook_is_auto,
)
from odrp.kinds.knapsack.family import Family
from odrp.kinds.knapsack.mapping import family_of, solution_of

SOLVER = "highs"
"""The solver whose ``auto`` choices the written model follows (the family's default)."""
SEARCHES = {
    "arcflow": "the arc-flow search (column generation over many restricted models)",
    "lagrangian": "the Lagrangian search (subgradient steps over knapsack subproblems, then a compact model)",
    "configurations": "the configuration bound's column generation and a local search",
}


def models(
    instance: Any, formulation: str, settings: KnapsackSettings | None = None, params: dict[str, Any] | None = None
) -> Writable:
    """The one MILP ``formulation`` solves on ``instance`` (the module's docstring)."""
    settings = settings or KnapsackSettings()
    if formulation in SEARCHES:
        raise NoModel(f"not one MILP but {SEARCHES[formulation]}")
    if formulation == "textbook":
        return _textbook(instance, "the textbook model")
    if formulation == "auto" and _textbook_is_auto(instance, SOLVER, settings):
        return _textbook(instance, "the textbook model (the model auto solves for a GAP of this size)")
    family = family_of(instance, merge_identical=settings.merge_identical)
    if settings.tighten:
        family = bounds.reduce_capacities(family, settings.dp_limit)
    if formulation == "auto" and _arcflow_pays(family, SOLVER, settings.arcflow):
        return _textbook(instance, f"the textbook model: auto runs {SEARCHES['arcflow']}, no one MILP")
    options = Options(
        objective_bound=bounds.surrogate_bound(family, settings.dp_limit) if settings.tighten else None,
        linearisation=settings.linearisation,
        capacity_cuts=family.n_knapsacks > 1 if settings.capacity_cuts is None else settings.capacity_cuts,
        symmetry=settings.symmetry,
    )
    if formulation == "auto" and _lagrangian_pays(family, SOLVER, settings.lagrangian):
        return _textbook(instance, f"the textbook model: auto runs {SEARCHES['lagrangian']}, no one MILP")
    _feasible(family)
    stats: dict[str, Any] = {}
    try:
        built, _ = _model(family, options, formulation, stats, settings)  # which model; do its patterns fit
    except ValueError as error:  # more patterns than pattern_limit
        raise NoModel(f"no configuration model: {str(error).removeprefix('formulation patterns: ')}") from None
    chosen = stats["formulation"]
    lead = "the model auto solves: " if formulation == "auto" else ""
    omitted = "without the search start's objective row and the QKP reduction's fixings (searches)"
    if chosen == "patterns":
        limit = settings.pattern_limit if formulation == "patterns" else settings.auto_pattern_limit
        note = f"{lead}the configuration model ({stats['patterns']} patterns), {omitted}"
        return Writable("patterns", note, _patterns(instance, family, options, limit, built))
    note = f"{lead}the compact model, {omitted}"
    return Writable("compact", note, _compact(instance, family, options, built))


def _feasible(family: Family) -> None:
    stuck = infeasible_classes(family)
    if stuck:
        names = ", ".join(_class_name(family.classes[c]) for c in stuck[:5])
        raise NoModel(
            f"no model to write: the instance is infeasible ({names} fit in no knapsack); odrp solve says so "
            "without a model"
        )


def _key(key: Hashable) -> str:
    return f"item{key}" if isinstance(key, int | np.integer) else str(key)


def _class_name(members: tuple[Hashable, ...]) -> str:
    """A class by its first member, with the number of copies when several identical items were merged."""
    return _key(members[0]) if len(members) == 1 else f"{_key(members[0])}{{{len(members)}}}"


def _counts_names(family: Family) -> dict[str, Any]:
    classes = [_class_name(members) for members in family.classes]
    return {
        "n": (classes, family.knapsacks),
        "overload": (list(family.dimensions) or None, family.knapsacks),
        "group_count": (classes, None),
    }


def _counts_meaning(family: Family) -> dict[str, Any]:
    def meaning(index: tuple[Any, ...]) -> str:
        c, k = index
        members = family.classes[c]
        if len(members) == 1:
            return f"1 when {_key(members[0])} is in {family.knapsacks[k]}"
        return f"copies of {_class_name(members)} (identical items) in {family.knapsacks[k]}"

    return {"n": meaning}


def _textbook(instance: Any, note: str) -> Writable:
    family = textbook.family(instance)
    _feasible(family)

    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_of(instance, family, milp.counts(m, family))

    spec = PyomoModel(
        build=lambda: textbook.build(family),
        decode=decode,
        names=_counts_names(family),
        meanings=_counts_meaning(family),
    )
    return Writable("textbook", note, spec)


def _once(first: pyo.ConcreteModel, rebuild: Any) -> Any:
    """A builder that returns ``first`` (already built to learn auto's choice) once, then builds anew."""
    kept = [first]

    def build() -> pyo.ConcreteModel:
        return kept.pop() if kept else rebuild()

    return build


def _compact(instance: Any, family: Family, options: Options, built: pyo.ConcreteModel) -> PyomoModel:
    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_of(instance, family, milp.counts(m, family))

    return PyomoModel(
        build=_once(built, lambda: milp.build(family, options)),
        decode=decode,
        names=_counts_names(family),
        meanings=_counts_meaning(family),
    )


def _patterns(instance: Any, family: Family, options: Options, limit: int, built: pyo.ConcreteModel) -> PyomoModel:
    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_of(instance, family, m.family_builder.counts(m))

    types = milp.knapsack_types(family)
    type_names = ["|".join(family.knapsacks[k] for k in ks) for ks in types]
    enumerated = built.family_builder.patterns  # the same patterns every time: the enumeration is deterministic

    def meaning(index: tuple[Any, ...]) -> str:
        t, p = index
        held = enumerated[t][0][p]
        items = ", ".join(f"{n} x {_class_name(family.classes[c])}" for c, n in enumerate(held) if n) or "nothing"
        return f"how many of the identical knapsacks {type_names[t].replace('|', ', ')} hold {items}"

    return PyomoModel(
        build=_once(built, lambda: patterns.build(family, options, limit)[0]),
        decode=decode,
        names={**_counts_names(family), "y": (type_names, None)},
        meanings={"y": meaning},
    )
