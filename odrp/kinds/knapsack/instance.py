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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, NonNegativeFloat

from odrp.core.errors import InputError
from odrp.core.kind import Strict, require, validate

CAPACITY_RTOL = 1e-9


def fits(load: float, capacity: float) -> bool:
    """``load <= capacity`` up to rounding (1e-9 relative, unit floor)."""
    return load <= capacity + CAPACITY_RTOL * max(1.0, abs(capacity))


# --------------------------------------------------------------------------------- the schemas


class KpSpec(Strict):
    problem: Literal["kp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[NonNegativeFloat]
    capacity: NonNegativeFloat


class MkpSpec(Strict):
    problem: Literal["mkp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[NonNegativeFloat]
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class GapSpec(Strict):
    problem: Literal["gap"]
    name: str = "unnamed"
    sense: Literal["min", "max"] = "min"
    values: list[list[float]] = Field(min_length=1, description="values[i][j]: item j in knapsack i")
    weights: list[list[NonNegativeFloat]] = Field(min_length=1)
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class MdkpSpec(Strict):
    problem: Literal["mdkp"]
    name: str = "unnamed"
    profits: list[float] = Field(min_length=1)
    weights: list[list[NonNegativeFloat]] = Field(min_length=1, description="weights[d][j]")
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class QkpSpec(Strict):
    problem: Literal["qkp"]
    name: str = "unnamed"
    profits: list[list[float]] = Field(min_length=1, description="symmetric; diagonal = linear profits")
    weights: list[NonNegativeFloat]
    capacity: NonNegativeFloat


class QmkpSpec(Strict):
    problem: Literal["qmkp"]
    name: str = "unnamed"
    profits: list[list[float]] = Field(min_length=1, description="symmetric; diagonal = linear profits")
    weights: list[NonNegativeFloat]
    capacities: list[NonNegativeFloat] = Field(min_length=1)


class AssignmentSpec(Strict):
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
