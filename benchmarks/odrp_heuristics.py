"""ODRP heuristics against the exact optimum, without Spark: the comparison of ``grids/odrp.yaml``.

    python -m benchmarks.odrp_heuristics                           # the whole grid (hours on 2 cores)
    python -m benchmarks.odrp_heuristics --max-operators 12        # the smaller sizes only
    python -m benchmarks.odrp_heuristics --rows out/odrp-rows.jsonl --tables-only
    python -m benchmarks.odrp_heuristics --variant 'odrp_local_search[restarts=10]'   # other budgets too

Every instance of the grid is solved exactly (HiGHS, compact model, the study's time limit), as ODP
too (every k_i = 1, the same model), and with every heuristic of its study (randomised ones with
seeds 0 .. repeats-1); the evaluator judges every answer (``run_method``). Rows go to a JSON-lines
file as they come (``--rows``), and a rerun skips the instances already there, so a long run can be
resumed. Then the tables (markdown):

1. gap of each heuristic to the optimum by instance size: mean, max, and how often it is optimal
   (gap <= 1e-6); the reference is the proven optimum or, where the exact solve hit its time limit,
   the best placement known (exact incumbent or any heuristic), so that gap is a lower bound;
2. time against the exact solve: mean seconds, and the exact time over the heuristic time
   (mean and, on the largest instances, the smallest ratio);
3. what replication buys: the ODP optimum and Storm's EvenScheduler (ODP view) against ODRP.

It reads the grid file itself (``odrp bench`` runs the same grid on Spark): studies with a
``generator`` + ``params`` (crossed) + ``seeds``, or an ``instances`` glob relative to the grid.
"""

from __future__ import annotations

import argparse
import copy
import glob
import itertools
import json
import math
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from odrp.kinds.replication.instance import load
from odrp.registry import KINDS, heuristics
from odrp.run import run_method

GRID = Path(__file__).resolve().parent / "grids" / "odrp.yaml"
OPTIMAL = 1e-6
ODRP = KINDS["odrp"]


# --------------------------------------------------------------------------------- the grid


def expand(grid: Path) -> list[dict[str, Any]]:
    """Every instance of the grid: its study, generator parameters and seed, and its data."""
    spec = yaml.safe_load(grid.read_text())
    cases = []
    for study in spec["studies"]:
        settings = {
            "study": study["name"],
            "methods": study.get("methods", []),
            "repeats": int(study.get("repeats", 1)),
            "time_limit": study.get("time_limit"),
        }
        if "instances" in study:
            for path in sorted(glob.glob(str(grid.parent / study["instances"]))):
                data = json.loads(Path(path).read_text())
                cases.append({**settings, "params": {"file": os.path.basename(path)}, "seed": None, "data": data})
            continue
        generator = ODRP.generators[study["generator"]]
        params = study.get("params", {})
        seeds = study.get("seeds", [0])
        seeds = list(range(seeds)) if isinstance(seeds, int) else seeds
        keys = sorted(params)
        for values in itertools.product(*(params[k] for k in keys)):
            for seed in seeds:
                chosen = dict(zip(keys, values, strict=True))
                data = generator(seed=seed, **chosen)
                cases.append({**settings, "params": chosen, "seed": seed, "data": data})
    return cases


def case_id(case: dict[str, Any]) -> str:
    return f"{case['study']}/{case['data']['name']}/{_profile(case['data']['objective']['weights'])}"


# ------------------------------------------------------------------------------------ a case


