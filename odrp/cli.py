"""The ``odrp`` command: solve, model, evaluate, generate, import, methods, schema, bench, report, dataset.

Bad input (a file, a field, a value) prints one line naming the file, the field and what was
expected, and exits with code 2. ``--json`` prints exactly one JSON object on stdout. Without it,
``solve`` and ``evaluate`` print one table on stdout and nothing else: ``solve --save FILE`` writes the
solution, ``solve --json`` prints it within the Result.

Each verb imports the layers it uses when it runs, so that ``odrp --help`` and a mistyped option
answer at once: importing the kinds (Pyomo, OR-Tools) takes about a second, and Spark more. For the same
reason each verb checks its file arguments first (:func:`odrp.core.errors.require_regular`): a FIFO or a
device is one line at once, before anything is imported or read.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import logging
import math
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from odrp import __version__
from odrp.core.errors import InputError, require_regular
from odrp.core.generator import flag as parameter_flag
from odrp.core.generator import split_parameter


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args, extra = _parser().parse_known_args(argv)
        if extra and args.command != "generate":
            raise InputError("command line", extra[0], f"a known option (see odrp {args.command} --help)")
        return args.handler(args, extra)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        if "--json" in argv:  # a script reading stdout gets the error as one JSON object
            print(json.dumps({"error": str(error), "file": error.source, "field": error.field or None}))
        return 2
    except BrokenPipeError:  # the reader of stdout went away (odrp ... | head): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 141  # 128 + SIGPIPE, what a shell reports for a program killed by it


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are bad input like any other: one line, exit code 2."""

    def error(self, message: str) -> NoReturn:
        field, expected = "", message
        if message.startswith("argument ") and ": " in message:  # "argument --time-limit: invalid float value"
            field, expected = message.removeprefix("argument ").split(": ", 1)
        raise InputError("command line", field, f"{expected} (see {self.prog} --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="odrp", description="Exact operator placement for stream processing, and heuristics against it."
    )
    parser.add_argument("--version", action="version", version=f"odrp {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("solve", help="solve an instance exactly or with a heuristic")
    p.add_argument("file", help="instance JSON")
    p.add_argument("--method", default="exact", help="exact (default) or a heuristic name (see `odrp methods`)")
    p.add_argument(
        "--solver",
        default=None,
        help="highs, cbc, cpsat, scip, gurobi, cplex or xpress, for --method exact (default and availability: "
        "odrp methods)",
    )
    p.add_argument(
        "--formulation",
        default=None,
        help="exact formulation: auto (default) or textbook for every kind; the others per kind in odrp methods",
    )
    p.add_argument("--time-limit", type=float, default=None, metavar="S", help="seconds")
    p.add_argument("--mip-gap", type=float, default=None, metavar="G", help="relative MIP gap (default 1e-6)")
    p.add_argument(
        "--memory-limit",
        type=float,
        default=None,
        metavar="GB",
        help="memory budget of the run in GB (default: half the machine's memory)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="threads of the exact method's solver (default: the machine's cores)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of a randomised heuristic")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a method option, e.g. --param iterations=200 (VALUE read as JSON when it parses)",
    )
    p.add_argument(
        "--warm-start",
        default=None,
        metavar="FILE|METHOD",
        help="exact only: a MIP start from a solution (or Result) JSON file, or from a heuristic run first",
    )
    p.add_argument("--log", action="store_true", help="show the solver's own log on stderr")
    p.add_argument("--save", default=None, metavar="FILE", help="write the solution JSON to FILE")
    p.add_argument("--json", action="store_true", help="print the Result as one JSON object")
    p.set_defaults(handler=_solve)

    p = sub.add_parser("model", help="write the exact model of an instance as an MPS or LP file, with a map")
    p.add_argument("file", help="instance JSON")
    p.add_argument("--out", required=True, metavar="MODEL.mps|MODEL.lp", help="the model file (format by extension)")
    p.add_argument(
        "--formulation",
        default="auto",
        help="auto (default: the one model auto solves, else the textbook model), textbook, or another one-MILP "
        "formulation of the kind",
    )
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="an exact-method option")
    p.add_argument("--rho", type=float, default=None, metavar="R", help="throughput textbook: the rate of P(rho)")
    p.add_argument("--json", action="store_true", help="print what was written as one JSON object")
    p.set_defaults(handler=_model)

    p = sub.add_parser("evaluate", help="re-score a solution with the problem's evaluator")
    p.add_argument("file", help="instance JSON")
    p.add_argument("solution", nargs="?", help="solution JSON (or a Result JSON from `odrp solve --json`)")
    p.add_argument(
        "--model-solution",
        default=None,
        metavar="SOL",
        help="a solver's solution of a model written by `odrp model` (HiGHS, CBC, SCIP, Gurobi .sol; JSON; CSV)",
    )
    p.add_argument("--map", default=None, metavar="MODEL.map.json", help="with --model-solution (default: beside SOL)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_evaluate)

    p = sub.add_parser("generate", help="print a generated instance; generator parameters as --name value")
    p.add_argument("kind", help="problem kind, e.g. odrp")
    p.add_argument("--generator", default=None, help="generator name (see `odrp generate KIND --list`)")
    p.add_argument("--seed", type=int, default=None, help="generator seed (default: the generator's own)")
    p.add_argument("--list", action="store_true", help="list the kind's generators and their parameters")
    p.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(handler=_generate)

    p = sub.add_parser(
        "import", help="convert a published benchmark file into instance JSON files, or read an export back"
    )
    p.add_argument(
        "format",
        metavar="FORMAT",
        help="orlib-gap, orlib-mknap, orlib-mknap2, dellamico-mkp, bs-qkp, hj-qmkp; or dataset (an odrp export)",
    )
    p.add_argument("file", metavar="FILE", help="the published file (the export's folder for dataset)")
    p.add_argument("--out", default=".", metavar="DIR", help="directory for the JSON files (default: .)")
    p.add_argument("--sense", choices=("min", "max"), default="min", help="objective sense of GAP files (default min)")
    p.set_defaults(handler=_import)

    p = sub.add_parser("methods", help="list every method and the kinds it applies to")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_methods)

    p = sub.add_parser("schema", help="print the JSON Schema of a problem kind's instances")
    p.add_argument("kind")
    p.set_defaults(handler=_schema)
    _add_bench(sub)
    _add_dataset(sub)
    _add_report(sub)
    return parser


