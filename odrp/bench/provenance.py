"""Where a dataset's code came from: the toolkit's git commit and the source of every plugin.

A manifest (:mod:`odrp.bench.dataset`) names the grid's plugins; that alone does not say which code
ran. So ``odrp bench`` records, for the grid and for each run:

- the toolkit's commit (:func:`toolkit_commit`): ``git rev-parse HEAD`` of the checkout the toolkit
  runs from, with ``-dirty`` appended when tracked files differ from it; nothing when the toolkit is
  not a git checkout (installed from a wheel);
- each plugin module's source (:func:`plugin_sources`): its SHA-256, and the file itself, stored in the
  dataset as ``DIR/plugins/<module path>.py`` (``my_lab.heuristics`` -> ``plugins/my_lab/heuristics.py``;
  a package's ``__init__.py`` under its folder). An export ships these files
  (:mod:`odrp.bench.export`), and a grid finds plugins in the ``plugins/`` folder beside it
  (:func:`odrp.registry.load_plugins`), so the exported grid and an imported one run without the
  original module. Only the module's own file is stored: a plugin that imports other modules of its
  own needs them installed.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import odrp

PLUGINS = "plugins"
"""The folder of plugin sources, in a dataset, an export and beside a grid."""


@dataclass(frozen=True)
class PluginSource:
    """A plugin module's source: its module name, its file relative to a ``plugins/`` folder, its bytes."""

    module: str
    file: str
    source: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source).hexdigest()

    def record(self) -> dict[str, str]:
        """What the manifest holds of it (``file`` relative to the dataset)."""
        return {"module": self.module, "file": f"{PLUGINS}/{self.file}", "sha256": self.sha256}


def plugin_sources(modules: list[str] | tuple[str, ...]) -> list[PluginSource]:
    """The sources of ``modules``, which must have been imported (``load_grid`` imports a grid's plugins).

    A module without a Python source file (a compiled extension) is left out.
    """
    found = []
    for name in modules:
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None)
        if module is None or origin is None or not origin.endswith(".py"):
            continue
        path = Path(origin)
        relative = Path(*name.split("."))
        file = relative / "__init__.py" if path.name == "__init__.py" else relative.with_suffix(".py")
        found.append(PluginSource(name, file.as_posix(), path.read_bytes()))
    return found


def toolkit_commit() -> str | None:
    """The git commit of the toolkit's checkout (``-dirty`` when tracked files changed), or None."""
    root = Path(odrp.__file__).resolve().parent.parent
    if not (root / ".git").exists():  # a folder in a checkout, or a file in a worktree
        return None
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
        if Path(top).resolve() != root:
            return None
        head = _git(root, "rev-parse", "HEAD")
        dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=30
    ).stdout.strip()
