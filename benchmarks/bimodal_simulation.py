"""The platform simulation of Asaduzzaman & Maheswaran, section 6: Figure 9 (a) and (b) and the other measures.

    python -m benchmarks.bimodal_simulation                       # 100 servers, 200 tasks, 2 seeds
    python -m benchmarks.bimodal_simulation --tasks 500 --seeds 0-9 --links 50,75,100,125,150,175,200
    python -m benchmarks.bimodal_simulation --quick               # a 30-server smoke run (seconds)

For each number of dedicated links and each setting (dedicated-only, public-only, bi-modal) it runs
:func:`odrp.simulation.bimodal.simulate` per seed on the same servers and workload, prints a markdown
table of the means (acceptance ratio, throughput, server and dedicated-link utilisation, SLA deviation,
elongation, map messages, rollbacks and how many of them a map's own pairs caused) and draws Figure 9
(a) task throughput and (b) acceptance ratio against the number of dedicated links as a PNG (matplotlib,
Agg backend).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from odrp.simulation.bimodal import NETWORKS, SimulationConfig, SimulationResult, simulate

MEASURES = (
    ("acceptance_ratio", "acceptance", "{:.3f}"),
    ("throughput_tasks_per_hour", "tasks/h", "{:.1f}"),
    ("throughput_mbps", "Mbps", "{:.2f}"),
    ("server_utilisation", "server util.", "{:.3f}"),
    ("dedicated_link_utilisation", "dedicated link util.", "{:.3f}"),
    ("sla_deviation_pct", "SLA deviation %", "{:.1f}"),
    ("elongation_pct", "elongation %", "{:.1f}"),
    ("mean_map_messages", "map messages", "{:.0f}"),
    ("rollbacks", "rollbacks", "{:.1f}"),
    ("self_conflicts", "of which own", "{:.1f}"),
)


def sweep(base: SimulationConfig, links: list[int], seeds: list[int]) -> dict[tuple[str, int], list[SimulationResult]]:
    out: dict[tuple[str, int], list[SimulationResult]] = {}
    for count in links:
        for network in NETWORKS:
            out[(network, count)] = [
                simulate(dataclasses.replace(base, network=network, dedicated_links=count, seed=s)) for s in seeds
            ]
    return out


def table(results: dict[tuple[str, int], list[SimulationResult]]) -> None:
    print("| dedicated links | network | " + " | ".join(label for _, label, _ in MEASURES) + " |")
    print("|---:|---|" + "---:|" * len(MEASURES))
    for (network, count), runs in results.items():
        cells = [fmt.format(statistics.mean(getattr(r, key) for r in runs)) for key, _, fmt in MEASURES]
        print(f"| {count} | {network} | " + " | ".join(cells) + " |")


def figure(results: dict[tuple[str, int], list[SimulationResult]], path: Path, title: str) -> None:
    links = sorted({count for _, count in results})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for network, marker in zip(NETWORKS, ("s", "^", "o"), strict=True):
        throughput = [statistics.mean(r.throughput_tasks_per_hour for r in results[(network, n)]) for n in links]
        acceptance = [statistics.mean(r.acceptance_ratio for r in results[(network, n)]) for n in links]
        axes[0].plot(links, throughput, marker=marker, label=network)
        axes[1].plot(links, acceptance, marker=marker, label=network)
    axes[0].set(xlabel="number of dedicated links", ylabel="tasks completed per hour", title="(a) task throughput")
    axes[1].set(xlabel="number of dedicated links", ylabel="accepted / arrived", title="(b) task acceptance ratio")
    axes[1].set_ylim(0, 1.02)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _ints(text: str) -> list[int]:
    if "-" in text and "," not in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(x) for x in text.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--rate", type=float, default=60.0, help="task arrivals per hour")
    parser.add_argument("--links", default="50,100,150,200", help="dedicated link counts, e.g. 50,100,150")
    parser.add_argument("--seeds", default="0,1", help="e.g. 0,1,2 or 0-9")
    parser.add_argument("--out", default="benchmarks/out/bimodal_figure9.png")
    parser.add_argument("--quick", action="store_true", help="30 servers, 40 tasks, one seed")
    args = parser.parse_args()
    base = SimulationConfig(servers=args.servers, tasks=args.tasks, arrivals_per_hour=args.rate)
    links = _ints(args.links)
    if args.quick:
        base = SimulationConfig(servers=30, tasks=40, arrivals_per_hour=240.0, mean_volume_mb=20.0)
        links = [15, 30, 45]
    seeds = _ints(args.seeds) if not args.quick else [0]
    start = time.perf_counter()
    results = sweep(base, links, seeds)
    elapsed = time.perf_counter() - start
    print(
        f"\n{base.servers} servers, {base.tasks} tasks at {base.arrivals_per_hour:g}/h, seeds {seeds}; "
        f"means over seeds ({elapsed:.0f} s)\n"
    )
    table(results)
    title = f"{base.servers} servers, {base.tasks} tasks at {base.arrivals_per_hour:g}/h, {len(seeds)} seed(s)"
    figure(results, Path(args.out), title)
    print(f"\nFigure 9 (a), (b): {args.out}")


if __name__ == "__main__":
    main()
