"""The one place that assembles the toolkit: every problem kind and every method, by name.

Nothing registers itself on import. Each kind's ``kind.py`` declares its :class:`ProblemKind`; each
heuristic module declares a tuple ``HEURISTICS``; this module lists them. Adding a kind or a family
of heuristics is one line here. A researcher's own heuristics come in as *plugins*: modules that
declare ``HEURISTICS`` the same way, loaded by an explicit :func:`load_plugins` (the benchmark grids
name them under ``plugins:``).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from odrp.core.errors import InputError
from odrp.core.kind import ProblemKind
from odrp.core.method import Heuristic
from odrp.heuristics import knapsack, latency, pathmap, replication, rstorm, storm, storm_ras, throughput
from odrp.kinds.knapsack.kind import KINDS as KNAPSACK_KINDS
from odrp.kinds.latency.kind import KIND as LATENCY
from odrp.kinds.pathmap.kind import KIND as PATHMAP
from odrp.kinds.replication.kind import KIND as ODRP
from odrp.kinds.throughput.exact import mkp_view
from odrp.kinds.throughput.kind import KIND as THROUGHPUT

KINDS: dict[str, ProblemKind] = {kind.name: kind for kind in (ODRP, THROUGHPUT, PATHMAP, LATENCY, *KNAPSACK_KINDS)}
"""Every problem kind by its name (the ``problem`` field of an instance file)."""

_TASK_VIEW_KINDS = tuple(name for name, kind in KINDS.items() if kind.taskview is not None)


def _declared(modules: tuple[ModuleType, ...]) -> dict[str, Heuristic]:
    out: dict[str, Heuristic] = {}
    for module in modules:
        for heuristic in module.HEURISTICS:
            if heuristic.on_task_view:  # Storm's schedulers: every kind that has a task view
                heuristic = dataclasses.replace(heuristic, kinds=_TASK_VIEW_KINDS)
            if heuristic.name in out or heuristic.name == "exact":
                raise ValueError(f"method name {heuristic.name!r} is taken")
            out[heuristic.name] = heuristic
    return out


HEURISTICS: dict[str, Heuristic] = _declared(
    (storm, replication, pathmap, latency, rstorm, storm_ras, knapsack, throughput, mkp_view)
)
"""Every method other than ``exact``, by name: the heuristics of the papers and ours."""

_PLUGINS: dict[str, Heuristic] = {}
_LOADED: set[str] = set()


def get_kind(name: str, source: str = "<input>", field_name: str = "problem") -> ProblemKind:
    """The kind called ``name``; an :class:`InputError` naming ``field_name`` if there is none."""
    if name not in KINDS:
        raise InputError(source, field_name, f"one of {', '.join(KINDS)}, got {name!r}")
    return KINDS[name]


def heuristics() -> dict[str, Heuristic]:
    """Every heuristic: the toolkit's and those of the plugins loaded so far."""
    return {**HEURISTICS, **_PLUGINS}


def load_plugins(modules: list[str] | tuple[str, ...], source: str = "<grid>", beside: Path | None = None) -> None:
    """Import plugin modules and add the heuristics each declares in ``HEURISTICS``.

    ``beside``: a folder searched before ``sys.path`` (a grid's own folder), then its ``plugins/``
    folder (where an export ships the plugins' sources: :mod:`odrp.bench.provenance`). A module is loaded once
    per process; a name that is taken, a module that fails to import (``SystemExit`` included) or one
    without ``HEURISTICS`` is bad input naming ``plugins[k]``.
    """
    for k, name in enumerate(modules):
        if name in _LOADED:
            continue
        where = f"plugins[{k}]"
        try:
            module = _import(name, beside)
        except (Exception, SystemExit) as error:  # an import can fail in any way; report it as bad input
            raise InputError(source, where, f"an importable module ({type(error).__name__}: {error})") from None
        declared = getattr(module, "HEURISTICS", None)
        if not isinstance(declared, tuple | list) or not all(isinstance(h, Heuristic) for h in declared):
            raise InputError(source, where, "a module that declares HEURISTICS, a tuple of odrp.core.method.Heuristic")
        for heuristic in declared:
            if heuristic.name == "exact" or heuristic.name in HEURISTICS:
                raise InputError(source, where, f"heuristic names that are not taken, got {heuristic.name!r}")
            _PLUGINS[heuristic.name] = heuristic
        _LOADED.add(name)


def _import(name: str, beside: Path | None) -> Any:
    """Import ``name``, looking in ``beside`` and then ``beside/plugins`` first."""
    if beside is None:
        return importlib.import_module(name)
    folders = [str(beside), str(beside / "plugins")]
    sys.path[:0] = folders
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # no __pycache__ in a checked export
    try:
        return importlib.import_module(name)
    finally:
        sys.dont_write_bytecode = writes
        for folder in folders:
            sys.path.remove(folder)


def unload_plugins() -> None:
    """Forget every plugin loaded so far (the next :func:`load_plugins` imports them afresh)."""
    _PLUGINS.clear()
    _LOADED.clear()
