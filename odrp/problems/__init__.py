"""The registry of problem kinds: name -> :class:`~odrp.problems.base.ProblemKind`.

Each kind lives in its own module, which defines ``KIND``; adding a kind is one line in ``_MODULES``.
"""

from __future__ import annotations

import importlib

from odrp.errors import InputError
from odrp.problems.base import ProblemKind

_MODULES = (
    "odrp.problems.odrp",
    "odrp.problems.throughput",
    "odrp.problems.pathmap",
    "odrp.problems.latency",
    "odrp.problems.knapsack",
)


def _collect() -> dict[str, ProblemKind]:
    kinds: dict[str, ProblemKind] = {}
    for module in _MODULES:
        entry = importlib.import_module(module).KIND
        for kind in entry if isinstance(entry, tuple) else (entry,):
            kinds[kind.name] = kind
    return kinds


KINDS: dict[str, ProblemKind] = _collect()


def get_kind(name: str, source: str = "<input>", field_name: str = "problem") -> ProblemKind:
    if name not in KINDS:
        raise InputError(source, field_name, f"one of {', '.join(KINDS)}, got {name!r}")
    return KINDS[name]


__all__ = ["KINDS", "ProblemKind", "get_kind"]
