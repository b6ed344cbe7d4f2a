"""The one exception type for bad input: it carries the file, the field and what was expected."""

from __future__ import annotations


class InputError(Exception):
    """Bad input. The CLI prints ``str(error)`` as one line and exits with code 2."""

    def __init__(self, source: str, field: str, expected: str) -> None:
        self.source = source
        self.field = field
        self.expected = expected
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {expected}")
