"""A plugin module for the benchmark tests: heuristics declared outside the package.

A grid lists it under ``plugins: [tests.bench_plugins]``; the runner imports it on the driver and in
every Spark task, and ships it to cluster workers. ``plugin_first_fit`` places each operator's
fewest stable replicas on the first node (in a seed-shuffled order) with room for them, so it is
feasible whenever that simple rule finds room; ``plugin_fails`` always raises; ``plugin_crashes``
ends its process (as a segfaulting solver would), which loses only its own run; ``plugin_exits``
raises ``SystemExit``; ``plugin_sleeps`` sleeps 30 s in C code without looking at its time limit;
``plugin_kills_worker`` kills the Python worker that runs its task, which kills the whole Spark task;
``plugin_hogs`` allocates 10 GB; ``plugin_limits`` reports the data-segment limits of its process and
of the worker that forked it.
"""

from __future__ import annotations

import ctypes
import os
import random
import resource
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odrp.core.method import Heuristic, HeuristicOutcome

FAILURE = "deliberate failure of a test plugin"


@dataclass(frozen=True)
class FirstFitSettings:
    delay_s: float = field(default=0.0, metadata={"ge": 0})
    """Seconds to sleep first: lets a test catch a run in the middle."""


def first_fit(
    instance: Any, *, seed: int = 0, time_limit: float | None = None, settings: FirstFitSettings = FirstFitSettings()
) -> HeuristicOutcome:
    """Fewest stable replicas of each operator, each on the first candidate node with room left."""
    time.sleep(settings.delay_s)
    order = list(range(instance.n_nodes))
    random.Random(seed).shuffle(order)
    free = list(instance.capacity)
    placement: dict[str, dict[str, int]] = {}
    for i in instance.topological_order:
        stable = instance.replica_counts(i)
        if not stable:
            return HeuristicOutcome(None, None, message=f"{instance.operators[i]}: no stable replica count")
        counts: dict[str, int] = {}
        for _ in range(stable[0]):
            need = instance.resources[i]
            node = next((u for u in order if u in instance.candidates[i] and free[u] >= need), None)
            if node is None:
                return HeuristicOutcome(None, None, message=f"{instance.operators[i]}: no node with room")
            free[node] -= need
            counts[instance.nodes[node]] = counts.get(instance.nodes[node], 0) + 1
        placement[instance.operators[i]] = counts
    return HeuristicOutcome({"placement": placement}, None, {"node_order": order})


def fails(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    raise RuntimeError(FAILURE)


def crashes(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    os._exit(3)


def exits(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    raise SystemExit(4)


def sleeps(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    ctypes.CDLL(None).sleep(30)  # a native call that never returns to Python in time
    raise AssertionError("the watchdog should have stopped this run")


def kills_worker(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    os.kill(os.getppid(), signal.SIGKILL)  # the run's parent: the Python worker of the Spark task
    time.sleep(30)
    raise AssertionError("unreachable: the worker is gone")


def hogs(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    blocks = [bytearray(50 * 1024**2) for _ in range(200)]
    raise AssertionError(f"allocated {len(blocks)} blocks past the budget")


def limits(instance: Any, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    worker = Path(f"/proc/{os.getppid()}/limits").read_text().splitlines()
    soft = next(line.split()[3] for line in worker if line.startswith("Max data size"))
    run = resource.getrlimit(resource.RLIMIT_DATA)[0]
    return HeuristicOutcome(None, None, {"run": run, "worker": None if soft == "unlimited" else int(soft)})


HEURISTICS = (
    Heuristic(
        "plugin_first_fit", ("odrp",), first_fit, "test plugin: first fit", True, False, settings=FirstFitSettings
    ),
    Heuristic("plugin_fails", ("odrp",), fails, "test plugin: always raises"),
    Heuristic("plugin_crashes", ("odrp",), crashes, "test plugin: ends its process"),
    Heuristic("plugin_exits", ("odrp",), exits, "test plugin: raises SystemExit"),
    Heuristic("plugin_sleeps", ("odrp",), sleeps, "test plugin: stuck in a native call"),
    Heuristic("plugin_kills_worker", ("odrp",), kills_worker, "test plugin: kills the worker running it"),
    Heuristic("plugin_hogs", ("odrp",), hogs, "test plugin: allocates 10 GB"),
    Heuristic("plugin_limits", ("odrp",), limits, "test plugin: reports its memory limits"),
)
