"""Settings as data: every tunable of a method is a field of one frozen dataclass.

Each exact method and each heuristic declares a frozen dataclass of its settings, with a docstring
under every field saying what it does. Its defaults are the method's defaults; callers change a
field with :func:`dataclasses.replace` and pass the object in (it is pickled as it is to worker
processes). Nothing is read from module globals.

:func:`from_options` builds such an object from ``name -> value`` pairs, as they come from the
command line (``--param NAME=VALUE``, values as text) or from a grid file (values as YAML gives them):
each value is converted to its field's type (bool, int, float, str, a Literal, a dict for a JSON
object, or None where the type allows it) and checked, and anything else is bad input naming
the option. A field may bound its value with ``dataclasses.field(metadata={"ge": 0})`` (also
``"gt"``, ``"le"``, ``"lt"``).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from odrp.core.errors import InputError, did_you_mean

S = TypeVar("S")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def from_options(
    cls: type[S], options: Mapping[str, Any], *, source: str = "command line", where: str = "--param"
) -> S:
    """``cls()`` with the fields named in ``options`` replaced by their converted values.

    A field that is itself a settings dataclass (a sub-search's settings) is reached with a dotted
    name, ``group.NAME`` (or, from a grid file, a mapping under ``group``). Raises
    :class:`InputError` naming ``where NAME`` for a name that is no field of ``cls`` or a value that
    does not fit the field's type or bounds.
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {}
    for name, raw in options.items():
        head, dot, rest = name.partition(".")
        if head not in fields:
            expected = f"an option of this method ({', '.join(names(cls))})" + did_you_mean(head, fields)
            raise InputError(source, _field(where, name), expected)
        if _is_settings(hints[head]):
            if dot:
                groups.setdefault(head, {})[rest] = raw
            elif isinstance(raw, Mapping):
                groups.setdefault(head, {}).update(raw)
            else:
                expected = f"a group of options: give {head}.NAME ({', '.join(names(hints[head]))})"
                raise InputError(source, _field(where, name), expected)
        elif dot:
            raise InputError(source, _field(where, name), f"an option of this method ({', '.join(names(cls))})")
        else:
            values[name] = convert(raw, hints[name], fields[name].metadata, source, _field(where, name))
    for head, group in groups.items():
        values[head] = dataclasses.replace(
            getattr(cls(), head),
            **_fields_of(from_options(hints[head], group, source=source, where=_field(where, head)), group),
        )
    return cls(**values)


def settings_for(
    cls: type[S], options: S | Mapping[str, Any] | None, *, source: str = "command line", where: str = "--param"
) -> S:
    """A method's settings: ``options`` if it is already a ``cls``, else :func:`from_options` of the mapping."""
    if isinstance(options, cls):
        return options
    return from_options(cls, dict(options or {}), source=source, where=where)  # type: ignore[arg-type]


def _is_settings(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _fields_of(settings: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``settings`` that ``given`` names (its other fields keep the parent's defaults)."""
    heads = {name.partition(".")[0] for name in given}
    return {name: getattr(settings, name) for name in heads}


def _field(where: str, name: str) -> str:
    """``--param NAME`` on the command line, ``studies[0].options.greedy.NAME`` in a file."""
    if not where:
        return name
    return f"{where} {name}" if where.startswith("--") and " " not in where else f"{where}.{name}"


def names(cls: type) -> tuple[str, ...]:
    """The option names of a settings class (a group of sub-settings as ``group.*``)."""
    hints = typing.get_type_hints(cls)
    return tuple(f.name + (".*" if _is_settings(hints[f.name]) else "") for f in dataclasses.fields(cls) if f.init)


def convert(raw: Any, hint: Any, metadata: Mapping[str, Any], source: str, field_name: str) -> Any:
    """``raw`` as a value of type ``hint`` within the bounds in ``metadata``; InputError otherwise."""
    value = _typed(raw, hint, source, field_name)
    if isinstance(value, int | float) and not isinstance(value, bool):
        for key, ok, word in (
            ("ge", lambda v, b: v >= b, ">="),
            ("gt", lambda v, b: v > b, ">"),
            ("le", lambda v, b: v <= b, "<="),
            ("lt", lambda v, b: v < b, "<"),
        ):
            if key in metadata and not ok(value, metadata[key]):
                raise InputError(source, field_name, f"a number {word} {metadata[key]}, got {_short(raw)}")
    return value


def _typed(raw: Any, hint: Any, source: str, field_name: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if type(None) in options and (raw is None or (isinstance(raw, str) and raw.lower() in ("none", "null"))):
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _typed(raw, option, source, field_name)
            except InputError as error:
                errors.append(error.expected)
        raise InputError(source, field_name, " or ".join(errors))
    if origin is Literal:
        choices = typing.get_args(hint)
        for choice in choices:
            if raw == choice or (isinstance(raw, str) and raw == str(choice)):
                return choice
        raise InputError(source, field_name, f"one of {', '.join(map(str, choices))}, got {_short(raw)}")
    if hint is bool:
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise InputError(source, field_name, f"true or false, got {_short(raw)}")
    if hint is int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        if isinstance(raw, str):
            try:
                return int(raw)
            except ValueError:
                pass
        raise InputError(source, field_name, f"an integer, got {_short(raw)}")
    if hint is float:
        value: float | None = None
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = float(raw)
        elif isinstance(raw, str):
            try:
                value = float(raw)
            except ValueError:
                value = None
        if value is None or not math.isfinite(value):
            raise InputError(source, field_name, f"a finite number, got {_short(raw)}")
        return value
    if hint is str:
        if isinstance(raw, str):
            return raw
        raise InputError(source, field_name, f"text, got {_short(raw)}")
    if hint is dict or origin is dict:
        if isinstance(raw, Mapping):
            return dict(raw)
        raise InputError(source, field_name, f"a JSON object, got {_short(raw)}")
    raise InputError(source, field_name, f"a value this option cannot take from text ({hint}), got {_short(raw)}")


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
