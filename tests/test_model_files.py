"""``odrp model`` and ``odrp evaluate --model-solution``: the model leaves as a file, a solver's solution comes back.

Each model is solved from the file alone (highspy's ``readModel``; CBC's command line; SCIP when pyscipopt is
installed), its solution written by that solver and read back; the optimum must be the one brute force finds
over every placement (odrp and the knapsack family, with the kind's own evaluator) or, where no brute force
is at hand, the one ``odrp solve`` proves, and the evaluator must verify it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import highspy
import pytest

import odrp
from odrp.cli import main
from odrp.core import solfile
from odrp.core.errors import InputError
from odrp.core.solvers.cbc import cbc_executable
from tests.bruteforce import odrp_optimum
from tests.knapsack_bruteforce import optimum as knapsack_optimum

CBC = cbc_executable()

#: kind -> (generator parameters of a tiny instance, the formulations that are one MILP, extra cases
#: of (formulation, --param options, the formulation written))
CASES = {
    "odrp": (
        {"operators": 3, "nodes": 2},
        ["auto", "textbook", "compact"],
        [("auto", ["textbook_nonzeros=0"], "compact"), ("compact", ["response_model=false"], "compact")],
    ),
    "kp": ({"items": 6}, ["auto", "textbook", "compact"], []),
    "mkp": ({"items": 6, "knapsacks": 2}, ["auto", "textbook", "compact", "patterns"], []),
    "gap": ({"agents": 3, "jobs": 6}, ["auto", "textbook", "compact", "patterns"], []),
    "mdkp": ({"items": 6, "dimensions": 2}, ["auto", "textbook", "compact"], []),
    "qkp": ({"items": 6}, ["auto", "textbook", "compact"], []),
    "qmkp": ({"items": 5, "knapsacks": 2}, ["auto", "textbook", "compact"], []),
    "qm3dkp": (
        {"components": 2, "max_parallelism": 2, "racks": 1, "nodes_per_rack": 2},
        ["auto", "textbook", "compact", "patterns"],
        [],
    ),
    "latency": (
        {"operations": 3, "load": 0.2},
        ["auto", "textbook"],
        [("auto", ["textbook_nonzeros=0", "classes=false"], "auto")],  # the one MILP with its separated rows
    ),
    "pathmap": ({"servers": 10, "components": 3}, ["auto", "textbook"], []),
}


def cli(capfd, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert len(lines[0]) <= 1000
    return lines[0]


def highs_solve(model: Path, solution: Path, style: int = 0) -> tuple[str, float]:
    """Solve the model file with highspy from the file alone, to optimality; write its solution file."""
    highs = highspy.Highs()
    highs.setOptionValue("output_flag", False)
    highs.setOptionValue("mip_rel_gap", 0.0)
    assert highs.readModel(str(model)) == highspy.HighsStatus.kOk
    highs.run()
    status = highs.modelStatusToString(highs.getModelStatus())
    if status == "Optimal":
        highs.writeSolution(str(solution), style)
    return status, highs.getInfo().objective_function_value


def cbc_solve(model: Path, solution: Path, sense: str, *options: str) -> None:
    """Solve the model file with PuLP's CBC binary (CBC 2.10 ignores an MPS file's OBJSENSE: -max says it)."""
    args = [CBC, str(model), *(["-max"] if sense == "max" else []), *options, "-solve", "-solu", str(solution)]
    subprocess.run(args, capture_output=True, text=True, check=True, timeout=120)


def make_instance(tmp_path: Path, kind: str, params: dict, seed: int = 1) -> tuple[Path, dict]:
    data = odrp.generate(kind, seed=seed, **params)
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps(data))
    return path, data


def independent_optimum(kind: str, data: dict) -> float:
    """Brute force over every placement where it is at hand, else the proven optimum of ``odrp solve``."""
    compiled = odrp.load(data).compiled
    if kind == "odrp":
        return odrp_optimum(compiled)[0]
    if kind in CASES and kind not in ("latency", "pathmap"):
        return knapsack_optimum(kind, compiled)
    result = odrp.solve(data, time_limit=60)
    assert result.status == "optimal" and result.verified
    return result.objective


def evaluate(capfd, instance: Path, solution: Path, *extra: str) -> dict:
    code, out, err = cli(capfd, "evaluate", str(instance), "--model-solution", str(solution), *extra, "--json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


@pytest.mark.parametrize("kind", CASES)
def test_every_one_milp_model_solved_from_its_file_gives_the_optimum(kind, tmp_path, capfd):
    params, formulations, extra = CASES[kind]
    instance, data = make_instance(tmp_path, kind, params)
    best = independent_optimum(kind, data)
    for formulation, options, expected in [(f, [], None) for f in formulations] + extra:
        stem = f"{formulation}{len(options)}"
        model = tmp_path / f"{stem}.mps"
        args = ["model", str(instance), "--formulation", formulation, "--out", str(model)]
        code, out, err = cli(capfd, *args, *(a for o in options for a in ("--param", o)), "--json")
        assert (code, err) == (0, ""), err
        written = json.loads(out)
        assert written["note"]  # which model and why
        assert expected is None or written["formulation"] == expected, written
        record = json.loads((tmp_path / f"{stem}.map.json").read_text())
        assert (
            record["kind"] == kind
            and record["asked"] == formulation
            and record["settings"] == {o.split("=")[0]: json.loads(o.split("=")[1]) for o in options}
        )
        assert any(meaning for meaning in record["variables"].values())  # the decision variables say what they are
        status, _ = highs_solve(model, tmp_path / f"{stem}.sol")
        assert status == "Optimal", (formulation, options)
        back = evaluate(capfd, instance, tmp_path / f"{stem}.sol")
        assert back["verified"] is True and back["violation"] is None, (formulation, back)
        assert back["objective"] == pytest.approx(best, rel=1e-6, abs=1e-9), (formulation, options)
        assert back["format"] == "highs"


def test_the_lp_format_and_readable_names(tmp_path, capfd):
    instance, data = make_instance(tmp_path, "odrp", {"operators": 3, "nodes": 2})
    model = tmp_path / "m.lp"
    assert cli(capfd, "model", str(instance), "--formulation", "textbook", "--out", str(model))[0] == 0
    text = model.read_text()
    compiled = odrp.load(data).compiled
    operator, node = compiled.operators[0], compiled.nodes[0]
    assert f"x({operator},{{{node}}})" in text  # x(op0,{n0}): operator op0, one replica on n0
    record = json.loads((tmp_path / "m.map.json").read_text())
    assert record["variables"][f"x({operator},{{{node}}})"].startswith(
        f"1 when operator {operator} has its replicas on"
    )
    assert highs_solve(model, tmp_path / "m.sol")[0] == "Optimal"
    assert evaluate(capfd, instance, tmp_path / "m.sol")["objective"] == pytest.approx(odrp_optimum(compiled)[0])


@pytest.mark.parametrize(
    ("kind", "params"), [("odrp", {"operators": 3, "nodes": 2}), ("gap", {"agents": 3, "jobs": 6})]
)
def test_a_cbc_solution_file_is_read_back(kind, params, tmp_path, capfd):
    instance, data = make_instance(tmp_path, kind, params)
    best = independent_optimum(kind, data)
    model = tmp_path / "m.mps"
    code, out, _ = cli(capfd, "model", str(instance), "--formulation", "textbook", "--out", str(model), "--json")
    assert code == 0
    sense = json.loads(out)["sense"]
    cbc_solve(model, tmp_path / "m.sol", sense)
    assert (tmp_path / "m.sol").read_text().startswith("Optimal - objective value")
    back = evaluate(capfd, instance, tmp_path / "m.sol")
    assert back["verified"] and back["format"] == "cbc"
    assert back["objective"] == pytest.approx(best, rel=1e-6)
    # every row and column printed: the rows come first, their index starting again at the columns
    cbc_solve(model, tmp_path / "all.sol", sense, "-printingOptions", "all")
    back = evaluate(capfd, instance, tmp_path / "all.sol", "--map", str(tmp_path / "m.map.json"))
    assert back["verified"] and back["objective"] == pytest.approx(best, rel=1e-6)


def test_a_scip_solution_file_is_read_back(tmp_path, capfd):
    pyscipopt = pytest.importorskip("pyscipopt", reason="pyscipopt is not installed (pip install pyscipopt)")
    instance, data = make_instance(tmp_path, "qkp", {"items": 6})
    model = tmp_path / "m.lp"
    assert cli(capfd, "model", str(instance), "--out", str(model))[0] == 0
    scip = pyscipopt.Model()
    scip.hideOutput()
    scip.readProblem(str(model))
    scip.optimize()
    scip.writeBestSol(str(tmp_path / "m.sol"))
    back = evaluate(capfd, instance, tmp_path / "m.sol")
    assert back["verified"] and back["format"] == "scip"
    assert back["objective"] == pytest.approx(independent_optimum("qkp", data), rel=1e-6)


@pytest.fixture
def solved(tmp_path, capfd) -> dict:
    """A kp instance, its textbook model solved by HiGHS, the values of the solution and the optimum."""
    instance, data = make_instance(tmp_path, "kp", {"items": 6})
    model = tmp_path / "m.mps"
    assert cli(capfd, "model", str(instance), "--formulation", "textbook", "--out", str(model))[0] == 0
    highs_solve(model, tmp_path / "m.sol")
    values = solfile.parse((tmp_path / "m.sol").read_text(), "m.sol").values
    best = knapsack_optimum("kp", odrp.load(data).compiled)
    return {"dir": tmp_path, "instance": instance, "data": data, "values": values, "optimum": best}


def test_gurobi_json_csv_and_sparse_highs_forms_are_read(solved, capfd):
    folder, instance, values = solved["dir"], solved["instance"], solved["values"]
    mapping = ["--map", str(folder / "m.map.json")]
    gurobi = folder / "gurobi.sol"  # Gurobi's SOL format: comments, then "name value" for every variable
    gurobi.write_text(
        "# Solution for model m\n# Objective value = 1\n" + "".join(f"{k} {v}\n" for k, v in values.items())
    )
    as_json = folder / "values.json"
    as_json.write_text(json.dumps(values))
    as_csv = folder / "values.csv"
    as_csv.write_text("variable,value\n" + "".join(f"{k},{v}\n" for k, v in values.items()))
    sparse = folder / "sparse.sol"
    highs_solve(folder / "m.mps", sparse, style=4)  # HiGHS's sparse style: "# Columns -N", the nonzeros only
    assert "# Columns -" in sparse.read_text()
    for path, fmt in ((gurobi, "gurobi"), (as_json, "json"), (as_csv, "csv"), (sparse, "highs")):
        back = evaluate(capfd, instance, path, *mapping)
        assert back["format"] == fmt and back["verified"], path
        assert back["objective"] == pytest.approx(solved["optimum"]), path


def test_malformed_model_solutions_are_one_line_with_exit_2(solved, capfd):
    folder, instance, values = solved["dir"], solved["instance"], solved["values"]
    mapping = ["--map", str(folder / "m.map.json")]
    binary = next(name for name in values if name.startswith("n("))
    cases = {
        "missing": ({k: v for k, v in values.items() if k != binary}, binary, "a value for every variable"),
        "fractional": ({**values, binary: 0.5}, binary, "an integral value (binary variable"),
        "unknown": ({**values, "nobody": 1.0}, "nobody", "got an unknown name"),
        "outside": ({**values, binary: 2.0}, binary, "within the variable's bounds [0, 1]"),
    }
    for name, (given, field, expected) in cases.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(given))
        code, _out, err = cli(capfd, "evaluate", str(instance), "--model-solution", str(path), *mapping)
        line = one_line_error(err)
        assert code == 2 and str(path) in line and field in line and expected in line, (name, line)
    text = folder / "word.csv"
    text.write_text(f"{binary},one\n")
    code, _, err = cli(capfd, "evaluate", str(instance), "--model-solution", str(text), *mapping)
    assert code == 2 and "a number as the value of" in one_line_error(err) and str(text) in err
    # a map of another instance: the SHA-256 differs
    (folder / "other").mkdir()
    other, _ = make_instance(folder / "other", "kp", {"items": 6}, seed=2)
    code, _, err = cli(capfd, "evaluate", str(other), "--model-solution", str(folder / "m.sol"), *mapping)
    assert code == 2 and "instance.sha256" in one_line_error(err)
    # no map given, none beside the solution
    code, _, err = cli(capfd, "evaluate", str(instance), "--model-solution", str(folder / "unknown.json"))
    assert code == 2 and "--map" in one_line_error(err)


def test_an_infeasible_point_is_verified_false_naming_the_violation(solved, capfd):
    folder, instance, values = solved["dir"], solved["instance"], solved["values"]
    everything = {name: (1.0 if name.startswith("n(") else value) for name, value in values.items()}
    weights, capacity = solved["data"]["weights"], solved["data"]["capacity"]
    assert sum(weights) > capacity  # every item in the knapsack cannot fit
    path = folder / "all.json"
    path.write_text(json.dumps(everything))
    back = evaluate(capfd, instance, path, "--map", str(folder / "m.map.json"))
    assert back["verified"] is False and back["objective"] is None
    assert "capacity" in back["violation"]
    code, out, _err = cli(
        capfd, "evaluate", str(instance), "--model-solution", str(path), "--map", str(folder / "m.map.json")
    )
    assert code == 0 and f"verified: false: {back['violation']}" in out


def test_throughput_writes_one_step_of_the_bisection(tmp_path, capfd):
    instance, data = make_instance(tmp_path, "throughput", {"components": 2, "machines": 2})
    best = odrp.solve(data, time_limit=60)
    assert best.status == "optimal"
    code, out, _err = cli(capfd, "model", str(instance), "--out", str(tmp_path / "auto.lp"))
    assert code == 0 and "P(rho) at rho = " in out and "hetero_greedy" in out  # which step, and why
    greedy = odrp.solve(data, method="hetero_greedy").objective
    record = json.loads((tmp_path / "auto.map.json").read_text())
    assert record["formulation"] == "textbook" and record["params"]["rho"] == pytest.approx(greedy)
    assert highs_solve(tmp_path / "auto.lp", tmp_path / "auto.sol")[0] == "Optimal"
    back = evaluate(capfd, instance, tmp_path / "auto.sol")
    assert back["verified"] and greedy * (1 - 1e-9) <= back["objective"] <= best.objective * (1 + 1e-9)
    # at the proven optimum the step is feasible, and its placement is optimal; above it, infeasible
    rho = str(best.objective)
    assert cli(capfd, "model", str(instance), "--rho", rho, "--out", str(tmp_path / "top.mps"))[0] == 0
    assert highs_solve(tmp_path / "top.mps", tmp_path / "top.sol")[0] == "Optimal"
    assert evaluate(capfd, instance, tmp_path / "top.sol")["objective"] == pytest.approx(best.objective, rel=1e-6)
    above = str(best.objective * 1.001)
    assert cli(capfd, "model", str(instance), "--rho", above, "--out", str(tmp_path / "above.mps"))[0] == 0
    assert highs_solve(tmp_path / "above.mps", tmp_path / "above.sol")[0] == "Infeasible"


@pytest.mark.parametrize(
    ("kind", "params", "formulation", "named"),
    [
        ("throughput", {"components": 2, "machines": 2}, "patterns", "rate search"),
        ("throughput", {"components": 2, "machines": 2}, "levels", "rate search"),
        ("kp", {"items": 6}, "arcflow", "arc-flow search"),
        ("gap", {"agents": 3, "jobs": 6}, "lagrangian", "Lagrangian search"),
        ("qm3dkp", {"components": 3, "racks": 1, "nodes_per_rack": 2}, "configurations", "configuration bound"),
    ],
)
def test_a_formulation_that_is_not_one_milp_is_one_line_with_exit_2(kind, params, formulation, named, tmp_path, capfd):
    instance, _ = make_instance(tmp_path, kind, params)
    model = tmp_path / "m.mps"
    code, _, err = cli(capfd, "model", str(instance), "--formulation", formulation, "--out", str(model))
    line = one_line_error(err)
    assert code == 2 and "not one MILP" in line and named in line and str(instance) in line
    assert not model.exists()


def test_bad_model_arguments(tmp_path, capfd):
    instance, _ = make_instance(tmp_path, "kp", {"items": 6})
    for args, named in (
        (["--out", str(tmp_path / "m.txt")], "--out"),
        (["--out", str(tmp_path / "m.mps"), "--formulation", "nope"], "--formulation"),
        (["--out", str(tmp_path / "m.mps"), "--rho", "3"], "--rho"),  # a rate is the throughput kind's
        (["--out", str(tmp_path / "m.mps"), "--param", "nope=1"], "--param nope"),
        (["--out", str(tmp_path / "absent" / "m.mps")], "--out"),
    ):
        code, _, err = cli(capfd, "model", str(instance), *args)
        assert code == 2 and named in one_line_error(err), args


def test_a_grid_scores_model_solutions_against_the_optimum(tmp_path, capfd):
    """A study's ``solutions:`` with ``map:``: each solver's solution read back through its instance's map."""
    from odrp.bench.grid import load_grid
    from odrp.bench.task import run_instance

    for folder in ("instances", "models", "sols"):
        (tmp_path / folder).mkdir()
    optimum = {}
    for name, seed in (("a", 1), ("b", 2), ("c", 3)):
        data = odrp.generate("kp", seed=seed, items=6)
        (tmp_path / "instances" / f"{name}.json").write_text(json.dumps(data))
        optimum[name] = knapsack_optimum("kp", odrp.load(data).compiled)
        model = tmp_path / "models" / f"{name}.mps"
        assert cli(capfd, "model", str(tmp_path / "instances" / f"{name}.json"), "--out", str(model))[0] == 0
    highs_solve(tmp_path / "models" / "a.mps", tmp_path / "sols" / "a.sol")  # the optimum
    record = json.loads((tmp_path / "models" / "b.map.json").read_text())
    everything = {name: 1.0 for name in record["variables"]}  # every item in: over the capacity
    (tmp_path / "sols" / "b.json").write_text(json.dumps(everything))
    (tmp_path / "sols" / "c.sol").write_text("Optimal - objective value 1\n      0 nobody 1 0\n")  # malformed
    grid = tmp_path / "grid.yaml"
    source = "{method: elsewhere, path: sols/*, map: models/*.map.json}"
    grid.write_text(f"studies:\n  - {{name: kp, problem: kp, instances: instances/*.json, solutions: {source}}}\n")
    rows = {}
    for task in load_grid(grid).tasks:
        stem = Path(str(task.file)).stem
        done = run_instance(task)["rows"]
        (row,) = [r for r in done if r["method"] == "elsewhere"]
        rows[stem] = (row, next(r for r in done if r["method"] == "exact"))
    (a, exact_a), (b, _), (c, _) = rows["a"], rows["b"], rows["c"]
    assert a["verified"] and a["objective"] == pytest.approx(optimum["a"]) and a["gap"] == pytest.approx(0, abs=1e-9)
    assert a["method_stats"]["map"] == "models/a.map.json" and exact_a["objective"] == pytest.approx(optimum["a"])
    assert b["status"] == "no_solution" and not b["verified"] and "capacity" in b["message"]
    assert c["status"] == "error" and "nobody" in c["message"] and "c.sol" in c["message"]
    # a solution without a map of its instance is bad input when the grid is loaded
    (tmp_path / "models" / "c.map.json").unlink()
    with pytest.raises(InputError, match=r"studies\[0\]\.solutions\[0\]\.map: a map for every solution file"):
        load_grid(grid)


def test_the_odrp_response_time_model_is_what_compact_writes_when_only_response_time_weighs(tmp_path, capfd):
    instance, data = make_instance(tmp_path, "odrp", {"operators": 3, "nodes": 2, "weights_profile": "response_time"})
    code, out, _ = cli(capfd, "model", str(instance), "--formulation", "compact", "--out", str(tmp_path / "m.mps"))
    assert code == 0 and "the response-time model" in out
    assert highs_solve(tmp_path / "m.mps", tmp_path / "m.sol")[0] == "Optimal"
    back = evaluate(capfd, instance, tmp_path / "m.sol")
    assert back["verified"] and back["objective"] == pytest.approx(odrp_optimum(odrp.load(data).compiled)[0])
