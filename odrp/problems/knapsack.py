"""The knapsack family: ``kp``, ``mkp``, ``gap``, ``mdkp``, ``qkp``, ``qmkp`` (and ``qm3dkp``, R-Storm's view).

Instance schemas, solution schema and the evaluators, one small evaluator per kind written directly
from the kind's definition (Kellerer, Pferschy, Pisinger, *Knapsack Problems*, 2004; Gallo, Hammer,
Simeone 1980 for the quadratic profit; Hiley and Julstrom 2006 for QMKP). A solution is
``{"assignment": [k or null, ...]}``: the 0-based knapsack of each item, null when the item is left
out. Every kind maximises its profit except ``gap``, whose ``sense`` says min or max.

- ``kp``: ``profits[n]``, ``weights[n]``, ``capacity``; sum of the packed weights <= capacity.
- ``mkp``: ``profits[n]``, ``weights[n]``, ``capacities[m]``; each item in at most one knapsack.
- ``gap``: ``sense``, ``values[m][n]``, ``weights[m][n]``, ``capacities[m]``: item j in knapsack i
  costs (or earns) ``values[i][j]`` and uses ``weights[i][j]``; every item in exactly one knapsack.
- ``mdkp``: ``profits[n]``, ``weights[d][n]``, ``capacities[d]``: one knapsack, d dimensions.
- ``qkp``: ``profits[n][n]`` symmetric (diagonal: linear profit; ``profits[i][j]`` earned once
  when i and j are both packed), ``weights[n]``, ``capacity``.
- ``qmkp``: as ``qkp`` with ``capacities[m]``; ``profits[i][j]`` earned when i and j share a knapsack.

Weights and capacities are non-negative; profits may have any sign. A load may exceed its capacity
by the rounding slack 1e-9 (relative, with unit floor), never more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat

from odrp.errors import InputError
from odrp.problems import knapsack_generators as generators
from odrp.problems import qm3dkp
from odrp.problems.base import Evaluation, ProblemKind, require, validate
from odrp.problems.qm3dkp import FORMULATIONS

ARCFLOW_FORMULATIONS = (*FORMULATIONS, "arcflow")
"""The multiple knapsack kinds also take the arc-flow search (:mod:`odrp.models.knapsack.arcflow`)."""
GAP_FORMULATIONS = (*FORMULATIONS, "lagrangian")
"""The GAP also takes the Lagrangian search (:mod:`odrp.models.knapsack.gap_lagrangian`)."""

CAPACITY_RTOL = 1e-9


def fits(load: float, capacity: float) -> bool:
    """``load <= capacity`` up to rounding (1e-9 relative, unit floor)."""
    return load <= capacity + CAPACITY_RTOL * max(1.0, abs(capacity))


# --------------------------------------------------------------------------------- the schemas


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class KpSpec(_Strict):
    problem: Literal["kp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[NonNegativeFloat]
    capacity: NonNegativeFloat


class MkpSpec(_Strict):
    problem: Literal["mkp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[NonNegativeFloat]
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class GapSpec(_Strict):
    problem: Literal["gap"]
    name: str = "unnamed"
    sense: Literal["min", "max"] = "min"
    values: list[list[float]] = Field(min_length=1, description="values[i][j]: item j in knapsack i")
    weights: list[list[NonNegativeFloat]] = Field(min_length=1)
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class MdkpSpec(_Strict):
    problem: Literal["mdkp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[list[NonNegativeFloat]] = Field(min_length=1, description="weights[d][j]")
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class QkpSpec(_Strict):
    problem: Literal["qkp"]
    name: str = "unnamed"
    profits: list[list[float]] = Field(min_length=1, description="symmetric; diagonal = linear profits")
    weights: list[NonNegativeFloat]
    capacity: NonNegativeFloat


class QmkpSpec(_Strict):
    problem: Literal["qmkp"]
    name: str = "unnamed"
    profits: list[list[float]] = Field(min_length=1, description="symmetric; diagonal = linear profits")
    weights: list[NonNegativeFloat]
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class AssignmentSpec(_Strict):
    assignment: list[int | None]


# ---------------------------------------------------------------------- the compiled instances


@dataclass(frozen=True)
class Kp:
    name: str
    profits: tuple[float, ...]
    weights: tuple[float, ...]
    capacity: float
    kind: ClassVar[str] = "kp"
    sense: ClassVar[str] = "max"

    @property
    def n_items(self) -> int:
        return len(self.profits)

    n_knapsacks: ClassVar[int] = 1


@dataclass(frozen=True)
class Mkp:
    name: str
    profits: tuple[float, ...]
    weights: tuple[float, ...]
    capacities: tuple[float, ...]
    kind: ClassVar[str] = "mkp"
    sense: ClassVar[str] = "max"

    @property
    def n_items(self) -> int:
        return len(self.profits)

    @property
    def n_knapsacks(self) -> int:
        return len(self.capacities)


@dataclass(frozen=True)
class Gap:
    name: str
    sense: str
    values: tuple[tuple[float, ...], ...]
    weights: tuple[tuple[float, ...], ...]
    capacities: tuple[float, ...]
    kind: ClassVar[str] = "gap"

    @property
    def n_items(self) -> int:
        return len(self.values[0])

    @property
    def n_knapsacks(self) -> int:
        return len(self.capacities)


@dataclass(frozen=True)
class Mdkp:
    name: str
    profits: tuple[float, ...]
    weights: tuple[tuple[float, ...], ...]
    capacities: tuple[float, ...]
    kind: ClassVar[str] = "mdkp"
    sense: ClassVar[str] = "max"

    @property
    def n_items(self) -> int:
        return len(self.profits)

    n_knapsacks: ClassVar[int] = 1


@dataclass(frozen=True)
class Qkp:
    name: str
    profits: tuple[tuple[float, ...], ...]
    weights: tuple[float, ...]
    capacity: float
    kind: ClassVar[str] = "qkp"
    sense: ClassVar[str] = "max"

    @property
    def n_items(self) -> int:
        return len(self.weights)

    n_knapsacks: ClassVar[int] = 1


@dataclass(frozen=True)
class Qmkp:
    name: str
    profits: tuple[tuple[float, ...], ...]
    weights: tuple[float, ...]
    capacities: tuple[float, ...]
    kind: ClassVar[str] = "qmkp"
    sense: ClassVar[str] = "max"

    @property
    def n_items(self) -> int:
        return len(self.weights)

    @property
    def n_knapsacks(self) -> int:
        return len(self.capacities)


KnapsackInstance = Kp | Mkp | Gap | Mdkp | Qkp | Qmkp


# ------------------------------------------------------------------------------------ loading


def _same_length(values: Sequence[Any], n: int, source: str, field_name: str, what: str) -> None:
    require(len(values) == n, source, field_name, f"{n} entries ({what}), got {len(values)}")


def _matrix(rows: Sequence[Sequence[float]], n_rows: int, n_cols: int, source: str, field_name: str) -> None:
    _same_length(rows, n_rows, source, field_name, "one row each")
    for r, row in enumerate(rows):
        _same_length(row, n_cols, source, f"{field_name}[{r}]", "one per item")


def _symmetric(profits: Sequence[Sequence[float]], n: int, source: str) -> None:
    _matrix(profits, n, n, source, "profits")
    for i in range(n):
        for j in range(i + 1, n):
            a, b = profits[i][j], profits[j][i]
            require(a == b, source, f"profits[{i}][{j}]", f"a symmetric matrix: profits[{j}][{i}] is {b}, not {a}")


def load_kp(data: Any, source: str = "<instance>") -> Kp:
    spec = validate(KpSpec, data, source)
    _same_length(spec.weights, len(spec.profits), source, "weights", "one per item")
    return Kp(spec.name, tuple(spec.profits), tuple(spec.weights), spec.capacity)


def load_mkp(data: Any, source: str = "<instance>") -> Mkp:
    spec = validate(MkpSpec, data, source)
    _same_length(spec.weights, len(spec.profits), source, "weights", "one per item")
    return Mkp(spec.name, tuple(spec.profits), tuple(spec.weights), tuple(spec.capacities))


def load_gap(data: Any, source: str = "<instance>") -> Gap:
    spec = validate(GapSpec, data, source)
    m, n = len(spec.capacities), len(spec.values[0])
    require(n > 0, source, "values[0]", "at least one item")
    _matrix(spec.values, m, n, source, "values")
    _matrix(spec.weights, m, n, source, "weights")
    return Gap(
        spec.name,
        spec.sense,
        tuple(tuple(r) for r in spec.values),
        tuple(tuple(r) for r in spec.weights),
        tuple(spec.capacities),
    )


def load_mdkp(data: Any, source: str = "<instance>") -> Mdkp:
    spec = validate(MdkpSpec, data, source)
    _matrix(spec.weights, len(spec.capacities), len(spec.profits), source, "weights")
    return Mdkp(spec.name, tuple(spec.profits), tuple(tuple(r) for r in spec.weights), tuple(spec.capacities))


def load_qkp(data: Any, source: str = "<instance>") -> Qkp:
    spec = validate(QkpSpec, data, source)
    _symmetric(spec.profits, len(spec.weights), source)
    return Qkp(spec.name, tuple(tuple(r) for r in spec.profits), tuple(spec.weights), spec.capacity)


def load_qmkp(data: Any, source: str = "<instance>") -> Qmkp:
    spec = validate(QmkpSpec, data, source)
    _symmetric(spec.profits, len(spec.weights), source)
    return Qmkp(spec.name, tuple(tuple(r) for r in spec.profits), tuple(spec.weights), tuple(spec.capacities))


# ---------------------------------------------------------------------------------- solutions


def parse_assignment(instance: KnapsackInstance, data: Any, source: str = "<solution>") -> list[int | None]:
    """Read ``{"assignment": [k or null, ...]}``: one entry per item, k a knapsack index."""
    spec = validate(AssignmentSpec, data, source)
    n, m = instance.n_items, instance.n_knapsacks
    _same_length(spec.assignment, n, source, "assignment", "one knapsack index or null per item")
    for j, k in enumerate(spec.assignment):
        if k is not None and not 0 <= k < m:
            raise InputError(source, f"assignment[{j}]", f"a knapsack index in 0..{m - 1} or null, got {k}")
    return list(spec.assignment)


def solution_json(assignment: Sequence[int | None]) -> dict[str, Any]:
    return {"assignment": [None if k is None else int(k) for k in assignment]}


# --------------------------------------------------------------------------------- evaluators


def _verdict(
    loads: dict[str, float], capacities: dict[str, float], objective: float, metrics: dict[str, Any]
) -> Evaluation:
    violations = [
        f"{name}: load {loads[name]:g} exceeds capacity {capacities[name]:g}"
        for name in loads
        if not fits(loads[name], capacities[name])
    ]
    metrics = {**metrics, "loads": loads}
    if violations:
        return Evaluation(False, None, metrics, violations)
    return Evaluation(True, objective, metrics, [])


def _loads_by_knapsack(assignment: Sequence[int | None], m: int, weight: Callable[[int, int], float]) -> list[float]:
    loads = [0.0] * m
    for j, k in enumerate(assignment):
        if k is not None:
            loads[k] += weight(k, j)
    return loads


def _pair_profit(profits: Sequence[Sequence[float]], together: Callable[[int, int], bool]) -> float:
    n = len(profits)
    return sum(profits[i][j] for i in range(n) for j in range(i + 1, n) if together(i, j))


def evaluate_kp(inst: Kp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    load = sum(inst.weights[j] for j in packed)
    profit = sum(inst.profits[j] for j in packed)
    return _verdict({"knapsack 0": load}, {"knapsack 0": inst.capacity}, profit, {"packed": len(packed)})


def evaluate_mkp(inst: Mkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[j])
    profit = sum(inst.profits[j] for j in range(inst.n_items) if a[j] is not None)
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    return _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        profit,
        {"packed": sum(k is not None for k in a)},
    )


def evaluate_gap(inst: Gap, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    unassigned = [j for j in range(inst.n_items) if a[j] is None]
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[k][j])
    value = sum(inst.values[k][j] for j, k in enumerate(a) if k is not None)
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    evaluation = _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        value,
        {"unassigned": len(unassigned)},
    )
    if unassigned:
        evaluation.feasible, evaluation.objective = False, None
        evaluation.violations.append(f"items {unassigned} are in no knapsack (every item needs exactly one)")
    return evaluation


def evaluate_mdkp(inst: Mdkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    names = [f"dimension {d}" for d in range(len(inst.capacities))]
    loads = {names[d]: sum(row[j] for j in packed) for d, row in enumerate(inst.weights)}
    profit = sum(inst.profits[j] for j in packed)
    return _verdict(loads, dict(zip(names, inst.capacities, strict=True)), profit, {"packed": len(packed)})


def evaluate_qkp(inst: Qkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    packed = [j for j in range(inst.n_items) if a[j] is not None]
    load = sum(inst.weights[j] for j in packed)
    linear = sum(inst.profits[j][j] for j in packed)
    pairs = _pair_profit(inst.profits, lambda i, j: a[i] is not None and a[j] is not None)
    return _verdict(
        {"knapsack 0": load},
        {"knapsack 0": inst.capacity},
        linear + pairs,
        {"packed": len(packed), "linear_profit": linear, "pair_profit": pairs},
    )


def evaluate_qmkp(inst: Qmkp, solution: dict[str, Any], source: str = "<solution>") -> Evaluation:
    a = parse_assignment(inst, solution, source)
    loads = _loads_by_knapsack(a, inst.n_knapsacks, lambda k, j: inst.weights[j])
    linear = sum(inst.profits[j][j] for j in range(inst.n_items) if a[j] is not None)
    pairs = _pair_profit(inst.profits, lambda i, j: a[i] is not None and a[i] == a[j])
    names = [f"knapsack {k}" for k in range(inst.n_knapsacks)]
    return _verdict(
        dict(zip(names, loads, strict=True)),
        dict(zip(names, inst.capacities, strict=True)),
        linear + pairs,
        {"packed": sum(k is not None for k in a), "linear_profit": linear, "pair_profit": pairs},
    )


# ------------------------------------------------------------------------------ registration


def _exact(instance: Any, **options: Any) -> Any:
    from odrp.models.knapsack import solve  # the models import this module

    return solve(instance, **options)


def _schema(spec: type[BaseModel]) -> Callable[[], dict[str, Any]]:
    return lambda: spec.model_json_schema(by_alias=True)


def _kind(
    name: str,
    title: str,
    spec: type[BaseModel],
    load: Callable[..., Any],
    evaluate: Callable[..., Evaluation],
    generator: Callable[..., dict[str, Any]],
    default_solver: str,
    sense: str = "max",
    formulations: tuple[str, ...] = FORMULATIONS,
) -> ProblemKind:
    return ProblemKind(
        name=name,
        title=title,
        sense=sense,  # type: ignore[arg-type]
        load=load,
        evaluate=evaluate,
        schema=_schema(spec),
        generators={"random": generator},
        exact=_exact,
        size=lambda instance: instance.n_items,
        size_label="items",
        solvers=("highs", "cbc", "cpsat"),
        default_solver=default_solver,
        formulations=formulations,
    )


def _classic_kinds() -> tuple[ProblemKind, ...]:
    return (
        _kind("kp", "0-1 knapsack", KpSpec, load_kp, evaluate_kp, generators.kp, "highs", "max", ARCFLOW_FORMULATIONS),
        _kind(
            "mkp",
            "0-1 multiple knapsack",
            MkpSpec,
            load_mkp,
            evaluate_mkp,
            generators.mkp,
            "highs",
            "max",
            ARCFLOW_FORMULATIONS,
        ),
        _kind(
            "gap",
            "generalized assignment (sense per instance; registered as min)",
            GapSpec,
            load_gap,
            evaluate_gap,
            generators.gap,
            "highs",
            sense="min",
            formulations=GAP_FORMULATIONS,
        ),
        _kind("mdkp", "multidimensional 0-1 knapsack", MdkpSpec, load_mdkp, evaluate_mdkp, generators.mdkp, "highs"),
        _kind("qkp", "0-1 quadratic knapsack", QkpSpec, load_qkp, evaluate_qkp, generators.qkp, "highs"),
        _kind("qmkp", "quadratic multiple knapsack", QmkpSpec, load_qmkp, evaluate_qmkp, generators.qmkp, "highs"),
        qm3dkp.KIND,
    )


KIND: tuple[ProblemKind, ...] = _classic_kinds()
