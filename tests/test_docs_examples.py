"""Every Python example of the README and the docs runs as written (from the repository's root)."""

from __future__ import annotations

import os
import re

import pytest

from odrp.registry import unload_plugins
from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
EXAMPLES = [(page, k, code) for page in PAGES for k, code in enumerate(BLOCK.findall(page.read_text()))]


def test_the_readme_and_the_api_page_have_examples():
    pages = {page.name for page, _, _ in EXAMPLES}
    assert {"README.md", "api.md"} <= pages


@pytest.mark.parametrize("page, k, code", EXAMPLES, ids=[f"{page.relative_to(ROOT)}#{k}" for page, k, _ in EXAMPLES])
def test_example_runs(page, k, code, capsys):
    before = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(code, f"{page}#{k}", "exec"), {"__name__": "__example__"})
    finally:
        os.chdir(before)
        unload_plugins()  # a plugin an example loads (docs/plugins.md) stays out of the other tests
    assert capsys.readouterr().out.strip()  # every example prints what it shows


def test_the_readme_says_how_to_cite():
    readme = (ROOT / "README.md").read_text()
    assert "## Citing" in readme and "CITATION.cff" in readme and (ROOT / "CITATION.cff").is_file()
