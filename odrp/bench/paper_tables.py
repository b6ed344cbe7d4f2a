"""The report's tables as Markdown and LaTeX, for papers (``odrp report --format markdown|latex``).

Each table of :mod:`odrp.bench.tables` (one study of one kind, per ``--by`` value) becomes a section:
a Markdown heading with a GitHub-flavoured pipe table, or a LaTeX ``table`` float with a ``booktabs``
``tabular`` scaled to the line width (``\\usepackage{booktabs, graphicx}`` in the preamble), captioned
with the group and labelled ``tab:<problem>-<study>[-<param values>]``. The cells are the strings the
console and the page show (:func:`odrp.bench.tables.formatted`), so they agree: per method the runs
with a solution beside every gap, the gaps to the proven optimum, then, in columns of their own, the
certified interval on bounded instances and the open instances' runs. After each table, the report
adds its methods' pairs (:func:`odrp.bench.compare.pair_rows`, the page's head to head). Both writers
are small and hand-rolled: no pandas ``to_latex`` (which needs jinja2) nor ``tabulate``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from odrp.bench import tables

Section = tuple[str, str, Sequence[str], Sequence[Sequence[Any]]]
"""(heading, LaTeX label, headers, rows) of one table."""

FORMATS = {"markdown": "md", "latex": "tex"}
"""The formats of ``--format`` and their file suffixes."""

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def markdown_escape(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1) -> str:
    """A pipe table; the first ``left`` columns left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(markdown_escape(h) for h in headers) + " |"]
    lines.append("|" + "|".join(":---" if k < left else "---:" for k in range(len(headers))) + "|")
    lines.extend("| " + " | ".join(markdown_escape(c) for c in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def latex_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], caption: str, label: str, left: int = 1) -> str:
    """A ``table`` float around a booktabs ``tabular``, every cell escaped."""
    spec = "l" * left + "r" * (len(headers) - left)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\small",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{{label}}}",
        r"\resizebox{\linewidth}{!}{%",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in headers) + r" \\",
        r"\midrule",
        *(" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows),
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def latex_label(*parts: Any) -> str:
    """``tab:`` and the parts, lower case, every run of other characters than ``a-z0-9`` as one ``-``."""
    text = "-".join(str(p) for p in parts if p is not None)
    return "tab:" + re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def document(fmt: str, title: str, sections: Sequence[Section]) -> str:
    """One file of ``sections`` (heading, label, headers, rows) in ``fmt`` (``markdown`` or ``latex``)."""
    if fmt == "markdown":
        return f"# {title}\n\n" + "\n".join(f"## {h}\n\n{markdown_table(hs, rows)}" for h, _, hs, rows in sections)
    return f"% {title}\n% needs \\usepackage{{booktabs, graphicx}}\n\n" + "\n".join(
        latex_table(hs, rows, h, label) for h, label, hs, rows in sections
    )


def summary_files(
    summary: Any, formats: Sequence[str], after: Callable[[dict[str, Any]], list[Section]] | None = None
) -> dict[str, str]:
    """``{"summary.md": text, ...}``: every table of ``summary`` (:func:`odrp.bench.tables.study_tables`)
    in each format, one section per table, headed by its group, followed by ``after(group key)``'s
    sections (the report's paired tests of every two methods)."""
    sections: list[Section] = []
    for key, table in tables.split(summary):
        sections.append((tables.group_title(key), latex_label(*key.values()), tables.HEADERS, tables.formatted(table)))
        if after is not None:
            sections.extend(after(key))
    title = "Gap to the proven optimum, and certified gaps on bounded instances, per study and method"
    return {f"summary.{FORMATS[fmt]}": document(fmt, title, sections) for fmt in formats}