# ------------------------------------------------------------------------------------ solve


def _solve(args: argparse.Namespace, _extra: list[str]) -> int:
    require_regular(args.file, "JSON file")  # before the imports below, which take seconds on a busy machine
    if args.warm_start is not None and os.path.lexists(args.warm_start):
        require_regular(args.warm_start, "JSON file")
    from odrp.core.limits import MemoryLimitExceeded, MethodDied
    from odrp.core.solvers import DEFAULT_MIP_GAP
    from odrp.core.solvers.run import solver_log
    from odrp.io import load_instance, read_solution
    from odrp.registry import heuristics
    from odrp.run import UnknownMethod, checked_threads, run_within_limits

    _check_numbers(args)
    threads = checked_threads(args.threads, "command line", "--threads")
    kind, instance = load_instance(args.file)
    if not args.log:  # Pyomo logs a failing rule before raising; the error line says it once
        logging.getLogger("pyomo").setLevel(logging.CRITICAL)
    start: Any = args.warm_start
    if start is not None and start not in heuristics():
        start = read_solution(start)
    try:
        with solver_log(args.log):
            result = run_within_limits(
                kind,
                instance,
                args.method,
                solver=args.solver,
                formulation=args.formulation,
                time_limit=args.time_limit,
                memory_limit=_memory_bytes(args.memory_limit),
                mip_gap=DEFAULT_MIP_GAP if args.mip_gap is None else args.mip_gap,
                seed=args.seed,
                options=_method_params(args.param),
                warm_start=start,
                threads=threads,
            )
    except UnknownMethod as error:
        raise InputError("command line", error.flag, str(error)) from None
    except MemoryLimitExceeded as error:
        raise InputError("command line", "--memory-limit", str(error)) from None
    except InputError:
        raise  # bad input found while running (a model over the memory budget): exit 2
    except (MethodDied, Exception) as error:  # a method that fails is one line (exit 1), never a traceback
        text = " ".join(f"{args.method}: {type(error).__name__}: {error}".split())
        print(f"error: {text[:990]}", file=sys.stderr)
        if args.json:
            print(json.dumps({"error": text, "file": args.file, "field": None}))
        return 1
    if args.save and result.solution is not None:
        _write(args.save, json.dumps(result.solution, indent=1) + "\n", "--save")
    if args.json:
        print(result.to_json())
        return 0
    _print_result(result)
    if result.solution is not None and not args.save:  # stdout is the table: the solution goes elsewhere
        print("the solution: --save FILE writes it, --json prints it within the Result", file=sys.stderr)
    return 0


