"""The ODRP models that leave as files (``odrp model``): each formulation's one MILP and its decoder.

- ``textbook`` (also ``paper``): the paper's ILP (:mod:`.paper`, eqs. 22-32); the placement is read from
  x[i, U], one binary per operator and multiset of nodes.
- ``compact``: when only the response time and availability carry weight, the response-time model
  (:mod:`.response`), without the rows that prune it by a local search's placement (a search step:
  the model keeps every optimal placement without them); the placement is read from n[i, u, k].
  Otherwise the compact model (:mod:`.compact`); its placement is read from h[i, u, k, c]. Its local
  search start is an incumbent the solver never sees, so nothing of it is written.
- ``auto``: the textbook model where ``auto`` solves it (at most ``textbook_nonzeros`` nonzeros by its
  closed-form size), else the ``compact`` model above.

Every model's size is checked against the memory budget before it is built, as when it is solved.
Variables are named by operator, node and stream ids: x(op3,{n1.n1.n2}) is operator op3 with two
replicas on n1 and one on n2; h(op3,n1,3,2) is operator op3 with 3 replicas, 2 of them on n1.
"""

from __future__ import annotations

from typing import Any

import pyomo.environ as pyo

from odrp.core.memory import check_model
from odrp.core.modelfile import NoModel, PyomoModel, Writable
from odrp.kinds.replication.exact import compact, paper, response, size
from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.exact.solve import ALIASES
from odrp.kinds.replication.instance import OdrpInstance, solution_json


def models(
    inst: OdrpInstance, formulation: str, settings: OdrpSettings | None = None, params: dict[str, Any] | None = None
) -> Writable:
    """The one MILP ``formulation`` solves on ``inst`` (the module's docstring)."""
    settings = settings or OdrpSettings()
    asked = formulation
    formulation = ALIASES.get(formulation, formulation)
    unstable = [inst.operators[i] for i in range(inst.n_operators) if not inst.replica_counts(i)]
    if unstable:
        raise NoModel(
            f"no model to write: the instance is infeasible (no stable replica count within max_replicas for "
            f"{', '.join(unstable)}); odrp solve says so without a model"
        )
    textbook_size = size.paper_size(inst)
    small = textbook_size[2] <= settings.textbook_nonzeros
    if formulation == "textbook" or (formulation == "auto" and small):
        check_model(*textbook_size, "the textbook ODRP model (the paper's ILP)")
        why = (
            f"auto solves it: {textbook_size[2]} nonzeros <= textbook_nonzeros = {settings.textbook_nonzeros}"
            if asked == "auto"
            else "the paper's ILP as written"
        )
        return Writable("textbook", f"the textbook model, eqs. 22-32 ({why})", _paper(inst))
    lead = (
        f"auto solves the compact formulation here ({textbook_size[2]} nonzeros in the textbook model > "
        f"textbook_nonzeros = {settings.textbook_nonzeros}): "
        if asked == "auto"
        else ""
    )
    if settings.response_model and response.serves(inst):
        check_model(*size.response_size(inst, settings), "the response-time ODRP model")
        note = (
            f"{lead}the response-time model (only response time and availability weigh), without the rows "
            "that prune it by a local search's placement"
        )
        return Writable("compact", note, _response(inst, settings))
    check_model(*size.compact_size(inst, settings), "the compact ODRP model")
    note = f"{lead}the compact model (its local-search start is an incumbent the solver never sees)"
    return Writable("compact", note, _compact(inst, settings))


def _multiset(inst: OdrpInstance, i: int, q: int) -> str:
    return "{" + ".".join(inst.nodes[u] for u in paper.multisets(inst, i)[q]) + "}"


def _stream(inst: OdrpInstance, s: int) -> str:
    stream = inst.streams[s]
    return f"{inst.operators[stream.source]}~{inst.operators[stream.target]}"


def _link(inst: OdrpInstance) -> list[str]:
    """The links' names by index: their two nodes."""
    names = [""] * len(inst.link_availability)
    for u in range(inst.n_nodes):
        for v in range(u + 1, inst.n_nodes):
            ell = inst.link_id[u][v]
            if 0 <= ell < len(names) and not names[ell]:
                names[ell] = f"{inst.nodes[u]}~{inst.nodes[v]}"
    return [name or str(ell) for ell, name in enumerate(names)]


def _paper(inst: OdrpInstance) -> PyomoModel:
    def meaning(index: tuple[Any, ...]) -> str:
        i, q = index
        replicas = ", ".join(inst.nodes[u] for u in paper.multisets(inst, i)[q])
        return f"1 when operator {inst.operators[i]} has its replicas on {replicas} (one per listed node)"

    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_json(inst, paper.placement(m, inst))

    return PyomoModel(
        build=lambda: paper.build(inst),
        decode=decode,
        names={
            "x": lambda index: (inst.operators[index[0]], _multiset(inst, index[0], index[1])),
            "y": lambda index: (
                _stream(inst, index[0]),
                _multiset(inst, inst.streams[index[0]].source, index[1]),
                _multiset(inst, inst.streams[index[0]].target, index[2]),
            ),
            "z_node": (inst.nodes,),
            "z_link": (_link(inst),),
        },
        meanings={"x": meaning},
    )


def _common_names(inst: OdrpInstance) -> dict[str, Any]:
    """Names of the variables that the compact and response-time models share."""
    streams = [_stream(inst, s) for s in range(len(inst.streams))]
    return {
        "w": (inst.operators, None),
        "rho": (inst.operators,),
        "delta": (streams,),
        "start": (inst.operators,),
        "before": (inst.operators,),
        "after": (inst.operators,),
        "node_on": (inst.nodes,),
        "coupling": (streams, inst.nodes, inst.nodes),
    }


def _compact(inst: OdrpInstance, settings: OdrpSettings) -> PyomoModel:
    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_json(inst, compact.placement(m, inst))

    return PyomoModel(
        build=lambda: compact.build(inst, settings),
        decode=decode,
        names={**_common_names(inst), "h": (inst.operators, inst.nodes, None, None), "link_on": (_link(inst),)},
        meanings={"h": "1 when operator {0} has {2} replicas, {3} of them on node {1}"},
    )


def _response(inst: OdrpInstance, settings: OdrpSettings) -> PyomoModel:
    def decode(m: pyo.ConcreteModel) -> dict[str, Any]:
        return solution_json(inst, response.placement(m, inst))

    return PyomoModel(
        build=lambda: response.build(inst, settings),
        decode=decode,
        names={
            **_common_names(inst),
            "n": (inst.operators, inst.nodes, None),
            "o": (inst.operators, inst.nodes),
            "link_on": (_link(inst),),
        },
        meanings={"n": "replicas of operator {0} on node {1} when it has {2} replicas"},
    )
