"""Spark's scaling and overhead: the same 100-instance grid on local[1] and local[2].

    python -m benchmarks.spark_scaling [--grid benchmarks/grids/spark-scaling.yaml] [--masters local[1] local[2]]
        [--repeats N]

Each master runs ``odrp bench`` in a fresh process (a fresh SparkContext) into a temporary
directory. The run record the runner writes into ``manifest.json`` gives the wall times; psutil
(test extras) polls the process tree every 0.5 s for CPU seconds (driver, JVM, Python workers and
the CBC processes they wait for); the instance files' modification times mark the first and the last
instance written. ``--repeats N`` runs the masters in turn N times (one table row per run, and the
median speed-up: on a 2-core machine one run's wall time varies by several per cent). Columns:

- ``start s``: SparkContext start-up; ``jobs s``: first job submitted to last result written;
- ``in tasks s``: wall seconds inside the Spark tasks, summed over instances (building the instance,
  every solve, the evaluator); ``solver s``: the rows' ``runtime_s`` summed;
- ``first s``: from the first job to the first instance written (starting a Python worker and
  importing the solver stack in it, once per core, plus one instance);
- ``stop s``: from the last instance written to the end of the process (the manifest, stopping Spark,
  the JVM's exit), with its CPU seconds; like the start-up, a fixed cost of the run, not of an instance;
- ``overhead / instance s`` (steady state, from the first instance written to the last): (cores x
  wall seconds - wall seconds in those tasks) / instances, i.e. scheduling, serialisation, result
  handling and cores idle at the tail, per instance; ``share``: that over cores x wall seconds;
- ``CPU overhead / instance s`` and ``CPU share``: the same from CPU seconds (the process tree's
  minus the tasks'), which unlike wall time do not grow when other programs share the cores;
- ``speed-up``: jobs s of the first master over jobs s of this one (and the same with start-up).

The steady-state figures count the tasks of the instances after the first as (n-1)/n of the total
(their own split is not recorded). Prints a markdown table and the load average: wall times on a
shared machine say little, so give the load with the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from odrp.bench import dataset
from odrp.bench.grid import load_grid

GRID = Path(__file__).resolve().parent / "grids" / "spark-scaling.yaml"


def cores(master: str) -> int:
    found = re.fullmatch(r"local\[(\d+)\]", master)
    return int(found.group(1)) if found else os.cpu_count() or 1


def tree_cpu(root) -> dict[int, float]:
    """CPU seconds (own + waited-for children) of the Python and Java processes under ``root``."""
    import psutil

    cpu = {}
    for p in [root, *root.children(recursive=True)]:
        try:
            if p.pid != root.pid and not p.name().startswith(("python", "java")):
                continue  # a solver binary (CBC): its parent's children times count it once reaped
            t = p.cpu_times()
            cpu[p.pid] = t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            pass  # it ended between listing and reading
    return cpu


def cpu_at(samples: list[tuple[float, float]], when: float) -> float:
    """The process tree's CPU seconds at wall time ``when``, linear between the two polls around it."""
    before = max((s for s in samples if s[0] <= when), default=samples[0])
    after = min((s for s in samples if s[0] >= when), default=samples[-1])
    if after[0] == before[0]:
        return before[1]
    return before[1] + (after[1] - before[1]) * (when - before[0]) / (after[0] - before[0])


