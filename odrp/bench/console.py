"""Tables on a terminal whose first column (the method) is never cut, at any width.

Rich fits a table that is wider than the terminal by wrapping its cells and, when that is not enough,
by cutting every column with an ellipsis, the first one included (``exact/hi…``). :func:`print_table`
splits the columns instead: the first column heads every part, unwrapped (``no_wrap``, at least as
wide as its longest cell), and the other columns are packed, in their order, into as few tables as
fit the console's width without shrinking any column. A column too wide to fit beside the first
column even alone wraps its own cells, never the first column's. At 80 columns the report's table
is thus two or three tables, each with every method name whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def print_table(
    console: Any,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    left: Sequence[str] = ("method", "statuses"),
) -> None:
    """Print ``rows`` under ``headers`` as one table, or as several that each fit ``console.width``
    (see the module docstring); the columns named in ``left`` are left-aligned, the others right."""
    parts = _pack(console, title, headers, rows, left)
    for k, columns in enumerate(parts, 1):
        suffix = f" ({k} of {len(parts)})" if len(parts) > 1 else ""
        console.print(_table(title + suffix, headers, rows, left, columns))


def _pack(
    console: Any, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[str]
) -> list[list[int]]:
    """The columns of each part: the first column, then as many of the next as fit the width."""
    parts: list[list[int]] = []
    current: list[int] = []
    for column in range(1, len(headers)):
        trial = [*current, column]
        if current and _width(console, _table(title, headers, rows, left, trial)) > console.width:
            parts.append(current)
            current = [column]
        else:
            current = trial
    return [*parts, current] if current or not parts else parts


def _width(console: Any, table: Any) -> int:
    """The width ``table`` takes with no column shrunk (measured as if the console had no right edge)."""
    return int(console.measure(table, options=console.options.update_width(1_000_000)).maximum)


def _table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[str], columns: Sequence[int]
) -> Any:
    from rich.table import Table

    table = Table(title=title)
    first = max([len(headers[0]), *(len(str(row[0])) for row in rows)])
    table.add_column(headers[0], no_wrap=True, min_width=first, justify="left")
    for column in columns:
        header = headers[column]
        table.add_column(header, justify="left" if header.replace("\n", " ") in left else "right")
    for row in rows:
        table.add_row(str(row[0]), *(str(row[column]) for column in columns))
    return table
