"""A hand-built benchmark dataset for the report's pictures, page and browser tests.

Kind ``odrp`` (listed first by the registry, after ``kp`` alphabetically), study ``sizes`` with two
sizes (operators 4 and 6) and a heuristic with two repeats; study ``flat`` with one size; kind ``kp``
with one study. Every number the tests check is worked out by hand in their comments.
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

GRID = """studies:
  - name: sizes
    problem: odrp
  - name: flat
    problem: odrp
  - name: knap
    problem: kp
"""


def rows_of(problem: str, study: str, spec: list[tuple], params: dict[str, dict]) -> list[dict]:
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
                "bound": None,
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