def _check_numbers(args: argparse.Namespace) -> None:
    """``--time-limit`` and ``--memory-limit`` positive and finite, ``--mip-gap`` in [0, 1)."""
    from odrp.core.arguments import COMMAND_LINE, check_limits, flag

    check_limits(args.time_limit, args.memory_limit, args.mip_gap, source=COMMAND_LINE, name=flag)


def _write(path: str, text: str, flag: str) -> None:
    """Write ``text`` to the file ``path`` given with ``flag``; an unwritable path is bad input."""
    target = Path(path)
    if target.is_dir():
        raise InputError("command line", flag, f"a file path, got the directory {path!r}")
    try:
        target.write_text(text)
    except OSError as error:
        raise InputError("command line", flag, f"a writable file path, got {path!r} ({error.strerror})") from None


def _directory(path: str, flag: str) -> Path:
    """The directory ``path`` given with ``flag``, created if missing; a file or an unwritable place is bad input."""
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        probe = target / ".odrp-write-test"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise InputError("command line", flag, f"a writable directory, got {path!r} ({error.strerror})") from None
    return target


def _creatable_directory(path: str, flag: str) -> None:
    """Check, without creating anything, that ``path`` is a directory or can be made one."""
    target = Path(path).absolute()
    if target.exists() and not target.is_dir():
        raise InputError("command line", flag, f"a directory, got the file {path!r}")
    existing = next(p for p in (target, *target.parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InputError("command line", flag, f"a directory it can write, got {path!r} ({existing} is not writable)")


def _memory_bytes(gigabytes: float | None) -> int | None:
    """``--memory-limit GB`` in bytes (None: the default budget)."""
    from odrp.core.memory import GB

    return None if gigabytes is None else int(gigabytes * GB)


def _method_params(pairs: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise InputError("command line", "--param", f"KEY=VALUE, got {pair!r}")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    return params


def _print_result(result: Any) -> None:
    rows = {key: getattr(result, key) for key in ("status", "objective", "bound", "gap", "runtime_s", "verified")}
    rows["solver"] = result.solver
    rows.update((key, value) for key, value in result.metrics.items() if key != "method_stats")
    if result.message:
        rows["message"] = result.message
    _print_table(f"{result.problem} / {result.instance} / {result.method}", rows)


def _print_table(title: str, rows: dict[str, Any]) -> None:
    """The two-column table ``solve`` and ``evaluate`` print on stdout (and nothing else there: a solution
    is written by ``--save`` or printed within the Result by ``--json``)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_header=False)
    for key, value in rows.items():
        table.add_row(key, _short(value))
    Console().print(table)


def _count(n: int, noun: str) -> str:
    """``1 instance``, ``2 instances``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.9g}"
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


# --------------------------------------------------------------------------------- evaluate


def _evaluate(args: argparse.Namespace, _extra: list[str]) -> int:
    if (args.solution is None) == (args.model_solution is None):
        raise InputError("command line", "SOLUTION", "a solution JSON or --model-solution SOL (one of the two)")
    if args.map is not None and args.model_solution is None:
        raise InputError("command line", "--map", "--model-solution SOL too (the map is that of a model's solution)")
    require_regular(args.file, "JSON file")
    if args.model_solution is not None:
        return _evaluate_model_solution(args)
    require_regular(args.solution, "JSON file")
    from odrp.io import load_instance, read_solution

    kind, instance = load_instance(args.file)
    solution = read_solution(args.solution)
    evaluation = kind.evaluate(instance, solution, args.solution)
    out = {
        "problem": kind.name,
        "instance": getattr(instance, "name", "unnamed"),
        "feasible": evaluation.feasible,
        "objective": evaluation.objective,
        "metrics": evaluation.metrics,
        "violations": evaluation.violations,
    }
    if args.json:
        print(json.dumps(out, allow_nan=False))
    else:
        rows = {key: out[key] for key in ("feasible", "objective")}
        rows.update(out["metrics"])
        rows["violations"] = "; ".join(out["violations"]) or "none"
        _print_table(f"{out['problem']} / {out['instance']} / evaluation of {args.solution}", rows)
    return 0


def _evaluate_model_solution(args: argparse.Namespace) -> int:
    """``evaluate FILE --model-solution SOL [--map MAP]``: the solution mapped through the map, then judged."""
    require_regular(args.model_solution, "solution file")
    from odrp.core.canonical import instance_sha256
    from odrp.io import parse_instance, read_json
    from odrp.models import judged, map_path, model_solution, read_map, read_model_solution

    map_file = args.map
    if map_file is None:
        map_file = str(map_path(args.model_solution))
        if not os.path.lexists(map_file):
            expected = f"the map of the model (odrp model writes MODEL.map.json beside MODEL.mps); no {map_file}"
            raise InputError("command line", "--map", expected)
    data = read_json(args.file)
    kind, instance = parse_instance(data, args.file)
    record = read_map(map_file)
    text = read_model_solution(args.model_solution)
    digest = instance_sha256(data)
    solution, values = model_solution(kind, instance, digest, text, args.model_solution, record, map_file, args.file)
    files = {"model_solution": args.model_solution, "map": map_file}
    result = judged(kind, instance, solution, values, method="model solution", record=record, files=files)
    evaluation = kind.evaluate(instance, solution, args.model_solution)
    violation = evaluation.violations[0] if evaluation.violations else None
    out = {
        "problem": kind.name,
        "instance": result.instance,
        "formulation": record["formulation"],
        "format": values.format,
        "verified": result.verified,
        "objective": evaluation.objective if evaluation.feasible else None,
        "model_objective": values.objective,
        "violation": violation,
        "violations": evaluation.violations,
        "metrics": evaluation.metrics,
        "solution": solution,
    }
    if args.json:
        print(json.dumps(out, allow_nan=False))
        return 0
    rows = {key: out[key] for key in ("verified", "objective", "model_objective", "formulation", "format")}
    rows.update(out["metrics"])
    _print_table(f"{kind.name} / {result.instance} / {args.model_solution}", rows)
    if violation is not None:
        print(f"verified: false: {violation}")
    return 0


# ----------------------------------------------------------------------------------- model


def _model(args: argparse.Namespace, _extra: list[str]) -> int:
    """``model FILE --out MODEL.mps|.lp``: the one MILP of a formulation, written with its map."""
    require_regular(args.file, "JSON file")
    if args.rho is not None and not (math.isfinite(args.rho) and args.rho >= 0):
        raise InputError("command line", "--rho", f"a rate >= 0, got {args.rho!r}")
    from odrp.core.modelfile import model_format

    model_format(args.out)
    target = Path(args.out)
    if target.is_dir() or not target.parent.is_dir():
        raise InputError("command line", "--out", f"a file path in an existing folder, got {args.out!r}")
    from odrp.io import parse_instance, read_json
    from odrp.models import NoModel, write_model

    logging.getLogger("pyomo").setLevel(logging.CRITICAL)
    data = read_json(args.file)
    kind, instance = parse_instance(data, args.file)
    try:
        written = write_model(
            kind,
            instance,
            data,
            args.out,
            formulation=args.formulation,
            options=_method_params(args.param),
            rho=args.rho,
            source=args.file,
        )
    except NoModel as error:
        raise InputError(args.file, f"--formulation {args.formulation}", str(error)) from None
    except OSError as error:
        raise InputError("command line", "--out", f"a writable file path, got {args.out!r} ({error})") from None
    if args.json:
        print(json.dumps(dataclasses.asdict(written)))
        return 0
    print(f"{written.path}: {written.formulation} formulation, {written.variables} variables ({written.sense}): ")
    print(f"  {written.note}")
    print(f"map: {written.map_path}")
    sol = str(Path(args.out).with_suffix(".sol"))
    cbc_sense = " -max" if written.sense == "max" else ""
    print(f"solve it elsewhere, e.g.: highs {args.out} --solution_file {sol}")
    print(f"                      or: cbc {args.out}{cbc_sense} -solve -solu {sol}")
    print(f"then: odrp evaluate {args.file} --model-solution {sol}")
    return 0


# --------------------------------------------------------------------------------- generate


def _generate(args: argparse.Namespace, extra: list[str]) -> int:
    from odrp.registry import get_kind

    kind = get_kind(args.kind, "command line", "KIND")
    if args.list:
        for name, func in kind.generators.items():
            params = ", ".join(
                f"{parameter_flag(p.name)} {p.default!r}"
                for p in inspect.signature(func).parameters.values()
                if p.name != "seed"
            )
            print(f"{name}: {params}")
        return 0
    name = args.generator or kind.default_generator
    if name not in kind.generators:
        raise InputError("command line", "--generator", f"one of {', '.join(kind.generators)}, got {name!r}")
    func = kind.generators[name]
    params = _generator_params(func, extra)
    if args.seed is not None and "seed" in inspect.signature(func).parameters:
        params["seed"] = args.seed
    try:
        data = func(**params)
    except (ValueError, TypeError, OverflowError, ZeroDivisionError, MemoryError) as error:
        named = split_parameter(error, inspect.signature(func).parameters) if isinstance(error, ValueError) else None
        if named is not None:
            raise InputError("command line", parameter_flag(named[0]), named[1]) from None
        raise InputError("command line", name, f"valid generator parameters ({error})") from None
    try:
        kind.load(data, f"<{name}>")  # parameters that give an instance its kind refuses are refused here
    except InputError as error:
        raise InputError("command line", name, f"parameters whose instance is valid ({error})") from None
    text = json.dumps(data, indent=1)
    if args.out:
        _write(args.out, text + "\n", "--out")
    else:
        print(text)
    return 0


def _generator_params(func: Any, extra: list[str]) -> dict[str, Any]:
    """Turn ``--name value`` pairs into keyword arguments typed like the generator's defaults."""
    signature = inspect.signature(func).parameters
    params: dict[str, Any] = {}
    items = list(extra)
    while items:
        flag = items.pop(0)
        if not flag.startswith("--") or not items:
            raise InputError("command line", flag, "generator parameters as --name value pairs")
        key = flag[2:].replace("-", "_")
        if key == "weights":  # the old name, kept as an alias
            key = "weights_profile"
        if key not in signature or key == "seed":
            known = ", ".join(parameter_flag(p) for p in signature if p != "seed")
            raise InputError("command line", flag, f"a parameter of this generator ({known})")
        raw = items.pop(0)
        default = signature[key].default
        try:
            if isinstance(default, bool):
                if raw.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                params[key] = raw.lower() in ("true", "1")
            elif isinstance(default, int):
                params[key] = int(raw)
            elif isinstance(default, float):
                params[key] = float(raw)
            else:
                params[key] = raw
        except ValueError:
            raise InputError("command line", flag, f"a value of type {type(default).__name__}, got {raw!r}") from None
    return params


# ----------------------------------------------------------------------------------- import


def _import(args: argparse.Namespace, _extra: list[str]) -> int:
    """Convert every instance of a published file, validate it as its kind, write one JSON each; or read
    an export back: its instances and a grid that runs them (:func:`odrp.bench.export.import_export`)."""
    if args.format == "dataset":
        from odrp.bench.export import import_export

        written = import_export(args.file, _directory(args.out, "--out"))
        instances = sum(path.relative_to(args.out).parts[0] == "instances" for path in written)
        print(f"{_count(instances, 'instance')} in {Path(args.out) / 'instances'}; grid: {written[-1]}")
        print(f"next: odrp bench {written[-1]} --out DIR")
        return 0
    from odrp.io import parse_instance
    from odrp.kinds.knapsack import readers as knapsack_io

    options = {"sense": args.sense} if args.format == "orlib-gap" else {}
    instances = knapsack_io.read(args.format, args.file, **options)
    for data in instances:
        parse_instance(data, f"{args.file} ({data['name']})")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(
            "command line", "--out", f"a directory it can create, got {args.out!r} ({error.strerror})"
        ) from None
    for data in instances:
        target = out / f"{knapsack_io.file_stem(data['name'])}.json"
        _write(str(target), json.dumps(data) + "\n", "--out")
        print(target)
    return 0


# ------------------------------------------------------------------------- methods, schema


def _methods(args: argparse.Namespace, _extra: list[str]) -> int:
    from odrp.run import available_methods

    methods = available_methods()
    if args.json:
        print(json.dumps(methods))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False)
    table.add_column("method", no_wrap=True)
    table.add_column("kinds", overflow="fold", max_width=28)
    table.add_column("description", overflow="fold")
    for name, info in methods.items():
        table.add_row(name, ", ".join(info["kinds"]), info["description"])
    console = Console(soft_wrap=False)
    console.print(table)
    solvers = Table(box=None, show_edge=False, pad_edge=False)
    solvers.add_column("solver", no_wrap=True)
    solvers.add_column("here", overflow="fold")
    solvers.add_column("kinds (--method exact --solver NAME)", overflow="fold")
    for name, info in methods["exact"]["solvers"].items():
        solvers.add_row(name, info["status"], ", ".join(info["kinds"]))
    console.print()
    console.print(solvers)
    return 0


def _schema(args: argparse.Namespace, _extra: list[str]) -> int:
    from odrp.registry import get_kind

    kind = get_kind(args.kind, "command line", "KIND")
    print(json.dumps(kind.schema(), indent=1))
    return 0


# ---------------------------------------------------------------------------- bench, report


def _add_bench(sub: Any) -> None:
    p = sub.add_parser("bench", help="run a benchmark grid on Spark into a Parquet dataset")
    p.add_argument("grid", help="grid YAML (see benchmarks/grids/)")
    p.add_argument("--out", required=True, metavar="DIR", help="dataset directory")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master (default local[*])")
    p.add_argument("--partitions", type=int, default=None, metavar="N", help="default: one per instance")
    p.add_argument("--resume", action="store_true", help="continue DIR: skip the instances it holds")
    p.add_argument("--retry-errors", action="store_true", help="with --resume: rerun instances with error rows")
    p.add_argument(
        "--replace",
        action="append",
        default=[],
        metavar="INSTANCE_ID",
        help="with --resume: move this instance aside (DIR/quarantine/) and run it again if the grid plans it",
    )
    p.add_argument(
        "--prune-errors",
        action="store_true",
        help="with --resume: move aside every instance with error rows that the grid no longer plans",
    )
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark property")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--allow-outside", action="store_true", help="let instance globs reach outside the grid file's folder"
    )
    p.add_argument("--verbose", action="store_true", help="Spark's and the JVM's own log messages too")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the grid and print its plan (instances x methods x repeats, rows, a time bound); no Spark",
    )
    p.add_argument("--json", action="store_true", help="print the run's summary (or the plan) as one JSON object")
    p.set_defaults(handler=_bench)


