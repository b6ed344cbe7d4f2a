"""The one exception type for bad input: it carries the file, the field and what was expected."""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad input. The CLI prints ``str(error)`` as one line and exits with code 2."""

    def __init__(self, source: str, field: str, expected: str) -> None:
        self.source = source
        self.field = field
        self.expected = expected
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {expected}")

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
