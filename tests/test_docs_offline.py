"""The documentation site works from disk with no network: pages open over ``file://``, links lead to
pages (not folder listings), search answers, equations are rendered, and the API page's
cross-references are links.

The site is built as ``make docs`` builds it (``mkdocs build --strict``) and opened in headless Chromium
(Debian's ``chromium``, driven as in tests/test_report_browser.py) with the network switched off
(``Network.emulateNetworkConditions``). The equations are MathML made at build time
(``docsbuild/mathml.py``), so no page may still show TeX delimiters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_report_browser import CHROMIUM, Chromium


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=True,
        timeout=600,
    )
    return out


@pytest.fixture(scope="module")
def offline():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail("headless Chromium not found at /usr/bin/chromium: `make test` installs Debian's chromium")
    with tempfile.TemporaryDirectory(prefix="odrp-chromium-") as profile:
        browser = Chromium(CHROMIUM, profile)
        no_network = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        browser.page("Network.emulateNetworkConditions", no_network)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Chromium, path: Path) -> None:
    browser.page("Page.navigate", {"url": path.as_uri()})
    browser.wait_for(f"location.href === {path.as_uri()!r} && document.readyState === 'complete'")


def test_equations_are_rendered_without_a_network(site, offline):
    open_page(offline, site / "kinds" / "odrp.html")
    # the page's equations: eq. 1, cost and SAW utility displayed, the ILP, and many inline ones
    assert offline.js("document.querySelectorAll('.arithmatex math').length") >= 50
    assert offline.js("document.querySelectorAll('.arithmatex math[display=\"block\"]').length") >= 4
    widths = offline.js(
        "Array.from(document.querySelectorAll('.arithmatex math')).map(m => m.getBoundingClientRect().width)"
    )
    assert min(widths) > 0  # drawn, not an empty element
    text = offline.js("document.body.innerText")
    assert "\\(" not in text and "\\[" not in text and "$$" not in text and "\\frac" not in text
    assert offline.js('document.querySelectorAll(\'script[src^="http"], link[href^="http"]\').length') == 0


def test_links_open_pages_from_disk_and_search_answers(site, offline):
    open_page(offline, site / "index.html")
    offline.js("document.querySelector('a[href=\"kinds/odrp.html\"]').click()")
    offline.wait_for("location.href.endsWith('/kinds/odrp.html') && document.readyState === 'complete'")
    assert offline.js("document.querySelector('h1').textContent").startswith("ODRP")
    offline.js("document.querySelector('a[href=\"../api.html\"]').click()")  # a link to a page one folder up
    offline.wait_for("location.href.endsWith('/api.html') && document.readyState === 'complete'")
    offline.js(
        "(() => { const box = document.querySelector('.md-search__input'); box.focus(); box.value = 'warm start';"
        " box.dispatchEvent(new Event('input', {bubbles: true})); box.dispatchEvent(new KeyboardEvent('keyup')); })()"
    )
    offline.wait_for("document.querySelectorAll('.md-search-result__item').length > 0")
    assert [url for url in offline.requests() if not url.startswith(("file:", "data:", "blob:", "about:"))] == []
    assert offline.problems() == []  # no script error, no failed load


def test_the_api_page_links_its_cross_references(site, offline):
    open_page(offline, site / "api.html")
    text = offline.js("document.querySelector('article').innerText")
    for role in (":class:", ":func:", ":mod:", ":meth:"):
        assert role not in text
    links = offline.js("Array.from(document.querySelectorAll('article a.autorefs-internal')).map(a => a.hash)")
    assert "#odrp.api.Instance" in links and "#odrp.core.result.Result" in links