def _bench(args: argparse.Namespace, _extra: list[str]) -> int:
    require_regular(args.grid, "YAML file")
    if args.dry_run:
        return _dry_run(args)
    from odrp.bench.runner import bench

    _creatable_directory(args.out, "--out")
    conf = []
    for pair in args.conf:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError("command line", "--conf", f"KEY=VALUE, got {pair!r}")
        conf.append((key, value))
    try:
        summary = bench(
            args.grid,
            args.out,
            master=args.master,
            partitions=args.partitions,
            resume=args.resume,
            retry_errors=args.retry_errors,
            conf=conf,
            progress=not args.no_progress,
            allow_outside=args.allow_outside,
            verbose=args.verbose,
            replace=args.replace,
            prune_errors=args.prune_errors,
        )
    except KeyboardInterrupt:
        print(f"interrupted: finished instances are in {args.out}; rerun with --resume", file=sys.stderr)
        return 130
    except OSError as error:  # the dataset directory (or a folder above it) cannot be written: a full disk, /proc
        failed, out = Path(str(error.filename or "")).absolute(), Path(args.out).absolute()
        if error.filename is None or not (failed.is_relative_to(out) or out.is_relative_to(failed)):
            raise
        expected = f"a directory it can write, got {args.out!r} ({error.strerror})"
        raise InputError("command line", "--out", expected) from None
    if args.json:
        errors = [
            {key: row[key] for key in ("instance_id", "method", "solver", "repeat", "message")}
            for row in summary.errors
        ]
        print(json.dumps({"dataset": args.out, **summary.record(), "errors": errors}, default=str))
        return 0
    ran = f"{_count(summary.ran, 'instance')} run" + (
        f", {summary.skipped} already in {args.out}" if summary.skipped else ""
    )
    print(f"odrp bench: {ran}; {summary.rows} rows in {summary.wall_s:.1f} s on {summary.master}")
    for warning in summary.warnings:
        print(f"warning: {warning}")
    if summary.errors:
        print(f"{_count(len(summary.errors), 'error row')} in the dataset (the message column has each one):")
        for row in summary.errors[:20]:
            method = row["method"] + (f"/{row['solver']}" if row["solver"] else "")
            print(f"  {row['instance_id']} {method} repeat {row['repeat']}: {row['message']}")
        if len(summary.errors) > 20:
            print(f"  ... and {len(summary.errors) - 20} more")
    print(f"dataset: {args.out}/rows (Parquet by problem), manifest: {args.out}/manifest.json")
    print(f"next: odrp report {args.out}")
    return 0


