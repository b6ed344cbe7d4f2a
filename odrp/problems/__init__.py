"""The registry of problem kinds: name -> schema, evaluator, generators and exact method."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from odrp.errors import InputError
from odrp.problems import odrp as _odrp
from odrp.problems import odrp_generators as _odrp_generators
from odrp.problems.base import Evaluation
from odrp.result import Sense


@dataclass(frozen=True)
class ProblemKind:
    """Everything the CLI, the runner and the benchmarks need to know about one kind."""

    name: str
    title: str
    sense: Sense
    load: Callable[[Any, str], Any]
    evaluate: Callable[[Any, dict[str, Any], str], Evaluation]
    schema: Callable[[], dict[str, Any]]
    generators: dict[str, Callable[..., dict[str, Any]]]
    exact: Callable[..., Any]
    solvers: tuple[str, ...] = ("highs", "cbc")
    formulations: tuple[str, ...] = ()
    default_generator: str = "random"
    extra: dict[str, Any] = field(default_factory=dict)


def _odrp_exact(*args: Any, **kwargs: Any) -> Any:
    from odrp.models.odrp import solve

    return solve(*args, **kwargs)


KINDS: dict[str, ProblemKind] = {
    "odrp": ProblemKind(
        name="odrp",
        title="ODRP: joint operator replication and placement (Cardellini et al. 2017)",
        sense="max",
        load=_odrp.load,
        evaluate=_odrp.evaluate,
        schema=_odrp.schema,
        generators={"random": _odrp_generators.random_instance, "debs2015": _odrp_generators.debs2015},
        exact=_odrp_exact,
        formulations=("compact", "paper"),
    ),
}


def get_kind(name: str, source: str = "<input>", field_name: str = "problem") -> ProblemKind:
    if name not in KINDS:
        raise InputError(source, field_name, f"one of {', '.join(KINDS)}, got {name!r}")
    return KINDS[name]
