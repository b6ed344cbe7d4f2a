"""A griffe extension: the Sphinx roles of the docstrings as cross-references of the API pages.

The toolkit's docstrings name other objects with Sphinx roles (``:class:`Instance```,
``:func:`~odrp.core.result.agrees```). mkdocstrings prints those as they are; this extension rewrites
each into an mkdocs-autorefs reference before the docstring is rendered: a link where the object is
documented on some page, its name as code elsewhere (``optional``: no warning). A relative name is
looked up in the docstring's module (its own members and what it imports); ``~`` shows the last part
of the name only.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`(?P<tilde>~?)(?P<name>[\w.]+)`")


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`name``` in every docstring of the package into an optional autorefs reference."""

    def on_package(self, *, pkg: griffe.Module, **_: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = ROLE.sub(functools.partial(_reference, obj), obj.docstring.value)


def _objects(obj: Any) -> list[Any]:
    """``obj`` and every object defined inside it (imported names are left to their own modules)."""
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias:
            found.extend(_objects(member))
    return found


def _reference(obj: Any, match: re.Match[str]) -> str:
    name = match["name"]
    title = name.rsplit(".", 1)[-1] if match["tilde"] else name
    return f'<autoref identifier="{_resolve(obj, name)}" optional><code>{title}</code></autoref>'


def _resolve(obj: Any, name: str) -> str:
    """The full path of ``name`` as seen from ``obj``'s module (``name`` itself when it is not found there)."""
    head, _, rest = name.partition(".")
    for scope in (obj, obj.module):
        member = scope.members.get(head) if hasattr(scope, "members") else None
        if member is not None:
            path = member.target_path if member.is_alias else member.path
            return f"{path}.{rest}" if rest else path
    return name
