"""Pathmap: exact solve times on 120-server networks; the paper's heuristics against the optimum.

    python -m benchmarks.pathmap                  # all three tables (a few minutes on a quiet machine)
    python -m benchmarks.pathmap --exact          # only the exact solve times
    python -m benchmarks.pathmap --heuristics     # only the heuristics' cost ratios and messages
    python -m benchmarks.pathmap --exhaustive     # only LeastCostMap against Algorithm 1's messages
    python -m benchmarks.pathmap --seeds 10       # more instances per size

Prints markdown tables. Every number comes from :func:`odrp.run.run_method`, so every cost is the
evaluator's (``verified``); a run that is not verified is reported, never averaged in silently.
Times are wall seconds on this machine, including the Pyomo model build.
"""

from __future__ import annotations

import argparse
import statistics
import time

from odrp.kinds.pathmap.generators import ba_instance, bimodal_instance
from odrp.kinds.pathmap.instance import load
from odrp.kinds.pathmap.kind import KIND
from odrp.run import run_method


def exact_times(seeds: int) -> None:
    """Exact optimum of 120-server networks with 10-component tasks, HiGHS and CBC."""
    print("\n### Exact solve time, 120 servers, 10 components\n")
    print("| instance | links | arcs (y vars) | status | optimum | HiGHS s | CBC s | agree |")
    print("|---|---:|---:|---|---:|---:|---:|---|")
    cases = [("ba", ba_instance(seed=s, servers=120)) for s in range(seeds)]
    cases += [
        ("bimodal", bimodal_instance(seed=s, servers=120, dedicated_links=119)) for s in range(max(1, seeds // 2))
    ]
    times: dict[str, list[float]] = {"highs": [], "cbc": []}
    for _, data in cases:
        inst = load(data, data["name"])
        results = {}
        for solver in ("highs", "cbc"):
            start = time.perf_counter()
            results[solver] = run_method(KIND, inst, solver=solver)
            times[solver].append(time.perf_counter() - start)
        h, c = results["highs"], results["cbc"]
        agree = h.status == c.status and (h.objective is None or abs(h.objective - c.objective) <= 1e-6)
        verified = h.status != "optimal" or (h.verified and c.verified)
        stats = h.metrics.get("method_stats", {})
        print(
            f"| {inst.name} | {len(inst.links)} | {stats.get('variables', 0) - stats.get('integer_variables', 0)} "
            f"| {h.status} | {_num(h.objective)} | {times['highs'][-1]:.2f} | {times['cbc'][-1]:.2f} "
            f"| {'yes' if agree and verified else 'NO'} |"
        )
    for solver, values in times.items():
        print(f"\n{solver}: mean {statistics.mean(values):.2f} s, max {max(values):.2f} s over {len(values)} instances")


def heuristic_ratios(title: str, groups: dict[str, list[dict]], methods: tuple[str, ...]) -> None:
    """Cost ratio to the optimum (and to the paper's lower bound) and map messages, per group of instances."""
    print(f"\n### {title}\n")
    print(
        "| instances | method | found | optimal | mean cost / optimum | max cost / optimum "
        "| mean cost / bound | mean map messages |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, datas in groups.items():
        rows: dict[str, list[tuple[float | None, float, float, int]]] = {m: [] for m in methods}
        bound_ratio = []
        for seed, data in enumerate(datas):
            inst = load(data, data["name"])
            exact = run_method(KIND, inst)
            if exact.status != "optimal":
                continue
            optimum = exact.objective
            bound = run_method(KIND, inst, "multistage_bound").bound
            bound_ratio.append(optimum / bound if bound else float("nan"))
            for method in methods:
                result = run_method(KIND, inst, method, seed=seed)
                if result.solution is not None and not result.verified:
                    raise AssertionError(f"{method} on {inst.name}: not verified: {result.message}")
                messages = result.metrics["method_stats"]["map_messages"]
                rows[method].append((result.objective, optimum, bound, messages))
        for method, values in rows.items():
            found = [(o, opt, b) for o, opt, b, _ in values if o is not None]
            ratios = [o / opt if opt else (1.0 if o == 0 else float("inf")) for o, opt, _ in found]
            to_bound = [o / b for o, _, b in found if b]
            optimal = sum(1 for o, opt, _ in found if abs(o - opt) <= 1e-6 * max(1.0, opt))
            messages = statistics.mean(m for *_, m in values) if values else 0
            print(
                f"| {label} | {method} | {len(found)}/{len(values)} | {optimal}/{len(values)} "
                f"| {_mean(ratios)} | {_max(ratios)} | {_mean(to_bound)} | {messages:.0f} |"
            )
        print(f"| {label} | (optimum / paper's bound) | | | | | {_mean(bound_ratio)} | |")


def exhaustive_messages(seeds: int) -> None:
    """Map messages of Algorithm 1 (exhaustive, exact) against the heuristics, where it completes."""
    print("\n### Map messages: exhaustive Algorithm 1 against the heuristics (BA, 15 servers, 5 components)\n")
    print(
        "| instance | optimum | exhaustive messages | LeastCostMap | Annealed | RandomNeighbor k=2 "
        "| LeastCostMap cost |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for seed in range(seeds):
        inst = load(ba_instance(seed=seed, servers=15, components=5, max_null=1), "small")
        exhaustive = run_method(KIND, inst, "exhaustive_map", options={"max_messages": 3_000_000})
        cells = [inst.name, _num(exhaustive.objective), str(exhaustive.metrics["method_stats"]["map_messages"])]
        if exhaustive.status not in ("optimal", "infeasible"):
            cells[1] = "incomplete"
        lcm_cost = None
        for method in ("least_cost_map", "annealed_least_cost_map", "random_neighbor"):
            result = run_method(KIND, inst, method, seed=seed)
            cells.append(str(result.metrics["method_stats"]["map_messages"]))
            if method == "least_cost_map":
                lcm_cost = result.objective
        cells.append(_num(lcm_cost))
        print("| " + " | ".join(cells) + " |")


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _mean(values: list[float]) -> str:
    return f"{statistics.mean(values):.3f}" if values else "-"


def _max(values: list[float]) -> str:
    return f"{max(values):.3f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exact", action="store_true")
    parser.add_argument("--heuristics", action="store_true")
    parser.add_argument("--exhaustive", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", default="30,60,90,120", help="server counts of the heuristics table")
    args = parser.parse_args()
    everything = not (args.exact or args.heuristics or args.exhaustive)
    if args.exact or everything:
        exact_times(args.seeds)
    if args.heuristics or everything:
        sizes = tuple(int(s) for s in args.sizes.split(","))
        heuristic_ratios(
            "Heuristics against the optimum: BA dedicated networks (section 4.2), 10 components, max_null 2; "
            "load = mean requirement / mean capacity or bandwidth (the paper: 0.5)",
            {
                f"ba, {n} servers, load {load}": [ba_instance(seed=s, servers=n, load=load) for s in range(args.seeds)]
                for load in (0.5, 0.8)
                for n in sizes
            },
            ("least_cost_map", "annealed_least_cost_map", "random_neighbor"),
        )
        heuristic_ratios(
            "Heuristics against the optimum: bi-modal networks (section 6.1), 10 components, max_null 1",
            {
                f"bimodal, 60 servers, {links} dedicated links": [
                    bimodal_instance(seed=s, servers=60, dedicated_links=links) for s in range(args.seeds)
                ]
                for links in (59, 120)
            },
            ("least_cost_map", "process_map2", "random_neighbor"),
        )
    if args.exhaustive or everything:
        exhaustive_messages(args.seeds)


if __name__ == "__main__":
    main()
