"""What one Spark task does: build one instance, run every planned method on it, return its rows.

Runs inside the Spark workers (and anywhere else: it needs no Spark). For an
:class:`~odrp.bench.grid.InstanceTask` it

1. loads the grid's plugins (so their heuristics are known in this worker too);
2. builds the instance: the kind's generator from (params, seed), or the shipped file content, then
   ``kind.load`` (validation); the instance's size is ``kind.size(instance)``;
3. runs every planned run through :func:`odrp.run.run_method` (so the evaluator re-scores every
   solution): each exact solver, then each heuristic and repeat, with ``seed = repeat``;
4. finds the optimum among the exact rows, the instance's best known solution, best bound and tier,
   and gives every row its gaps (:func:`odrp.bench.optimum.certify_rows`).

**Warm starts** (``warm_start: best_heuristic`` in the study): the heuristics run first, then each
exact solver gets the best verified heuristic solution of the instance (:func:`best_start`) as its
MIP start. Both sides of the dependency live in this one task (one task per instance), so Spark needs
no second stage and no shuffle, and the start never leaves the worker. The exact row records the
start in ``warm_start`` (the heuristic run) and ``warm_start_objective``, and what the solver did
with it in ``method_stats.warm_start``; its ``runtime_s`` is the exact solve's own (the heuristic's
time is in the heuristic's row). With no verified heuristic solution the exact solve runs cold and
its message says so. Rows keep the plan's order either way.

Every run goes through :func:`odrp.run.run_within_limits`: a child process under the study's
time limit and memory budget (:mod:`odrp.core.limits`). A run the watchdog stops is a
``time_limit`` row; a method that raises (``SystemExit`` included), dies or needs more memory than its
budget gives a row with ``status: error`` and the reason as its message; it never stops the other
methods. An instance that cannot be built gives an error row for every planned run.
Nothing here knows a problem kind: it uses ``KINDS[problem]`` (generators, load, sense, size,
size_label) and ``run_method`` only.
"""

from __future__ import annotations

import functools
import gc
import os
import resource
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import odrp
from odrp.bench.grid import ExternalSolution, InstanceTask, Run, instance_sha256
from odrp.bench.optimum import certify_rows
from odrp.core.errors import MAX_LINE, InputError
from odrp.core.kind import require
from odrp.core.limits import HEADROOM, data_size
from odrp.core.memory import DEFAULT_SHARE, GB, machine_memory
from odrp.core.result import Result
from odrp.io import parse_json
from odrp.models import judged, model_solution
from odrp.registry import KINDS, load_plugins
from odrp.run import judge, run_within_limits


def run_partition(chunks: Iterable[list[InstanceTask]]) -> Iterator[dict[str, Any]]:
    """The function Spark runs on a partition (its elements are lists of tasks): one outcome per instance."""
    _freeze_imports()
    for chunk in chunks:
        for task in chunk:
            cap_worker(task)
            yield run_instance(task)


def run_memory_budget(task: InstanceTask) -> int:
    """A run's memory budget in bytes: the study's ``memory_limit``, else :data:`DEFAULT_SHARE` of this
    worker's memory shared by its cores (each core may run a task at once)."""
    if task.memory_limit is not None:
        return int(task.memory_limit * GB)
    return int(DEFAULT_SHARE * machine_memory() / (os.cpu_count() or 1))


