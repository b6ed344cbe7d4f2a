"""A hand-built benchmark dataset for the report's pictures, page and browser tests.

Kind ``odrp`` (listed first by the registry, after ``kp`` alphabetically), study ``sizes`` with two
sizes (operators 4 and 6) and a heuristic with two repeats; study ``flat`` with one size; kind ``kp``
with one study. Every number the tests check is worked out by hand in their comments. A second
dataset, ``FRONTIER`` (:func:`write_frontier`), has instances of every tier: proven, proven once,
bounded and open.
"""

from __future__ import annotations

from odrp.bench import dataset

#: (instance, size, label, status, objective, optimum, optimum_status, gap, runtime_s, verified)
#: label: exact/<solver> or <heuristic>/<repeat>
SIZES = [
    ("A", 4, "exact/highs", "optimal", 1.0, 1.0, "proven", 0.0, 2.0, True),
    ("A", 4, "exact/cbc", "optimal", 1.0, 1.0, "proven", 0.0, 4.0, True),
    ("A", 4, "h1/0", "feasible", 1.0, 1.0, "proven", 0.0, 0.5, True),
    ("A", 4, "h1/1", "feasible", 0.9, 1.0, "proven", 0.1, 0.5, True),
    ("A", 4, "h2/0", "feasible", 1.0, 1.0, "proven", 0.0, 1.0, True),
    ("A", 4, "h3/0", "feasible", 1.0, 1.0, "proven", 0.0, 1.0, True),
    ("B", 6, "exact/highs", "optimal", 2.0, 2.0, "proven", 0.0, 1.0, True),
    ("B", 6, "exact/cbc", "time_limit", 1.6, 2.0, "proven", 0.2, 10.0, True),
    ("B", 6, "h1/0", "no_solution", None, 2.0, "proven", None, 0.1, False),
    ("B", 6, "h1/1", "feasible", 2.0, 2.0, "proven", 0.0, 0.25, True),
    ("B", 6, "h2/0", "feasible", 1.0, 2.0, "proven", 0.5, 0.2, True),
    ("B", 6, "h3/0", "feasible", 1.0, 2.0, "proven", 0.5, 0.2, True),
    ("C", 6, "exact/highs", "time_limit", 3.0, None, "none", None, 10.0, True),
    ("C", 6, "exact/cbc", "error", None, None, "none", None, 0.5, False),
    ("C", 6, "h1/0", "feasible", 2.5, None, "none", None, 0.1, True),
    ("C", 6, "h1/1", "feasible", 3.0, None, "none", None, 0.1, True),
    ("C", 6, "h2/0", "feasible", 2.0, None, "none", None, 0.1, True),
    ("C", 6, "h3/0", "feasible", 2.0, None, "none", None, 0.1, True),
]
FLAT = [
    ("D", 5, "exact/highs", "optimal", 4.0, 4.0, "proven", 0.0, 1.0, True),
    ("D", 5, "h1/0", "feasible", 3.0, 4.0, "proven", 0.25, 0.1, True),
    ("D", 5, "h2/0", "no_solution", None, 4.0, "proven", None, 0.1, False),
    ("E", 5, "exact/highs", "optimal", 5.0, 5.0, "proven", 0.0, 1.0, True),
    ("E", 5, "h1/0", "feasible", 5.0, 5.0, "proven", 0.0, 0.2, True),
    ("E", 5, "h2/0", "feasible", 4.0, 5.0, "proven", 0.2, 0.1, True),
]
KP = [
    ("K1", 10, "exact/highs", "optimal", 10.0, 10.0, "proven", 0.0, 0.5, True),
    ("K1", 10, "greedy/0", "feasible", 8.0, 10.0, "proven", 0.2, 0.05, True),
]
#: (problem, study, rows, params of each instance)
STUDIES = [
    ("odrp", "sizes", SIZES, {"A": {"operators": 4, "nodes": 3}, "B": {"operators": 6, "nodes": 3}}),
    ("odrp", "flat", FLAT, {"D": {"operators": 5, "nodes": 3}, "E": {"operators": 5, "nodes": 3}}),
    ("kp", "knap", KP, {"K1": {"items": 10}}),
]
STUDIES[0][3]["C"] = {"operators": 6, "nodes": 3}