def _dry_run(args: argparse.Namespace) -> int:
    """``odrp bench --dry-run``: the grid checked and its plan printed (:mod:`odrp.bench.plan`); nothing runs."""
    from odrp.bench.grid import load_grid
    from odrp.bench.plan import lines, plan

    if args.partitions is not None and args.partitions < 1:
        raise InputError("command line", "--partitions", f"a number >= 1, got {args.partitions}")
    planned = plan(load_grid(args.grid, allow_outside=args.allow_outside), args.master, args.partitions)
    if args.json:
        print(json.dumps(planned))
    else:
        print("\n".join(lines(planned)))
    return 0


def _add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report", help="tables, pictures and an HTML page of a benchmark dataset, or a comparison of several"
    )
    p.add_argument(
        "dir", nargs="+", help="dataset directory written by odrp bench; several: compare them (--out needed)"
    )
    p.add_argument("--out", default=None, metavar="REPORT_DIR", help="default: DIR/report; needed to compare datasets")
    p.add_argument(
        "--by",
        action="append",
        default=[],
        metavar="PARAM",
        help="one table per value of this generator parameter (repeatable)",
    )
    p.add_argument(
        "--format",
        action="append",
        default=[],
        choices=["markdown", "latex"],
        help="also write the tables as summary.md / summary.tex (repeatable)",
    )
    p.set_defaults(handler=_report)


