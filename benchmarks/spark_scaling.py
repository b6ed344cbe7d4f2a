"""Spark's scaling and overhead: the same 100-instance grid on local[1] and local[2].

    python -m benchmarks.spark_scaling [--grid benchmarks/grids/spark-scaling.yaml] [--masters local[1] local[2]]

Each master runs ``odrp bench`` in a fresh process (a fresh SparkContext) into a temporary
directory; the numbers come from the run record the runner writes into ``manifest.json``, and CPU
seconds of the whole process tree (driver, JVM, Python workers) from psutil (test extras):

- ``start s``: SparkContext start-up; ``jobs s``: first job submitted to last result written;
- ``in tasks s``: the sum over instances of the wall time inside the Spark task (building the
  instance, every solve, the evaluator); ``solver s``: the sum of the rows' ``runtime_s``;
- ``overhead / instance``: (cores x jobs s - in tasks s) / instances: everything a core spends
  outside our task code (scheduling, serialisation, starting Python workers and importing the
  solver stack in them, idle cores at the tail); ``share``: that over cores x jobs s;
- ``CPU overhead``: CPU seconds of the process tree minus CPU seconds inside the tasks, per
  instance and as a share of the tree's CPU seconds (start-up included). Unlike wall time it does not
  grow when other programs share the cores;
- ``speed-up``: jobs s of the first master over jobs s of this one (and the same with start-up).

Prints a markdown table and the load average: wall times on a shared machine say little, so give
the load with the numbers.
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

GRID = Path(__file__).resolve().parent / "grids" / "spark-scaling.yaml"


def cores(master: str) -> int:
    found = re.fullmatch(r"local\[(\d+)\]", master)
    return int(found.group(1)) if found else os.cpu_count() or 1


def run(grid: Path, master: str, out: Path) -> dict:
    """Run the grid in a fresh process; its run record plus the CPU seconds of its process tree."""
    import psutil

    command = [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--out", str(out), "--master", master]
    proc = subprocess.Popen([*command, "--no-progress"], stdout=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    cpu: dict[int, float] = {}
    while proc.poll() is None:
        try:
            for p in [root, *root.children(recursive=True)]:
                with_children = p.cpu_times()
                cpu[p.pid] = max(cpu.get(p.pid, 0.0), with_children.user + with_children.system)
        except psutil.Error:
            pass  # a process ended between listing and reading
        time.sleep(0.5)
    if proc.returncode != 0:
        raise SystemExit(f"odrp bench failed on {master} (exit code {proc.returncode})")
    record = json.loads((out / "manifest.json").read_text())["runs"][-1]
    record["solver_s"] = float(dataset.read(out)["runtime_s"].sum())
    record["tree_cpu_s"] = sum(cpu.values())
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=Path, default=GRID)
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="odrp-scaling-") as tmp:
        for k, master in enumerate(args.masters):
            rows.append((master, run(args.grid, master, Path(tmp) / f"run{k}")))
    base = rows[0][1]
    print(f"grid: {args.grid.name}; load average before: {load_before[0]:.2f}, after: {os.getloadavg()[0]:.2f}")
    print()
    print(
        "| master | instances | start s | jobs s | in tasks s | solver s | overhead / instance s | share "
        "| CPU overhead / instance s | CPU share | speed-up (jobs) | speed-up (with start) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for master, r in rows:
        busy = cores(master) * r["jobs_s"]
        overhead = busy - r["task_s"]
        cpu_overhead = r["tree_cpu_s"] - r["task_cpu_s"]
        print(
            f"| {master} | {r['ran']} | {r['startup_s']:.1f} | {r['jobs_s']:.1f} | {r['task_s']:.1f} "
            f"| {r['solver_s']:.1f} | {overhead / r['ran']:.3f} | {100 * overhead / busy:.1f}% "
            f"| {cpu_overhead / r['ran']:.3f} | {100 * cpu_overhead / r['tree_cpu_s']:.1f}% "
            f"| {base['jobs_s'] / r['jobs_s']:.2f}x "
            f"| {(base['jobs_s'] + base['startup_s']) / (r['jobs_s'] + r['startup_s']):.2f}x |"
        )


if __name__ == "__main__":
    main()
