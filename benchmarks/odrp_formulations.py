"""ODRP: the paper's ILP against the compact formulation, HiGHS against CBC, on the DEBS instances.

    python -m benchmarks.odrp_formulations                 # DEBS table (paper model with HiGHS)
    python -m benchmarks.odrp_formulations --skip-paper    # DEBS table without the slow paper model
    python -m benchmarks.odrp_formulations --paper-cbc     # also the paper model with CBC (slow)
    python -m benchmarks.odrp_formulations --large         # 12 nodes x 16 operators, k = 3
    python -m benchmarks.odrp_formulations --large --seeds 1,2,3,4,5 --profiles response_time,balanced --baseline
                                                           # ... beside the compact model alone
    python -m benchmarks.odrp_formulations --table3        # replica counts against the paper's Table 3

Prints markdown tables: model sizes, build and solve times, the paper/compact time ratio, and
whether every optimum agrees (to 1e-6). Times are CPU seconds of this process and its children
(CBC runs as a child process): on a shared machine wall-clock times measure the neighbours too.
The wall-clock seconds follow in brackets where they matter, with the load average at the start.

"compact" solves the response-time model (``odrp.kinds.replication.exact.response``, column "model":
response) when only w_r and w_a are nonzero; its time includes the local-search start.
``--baseline`` adds the compact model itself on those instances (setting ``response_model=False``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import time

from odrp.kinds.replication.exact.settings import OdrpSettings
from odrp.kinds.replication.exact.solve import solve
from odrp.kinds.replication.generators import debs2015, random_instance
from odrp.kinds.replication.instance import load

RATES = (20, 40, 60, 80, 100, 120)
PROFILES = {"w_r = 1": "response_time", "w_c = 1": "cost", "all 0.25": "balanced"}

#: The paper's Table 3 (S-ODRP_R, replicas per operator) for 20-60, 80-100 and 120 t/s.
TABLE3 = {
    "source": (1, 1, 1),
    "parser": (1, 1, 3),
    "filterByCoordinates": (1, 1, 2),
    "computeRouteID": (1, 2, 2),
    "metronome": (1, 1, 1),
    "countByWindow": (1, 1, 3),
    "partialRank": (1, 2, 3),
    "globalRank": (1, 1, 1),
}


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the CBC binary)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def timed_solve(inst, formulation: str, solver: str, time_limit: float | None, settings: OdrpSettings | None = None):
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = solve(inst, solver=solver, formulation=formulation, time_limit=time_limit, settings=settings)
    out.stats["total_s"] = cpu_seconds() - cpu
    out.stats["wall_s"] = time.perf_counter() - wall
    return out


def load_note() -> str:
    return "load average at start: " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def debs_table(paper_cbc: bool, time_limit: float | None, skip_paper: bool = False) -> None:
    print(load_note() + "; times in CPU seconds")
    print()
    with_paper = not skip_paper
    print(
        "| weights | rate | model | compact vars / rows |"
        + (" paper vars / rows |" if with_paper else "")
        + " compact HiGHS CPU s (wall: start + build + solve) | compact CBC CPU s |"
        + (" paper HiGHS CPU s (wall: build + solve) |" if with_paper else "")
        + (" paper CBC CPU s |" if paper_cbc else "")
        + (" paper / compact |" if with_paper else "")
        + " optimum F | agree |"
    )
    columns = 4 + (3 if with_paper else 0) + (1 if paper_cbc else 0)  # numeric columns
    print("|---|---:|---|" + "---:|" * columns + "---|")
    compact_times, ratios, cbc_times = [], [], []
    for label, profile in PROFILES.items():
        for rate in RATES:
            inst = load(debs2015(rate, profile))
            ch = timed_solve(inst, "compact", "highs", time_limit)
            cc = timed_solve(inst, "compact", "cbc", time_limit)
            runs = [ch, cc]
            ph = pc = None
            if with_paper:
                ph = timed_solve(inst, "paper", "highs", time_limit)
                runs.append(ph)
            if paper_cbc:
                pc = timed_solve(inst, "paper", "cbc", time_limit)
                runs.append(pc)
            proven = all(r.run.status == "optimal" for r in runs)
            values = [r.run.objective for r in runs]
            agree = proven and max(values) - min(values) <= 1e-6 * max(1.0, abs(values[0]))
            compact_times.append(ch.stats["total_s"])
            cbc_times.append(cc.stats["total_s"])
            cells = [
                label,
                str(rate),
                ch.stats.get("model", "compact"),
                f"{ch.stats['variables']} / {ch.stats['constraints']}",
            ]
            if ph is not None:
                cells.append(f"{ph.stats['variables']} / {ph.stats['constraints']}")
            cells += [
                f"{ch.stats['total_s']:.2f} ({ch.stats.get('start_s', 0.0):.2f} + {ch.stats['build_s']:.2f}"
                f" + {ch.stats['solve_s']:.2f})",
                _time(cc),
            ]
            if ph is not None:
                cells.append(f"{ph.stats['total_s']:.1f} ({ph.stats['build_s']:.1f} + {ph.stats['solve_s']:.1f})")
            if pc is not None:
                cells.append(_time(pc))
            if ph is not None:
                ratios.append(ph.stats["total_s"] / ch.stats["total_s"])
                cells.append(f"{ratios[-1]:.0f}x")
            cells += [f"{ch.run.objective:.6f}", "yes" if agree else "NO"]
            print("| " + " | ".join(cells) + " |", flush=True)
    print()
    summary = (
        f"compact + HiGHS: max {max(compact_times):.2f} CPU s, mean {statistics.mean(compact_times):.2f} CPU s; "
        f"compact + CBC: max {max(cbc_times):.2f} CPU s, mean {statistics.mean(cbc_times):.2f} CPU s"
    )
    if ratios:
        summary += f"; paper / compact (HiGHS): min {min(ratios):.0f}x, median {statistics.median(ratios):.0f}x"
    print(summary)
    print("(start + build + solve: wall seconds of the local search, the model build and the solver)")


def _time(out) -> str:
    mark = "" if out.run.status == "optimal" else f" ({out.run.status}, gap {out.run.gap:.1%})"
    return f"{out.stats['total_s']:.2f}{mark}"


def large_table(seeds: list[int], time_limit: float, pinned: str, profiles: list[str], baseline: bool) -> None:
    print(f"12 nodes x 16 operators, k = 3, pinned = {pinned}, time limit {time_limit:.0f} s (HiGHS, compact)")
    print(load_note())
    print()
    header = "| seed | weights | model | status | F | gap | CPU s (wall s) | vars / rows | start F |"
    rule = "|---:|---|---|---|---:|---:|---:|---:|---:|"
    if baseline:
        header += " compact alone: status | F | gap | CPU s (wall s) |"
        rule += "---|---:|---:|---:|"
    print(header)
    print(rule)
    for seed in seeds:
        for profile in profiles:
            data = random_instance(
                seed=seed, operators=16, nodes=12, max_replicas=3, weights_profile=profile, pinned=pinned
            )
            inst = load(data)
            out = timed_solve(inst, "compact", "highs", time_limit)
            start = out.stats.get("start_objective")
            cells = [
                str(seed),
                profile,
                out.stats.get("model", "compact"),
                *_outcome(out),
                f"{out.stats['variables']} / {out.stats['constraints']}",
                "" if start is None else f"{start:.6f}",
            ]
            if baseline and out.stats.get("model") == "response":
                plain = dataclasses.replace(OdrpSettings(), response_model=False)
                cells += _outcome(timed_solve(inst, "compact", "highs", time_limit, plain))
            elif baseline:
                cells += ["(the same model)", "", "", ""]
            print("| " + " | ".join(cells) + " |", flush=True)


def _outcome(out) -> list[str]:
    """Status, F, gap and CPU seconds (wall seconds) of a solve."""
    gap = "" if out.run.gap is None else f"{out.run.gap:.2%}"
    objective = "" if out.run.objective is None else f"{out.run.objective:.6f}"
    return [out.run.status, objective, gap, f"{out.stats['total_s']:.1f} ({out.stats['wall_s']:.1f})"]


def table3() -> None:
    print("| operator | " + " | ".join(f"{r} t/s" for r in RATES) + " | paper 20-60 / 80-100 / 120 |")
    print("|---|" + "---:|" * len(RATES) + "---|")
    rows: dict[str, list[int]] = {}
    for rate in RATES:
        out = solve(load(debs2015(rate, "response_time")))
        for op, nodes in out.solution["placement"].items():
            rows.setdefault(op, []).append(sum(nodes.values()))
    for op, counts in rows.items():
        print(f"| {op} | " + " | ".join(map(str, counts)) + f" | {' / '.join(map(str, TABLE3[op]))} |")
    totals = [sum(c[i] for c in rows.values()) for i in range(len(RATES))]
    paper = [sum(v[0 if r <= 60 else 1 if r <= 100 else 2] for v in TABLE3.values()) for r in RATES]
    print("| total | " + " | ".join(map(str, totals)) + f" | {paper[0]} / {paper[3]} / {paper[5]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paper-cbc", action="store_true", help="also solve the paper model with CBC")
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--large", action="store_true", help="the 12 x 16 table instead of DEBS")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--pinned", default="endpoints")
    parser.add_argument("--profiles", default="response_time,cost,availability,network,balanced")
    parser.add_argument("--baseline", action="store_true", help="--large: also the compact model alone")
    parser.add_argument("--skip-paper", action="store_true", help="DEBS table without the paper model")
    parser.add_argument("--table3", action="store_true")
    args = parser.parse_args()
    if args.table3:
        table3()
    elif args.large:
        seeds = [int(s) for s in args.seeds.split(",")]
        large_table(seeds, args.time_limit, args.pinned, args.profiles.split(","), args.baseline)
    else:
        debs_table(args.paper_cbc, args.time_limit, args.skip_paper)


if __name__ == "__main__":
    main()
