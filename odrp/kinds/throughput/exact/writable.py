"""The throughput model that leaves as a file (``odrp model``): one step P(rho) of the textbook bisection.

R multiplies a ratio of integers, so no single linear model states the problem (:mod:`.solve`): every
exact method is a search on R over fixed-rate models. What can leave as a file is one step of the
textbook method (:mod:`.textbook`), the plain feasibility MILP P(rho) at one rate rho: feasible exactly
when some placement sustains rho, and any solution of it is such a placement (the evaluator computes its
rate, at least rho). Which rho:

- ``--rho R`` (``params["rho"]``): that rate;
- else the rate of ``hetero_greedy``'s placement, the heuristic incumbent a search starts from (so P(rho) is
  feasible, and a solver that maximises nothing returns some placement at least as good); 0 when the
  heuristic finds none (P(0): does any placement fit the overheads?).

A solver that proves P(rho) infeasible proves that no placement reaches rho; raising rho step by step
(as the bisection does) finds the optimum. ``textbook`` and ``auto`` (a search, whose textbook model is
this) write it; ``patterns`` and ``levels`` are the rate search's own forms, searches too, and write
nothing.

The model is the matrix of :func:`.rate_model.build_matrix` (no symmetry rows), written by highspy.
Columns: v(c,n) = 1 when component c has n instances; y(c,w,n) = instances of c on machine w when it has
n; z, the machine rows' slack, fixed at 0. The placement is read from y.
"""

from __future__ import annotations

import math
from typing import Any

from odrp.core.memory import check_model
from odrp.core.modelfile import MatrixSpec, NoModel, Writable
from odrp.heuristics.throughput import hetero_greedy
from odrp.kinds.throughput.exact import rate_model, textbook
from odrp.kinds.throughput.instance import ThroughputInstance, solution_json

SEARCHES = ("patterns", "levels")
"""The rate search's forms of P(rho): searches, no one model."""


def models(
    inst: ThroughputInstance, formulation: str, settings: Any = None, params: dict[str, Any] | None = None
) -> Writable:
    """P(rho) of the textbook bisection at the rate of ``params["rho"]`` or of the heuristic incumbent."""
    if formulation in SEARCHES:
        raise NoModel(
            f"not one MILP but the rate search over P(rho) in its {formulation} form (--formulation textbook "
            "writes one step P(rho) of the textbook bisection)"
        )
    check_model(*textbook.model_size(inst), "the textbook fixed-rate model P(rho)")
    rho = (params or {}).get("rho")
    if rho is not None:
        why = f"--rho {rho:g} given"
    else:
        found = hetero_greedy(inst)
        if found.solution is not None and found.objective is not None and not math.isfinite(found.objective):
            raise NoModel("no model to write: R is unbounded (a placement has no rate-dependent load)")
        if found.solution is None or found.objective is None:
            rho, why = 0.0, "hetero_greedy found no placement: does any placement fit the overheads?"
        else:
            rho = float(found.objective)
            why = f"the rate of hetero_greedy's placement, the heuristic incumbent; try --rho above {rho:g}"
    lead = "auto is a rate search, no one MILP: " if formulation == "auto" else ""
    note = f"{lead}one step of the textbook bisection, the feasibility MILP P(rho) at rho = {rho!r} ({why})"
    return Writable("textbook", note, _step(inst, float(rho)), params={"rho": float(rho)})


def _step(inst: ThroughputInstance, rho: float) -> MatrixSpec:
    allowed = textbook.levels(inst)

    def build() -> tuple[Any, list[str], list[str | None]]:
        form = rate_model.build_matrix(inst, textbook.plain_model(inst, rho, allowed), symmetry=False)
        names: list[str] = [""] * form.model.n_columns
        meanings: list[str | None] = [None] * form.model.n_columns
        names[form.z] = "z"
        for (c, n), col in form.v.items():
            names[col] = f"v({inst.components[c]},{n})"
        for item, col in form.y.items():
            component, machine = inst.components[item.c], inst.machines[item.w]
            names[col] = f"y({component},{machine},{item.n})"
            meanings[col] = f"instances of component {component} on machine {machine} when it has {item.n} instances"
        return form.model, names, meanings

    def decode(values: list[float]) -> dict[str, Any]:
        form = rate_model.build_matrix(inst, textbook.plain_model(inst, rho, allowed), symmetry=False)
        return solution_json(inst, rate_model.decode_matrix(form, values, inst.n_components))

    return MatrixSpec(build=build, decode=decode)
