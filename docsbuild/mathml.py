"""An mkdocs hook: the pages' equations as MathML, rendered when the site is built.

``pymdownx.arithmatex`` (generic mode) leaves every equation as TeX in ``<span class="arithmatex">\\(...\\)</span>``
(inline) or ``<div class="arithmatex">\\[...\\]</div>`` (display). This hook converts each to MathML with
latex2mathml, which every current browser renders natively: the site needs no JavaScript, no web font
and no network to show its equations, from a server or from disk (``file://``). An equation that
cannot be converted fails the build, naming the page.
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError

EQUATION = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<display>.*?)\\\])</(?P=tag)>',
    re.DOTALL,
)


ALIGNED = re.compile(r"\\begin\{aligned\}(?P<body>.*?)\\end\{aligned\}", re.DOTALL)


def _aligned_as_array(tex: str) -> str:
    """``aligned`` (which latex2mathml does not read) as the ``array`` it means: columns right, left, right,
    left, ... (``&&`` starts the next pair)."""

    def array(match: re.Match[str]) -> str:
        rows = match["body"].split("\\\\")
        columns = max(row.count("&") for row in rows) + 1
        return "\\begin{array}{" + ("rl" * columns)[:columns] + "}" + match["body"] + "\\end{array}"

    return ALIGNED.sub(array, tex)


def on_page_content(html_text: str, page: Any, **_: Any) -> str:
    """Every arithmatex equation of the page as MathML (``class="arithmatex"`` kept on its element)."""

    def mathml(match: re.Match[str]) -> str:
        display = match["display"] is not None
        tex = html.unescape(match["display"] if display else match["inline"]).strip()
        try:
            rendered = convert(_aligned_as_array(tex), display="block" if display else "inline")
        except Exception as error:  # latex2mathml raises several exception types on TeX it cannot read
            raise PluginError(f"{page.file.src_path}: cannot render the equation {tex[:80]!r} ({error})") from None
        if "\\" in rendered or "<mi>&</mi>" in rendered:  # a command or a column it passed through as text
            raise PluginError(f"{page.file.src_path}: the equation {tex[:80]!r} has TeX that latex2mathml cannot read")
        return f'<{match["tag"]} class="arithmatex">{rendered}</{match["tag"]}>'

    return EQUATION.sub(mathml, html_text)
