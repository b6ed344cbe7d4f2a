"""Latency-aware placement (Ecker et al.): exact optimum, heuristic runtimes, gaps to the optimum.

    python -m benchmarks.latency exact      # exact solve times on the paper-sized instances
    python -m benchmarks.latency formulations   # the exact method's switches on one 42-operator instance
    python -m benchmarks.latency runtime    # heuristic runtimes on T-R7 beside the paper's Table 4
    python -m benchmarks.latency gap        # each heuristic's gap to the optimum, every instance
    python -m benchmarks.latency all        # the three, in this order

Options: ``--instances GLOB`` (default ``instances/latency/*.json``), ``--time-limit S`` for the
exact solver (default 600), ``--solver highs|cbc``, ``--repeats N`` (seeds 0..N-1 of the randomised
heuristics, default 5), ``--iterations N`` (an iteration budget for the heuristics instead of the
paper's 1 s cap), ``--optima FILE`` (the exact part writes the proven optima there; the gap part
reads them instead of solving again when the file exists), ``--param NAME=VALUE`` (a setting of the
exact method, :class:`~odrp.kinds.latency.exact.settings.LatencySettings`, repeatable: e.g.
``--param mip_pscost_minreliable=8`` for HiGHS's strong branching in the restricted solves). The exact
table's last column: the one-model MILP's triangle rows, or the classes method's restricted solves
(multiset as counts per supervisor class: wall s of each solve). Prints markdown tables; wall seconds and
process CPU seconds are both shown because the machine may be shared (CPU seconds are the fairer
measure then: report ``uptime``).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from odrp.core.result import Result
from odrp.core.settings import from_options
from odrp.io import load_instance
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.generators import random_topology
from odrp.kinds.latency.instance import load
from odrp.registry import KINDS, heuristics
from odrp.run import run_method

LATENCY = KINDS["latency"]
ROOT = Path(__file__).resolve().parent.parent
HEURISTICS = ("hill_climbing", "ant_system", "hybrid")
#: Table 4 of the paper: average runtime (ms) on T-R7 (42 operators), Java on an i7-4770k.
TABLE4_T_R7 = {"hill_climbing": 1029, "ant_system": 661, "hybrid": 1020, "storm_ras": 26}


def timed(method: str, inst: Any, **kwargs: Any) -> tuple[Result, float]:
    cpu = time.process_time()
    result = run_method(LATENCY, inst, method, **kwargs)
    return result, time.process_time() - cpu


def instances(pattern: str) -> list[tuple[str, Any]]:
    out = []
    for path in sorted(glob.glob(pattern)):
        _, inst = load_instance(path)
        out.append((Path(path).stem, inst))
    return out


def heuristic_methods() -> list[str]:
    return [
        m
        for m in (*HEURISTICS, "storm_default", "storm_ras")
        if m in heuristics() and "latency" in heuristics()[m].kinds
    ]


# ------------------------------------------------------------------------------------- exact


def exact_table(pattern: str, solver: str, time_limit: float, settings: LatencySettings) -> dict[str, float]:
    """Exact solves of the paper-sized instances (and every instance the glob names)."""
    print(f"\n### Exact optimum ({solver}, time limit {time_limit:g} s)\n")
    print(
        "| instance | operators | edges | status | optimum | bound | wall s | CPU s | triangles or restricted solves |"
    )
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    optima: dict[str, float] = {}
    for name, inst in instances(pattern):
        result, cpu = timed("exact", inst, solver=solver, time_limit=time_limit, options=settings)
        stats = result.metrics.get("method_stats", {})
        if result.status == "optimal" and result.verified:
            optima[name] = result.objective
        print(
            f"| {name} | {inst.n_operators} | {len(inst.edges)} | {result.status} | {_num(result.objective)} |"
            f" {_num(result.bound)} | {result.runtime_s:.1f} | {cpu:.1f} | {stats.get('triangles', _solves(stats))} |",
            flush=True,
        )
    return optima


def _solves(stats: dict[str, Any]) -> str:
    """The restricted solves of the classes method: multiset (counts per class): wall s of each solve."""
    return "; ".join(
        f"{entry['counts']}: {' + '.join(f'{t:.1f}' for t in entry['solve_s'])}"
        for entry in stats.get("multisets", [])
        if entry.get("solve_s")
    )


# ------------------------------------------------------------------------------ formulations

#: The exact method's switches compared (LatencySettings fields), on one 42-operator instance.
VARIANTS: dict[str, dict[str, Any]] = {
    "default (by supervisor classes)": {},
    "one-model MILP": {"classes": False},
    "one-model MILP without knapsack tree rows": {"classes": False, "knapsack_trees": False},
    "one-model MILP without the connectivity row": {"classes": False, "connectivity": False},
    "one-model MILP without the fewest-supervisors row": {"classes": False, "fewest_supervisors": False},
    "one-model MILP without twin order": {"classes": False, "twins": False},
    "one-model MILP without supervisor order": {"classes": False, "supervisor_symmetry": False},
}


def formulations_table(solver: str, time_limit: float) -> None:
    """Every variant on the 42-operator random topology of seed 0 (load 0.4), and the one MILP at w1 = 0."""
    data = random_topology(seed=0, operations=22)
    print(f"\n### Formulations on {data['name']} (42 operators), {solver}, limit {time_limit:g} s\n")
    print("| variant | status | objective | bound | wall s | CPU s |")
    print("|---|---|---:|---:|---:|---:|")
    runs = [(name, data, switches) for name, switches in VARIANTS.items()]
    flat = {**data, "weights": {**data["weights"], "latency": 0.0}}
    runs.append(("one-model MILP with w1 = 0 (interchangeable supervisors ordered)", flat, {"classes": False}))
    for name, instance_data, switches in runs:
        settings = from_options(LatencySettings, switches)
        result, cpu = timed("exact", load(instance_data), solver=solver, time_limit=time_limit, options=settings)
        print(
            f"| {name} | {result.status} | {_num(result.objective)} | {_num(result.bound)} |"
            f" {result.runtime_s:.1f} | {cpu:.1f} |",
            flush=True,
        )


# ----------------------------------------------------------------------------------- runtime


def runtime_table(repeats: int, iterations: int | None) -> None:
    """Each heuristic on T-R7 (42 operators): mean runtime against the paper's Table 4."""
    _, inst = load_instance(ROOT / "instances" / "latency" / "t-r7-load0.4.json")
    budget = f"iteration budget {iterations}" if iterations is not None else "the paper's 1 s cap"
    print(f"\n### Runtime on T-R7 (42 operators, load 0.4), {budget}, {repeats} seeds\n")
    print("| method | paper ms (Table 4) | ours: wall ms mean (min-max) | CPU ms mean | stopped by | score mean |")
    print("|---|---:|---:|---:|---|---:|")
    for method in heuristic_methods():
        options = {} if iterations is None or method.startswith("storm") else {"iterations": iterations}
        walls, cpus, scores, stops = [], [], [], []
        for seed in range(repeats):
            result, cpu = timed(method, inst, seed=seed, options=options)
            walls.append(1000 * result.runtime_s)
            cpus.append(1000 * cpu)
            scores.append(result.objective)
            stops.append(str(result.metrics.get("method_stats", {}).get("stopped_by", "-")))
        paper = TABLE4_T_R7.get(method, "")
        mean_score = _num(statistics.fmean(s for s in scores if s is not None)) if any(scores) else "infeasible"
        print(
            f"| {method} | {paper} | {statistics.fmean(walls):.0f} ({min(walls):.0f}-{max(walls):.0f}) |"
            f" {statistics.fmean(cpus):.0f} | {', '.join(sorted(set(stops)))} | {mean_score} |",
            flush=True,
        )


