"""Taking the model elsewhere: a kind's exact model as an MPS or LP file with a map, and a solution back.

:func:`write_model` writes the one MILP a formulation solves on an instance
(:attr:`odrp.core.kind.ProblemKind.models`) with :func:`odrp.core.modelfile.write`, and beside it
``MODEL.map.json``:

- ``kind``, ``instance`` (its name, its source and the SHA-256 of its canonical JSON,
  :func:`odrp.core.canonical.instance_sha256`), ``asked`` (the formulation asked for), ``formulation``
  (the one written: ``auto`` resolved), ``note`` (which model, and why), ``settings`` (the ``--param``
  options the model was built with), ``params`` (the throughput kind's ``rho``), ``sense``, ``model``
  (the file's name) and ``toolkit`` (the version);
- ``variables``: every variable of the file by name, with what it means for the kind's solution, or
  null for an auxiliary that the solution does not depend on.

:func:`model_solution` brings a solver's solution of the model back (:mod:`odrp.core.solfile` reads
it): the map must be of the instance given (by SHA-256) and of its kind; the model is rebuilt from the
instance as the map says; every value must name a variable of the map (a dense format, every one of
them), be a finite number within its bounds and integral where the variable is integer; the kind's
decoder turns the values into the kind's solution JSON, which the evaluator then judges from the
instance alone (:func:`odrp.run.judge`): ``verified`` when it finds the solution feasible, with the
objective it computes itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import odrp
from odrp.core import modelfile, solfile
from odrp.core.canonical import instance_sha256
from odrp.core.errors import InputError, read_text
from odrp.core.kind import ProblemKind, require
from odrp.core.modelfile import NoModel, Writable
from odrp.core.result import Result
from odrp.core.settings import settings_for
from odrp.io import MAX_FILE_BYTES, parse_json
from odrp.run import judge

MAP_FORMAT = "odrp-model-map/1"
"""The ``format`` field of every map this version writes."""

__all__ = ["MAP_FORMAT", "NoModel", "WrittenModel", "map_path", "model_solution", "write_model"]


@dataclass(frozen=True)
class WrittenModel:
    """What :func:`write_model` wrote: the model file, its map, the formulation written and why."""

    path: str
    map_path: str
    formulation: str
    note: str
    variables: int
    sense: str


def map_path(model: str | Path) -> Path:
    """``MODEL.map.json`` beside ``MODEL.mps`` or ``MODEL.lp``."""
    model = Path(model)
    return model.with_name(model.stem + ".map.json")


def _settings(kind: ProblemKind, options: dict[str, Any], source: str, where: str) -> Any:
    if kind.settings is None:
        if options:
            raise InputError(source, where, f"no options: the {kind.name} kind's exact method has none")
        return None
    return settings_for(kind.settings, options, source=source, where=where)


def writable(
    kind: ProblemKind,
    instance: Any,
    formulation: str,
    options: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    *,
    source: str = "command line",
    where: tuple[str, str] = ("--formulation", "--param"),
) -> Writable:
    """The kind's one MILP for ``formulation`` (bad input, naming ``where``, for an unknown formulation or
    option; :class:`NoModel` when the formulation is no one MILP)."""
    if kind.models is None:
        raise NoModel(f"the {kind.name} kind writes no model")
    if formulation not in kind.formulations:
        expected = f"one of {', '.join(kind.formulations)} (the {kind.name} kind's formulations), got {formulation!r}"
        raise InputError(source, where[0], expected)
    settings = _settings(kind, dict(options or {}), source, where[1])
    return kind.models(instance, formulation, settings, dict(params or {}))


def write_model(
    kind: ProblemKind,
    instance: Any,
    data: dict[str, Any],
    out: str | Path,
    *,
    formulation: str = "auto",
    options: dict[str, Any] | None = None,
    rho: float | None = None,
    source: str = "<instance>",
) -> WrittenModel:
    """Write the model of ``instance`` (its JSON ``data``, read from ``source``) to ``out`` and its map beside."""
    modelfile.model_format(out)
    params = {} if rho is None else {"rho": rho}
    model = writable(kind, instance, formulation, options, params)
    if rho is not None and "rho" not in model.params:
        expected = "the throughput kind's textbook model (a step P(rho) of its bisection)"
        raise InputError("command line", "--rho", expected)
    columns = modelfile.write(model, out)
    record = {
        "format": MAP_FORMAT,
        "toolkit": odrp.__version__,
        "kind": kind.name,
        "instance": {"name": getattr(instance, "name", "unnamed"), "source": source, "sha256": instance_sha256(data)},
        "asked": formulation,
        "formulation": model.formulation,
        "note": model.note,
        "settings": dict(options or {}),
        "params": model.params,
        "sense": getattr(instance, "sense", kind.sense),
        "model": Path(out).name,
        "variables": {name: column.meaning for name, column in columns.items()},
    }
    target = map_path(out)
    target.write_text(json.dumps(record, indent=1) + "\n")
    return WrittenModel(str(out), str(target), model.formulation, model.note, len(columns), record["sense"])


# ------------------------------------------------------------------------------------------ back


def read_map(path: str | Path) -> dict[str, Any]:
    """A map file's JSON (a regular file; its fields are checked by :func:`model_solution`)."""
    return parse_json(read_text(path, "map file", MAX_FILE_BYTES), str(path))


