"""What every problem kind shares: its registry entry, the evaluation record, one-line schema errors."""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from odrp.core.errors import InputError, did_you_mean
from odrp.core.result import Sense
from odrp.core.taskview import TaskViewAdapter

if TYPE_CHECKING:
    from odrp.core.modelfile import Writable

Spec = TypeVar("Spec", bound=BaseModel)


@dataclass(frozen=True)
class ProblemKind:
    """Everything the CLI, the methods and the benchmark runner need to know about one kind.

    - ``load(data, source)``: validate parsed JSON and compile it (bad input raises InputError);
    - ``evaluate(instance, solution, source)``: the independent evaluator (:class:`Evaluation`);
    - ``exact(instance, solver=, time_limit=, mip_gap=, settings=)``: an
      :class:`odrp.core.exact.ExactOutcome`; ``formulations`` lists the values of ``formulation=``,
      and ``settings`` is the frozen dataclass of the exact method's tunables
      (:mod:`odrp.core.settings`);
    - ``generators``: name -> ``f(seed=..., **params) -> instance JSON``;
    - ``size(instance)``: one number for "gap against instance size" (documented per kind);
    - ``taskview``: how Storm's schedulers see the kind, when they apply to it;
    - ``default_solver``: the solver ``--method exact`` uses when none is named (chosen per kind by
      measurement; one of ``solvers``);
    - ``starts``: the kind's fast heuristics, by name, that every exact run takes first, on a small
      share of its time limit (:func:`odrp.run.run_method`): the exact method gets the best of their
      placements as its incumbent (keyword ``incumbent=``, when it takes one), and its answer is
      never worse than any of them;
    - ``race``: formulations raced beside ``auto`` when an exact run may use two cores or more
      (:func:`odrp.run.run_method`, :mod:`odrp.core.race`): the run answers with the best incumbent and
      the best bound of the racers, and stops as soon as one of them proves the optimum;
    - ``race_solvers``: the solvers with which ``race`` is raced (empty: every solver). A racer that is
      one of the package's own searches on HiGHS is raced only beside a HiGHS run, so that a run of
      another solver (a second opinion) proves with that solver alone;
    - ``race_search``: a fast heuristic and its options, raced beside the exact method on the core it
      leaves idle (an exact run of one process with a time limit, two cores or more, no ``race``
      formulation): it starts from the best placement of ``starts`` (its settings' ``start``, where they
      have one and its options name none) and searches for the whole limit; the run answers with the
      better incumbent;
    - ``model_markdown``: the kind's model in Markdown (objective and constraints; :func:`model_text` reads it
      from the kind package's ``models/<kind>.md``, which the kind's documentation page includes), and
      ``solution_format``: its solution JSON in one line; an export's datasheet gives both.
    - ``models(instance, formulation, settings, params)``: the one MILP that ``formulation`` solves on
      the instance, to be written as a file (:class:`odrp.core.modelfile.Writable`: a builder and a
      decoder from variable values to the kind's solution JSON), or :class:`odrp.core.modelfile.NoModel`
      when the formulation is a search; ``settings`` as for ``exact``, ``params`` what the model needs
      besides (the throughput kind's rate ``rho``). None: the kind writes no model.
    """

    name: str
    title: str
    sense: Sense
    load: Callable[[Any, str], Any]
    evaluate: Callable[[Any, dict[str, Any], str], Evaluation]
    schema: Callable[[], dict[str, Any]]
    generators: dict[str, Callable[..., dict[str, Any]]]
    exact: Callable[..., Any]
    size: Callable[[Any], int]
    size_label: str = "size"
    solvers: tuple[str, ...] = ("highs", "cbc")
    default_solver: str = "highs"
    formulations: tuple[str, ...] = ()
    default_generator: str = "random"
    taskview: TaskViewAdapter | None = None
    settings: type | None = None
    starts: tuple[str, ...] = ()
    race: tuple[str, ...] = ()
    race_solvers: tuple[str, ...] = ()
    race_search: tuple[str, Mapping[str, Any]] | None = None
    model_markdown: str = ""
    solution_format: str = ""
    models: Callable[..., Writable] | None = None


def model_text(package_file: str, kind: str) -> str:
    """The model of ``kind`` in Markdown: ``models/<kind>.md`` beside ``package_file`` (a kind's ``kind.py``)."""
    return (Path(package_file).parent / "models" / f"{kind}.md").read_text()


@dataclass
class Evaluation:
    """The evaluator's verdict on one solution: feasibility, objective and every metric."""

    feasible: bool
    objective: float | None
    metrics: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)


MAX_MAGNITUDE = 1e9
"""The largest magnitude of any number in an instance. The toolkit's own instances stay below 4e5;
beyond 1e9, sums and products of the data lose the precision the solvers' tolerances assume."""


