"""Formulation and solver choices of the knapsack family, measured.

    python -m benchmarks.knapsack_formulations [--root DIR] [--time-limit 60] [--part lp,milp,solvers,warm]

- ``lp``: the LP-relaxation bound of each formulation variant (deterministic: the same on every
  machine), next to the best known optimum;
- ``milp``: each variant solved with HiGHS under the time limit (status, objective, bound, seconds);
- ``solvers``: HiGHS, CBC and CP-SAT on a sample of every kind (how many proven optimal, total wall
  and CPU seconds, CBC's child process included), the measurement behind each kind's default solver;
- ``warm``: what a warm start buys: each instance of a sample solved cold (the default settings) and
  warm-started with the ``local_search`` solution (seed 0) as a MIP start, with the same solver and
  time limit; wall and CPU seconds to the proven optimum (the local search's own seconds apart), and
  whether the solver's log shows it took the start. Both must prove the same optimum.

Published instances come from ``--root`` (as in :mod:`benchmarks.knapsack_sets`), falling back to the
test subset in ``tests/data/external``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from benchmarks.knapsack_sets import DEFAULT_ROOT, REPO, cpu_seconds
from odrp.core.result import agrees
from odrp.core.solvers import solve
from odrp.io import load_instance
from odrp.kinds.knapsack import generators as gen
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import bounds, milp, patterns
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method, warm_start_solution

TEST_DATA = REPO / "tests" / "data" / "external"


def published(root: Path, folder: str, fmt: str, name: str, **options: Any) -> Any:
    path = root / folder / name
    if not path.exists():
        path = TEST_DATA / folder / name
    data = knapsack_io.read(fmt, path, **options)[0]
    return KINDS[data["problem"]].load(data, data["name"])


def rstorm(name: str) -> Any:
    return load_instance(REPO / "instances" / "qm3dkp" / f"{name}.json")[1]


def cases(root: Path) -> list[tuple[str, Any, float, list[tuple[str, dict[str, Any]]]]]:
    """(label, instance, best known optimum, [(variant label, solve options)])."""
    qkp_variants = [
        ("standard + RLT cuts", {"formulation": "compact", "capacity_cuts": True}),
        ("standard", {"formulation": "compact", "capacity_cuts": False}),
        ("glover", {"formulation": "compact", "linearisation": "glover", "capacity_cuts": False}),
    ]
    placement_variants = [
        ("compact", {"formulation": "compact", "capacity_cuts": True}),
        ("compact, no cuts", {"formulation": "compact", "capacity_cuts": False}),
        ("patterns", {"formulation": "patterns"}),
    ]
    qkp_root = root if (root / "qkp_billionnet_soutif" / "jeu_100_50_1.txt").exists() else TEST_DATA
    qkp_name = "jeu_100_50_1.txt" if qkp_root == root else "jeu_100_75_1.txt"
    qkp_opt = 83742.0 if qkp_root == root else 189137.0
    return [
        (f"qkp {qkp_name}", published(qkp_root, "qkp_billionnet_soutif", "bs-qkp", qkp_name), qkp_opt, qkp_variants),
        (
            "qmkp 20 x 3 (generated)",
            KINDS["qmkp"].load(gen.qmkp(items=20, knapsacks=3), "g"),
            float("nan"),
            qkp_variants,
        ),
        ("qm3dkp pageload-computation", rstorm("pageload-computation"), 595.3125, placement_variants),
        ("qm3dkp processing-computation", rstorm("processing-computation"), 546.875, placement_variants),
    ]


def lp_bound(instance: Any, options: dict[str, Any]) -> float:
    f = bounds.reduce_capacities(family_of(instance))
    settings = {k: v for k, v in options.items() if k != "formulation"}
    opts = milp.Options(**settings, objective_bound=bounds.surrogate_bound(f))
    model = patterns.build(f, opts)[0] if options["formulation"] == "patterns" else milp.build(f, opts)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    return solve(model, "highs").objective  # type: ignore[return-value]


def part_lp(root: Path) -> None:
    print("| instance | variant | LP bound | best known |\n|---|---|---|---|")
    for label, instance, best, variants in cases(root):
        for name, options in variants:
            print(f"| {label} | {name} | {lp_bound(instance, options):.6g} | {best:.6g} |", flush=True)


def part_milp(root: Path, time_limit: float) -> None:
    print("| instance | variant | status | objective | bound | s |\n|---|---|---|---|---|---|")
    for label, instance, _, variants in cases(root):
        kind = KINDS[instance.kind]
        for name, options in variants:
            extra = {k: v for k, v in options.items() if k != "formulation"}
            r = run_method(
                kind, instance, "exact", formulation=options["formulation"], time_limit=time_limit, options=extra
            )
            print(
                f"| {label} | {name} | {r.status} | {_num(r.objective)} | {_num(r.bound)} | {r.runtime_s:.1f} |",
                flush=True,
            )


def part_solvers(root: Path, time_limit: float) -> None:
    mkp = [
        "probT1_0U_R50_T002_M010_N0020_seed01.txt",
        "probT1_2S_R50_T002_M010_N0020_seed01.txt",
        "probT1_0U_R50_T002_M010_N0040_seed06.txt",
        "probT1_0U_R50_T002_M020_N0040_seed09.txt",
    ]
    samples: dict[str, list[Any]] = {
        "kp": [KINDS["kp"].load(gen.kp(seed=s, items=200, correlation="strong", max_weight=1000), "g") for s in (1, 2)],
        "mkp": [published(root, "mkp_dellamico_small", "dellamico-mkp", n) for n in mkp],
        "gap": [published(root, "gap_orlib", "orlib-gap", f"gap{i}.txt", sense="min") for i in (5, 8, 12)],
        "mdkp": [published(root, "mknap_orlib", "orlib-mknap", "mknapcb1.txt")],
        "qkp": [
            published(root, "qkp_billionnet_soutif", "bs-qkp", n) for n in ("jeu_100_75_1.txt", "jeu_100_25_8.txt")
        ],
        "qmkp": [KINDS["qmkp"].load(gen.qmkp(seed=s, items=12, knapsacks=3), "g") for s in (1, 2)],
        "qm3dkp": [
            rstorm(p.stem)
            for p in sorted((REPO / "instances" / "qm3dkp").glob("*.json"))
            if "-processing-" not in p.stem
        ],
    }
    solvers = ("highs", "cbc", "cpsat")
    print("| kind | instances | " + " | ".join(f"{s}: optimal / wall s / cpu s" for s in solvers) + " |")
    print("|---|---|" + "---|" * len(solvers))
    for kind, instances in samples.items():
        cells = []
        for solver in solvers:
            cpu = cpu_seconds()
            runs = [run_method(KINDS[kind], i, "exact", solver=solver, time_limit=time_limit) for i in instances]
            cpu = cpu_seconds() - cpu
            solved = sum(r.status == "optimal" for r in runs)
            cells.append(f"{solved} / {sum(r.runtime_s for r in runs):.1f} / {cpu:.1f}")
        print(f"| {kind} | {len(instances)} | " + " | ".join(cells) + " |", flush=True)


def warm_sample(root: Path) -> list[tuple[str, Any]]:
    """Instances that take HiGHS seconds, not milliseconds (one GAP, two of the other kinds)."""
    mkp = ("probT1_0U_R50_T002_M020_N0040_seed01.txt", "probT1_1W_R50_T002_M020_N0040_seed01.txt")
    qkp = ("jeu_100_25_4.txt", "jeu_100_25_7.txt")
    return [
        ("gap gap12 #1 (min)", published(root, "gap_orlib", "orlib-gap", "gap12.txt", sense="min")),
        *((f"mkp {n[7:-4]}", published(root, "mkp_dellamico_small", "dellamico-mkp", n)) for n in mkp),
        *((f"qkp {n}", published(root, "qkp_billionnet_soutif", "bs-qkp", n)) for n in qkp),
        *((f"qmkp 20 x 3 seed {s}", KINDS["qmkp"].load(gen.qmkp(seed=s, items=20, knapsacks=3), "g")) for s in (1, 2)),
        *((f"qm3dkp {n}", rstorm(n)) for n in ("pageload-computation", "processing-network")),
    ]


def part_warm(root: Path, time_limit: float, solver: str = "highs") -> None:
    print(
        "| instance | proven optimum | cold: status / wall s / cpu s | local_search: objective / s "
        "| warm: status / wall s / cpu s | start taken | cold / warm cpu |\n|---|---|---|---|---|---|---|"
    )
    ratios = []
    for label, instance in warm_sample(root):
        kind = KINDS[instance.kind]
        cpu = cpu_seconds()
        cold = run_method(kind, instance, "exact", solver=solver, time_limit=time_limit)
        cold_cpu = cpu_seconds() - cpu
        start, origin = warm_start_solution(kind, instance, "local_search")
        cpu = cpu_seconds()
        warm = run_method(kind, instance, "exact", solver=solver, time_limit=time_limit, warm_start=start)
        warm_cpu = cpu_seconds() - cpu
        same = cold.status != "optimal" or warm.status != "optimal" or agrees(cold.objective, warm.objective)
        taken = warm.metrics["method_stats"]["warm_start"]["accepted"]
        proven = cold if cold.status == "optimal" or warm.status != "optimal" else warm
        ratios.append(cold_cpu / warm_cpu)
        print(
            f"| {label} | {_num(proven.objective)}{'' if same else ' DIFFERENT: ' + _num(warm.objective)} "
            f"| {cold.status} / {cold.runtime_s:.1f} / {cold_cpu:.1f} "
            f"| {_num(origin['objective'])} / {origin['runtime_s']:.1f} "
            f"| {warm.status} / {warm.runtime_s:.1f} / {warm_cpu:.1f} | {taken} | {cold_cpu / warm_cpu:.2f} |",
            flush=True,
        )
    print(f"\ncold / warm CPU seconds: geometric mean {statistics.geometric_mean(ratios):.2f}")


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--part", default="lp,milp,solvers")
    args = parser.parse_args(argv)
    parts = args.part.split(",")
    print(f"time limit {args.time_limit:g} s, load {os.getloadavg()}\n")
    if "lp" in parts:
        part_lp(args.root)
        print()
    if "milp" in parts:
        part_milp(args.root, args.time_limit)
        print()
    if "solvers" in parts:
        part_solvers(args.root, args.time_limit)
        print()
    if "warm" in parts:
        part_warm(args.root, args.time_limit)
    print(f"\nload at the end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
