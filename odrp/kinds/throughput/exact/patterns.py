"""The fixed-rate model P(rho) in pattern form: one placement pattern per component (few machines).

A *pattern* of component c is a vector x_c = (x_c1, ..., x_cm) of instance counts per machine with
N_c = sum_w x_cw >= 1. At the rate rho it costs machine w

    L_cw(x_c) = x_cw (e_cw l_c rho / N_c + MET_cw)       (eq. 5 for x_cw instances of c on w)

percent CPU and x_cw task slots. P(rho) asks for one pattern per component whose loads and tasks fit
every machine:

    lambda_cp in {0,1}     sum_p lambda_cp = 1                           (one pattern per component)
    machine w              sum_{c,p} L_cw(p) lambda_cp <= cap_w (1 - z)   (load at rho, z >= 0)
    task slots             sum_{c,p} x_pw lambda_cp <= k_w
    identical machines w before w' (same type, capacity, task limit): load_w >= load_w'

which is :mod:`.rate_model`'s level model with every integer of a component gathered into one
binary choice. Two facts make it small and strong when the machines are few:

- *Dominance.* A pattern whose every load and task count is at least another pattern's of the
  same component (at this rho) can be dropped: swapping in the other keeps every row satisfied.
  Only the Pareto-minimal patterns remain (tens per component at paper size, out of 1,330).
- *Tightness.* The LP relaxation mixes whole patterns of a component, so it already knows that a
  component's instances share its input; CP-SAT proves P(rho) infeasible just above the optimum in
  about 0.1 s at paper size where the level model needs seconds.

The candidates are every x_c with x_cw <= what w holds of c (:meth:`count_bound`) and N_c in the
range :func:`.bounds.count_range` allows; the form is used only when there are at most
:attr:`.settings.ThroughputSettings.pattern_limit` of them per component (3 machines with 10 task slots:
1,330; 10 machines: far more, the level model takes over). CP-SAT gets the rows with integer coefficients rounded *down*
(capacity 10^9), so that "infeasible" stays a proof; a pattern choice it returns is re-scored
exactly by the caller.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance

CPSAT_SCALE = 10**9
"""Each machine's capacity in CP-SAT units."""


def candidate_count(inst: ThroughputInstance, c: int) -> int:
    """How many count vectors x_c with x_cw <= count_bound(c, w) there are (zero vector included)."""
    return math.prod(inst.count_bound(c, w) + 1 for w in range(inst.n_machines))


def applies(inst: ThroughputInstance, limit: int = ThroughputSettings().pattern_limit) -> bool:
    """Whether every component has at most ``limit`` candidate patterns (then the pattern form is used)."""
    return all(candidate_count(inst, c) <= limit for c in range(inst.n_components))


@dataclass(frozen=True)
class PatternModel:
    """P(rho): for every component its Pareto-minimal patterns (counts, loads at rho)."""

    rho: float
    counts: tuple[np.ndarray, ...]
    """counts[c]: (patterns, machines) integer array of x_cw."""
    loads: tuple[np.ndarray, ...]
    """loads[c]: (patterns, machines) array of L_cw at rho."""

    @property
    def n_patterns(self) -> int:
        return sum(len(x) for x in self.counts)


def candidates(inst: ThroughputInstance, c: int) -> np.ndarray:
    """Every count vector of c with 1 <= N_c and x_cw <= count_bound(c, w), as rows."""
    ranges = [range(inst.count_bound(c, w) + 1) for w in range(inst.n_machines)]
    vectors = np.array(list(itertools.product(*ranges)), dtype=np.int64).reshape(-1, inst.n_machines)
    return vectors[vectors.sum(axis=1) >= 1]


def pareto_minimal(points: np.ndarray) -> np.ndarray:
    """Indices of the rows no other row dominates (<= in every column); of equal rows the first.

    Rows are visited in lexicographic order, in which a row comes after every row that dominates
    it, so each row is compared with the minimal rows kept so far only.
    """
    kept = np.empty_like(points)
    index: list[int] = []
    for i in np.lexsort(points.T[::-1]):
        row = points[i]
        if index and np.any(np.all(kept[: len(index)] <= row, axis=1)):
            continue
        kept[len(index)] = row
        index.append(int(i))
    return np.array(sorted(index), dtype=np.int64)


def pattern_model(
    inst: ThroughputInstance, rho: float, ranges: list[tuple[int, int]], pool: list[np.ndarray]
) -> PatternModel:
    """The Pareto-minimal patterns at rho among ``pool[c]`` with N_c in ``ranges[c]``."""
    capacity = np.array(inst.capacity) * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
    counts, loads = [], []
    for c in range(inst.n_components):
        x = pool[c]
        n = x.sum(axis=1)
        lo, hi = ranges[c]
        x = x[(n >= lo) & (n <= hi)]
        n = x.sum(axis=1)
        per_instance = np.array(inst.overhead[c]) + np.outer(
            rho / n, [inst.coefficient(c, w) for w in range(len(capacity))]
        )
        load = x * per_instance
        fits = np.all(load <= capacity, axis=1)
        x, load = x[fits], load[fits]
        keep = pareto_minimal(np.hstack([load, x])) if len(x) else np.zeros(0, dtype=np.int64)
        counts.append(x[keep])
        loads.append(load[keep])
    return PatternModel(rho, tuple(counts), tuple(loads))


