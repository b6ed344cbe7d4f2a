"""Benchmark grids: a YAML file of studies, validated and expanded into one task per instance.

A grid file (paths are relative to the grid file)::

    plugins: [my_lab.heuristics]      # optional: modules that declare extra HEURISTICS
    licence: CC-BY-4.0                # optional: the data's licence in an export (odrp dataset export)
    studies:
      - name: debs                    # unique within the grid
        problem: odrp                 # a kind of odrp.registry.KINDS
        generator: debs2015           # one of the kind's generators, with
        params:                       # keyword arguments; a list is crossed with the other lists
          rate: [20, 60, 100]         #   (write [[1, 2]] for one list-valued argument)
          weights_profile: response_time
        seeds: [2017]                 # a list, or a count n meaning seeds 0..n-1 (default 1)
        exact: [highs, cbc]           # exact solvers (default: the kind's first solver); may be []
        methods: [storm_default]      # heuristics of the registry that solve this kind
        repeats: 5                    # runs of each randomised heuristic, with seeds 0..4
        time_limit: 60                # seconds, for every method (default: none)
        memory_limit: 4               # GB, for every run (default: half the worker's memory / its cores)
        mip_gap: 1.0e-6               # relative gap at which an exact solver stops (default 1e-6)
        threads: 1                    # threads of each exact solver (default 1: Spark runs a task per core)
        certify: 0.01                 # relative gap between best known and best bound that makes an
                                      #   instance without a proof "bounded" (default 0.01)
        options:                      # keyword options per method; "exact" for the exact solvers
          exact: {formulation: compact}
        warm_start: best_heuristic    # optional: the exact solvers start from the best heuristic
      - name: files
        problem: odrp
        instances: ../instances/odrp/*.json     # a glob instead of generator/params/seeds
        solutions:                              # optional: placements made elsewhere, scored like a method
          - {method: storm_java, path: external/*.json}

Every expanded instance gets a stable id: ``{problem}-{generator}-{digest}`` where digest is the
first 16 hex digits of the SHA-256 of the canonical JSON of (problem, generator, params, seed), or
``{problem}-file-{digest}`` of the canonical JSON of a file's content. Canonical JSON sorts keys and
writes integral floats as integers, so ``rate: 20`` and ``rate: 20.0`` are one instance; the id
never depends on the study, the grid file or the process. An instance that two studies both expand
to runs once if the studies plan the same runs for it, and is an error otherwise.

**Solutions made elsewhere** (``solutions:``, a list of ``{method, path}``, or one such mapping):
each ``path`` is a glob, relative to the grid file like ``instances``, of solution files (a solution
JSON, or a Result JSON whose ``solution`` is taken) named after the instance they solve:
``<instance_id>.json``, or, for an instance file, the file's own name. Each is a run of the given
method name on its instance, scored by the kind's evaluator against the optimum like any method
(:mod:`odrp.bench.task`). With ``map`` (``{method, path, map}``, ``map`` a glob of the maps ``odrp model``
wrote, ``<instance>.map.json``), the files are solvers' solutions of the written models (``.sol`` of
HiGHS, CBC, SCIP or Gurobi, or variable values as JSON or CSV, :mod:`odrp.models`), each read back
through its instance's map. The method name must be new (no heuristic's, no other source's); a
file that names no instance of the study, or a model solution without a map, is bad input; the files
are read on the driver, and what is in them is judged in the task (a malformed one is an error row
there, never a failed grid).

``warm_start: best_heuristic`` (default: none) makes each instance's exact solvers take the best
verified heuristic solution of the instance as a MIP start (:mod:`odrp.bench.task` runs the
heuristics first); the study must then run an exact solver and at least one heuristic.

Bad grids raise :class:`odrp.core.errors.InputError` naming the grid file and the field
(``studies[1].params.rates``), which the CLI prints as one line with exit code 2. The whole grid is
checked before Spark starts (:func:`load_grid`): each generator runs once per combination of its
parameters, instance globs stay under the grid's folder or the working directory (``--allow-outside``
lifts that), and plugins,
found beside the grid file (or in the ``plugins/`` folder there) first, are imported only once the rest
of the grid is valid.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import inspect
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, PositiveInt

from odrp.bench.optimum import DEFAULT_CERTIFY
from odrp.core.canonical import canonical_json, normalise
from odrp.core.canonical import instance_sha256 as instance_sha256  # where the bench modules and tests find it
from odrp.core.errors import InputError, did_you_mean, read_text
from odrp.core.kind import ProblemKind, require, validate
from odrp.core.settings import settings_for
from odrp.core.solvers import why_not
from odrp.io import read_json
from odrp.registry import KINDS, heuristics, load_plugins

# ------------------------------------------------------------------------------------- the schema


class SolutionSource(BaseModel):
    """Solutions made elsewhere: files matching ``path``, scored under the method name ``method``; with
    ``map`` (a glob of ``odrp model`` maps), solutions of the written models (:mod:`odrp.models`)."""

    model_config = ConfigDict(extra="forbid")

    method: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.\-]+$")
    path: str = Field(min_length=1)
    map: str | None = Field(None, min_length=1)


class StudySpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1)
    problem: str
    generator: str | None = None
    params: dict[str, Any] = {}
    seeds: Any = None  # a count or a list of ints, checked in _seeds (clearer errors than a union)
    instances: str | None = None
    exact: list[str] | None = None
    methods: list[str] = []
    repeats: int = Field(1, ge=1)
    time_limit: PositiveFloat | None = None
    memory_limit: PositiveFloat | None = None
    mip_gap: NonNegativeFloat = 1e-6
    threads: PositiveInt = 1
    certify: NonNegativeFloat = DEFAULT_CERTIFY
    options: dict[str, dict[str, Any]] = {}
    warm_start: Literal["best_heuristic"] | None = None
    solutions: list[SolutionSource] | SolutionSource = []


class GridSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    plugins: list[str] = []
    licence: str | None = Field(None, min_length=1)
    studies: list[StudySpec] = Field(min_length=1)


# ------------------------------------------------------------------------------ expanded tasks


@dataclass(frozen=True)
class Run:
    """One planned row of an instance: a method, its exact solver (if any) and a repeat index."""

    method: str
    solver: str | None
    repeat: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.method, self.solver or "", self.repeat)


@dataclass(frozen=True)
class ExternalSolution:
    """A solution made elsewhere for one instance: the method name it is scored under, its file (relative
    to the grid) and the file's text, read on the driver (None, with ``error``, when it could not be); for a
    solution of a written model, its map's file and text too (None, with ``map_error``, when unreadable)."""

    method: str
    file: str
    text: str | None
    error: str = ""
    map_file: str | None = None
    map_text: str | None = None
    map_error: str = ""


