"""Reading instance and solution files, with one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from odrp.core.errors import InputError, read_text
from odrp.core.kind import ProblemKind
from odrp.registry import get_kind


def read_json(path: str | Path) -> Any:
    """Parse a JSON file; a missing file or invalid JSON raises :class:`InputError`."""
    source = str(path)
    text = read_text(path, "JSON file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(source, f"line {error.lineno} column {error.colno}", f"valid JSON ({error.msg})") from None


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
