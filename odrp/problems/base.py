"""What every problem kind shares: the evaluation record and turning schema errors into one line."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from odrp.errors import InputError

Spec = TypeVar("Spec", bound=BaseModel)


@dataclass
class Evaluation:
    """The evaluator's verdict on one solution: feasibility, objective and every metric."""

    feasible: bool
    objective: float | None
    metrics: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)


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
        first = error.errors()[0]
        message = first["msg"]
        if first["type"] not in ("missing", "extra_forbidden"):
            message += f" (got {first.get('input')!r})"
        raise InputError(source, field_path(tuple(first["loc"])), message) from None


def require(condition: bool, source: str, field_name: str, expected: str) -> None:
    """Raise an :class:`InputError` naming ``field_name`` unless ``condition`` holds."""
    if not condition:
        raise InputError(source, field_name, expected)
