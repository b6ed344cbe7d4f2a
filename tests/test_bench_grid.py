"""Benchmark grids: expansion counts, stable instance ids, one-line errors for bad grids."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from odrp.bench.grid import file_instance_id, generated_instance_id, load_grid
from odrp.core.errors import InputError
from tests.bench_fixtures import forget_plugins  # noqa: F401 (an autouse fixture)
from tests.conftest import ROOT

DEBS = ROOT / "instances" / "odrp"

GRID = """
plugins: [tests.bench_plugins]
studies:
  - name: random
    problem: odrp
    generator: random
    params: {operators: [3, 4], nodes: [2, 3], weights_profile: balanced}
    seeds: 3
    exact: [highs, cbc]
    methods: [plugin_first_fit, plugin_fails]
    repeats: 4
    time_limit: 10
  - name: debs
    problem: odrp
    instances: inst/debs2015-0[24]0.json
"""


@pytest.fixture
def grid_file(tmp_path):
    (tmp_path / "inst").mkdir()
    for rate in ("020", "040", "060"):
        shutil.copy(DEBS / f"debs2015-{rate}.json", tmp_path / "inst")
    path = tmp_path / "grid.yaml"
    path.write_text(GRID)
    return path


def write(tmp_path, text: str, name: str = "grid.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_expansion_counts_and_runs(grid_file):
    grid = load_grid(grid_file)
    generated = [t for t in grid.tasks if t.study == "random"]
    files = [t for t in grid.tasks if t.study == "debs"]
    # 2 operator counts x 2 node counts x 3 seeds = 12 generated instances; the glob matches 020 and 040
    assert len(generated) == 12 and len(files) == 2 and len(grid.tasks) == 14
    combos = {(t.params["operators"], t.params["nodes"], t.seed) for t in generated}
    assert combos == {(o, n, s) for o in (3, 4) for n in (2, 3) for s in (0, 1, 2)}
    assert all(t.params["weights_profile"] == "balanced" for t in generated)
    # per generated instance: 2 exact solvers + 4 repeats of the randomised first fit + 1 run of the
    # deterministic failing plugin = 7 planned rows
    runs = [(r.method, r.solver, r.repeat) for r in generated[0].runs]
    assert runs == [
        ("exact", "highs", 0),
        ("exact", "cbc", 0),
        *[("plugin_first_fit", None, r) for r in range(4)],
        ("plugin_fails", None, 0),
    ]
    # the file study: default exact solver (the kind's first, highs), no heuristics
    assert [(r.method, r.solver) for r in files[0].runs] == [("exact", "highs")]
    assert sorted(t.file for t in files) == ["inst/debs2015-020.json", "inst/debs2015-040.json"]
    assert files[0].data["problem"] == "odrp" and files[0].generator is None and files[0].seed is None
    assert len({t.instance_id for t in grid.tasks}) == 14


def test_ids_are_stable_across_loads_and_processes(grid_file):
    ids = [t.instance_id for t in load_grid(grid_file).tasks]
    assert ids == [t.instance_id for t in load_grid(grid_file).tasks]
    code = (
        "import json, sys; from odrp.bench.grid import load_grid; "
        "print(json.dumps([t.instance_id for t in load_grid(sys.argv[1]).tasks]))"
    )
    for hash_seed in ("1", "2"):  # a different str hash seed in each process
        proc = subprocess.run(
            [sys.executable, "-c", code, str(grid_file)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONHASHSEED": hash_seed, "PATH": "/usr/bin:/bin"},
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == ids


def test_ids_depend_on_the_instance_only(tmp_path, grid_file):
    first = load_grid(grid_file)
    # another study name, another parameter order, 3.0 for 3, and another grid file: the same ids
    other = write(
        tmp_path,
        """
        studies:
          - name: renamed
            problem: odrp
            generator: random
            params: {weights_profile: balanced, nodes: [2, 3], operators: [3.0, 4]}
            seeds: [0, 1, 2]
          - name: debs-again
            problem: odrp
            instances: inst/*.json
        """,
        "other.yaml",
    )
    second = load_grid(other)
    assert {t.instance_id for t in first.tasks} < {t.instance_id for t in second.tasks}
    task = next(t for t in second.tasks if t.params.get("operators") == 3 and t.params["nodes"] == 2 and t.seed == 1)
    assert task.params["operators"] == 3 and isinstance(task.params["operators"], int)
    assert task.instance_id == generated_instance_id(
        "odrp", "random", {"operators": 3, "nodes": 2, "weights_profile": "balanced"}, 1
    )
    assert task.instance_id != generated_instance_id(
        "odrp", "random", {"operators": 3, "nodes": 2, "weights_profile": "balanced"}, 2
    )
    # a file's id is its content's: re-indenting the JSON keeps it, changing a number does not
    data = json.loads((DEBS / "debs2015-020.json").read_text())
    assert file_instance_id("odrp", data) == file_instance_id("odrp", json.loads(json.dumps(data, indent=4)))
    data["operators"][0]["input_rate"] = 21.0
    assert file_instance_id("odrp", data) != file_instance_id(
        "odrp", json.loads((DEBS / "debs2015-020.json").read_text())
    )


def test_an_instance_in_two_studies_runs_once_with_one_plan(tmp_path):
    study = """
      - name: {name}
        problem: odrp
        generator: random
        params: {{operators: 3, nodes: 2}}
        seeds: 2
        exact: [{solver}]
    """
    same = write(tmp_path, "studies:" + study.format(name="a", solver="highs") + study.format(name="b", solver="highs"))
    assert len(load_grid(same).tasks) == 2
    clash = write(tmp_path, "studies:" + study.format(name="a", solver="highs") + study.format(name="b", solver="cbc"))
    with pytest.raises(InputError, match=r"studies\[1\]: instance odrp-random-\w+ is also in study 'a'"):
        load_grid(clash)


BAD = [
    ("studies: []", "studies", "at least 1 item"),
    ("studies: [{name: a, problem: nope, generator: random}]", "studies[0].problem", "one of odrp"),
    ("studies: [{name: a, problem: odrp, generator: random, params: {rates: 1}}]", "studies[0].params.rates", ""),
    ("studies: [{name: a, problem: odrp, generator: random, params: {seed: 1}}]", "studies[0].params.seed", ""),
    ("studies: [{name: a, problem: odrp, generator: nope}]", "studies[0].generator", "debs2015"),
    ("studies: [{name: a, problem: odrp, generator: random, seeds: 0}]", "studies[0].seeds", "count >= 1"),
    ("studies: [{name: a, problem: odrp, generator: random, seeds: x}]", "studies[0].seeds", ""),
    ("studies: [{name: a, problem: odrp, generator: random, exact: [glpk]}]", "studies[0].exact[0]", "highs"),
    ("studies: [{name: a, problem: odrp, generator: random, methods: [nope]}]", "studies[0].methods[0]", ""),
    (
        "studies: [{name: a, problem: odrp, generator: random, methods: [hill_climbing]}]",
        "studies[0].methods[0]",
        "solves odrp",
    ),
    ("studies: [{name: a, problem: odrp}]", "studies[0]", "either generator"),
    ("studies: [{name: a, problem: odrp, instances: 'none/*.json'}]", "studies[0].instances", "matches"),
    (
        "studies: [{name: a, problem: odrp, generator: random, options: {exact: {formulation: x}}}]",
        "studies[0].options.exact.formulation",
        "compact",
    ),
    ("studies: [{name: a, problem: odrp, generator: random, colour: red}]", "studies[0].colour", "Extra"),
    ("plugins: [no_such_module]\nstudies: [{name: a, problem: odrp, generator: random}]", "plugins[0]", "importable"),
    (
        "studies: [{name: a, problem: odrp, generator: random}, {name: a, problem: odrp, generator: debs2015}]",
        "studies[1].name",
        "no other study",
    ),
    ("studies: [{name: a, problem: odrp, generator: random, certify: -0.1}]", "studies[0].certify", "0"),
    ("studies: [{name: a, problem: odrp, generator: random, certify: .inf}]", "studies[0].certify", "finite"),
    ("studies: [{name: a, problem: odrp, generator: random, certify: x}]", "studies[0].certify", "number"),
    ("studies: [{name: a\n", "line 2 column 1", "valid YAML"),
    ("- a list", "", "a mapping"),
]


@pytest.mark.parametrize(("text", "field", "expected"), BAD)
def test_bad_grids_name_the_file_and_the_field(tmp_path, text, field, expected):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert str(caught.value).startswith(f"{path}: {field}: " if field else f"{path}: "), str(caught.value)
    assert expected in str(caught.value)


def test_a_method_option_is_checked_against_the_heuristic(tmp_path):
    path = write(
        tmp_path,
        """
        plugins: [tests.bench_plugins]
        studies:
          - {name: a, problem: odrp, generator: random, methods: [plugin_first_fit],
             options: {plugin_first_fit: {delay: 1}}}
        """,
    )
    expected = r"studies\[0\]\.options\.plugin_first_fit\.delay: an option of this method \(delay_s\)"
    with pytest.raises(InputError, match=expected):
        load_grid(path)


def test_bad_grid_through_the_cli_is_one_line_and_exit_code_2(run_cli, tmp_path):
    path = write(tmp_path, "studies: [{name: a, problem: odrp, generator: random, params: {nodez: [2, 3]}}]")
    proc = run_cli("bench", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {path}: studies[0].params.nodez: a parameter of odrp generator random (operators, nodes, "
        "max_replicas, slots, load, weights_profile, network_metric, extra_edges, pinned) (did you mean 'nodes'?)"
    ]
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------- checked before Spark starts


def test_generator_values_are_checked_on_the_driver_before_anything_runs(run_cli, tmp_path):
    """``correlation: strongly`` once ran Spark, wrote error rows and exited 0."""
    path = write(
        tmp_path,
        "studies: [{name: a, problem: kp, generator: random, params: {items: 10, correlation: [weak, strongly]}}]",
    )
    proc = run_cli("bench", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and not (tmp_path / "out").exists()
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {path}: studies[0].params: parameters the generator accepts (")
    assert "correlation='strongly'" in line and len(line) <= 1000


def test_a_generated_instance_its_kind_refuses_is_bad_input(tmp_path):
    path = write(tmp_path, "studies: [{name: a, problem: odrp, generator: random, params: {operators: 0}}]")
    with pytest.raises(InputError, match=r"studies\[0\]\.params: "):
        load_grid(path)


def test_plugins_are_found_beside_the_grid_and_imported_only_after_the_grid_validates(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "lab_plugin_beside.py").write_text(
        textwrap.dedent(
            f"""
            from pathlib import Path
            from tests.bench_plugins import HEURISTICS as ALL
            Path({str(marker)!r}).write_text("yes")
            HEURISTICS = tuple(h for h in ALL if h.name == "plugin_first_fit")
            """
        )
    )
    bad = write(
        tmp_path,
        "plugins: [lab_plugin_beside]\nstudies: [{name: a, problem: odrp, generator: random, params: {nodez: 2}}]",
    )
    with pytest.raises(InputError, match="nodez"):
        load_grid(bad)
    assert not marker.exists()  # the grid was refused before its plugin ran any code
    good = write(
        tmp_path,
        "plugins: [lab_plugin_beside]\nstudies: [{name: a, problem: odrp, generator: random, "
        "params: {operators: 3, nodes: 2}, methods: [plugin_first_fit]}]",
    )
    grid = load_grid(good)
    assert marker.read_text() == "yes"
    assert [run.method for run in grid.tasks[0].runs] == ["exact", "plugin_first_fit"]


@pytest.mark.parametrize("pattern", ["/**/*.json", "../elsewhere/*.json"])
def test_instance_globs_stay_under_the_grids_folder_or_the_working_directory(tmp_path, pattern):
    grid = tmp_path / "grids" / "grid.yaml"
    grid.parent.mkdir()
    grid.write_text(f"studies: [{{name: a, problem: odrp, instances: '{pattern}'}}]")
    with pytest.raises(InputError, match=r"studies\[0\]\.instances: a glob under the grid's folder or the working"):
        load_grid(grid)


def test_a_symlink_out_of_the_grids_folder_needs_allow_outside(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(ROOT / "instances" / "odrp" / "debs2015-020.json", outside / "tiny.json")
    folder = tmp_path / "grids"
    (folder / "instances").mkdir(parents=True)
    (folder / "instances" / "tiny.json").symlink_to(outside / "tiny.json")
    grid = folder / "grid.yaml"
    grid.write_text("studies: [{name: a, problem: odrp, instances: 'instances/*.json'}]")
    with pytest.raises(InputError, match=r"tiny\.json is not"):
        load_grid(grid)
    assert len(load_grid(grid, allow_outside=True).tasks) == 1


def test_certify_is_the_studys_and_part_of_an_instances_plan(tmp_path):
    path = write(
        tmp_path,
        "studies: [{name: a, problem: odrp, generator: random, certify: 0.05}, "
        "{name: b, problem: odrp, generator: debs2015}]",
    )
    tasks = load_grid(path).tasks
    assert {t.study: t.certify for t in tasks} == {"a": 0.05, "b": 0.01}  # 0.01 unless the grid says
    same = "{name: %s, problem: odrp, generator: random, certify: %s}"
    path = write(tmp_path, f"studies: [{same % ('a', 0.05)}, {same % ('b', 0.02)}]")
    with pytest.raises(InputError, match=r"studies\[1\]: instance odrp-random-\w+ is also in study 'a'"):
        load_grid(path)
