"""The one exception type for bad input (it carries the file, the field and what was expected), and the one
way an input file is opened: only when it is a regular file (:func:`open_regular`)."""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

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


def _file_type(mode: int) -> str:
    """What a file that is not a regular file is, for the message."""
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")


def require_regular(path: str | Path, what: str = "file") -> None:
    """Raise :class:`InputError` unless ``path`` is a regular file (links followed): "file not found", or
    "a regular file" for a FIFO, a device, a socket or a directory. It only looks at the file's type, so the
    command line checks its file arguments with it before it imports the solvers (seconds on a busy machine)."""
    source = str(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(source, "", "file not found") from None
    except OSError as error:
        raise InputError(source, "", f"a readable {what} ({error.__class__.__name__})") from None
    if not stat.S_ISREG(mode):
        raise InputError(source, "", f"a regular file ({what}), got {_file_type(mode)}")


def open_regular(path: str | Path, what: str = "file", max_bytes: int | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, only when it is a regular file (links followed).

    A FIFO, a device, a socket or a directory raises :class:`InputError` naming the file and "a
    regular file" before anything is read: reading a FIFO waits for a writer and a device such as
    /dev/zero never ends, so neither may be read before a time limit's clock starts. The file is
    opened without blocking and checked again on the open descriptor, so it cannot be swapped for a
    FIFO in between. ``max_bytes``: a larger file is refused too. Every file the toolkit reads (an
    instance, a solution, a grid, a model solution, a map, a manifest) is opened here.
    """
    source = str(path)
    require_regular(path, what)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputError(source, "", "file not found") from None
    except OSError as error:
        raise InputError(source, "", f"a readable {what} ({error.__class__.__name__})") from None
    status = os.fstat(fd)
    if not stat.S_ISREG(status.st_mode) or (max_bytes is not None and status.st_size > max_bytes):
        os.close(fd)
        if stat.S_ISREG(status.st_mode):
            mb = 1024**2
            raise InputError(source, "", f"a {what} of at most {max_bytes // mb} MB, got {status.st_size / mb:.0f} MB")
        raise InputError(source, "", f"a regular file ({what}), got {_file_type(status.st_mode)}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_bytes(path: str | Path, what: str = "file", max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file (:func:`open_regular`); anything else raises :class:`InputError` naming it."""
    with open_regular(path, what, max_bytes) as handle:
        try:
            return handle.read()
        except OSError as error:
            raise InputError(str(path), "", f"a readable {what} ({error.__class__.__name__})") from None


def read_text(path: str | Path, what: str = "text file", max_bytes: int | None = None) -> str:
    """The UTF-8 text of a regular file (:func:`open_regular`); anything else raises :class:`InputError` naming it."""
    try:
        return read_bytes(path, what, max_bytes).decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(str(path), "", f"a readable {what} ({error.__class__.__name__})") from None