def run_case(case: dict[str, Any], time_limit: float | None, done: set[tuple]) -> list[dict[str, Any]]:
    """Exact ODRP, exact ODP and every heuristic (per seed) on one instance, except the runs in
    ``done`` ((case, method, seed) triples): one row each."""
    data = case["data"]
    inst = load(data)
    limit = time_limit if time_limit is not None else case["time_limit"]
    base = {
        "case": case_id(case),
        "study": case["study"],
        "instance": inst.name,
        "profile": _profile(inst.weights),
        "operators": inst.n_operators,
        "nodes": inst.n_nodes,
    }
    rows = []
    if (base["case"], "exact", None) not in done:
        cpu = time.process_time()  # HiGHS runs in this process: its threads' CPU time counts
        result = run_method(ODRP, inst, "exact", time_limit=limit)
        rows.append(_row(base, "exact", None, result, time.process_time() - cpu))
    if (base["case"], "exact_odp", None) not in done:
        odp = copy.deepcopy(data)
        for op in odp["operators"]:
            op["max_replicas"] = 1
        rows.append(_row(base, "exact_odp", None, run_method(ODRP, load(odp), "exact", time_limit=limit)))
    for label in case["methods"]:
        method, options = variant(label)
        seeds = range(case["repeats"]) if heuristics()[method].randomized else range(1)
        for seed in seeds:
            if (base["case"], label, seed) not in done:
                cpu = time.process_time()
                result = run_method(ODRP, inst, method, seed=seed, options=options)
                rows.append(_row(base, label, seed, result, time.process_time() - cpu))
    return rows


def variant(label: str) -> tuple[str, dict[str, Any]]:
    """``odrp_local_search[restarts=10,ruin=4]`` -> the method and its options."""
    method, _, rest = label.partition("[")
    options: dict[str, Any] = {}
    for pair in filter(None, rest.rstrip("]").split(",")):
        key, _, value = pair.partition("=")
        options[key] = json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
    return method, options


def _row(base: dict[str, Any], method: str, seed: int | None, result: Any, cpu_s: float | None = None) -> dict:
    return {
        **base,
        "method": method,
        "seed": seed,
        "status": result.status,
        "objective": result.objective,
        "bound": result.bound,
        "verified": result.verified,
        "runtime_s": result.runtime_s,
        "cpu_s": cpu_s,
        "replicas": result.metrics.get("total_replicas"),
    }


def _profile(weights: dict[str, float]) -> str:
    active = [m for m, w in weights.items() if w > 0]
    return active[0] if len(active) == 1 else "balanced"


# ---------------------------------------------------------------------------------- tables


def size_label(row: dict[str, Any]) -> str:
    prefix = "DEBS 2015, " if "debs" in row["study"] else ""
    return f"{prefix}{row['operators']} x {row['nodes']}"


def size_key(label: str) -> tuple[int, int, int]:
    debs = label.startswith("DEBS")
    ops, nodes = (int(x) for x in label.split(", ")[-1].split(" x "))
    return (0 if debs else 1, ops, nodes)


def references(rows: list[dict[str, Any]]) -> dict[str, tuple[float, bool]]:
    """Per case: the reference objective and whether it is a proven optimum."""
    out: dict[str, tuple[float, bool]] = {}
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_case[row["case"]].append(row)
    for case, group in by_case.items():
        exact = next(r for r in group if r["method"] == "exact")
        if exact["status"] == "optimal":
            out[case] = (exact["objective"], True)
            continue
        known = [
            r["objective"]
            for r in group
            if r["method"] != "exact_odp" and r["objective"] is not None and (r["verified"] or r["method"] == "exact")
        ]
        if known:
            out[case] = (max(known), False)
    return out


def gap(objective: float | None, reference: float) -> float | None:
    if objective is None:
        return None
    return max(0.0, reference - objective) / max(abs(reference), 1e-10)


