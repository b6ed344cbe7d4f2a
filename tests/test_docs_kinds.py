"""The kind pages (docs/kinds/*.md): their examples are right and they miss no field, formulation or heuristic.

Each kind's page shows one small instance (a ```json block with a ``problem`` field), an optimal
solution of it (the next ```json block) and the optimum worked out by hand in the text. Here every
example is loaded as ``odrp solve`` would load it, its solution is scored by the kind's evaluator, and
the exact method solves it: both must give the optimum below, computed by hand as the page shows (the
knapsack family's also by brute force). Every field of the kind's JSON Schema, every formulation and
every heuristic that applies to the kind must be named on its page, so that the pages follow the code.
"""

from __future__ import annotations

import json
import re

import pytest

import odrp
from odrp.registry import KINDS
from tests.conftest import ROOT
from tests.knapsack_bruteforce import optimum as brute_force_optimum

PAGES = sorted((ROOT / "docs" / "kinds").glob("*.md"))
BLOCK = re.compile(r"^```json\n(.*?)^```", re.DOTALL | re.MULTILINE)

HAND = {
    # src takes 1/(12 - 4) s; two sink replicas on the twice-as-fast n2 take (1/(6 - 2))/2, plus the
    # 0.125 s link: R = 0.375, F = (1.25 - 0.375) / (1.25 - 0.25)
    "odrp": 0.875,
    # 2R of rate-dependent load plus 20 of overheads on 200 of CPU: R <= 90, reached by S on m1, B on m2
    "throughput": 90.0,
    # both supervisors used (1), b -> c cut: 1/2 of the edges and 5 of 15 events, 2 ms at w1 = 1e-6
    "latency": 1.0 + 1 / 2 + 5 / 15 + 2e-6,
    # the component on b: the public src-b link (1.5), then b-dst (1); on a it costs 1 + 3
    "pathmap": 2.5,
    "kp": 16.0,  # items 0 and 2
    "mkp": 20.0,  # item 0 fills knapsack 1, items 1 and 3 fill knapsack 0
    "gap": 7.0,  # items to knapsacks (0, 0, 1): 4 + 2 + 1
    "mdkp": 11.0,  # items 0 and 1 use (5, 4)
    "qkp": 9.0,  # items 0 and 1: 3 + 2 + 4
    "qmkp": 8.0,  # items 0 and 2 together (3 + 1 + 2), item 1 alone (2)
    "qm3dkp": 7.5,  # A#0 with B#0 on n1 (5), B#1 on n2 in the same rack (5 x 0.5)
}


def examples() -> list[tuple[str, dict, dict | None]]:
    """(page, instance, the solution shown after it) for every example instance of the kind pages."""
    found: list[tuple[str, dict, dict | None]] = []
    for page in PAGES:
        for block in BLOCK.findall(page.read_text()):
            data = json.loads(block)
            if "problem" in data:
                found.append((page.name, data, None))
            else:
                assert found and found[-1][0] == page.name and found[-1][2] is None, f"{page.name}: {block}"
                found[-1] = (page.name, found[-1][1], data)
    return found


EXAMPLES = examples()


def test_every_kind_has_its_page_or_heading_and_one_example():
    assert sorted(data["problem"] for _, data, _ in EXAMPLES) == sorted(KINDS)
    assert sorted(HAND) == sorted(KINDS)
    knapsack = (ROOT / "docs" / "kinds" / "knapsack.md").read_text()
    for kind in KINDS:
        assert (ROOT / "docs" / "kinds" / f"{kind}.md").exists() or f"\n## `{kind}`: " in knapsack, kind
    assert all(solution is not None for _, _, solution in EXAMPLES)


@pytest.mark.parametrize("page, data, solution", EXAMPLES, ids=[data["problem"] for _, data, _ in EXAMPLES])
def test_the_example_and_its_solution_are_optimal(page, data, solution, tmp_path):
    kind = data["problem"]
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(data))
    instance = odrp.load(path)  # as `odrp solve FILE` reads it
    evaluation = odrp.evaluate(instance, solution)
    assert evaluation.feasible, evaluation.violations
    assert evaluation.objective == pytest.approx(HAND[kind], rel=1e-9)
    if kind in ("kp", "mkp", "gap", "mdkp", "qkp", "qmkp", "qm3dkp"):
        assert brute_force_optimum(kind, instance.compiled) == pytest.approx(HAND[kind], rel=1e-9)
    result = odrp.solve(instance, time_limit=60)
    assert (result.status, result.verified) == ("optimal", True), result.message
    assert result.objective == pytest.approx(HAND[kind], rel=1e-6)


def page_of(kind: str) -> str:
    """The text of the kind's page (the knapsack family's page for its six classic kinds)."""
    path = ROOT / "docs" / "kinds" / f"{kind}.md"
    return (path if path.exists() else ROOT / "docs" / "kinds" / "knapsack.md").read_text()


def code_words(text: str) -> set[str]:
    """Every identifier inside a `code span` of ``text``."""
    return {word for span in re.findall(r"`([^`\n]+)`", text) for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def schema_fields(schema: dict) -> set[str]:
    """Every property name of a JSON Schema, nested ones and those of its definitions included."""
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return names


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_page_names_every_field_formulation_and_heuristic_of_its_kind(kind):
    words = code_words(page_of(kind))
    entry = KINDS[kind]
    assert schema_fields(entry.schema()) - words == set()  # the instance format table misses no field
    assert set(entry.formulations) - words == set()
    assert set(odrp.methods(kind)) - {"exact"} - words == set()  # the heuristics that apply


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_page_shows_the_model_and_solution_format_the_kind_declares(kind):
    """One source: the kind's models/<kind>.md is what its page includes and an export's datasheet prints."""
    entry, text = KINDS[kind], page_of(kind)
    package = entry.exact.__module__.split(".")[2]  # odrp.kinds.<package>.exact.solve
    assert entry.model_markdown.strip() and f'--8<-- "odrp/kinds/{package}/models/{kind}.md"' in text
    assert f"`{entry.solution_format}`" in text


PLUGINS_PAGE = (ROOT / "docs" / "plugins.md").read_text()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_plugins_page_names_every_field_of_the_compiled_instance(kind):
    """docs/plugins.md tells a heuristic's author what ``run`` receives: each field of each kind's compiled
    instance is named in the kind's paragraph (its name and its JSON stay out: they are not for heuristics)."""
    import dataclasses

    compiled = odrp.load(odrp.generate(kind) if kind != "latency" else odrp.generate(kind, "paper")).compiled
    family = kind in ("kp", "mkp", "gap", "mdkp", "qkp", "qmkp")
    start = PLUGINS_PAGE.index("**The knapsack family**" if family else f"**`{kind}`**")
    paragraph = PLUGINS_PAGE[start : PLUGINS_PAGE.index("\n\n", start)]
    named = code_words(paragraph)
    fields = {f.name for f in dataclasses.fields(compiled)} - {"name", "spec"}
    assert fields - named == set()
    assert type(compiled).__name__ in paragraph
