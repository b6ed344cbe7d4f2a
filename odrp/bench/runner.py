"""``odrp bench GRID.yaml --out DIR``: run a grid on Spark and write its dataset as instances finish.

The driver expands the grid (:mod:`odrp.bench.grid`), skips the instances ``DIR`` already holds
(``--resume``), and splits the rest into partitions: one instance per partition by default, so one
Spark task per instance; ``--partitions N`` groups them. All partitions run as one Spark job, and each
task's outcome reaches the driver the moment the task ends, through an accumulator
(:mod:`odrp.bench.stream`; a job per instance cost the driver 0.04 CPU-s each, 0.009 inside one job),
and is written to the dataset at once (:mod:`odrp.bench.dataset`): a killed run loses only the
instances in flight, and a rich progress bar on stderr counts instances done, elapsed time and ETA.
If the job fails (a task whose Python worker died ends a ``local`` job), the partitions whose outcomes
did not arrive are re-run one job each, so that only the failing task's instances get error rows.
The tasks themselves (:mod:`odrp.bench.task`) generate their instances from the recorded seeds; the
driver ships only (generator, params, seed), or a file's parsed JSON.

Spark: the embedded ``local[*]`` by default, any cluster with ``--master spark://host:7077``.
``PYSPARK_PYTHON`` defaults to this interpreter (workers must have the toolkit at the same path;
see the README), ``SPARK_LOCAL_IP`` to 127.0.0.1 for local and loopback masters; the Spark UI and
its console progress bar are off and the JVMs run the C1 JIT only (``--conf KEY=VALUE`` sets any
Spark property, these included). A bare SparkContext is used: it starts about 7 s faster than a
SparkSession. Plugin modules that live outside site-packages (a researcher's own heuristics) are
zipped and shipped with ``addPyFile``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import odrp
from odrp.bench import dataset, verify
from odrp.bench.grid import Grid, InstanceTask, canonical_json, load_grid
from odrp.bench.provenance import plugin_sources, toolkit_commit
from odrp.bench.stream import outcome_channel, run_partition_streamed
from odrp.bench.task import failed_outcome, run_partition
from odrp.core.errors import InputError

DEFAULT_MASTER = "local[*]"
#: The JVMs here only schedule tasks and pass bytes between Python processes, so the C1 JIT alone
#: serves them: measured, it cuts the JVM's CPU per job about 2.5-fold and Spark's start by ~5 s.
C1_ONLY = "-XX:TieredStopAtLevel=1"
SPARK_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.python.worker.reuse": "true",
    "spark.driver.extraJavaOptions": C1_ONLY,
    "spark.executor.extraJavaOptions": C1_ONLY,
}
OWN_PACKAGES = ("odrp",)


@dataclass
class BenchSummary:
    """What a bench run did (printed by the CLI, recorded in the manifest's ``runs``)."""

    out: Path
    master: str
    planned: int
    skipped: int
    ran: int = 0
    rows: int = 0
    failed_tasks: int = 0
    parallelism: int = 0
    partitions: int = 0
    startup_s: float = 0.0
    jobs_s: float = 0.0
    task_s: float = 0.0
    task_cpu_s: float = 0.0
    wall_s: float = 0.0
    status: str = "complete"
    workers: set[str] = field(default_factory=set)  # host:pid of every Python worker that ran a task
    warnings: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        keys = ("master", "planned", "skipped", "ran", "rows", "failed_tasks", "parallelism", "partitions")
        out = {k: getattr(self, k) for k in keys}
        out.update({k: round(getattr(self, k), 3) for k in ("startup_s", "jobs_s", "task_s", "task_cpu_s", "wall_s")})
        out.update(
            status=self.status,
            hosts=sorted({w.rsplit(":", 1)[0] for w in self.workers}),
            python_workers=len(self.workers),
            warnings=self.warnings,
        )
        return out


def bench(
    grid_path: str | Path,
    out: str | Path,
    *,
    master: str | None = None,
    partitions: int | None = None,
    resume: bool = False,
    retry_errors: bool = False,
    conf: Sequence[tuple[str, str]] = (),
    progress: bool = True,
    allow_outside: bool = False,
    verbose: bool = False,
    replace: Sequence[str] = (),
    prune_errors: bool = False,
) -> BenchSummary:
    """Run every instance of the grid that ``out`` does not hold yet; see the module docstring.

    ``allow_outside`` lets the grid's instance globs leave its folder (:func:`odrp.bench.grid.load_grid`);
    ``verbose`` keeps Spark's and the JVM's own logging (:func:`spark_context`). With ``resume``,
    ``replace`` (instance ids) and ``prune_errors`` move instances aside first (:func:`_set_aside`).
    """
    start = time.perf_counter()
    grid = load_grid(grid_path, allow_outside=allow_outside)
    out = Path(out)
    if partitions is not None and partitions < 1:
        raise InputError("command line", "--partitions", f"a number >= 1, got {partitions}")
    for flag, given in (
        ("--retry-errors", retry_errors),
        ("--replace", bool(replace)),
        ("--prune-errors", prune_errors),
    ):
        if given and not resume:
            raise InputError("command line", flag, "only with --resume")
    with dataset.writer_lock(out):
        return _bench_locked(
            grid,
            grid_path,
            out,
            master,
            partitions,
            resume,
            retry_errors,
            conf,
            progress,
            start,
            verbose,
            _Removal(tuple(replace), prune_errors),
        )


def _bench_locked(
    grid: Grid,
    grid_path: str | Path,
    out: Path,
    master: str | None,
    partitions: int | None,
    resume: bool,
    retry_errors: bool,
    conf: Sequence[tuple[str, str]],
    progress: bool,
    start: float,
    verbose: bool = False,
    removal: _Removal | None = None,
) -> BenchSummary:
    """:func:`bench` once it holds the dataset's lock (see the module docstring)."""
    present = dataset.files(out)
    if present and not resume:
        raise InputError(
            "command line",
            "--out",
            f"{out} already holds a dataset ({len(present)} instance files): pass --resume to continue it, "
            "or give a new directory",
        )
    warnings: list[str] = []
    previous, record = _checked_record(out, warnings)
    dataset.remove_partial_files(out)
    stored = dataset.stored_instances(out)
    if removal is not None:
        _set_aside(out, removal, grid.tasks, stored, record, warnings)
    todo, plan_warnings = _plan(grid.tasks, stored, retry_errors)
    summary = BenchSummary(
        out=out, master=master or _active_master() or DEFAULT_MASTER, planned=len(grid.tasks), skipped=0
    )
    summary.skipped = len(grid.tasks) - len(todo)
    summary.warnings.extend(warnings + plan_warnings)
    sources = plugin_sources(grid.spec.plugins)
    for plugin in sources:  # what ran, kept with the dataset (an export ships it)
        dataset.write_atomic(out, plugin.record()["file"], lambda handle, data=plugin.source: handle.write(data))
    run: dict[str, Any] = {"started": _now(), "grid": str(grid_path), "grid_sha256": grid.sha256}
    commit = toolkit_commit()
    if commit is not None:
        run["toolkit_commit"] = commit
    if sources:
        run["plugins"] = {plugin.module: plugin.sha256 for plugin in sources}
    runs = [*previous.get("runs", []), run]
    grid_record = {
        "file": str(grid_path),
        "sha256": grid.sha256,
        "text": grid.text,
        "spec": grid.spec.model_dump(mode="json"),
        "plugins": [plugin.record() for plugin in sources],
    }
    dataset.write_manifest(out, grid=grid_record, runs=runs, status="running", files=record)
    table_schema = dataset.schema(dataset.param_types(t.params for t in grid.tasks))
    try:
        if todo:
            if progress:
                print(
                    f"odrp bench: starting Spark on {master or _active_master() or DEFAULT_MASTER} "
                    f"for {len(todo)} instance{'' if len(todo) == 1 else 's'}...",
                    file=sys.stderr,
                    flush=True,
                )
            with spark_context(master, conf, verbose) as (sc, startup_s):
                summary.startup_s = startup_s
                summary.master = sc.master
                summary.parallelism = sc.defaultParallelism
                ship_plugins(sc, grid.spec.plugins)
                _execute(sc, todo, partitions, out, table_schema, summary, grid, progress, record)
    except KeyboardInterrupt:
        summary.status = "interrupted"
        raise
    except BaseException:
        summary.status = "failed"
        raise
    finally:
        summary.wall_s = time.perf_counter() - start
        runs[-1].update(summary.record(), finished=_now())
        dataset.write_manifest(out, grid=grid_record, runs=runs, status=summary.status, files=record)
        summary.errors = dataset.error_rows(out)
    return summary


def _checked_record(out: Path, warnings: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The previous manifest and the record of the files that agree with it; the rest moved aside.

    A damaged manifest is renamed, never replaced (its files cannot be checked, so they are moved
    aside too); a run the manifest still calls ``running`` was killed: it is marked ``interrupted``.
    Every file that disagrees with the record goes to ``DIR/quarantine/`` and its instance is rerun:
    a file is never certified by hashing it again. One warning line each.
    """
    try:
        previous = dataset.read_manifest(out) or {}
    except dataset.CorruptManifest as error:
        aside = dataset.set_manifest_aside(out)
        warnings.append(f"{error}: kept aside as {aside}; a new manifest is started")
        previous = {}
    if previous.get("status") == "running" and previous.get("runs") and "finished" not in previous["runs"][-1]:
        note = f"no end recorded (killed); seen by the run of {_now()}"
        previous["runs"][-1].update(status="interrupted", finished=None, note=note)
        warnings.append(
            f"the previous run (started {previous['runs'][-1].get('started')}) ended without a record "
            "(killed): marked interrupted in the manifest"
        )
    check = verify.check(out, previous)
    for finding in check.findings:
        moved = []
        if finding.kind != "missing":
            moved.append(str(dataset.quarantine(out, finding.file)))
        if finding.rows is not None and (out / finding.rows).exists():  # its instance file is bad: rerun it
            moved.append(str(dataset.quarantine(out, finding.rows)))
        aside = f"; moved to {' and '.join(moved)}" if moved else ""
        warnings.append(f"{finding.line(out)}{aside}, its instance is rerun")
    return previous, check.record


@dataclass(frozen=True)
class _Removal:
    """Instances to move out of a dataset before a resumed run."""

    replace: tuple[str, ...] = ()
    """Instance ids (``--replace ID``): moved aside, and run again when the grid plans them."""
    prune_errors: bool = False
    """``--prune-errors``: every instance with an error row that the grid no longer plans is moved aside
    (a study fixed after a typo leaves its failed instances behind under other ids)."""


def _set_aside(
    out: Path,
    removal: _Removal,
    tasks: list[InstanceTask],
    stored: dict[str, dataset.StoredInstance],
    record: dict[str, dict[str, Any]],
    warnings: list[str],
) -> None:
    """Move the instances ``removal`` names to ``DIR/quarantine/`` and forget them (one warning line each)."""
    unknown = [instance for instance in removal.replace if instance not in stored]
    if unknown:
        raise InputError("command line", "--replace", f"an instance id the dataset holds, got {unknown[0]!r}")
    planned = {task.instance_id for task in tasks}
    chosen = set(removal.replace)
    if removal.prune_errors:
        chosen |= {instance for instance, entry in stored.items() if entry.errors and instance not in planned}
    for path in dataset.files(out):
        if path.stem not in chosen:
            continue
        relative = path.relative_to(out).as_posix()
        aside = dataset.quarantine(out, relative)
        stored_instance = (record.pop(relative, None) or {}).get("instance")
        if isinstance(stored_instance, dict) and (out / str(stored_instance.get("file"))).is_file():
            dataset.quarantine(out, str(stored_instance["file"]))  # the instance file goes with its rows
        stored.pop(path.stem, None)
        warnings.append(f"{path.stem}: moved to {aside}" + ("; it runs again" if path.stem in planned else ""))


def _plan(
    tasks: list[InstanceTask], stored: dict[str, dataset.StoredInstance], retry_errors: bool
) -> tuple[list[InstanceTask], list[str]]:
    """The instances to run, and warnings about stored instances left as they are.

    An instance whose file exists is done: its file is replaced only by ``--retry-errors`` when it has
    an error row and holds no run the grid no longer plans (so replacing it loses nothing).
    """
    todo: list[InstanceTask] = []
    other_plan = kept_errors = 0
    for task in tasks:
        entry = stored.get(task.instance_id)
        if entry is None:
            todo.append(task)
            continue
        planned = {run.key for run in task.runs}
        if not planned <= entry.runs:
            other_plan += 1
        if retry_errors and entry.errors:
            if entry.runs <= planned:
                todo.append(task)
            else:
                kept_errors += 1
    warnings = []
    if other_plan:
        warnings.append(
            f"{other_plan} stored instances lack runs that the grid now plans (was the grid changed?); "
            "they are kept as they are: run the new plan into a new --out"
        )
    if kept_errors:
        warnings.append(
            f"{kept_errors} stored instances with error rows were not retried: they hold runs the grid "
            "no longer plans, which a retry would drop"
        )
    return todo, warnings


def _execute(
    sc: Any,
    todo: list[InstanceTask],
    partitions: int | None,
    out: Path,
    table_schema: Any,
    summary: BenchSummary,
    grid: Grid,
    show_progress: bool,
    record: dict[str, dict[str, Any]],
) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    n = min(partitions or len(todo), len(todo))
    chunks = [todo[p * len(todo) // n : (p + 1) * len(todo) // n] for p in range(n)]
    rdd = sc.parallelize(chunks, n)  # one chunk (list of tasks) per partition
    summary.partitions = n
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("instances"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    begin = time.perf_counter()
    with Progress(*columns, console=Console(stderr=True), disable=not show_progress) as progress:
        bar = progress.add_task(f"odrp bench {Path(grid.source).name} on {sc.master}", total=len(todo))
        stored: set[str] = set()

        def store(outcome: dict[str, Any]) -> None:
            if outcome["instance_id"] not in stored:  # a speculative duplicate is not written twice
                stored.add(outcome["instance_id"])
                _store(outcome, out, table_schema, summary, record)
                progress.advance(bar)

        try:
            error = _one_job(sc, rdd, n, store)
            left = [p for p in range(n) if any(task.instance_id not in stored for task in chunks[p])]
            if left:
                summary.warnings.append(
                    f"the run's Spark job failed ({_spark_error(error) if error else 'outcomes missing'}); "
                    f"its {len(left)} unfinished partitions were re-run one job each"
                )
                _job_per_partition(sc, rdd, [(p, chunks[p]) for p in left], store, summary)
        except BaseException:
            sc.cancelAllJobs()
            raise
    summary.jobs_s = time.perf_counter() - begin


def _one_job(sc: Any, rdd: Any, n: int, store: Callable[[dict[str, Any]], None]) -> BaseException | None:
    """Every partition in one Spark job, each outcome stored as its task ends (:mod:`odrp.bench.stream`).

    Returns the job's error, if it failed (in ``local`` mode one failed task ends the job).
    """
    channel, arrived = outcome_channel(sc)
    with ThreadPoolExecutor(1, thread_name_prefix="odrp-bench") as pool:
        job = pool.submit(sc.runJob, rdd, functools.partial(run_partition_streamed, channel), list(range(n)))
        try:
            while True:
                try:
                    store(arrived.get(timeout=0.2))
                except queue.Empty:
                    if job.done():  # a task's update reaches the queue before its job can end
                        break
            while not arrived.empty():
                store(arrived.get())
        except BaseException:  # Ctrl-C or a failed write: end the job now, not when its last task ends
            sc.cancelAllJobs()
            raise
        return job.exception()


def _job_per_partition(
    sc: Any,
    rdd: Any,
    partitions: list[tuple[int, list[InstanceTask]]],
    store: Callable[[dict[str, Any]], None],
    summary: BenchSummary,
) -> None:
    """One Spark job per partition, so that a task that dies takes only its own instances with it:
    they get error rows (``Spark task failed: ...``)."""
    threads = min(len(partitions), max(2, 2 * sc.defaultParallelism))  # no core waits for the next job
    with ThreadPoolExecutor(threads, thread_name_prefix="odrp-bench") as pool:
        futures = {pool.submit(sc.runJob, rdd, run_partition, [p]): chunk for p, chunk in partitions}
        try:
            for future in as_completed(futures):
                chunk = futures[future]
                try:
                    outcomes = future.result()
                except Exception as error:  # the Spark task died (a crashed worker, say): record it
                    summary.failed_tasks += len(chunk)
                    outcomes = [failed_outcome(task, f"Spark task failed: {_spark_error(error)}") for task in chunk]
                for outcome in outcomes:
                    store(outcome)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _store(
    outcome: dict[str, Any], out: Path, table_schema: Any, summary: BenchSummary, record: dict[str, dict[str, Any]]
) -> None:
    rows = outcome["rows"]
    table = dataset.to_table(rows, table_schema)
    data = outcome.get("instance")
    instance = None if data is None else canonical_json(data).encode()
    name, entry = dataset.write_instance(out, outcome["problem"], outcome["instance_id"], table, instance)
    record[name] = entry
    summary.ran += 1
    summary.rows += len(rows)
    summary.task_s += outcome["task_s"]
    summary.task_cpu_s += outcome["task_cpu_s"]
    if outcome["worker"]:
        summary.workers.add(outcome["worker"])
    versions = {row["package_version"] for row in rows} - {odrp.__version__}
    warning = (
        f"workers run odrp-toolkit {', '.join(sorted(versions))}, the driver {odrp.__version__}: "
        "install the same version on every worker"
    )
    if versions and warning not in summary.warnings:
        summary.warnings.append(warning)


def _spark_error(error: BaseException) -> str:
    """The last line of the Python traceback inside a Spark error, or its first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    python = [line for line in lines if line.split(":")[0].endswith(("Error", "Exception", "Exit"))]
    return (python[-1] if python else lines[0] if lines else type(error).__name__)[:500]


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# ------------------------------------------------------------------------------------ Spark


def _active_master() -> str | None:
    from pyspark import SparkContext

    active = SparkContext._active_spark_context
    return None if active is None else active.master


@contextlib.contextmanager
def spark_context(
    master: str | None = None, conf: Sequence[tuple[str, str]] = (), verbose: bool = False
) -> Iterator[tuple[Any, float]]:
    """A SparkContext and its start-up seconds; an active one in this process is reused, not stopped.

    Unless ``verbose``, the JVM logs errors only (the package's ``log4j2.properties``) and its
    start-up notices are dropped from its stderr (:func:`_quiet_stderr`).
    """
    from pyspark import SparkConf, SparkContext

    active = SparkContext._active_spark_context
    if active is not None:
        if master is not None and master != active.master:
            raise InputError(
                "command line", "--master", f"{master}, but this process already runs Spark on {active.master}"
            )
        yield active, 0.0
        return
    master = master or DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if master.startswith("local") or "127.0.0.1" in master or "localhost" in master:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark_conf = SparkConf().setMaster(master).setAppName("odrp bench")
    defaults = dict(SPARK_DEFAULTS)
    if not verbose:
        for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
            defaults[key] = f"{defaults[key]} -Dlog4j.configurationFile=file:{LOG4J2}"
    for key, value in [*defaults.items(), *conf]:
        spark_conf.set(key, value)
    start = time.perf_counter()
    with contextlib.nullcontext() if verbose else _quiet_stderr():
        sc = SparkContext(conf=spark_conf)
    sc.setLogLevel("WARN" if verbose else "ERROR")
    try:
        yield sc, time.perf_counter() - start
    finally:
        sc.stop()


LOG4J2 = Path(__file__).with_name("log4j2.properties")
"""The JVM's logging while a grid runs, unless ``--verbose``."""

JVM_NOISE = (
    "WARNING: Using incubator modules",
    "Setting default log level to",
    "To adjust logging level use sc.setLogLevel",
)
"""Lines the JVM prints on its stderr at every start that say nothing about the run (the last two
are Spark's notice to an interactive shell, which a Python driver is taken for)."""


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Start the JVM with a pipe for its stderr; a thread forwards every line but :data:`JVM_NOISE`.

    The JVM keeps the pipe for its life (and its Python workers inherit it), so their errors still
    reach the terminal; only this process's own stderr is restored when the block ends.
    """
    read_end, write_end = os.pipe()
    sys.stderr.flush()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_forward, args=(read_end, os.dup(saved)), daemon=True).start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _forward(read_end: int, target: int) -> None:
    with os.fdopen(read_end, "rb") as lines, os.fdopen(target, "wb", buffering=0) as out:
        for line in lines:
            if not line.decode(errors="replace").startswith(JVM_NOISE):
                out.write(line)


_shipped: dict[str, set[str]] = {}


@functools.cache
def _zip_dir() -> Path:
    """A temporary directory for plugin archives, removed when the process exits."""
    path = tempfile.mkdtemp(prefix="odrp-bench-plugins-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return Path(path)


def ship_plugins(sc: Any, modules: Sequence[str]) -> None:
    """``addPyFile`` every plugin that lives outside site-packages (zipped when it is a package).

    Installed plugins (and the toolkit's own packages) must be installed on the workers instead.
    """
    done = _shipped.setdefault(sc.applicationId, set())
    for module in modules:
        top = module.split(".")[0]
        if top in OWN_PACKAGES or top in done:
            continue
        spec = importlib.util.find_spec(top)
        if spec is None:
            continue
        if spec.submodule_search_locations:
            location = Path(next(iter(spec.submodule_search_locations)))
        elif spec.origin and spec.origin.endswith(".py"):
            location = Path(spec.origin)
        else:
            continue
        if {"site-packages", "dist-packages"} & set(location.parts):
            continue
        if location.is_dir():
            archive = _zip_dir() / f"{top}.zip"
            with zipfile.ZipFile(archive, "w") as bundle:
                for source in sorted(location.rglob("*.py")):
                    bundle.write(source, Path(top) / source.relative_to(location))
            sc.addPyFile(str(archive))
        else:
            sc.addPyFile(str(location))
        done.add(top)