def _report(args: argparse.Namespace, _extra: list[str]) -> int:
    from odrp.bench.dataset import files

    for folder in args.dir:
        if not files(folder):
            raise InputError(folder, "", "a dataset directory written by odrp bench (no rows/problem=*/ files)")
    if len(args.dir) > 1:
        from odrp.bench.compare import compare, print_comparison

        if args.out is None:
            raise InputError("command line", "--out", "a folder for the comparison of several datasets")
        print_comparison(compare(args.dir, _directory(args.out, "--out"), args.by, args.format))
        return 0
    from odrp.bench.report import print_report, report

    if args.out is not None:
        _directory(args.out, "--out")
    print_report(report(args.dir[0], args.out, args.by, args.format))
    return 0


# ----------------------------------------------------------------------------------- dataset


def _add_dataset(sub: Any) -> None:
    p = sub.add_parser("dataset", help="check a benchmark dataset or an export; export a dataset")
    actions = p.add_subparsers(dest="action", required=True)
    verify = actions.add_parser(
        "verify", help="every file against the manifest, or an export's SHA256SUMS; exit 2 if any differs"
    )
    verify.add_argument("dir", help="dataset directory written by odrp bench, or an export")
    verify.add_argument("--json", action="store_true", help="print the files, rows and findings as one JSON object")
    verify.add_argument(
        "--resolve",
        type=int,
        default=None,
        metavar="K",
        help="export only: re-prove K sampled optima, or re-check bounds, with another solver",
    )
    verify.add_argument("--seed", type=int, default=0, help="with --resolve: the seed of the sample (default 0)")
    verify.add_argument(
        "--time-limit", type=float, default=60.0, metavar="S", help="with --resolve: seconds per instance (default 60)"
    )
    export = actions.add_parser("export", help="write a dataset as a folder that stands alone (odrp.bench.export)")
    export.add_argument("dir", help="dataset directory written by odrp bench")
    export.add_argument("--to", required=True, metavar="DEST", help="a new folder")
    export.add_argument(
        "--licence", default=None, help="the data's licence (default: the grid's licence:, else CC-BY-4.0)"
    )
    p.set_defaults(handler=_dataset)