def read_model_solution(path: str | Path) -> str:
    """A model solution file's text (a regular file of at most the JSON limit)."""
    return read_text(path, "solution file", MAX_FILE_BYTES)


def _checked_map(record: Any, source: str, kind: ProblemKind, digest: str, instance_source: str) -> None:
    require(isinstance(record, dict), source, "", "a model map (a JSON object written by odrp model)")
    require(record.get("format") == MAP_FORMAT, source, "format", f"{MAP_FORMAT!r} (a map written by odrp model)")
    require(
        record.get("kind") == kind.name,
        source,
        "kind",
        f"{kind.name!r}, the kind of {instance_source}, got {str(record.get('kind'))[:40]!r}",
    )
    given = record.get("instance", {}).get("sha256") if isinstance(record.get("instance"), dict) else None
    require(
        given == digest,
        source,
        "instance.sha256",
        f"the SHA-256 of {instance_source} ({digest[:16]}...), got {str(given)[:16]}...: "
        "the map and its model were written for another instance",
    )
    for key, kind_of in (("asked", str), ("formulation", str), ("settings", dict), ("params", dict)):
        require(isinstance(record.get(key), kind_of), source, key, f"a {kind_of.__name__} (as odrp model writes it)")
    variables = record.get("variables")
    require(
        isinstance(variables, dict) and all(isinstance(v, str | None) for v in variables.values()),
        source,
        "variables",
        "an object of variable name -> meaning (or null)",
    )


def model_solution(
    kind: ProblemKind,
    instance: Any,
    digest: str,
    text: str,
    source: str,
    record: Any,
    map_source: str,
    instance_source: str = "the instance",
) -> tuple[dict[str, Any], solfile.SolutionValues]:
    """The kind's solution JSON of a solver's solution (its file's ``text``, read from ``source``) of the
    model that the map ``record`` (read from ``map_source``) describes, for the instance whose canonical JSON
    has the SHA-256 ``digest``; bad input raises :class:`InputError`."""
    _checked_map(record, map_source, kind, digest, instance_source)
    values = solfile.parse(text, source)
    try:
        model = writable(
            kind,
            instance,
            record["asked"],
            record["settings"],
            record["params"],
            source=map_source,
            where=("asked", "settings"),
        )
    except NoModel as error:
        raise InputError(map_source, "asked", f"a formulation with one model ({error})") from None
    require(
        model.formulation == record["formulation"],
        map_source,
        "formulation",
        f"{model.formulation!r}, the model {record['asked']!r} gives on this instance (a map of another version?)",
    )
    listed: dict[str, Any] = record["variables"]
    columns = modelfile.columns_of(model)
    unknown = next((name for name in listed if name not in columns), None)
    require(
        unknown is None,
        map_source,
        f"variables.{unknown}",
        "a variable of the model rebuilt from the instance (the map does not match it)",
    )
    for name, value in values.values.items():
        if name == modelfile.CONSTANT:
            continue
        require(
            name in listed,
            source,
            name,
            f"a variable of the model {record.get('model', '')} ({len(listed)} in {map_source}), got an unknown name",
        )
        modelfile.check_value(name, value, columns[name], source)
    if values.dense:
        missing = [name for name in listed if name not in values.values]
        require(
            not missing,
            source,
            missing[0] if missing else "",
            f"a value for every variable of the model ({len(missing)} missing; a {values.format} file lists every "
            "variable)",
        )
    return modelfile.decode(model, values.values, source), values


def judged(
    kind: ProblemKind,
    instance: Any,
    solution: dict[str, Any],
    values: solfile.SolutionValues,
    *,
    method: str,
    record: dict[str, Any],
    files: dict[str, str],
) -> Result:
    """The evaluator's Result of a model solution: verified when it is feasible, with the evaluator's objective
    (the objective the file states, if any, is kept in ``metrics.method_stats.model_objective``)."""
    return judge(
        kind,
        instance,
        method=method,
        solver=values.format,
        status="feasible",
        solution=solution,
        own_objective=None,
        bound=None,
        runtime_s=None,  # type: ignore[arg-type]
        stats={
            "formulation": record["formulation"],
            "model": record.get("model"),
            "model_objective": values.objective,
            "solver_status": values.status,
            **files,
        },
        scores_itself=False,
    )