class Strict(BaseModel):
    """Base of every instance schema: a field the schema does not know is an error, never ignored;
    every number is finite (NaN and the infinities are refused, also when a dict is given in Python)
    and of magnitude at most :data:`MAX_MAGNITUDE`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        where = _too_large(value, "")
        if where is not None:
            raise ValueError(f"numbers of magnitude at most {MAX_MAGNITUDE:g}, got {where}")
        return value


def _too_large(value: Any, at: str) -> str | None:
    """Where in ``value`` (a number, or lists and dicts of them) a number exceeds :data:`MAX_MAGNITUDE`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if abs(value) <= MAX_MAGNITUDE else f"{value:.3g}{' at ' + at if at else ''}"
    if isinstance(value, list | tuple):
        return next((w for k, v in enumerate(value) if (w := _too_large(v, f"{at}[{k}]")) is not None), None)
    if isinstance(value, dict):
        return next((w for k, v in value.items() if (w := _too_large(v, f"{at}.{k}")) is not None), None)
    return None


def require_unique(ids: Iterable[str], source: str, section: str, key: str = "id") -> None:
    """Raise an :class:`InputError` naming ``section[k].key`` at the first value of ``ids`` seen before."""
    seen: set[str] = set()
    for position, name in enumerate(ids):
        require(name not in seen, source, f"{section}[{position}].{key}", f"a unique {key}, {name!r} repeats")
        seen.add(name)


def parse_counts(
    given: dict[str, dict[str, int]],
    outer: Sequence[str],
    inner: Sequence[str],
    source: str,
    section: str,
    words: tuple[str, str, str],
) -> list[dict[int, int]]:
    """A solution's ``{outer id: {inner id: count}}`` as one ``{inner index: count}`` per outer index.

    Zero counts are left out. An unknown id or a negative count is bad input naming
    ``section.OUTER.INNER``; ``words`` names the two kinds of id and the count, for the message
    (``("operator", "node", "replica count")``).
    """
    outer_index = {name: k for k, name in enumerate(outer)}
    inner_index = {name: k for k, name in enumerate(inner)}
    out: list[dict[int, int]] = [{} for _ in outer]
    for a, row in given.items():
        require(a in outer_index, source, f"{section}.{a}", f"a known {words[0]}")
        for b, count in row.items():
            require(b in inner_index, source, f"{section}.{a}.{b}", f"a known {words[1]}")
            require(count >= 0, source, f"{section}.{a}.{b}", f"a {words[2]} >= 0, got {count}")
            if count:
                out[outer_index[a]][inner_index[b]] = count
    return out


def counts_json(
    counts: Sequence[dict[int, int]], outer: Sequence[str], inner: Sequence[str]
) -> dict[str, dict[str, int]]:
    """The inverse of :func:`parse_counts`: ``{outer id: {inner id: count}}`` without zero counts."""
    return {outer[a]: {inner[b]: int(n) for b, n in sorted(row.items()) if n} for a, row in enumerate(counts)}


def field_path(loc: tuple[Any, ...]) -> str:
    """``("operators", 2, "max_replicas")`` -> ``"operators[2].max_replicas"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def validate(spec: type[Spec], data: Any, source: str) -> Spec:
    """Validate ``data`` against a pydantic schema; the first error becomes an :class:`InputError`."""
    if not isinstance(data, dict):
        raise InputError(source, "", f"expected a JSON object, got {type(data).__name__}")
    try:
        return spec.model_validate(data)
    except ValidationError as error:
        field, message = _first_error(spec, error)
    # raised outside the handler: the pydantic error (every error, in pydantic's own form) is not kept
    # as its context
    raise InputError(source, field, message)


def _first_error(spec: type[BaseModel], error: ValidationError) -> tuple[str, str]:
    """The field and message of a validation's first error. A function of its own: the list of every
    error (10 million for a list of 10 million bad numbers) dies with its frame, where a frame kept by
    the raised error's traceback would keep it alive."""
    errors = error.errors()
    # a misspelt field is both unknown and missing: name the unknown one, with the field it resembles
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    message = first["msg"]
    if first["type"] == "value_error":  # a validator's own message says what it got
        message = str(first.get("ctx", {}).get("error", message))
    elif first["type"] == "extra_forbidden":
        loc = tuple(first["loc"])
        hint = did_you_mean(str(loc[-1]), _field_names(spec, loc[:-1]))
        missing = [str(e["loc"][-1]) for e in errors if e["type"] == "missing" and tuple(e["loc"][:-1]) == loc[:-1]]
        message += hint or (f" (missing: {', '.join(missing)})" if missing else "")
    elif first["type"] != "missing":
        given = repr(first.get("input"))
        message += f" (got {given if len(given) <= 60 else given[:59] + '…'})"
    return field_path(tuple(first["loc"])), message


def _field_names(spec: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the schema reached by ``loc`` (list indexes and dict keys pass through)."""
    model: type[BaseModel] | None = spec
    for part in loc:
        if model is None:
            return []
        if isinstance(part, str) and part in model.model_fields:
            model = _model_in(model.model_fields[part].annotation)
    return [] if model is None else [f.alias or name for name, f in model.model_fields.items()]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (``list[Operator]``, ``dict[str, Node] | None``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None


def require(condition: bool, source: str, field_name: str, expected: str) -> None:
    """Raise an :class:`InputError` naming ``field_name`` unless ``condition`` holds."""
    if not condition:
        raise InputError(source, field_name, expected)
