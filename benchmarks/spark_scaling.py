"""Spark's scaling and overhead: the same 100-instance grid on local[1] and local[2].

    python -m benchmarks.spark_scaling [--grid benchmarks/grids/spark-scaling.yaml] [--masters local[1] local[2]]

Each master runs ``odrp bench`` in a fresh process (a fresh SparkContext) into a temporary
directory. The run record the runner writes into ``manifest.json`` gives the wall times; psutil
(test extras) polls the process tree every 0.5 s for CPU seconds (driver, JVM, Python workers and
the CBC processes they wait for) and the number of instance files written. Columns:

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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import dataset
from benchmarks.grid import load_grid

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


def run(grid: Path, master: str, out: Path, partitions: int | None = None) -> dict:
    """Run the grid in a fresh process: its run record, CPU seconds, and the first- and last-instance marks."""
    import psutil

    instances = len(load_grid(grid).tasks)
    command = [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--out", str(out), "--master", master]
    if partitions is not None:
        command += ["--partitions", str(partitions)]
    start = time.perf_counter()
    proc = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    cpu: dict[int, float] = {}
    first: tuple[float, float] | None = None  # (wall, tree CPU) when the first instance was written
    last: tuple[float, float] | None = None  # and when the last one was
    while proc.poll() is None:
        for pid, seconds in tree_cpu(root).items():
            cpu[pid] = max(cpu.get(pid, 0.0), seconds)
        written = len(dataset.files(out))
        if first is None and written:
            first = (time.perf_counter(), sum(cpu.values()))
        if last is None and written == instances:
            last = (time.perf_counter(), sum(cpu.values()))
        time.sleep(0.2)
    end = time.perf_counter()
    if proc.returncode != 0 or first is None or last is None:
        raise SystemExit(f"odrp bench failed on {master} (exit code {proc.returncode})")
    record = json.loads((out / "manifest.json").read_text())["runs"][-1]
    record["solver_s"] = float(dataset.read(out)["runtime_s"].sum())
    record["tree_cpu_s"] = sum(cpu.values())
    record["first_s"] = first[0] - start - record["startup_s"]
    record["steady_wall_s"] = last[0] - first[0]
    record["steady_cpu_s"] = last[1] - first[1]
    record["stop_s"] = end - last[0]
    record["stop_cpu_s"] = record["tree_cpu_s"] - last[1]
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=Path, default=GRID)
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    parser.add_argument(
        "--partitions", type=int, default=None, help="odrp bench --partitions (default: one per instance)"
    )
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="odrp-scaling-") as tmp:
        for k, master in enumerate(args.masters):
            rows.append((master, run(args.grid, master, Path(tmp) / f"run{k}", args.partitions)))
    base = rows[0][1]
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
    for master, r in rows:
        n = r["ran"]
        later = (n - 1) / n  # the share of the tasks' time that falls after the first instance
        busy = cores(master) * r["steady_wall_s"]
        overhead = busy - later * r["task_s"]
        cpu_overhead = r["steady_cpu_s"] - later * r["task_cpu_s"]
        print(
            f"| {master} | {n} | {r['startup_s']:.1f} | {r['jobs_s']:.1f} | {r['first_s']:.1f} "
            f"| {r['stop_s']:.1f} ({r['stop_cpu_s']:.1f}) | {r['task_s']:.1f} "
            f"| {r['solver_s']:.1f} | {overhead / (n - 1):.3f} | {100 * overhead / busy:.1f}% "
            f"| {cpu_overhead / (n - 1):.3f} | {100 * cpu_overhead / r['steady_cpu_s']:.1f}% "
            f"| {base['jobs_s'] / r['jobs_s']:.2f}x "
            f"| {(base['jobs_s'] + base['startup_s']) / (r['jobs_s'] + r['startup_s']):.2f}x |"
        )


if __name__ == "__main__":
    main()