# --------------------------------------------------------------------------------------- gap


def gap_table(pattern: str, optima: dict[str, float], repeats: int, iterations: int | None) -> None:
    """Each heuristic's relative gap to the proven optimum, over every instance with an optimum."""
    options = {} if iterations is None else {"iterations": iterations}
    rows: dict[str, list[float | None]] = {m: [] for m in heuristic_methods()}
    detail = []
    for name, inst in instances(pattern):
        if name not in optima:
            continue
        best = optima[name]
        line = [name, _num(best)]
        for method in rows:
            randomized = method in ("ant_system", "hybrid")
            gaps = []
            for seed in range(repeats if randomized else 1):
                opts = {} if method.startswith("storm") else options
                result, _ = timed(method, inst, seed=seed, options=opts)
                gap = gap_to_optimum(result.objective, best) if result.status == "feasible" else None
                if gap is not None and result.objective < best * (1 - 1e-6):
                    raise AssertionError(f"{method} beat the optimum on {name}: {result.objective} < {best}")
                gaps.append(gap)
            rows[method].extend(gaps)
            feasible = [g for g in gaps if g is not None]
            line.append(f"{100 * statistics.fmean(feasible):.2f}" if feasible else "infeasible")
        detail.append(line)
    budget = f"iteration budget {iterations}" if iterations is not None else "1 s cap"
    print(f"\n### Gap to the optimum, per instance (%, mean over seeds; {budget})\n")
    print("| instance | optimum | " + " | ".join(rows) + " |")
    print("|---|---:|" + "---:|" * len(rows))
    for line in detail:
        print("| " + " | ".join(line) + " |")
    print(f"\n### Gap to the optimum, summary ({len(detail)} instances)\n")
    print("| method | runs | optimal (gap < 1e-6) | infeasible | mean gap % | median gap % | max gap % |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for method, gaps in rows.items():
        feasible = [g for g in gaps if g is not None]
        optimal = sum(1 for g in feasible if g < 1e-6)
        percent = [100 * g for g in feasible]
        stats = (
            f"{statistics.fmean(percent):.2f} | {statistics.median(percent):.2f} | {max(percent):.2f}"
            if feasible
            else "- | - | -"
        )
        print(f"| {method} | {len(gaps)} | {optimal} | {len(gaps) - len(feasible)} | {stats} |")


def gap_to_optimum(objective: float | None, optimum: float) -> float | None:
    """(objective - optimum) / |optimum|: 0 at the optimum, larger is worse (issue 4's definition)."""
    return None if objective is None else (objective - optimum) / abs(optimum)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.7f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("exact", "formulations", "runtime", "gap", "all"))
    parser.add_argument("--instances", default=str(ROOT / "instances" / "latency" / "*.json"))
    parser.add_argument("--solver", default="highs")
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--optima", default=None, help="JSON file: written by exact, read by gap when it exists")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        help="NAME=VALUE: a setting of the exact method (LatencySettings), e.g. mip_pscost_minreliable=8",
    )
    args = parser.parse_args()
    settings = from_options(LatencySettings, dict(option.split("=", 1) for option in args.param))
    if args.param:
        print(f"settings of the exact method: {settings}")
    print(f"uptime: {os.getloadavg()} (1, 5, 15 min load on {os.cpu_count()} cores)")
    optima: dict[str, float] = {}
    if args.optima and Path(args.optima).exists() and args.part == "gap":
        optima = json.loads(Path(args.optima).read_text())
        print(f"optima read from {args.optima} ({len(optima)} instances)")
    elif args.part in ("exact", "gap", "all"):
        optima = exact_table(args.instances, args.solver, args.time_limit, settings)
        if args.optima:
            Path(args.optima).write_text(json.dumps(optima, indent=1, sort_keys=True) + "\n")
    if args.part == "formulations":
        formulations_table(args.solver, args.time_limit)
    if args.part in ("runtime", "all"):
        runtime_table(args.repeats, args.iterations)
    if args.part in ("gap", "all"):
        gap_table(args.instances, optima, args.repeats, args.iterations)


if __name__ == "__main__":
    main()