@dataclass(frozen=True)
class InstanceTask:
    """Everything one Spark task needs to build an instance and run every method on it.

    A generated instance travels as (generator, params, seed) and is built inside the task; a file
    instance travels as its parsed JSON (``data``), so workers need no shared file system.
    """

    instance_id: str
    study: str
    problem: str
    generator: str | None
    params: dict[str, Any]
    seed: int | None
    file: str | None
    data: dict[str, Any] | None
    runs: tuple[Run, ...]
    time_limit: float | None
    mip_gap: float
    options: dict[str, dict[str, Any]]
    plugins: tuple[str, ...] = ()
    warm_start: str | None = None
    """``best_heuristic``: the exact runs start from the best verified heuristic solution."""
    memory_limit: float | None = None
    """GB per run; None: the worker's default (:func:`odrp.bench.task.run_memory_budget`)."""
    external: tuple[ExternalSolution, ...] = ()
    """The solutions made elsewhere for this instance (the study's ``solutions:``), one per method at most."""
    external_methods: tuple[str, ...] = ()
    """Every method name of the study's ``solutions:`` (a run each, with or without a file here)."""
    threads: int = 1
    """Threads of each exact solver (the study's ``threads``)."""
    certify: float = DEFAULT_CERTIFY
    """The relative gap between best known and best bound that certifies an instance without a proof
    (tier ``bounded``, :mod:`odrp.bench.optimum`)."""

    def plan(self) -> tuple[Any, ...]:
        """What is run on the instance; two studies may share an instance only with equal plans."""
        return (
            self.runs,
            self.time_limit,
            self.memory_limit,
            self.mip_gap,
            self.threads,
            self.certify,
            canonical_json(self.options),
            self.warm_start,
            tuple((e.method, e.file) for e in self.external),
        )


@dataclass
class Grid:
    """A validated grid: where it came from, what it says, and its instances."""

    source: str
    text: str
    spec: GridSpec
    tasks: list[InstanceTask] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


# ------------------------------------------------------------------------------------- the ids


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:16]


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", text)


