"""Models that leave the toolkit as files, and solutions of them that come back.

A kind declares the models it can write (:attr:`odrp.core.kind.ProblemKind.models`): for an instance and
a formulation, a :class:`Writable` (the model the formulation solves, when that is one MILP) or
:class:`NoModel` (a search, a CP-SAT model, a rate search: no one file states it). A writable model
is a Pyomo model (:class:`PyomoModel`) or a matrix model (:class:`MatrixSpec`, the throughput kind's
P(rho)), each with a decoder from the values of its variables to the kind's solution JSON.

Writing reuses the libraries' own writers: Pyomo's ``model.write`` (LP or MPS, with a labeler that
gives every variable a readable name) and highspy's ``writeModel`` for matrix models. Names are made
from the component's name and its index, each index part given as the instance's id where the kind says
what it is (``x(op3,node2)``), and sanitised for LP and MPS readers (:func:`sanitise`): letters,
digits and ``_.(),{}@!|~``, at most 255 characters, unique (a name made twice gets ``#2``, ``#3``...).

Reading back (:func:`decode`): the model is rebuilt from the instance, every value of the solution is
checked against its variable (a known name, a number, within its bounds, integral for an integer
variable to 1e-6) and loaded, and the kind's decoder reads the solution. Feasibility is not checked
here: that is the evaluator's job.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyomo.environ as pyo

from odrp.core.errors import InputError

FORMATS = {".mps": "mps", ".lp": "lp"}
"""The model file formats, by the file's extension."""
CONSTANT = "ONE_VAR_CONSTANT"
"""The variable Pyomo's writers add for an objective's constant term (fixed at 1)."""
INTEGRALITY = 1e-6
"""How far from an integer an integer variable's value may be."""
BOUNDS = 1e-6
"""How far outside its bounds a variable's value may be (absolute, or relative to a large bound)."""
MAX_NAME = 255
"""The longest name LP readers accept."""


class NoModel(Exception):
    """No one MILP to write: the formulation is a search (not one MILP), or the instance has no model (an
    operator without a stable replica count); the message says which, in one line."""


Decoder = Callable[[Any], dict[str, Any]]
"""The built model, its variables holding a solution's values -> the kind's solution JSON."""
IndexPart = Sequence[str] | Callable[[Any], str] | None
"""How one position of a component's index is named: ids by position, a function of the index part, or
None (the index part as it is)."""
Namer = tuple[IndexPart, ...] | Callable[[tuple[Any, ...]], Sequence[str]]
"""How a component's index is named: one :data:`IndexPart` per position, or a function of the whole index
that returns the parts."""


@dataclass(frozen=True)
class PyomoModel:
    """A Pyomo MILP: how to build it, how to read a solution from it, how to name its variables.

    - ``names``: component name -> a :data:`Namer` of its index (a component not named keeps its index as
      it is);
    - ``meanings``: component name -> what its variables mean for the kind's solution: a text with
      ``{0}``, ``{1}``... for the named index parts, or a function of the raw index; a component left out
      is an auxiliary that the decoder does not read;
    - ``reread``: a model with the same variables that is cheaper to build (for reading a solution back;
      None: ``build``).
    """

    build: Callable[[], pyo.ConcreteModel]
    decode: Decoder
    names: Mapping[str, Namer] = field(default_factory=dict)
    meanings: Mapping[str, str | Callable[[tuple[Any, ...]], str]] = field(default_factory=dict)
    reread: Callable[[], pyo.ConcreteModel] | None = None


class Matrix(Protocol):
    """A MILP in matrix form that highspy can take (:class:`odrp.kinds.throughput.exact.matrix.MatrixModel`)."""

    lower: list[float]
    upper: list[float]
    integer: list[bool]

    def to_highs(self, relax: bool = False) -> Any: ...


@dataclass(frozen=True)
class MatrixSpec:
    """A matrix MILP: ``build() -> (matrix, column names, column meanings or None)``; ``decode(values)``
    gets the column values in order."""

    build: Callable[[], tuple[Matrix, list[str], list[str | None]]]
    decode: Callable[[list[float]], dict[str, Any]]


