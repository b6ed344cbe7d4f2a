"""``odrp bench GRID --dry-run``: what a grid would run, and a bound on how long, without starting Spark.

The grid is loaded and checked as for a run (:func:`odrp.bench.grid.load_grid`: generators run once per
parameter combination, files are read, plugins imported). Per study the plan counts its instances (an
instance that two studies share runs once, in the first), the runs of each instance (one per exact solver,
``repeats`` per randomised heuristic, one per other heuristic and per source of ``solutions:``) and so
the rows it writes.

**The time bound.** Every run ends within its time limit plus :data:`odrp.core.limits.GRACE` (the
watchdog), so an instance takes at most the sum ``d`` of its runs' limits (solutions made elsewhere take
no time), and the grid at most ``W``, the sum of ``d`` over its instances, on one core. Spark hands each
instance to the next free task slot, which is list scheduling: on ``P`` slots the wall time is at most
``W / P + (1 - 1/P) max d`` (Graham 1966). This bounds the runs only: Spark's start-up, building the
instances and the evaluator's checks come on top, and a study without a time limit has no bound.
``P`` is the local master's core count (``local[N]``, ``local[*]``: this machine's cores) capped by
``--partitions``; for a cluster master it is unknown here and only ``W`` is given.
"""

from __future__ import annotations

import os
import re
from typing import Any

from odrp.bench.grid import Grid
from odrp.core.limits import GRACE

_LOCAL = re.compile(r"^local(?:\[(\*|\d+)(?:,\s*\d+)?\])?$")


def parallelism(master: str | None, partitions: int | None = None) -> int | None:
    """How many instances run at once on ``master`` (None: the default ``local[*]``); None if unknown."""
    found = _LOCAL.match(master or "local[*]")
    if found is None:
        return None
    cores = found.group(1)
    slots = 1 if master == "local" else (os.cpu_count() or 1) if cores in (None, "*") else int(cores)
    return max(1, min(slots, partitions)) if partitions else max(1, slots)


def plan(grid: Grid, master: str | None = None, partitions: int | None = None) -> dict[str, Any]:
    """The plan of ``grid`` as one JSON-ready object (see the module docstring)."""
    studies = []
    longest: list[float | None] = []  # the bound of one instance of each study
    for study in grid.spec.studies:
        tasks = [task for task in grid.tasks if task.study == study.name]
        runs = tasks[0].runs if tasks else ()
        methods: dict[str, int] = {}
        for run in runs:
            name = run.method if run.solver is None else f"exact {run.solver}"
            methods[name] = methods.get(name, 0) + 1
        timed = sum(run.method not in tasks[0].external_methods for run in runs) if tasks else 0
        each = 0.0 if not timed else None if study.time_limit is None else timed * (study.time_limit + GRACE)
        if tasks:
            longest.append(each)
        studies.append(
            {
                "study": study.name,
                "problem": study.problem,
                "instances": len(tasks),
                "runs": methods,
                "rows": len(tasks) * len(runs),
                "time_limit": study.time_limit,
                "bound_s": None if each is None else len(tasks) * each,
            }
        )
    bounds = [study["bound_s"] for study in studies]
    serial = None if None in bounds else sum(bounds)
    slots = parallelism(master, partitions)
    wall = None
    if serial is not None and slots is not None:
        wall = serial / slots + (1 - 1 / slots) * max([b for b in longest if b is not None], default=0.0)
    return {
        "grid": grid.source,
        "studies": studies,
        "instances": len(grid.tasks),
        "rows": sum(study["rows"] for study in studies),
        "master": master or "local[*]",
        "parallelism": slots,
        "runs_bound_s": serial,
        "wall_bound_s": wall,
        "bound": "upper: every run at its time limit plus the watchdog's grace; Spark's start-up, building "
        "instances and evaluating come on top",
    }


def lines(planned: dict[str, Any]) -> list[str]:
    """The plan as text: one line per study, then the totals and the time bound."""
    out = [f"odrp bench --dry-run {planned['grid']}: nothing runs; the plan:"]
    for study in planned["studies"]:
        runs = ", ".join(f"{name} x{count}" if count > 1 else name for name, count in study["runs"].items())
        bound = "no time limit, no bound" if study["bound_s"] is None else f"at most {study['bound_s']:,.0f} s of runs"
        out.append(
            f"  {study['study']} ({study['problem']}): {study['instances']} instances x "
            f"[{runs or 'no runs'}] = {study['rows']} rows; {bound}"
        )
    out.append(f"total: {planned['instances']} instances, {planned['rows']} rows")
    serial, wall, slots = planned["runs_bound_s"], planned["wall_bound_s"], planned["parallelism"]
    if serial is None:
        out.append("time: no upper bound (a study without time_limit)")
    elif wall is None:
        out.append(
            f"time: at most {serial:,.0f} s of runs on one core; {planned['master']}'s cores are unknown here "
            "(divide by them)"
        )
    else:
        out.append(
            f"time: an upper bound of {wall:,.0f} s ({_clock(wall)}) on {slots} parallel tasks of "
            f"{planned['master']} ({serial:,.0f} s of runs), every run at its time limit; Spark's start-up, "
            "building instances and evaluating come on top"
        )
    return out


def _clock(seconds: float) -> str:
    minutes, second = divmod(round(seconds), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"
