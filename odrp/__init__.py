"""Exact operator replication and placement for stream processing, and heuristics scored against it.

Data flows one way: instance JSON -> kind (validated) -> method (exact model or heuristic)
-> solution -> evaluator -> Result, and imports run one way: ``odrp.core`` <- a kind's problem side
<- ``odrp.heuristics`` <- a kind's exact side <- ``odrp.registry`` <- ``odrp.run`` <- ``odrp.bench``
<- ``odrp.cli`` and ``odrp.api``. The layers and contracts are described in docs/design.md.

The Python API (:mod:`odrp.api`) is available from the package itself: ``odrp.load``, ``odrp.solve``,
``odrp.evaluate``, ``odrp.generate``, ``odrp.methods``, ``odrp.bench``, ``odrp.read``, and ``odrp.InputError``, the
exception of bad input. They are imported on first use, so that ``import odrp`` stays instant.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_API = ("Instance", "bench", "evaluate", "generate", "load", "methods", "read", "solve")
__all__ = ["InputError", *_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from odrp import api

        return getattr(api, name)
    if name == "InputError":
        from odrp.core.errors import InputError

        return InputError
    raise AttributeError(f"module 'odrp' has no attribute {name!r}")
