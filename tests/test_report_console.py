"""The report's console tables keep every method name whole at any terminal width: at 80 columns the
table is split into several, each headed by the whole method column."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from odrp.bench import compare, dataset
from odrp.bench.console import print_table
from odrp.bench.report import print_report, report
from tests.report_data import rows_of

LONG = ("odrp_local_search", "storm_resource_aware_default", "lowest_latency_first")
#: two instances, a proven optimum each, three heuristics with long names
SPEC = [
    row
    for instance, optimum in (("L1", 10.0), ("L2", 8.0))
    for row in [
        (instance, 5, "exact/highs", "optimal", optimum, optimum, "proven", 0.0, 1.0, True),
        (instance, 5, "exact/cbc", "optimal", optimum, optimum, "proven", 0.0, 2.0, True),
        *(
            (instance, 5, f"{name}/0", "feasible", optimum - k, optimum, "proven", k / optimum, 0.1, True)
            for k, name in enumerate(LONG)
        ),
    ]
]
NAMES = ("exact/highs", "exact/cbc", *LONG)


def write(out):
    params = {"L1": {"operators": 5}, "L2": {"operators": 5}}
    rows = rows_of("odrp", "long", SPEC, params)
    table_schema = dataset.schema(dataset.param_types(params.values()))
    for instance in ("odrp-L1", "odrp-L2"):
        mine = [r for r in rows if r["instance_id"] == instance]
        dataset.write_instance(out, "odrp", instance, dataset.to_table(mine, table_schema))
    return out


def table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("│")]


@pytest.mark.parametrize("width", [80, 120, 60])
def test_every_method_name_is_whole_at_any_width(tmp_path, width):
    made = report(write(tmp_path / "bench"))
    console = Console(width=width, record=True)
    print_report(made, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    cells = {cell.strip() for line in table_lines(text) for cell in line.strip("│").split("│")}
    assert set(NAMES) <= cells  # each name whole, in a cell of its own
    assert not any("…" in line.split("│")[1] for line in table_lines(text))  # the method column is never cut
    # lowest_latency_first's mean gap: (2 / 10 + 2 / 8) / 2; nothing of the table is lost
    assert "22.50%" in text and "speed-up" in text
    parts = re.findall(r"per\s+method\s+\((\d)\s+of\s+(\d)\)", text)  # a narrow part's title wraps
    if width <= 80:
        assert parts and parts[-1][0] == parts[-1][1]  # split, every part printed


def test_a_table_that_fits_is_one_table(tmp_path):
    console = Console(width=200, record=True)
    print_table(console, "t", ["method", "a", "b"], [["storm_resource_aware_default", "1", "2"]])
    text = console.export_text()
    assert "(1 of" not in text and "storm_resource_aware_default" in text


def test_the_comparison_at_80_columns(tmp_path):
    before, after = write(tmp_path / "before"), write(tmp_path / "after")
    result = compare.compare([before, after], tmp_path / "cmp")
    console = Console(width=80, record=True)
    compare.print_comparison(result, console)
    text = console.export_text()
    cells = {cell.strip() for line in table_lines(text) for cell in line.strip("│").split("│")}
    assert set(NAMES) <= cells
    assert max(len(line) for line in text.splitlines()) <= 80
