"""The memory budget of a run: a share of the machine's memory unless the user names one.

Two guards use it:

- **before a model is built**, an exact method estimates its model's size from the instance
  (variables, constraints, nonzeros) and calls :func:`check_model`, which refuses a model whose
  estimated memory exceeds the budget with an :class:`ModelTooLarge` (bad input: one line, exit 2);
- **while a method runs**, :mod:`odrp.core.limits` caps the process that runs it at the budget, so
  that a run that still grows past it ends as an error, never by the kernel's out-of-memory killer.

The budget in force is set with :func:`memory_budget` (the CLI's ``--memory-limit`` and a grid's
``memory_limit`` do it) and read with :func:`budget`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from odrp.core.errors import InputError

DEFAULT_SHARE = 0.5
"""The default budget: this share of the machine's physical memory."""

GB = 1024**3

BYTES_PER_VARIABLE = 1_500
"""Estimated bytes per model variable: the Pyomo component, its index, and the solver's copy
(measured with ``benchmarks/model_memory.py``)."""
BYTES_PER_CONSTRAINT = 1_500
"""Estimated bytes per constraint row: the Pyomo component and its index."""
BYTES_PER_NONZERO = 250
"""Estimated bytes per nonzero: the Pyomo expression term and the solver's matrix entry."""

_budget: ContextVar[int | None] = ContextVar("memory_budget", default=None)


class ModelTooLarge(InputError):
    """A model whose estimated size is over the memory budget, refused before it is built."""


def machine_memory() -> int:
    """The machine's physical memory in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_budget() -> int:
    """:data:`DEFAULT_SHARE` of the machine's memory, in bytes."""
    return int(DEFAULT_SHARE * machine_memory())


def budget() -> int:
    """The memory budget in force, in bytes."""
    chosen = _budget.get()
    return default_budget() if chosen is None else chosen


@contextmanager
def memory_budget(limit: int | None) -> Iterator[int]:
    """Make ``limit`` bytes (None: the default) the budget in force inside the ``with`` block."""
    token = _budget.set(limit)
    try:
        yield budget()
    finally:
        _budget.reset(token)


def estimate(variables: int, constraints: int, nonzeros: int) -> int:
    """Estimated bytes to build and solve a model of this size."""
    return variables * BYTES_PER_VARIABLE + constraints * BYTES_PER_CONSTRAINT + nonzeros * BYTES_PER_NONZERO


def gigabytes(size: int) -> str:
    """``12.0 GB``, ``0.35 GB``: a size for a message."""
    return f"{size / GB:.3g} GB"


def check_model(variables: int, constraints: int, nonzeros: int, what: str) -> None:
    """Refuse, before it is built, a model whose estimated memory is over the budget.

    ``what`` names the model in the message (``"the paper formulation"``).
    """
    size = estimate(variables, constraints, nonzeros)
    limit = budget()
    if size > limit:
        raise ModelTooLarge(
            "command line",
            "--memory-limit",
            f"at least {gigabytes(size)} for {what} ({variables:,} variables, {constraints:,} constraints, "
            f"{nonzeros:,} nonzeros); the memory budget is {gigabytes(limit)}",
        )
