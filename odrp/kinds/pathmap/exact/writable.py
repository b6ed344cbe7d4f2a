"""The pathmap models that leave as files (``odrp model``): each formulation's one MILP and its decoder.

Both models are built on the hop-limited least-cost routes between the servers
(:func:`odrp.kinds.pathmap.routes.pair_routes`, computed here as when the instance is solved):

- ``auto``: the layered flow of :mod:`.model`;
- ``textbook``: the plain assignment model of :mod:`.textbook`.

The mapping is read from x[i, u] in both (:func:`.model.mapping`), the paths being the routes behind
the chosen servers. Variables are named by component and server ids: x(c1,s4) is 1 when component c1
runs on server s4. An instance whose stages leave no chain of servers is infeasible and has no model.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyomo.environ as pyo

from odrp.core.memory import check_model
from odrp.core.modelfile import NoModel, PyomoModel, Writable
from odrp.kinds.pathmap.exact import model, textbook
from odrp.kinds.pathmap.instance import PathmapInstance
from odrp.kinds.pathmap.routes import pair_routes


def models(
    inst: PathmapInstance, formulation: str, settings: Any = None, params: dict[str, Any] | None = None
) -> Writable:
    """The one MILP ``formulation`` solves on ``inst`` (the module's docstring)."""
    plain = formulation == "textbook"
    check_model(
        *(textbook.size(inst) if plain else model.size(inst)),
        "the textbook pathmap model" if plain else "the layered-flow pathmap model",
    )
    starts = [(inst.source,), *(inst.candidates(i) for i in range(inst.n_components))]
    tables = pair_routes(inst, rows=starts)
    layers = model.stages(inst, tables)
    if not layers[0]:
        raise NoModel(
            "no model to write: the instance is infeasible (no chain of servers hosting the services is connected "
            "within the bandwidth and hop limits); odrp solve says so without a model"
        )

    def decode(built: pyo.ConcreteModel) -> dict[str, Any]:
        for i, name in enumerate(inst.components):  # the mapping reads one server per component
            chosen = [u for (c, u), var in built.x.items() if c == i and (var.value or 0) > 0.5]
            if len(chosen) != 1:
                raise ValueError(f"component {name} on one server (x({name},*) summing to 1), got {len(chosen)}")
        return model.mapping(built, inst, tables)

    places = (inst.components, inst.servers)
    if plain:
        chain = [f"{a}~{b}" for a, b in itertools.pairwise(inst.components)]
        spec = PyomoModel(
            build=lambda: textbook.build(inst, tables),
            decode=decode,
            names={"x": places, "y": (chain, inst.servers, inst.servers)},
            meanings={"x": "1 when component {0} runs on server {1}"},
        )
        return Writable("textbook", "the textbook model (assignment binaries, each pair's cost linearised)", spec)
    ends = ("source", *inst.components, "sink")
    pairs = [f"{a}~{b}" for a, b in itertools.pairwise(ends)]
    spec = PyomoModel(
        build=lambda: model.build(inst, tables, layers),
        decode=decode,
        names={"x": places, "y": (pairs, inst.servers, inst.servers)},
        meanings={"x": "1 when component {0} runs on server {1}"},
    )
    note = "the layered flow over the least-cost routes, with the capacity rows (the model auto solves)"
    return Writable("auto", note, spec)
