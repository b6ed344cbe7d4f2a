"""The one exception type for bad input: it carries the file, the field and what was expected."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

MAX_LINE = 990
"""The longest message: with the CLI's ``error: `` prefix a line stays within 1,000 characters."""


def _cut(text: str, most: int) -> str:
    """``text`` shortened to ``most`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= most else text[: max(0, most - 1)] + "…"


def did_you_mean(given: str, known: Iterable[str]) -> str:
    """`` (did you mean 'capacity'?)`` when a known name is close to a misspelt ``given``, else ``""``."""
    close = difflib.get_close_matches(given, [str(name) for name in known], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class InputError(Exception):
    """Bad input. The CLI prints ``str(error)`` as one line and exits with code 2."""

    def __init__(self, source: str, field: str, expected: str) -> None:
        self.source = source
        self.field = field
        self.expected = expected
        where = f"{_cut(source, 300)}: {_cut(field, 200)}" if field else _cut(source, 300)
        super().__init__(f"{where}: {_cut(expected, MAX_LINE - len(where) - 2)}")

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        """Pickle by the three parts (an error raised in a run's child process reaches its parent)."""
        return (type(self), (self.source, self.field, self.expected))


def read_text(path: str | Path, what: str = "text file") -> str:
    """The text of a file; a missing or unreadable file raises :class:`InputError` naming it."""
    source = str(path)
    try:
        return Path(path).read_text()
    except FileNotFoundError:
        raise InputError(source, "", "file not found") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
        raise InputError(source, "", f"a readable {what} ({error.__class__.__name__})") from None
