"""docs/solvers.md's table of kinds and solvers is what the kinds declare (solvers, default, threads)."""

from __future__ import annotations

import re

from odrp.core.solvers import SOLVERS
from odrp.registry import KINDS
from odrp.run import _takes_keyword
from tests.conftest import ROOT


def table() -> dict[str, dict[str, str]]:
    """kind -> column -> cell of the table under "Which solver for which kind"."""
    text = (ROOT / "docs" / "solvers.md").read_text()
    section = text.split("## Which solver for which kind", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    out = {}
    for line in rows[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        out[re.sub(r"[`]", "", cells[0])] = dict(zip(header[1:], cells[1:], strict=True))
    return out


def test_the_table_is_what_the_kinds_declare():
    rows = table()
    assert set(rows) == set(KINDS)
    for name, kind in KINDS.items():
        row = rows[name]
        assert [c for c in row if c != "threads"] == list(SOLVERS)
        for solver in SOLVERS:
            expected = "default" if solver == kind.default_solver else ("yes" if solver in kind.solvers else "-")
            assert row[solver] == expected, (name, solver)
        assert row["threads"] == ("yes" if _takes_keyword(kind.exact, "threads") else "no"), name