def run(grid: Path, master: str, out: Path, partitions: int | None = None) -> dict:
    """Run the grid in a fresh process: its run record, CPU seconds, and the first- and last-instance marks.

    The marks are the modification times of the first and the last instance file written; the tree's
    CPU seconds at those instants are interpolated between polls (every 0.5 s: polling is itself CPU
    on the same cores, which a local[2] run has none of to spare)."""
    import psutil

    instances = len(load_grid(grid).tasks)
    command = [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--out", str(out), "--master", master]
    if partitions is not None:
        command += ["--partitions", str(partitions)]
    start = time.time()
    proc = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    cpu: dict[int, float] = {}
    samples: list[tuple[float, float]] = []  # (wall clock, tree CPU seconds so far)
    while proc.poll() is None:
        for pid, seconds in tree_cpu(root).items():
            cpu[pid] = max(cpu.get(pid, 0.0), seconds)
        samples.append((time.time(), sum(cpu.values())))
        time.sleep(0.5)
    end = time.time()
    samples.append((end, sum(cpu.values())))
    written = [path.stat().st_mtime for path in dataset.files(out)]
    if proc.returncode != 0 or len(written) != instances:
        raise SystemExit(f"odrp bench failed on {master} (exit code {proc.returncode})")
    first, last = min(written), max(written)
    record = json.loads((out / "manifest.json").read_text())["runs"][-1]
    record["solver_s"] = float(dataset.read(out)["runtime_s"].sum())
    record["tree_cpu_s"] = samples[-1][1]
    record["first_s"] = first - start - record["startup_s"]
    record["steady_wall_s"] = last - first
    record["steady_cpu_s"] = cpu_at(samples, last) - cpu_at(samples, first)
    record["stop_s"] = end - last
    record["stop_cpu_s"] = record["tree_cpu_s"] - cpu_at(samples, last)
    return record


def row(master: str, r: dict, base: dict) -> str:
    """One markdown row of the table for run ``r`` of ``master``, speed-ups over ``base``."""
    n = r["ran"]
    later = (n - 1) / n  # the share of the tasks' time that falls after the first instance
    busy = cores(master) * r["steady_wall_s"]
    overhead = busy - later * r["task_s"]
    cpu_overhead = r["steady_cpu_s"] - later * r["task_cpu_s"]
    return (
        f"| {master} | {n} | {r['startup_s']:.1f} | {r['jobs_s']:.1f} | {r['first_s']:.1f} "
        f"| {r['stop_s']:.1f} ({r['stop_cpu_s']:.1f}) | {r['task_s']:.1f} "
        f"| {r['solver_s']:.1f} | {overhead / (n - 1):.3f} | {100 * overhead / busy:.1f}% "
        f"| {cpu_overhead / (n - 1):.3f} | {100 * cpu_overhead / r['steady_cpu_s']:.1f}% "
        f"| {base['jobs_s'] / r['jobs_s']:.2f}x "
        f"| {(base['jobs_s'] + base['startup_s']) / (r['jobs_s'] + r['startup_s']):.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=Path, default=GRID)
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    parser.add_argument(
        "--partitions", type=int, default=None, help="odrp bench --partitions (default: one per instance)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="run the masters in turn this many times (default 1)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="odrp-scaling-") as tmp:
        for k in range(args.repeats):
            rounds.append(
                [(m, run(args.grid, m, Path(tmp) / f"run{k}-{j}", args.partitions)) for j, m in enumerate(args.masters)]
            )
    print(
        f"grid: {args.grid.name}; partitions: {args.partitions or 'one per instance'}; "
        f"load average before: {load_before[0]:.2f}, after: {os.getloadavg()[0]:.2f}"
    )
    print()
    print(
        "| master | instances | start s | jobs s | first s | stop s (CPU s) | in tasks s | solver s "
        "| overhead / instance s | share | CPU overhead / instance s | CPU share "
        "| speed-up (jobs) | speed-up (with start) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for runs in rounds:
        for master, r in runs:
            print(row(master, r, runs[0][1]))
    if args.repeats > 1:
        print()
        for j, master in enumerate(args.masters[1:], start=1):
            ups = [runs[0][1]["jobs_s"] / runs[j][1]["jobs_s"] for runs in rounds]
            print(
                f"{master} over {args.masters[0]}, {args.repeats} rounds: speed-up (jobs) median "
                f"{statistics.median(ups):.2f}x, each round {', '.join(f'{u:.2f}x' for u in ups)}"
            )


if __name__ == "__main__":
    main()