@dataclass(frozen=True)
class Writable:
    """The one MILP a formulation of a kind solves on an instance.

    ``formulation``: the formulation whose model this is (``auto`` resolved); ``note``: one line saying
    which model this is and why (auto's choice, the step of a rate search); ``params``: what rebuilding
    the same model needs besides the instance and the formulation (the throughput kind's rate rho).
    """

    formulation: str
    note: str
    model: PyomoModel | MatrixSpec
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Column:
    """One variable of a written model: its bounds, whether it is integer, what it means (None: an auxiliary)."""

    lower: float
    upper: float
    integer: bool
    meaning: str | None


# ------------------------------------------------------------------------------------------ names

_UNSAFE = re.compile(r"[^A-Za-z0-9_.(),{}@!|~]")


def sanitise(text: str) -> str:
    """``text`` with every character that LP or MPS readers may refuse replaced by ``_``."""
    return _UNSAFE.sub("_", text)


def _unique(name: str, used: set[str]) -> str:
    """``name`` cut to :data:`MAX_NAME` characters and made unique among ``used`` (a ``#k`` suffix)."""
    name = name[:MAX_NAME]
    if re.match(r"[0-9.]|[eE][0-9+-]", name):  # LP readers take these for numbers
        name = ("v" + name)[:MAX_NAME]
    candidate, k = name, 2
    while candidate in used:
        suffix = f"#{k}"
        candidate, k = name[: MAX_NAME - len(suffix)] + suffix, k + 1
    used.add(candidate)
    return candidate


def _part(namer: IndexPart, value: Any) -> str:
    if namer is None:
        return str(value)
    if callable(namer):
        return str(namer(value))
    return str(namer[value])


def _index(data: Any) -> tuple[Any, ...]:
    index = data.index()
    if index is None:
        return ()
    return index if isinstance(index, tuple) else (index,)


def _parts(component: str, index: tuple[Any, ...], spec: PyomoModel) -> list[str]:
    """The index parts of a variable or row as ``spec.names`` names them."""
    namer = spec.names.get(component, ())
    if callable(namer):
        return [str(part) for part in namer(index)]
    return [_part(namer[k] if k < len(namer) else None, value) for k, value in enumerate(index)]


def _label(data: Any, spec: PyomoModel) -> str:
    """``component(part,part)`` with the parts named by ``spec.names``."""
    component = data.parent_component().local_name
    index = _index(data)
    if not index:
        return sanitise(component)
    return sanitise(f"{component}({','.join(_parts(component, index, spec))})")


def _meaning(data: Any, spec: PyomoModel) -> str | None:
    component = data.parent_component().local_name
    meaning = spec.meanings.get(component)
    if meaning is None:
        return None
    index = _index(data)
    if callable(meaning):
        return meaning(index)
    return meaning.format(*_parts(component, index, spec))


def variable_names(model: pyo.ConcreteModel, spec: PyomoModel) -> dict[str, Any]:
    """Every free (not fixed) variable of ``model`` by its name in a file, in the model's order."""
    used: set[str] = set()
    return {
        _unique(_label(var, spec), used): var
        for var in model.component_data_objects(pyo.Var, descend_into=True, sort=False)
        if not var.fixed
    }


class _Labeler:
    """Pyomo's ``labeler`` option: the variables' names decided beforehand, the other components' on the way."""

    def __init__(self, variables: dict[str, Any], spec: PyomoModel) -> None:
        self.names = {id(var): name for name, var in variables.items()}
        self.spec = spec
        self.used: set[str] = set(variables)

    def __call__(self, obj: Any) -> str:
        name = self.names.get(id(obj))
        if name is None:
            name = self.names[id(obj)] = _unique(_label(obj, self.spec), self.used)
        return name


def _bounds(var: Any) -> tuple[float, float]:
    lower, upper = var.bounds
    return (-math.inf if lower is None else float(lower), math.inf if upper is None else float(upper))


# ------------------------------------------------------------------------------------------ writing


