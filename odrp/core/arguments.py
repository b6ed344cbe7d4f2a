"""The arguments of a run as the command line and the Python API name them.

The CLI's ``odrp solve --time-limit 60 --param iterations=200`` is the API's
``odrp.solve(..., time_limit=60, iterations=200)``. Bad input names what its reader typed: a flag on
the command line (source ``command line``), an argument in Python (source :data:`ARGUMENT`).
:func:`check_limits` checks the numbers both take; :func:`in_api_words` turns a message written in
flags (the methods and the settings speak the command line's language) into the API's names.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from odrp.core.errors import InputError

COMMAND_LINE = "command line"
"""The source of bad input given as flags."""

ARGUMENT = "<argument>"
"""The source of bad input given as arguments of an API function."""

_FLAG = re.compile(r"--param (?P<option>[A-Za-z_][\w.]*)|--(?P<flag>[a-z][a-z-]*)")


def flag(name: str) -> str:
    """The command line's flag for an API argument: ``time_limit`` -> ``--time-limit``."""
    return "--" + name.replace("_", "-")


def in_api_words(text: str) -> str:
    """``text`` with every flag as the API's argument: ``--param NAME`` -> ``NAME`` (a method setting is a
    keyword argument), ``--time-limit`` -> ``time_limit``."""
    return _FLAG.sub(lambda m: m.group("option") or m.group("flag").replace("-", "_"), text)


def as_api_error(error: InputError) -> InputError:
    """An error about flags (source ``command line``) as the same error about the API's arguments."""
    if error.source != COMMAND_LINE:
        return error
    return type(error)(ARGUMENT, in_api_words(error.field), in_api_words(error.expected))


def check_limits(
    time_limit: float | None,
    memory_limit: float | None,
    mip_gap: float | None,
    *,
    source: str,
    name: Callable[[str], str],
) -> None:
    """``time_limit`` (seconds) and ``memory_limit`` (GB) positive and finite, ``mip_gap`` in [0, 1); bad
    input names each by ``name(argument)`` (:func:`flag` on the command line)."""
    for argument, value in (("time_limit", time_limit), ("memory_limit", memory_limit)):
        if value is not None and not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
            raise InputError(source, name(argument), f"a positive finite number, got {value!r}")
    if mip_gap is not None and not (isinstance(mip_gap, int | float) and math.isfinite(mip_gap) and 0 <= mip_gap < 1):
        raise InputError(source, name("mip_gap"), f"a relative gap in [0, 1), got {mip_gap!r}")
