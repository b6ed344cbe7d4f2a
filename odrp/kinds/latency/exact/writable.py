"""The latency models that leave as files (``odrp model``): each formulation's one MILP and its decoder.

- ``textbook``: the plain MILP of the paper (:mod:`.textbook`); the placement is read from x[i, u].
- ``auto``: the model ``auto`` solves. The textbook MILP where it is small (at most ``textbook_nonzeros``
  nonzeros, ``classes`` left at None); the method by supervisor classes is a search over restricted
  models, no one MILP, so where ``auto`` takes it the textbook MILP is written instead; otherwise the
  one MILP of :mod:`.model` with the triangle and knapsack tree rows that the cutting-plane loop of
  :mod:`.separation` adds (its LP relaxations solved here, without a deadline). The hybrid heuristic's
  placement, its incumbent, is not part of the model. Its objective is scaled by ``model.scale``; the
  evaluator's objective is the unscaled one.

Variables are named by operator and supervisor ids: x(op3,s2) is 1 when operator op3 runs on supervisor
s2.
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from odrp.core.memory import check_model
from odrp.core.modelfile import PyomoModel, Writable
from odrp.kinds.latency.exact import classes, textbook
from odrp.kinds.latency.exact.model import assignment, build, estimated_size
from odrp.kinds.latency.exact.separation import separate_triangles
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import LatencyInstance, solution_json


def models(
    inst: LatencyInstance,
    formulation: str,
    settings: LatencySettings | None = None,
    params: dict[str, Any] | None = None,
) -> Writable:
    """The one MILP ``formulation`` solves on ``inst`` (the module's docstring)."""
    settings = settings or LatencySettings()
    size = textbook.size(inst)
    small = settings.classes is None and size[2] <= settings.textbook_nonzeros
    if formulation == "textbook" or small:
        check_model(*size, "the textbook latency MILP")
        why = "the paper's plain MILP"
        if formulation == "auto":
            why = f"auto solves it: {size[2]} nonzeros <= textbook_nonzeros = {settings.textbook_nonzeros}"
        return Writable("textbook", f"the textbook MILP ({why})", _textbook(inst))
    by_classes = settings.classes
    if by_classes is None:
        by_classes = classes.latency_is_tie_break(inst)
    if by_classes:
        check_model(*size, "the textbook latency MILP")
        note = (
            "the textbook MILP: auto solves this instance by supervisor classes, a search over restricted "
            "models that is no one MILP"
        )
        return Writable("textbook", note, _textbook(inst))
    check_model(*estimated_size(inst, settings), "the latency MILP")
    note = (
        "the one MILP auto solves, with the triangle and knapsack tree rows of its cutting-plane loop "
        "(the hybrid heuristic's incumbent is not part of it; its objective is scaled by model.scale)"
    )
    return Writable("auto", note, _one_model(inst, settings))


def _names(inst: LatencyInstance) -> dict[str, Any]:
    edges = [f"{inst.operators[i]}~{inst.operators[j]}" for i, j in inst.edges]
    return {
        "x": (inst.operators, inst.supervisors),
        "y": (inst.supervisors,),
        "z": (edges,),
        "g": (edges, inst.supervisors),
        "d": (edges,),
        "a": (inst.operators,),
        "w": (inst.operators, inst.operators),
    }


MEANINGS = {"x": "1 when operator {0} runs on supervisor {1}"}


def _one_supervisor_each(m: pyo.ConcreteModel, inst: LatencyInstance) -> None:
    """Raise ValueError unless every operator has exactly one x at 1 (the decoders take the largest x)."""
    for i, name in enumerate(inst.operators):
        chosen = [u for u in range(inst.n_supervisors) if (m.x[i, u].value or 0) > 0.5]
        if len(chosen) != 1:
            raise ValueError(f"operator {name} on one supervisor (row assign({name})), got {len(chosen)}")


def _textbook(inst: LatencyInstance) -> PyomoModel:
    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        _one_supervisor_each(m, inst)
        return solution_json(inst, textbook.assignment(m, inst))

    return PyomoModel(build=lambda: textbook.build(inst), decode=decode, names=_names(inst), meanings=MEANINGS)


def _one_model(inst: LatencyInstance, settings: LatencySettings) -> PyomoModel:
    def separated() -> pyo.ConcreteModel:
        model = build(inst, settings)
        separate_triangles(model, inst, settings)
        return model

    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        _one_supervisor_each(m, inst)
        return solution_json(inst, assignment(m, inst))

    return PyomoModel(
        build=separated,
        decode=decode,
        names=_names(inst),
        meanings=MEANINGS,
        reread=lambda: build(inst, settings),  # the separated rows add no variable
    )