def generated_instance_id(problem: str, generator: str, params: dict[str, Any], seed: int | None) -> str:
    """The id of a generated instance, from (problem, generator, params, seed) alone."""
    key = {"problem": problem, "generator": generator, "params": params, "seed": seed}
    return f"{_safe(problem)}-{_safe(generator)}-{_digest(key)}"


def file_instance_id(problem: str, data: Any) -> str:
    """The id of an instance read from a file, from the file's content (as canonical JSON)."""
    return f"{_safe(problem)}-file-{_digest(data)}"


# ------------------------------------------------------------------------------------- loading


def load_grid(path: str | Path, *, allow_outside: bool = False) -> Grid:
    """Read, validate and expand a grid file; bad input raises :class:`InputError`.

    Everything is checked before anything runs, in this order: the YAML and its schema; every study's
    instances (each instance file is loaded as its kind; each generator is run once on the driver
    for every combination of its parameters, with the first seed, and its instance loaded), whose
    files must lie under the grid's folder unless ``allow_outside``; then the plugins are imported
    (a module beside the grid file first, then ``sys.path``); then the methods, solvers and options.
    """
    source = str(path)
    text = read_text(path, "YAML file")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise InputError(source, where, f"valid YAML ({problem})") from None
    require(isinstance(data, dict), source, "", "a mapping with studies: (and optionally plugins:)")
    spec = validate(GridSpec, data, source)
    base = Path(path).resolve().parent
    names: set[str] = set()
    found = []
    for s, study in enumerate(spec.studies):
        where = f"studies[{s}]"
        require(study.name not in names, source, f"{where}.name", f"a name no other study has, got {study.name!r}")
        names.add(study.name)
        instances = _instances(study, where, source, base, allow_outside)
        _match_solutions(study, instances, where, source, base, allow_outside)
        found.append(instances)
    load_plugins(spec.plugins, source, beside=base)
    grid = Grid(source=source, text=text, spec=spec)
    owner: dict[str, tuple[int, InstanceTask]] = {}
    for s, (study, instances) in enumerate(zip(spec.studies, found, strict=True)):
        where = f"studies[{s}]"
        for task in _tasks(study, instances, where, source, tuple(spec.plugins)):
            if task.instance_id in owner:
                first, other = owner[task.instance_id]
                require(
                    other.plan() == task.plan(),
                    source,
                    where,
                    f"instance {task.instance_id} is also in study {spec.studies[first].name!r} with other "
                    "methods or settings; give each instance one plan",
                )
                continue
            owner[task.instance_id] = (s, task)
            grid.tasks.append(task)
    return grid


def _instances(study: StudySpec, where: str, source: str, base: Path, allow_outside: bool) -> list[dict[str, Any]]:
    """What tells a study's instances apart (id, generator parameters and seed, or file and content),
    each checked: files loaded as their kind, generators run once per parameter combination."""
    require(study.problem in KINDS, source, f"{where}.problem", f"one of {', '.join(KINDS)}, got {study.problem!r}")
    kind = KINDS[study.problem]
    require(
        (study.generator is None) != (study.instances is None),
        source,
        where,
        "either generator (with params and seeds) or instances (a glob), not both or neither",
    )
    if study.instances is not None:
        require(
            not study.params and study.seeds is None,
            source,
            f"{where}.instances",
            "no params or seeds with instance files (they go with a generator)",
        )
        return [
            _file_instance(file, kind, base, source)
            for file in _glob(study.instances, base, where, source, allow_outside)
        ]
    return _generated_instances(study, kind, where, source)


def solution_sources(study: StudySpec) -> list[SolutionSource]:
    """The study's ``solutions:`` as a list (one mapping is a list of one)."""
    return [study.solutions] if isinstance(study.solutions, SolutionSource) else list(study.solutions)


def _match_solutions(
    study: StudySpec, instances: list[dict[str, Any]], where: str, source: str, base: Path, allow_outside: bool
) -> None:
    """Give each instance the files of the study's ``solutions:`` named after it (``instance["external"]``).

    A file is named after an instance by its stem: the instance id, or an instance file's own stem.
    A file that names no instance of the study is bad input; its content is judged in the task.
    """
    for instance in instances:
        instance["external"] = ()
    keys: dict[str, dict[str, Any]] = {}
    for instance in instances:
        keys[instance["instance_id"]] = instance
        if instance["file"] is not None:
            keys.setdefault(Path(instance["file"]).stem, instance)
    for j, entry in enumerate(solution_sources(study)):
        field_name = f"{where}.solutions[{j}].path"
        maps = _maps(entry, keys, f"{where}.solutions[{j}]", source, base, allow_outside)
        for file in _glob(entry.path, base, f"{where}.solutions[{j}]", source, allow_outside, "path"):
            instance = keys.get(file.stem)
            require(
                instance is not None,
                source,
                field_name,
                f"solution files named after an instance of study {study.name!r} (<instance_id>.json, or the "
                f"instance file's name); {file.name} names none",
            )
            assert instance is not None
            external = _external(entry.method, file, base)
            if maps is not None:
                require(
                    instance["instance_id"] in maps,
                    source,
                    f"{where}.solutions[{j}].map",
                    f"a map for every solution file ({file.stem}{MAP_SUFFIX}, as odrp model writes it); none for "
                    f"{file.name}",
                )
                external = _with_map(external, maps[instance["instance_id"]], base)
            instance["external"] = (*instance["external"], external)


MAP_SUFFIX = ".map.json"
"""The maps ``odrp model`` writes: ``MODEL.map.json`` beside ``MODEL.mps``."""


def _maps(
    entry: SolutionSource, keys: dict[str, dict[str, Any]], where: str, source: str, base: Path, allow_outside: bool
) -> dict[str, Path] | None:
    """The map file of each instance (by id) that ``entry.map`` matches; None without ``map``."""
    if entry.map is None:
        return None
    found: dict[str, Path] = {}
    for file in _glob(entry.map, base, where, source, allow_outside, "map"):
        instance = keys.get(file.name.removesuffix(MAP_SUFFIX)) if file.name.endswith(MAP_SUFFIX) else None
        require(
            instance is not None,
            source,
            f"{where}.map",
            f"maps named after an instance of the study (<instance>{MAP_SUFFIX}); {file.name} names none",
        )
        assert instance is not None
        found[instance["instance_id"]] = file
    return found


def _with_map(external: ExternalSolution, file: Path, base: Path) -> ExternalSolution:
    """``external`` with its map's text, read now like the solution's."""
    from odrp.io import MAX_FILE_BYTES

    relative = os.path.relpath(file, base)
    try:
        return dataclasses.replace(external, map_file=relative, map_text=read_text(file, "map file", MAX_FILE_BYTES))
    except InputError as error:
        return dataclasses.replace(external, map_file=relative, map_error=error.expected)


def _external(method: str, file: Path, base: Path) -> ExternalSolution:
    """A solution file's text, read now (workers need no shared file system); unreadable: an error to record."""
    from odrp.io import MAX_FILE_BYTES

    relative = os.path.relpath(file, base)
    try:
        return ExternalSolution(method, relative, read_text(file, "UTF-8 file", MAX_FILE_BYTES))
    except InputError as error:  # no regular file, too large, unreadable: an error row of its run
        return ExternalSolution(method, relative, None, error.expected)


def _tasks(
    study: StudySpec, instances: list[dict[str, Any]], where: str, source: str, plugins: tuple[str, ...]
) -> list[InstanceTask]:
    """The study's tasks: its instances with the runs and options it plans (checked here)."""
    kind = KINDS[study.problem]
    runs = _runs(study, kind, where, source)
    external_methods = _external_methods(study, where, source)
    runs = (*runs, *(Run(method, None, 0) for method in external_methods))
    options = _options(study, kind, where, source)
    if study.warm_start is not None:
        methods = {run.method for run in runs}
        require(
            "exact" in methods and len(methods) > 1,
            source,
            f"{where}.warm_start",
            "a study with an exact solver and at least one heuristic (the start comes from a heuristic)",
        )
    common = {
        "study": study.name,
        "problem": kind.name,
        "runs": runs,
        "time_limit": study.time_limit,
        "memory_limit": study.memory_limit,
        "mip_gap": study.mip_gap,
        "threads": study.threads,
        "certify": study.certify,
        "options": options,
        "plugins": plugins,
        "warm_start": study.warm_start,
        "external_methods": external_methods,
    }
    return [InstanceTask(**instance, **common) for instance in instances]


def _external_methods(study: StudySpec, where: str, source: str) -> tuple[str, ...]:
    """The method names of the study's ``solutions:``: each new (no heuristic's, no other source's)."""
    known = heuristics()
    names: list[str] = []
    for j, entry in enumerate(solution_sources(study)):
        field_name = f"{where}.solutions[{j}].method"
        require(
            entry.method != "exact" and entry.method not in known,
            source,
            field_name,
            f"a method name of its own (not exact nor a heuristic of the registry), got {entry.method!r}",
        )
        require(entry.method not in names, source, field_name, f"each method once, got {entry.method!r} twice")
        names.append(entry.method)
    return tuple(names)


def _runs(study: StudySpec, kind: ProblemKind, where: str, source: str) -> tuple[Run, ...]:
    solvers = list(kind.solvers[:1]) if study.exact is None else study.exact
    runs: list[Run] = []
    for j, solver in enumerate(solvers):
        require(
            solver in kind.solvers,
            source,
            f"{where}.exact[{j}]",
            f"a solver of {kind.name} ({', '.join(kind.solvers)}), got {solver!r}",
        )
        require(solver not in solvers[:j], source, f"{where}.exact[{j}]", f"each solver once, got {solver!r} twice")
        reason = why_not(solver)
        require(reason is None, source, f"{where}.exact[{j}]", f"a solver that runs here: {reason}; or another solver")
        runs.append(Run("exact", solver, 0))
    known = heuristics()
    for j, method in enumerate(study.methods):
        field_name = f"{where}.methods[{j}]"
        require(method != "exact", source, field_name, "a heuristic (exact solvers go under exact:)")
        require(
            method in known,
            source,
            field_name,
            f"a registered heuristic ({', '.join(sorted(known)) or 'none yet'}), got {method!r}",
        )
        require(
            kind.name in known[method].kinds,
            source,
            field_name,
            f"a heuristic that solves {kind.name} ({method} solves {', '.join(known[method].kinds)})",
        )
        require(method not in study.methods[:j], source, field_name, f"each method once, got {method!r} twice")
        repeats = study.repeats if known[method].randomized else 1
        runs.extend(Run(method, None, r) for r in range(repeats))
    return tuple(runs)


def _options(study: StudySpec, kind: ProblemKind, where: str, source: str) -> dict[str, dict[str, Any]]:
    for method, opts in study.options.items():
        field_name = f"{where}.options.{method}"
        require(
            method == "exact" or method in study.methods,
            source,
            field_name,
            "options of a method the study runs (exact or one of its methods)",
        )
        if method == "exact":
            if "formulation" in opts:
                require(
                    opts["formulation"] in kind.formulations,
                    source,
                    f"{field_name}.formulation",
                    f"one of {', '.join(kind.formulations) or 'none'}, got {opts['formulation']!r}",
                )
            rest = {name: value for name, value in opts.items() if name != "formulation"}
            if kind.settings is not None:
                settings_for(kind.settings, rest, source=source, where=field_name)
            else:
                require(
                    not rest,
                    source,
                    field_name,
                    f"no options but formulation: the exact method of {kind.name} has no settings",
                )
            continue
        heuristic = heuristics()[method]
        if heuristic.settings is not None:
            settings_for(heuristic.settings, opts, source=source, where=field_name)
        else:
            require(not opts, source, field_name, f"no options: {method} has no settings")
    return {method: normalise(opts) for method, opts in study.options.items()}


def _keywords(func: Any, skip: tuple[str, ...]) -> list[str] | None:
    """The keyword parameters of ``func`` (None when it takes ``**kwargs``: anything goes)."""
    parameters = inspect.signature(func).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return [p.name for p in parameters if p.name not in skip and p.kind is not inspect.Parameter.VAR_POSITIONAL]


def _generated_instances(study: StudySpec, kind: ProblemKind, where: str, source: str) -> list[dict[str, Any]]:
    generator = study.generator
    assert generator is not None
    require(
        generator in kind.generators,
        source,
        f"{where}.generator",
        f"a generator of {kind.name} ({', '.join(kind.generators)}), got {generator!r}",
    )
    func = kind.generators[generator]
    accepted = _keywords(func, skip=())
    takes_seed = accepted is None or "seed" in accepted
    for name in study.params:
        require(name != "seed", source, f"{where}.params.seed", "seeds go under seeds:, not params:")
        require(
            accepted is None or name in accepted,
            source,
            f"{where}.params.{name}",
            f"a parameter of {kind.name} generator {generator} ({', '.join(p for p in accepted or () if p != 'seed')})"
            + did_you_mean(name, accepted or ()),
        )
    seeds = _seeds(study.seeds, where, source)
    require(
        takes_seed or seeds == [0],
        source,
        f"{where}.seeds",
        f"one seed at most: generator {generator} takes no seed",
    )
    names = list(study.params)
    choices = []
    for name in names:
        value = study.params[name]
        values = value if isinstance(value, list) else [value]
        require(bool(values), source, f"{where}.params.{name}", "a value or a non-empty list of values")
        choices.append([normalise(v) for v in values])
    instances = []
    for combination in itertools.product(*choices):
        params = dict(zip(names, combination, strict=True))
        _try_generator(kind, generator, params, seeds[0] if takes_seed else None, f"{where}.params", source)
        for seed in seeds:
            seed_value = seed if takes_seed else None
            instances.append(
                {
                    "instance_id": generated_instance_id(kind.name, generator, params, seed_value),
                    "generator": generator,
                    "params": params,
                    "seed": seed_value,
                    "file": None,
                    "data": None,
                }
            )
    return instances


def _try_generator(
    kind: ProblemKind, generator: str, params: dict[str, Any], seed: int | None, where: str, source: str
) -> None:
    """Run the generator once and load its instance: parameters it refuses are bad input now, before Spark."""
    given = {**params, **({} if seed is None else {"seed": seed})}
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items()) or "no parameters"
    try:
        kind.load(kind.generators[generator](**given), f"<{generator}>")
    except InputError as error:
        raise InputError(source, where, f"parameters whose instance is valid ({shown}: {error})") from None
    except Exception as error:  # a generator can fail in any way: a value it refuses, an overflow
        raise InputError(
            source, where, f"parameters the generator accepts ({shown}: {type(error).__name__}: {error})"
        ) from None


def _seeds(seeds: Any, where: str, source: str) -> list[int]:
    if seeds is None:
        return [0]
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        require(seeds >= 1, source, f"{where}.seeds", f"a count >= 1 or a list of seeds, got {seeds}")
        return list(range(seeds))
    require(
        isinstance(seeds, list) and bool(seeds) and all(isinstance(s, int) and not isinstance(s, bool) for s in seeds),
        source,
        f"{where}.seeds",
        f"a count >= 1 or a non-empty list of integer seeds, got {seeds!r}",
    )
    require(len(set(seeds)) == len(seeds), source, f"{where}.seeds", "each seed once")
    return list(seeds)


def _glob(pattern: str, base: Path, where: str, source: str, allow_outside: bool, key: str = "instances") -> list[Path]:
    """The files a study's ``instances`` glob matches (relative to the grid's folder).

    Unless ``allow_outside``, the glob's fixed part (the folders before its first wildcard) and every
    file it matches, links resolved, must lie under the grid's folder or the working directory: a
    pattern such as ``/**/*.json`` is refused before it scans anything.
    """
    field_name = f"{where}.{key}"
    full = Path(pattern if os.path.isabs(pattern) else base / pattern)
    roots = (base, Path.cwd().resolve())
    if not allow_outside:
        fixed = Path(*[part for part in _until_wildcard(full.parts)])
        require(
            _under(fixed, roots),
            source,
            field_name,
            f"a glob under the grid's folder or the working directory (or --allow-outside), got {pattern!r}",
        )
    files = sorted(Path(p) for p in glob.glob(str(full), recursive=True) if Path(p).is_file())
    if not allow_outside:
        outside = next((f for f in files if not _under(f, roots)), None)
        require(
            outside is None,
            source,
            field_name,
            f"files under the grid's folder or the working directory (or --allow-outside); {outside} is not",
        )
    what = {"instances": "instance", "map": "map"}.get(key, "solution")
    require(bool(files), source, field_name, f"a glob that matches {what} files, got {pattern!r}")
    return files


def _until_wildcard(parts: tuple[str, ...]) -> list[str]:
    fixed = []
    for part in parts:
        if any(c in part for c in "*?["):
            break
        fixed.append(part)
    return fixed


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    """True when ``path``, links and ``..`` resolved, lies in one of ``roots``."""
    resolved = path.resolve()
    return any(resolved.is_relative_to(root) for root in roots)


def _file_instance(file: Path, kind: ProblemKind, base: Path, source: str) -> dict[str, Any]:
    data = read_json(file)
    require(
        isinstance(data, dict) and data.get("problem") == kind.name,
        str(file),
        "problem",
        f"{kind.name!r}, the problem of the study that lists this file",
    )
    kind.load(data, str(file))  # bad files are bad input now, not error rows later
    return {
        "instance_id": file_instance_id(kind.name, data),
        "generator": None,
        "params": {},
        "seed": None,
        "file": os.path.relpath(file, base),
        "data": data,
    }
