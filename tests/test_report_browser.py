"""The report's page in a real browser: headless Chromium renders it, a filter changes what is shown.

Chromium is Debian's ``chromium`` package (``/usr/bin/chromium``); ``make test`` installs it with
``apt-get install chromium`` when it is missing and the user is root. The test drives it through the
DevTools protocol over a pipe (``--remote-debugging-pipe``: JSON messages ending in a NUL byte on file
descriptors 3 and 4), so it needs no Python package beyond the standard library. Without the binary
the test fails, saying how to install it.

It checks that the page loads with no JavaScript error or console error, requests nothing but the
file itself, draws every Plotly figure and every table, that the method and status filters change the
rows shown, that a header click sorts and a click on an instance shows it, and saves a screenshot
(its path is printed: ``pytest -s`` shows it).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

import pytest

from odrp.bench.report import report
from tests.report_data import write_dataset, write_frontier

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)

NAVIGATING = ("Inspected target navigated or closed", "Cannot find context with specified id")


class Chromium:
    """Headless Chromium driven through the DevTools protocol on a pipe, one page attached."""

    def __init__(self, binary: str, profile: str) -> None:
        commands, self._to_browser = os.pipe()
        self._from_browser, answers = os.pipe()

        def as_fds_3_and_4() -> None:  # the browser reads commands on 3 and writes answers on 4
            os.dup2(commands, 3)
            os.dup2(answers, 4)

        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=as_fds_3_and_4,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands)
        os.close(answers)
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Page", "Log", "Network"):
            self.send(f"{domain}.enable", session=self.session)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def page(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.send(method, params, session=self.session)

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (an exception fails the test)."""
        result = self.page("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """The expression's first truthy value, asked every 0.1 s.

        While a click's navigation is under way, the page being left can answer "Inspected target
        navigated or closed" (or have no context yet): that is "not yet", asked again.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.js(expression)
            except RuntimeError as error:
                if not any(text in str(error) for text in NAVIGATING):
                    raise
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def problems(self) -> list[str]:
        """JavaScript exceptions, console errors and browser log errors seen so far."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("exception", {}).get("description", str(params)))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.send("Browser.close")
            self.process.wait(10)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait(10)
        finally:
            os.close(self._to_browser)
            os.close(self._from_browser)


@pytest.fixture(scope="module")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            "headless Chromium not found at /usr/bin/chromium: `make test` installs Debian's chromium package "
            "(apt-get install chromium) when run as root; install it to render the report page"
        )
    with tempfile.TemporaryDirectory(prefix="odrp-chromium-") as profile:
        chromium = Chromium(CHROMIUM, profile)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def shown(browser, tmp_path_factory):
    """The hand dataset's report page, loaded and drawn in the browser."""
    out = tmp_path_factory.mktemp("browser") / "bench"
    write_dataset(out)
    made = report(out)
    browser.page(
        "Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False}
    )
    browser.page("Page.navigate", {"url": made.html.resolve().as_uri()})
    browser.wait_for("document.readyState === 'complete'")
    browser.wait_for("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 6")
    return browser, made


def visible_rows(browser: Chromium, selector: str) -> list[str]:
    """The first cell of every shown row of the tables matched by ``selector``."""
    return browser.js(
        f"Array.from(document.querySelectorAll('{selector} tbody tr'))"
        ".filter(tr => tr.offsetParent !== null).map(tr => tr.cells[0].textContent)"
    )


def choose(browser: Chromium, select: str, value: str) -> None:
    browser.js(
        f"(() => {{ const s = document.getElementById('{select}'); s.value = {json.dumps(value)};"
        " s.dispatchEvent(new Event('change')); })()"
    )


def test_the_page_renders_without_errors_or_requests(shown):
    browser, made = shown
    assert browser.problems() == []
    assert [url for url in browser.requests() if not url.startswith(("file:", "data:", "about:"))] == []
    # six Plotly figures (two profiles per study), each with its lines drawn
    assert browser.js("document.querySelectorAll('.js-plotly-plot').length") == 6
    traces = browser.js("Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => p.data.length)")
    # study sizes: 4 runtime curves (h2 = h3 drawn once), 3 ECDF curves (highs always at 0 is not drawn);
    # flat: highs, h1, h2, then h1, h2; knap: highs, greedy, then greedy
    assert traces == [4, 3, 3, 2, 2, 1]
    assert browser.js("document.querySelectorAll('.js-plotly-plot .scatterlayer .trace').length") == sum(traces)
    assert visible_rows(browser, "#study-odrp-sizes table.summary") == [
        "exact/cbc",
        "exact/highs",
        "h1",
        "h2",
        "h3",
    ]
    assert browser.js("document.getElementById('runs-table').tBodies[0].rows.length") == 26
    assert browser.js("document.getElementById('runs-count').textContent").startswith("26 of 26 runs")
    assert "2026-01-02T03:04:05" in browser.js("document.getElementById('about').textContent")
    screenshot = made.out / "page-in-chromium.png"
    shot = browser.page("Page.captureScreenshot", {"format": "png"})
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    assert screenshot.stat().st_size > 20_000
    print(f"screenshot of the report page in headless Chromium: {screenshot}")


def test_filters_change_what_is_shown(shown):
    browser, _ = shown
    choose(browser, "filter-method", "h2")
    # h2's runs: A, B, C in study sizes, D, E in study flat
    assert browser.js("document.getElementById('runs-table').tBodies[0].rows.length") == 5
    assert visible_rows(browser, "#answers") == ["h2"]
    assert set(visible_rows(browser, "table.pairs")) == {"exact/cbc", "exact/highs", "h1", "h2"}  # A of A-h2, h2-h3
    choose(browser, "filter-status", "no_solution")
    assert browser.js("document.getElementById('runs-table').tBodies[0].rows.length") == 1  # D
    choose(browser, "filter-method", "")
    assert browser.js("document.getElementById('runs-table').tBodies[0].rows.length") == 2  # h1 on B too
    choose(browser, "filter-status", "")
    choose(browser, "filter-parameter", "operators=6")
    # by-operators table of study sizes: the rows of operators=6 only
    assert set(visible_rows(browser, "#study-odrp-sizes table[data-param-table]")) == {"6"}
    assert browser.js("document.getElementById('runs-table').tBodies[0].rows.length") == 12  # B and C x 6 runs
    choose(browser, "filter-parameter", "")
    assert browser.problems() == []


def test_sorting_and_the_instance_view(shown):
    browser, _ = shown
    table = "#study-odrp-sizes table.summary"
    header = browser.js(
        f"Array.from(document.querySelectorAll('{table} th')).findIndex(th => th.textContent === 'mean gap')"
    )
    browser.js(f"document.querySelectorAll('{table} th')[{header}].click()")
    # mean gaps: highs 0, h1 1/30, cbc 0.1, h2 and h3 0.25 (a stable sort keeps h2 before h3)
    assert visible_rows(browser, table) == ["exact/highs", "h1", "exact/cbc", "h2", "h3"]
    browser.js(f"document.querySelectorAll('{table} th')[{header}].click()")
    assert visible_rows(browser, table)[-1] == "exact/highs"
    browser.js(
        "Array.from(document.querySelectorAll('#runs-table a.instance')).find(a => a.textContent === 'odrp-B').click()"
    )
    view = browser.js("document.getElementById('instance-view').textContent")
    assert "proven optimal by exact/highs (1 s) (exact/cbc: time_limit)" in view
    assert browser.js("document.querySelectorAll('#instance-runs tbody tr').length") == 6
    assert browser.problems() == []


@pytest.fixture(scope="module")
def frontier(browser, tmp_path_factory):
    """The page of the dataset with proven, bounded and open instances, loaded after the other tests' page."""
    out = tmp_path_factory.mktemp("browser-frontier") / "bench"
    write_frontier(out)
    made = report(out)
    browser.page("Page.navigate", {"url": made.html.resolve().as_uri()})
    loaded = "document.readyState === 'complete' && document.getElementById('study-odrp-frontier') !== null"
    browser.wait_for(f"{loaded} && document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3")
    return browser, made


def test_proven_and_bounded_instances_in_the_browser(frontier):
    browser, _ = frontier
    assert browser.problems() == []
    # three figures: the runtime profile and the gap ECDF over F1 and F4 (proven), the certified ECDF over F2
    titles = browser.js("Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => p.layout.title.text)")
    assert titles == [
        "runtime performance profile",
        "ECDF of the gap to the optimum",
        "ECDF of the certified gaps (bounded instances)",
    ]
    certified = browser.js(
        "(() => { const p = document.querySelectorAll('.js-plotly-plot')[2];"
        " return p.data.map(t => [t.name, t.line.dash]); })()"
    )
    assert len(certified) == 8  # two series per method, never mixed with the proven instances' figure
    assert ["h1: gap to the best bound (certified)", "solid"] in certified
    assert ["h1: gap to the best known", "dot"] in certified
    header = browser.js(
        "Array.from(document.querySelectorAll('#study-odrp-frontier table.summary th')).map(th => th.textContent)"
    )
    column = header.index("bounded: certified mean gap")
    cells = browser.js(
        "Array.from(document.querySelectorAll('#study-odrp-frontier table.summary tbody tr'))"
        f".map(tr => [tr.cells[0].textContent, tr.cells[{column}].textContent])"
    )
    assert ["h1", "[6.25%, 6.72%]"] in cells and ["h2", "-"] in cells
    choose(browser, "instance-select", "odrp-F2")
    view = browser.js("document.getElementById('instance-view').textContent")
    assert "bounded: best known within the study's certify gap of the best bound; best known 20 (exact/highs)" in view
    assert "[10.00%, 10.45%]" in view  # h1's first run: gaps 2 / 20 and 2.1 / 20.1
    assert browser.problems() == []