def _dataset(args: argparse.Namespace, _extra: list[str]) -> int:
    from odrp.bench.verify import check_export, is_export, verify

    if args.action == "export":
        from odrp.bench.export import export

        print(export(args.dir, args.to, licence=args.licence).line())
        return 0
    exported = is_export(args.dir)
    if args.resolve is not None and not exported:
        raise InputError("command line", "--resolve", f"an export (odrp dataset export), got {args.dir!r}")
    result = check_export(args.dir) if exported else verify(args.dir)
    for finding in result.findings:
        print(f"error: {finding.line(args.dir)}", file=sys.stderr)
    resolved = []
    if not result.findings and args.resolve is not None:
        from odrp.bench.resolve import resolve

        if not (math.isfinite(args.time_limit) and args.time_limit > 0):
            raise InputError("command line", "--time-limit", f"a positive finite number, got {args.time_limit!r}")
        if not args.json:
            print(result.summary())
        resolved = resolve(args.dir, args.resolve, seed=args.seed, time_limit=args.time_limit)
        for item in resolved:
            if item.finding:
                print("error: " + item.line(args.dir), file=sys.stderr)
            elif not args.json:
                print(item.line(args.dir))
    failed = bool(result.findings) or any(item.finding for item in resolved)
    if args.json:
        findings = [dataclasses.asdict(finding) for finding in result.findings]
        files, rows = (len(result.files), None) if exported else (len(result.record), result.rows)
        out = {"dataset": args.dir, "files": files, "rows": rows, "findings": findings}
        if args.resolve is not None:
            out["resolved"] = [{"line": item.line(args.dir), "agrees": not item.finding} for item in resolved]
        print(json.dumps(out))
    elif args.resolve is not None and not failed:
        from odrp.bench.resolve import summary_line

        print(summary_line(resolved))
    elif args.resolve is None and not failed:
        print(result.summary())
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
