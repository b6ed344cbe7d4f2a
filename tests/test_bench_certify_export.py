"""Exporting a dataset with bounded instances, then verifying it: ``optima.csv`` carries each instance's
tier, best known, best bound and their makers, and ``odrp dataset verify --resolve`` re-checks a bound
with another solver and re-scores the best known solution with the evaluator.

The dataset is made without Spark from real runs on small knapsack instances (the kind's evaluator
scores every solution): K0 proven by HiGHS and CBC; K1 bounded, HiGHS stopped with the optimal
solution and a bound 0.5 above it (a valid bound: the profits are integers); K2 bounded by a wrong
bound, HiGHS stopped at greedy's solution claiming a bound 0.4 above it, below the optimum (brute force
says so), which a second solver must catch.
"""

from __future__ import annotations

import csv
import itertools
import json
import shutil

import pyarrow.parquet as pq
import pytest

import odrp
from odrp.bench import dataset
from odrp.bench.export import export
from odrp.bench.grid import canonical_json, instance_sha256
from odrp.bench.optimum import certify_rows
from odrp.bench.resolve import resolve, second_solver
from tests.test_bench_export import forge_checksums, write_csv

SEEDS = {"K0": 1, "K1": 0, "K2": 3}


def brute_force(data: dict) -> float:
    best = 0.0
    for chosen in itertools.product((0, 1), repeat=len(data["profits"])):
        if sum(w for w, c in zip(data["weights"], chosen, strict=True) if c) <= data["capacity"]:
            best = max(best, float(sum(p for p, c in zip(data["profits"], chosen, strict=True) if c)))
    return best


def row(name, data, method, solver, result, status=None, bound=None):
    out = result.to_dict()
    return {
        "instance_id": f"kp-{name}",
        "study": "frontier",
        "instance_name": None,
        "generator": "random",
        "file": None,
        "params": {"items": 12},
        "seed": SEEDS[name],
        "instance_sha256": instance_sha256(data),
        "size": 12,
        "size_label": "items",
        "method": method,
        "solver": solver,
        "options": {},
        "repeat": 0,
        "status": status or out["status"],
        "objective": out["objective"],
        "bound": out["bound"] if bound is None else bound,
        "solver_gap": None,
        "runtime_s": out["runtime_s"],
        "time_limit": 30.0,
        "verified": out["verified"],
        "message": "",
        "metrics": {},
        "method_stats": {},
        "solution": out["solution"],
        "package_version": odrp.__version__,
        "solver_version": out["solver"],
    }


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """(dataset, export, instance data, optima by brute force)."""
    root = tmp_path_factory.mktemp("certify")
    out = root / "bench"
    instances, optima = {}, {}
    for name, seed in SEEDS.items():
        data = odrp.generate("kp", items=12, seed=seed)
        instances[name], optima[name] = data, brute_force(data)
        highs = odrp.solve(data, solver="highs")
        greedy = odrp.solve(data, method="greedy")
        assert highs.objective == optima[name] and greedy.verified
        if name == "K0":
            rows = [
                row(name, data, "exact", "highs", highs),
                row(name, data, "exact", "cbc", odrp.solve(data, solver="cbc")),
            ]
        elif name == "K1":
            rows = [row(name, data, "exact", "highs", highs, status="time_limit", bound=optima[name] + 0.5)]
        else:
            assert greedy.objective + 0.4 < optima[name]  # the claimed bound is wrong
            rows = [row(name, data, "exact", "highs", greedy, status="time_limit", bound=greedy.objective + 0.4)]
            rows[0]["solver_version"] = highs.solver
        rows.append(row(name, data, "greedy", None, greedy))
        certify_rows(rows, "max", 1e-6, 0.01)  # what the Spark task does
        table = dataset.to_table(rows, dataset.schema(dataset.param_types([{"items": 12}])))
        dataset.write_instance(out, "kp", f"kp-{name}", table, canonical_json(data).encode())
    spec = {"studies": [{"name": "frontier", "problem": "kp", "mip_gap": 1e-6, "certify": 0.01}]}
    grid = {"file": "frontier.yaml", "sha256": "ef" * 32, "text": "studies: []\n", "spec": spec}
    dataset.write_manifest(out, grid=grid, runs=[], status="complete", files=dataset.journal(out))
    dest = root / "export"
    export(out, dest)
    return out, dest, instances, optima


def optima_lines(dest):
    with open(dest / "optima.csv", newline="") as handle:
        return {line["instance"]: line for line in csv.DictReader(handle)}


def test_optima_csv_holds_each_certificate(made):
    _, dest, _, optima = made
    lines = optima_lines(dest)
    k0, k1, k2 = lines["kp-K0"], lines["kp-K1"], lines["kp-K2"]
    assert (k0["established"], k0["tier"], k0["solvers"]) == ("proven", "proven", "cbc highs")
    assert float(k0["best_known"]) == float(k0["best_bound"]) == optima["K0"]
    assert (k1["established"], k1["tier"], k1["best_known_method"], k1["bound_solvers"]) == (
        "none",
        "bounded",
        "exact/highs",
        "highs",
    )
    assert (float(k1["best_known"]), float(k1["best_bound"]), float(k1["certify"])) == (
        optima["K1"],
        optima["K1"] + 0.5,
        0.01,
    )
    assert k1["optimum"] == "" and k2["tier"] == "bounded"
    sheet = (dest / "README.md").read_text()
    assert "| `best_bound` |" in sheet and "| `tier` |" in sheet


