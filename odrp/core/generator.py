"""Bad generator parameters: a ``ValueError`` whose message starts with the parameter's name.

A generator raises ``ValueError("NAME: expected ..., got ...")`` naming one of its own parameters, the
name a grid's ``params:`` and the Python API use. The ``odrp generate`` command turns the name into
the flag it reads (``weights_profile`` -> ``--weights-profile``), so an error names what the user typed.
"""

from __future__ import annotations

from collections.abc import Collection


def at_least(least: int, **params: int) -> None:
    """``ValueError`` naming the first of ``params`` below ``least``."""
    for name, value in params.items():
        if value < least:
            raise ValueError(f"{name}: at least {least}, got {value}")


def flag(name: str) -> str:
    """The command-line flag of a generator parameter."""
    return "--" + name.replace("_", "-")


def split_parameter(error: ValueError, parameters: Collection[str]) -> tuple[str, str] | None:
    """(parameter, what was expected) when ``error`` starts with one of ``parameters`` and a colon."""
    name, sep, expected = str(error).partition(": ")
    return (name, expected) if sep and name in parameters else None