def _symmetric_pairs(inst: ThroughputInstance) -> list[tuple[int, int]]:
    return [(a, b) for group in inst.machine_classes for a, b in itertools.pairwise(group)]


# --------------------------------------------------------------------------------- MILP form


@dataclass
class MatrixForm:
    model: MatrixModel
    choice: list[list[int]]
    """choice[c][p]: the column of lambda_cp."""


def build_matrix(inst: ThroughputInstance, pm: PatternModel, symmetry: bool = True) -> MatrixForm:
    """P(rho) in pattern form as a MILP (feasibility: no objective), for HiGHS or CBC."""
    model = MatrixModel(sense="max")
    load: list[dict[int, float]] = [{} for _ in range(inst.n_machines)]
    tasks: list[dict[int, float]] = [{} for _ in range(inst.n_machines)]
    choice = []
    for c in range(inst.n_components):
        columns = [model.column(upper=1.0, integer=True) for _ in range(len(pm.counts[c]))]
        model.row(dict.fromkeys(columns, 1.0), 1.0, 1.0)
        for col, x, size in zip(columns, pm.counts[c], pm.loads[c], strict=True):
            for w in np.flatnonzero(x):
                load[w][col] = float(size[w])
                tasks[w][col] = float(x[w])
        choice.append(columns)
    for w in range(inst.n_machines):
        cap = inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
        model.row({j: s / cap for j, s in load[w].items()}, upper=1.0)
        if inst.max_tasks[w] is not None:
            model.row(tasks[w], upper=float(inst.max_tasks[w]))
    if symmetry:
        for a, b in _symmetric_pairs(inst):
            row = dict(load[a])
            for j, s in load[b].items():
                row[j] = row.get(j, 0.0) - s
            model.row(row, lower=0.0)
    return MatrixForm(model, choice)


def decode_matrix(form: MatrixForm, pm: PatternModel, values: list[float]) -> Counts:
    return _counts(pm, [[values[col] > 0.5 for col in columns] for columns in form.choice])


# -------------------------------------------------------------------------------- CP-SAT form


@dataclass
class CpsatForm:
    model: object
    choice: list[list[object]]


def build_cpsat(inst: ThroughputInstance, pm: PatternModel, symmetry: bool = True, hint: Counts | None = None):
    """P(rho) in pattern form for CP-SAT, maximising the smallest relative slack z (rows rounded down)."""
    from ortools.sat.python import cp_model  # loaded when a CP-SAT model is built: importing the kind stays light

    model = cp_model.CpModel()
    z = model.NewIntVar(0, CPSAT_SCALE, "z")
    load: list[list] = [[] for _ in range(inst.n_machines)]
    tasks: list[list] = [[] for _ in range(inst.n_machines)]
    choice = []
    for c in range(inst.n_components):
        literals = [model.NewBoolVar(f"p{c}_{p}") for p in range(len(pm.counts[c]))]
        model.AddExactlyOne(literals)
        for lit, x, size in zip(literals, pm.counts[c], pm.loads[c], strict=True):
            for w in np.flatnonzero(x):
                cap = inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
                load[w].append((math.floor(size[w] / cap * CPSAT_SCALE), lit))
                tasks[w].append((int(x[w]), lit))
        if hint is not None:
            wanted = [hint[c].get(w, 0) for w in range(inst.n_machines)]
            for lit, x in zip(literals, pm.counts[c], strict=True):
                model.AddHint(lit, bool(list(x) == wanted))
        choice.append(literals)
    for w in range(inst.n_machines):
        model.Add(sum(k * lit for k, lit in load[w]) + z <= CPSAT_SCALE)
        if inst.max_tasks[w] is not None:
            model.Add(sum(k * lit for k, lit in tasks[w]) <= inst.max_tasks[w])
    if symmetry:
        for a, b in _symmetric_pairs(inst):
            model.Add(sum(k * lit for k, lit in load[a]) >= sum(k * lit for k, lit in load[b]))
    model.Maximize(z)
    return CpsatForm(model, choice)


def decode_cpsat(form: CpsatForm, pm: PatternModel, solver) -> Counts:
    return _counts(pm, [[bool(solver.Value(lit)) for lit in literals] for literals in form.choice])


def _counts(pm: PatternModel, chosen: list[list[bool]]) -> Counts:
    counts: Counts = []
    for c, flags in enumerate(chosen):
        (p,) = [p for p, on in enumerate(flags) if on]
        counts.append({int(w): int(k) for w, k in enumerate(pm.counts[c][p]) if k})
    return counts