def test_verify_rechecks_bounds_and_finds_a_wrong_one(made, run_cli):
    _, dest, _, optima = made
    assert second_solver("kp", ["highs"]) == "scip"  # SCIP first: none of those that made it, another lineage
    found = {item.file: item for item in resolve(dest, 3, time_limit=30)}
    k0, k1, k2 = (found[f"instances/kp/kp-{name}.json"] for name in ("K0", "K1", "K2"))
    assert k0.finding is None and k0.kind == "optimum" and k0.solver == "scip"
    # K1: scip proves the optimum, inside [best known, best bound]; the best known solution re-scored
    assert k1.finding is None and k1.kind == "bound" and k1.solver == "scip"
    assert k1.bound == pytest.approx(optima["K1"]) and "re-scored by the evaluator" in k1.note
    assert "certify the best known on their own" in k1.note  # scip's bound is the optimum itself
    # K2: scip finds the optimum, a verified solution beyond the recorded bound
    assert k2.finding is not None and k2.finding.kind == "mismatched"
    assert "beyond the bound" in k2.finding.detail and f"{optima['K2']:.10g}" in k2.finding.detail
    proc = run_cli("dataset", "verify", str(dest), "--resolve", "3", "--time-limit", "30")
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "kp-K2.json" in errors[0]
    assert "kp-K1.json: scip bound" in proc.stdout


def test_a_best_known_solution_that_does_not_score_is_found(made, tmp_path, run_cli):
    """A copy whose best known solution of K1 is replaced (the checksums rewritten to agree): the
    evaluator scores the new solution lower than the recorded best known."""
    _, dest, _, _ = made
    copy = tmp_path / "copy"
    shutil.copytree(dest, copy)
    table = pq.read_table(copy / "results.parquet").to_pylist()
    for item in table:
        if item["instance_id"] == "kp-K1" and item["method"] == "exact":
            solution = json.loads(item["solution"])
            solution["assignment"] = [None] * len(solution["assignment"])  # nothing packed: objective 0
            item["solution"] = json.dumps(solution)
    import pyarrow as pa

    pq.write_table(
        pa.Table.from_pylist(table, schema=pq.read_schema(copy / "results.parquet")), copy / "results.parquet"
    )
    forge_checksums(copy)
    lines = list(optima_lines(copy).values())
    k1 = [line for line in lines if line["instance"] == "kp-K1"]
    write_csv(copy / "optima.csv", k1)  # keep only K1, so the sample is K1
    forge_checksums(copy)
    [checked] = resolve(copy, 1, time_limit=30)
    assert checked.finding is not None and "the evaluator scores its solution 0" in checked.finding.detail


def test_an_export_without_certificate_columns_still_verifies(made, tmp_path):
    """optima.csv of an export made before tiers existed: its optima are re-proved as before."""
    _, dest, _, _ = made
    copy = tmp_path / "old"
    shutil.copytree(dest, copy)
    lines = list(optima_lines(copy).values())
    old = [k for k in lines[0] if k not in ("tier", "best_known", "best_known_method", "best_bound")]
    old = [k for k in old if k not in ("bound_solvers", "certify")]
    with open(copy / "optima.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=old, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(lines)
    checked = resolve(copy, 3, time_limit=30)
    assert [item.file for item in checked] == ["instances/kp/kp-K0.json"]  # the proven one alone
    assert checked[0].finding is None


def test_the_reference_summary_counts_tiers_and_certified_gaps(made, capsys):
    """benchmarks/reference_summary.py on the export alone: K0 proven by two solvers, K1 and K2 bounded;
    K1's best known is 0.5 from its bound and K2's 0.4, relative to the best known; greedy's largest gap
    to the best bound is the largest of (bound - greedy) / greedy over the three."""
    from benchmarks.reference_summary import main

    _, dest, instances, optima = made
    assert main([str(dest)]) == 0
    lines = capsys.readouterr().out.splitlines()
    greedy = {name: odrp.solve(data, method="greedy").objective for name, data in instances.items()}
    largest = max(0.5 / optima["K1"], 0.4 / greedy["K2"])
    assert f"| frontier | 3 | 1 | 0 | 2 | 0 | {100 * largest:.2f}% |" in lines
    bounds = {"K0": optima["K0"], "K1": optima["K1"] + 0.5, "K2": greedy["K2"] + 0.4}
    worst = max((bounds[n] - greedy[n]) / greedy[n] for n in instances)
    row = next(line for line in lines if line.startswith("| frontier | greedy |"))
    assert row.endswith(f"| {100 * worst:.2f}% |") and "| 3 | 3 |" in row, row