#: Past the frontier (kind odrp, study ``frontier``, one size): F1 proven by two solvers, F2 bounded (best
#: known 20 of exact/highs, best bound min(20.1, 20.15) = 20.1: 0.1 / 20.1 = 0.5% <= 1%), F3 open (best
#: known 30, best bound 40: 25%), F4 proven by one solver (cbc stopped at its limit with a bound of 5.5).
FRONTIER = [
    ("F1", 5, "exact/highs", "optimal", 10.0, 10.0, "proven", 0.0, 1.0, True),
    ("F1", 5, "exact/cbc", "optimal", 10.0, 10.0, "proven", 0.0, 2.0, True),
    ("F1", 5, "h1/0", "feasible", 8.0, 10.0, "proven", 0.2, 0.1, True),
    ("F1", 5, "h1/1", "no_solution", None, 10.0, "proven", None, 0.1, False),
    ("F1", 5, "h2/0", "feasible", 9.0, 10.0, "proven", 0.1, 0.2, True),
    ("F2", 5, "exact/highs", "time_limit", 20.0, None, "none", None, 10.0, True),
    ("F2", 5, "exact/cbc", "time_limit", 19.0, None, "none", None, 10.0, True),
    ("F2", 5, "h1/0", "feasible", 18.0, None, "none", None, 0.1, True),
    ("F2", 5, "h1/1", "feasible", 19.5, None, "none", None, 0.1, True),
    ("F2", 5, "h2/0", "no_solution", None, None, "none", None, 0.2, False),
    ("F3", 5, "exact/highs", "time_limit", 30.0, None, "none", None, 10.0, True),
    ("F3", 5, "exact/cbc", "error", None, None, "none", None, 0.5, False),
    ("F3", 5, "h1/0", "feasible", 27.0, None, "none", None, 0.1, True),
    ("F3", 5, "h1/1", "feasible", 30.0, None, "none", None, 0.1, True),
    ("F3", 5, "h2/0", "feasible", 24.0, None, "none", None, 0.2, True),
    ("F4", 5, "exact/highs", "optimal", 5.0, 5.0, "proven", 0.0, 1.0, True),
    ("F4", 5, "exact/cbc", "time_limit", 4.0, 5.0, "proven", 0.2, 10.0, True),
    ("F4", 5, "h1/0", "feasible", 5.0, 5.0, "proven", 0.0, 0.1, True),
    ("F4", 5, "h1/1", "feasible", 4.0, 5.0, "proven", 0.2, 0.1, True),
    ("F4", 5, "h2/0", "feasible", 4.5, 5.0, "proven", 0.1, 0.2, True),
]
#: the bounds the exact runs of FRONTIER report: (instance, label) -> bound
FRONTIER_BOUNDS = {
    ("F1", "exact/highs"): 10.0,
    ("F1", "exact/cbc"): 10.0,
    ("F2", "exact/highs"): 20.1,
    ("F2", "exact/cbc"): 20.15,
    ("F3", "exact/highs"): 40.0,
    ("F4", "exact/highs"): 5.0,
    ("F4", "exact/cbc"): 5.5,
}

GRID = """studies:
  - name: sizes
    problem: odrp
  - name: flat
    problem: odrp
  - name: knap
    problem: kp
"""


def rows_of(
    problem: str, study: str, spec: list[tuple], params: dict[str, dict], bounds: dict | None = None
) -> list[dict]:
    """Dataset rows of ``spec``; ``bounds``: (instance, label) -> the bound an exact run reports."""
    bounds = bounds or {}
    out = []
    for instance, size, label, status, objective, optimum, optimum_status, gap, runtime, verified in spec:
        method, _, tail = label.partition("/")
        exact = method == "exact"
        out.append(
            {
                "instance_id": f"{problem}-{instance}",
                "study": study,
                "instance_name": instance.lower(),
                "generator": "random",
                "file": None,
                "params": params[instance],
                "seed": 0,
                "instance_sha256": "0" * 64,
                "size": size,
                "size_label": "operators" if problem == "odrp" else "items",
                "method": method,
                "solver": tail if exact else None,
                "options": {},
                "repeat": 0 if exact else int(tail),
                "status": status,
                "objective": objective,
                "bound": bounds.get((instance, label)),
                "solver_gap": None,
                "optimum": optimum,
                "optimum_status": optimum_status,
                "gap": gap,
                "runtime_s": runtime,
                "time_limit": 10.0,
                "verified": verified,
                "message": "boom" if status == "error" else "",
                "metrics": {},
                "method_stats": {},
                "solution": None,
                "package_version": "0.1.0",
                "solver_version": None,
            }
        )
    return out


def write_dataset(out) -> None:
    """The hand-built dataset in ``out``, with a manifest as ``odrp bench`` writes it."""
    for problem, study, spec, params in STUDIES:
        rows = rows_of(problem, study, spec, params)
        table_schema = dataset.schema(dataset.param_types(params.values()))
        for instance in sorted({r["instance_id"] for r in rows}):
            mine = [r for r in rows if r["instance_id"] == instance]
            dataset.write_instance(out, problem, instance, dataset.to_table(mine, table_schema))
    studies = [{"name": "sizes", "problem": "odrp"}, {"name": "flat", "problem": "odrp"}]
    studies.append({"name": "knap", "problem": "kp"})
    grid = {"file": "/somewhere/secret/hand.yaml", "sha256": "ab" * 32, "text": GRID, "spec": {"studies": studies}}
    runs = [
        {
            "started": "2026-01-02T03:04:05+0000",
            "finished": "2026-01-02T03:05:00+0000",
            "grid": "/somewhere/secret/hand.yaml",
            "master": "local[2]",
            "hosts": ["benchhost"],
            "parallelism": 2,
            "ran": 9,
            "skipped": 0,
            "wall_s": 55.0,
            "status": "complete",
        }
    ]
    dataset.write_manifest(out, grid=grid, runs=runs, status="complete", files=dataset.journal(out))


def write_frontier(out) -> None:
    """FRONTIER as a dataset with a manifest (its grid leaves ``certify`` at its default, 0.01)."""
    params = {name: {"operators": 5, "nodes": 3} for name in ("F1", "F2", "F3", "F4")}
    rows = rows_of("odrp", "frontier", FRONTIER, params, FRONTIER_BOUNDS)
    table_schema = dataset.schema(dataset.param_types(params.values()))
    for instance in sorted({r["instance_id"] for r in rows}):
        mine = [r for r in rows if r["instance_id"] == instance]
        dataset.write_instance(out, "odrp", instance, dataset.to_table(mine, table_schema))
    spec = {"studies": [{"name": "frontier", "problem": "odrp", "exact": ["highs", "cbc"]}]}
    grid = {"file": "frontier.yaml", "sha256": "cd" * 32, "text": "studies: [...]", "spec": spec}
    dataset.write_manifest(out, grid=grid, runs=[], status="complete", files=dataset.journal(out))