def gap_table(rows: list[dict[str, Any]], methods: list[str]) -> str:
    refs = references(rows)
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    counts: dict[str, set[str]] = defaultdict(set)
    proven: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if row["case"] not in refs or row["method"] not in methods:
            continue
        label = size_label(row)
        counts[label].add(row["case"])
        if refs[row["case"]][1]:
            proven[label].add(row["case"])
        g = gap(row["objective"] if row["verified"] else None, refs[row["case"]][0])
        cells[label, row["method"]].append(math.inf if g is None else g)
    lines = [
        "| size (operators x nodes) | instances (proven) | "
        + " | ".join(f"{m}: mean / max gap, optimal" for m in methods)
        + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    for label in sorted(counts, key=size_key):
        parts = [label, f"{len(counts[label])} ({len(proven[label])})"]
        for method in methods:
            parts.append(_gap_cell(cells.get((label, method), [])))
        lines.append("| " + " | ".join(parts) + " |")
    every = [label for label in counts]
    parts = ["all", f"{sum(len(counts[x]) for x in every)} ({sum(len(proven[x]) for x in every)})"]
    for method in methods:
        parts.append(_gap_cell([g for label in every for g in cells.get((label, method), [])]))
    lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def _gap_cell(values: list[float]) -> str:
    if not values:
        return ""
    finite = [v for v in values if math.isfinite(v)]
    infeasible = len(values) - len(finite)
    if not finite:
        return f"infeasible {infeasible}/{len(values)}"
    optimal = sum(v <= OPTIMAL for v in finite)
    cell = f"{100 * statistics.mean(finite):.2f}% / {100 * max(finite):.2f}%, {optimal}/{len(values)}"
    return cell + (f" (infeasible {infeasible})" if infeasible else "")


def time_table(rows: list[dict[str, Any]], methods: list[str]) -> str:
    """Wall seconds (and CPU seconds where recorded) of the exact solve and of each heuristic, and
    their ratio per instance: mean and smallest. Wall ratios compare runs made minutes apart under
    whatever load the machine had; CPU ratios (HiGHS runs in-process) do not depend on it."""
    exact = {row["case"]: row for row in rows if row["method"] == "exact"}
    wall: dict[tuple[str, str], list[float]] = defaultdict(list)
    wall_ratio: dict[tuple[str, str], list[float]] = defaultdict(list)
    cpu: dict[tuple[str, str], list[float]] = defaultdict(list)
    cpu_ratio: dict[tuple[str, str], list[float]] = defaultdict(list)
    limited: dict[str, int] = defaultdict(int)
    for row in rows:
        method = row["method"]
        if method != "exact" and method not in methods:
            continue
        key = (size_label(row), method)
        wall[key].append(row["runtime_s"])
        if row.get("cpu_s") is not None:
            cpu[key].append(row["cpu_s"])
        if method == "exact":
            limited[key[0]] += row["status"] == "time_limit"
            continue
        reference = exact[row["case"]]
        wall_ratio[key].append(reference["runtime_s"] / max(row["runtime_s"], 1e-9))
        if row.get("cpu_s") is not None and reference.get("cpu_s") is not None:
            cpu_ratio[key].append(reference["cpu_s"] / max(row["cpu_s"], 1e-9))
    lines = [
        "| size | exact: mean / max wall s (time limit hit) [mean CPU s] | "
        + " | ".join(f"{m}: mean wall s, exact / heuristic mean, min [CPU]" for m in methods)
        + " |",
        "|---|---:|" + "---:|" * len(methods),
    ]
    for label in sorted({size_label(row) for row in exact.values()}, key=size_key):
        ex, ex_cpu = wall[label, "exact"], cpu.get((label, "exact"))
        cell = f"{statistics.mean(ex):.2f} / {max(ex):.1f} ({limited[label]})"
        parts = [label, cell + (f" [{statistics.mean(ex_cpu):.1f}]" if ex_cpu else "")]
        for method in methods:
            key = (label, method)
            if not wall.get(key):
                parts.append("")
                continue
            r = wall_ratio[key]
            cell = f"{statistics.mean(wall[key]):.3f}, {_ratio(statistics.mean(r))} / {_ratio(min(r))}"
            if cpu_ratio.get(key):
                c = cpu_ratio[key]
                cell += f" [{statistics.mean(cpu[key]):.3f} s, {_ratio(statistics.mean(c))} / {_ratio(min(c))}]"
            parts.append(cell)
        lines.append("| " + " | ".join(parts) + " |")
    return "\n".join(lines)


def _ratio(x: float) -> str:
    return f"{x:.0f}x" if x >= 10 else f"{x:.2g}x"


def replication_table(rows: list[dict[str, Any]]) -> str:
    """ODP optimum and Storm's EvenScheduler (ODP view) against the ODRP reference."""
    refs = references(rows)
    odp: dict[str, list[float]] = defaultdict(list)
    storm: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["case"] not in refs:
            continue
        label = size_label(row)
        reference = refs[row["case"]][0]
        if row["method"] == "exact_odp":
            feasible = row["status"] in ("optimal", "time_limit", "feasible") and row["objective"] is not None
            odp[label].append(gap(row["objective"], reference) if feasible else math.inf)
        elif row["method"] == "storm_default":
            storm[label].append(gap(row["objective"], reference) if row["verified"] else math.inf)
    lines = [
        "| size | ODP optimum (k_i = 1): mean / max gap, infeasible "
        "| storm_default (ODP view): mean / max gap, infeasible |",
        "|---|---:|---:|",
    ]
    for label in sorted(odp, key=size_key):
        lines.append(f"| {label} | {_replication_cell(odp[label])} | {_replication_cell(storm.get(label, []))} |")
    return "\n".join(lines)


def _replication_cell(values: list[float]) -> str:
    if not values:
        return ""
    finite = [v for v in values if math.isfinite(v)]
    head = f"{100 * statistics.mean(finite):.1f}% / {100 * max(finite):.1f}%" if finite else "-"
    return f"{head}, {len(values) - len(finite)}/{len(values)}"


# ------------------------------------------------------------------------------------ main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("grid", nargs="?", default=str(GRID))
    parser.add_argument("--rows", default="odrp-heuristics-rows.jsonl", help="JSON-lines file of rows (resumed)")
    parser.add_argument("--time-limit", type=float, default=None, help="override the studies' exact time limit")
    parser.add_argument("--max-operators", type=int, default=None, help="skip larger instances")
    parser.add_argument("--min-operators", type=int, default=None, help="skip smaller instances")
    parser.add_argument("--tables-only", action="store_true", help="print the tables of --rows, run nothing")
    parser.add_argument("--rerun", default="", help="comma-separated methods whose rows are dropped and run again")
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="METHOD[KEY=VALUE,...]",
        help="also run a heuristic with other options, e.g. 'odrp_local_search[restarts=10]'",
    )
    args = parser.parse_args()

    rows_path = Path(args.rows)
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()] if rows_path.exists() else []
    if args.rerun:
        again = set(args.rerun.split(","))
        rows = [r for r in rows if r["method"] not in again]
        rows_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = {(row["case"], row["method"], row["seed"]) for row in rows}
    cases = expand(Path(args.grid))
    if args.max_operators is not None:
        cases = [c for c in cases if len(c["data"]["operators"]) <= args.max_operators]
    if args.min_operators is not None:
        cases = [c for c in cases if len(c["data"]["operators"]) >= args.min_operators]
    for case in cases:
        case["methods"] = case["methods"] + args.variant
    methods = list(dict.fromkeys(m for c in cases for m in c["methods"]))
    if not args.tables_only:
        start = time.perf_counter()
        for n, case in enumerate(cases, 1):
            new = run_case(case, args.time_limit, done)
            if not new:
                continue
            with rows_path.open("a") as handle:
                for row in new:
                    handle.write(json.dumps(row) + "\n")
            rows.extend(new)
            summary = ", ".join(f"{r['method']} {r['runtime_s']:.1f} s" for r in new if r["method"].startswith("exact"))
            print(f"[{n}/{len(cases)}, {time.perf_counter() - start:.0f} s] {case_id(case)} {summary}", flush=True)
    wanted = {case_id(c) for c in cases}
    rows = [r for r in rows if r["case"] in wanted]
    compared = [m for m in methods if m != "storm_default"]
    print(f"\n{len(wanted)} instances; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("Gap to the optimum (proven, else best known) by instance size\n")
    print(gap_table(rows, compared))
    print("\nTime against the exact solve (wall seconds on this machine)\n")
    print(time_table(rows, compared))
    print("\nWhat replication buys: ODP (one replica per operator) against the ODRP optimum\n")
    print(replication_table(rows))


if __name__ == "__main__":
    main()