def cap_worker(task: InstanceTask) -> None:
    """Cap this Python worker's data segment at its own size plus one run's budget (soft limit).

    The runs themselves are capped in their child processes (:mod:`odrp.core.limits`); this caps
    what the task does around them (building the instance, the rows), so that no part of a Spark
    task can grow past its share of the machine. Only the soft limit is set: the next task may raise
    it again for a study with a larger ``memory_limit``.
    """
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = data_size() + HEADROOM + run_memory_budget(task)
    resource.setrlimit(resource.RLIMIT_DATA, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


@functools.cache
def _freeze_imports() -> None:
    """Hide the imported solver stack from the garbage collector, once per worker process.

    PySpark's daemon calls ``gc.collect()`` after every task of a reused Python worker. With Pyomo,
    HiGHS, PuLP and the toolkit imported, each full collection walks all their objects: measured,
    about 0.03 CPU-s per task, as much as Spark's own overhead. ``gc.freeze()`` moves the objects
    that exist now (modules, classes, registries: alive as long as the process) to a permanent
    generation that collections skip; whatever a task creates is collected as before.

    The solvers' Python modules, which the toolkit imports where a solver first runs, are imported
    here first: every run is a forked child of this process (:mod:`odrp.core.limits`), and a child
    would otherwise import them again for each run.
    """
    import highspy  # noqa: F401
    import pyscipopt  # noqa: F401
    from ortools.sat.python import cp_model  # noqa: F401
    from pyomo.contrib.solver.solvers.highs import Highs  # noqa: F401

    gc.collect()
    gc.freeze()


def failed_outcome(task: InstanceTask, message: str) -> dict[str, Any]:
    """The outcome of an instance whose Spark task died: an error row for every planned run."""
    base = _instance_columns(task)
    now = time.perf_counter(), _cpu_seconds()
    outcome = _outcome(task, _certified(task, [_error_row(base, task, run, message, 0.0) for run in task.runs]), now)
    return {**outcome, "worker": None}  # built on the driver: no worker ran it


def run_instance(task: InstanceTask) -> dict[str, Any]:
    """Every planned row of one instance, with the wall and CPU seconds spent in this task."""
    start = time.perf_counter(), _cpu_seconds()
    kind = KINDS[task.problem]
    base = _instance_columns(task)
    try:
        load_plugins(task.plugins, "<grid>")
    except Exception as error:  # e.g. a plugin that is not installed on this worker
        rows = [_error_row(base, task, run, f"plugins: {error}", 0.0) for run in task.runs]
        return _outcome(task, _certified(task, rows), start)
    try:
        data = task.data if task.data is not None else _generate(task)
        source = task.file or f"<{task.instance_id}>"
        instance = kind.load(data, source)
        base.update(
            instance_name=getattr(instance, "name", None),
            instance_sha256=instance_sha256(data),
            size=int(kind.size(instance)),
            size_label=kind.size_label,
        )
    except Exception as error:  # a generator or a schema can fail in any way: record it
        message = f"instance: {_describe(error)}"
        rows = [_error_row(base, task, run, message, 0.0) for run in task.runs]
        return _outcome(task, _certified(task, rows), start)
    rows = _run_all(kind, instance, task, base)
    sense = getattr(instance, "sense", kind.sense)  # the GAP's sense is the instance's
    certify_rows(rows, sense, task.mip_gap, task.certify)
    return {**_outcome(task, rows, start), "instance": data}


def _certified(task: InstanceTask, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of an instance that could not be built or run, with the derived columns (no optimum, ``open``)."""
    certify_rows(rows, KINDS[task.problem].sense, task.mip_gap, task.certify)
    return rows


def _generate(task: InstanceTask) -> dict[str, Any]:
    func = KINDS[task.problem].generators[str(task.generator)]
    params = dict(task.params)
    if task.seed is not None:
        params["seed"] = task.seed
    return func(**params)


def _instance_columns(task: InstanceTask) -> dict[str, Any]:
    return {
        "instance_id": task.instance_id,
        "study": task.study,
        "problem": task.problem,
        "instance_name": None,
        "generator": task.generator,
        "file": task.file,
        "params": task.params,
        "seed": task.seed,
        "instance_sha256": None,
        "size": None,
        "size_label": KINDS[task.problem].size_label,
        "time_limit": task.time_limit,
        "package_version": odrp.__version__,
    }


@dataclass(frozen=True)
class WarmStart:
    """The heuristic solution an instance's exact runs start from."""

    label: str
    """The heuristic run it came from: ``method``, or ``method#repeat`` when the method ran repeatedly."""
    objective: float
    solution: dict[str, Any]


def best_start(rows: list[dict[str, Any]], sense: str, runs: tuple[Run, ...]) -> WarmStart | None:
    """The best verified heuristic solution among ``rows`` (the first of equals, in plan order), or None."""
    usable = [
        r
        for r in rows
        if r["method"] != "exact"
        and r["verified"]
        and r["status"] in ("feasible", "optimal")
        and r["objective"] is not None
        and r["solution"] is not None
    ]
    if not usable:
        return None
    best = (max if sense == "max" else min)(usable, key=lambda r: r["objective"])
    repeated = sum(run.method == best["method"] for run in runs) > 1
    label = f"{best['method']}#{best['repeat']}" if repeated else best["method"]
    return WarmStart(label, float(best["objective"]), best["solution"])


def _run_all(kind: Any, instance: Any, task: InstanceTask, base: dict[str, Any]) -> list[dict[str, Any]]:
    """Every planned run's row, in plan order; with a warm start the heuristics run first."""
    if task.warm_start is None:
        return [_run(kind, instance, task, run, base) for run in task.runs]
    heuristics = {run.key: _run(kind, instance, task, run, base) for run in task.runs if run.method != "exact"}
    sense = getattr(instance, "sense", kind.sense)
    start = best_start(list(heuristics.values()), sense, task.runs)
    exact = {
        run.key: _run(kind, instance, task, run, base, start, warm=True) for run in task.runs if run.method == "exact"
    }
    return [{**heuristics, **exact}[run.key] for run in task.runs]


def _run(
    kind: Any,
    instance: Any,
    task: InstanceTask,
    run: Run,
    base: dict[str, Any],
    start: WarmStart | None = None,
    warm: bool = False,
) -> dict[str, Any]:
    """One run's row; ``warm``: an exact run of a warm-started study, from ``start`` (None: cold)."""
    if run.method in task.external_methods:
        return _external_row(kind, instance, task, run, base)
    options = dict(task.options.get(run.method, {}))
    origin = {"warm_start": start.label, "warm_start_objective": start.objective} if start is not None else {}
    begin = time.perf_counter()
    limits = {"time_limit": task.time_limit, "memory_limit": run_memory_budget(task)}
    try:
        if run.method == "exact":
            formulation = options.pop("formulation", None)
            result = run_within_limits(
                kind,
                instance,
                "exact",
                solver=run.solver,
                formulation=formulation,
                mip_gap=task.mip_gap,
                options=options,
                warm_start=start.solution if start is not None else None,
                threads=task.threads,
                **limits,
            )
            options = task.options.get("exact", {})
        else:
            result = run_within_limits(kind, instance, run.method, seed=run.repeat, options=options, **limits)
    except Exception as error:  # a failing method is a row, never the end of the study
        return {**_error_row(base, task, run, _describe(error), time.perf_counter() - begin), **origin}
    out = result.to_dict()
    metrics = dict(out["metrics"])
    stats = metrics.pop("method_stats", {})
    message = out["message"]
    if start is not None:
        stats["warm_start"] = {**stats.get("warm_start", {}), "source": start.label}
    elif warm:
        message = "; ".join(m for m in (message, "warm start: no verified heuristic solution, solved cold") if m)
    return _row(base, run, out, options, message, metrics, stats, origin)


def _row(
    base: dict[str, Any],
    run: Run,
    out: dict[str, Any],
    options: dict[str, Any],
    message: str,
    metrics: dict[str, Any],
    stats: dict[str, Any],
    origin: dict[str, Any],
) -> dict[str, Any]:
    """The row of a run from its Result (as a dict)."""
    return {
        **base,
        "method": run.method,
        "solver": run.solver,
        "options": options,
        "repeat": run.repeat,
        "status": out["status"],
        "objective": out["objective"],
        "bound": out["bound"],
        "solver_gap": out["gap"],
        "runtime_s": out["runtime_s"],
        "verified": out["verified"],
        "message": message,
        "metrics": metrics,
        "method_stats": stats,
        "solution": out["solution"],
        "solver_version": out["solver"],
        "warm_start": origin.get("warm_start"),
        "warm_start_objective": origin.get("warm_start_objective"),
    }


def _external_row(kind: Any, instance: Any, task: InstanceTask, run: Run, base: dict[str, Any]) -> dict[str, Any]:
    """The row of a solution made elsewhere (the study's ``solutions:``), judged by the evaluator.

    Its file holds a solution JSON, or a Result JSON whose ``solution`` is taken (with its objective
    and ``runtime_s``, when it has them). A feasible solution gets the evaluator's objective (and is
    verified only if a claimed objective agrees with it); an infeasible one ``status: no_solution``
    with the evaluator's violations; an instance without a file ``no_solution`` too; a file that is
    not JSON, not a solution of the kind, or that the evaluator cannot read, an error row naming it. A
    solver's solution of a written model (a source with ``map``) is read back through its map
    (:func:`odrp.models.model_solution`) and judged the same way, verified when the evaluator finds it
    feasible; a malformed one (a missing or unknown variable, a fractional binary) is an error row.
    """
    entry = next((e for e in task.external if e.method == run.method), None)
    if entry is None:
        keys = ("objective", "bound", "gap", "runtime_s", "solution", "solver")
        out = {"status": "no_solution", "verified": False, **dict.fromkeys(keys)}
        message = "no solution file for this instance"
        return _row(base, run, out, {}, message, {}, {}, {})
    try:
        if entry.text is None:
            raise InputError(entry.file, "", entry.error)
        if entry.map_file is not None:
            result = _model_solution(kind, instance, entry, run, base)
        else:
            result = _solution_file(kind, instance, entry, run)
    except Exception as error:  # malformed: one error row naming the file, never the end of the grid
        text = str(error) if isinstance(error, InputError) else f"{entry.file}: {_describe(error)}"
        return {**_error_row(base, task, run, " ".join(text.split())[:MAX_LINE], 0.0), "runtime_s": None}
    out = result.to_dict()
    metrics = dict(out["metrics"])
    stats = metrics.pop("method_stats", {})
    return _row(base, run, out, {}, out["message"], metrics, stats, {})


def _solution_file(kind: Any, instance: Any, entry: ExternalSolution, run: Run) -> Result:
    """The Result of a solution JSON (or of a Result JSON's solution, with its objective and runtime)."""
    data = parse_json(str(entry.text), entry.file)
    require(isinstance(data, dict), entry.file, "", "a JSON object: a solution, or a Result with a solution")
    claimed, runtime = None, None
    if "solution" in data and "status" in data:  # a Result JSON
        claimed = data.get("objective") if isinstance(data.get("objective"), int | float) else None
        runtime = data.get("runtime_s") if isinstance(data.get("runtime_s"), int | float) else None
        data = data["solution"]
        require(isinstance(data, dict), entry.file, "solution", "a solution (a JSON object)")
    return judge(
        kind,
        instance,
        method=run.method,
        solver=None,
        status="feasible",
        solution=data,
        own_objective=claimed,
        bound=None,
        runtime_s=runtime,  # type: ignore[arg-type]
        stats={"file": entry.file},
        scores_itself=claimed is not None,
    )


def _model_solution(kind: Any, instance: Any, entry: ExternalSolution, run: Run, base: dict[str, Any]) -> Result:
    """The Result of a solver's solution of a model ``odrp model`` wrote, read back through its map."""
    if entry.map_text is None:
        raise InputError(str(entry.map_file), "", entry.map_error)
    record = parse_json(entry.map_text, str(entry.map_file))
    solution, values = model_solution(
        kind, instance, base["instance_sha256"], str(entry.text), entry.file, record, str(entry.map_file), entry.file
    )
    files = {"file": entry.file, "map": str(entry.map_file)}
    return judged(kind, instance, solution, values, method=run.method, record=record, files=files)


def _error_row(base: dict[str, Any], task: InstanceTask, run: Run, message: str, runtime_s: float) -> dict[str, Any]:
    return {
        **base,
        "method": run.method,
        "solver": run.solver,
        "options": task.options.get(run.method, {}),
        "repeat": run.repeat,
        "status": "error",
        "objective": None,
        "bound": None,
        "solver_gap": None,
        "optimum": None,
        "optimum_status": "none",
        "gap": None,
        "runtime_s": runtime_s,
        "verified": False,
        "message": message,
        "metrics": {},
        "method_stats": {},
        "solution": None,
        "solver_version": None,
        "warm_start": None,
        "warm_start_objective": None,
    }


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (a CBC run is a child process)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _outcome(task: InstanceTask, rows: list[dict[str, Any]], start: tuple[float, float]) -> dict[str, Any]:
    return {
        "instance_id": task.instance_id,
        "problem": task.problem,
        "rows": rows,
        "task_s": time.perf_counter() - start[0],
        "task_cpu_s": _cpu_seconds() - start[1],
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }
