"""The Python API: load, solve, evaluate, generate, list methods, run a grid.

Everything the CLI does, as functions. Instances are accepted as a path to a JSON file, the parsed
JSON (a dict), or what :func:`load` returned. Bad input raises :class:`odrp.InputError`, whose message
is the CLI's one line (the file, the field, what was expected).

>>> import odrp
>>> data = odrp.generate("kp", items=8, seed=3)
>>> instance = odrp.load(data)
>>> instance.kind
'kp'
>>> result = odrp.solve(instance, time_limit=10)
>>> result.status, result.verified
('optimal', True)
>>> greedy = odrp.solve(data, method="greedy")
>>> greedy.objective <= result.objective
True
>>> odrp.evaluate(instance, result.solution).objective == result.objective
True
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odrp.core.arguments import ARGUMENT, as_api_error, check_limits, in_api_words
from odrp.core.errors import InputError
from odrp.core.kind import Evaluation, ProblemKind
from odrp.core.limits import MemoryLimitExceeded
from odrp.core.memory import GB
from odrp.core.result import Result
from odrp.core.solvers import DEFAULT_MIP_GAP
from odrp.io import parse_instance, read_json, read_solution
from odrp.registry import get_kind
from odrp.run import UnknownMethod, available_methods, checked_threads, run_within_limits

__all__ = ["Instance", "bench", "evaluate", "generate", "load", "methods", "read", "solve"]


@dataclass(frozen=True)
class Instance:
    """A validated instance: its kind's name, its JSON, and the kind's compiled form of it."""

    kind: str
    """The problem kind (``odrp``, ``gap``, ...): the JSON's ``problem`` field."""
    data: dict[str, Any]
    """The instance JSON as given."""
    compiled: Any
    """What the kind's methods and evaluator work on (``ProblemKind.load``'s answer)."""
    source: str = "<dict>"
    """Where it came from (a path, or ``<dict>``): error messages name it."""

    @property
    def problem(self) -> ProblemKind:
        """The kind's registry entry."""
        return get_kind(self.kind, self.source)


def load(instance: str | Path | Mapping[str, Any] | Instance) -> Instance:
    """Validate an instance given as a path, a dict or an :class:`Instance` (returned as it is)."""
    if isinstance(instance, Instance):
        return instance
    if isinstance(instance, str | Path):
        source, data = str(instance), read_json(instance)
    elif isinstance(instance, Mapping):
        source, data = "<dict>", dict(instance)
    else:
        raise InputError("<argument>", "instance", f"a path, a dict or an odrp.Instance, got {type(instance).__name__}")
    kind, compiled = parse_instance(data, source)
    return Instance(kind.name, data, compiled, source)


def solve(
    instance: str | Path | Mapping[str, Any] | Instance,
    method: str = "exact",
    solver: str | None = None,
    time_limit: float | None = None,
    *,
    formulation: str | None = None,
    mip_gap: float = DEFAULT_MIP_GAP,
    seed: int = 0,
    memory_limit: float | None = None,
    warm_start: Mapping[str, Any] | str | None = None,
    options: Mapping[str, Any] | None = None,
    threads: int | None = None,
    **settings: Any,
) -> Result:
    """Solve ``instance`` with ``method`` (``exact`` or a heuristic of :func:`methods`) and return the
    evaluator-checked :class:`~odrp.core.result.Result`.

    ``settings`` are the method's options by name (``iterations=200``; what ``--param`` sets), and
    ``options`` the same as one mapping (``options={"iterations": 200}``, a grid's ``options:``);
    ``memory_limit`` is in GB; ``warm_start`` (exact only) is a solution dict or a heuristic's name;
    ``threads`` (exact only) is the solver's thread count, by default the machine's cores (as ``odrp solve``).
    The run has the CLI's guarantees: it ends within ``time_limit`` plus a second, and within the
    memory budget (:mod:`odrp.core.limits`). Bad input raises :class:`InputError` naming the argument
    (``time_limit``, ``solver``, a setting's name), where the command line would name its flag.
    """
    loaded = load(instance)
    check_limits(time_limit, memory_limit, mip_gap, source=ARGUMENT, name=str)
    threads = checked_threads(threads, ARGUMENT, "threads")
    start = dict(warm_start) if isinstance(warm_start, Mapping) else warm_start
    given = {**(options or {}), **settings}
    try:
        return run_within_limits(
            loaded.problem,
            loaded.compiled,
            method,
            solver=solver,
            formulation=formulation,
            time_limit=time_limit,
            memory_limit=None if memory_limit is None else int(memory_limit * GB),
            mip_gap=mip_gap,
            seed=seed,
            options=given or None,
            warm_start=start,
            threads=threads,
        )
    except UnknownMethod as error:
        raise InputError(ARGUMENT, in_api_words(error.flag), in_api_words(str(error))) from None
    except MemoryLimitExceeded as error:
        raise InputError(ARGUMENT, "memory_limit", str(error)) from None
    except InputError as error:
        raise as_api_error(error) from None


def evaluate(
    instance: str | Path | Mapping[str, Any] | Instance, solution: str | Path | Mapping[str, Any] | Result
) -> Evaluation:
    """The kind's independent evaluator on ``solution`` (a dict, a path to a solution or Result JSON, or
    a :class:`~odrp.core.result.Result`): feasibility, objective, metrics and violations."""
    loaded = load(instance)
    if isinstance(solution, Result):
        if solution.solution is None:
            raise InputError("<argument>", "solution", "a Result with a solution (this one has none)")
        given, source = solution.solution, "<result>"
    elif isinstance(solution, str | Path):
        given, source = read_solution(solution), str(solution)
    else:
        given, source = dict(solution), "<dict>"
    return loaded.problem.evaluate(loaded.compiled, given, source)


def generate(kind: str, generator: str | None = None, seed: int = 0, **params: Any) -> dict[str, Any]:
    """A generated instance JSON of ``kind`` (``odrp generate KIND --list`` shows the generators and
    their parameters)."""
    entry = get_kind(kind, "<argument>")
    name = generator or entry.default_generator
    if name not in entry.generators:
        raise InputError("<argument>", "generator", f"one of {', '.join(entry.generators)}, got {name!r}")
    func = entry.generators[name]
    if "seed" in inspect.signature(func).parameters:
        params["seed"] = seed
    try:
        return func(**params)
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as error:
        raise InputError("<argument>", name, f"valid generator parameters ({error})") from None


def methods(kind: str | None = None) -> dict[str, dict[str, Any]]:
    """Every method (``exact`` and the heuristics) with the kinds it applies to and what it does."""
    if kind is not None:
        get_kind(kind, "<argument>")
    return available_methods(kind)


def bench(grid: str | Path, out: str | Path, master: str | None = None, **options: Any) -> Any:
    """Run a benchmark grid into the dataset directory ``out`` (``odrp bench``); returns its summary.

    ``master``: a Spark master URL (default: an embedded ``local[*]``); ``options``: the keywords of
    :func:`odrp.bench.runner.bench` (``resume``, ``retry_errors``, ``conf``, ``partitions``, ``progress``).
    """
    from odrp.bench.runner import bench as run_grid  # Spark is imported only when a grid runs

    return run_grid(grid, out, master=master, **options)


def read(out: str | Path) -> Any:
    """A benchmark dataset (the directory ``odrp bench`` wrote) as one pandas DataFrame: one row per
    instance x method x repeat, ``problem`` as plain text, ``metrics`` and ``solution`` as dicts.
    The dataset is checked against its manifest first (a damaged file raises :class:`InputError`)."""
    from odrp.bench.dataset import read as read_rows
    from odrp.bench.verify import require_intact

    require_intact(out)
    return read_rows(out)
