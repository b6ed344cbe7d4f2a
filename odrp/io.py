"""Reading instance and solution files, with one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from odrp.core.errors import InputError, read_text
from odrp.core.kind import ProblemKind
from odrp.registry import get_kind

MAX_FILE_BYTES = 256 * 1024**2
"""The largest JSON file read (the largest instance of the toolkit's sets is a few MB)."""
MAX_DEPTH = 64
"""The deepest nesting of arrays and objects accepted (instances nest four or five levels)."""


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; a missing, oversized, too deeply nested or invalid file, or one that is no regular
    file (a FIFO, a device), raises :class:`InputError`.

    ``NaN``, ``Infinity`` and ``-Infinity``, which Python's parser accepts, are refused: every number
    of an instance or a solution is finite.
    """
    return parse_json(read_text(path, "JSON file", MAX_FILE_BYTES), str(path))


def parse_json(text: str, source: str) -> Any:
    """Parse JSON text with the rules of :func:`read_json`."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant(text, source))
    except json.JSONDecodeError as error:
        raise InputError(source, f"line {error.lineno} column {error.colno}", f"valid JSON ({error.msg})") from None
    except RecursionError:
        data = None
    if data is None or _depth(data) > MAX_DEPTH:
        if data is None and text.strip() == "null":
            return None
        raise InputError(source, "", f"JSON nested at most {MAX_DEPTH} levels deep")
    return data


def _refuse_constant(text: str, source: str):
    """A ``parse_constant`` hook that refuses ``NaN`` and the infinities, naming where the first one is."""

    def refuse(name: str) -> None:
        at = text.find(name)
        line = text.count("\n", 0, at) + 1
        column = at - text.rfind("\n", 0, at)
        raise InputError(source, f"line {line} column {column}", f"a finite number, got {name} (not JSON)")

    return refuse


def _depth(data: Any) -> int:
    """How deeply arrays and objects nest in ``data`` (0 for a scalar), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend((v, level + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def load_instance(path: str | Path) -> tuple[ProblemKind, Any]:
    """Read an instance file, find its kind from its ``problem`` field, validate and compile it."""
    data = read_json(path)
    return parse_instance(data, str(path))


def parse_instance(data: Any, source: str) -> tuple[ProblemKind, Any]:
    if not isinstance(data, dict):
        raise InputError(source, "", f"expected a JSON object, got {type(data).__name__}")
    if "problem" not in data:
        raise InputError(source, "problem", 'the problem kind (for example "odrp")')
    kind = get_kind(str(data["problem"]), source)
    return kind, kind.load(data, source)


def read_solution(path: str | Path) -> dict[str, Any]:
    """Read a solution file: a solution JSON, or a Result JSON whose ``solution`` is taken."""
    data = read_json(path)
    if isinstance(data, dict) and "solution" in data and "status" in data:
        if data["solution"] is None:
            raise InputError(str(path), "solution", "a solution (this Result has none)")
        return data["solution"]
    if not isinstance(data, dict):
        raise InputError(str(path), "", f"expected a JSON object, got {type(data).__name__}")
    return data