def model_format(path: str | Path, source: str = "command line", flag: str = "--out") -> str:
    """``mps`` or ``lp`` from the file's extension; anything else is bad input naming ``flag``."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(source, flag, f"a model file ending in .mps or .lp, got {str(path)!r}")
    return FORMATS[suffix]


def write(writable: Writable, path: str | Path) -> dict[str, Column]:
    """Write the model to ``path`` (MPS or LP by its extension); returns the columns written, by name."""
    spec = writable.model
    file_format = model_format(path)
    if isinstance(spec, MatrixSpec):
        return _write_matrix(spec, path)
    model = spec.build()
    variables = variable_names(model, spec)
    labeler = _Labeler(variables, spec)
    options = {"labeler": labeler}
    if file_format == "lp":
        options["skip_trivial_constraints"] = True
    _, symbol_map_id = model.write(str(path), format=file_format, io_options=options)
    written = model.solutions.symbol_map[symbol_map_id].bySymbol
    columns = {}
    for name, var in variables.items():
        if name in written:
            lower, upper = _bounds(var)
            columns[name] = Column(lower, upper, var.is_integer() or var.is_binary(), _meaning(var, spec))
    return columns


def _matrix(spec: MatrixSpec) -> tuple[Matrix, list[str], dict[str, Column]]:
    """The matrix model, its column names (sanitised, unique) and its columns by name."""
    matrix, given, meanings = spec.build()
    used: set[str] = set()
    names = [_unique(sanitise(name), used) for name in given]
    columns = {
        name: Column(float(matrix.lower[j]), float(matrix.upper[j]), bool(matrix.integer[j]), meanings[j])
        for j, name in enumerate(names)
    }
    return matrix, names, columns


def _write_matrix(spec: MatrixSpec, path: str | Path) -> dict[str, Column]:
    matrix, names, columns = _matrix(spec)
    highs = matrix.to_highs()
    for j, name in enumerate(names):
        highs.passColName(j, name)
    for i in range(highs.getNumRow()):
        highs.passRowName(i, f"r{i}")
    status = highs.writeModel(str(path))
    if str(status) not in ("HighsStatus.kOk", "HighsStatus.kWarning"):
        raise OSError(f"HiGHS could not write {path} ({status})")
    return columns


# ------------------------------------------------------------------------------------------ reading


def check_value(name: str, value: float, column: Column, source: str) -> None:
    """A solution's value of one column: within its bounds and integral where the column is integer."""
    lower, upper = column.lower, column.upper
    slack = BOUNDS * max(1.0, abs(value))
    if value < lower - slack or value > upper + slack:
        raise InputError(source, name, f"a value within the variable's bounds [{lower:g}, {upper:g}], got {value!r}")
    if column.integer and abs(value - round(value)) > INTEGRALITY:
        kind = "binary" if (lower, upper) == (0.0, 1.0) else "integer"
        raise InputError(source, name, f"an integral value ({kind} variable, to {INTEGRALITY:g}), got {value!r}")


def decode(writable: Writable, values: Mapping[str, float], source: str) -> dict[str, Any]:
    """The kind's solution JSON of a model solution ``values`` (every column of the model by name, checked
    by the caller against the map); ``source`` names the solution file in errors."""
    spec = writable.model
    if isinstance(spec, MatrixSpec):
        _, names, _ = _matrix(spec)
        return spec.decode([float(values.get(name, 0.0)) for name in names])
    model = (spec.reread or spec.build)()
    for name, var in variable_names(model, spec).items():
        var.set_value(float(values.get(name, 0.0)), skip_validation=True)
    try:
        return spec.decode(model)
    except (KeyError, IndexError, ValueError) as error:  # a value the kind's decoder cannot place
        raise InputError(source, "", f"a solution of the model that the kind can read ({error})") from None


def columns_of(writable: Writable) -> dict[str, Column]:
    """The columns of the model by name, as a file would list them (without writing it): every free variable."""
    spec = writable.model
    if isinstance(spec, MatrixSpec):
        return _matrix(spec)[2]
    model = (spec.reread or spec.build)()
    out = {}
    for name, var in variable_names(model, spec).items():
        lower, upper = _bounds(var)
        out[name] = Column(lower, upper, var.is_integer() or var.is_binary(), _meaning(var, spec))
    return out
