"""Each bad input that once hung, crashed or gave a wrong answer: now one line of bad input (exit 2).

The cases are the defects found by mutating generated instances (``odrp generate KIND --seed 1``)
and by a careful user's options and paths; each comment says what happened before.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import pytest

import odrp


def _set(path: tuple, value: Any) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        target = data
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return mutate


def _every_link_cost(value: float) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        for link in data["links"]:
            link["cost"] = value

    return mutate


CASES = [
    # HiGHS spun in its propagation for 10 minutes, ignoring the time limit and SIGINT
    ("qm3dkp", "random", ("colocation", "node"), math.nan, "colocation.node"),
    # throughput: "fluid LP: error HiGHS ended with Not Set", or an OverflowError
    ("throughput", "random", ("machines", 0, "capacity"), 1e308, "machines[0].capacity"),
    ("throughput", "random", ("machines", 0, "capacity"), math.inf, "machines[0].capacity"),
    # latency: an OverflowError in fsum
    ("latency", "random", ("supervisors", 0, "memory"), 1e308, "supervisors[0].memory"),
    ("latency", "random", ("operators", 0, "rate"), 1e308, "operators[0].rate"),
    # qm3dkp: a traceback
    ("qm3dkp", "random", ("edges", 0, "weight"), 1e308, "edges[0].weight"),
    # gap: "optimal" 0.0 with nothing assigned; NaN and Infinity passed validation
    ("gap", "random", ("values", 0, 0), 1e308, "values"),
    ("gap", "random", ("values", 0, 0), math.nan, "values"),
    ("gap", "random", ("weights", 0, 0), math.inf, "weights"),
    # odrp: "optimal" 1.428 with 0 replicas
    ("odrp", "random", ("links", 0, "delay"), math.inf, "links[0].delay"),
    # odrp: range() over a billion replica counts, 3.2 GB in 20 s (exact and odrp_greedy alike)
    ("odrp", "random", ("operators", 1, "max_replicas"), 10**9, "operators[1].max_replicas"),
]


@pytest.mark.parametrize(
    ("kind", "generator", "path", "value", "field"), CASES, ids=[f"{c[0]}-{c[4]}-{c[3]}" for c in CASES]
)
def test_a_bad_number_is_one_line_of_bad_input(kind, generator, path, value, field):
    data = odrp.generate(kind, generator, seed=1)
    _set(path, value)(data)
    began = time.perf_counter()
    with pytest.raises(odrp.InputError) as refused:
        odrp.solve(data, time_limit=5)
    assert time.perf_counter() - began < 5
    assert refused.value.field.startswith(field) and "\n" not in str(refused.value)


def test_pathmap_links_of_enormous_cost_are_refused():
    """Exact said infeasible while the evaluator scored a placement feasible with objective inf."""
    data = odrp.generate("pathmap", "ba", seed=1)
    _every_link_cost(1e308)(data)
    with pytest.raises(odrp.InputError, match=r"links\[0\]\.cost"):
        odrp.load(data)


def test_many_replicas_allowed_are_lowered_to_what_fits():
    data = odrp.generate("odrp", seed=1)
    data["operators"][1]["max_replicas"] = 1000
    instance = odrp.load(data)
    slots = sum(math.floor(n["capacity"] / data["operators"][1].get("resources", 1.0)) for n in data["nodes"])
    assert instance.compiled.max_replicas[1] <= slots
    assert odrp.solve(data, method="odrp_greedy", time_limit=5).verified


def test_a_message_never_echoes_a_huge_value(tmp_path):
    """A 10-million-element list gave a 50 MB error line."""
    data = odrp.generate("kp", seed=1)
    data["profits"] = ["x"] * 10_000_000
    with pytest.raises(odrp.InputError) as refused:
        odrp.load(data)
    assert len(str(refused.value)) <= 990


def test_deep_nesting_is_one_line(run_cli, tmp_path):
    """100,000 nested lists: a RecursionError traceback in every kind."""
    path = tmp_path / "deep.json"
    path.write_text('{"problem": "kp", "profits": ' + "[" * 100_000 + "]" * 100_000 + "}")
    proc = run_cli("solve", str(path))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "nested at most 64 levels" in line


@pytest.mark.parametrize(
    ("verb", "target"),
    [("bench", "file"), ("bench", "/proc/odrp-out"), ("solve-save", "missing/x.json"), ("generate", "/proc/x")],
)
def test_an_output_path_that_cannot_be_written_is_one_line(run_cli, tmp_path, verb, target):
    """--out pointing at a file or /proc, and --save into a missing folder, gave tracebacks."""
    instance = tmp_path / "kp.json"
    instance.write_text(json.dumps(odrp.generate("kp", items=5, seed=1)))
    grid = tmp_path / "grid.yaml"
    grid.write_text("studies: [{name: a, problem: kp, generator: random, params: {items: 5}}]")
    if target == "file":
        target = str(instance)
    elif not target.startswith("/"):
        target = str(tmp_path / target)
    if verb == "bench":
        proc = run_cli("bench", str(grid), "--out", target)
        flag = "--out"
    elif verb == "generate":
        proc = run_cli("generate", "kp", "--out", target)
        flag = "--out"
    else:
        proc = run_cli("solve", str(instance), "--save", target)
        flag = "--save"
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and line.startswith(f"error: command line: {flag}: ")
