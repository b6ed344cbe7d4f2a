"""The Python API (odrp.load/solve/evaluate/generate/methods): its examples, and each way of giving an instance."""

from __future__ import annotations

import doctest
import json

import pytest

import odrp
import odrp.api
from odrp.registry import KINDS
from odrp.run import run_method
from tests.knapsack_bruteforce import optimum as brute_force_optimum
from tests.test_odrp_evaluator import TINY


def test_the_api_examples_run():
    failed, attempted = doctest.testmod(odrp.api)
    assert attempted >= 8 and failed == 0


def test_an_instance_is_a_path_a_dict_or_a_loaded_instance(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    from_path, from_dict = odrp.load(path), odrp.load(TINY)
    assert odrp.load(from_path) is from_path
    assert (from_path.kind, from_path.source, from_dict.source) == ("odrp", str(path), "<dict>")
    objectives = {odrp.solve(given).objective for given in (path, str(path), TINY, from_dict)}
    assert len(objectives) == 1


def test_bad_input_raises_the_one_line_error(tmp_path):
    with pytest.raises(odrp.InputError) as raised:
        odrp.load({**TINY, "nodes": [{**TINY["nodes"][0], "slots": -1}, *TINY["nodes"][1:]]})
    assert raised.value.source == "<dict>" and raised.value.field.startswith("nodes[0]")
    with pytest.raises(odrp.InputError, match="file not found"):
        odrp.load(tmp_path / "missing.json")
    with pytest.raises(odrp.InputError, match="a path, a dict"):
        odrp.load(42)
    with pytest.raises(odrp.InputError, match=r"a known problem kind|one of"):
        odrp.generate("nosuchkind")


def test_solve_takes_method_settings_by_name_and_the_evaluator_agrees():
    data = odrp.generate("kp", items=10, seed=5)
    optimum = brute_force_optimum("kp", odrp.load(data).compiled)
    exact = odrp.solve(data)
    assert exact.status == "optimal" and exact.objective == pytest.approx(optimum)
    searched = odrp.solve(data, method="local_search", iterations=3)
    assert searched.verified and searched.objective <= optimum + 1e-9
    with pytest.raises(odrp.InputError, match=r"^<argument>: nosuch: an option of this method"):
        odrp.solve(data, method="local_search", nosuch=1)
    assert odrp.evaluate(data, exact).objective == pytest.approx(optimum)
    assert odrp.evaluate(data, exact.solution).feasible


def test_generate_passes_a_seed_only_to_generators_that_take_one():
    assert odrp.generate("latency", "paper", topology="t-r1")["problem"] == "latency"
    assert odrp.generate("kp", items=5, seed=1) == odrp.generate("kp", items=5, seed=1)
    assert odrp.generate("kp", items=5, seed=1) != odrp.generate("kp", items=5, seed=2)


def test_methods_lists_what_applies_to_a_kind():
    listed = odrp.methods("gap")
    assert "exact" in listed and all("gap" in info["kinds"] for info in listed.values())
    assert set(odrp.methods()) >= set(listed)


def test_run_method_accepts_instance_json():
    assert run_method(KINDS["odrp"], TINY).status == "optimal"


def test_bench_stays_callable_after_a_submodule_import(tmp_path):
    import odrp.bench.dataset  # binds the name bench of the package odrp to the package odrp.bench

    assert odrp.bench.dataset.read is not None
    with pytest.raises(odrp.InputError, match=r"missing\.yaml"):
        odrp.bench(tmp_path / "missing.yaml", tmp_path / "out")


def test_read_gives_the_dataset_rows(tmp_path):
    from tests.report_data import STUDIES, rows_of, write_dataset

    write_dataset(tmp_path)
    frame = odrp.read(tmp_path)
    assert len(frame) == sum(len(rows_of(*study)) for study in STUDIES)
    assert frame["problem"].map(type).eq(str).all()


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"method": "local_search", "iteratons": 3}, "iteratons"),
        ({"method": "local_search", "options": {"iterations": "many"}}, "iterations"),
        ({"method": "greedy", "options": {"iterations": 3}}, "iterations"),
        ({"solver": "glpk"}, "solver"),
        ({"formulation": "nosuch"}, "formulation"),
        ({"method": "nosuch"}, "method"),
        ({"method": "greedy", "warm_start": "greedy"}, "warm_start"),
        ({"time_limit": -1}, "time_limit"),
        ({"mip_gap": 2}, "mip_gap"),
        ({"memory_limit": float("inf")}, "memory_limit"),
        ({"memory_limit": 1e-6}, "memory_limit"),
    ],
)
def test_api_errors_name_the_argument_never_a_command_line_flag(arguments, named):
    """What the CLI reports as ``command line: --param NAME`` or ``--time-limit`` is, through the API,
    ``<argument>: NAME`` or ``time_limit``: the names the caller typed."""
    data = odrp.generate("kp", items=6, seed=2)
    with pytest.raises(odrp.InputError) as raised:
        odrp.solve(data, **arguments)
    error = raised.value
    assert (error.source, error.field) == ("<argument>", named)
    assert "--" not in str(error) and "command line" not in str(error)


def test_solve_takes_settings_as_one_mapping_too():
    data = odrp.generate("kp", items=10, seed=5)
    by_name = odrp.solve(data, method="local_search", iterations=3)
    as_mapping = odrp.solve(data, method="local_search", options={"iterations": 3})
    assert by_name.verified and as_mapping.verified and by_name.objective == as_mapping.objective
