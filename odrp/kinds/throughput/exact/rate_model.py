"""The fixed-rate model P(rho): is there a placement whose every machine sustains the input rate rho?

With rho fixed, an instance of component c costs machine w a known amount of CPU once N_c is known:
s_cwn = e_cw l_c rho / n + MET_cw when N_c = n (eq. 5). Choosing N_c among levels n makes every
constraint linear in integer variables, with no product left:

    v_cn in {0,1}      N_c = n                          sum_n v_cn = 1
    y_cwn in Z+        instances of c on w if N_c = n   sum_w y_cwn = n v_cn,  y_cwn <= u_cwn v_cn
    machine w          sum_{c,n} s_cwn y_cwn <= cap_w (1 - z)         (load at rho, z >= 0)
    task slots         sum_{c,n} y_cwn <= k_w
    identical machines w, w' (same type, capacity, task limit; w before w'): load_w >= load_w'

u_cwn = min(n, what w holds of c) and 0 when one instance at level n does not fit on w. CP-SAT's rounds
of the rate search maximise z, the smallest relative slack at rho, so that a feasible answer is a
placement that sustains well more than rho; HiGHS and CBC, and CP-SAT on the level search's boxes, solve
P(rho) as a feasibility problem (z = 0: faster, and a box is a yes-or-no question). Sorting the loads of
identical machines removes their permutations (any placement can be permuted into that order) without
excluding a rate.

``build_matrix`` gives the MILP for HiGHS or CBC; ``build_cpsat`` the same model for CP-SAT with
integer coefficients rounded *down* (each machine row scaled so that its capacity is 10^9): every
placement that sustains rho satisfies the rounded rows, so "infeasible" from CP-SAT is a proof,
and a solution it returns is re-scored exactly by the caller.

**P(rho) on a subset K of the components** (``kept``), a relaxation: the other components are left
out, and what they need at least is reserved on the cluster as a whole,

    sum_{c in K, w, n} s_cwn y_cwn <= sum_w cap_w - sum_{c not in K} (rho min_w e_cw l_c + lo_c min_w MET_cw)
    sum_{c in K, w, n} y_cwn       <= sum_w k_w   - sum_{c not in K} lo_c

(lo_c: the least count allowed for c; a component's instances carry its whole input IR_c = l_c rho, a
convex combination of the machines' rates, and each costs at least the cheapest overhead). Every placement
that sustains rho, restricted to K, satisfies these rows and every machine's, so "infeasible" refutes rho for
every count vector in the levels, whatever the left-out components' counts within theirs. It is what the
level search asks of the big components (:func:`.level_search.big_tiers`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Protocol

from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance

CPSAT_SCALE = 10**9
"""Each machine's capacity in CP-SAT units."""

Ranges = list[tuple[int, int]]
"""A range [lo_c, hi_c] of N_c for every component (a box of levels; a node of the level search)."""


class BoxSolver(Protocol):
    """solve_box(rho, box, deadline) -> (status, placement): P(rho) with N_c in box[c] for all c; with ``kept``,
    P(rho) on those components alone, the others' least needs reserved (a relaxation: the placement it finds, if
    any, places the kept components only)."""

    def __call__(
        self, rho: float, box: Ranges, deadline: float | None, kept: list[int] | None = None
    ) -> tuple[str, Counts | None]: ...


@dataclass(frozen=True)
class Item:
    """y_cwn: instances of component c on machine w when N_c = n, each costing ``size`` CPU at rho."""

    c: int
    w: int
    n: int
    size: float
    upper: int


@dataclass(frozen=True)
class RateModel:
    """P(rho): the levels allowed for every component and the items y_cwn."""

    rho: float
    levels: tuple[tuple[int, ...], ...]
    items: tuple[Item, ...]
    kept: tuple[int, ...]
    """The components in the model (all, unless it is P(rho) on a subset)."""
    room: tuple[float, float | None] = (math.inf, None)
    """CPU and task slots (None: no limit) the kept components may use on the cluster as a whole
    (:func:`cluster_room`; a subset model only)."""

    @property
    def subset(self) -> bool:
        return len(self.kept) < len(self.levels)

    @property
    def n_levels(self) -> int:
        return sum(len(x) for x in self.levels)


def rate_model(
    inst: ThroughputInstance,
    rho: float,
    levels: list[list[int]],
    caps: list[list[int]] | None = None,
    kept: list[int] | None = None,
) -> RateModel:
    """Items of P(rho) for the allowed instance counts per component (and per-machine caps, if any);
    ``kept``: P(rho) on these components only, the others' least needs reserved (see the module's docstring)."""
    kept = list(range(inst.n_components)) if kept is None else sorted(kept)
    items = []
    for c in kept:
        for n in levels[c]:
            for w in range(inst.n_machines):
                size = inst.coefficient(c, w) * rho / n + inst.overhead[c][w]
                upper = min(n, inst.count_bound(c, w) if caps is None else caps[c][w])
                if size > inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL:
                    upper = 0
                if upper > 0:
                    items.append(Item(c, w, n, size, upper))
    room = cluster_room(inst, rho, [min(x) for x in levels], kept)
    return RateModel(rho, tuple(tuple(x) for x in levels), tuple(items), tuple(kept), room)


def least_cpu(inst: ThroughputInstance, c: int, rho: float, lo: int) -> float:
    """The least CPU that component c takes on the cluster at rho with at least ``lo`` instances, rounded down
    by 1e-9 (relative) so that the reserve it makes stays a relaxation: rho min_w e_cw l_c + lo min_w MET_cw
    over the machines that can hold an instance of c."""
    machines = [w for w in range(inst.n_machines) if inst.count_bound(c, w) > 0]
    least = rho * min(inst.coefficient(c, w) for w in machines) + lo * min(inst.overhead[c][w] for w in machines)
    return least * (1 - 1e-9)


def cluster_room(inst: ThroughputInstance, rho: float, least: list[int], kept: list[int]) -> tuple[float, float | None]:
    """The CPU and task slots (None: no limit) that the components ``kept`` may use on the cluster as a whole at
    rho, when every other component c has at least least[c] instances: what the cluster has, less what the others
    need at least (:func:`least_cpu`, and one slot per instance)."""
    left_out = [c for c in range(inst.n_components) if c not in kept]
    cpu = sum(cap * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL for cap in inst.capacity)
    cpu -= sum(least_cpu(inst, c, rho, least[c]) for c in left_out)
    if any(k is None for k in inst.max_tasks):
        return cpu, None
    return cpu, float(sum(inst.max_tasks) - sum(least[c] for c in left_out))  # type: ignore[arg-type]


def cluster_use(inst: ThroughputInstance, rho: float, placed: Counts) -> tuple[float, int]:
    """The CPU and task slots a placement of some components (``placed[c]``: machine -> instances) takes at rho."""
    cpu, tasks = 0.0, 0
    for c, per in enumerate(placed):
        n = sum(per.values())
        for w, k in per.items():
            cpu += k * (inst.coefficient(c, w) * rho / n + inst.overhead[c][w])
            tasks += k
    return cpu, tasks


def _symmetric_pairs(inst: ThroughputInstance) -> list[tuple[int, int]]:
    return [(a, b) for group in inst.machine_classes for a, b in itertools.pairwise(group)]


# --------------------------------------------------------------------------------- MILP form


@dataclass
class MatrixForm:
    model: MatrixModel
    v: dict[tuple[int, int], int]
    y: dict[Item, int]
    z: int


def build_matrix(inst: ThroughputInstance, rm: RateModel, symmetry: bool = True) -> MatrixForm:
    """P(rho) as a MILP, a feasibility problem: the slack z of the machine rows is fixed at 0 (no objective)."""
    model = MatrixModel(sense="max")
    z = model.column(lower=0.0, upper=0.0)
    v = {(c, n): model.column(upper=1.0, integer=True) for c in rm.kept for n in rm.levels[c]}
    y = {item: model.column(upper=float(item.upper), integer=True) for item in rm.items}
    for c in rm.kept:
        model.row({v[c, n]: 1.0 for n in rm.levels[c]}, 1.0, 1.0)
    by_level: dict[tuple[int, int], list[Item]] = {}
    load: list[dict[int, float]] = [{} for _ in range(inst.n_machines)]
    tasks: list[dict[int, float]] = [{} for _ in range(inst.n_machines)]
    for item in rm.items:
        by_level.setdefault((item.c, item.n), []).append(item)
        if item.upper < item.n:
            model.row({y[item]: 1.0, v[item.c, item.n]: -float(item.upper)}, upper=0.0)
        load[item.w][y[item]] = item.size
        tasks[item.w][y[item]] = 1.0
    for (c, n), col in v.items():
        model.row({**{y[i]: 1.0 for i in by_level.get((c, n), [])}, col: -float(n)}, 0.0, 0.0)
    for w in range(inst.n_machines):
        cap = inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
        model.row({**{j: s / cap for j, s in load[w].items()}, z: 1.0}, upper=1.0)
        if inst.max_tasks[w] is not None:
            model.row(tasks[w], upper=float(inst.max_tasks[w]))
    if rm.subset:
        cpu, slots = rm.room
        model.row({y[item]: item.size for item in rm.items}, upper=cpu)
        if slots is not None:
            model.row({y[item]: 1.0 for item in rm.items}, upper=slots)
    if symmetry:
        for a, b in _symmetric_pairs(inst):
            model.row({**load[a], **{j: -s for j, s in load[b].items()}}, lower=0.0)
    return MatrixForm(model, v, y, z)


def decode_matrix(form: MatrixForm, values: list[float], n_components: int) -> Counts:
    counts: Counts = [{} for _ in range(n_components)]
    for item, col in form.y.items():
        k = round(values[col])
        if k:
            counts[item.c][item.w] = counts[item.c].get(item.w, 0) + k
    return counts


# -------------------------------------------------------------------------------- CP-SAT form


@dataclass
class CpsatForm:
    model: object
    y: list
    """The variable of every item, in the order of ``items``."""
    items: tuple[Item, ...]


def build_cpsat(
    inst: ThroughputInstance, rm: RateModel, symmetry: bool = True, hint: Counts | None = None, slack: bool = True
):
    """P(rho) for CP-SAT. ``slack``: maximise z, the least free share of a machine; else (a level search's boxes and
    subsets, asked yes or no) z = 0 and the model has no objective. CP-SAT 9.15 with one worker, maximising z,
    found no solution in 10 s on models it solves in 1 ms without the objective (a subset model of nine integers,
    tiny(6) component 0 alone; the leaf vector (2, 2, 2) of tiny(7) at 707.73): its search lowered z's bound one
    conflict at a time. Rows are weighted sums of variable lists (items by position, not hashed: a 20 x 30 model
    has 180,000 items)."""
    from ortools.sat.python import cp_model  # loaded when a CP-SAT model is built: importing the kind stays light

    model = cp_model.CpModel()
    weighted = cp_model.LinearExpr.weighted_sum  # linear in the number of terms, where sum() is not
    z = model.NewIntVar(0, CPSAT_SCALE if slack else 0, "z")
    v = {(c, n): model.NewBoolVar(f"v{c}_{n}") for c in rm.kept for n in rm.levels[c]}
    y = [model.NewIntVar(0, item.upper, "") for item in rm.items]
    for c in rm.kept:
        model.AddExactlyOne(v[c, n] for n in rm.levels[c])
    by_level: dict[tuple[int, int], list] = {key: [] for key in v}
    load_vars: list[list] = [[] for _ in range(inst.n_machines)]
    load_coefs: list[list[int]] = [[] for _ in range(inst.n_machines)]
    caps = [cap * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL for cap in inst.capacity]
    for item, var in zip(rm.items, y, strict=True):
        by_level[item.c, item.n].append(var)
        if item.upper < item.n:
            model.Add(var <= item.upper * v[item.c, item.n])
        load_vars[item.w].append(var)
        load_coefs[item.w].append(math.floor(item.size / caps[item.w] * CPSAT_SCALE))
    for (c, n), var in v.items():
        level = by_level[c, n]
        model.Add(weighted([*level, var], [1] * len(level) + [-n]) == 0)
    for w in range(inst.n_machines):
        model.Add(weighted([*load_vars[w], z], [*load_coefs[w], 1]) <= CPSAT_SCALE)
        if inst.max_tasks[w] is not None:
            model.Add(cp_model.LinearExpr.sum(load_vars[w]) <= inst.max_tasks[w])
    if rm.subset:  # the cluster rows, scaled so that its CPU is 10^9 and rounded down like the machine rows
        cpu, slots = rm.room
        total = sum(caps)
        scaled = [math.floor(item.size / total * CPSAT_SCALE) for item in rm.items]
        model.Add(weighted(y, scaled) <= math.floor(cpu / total * CPSAT_SCALE))
        if slots is not None:
            model.Add(cp_model.LinearExpr.sum(y) <= int(slots))
    if symmetry:
        for a, b in _symmetric_pairs(inst):
            model.Add(weighted(load_vars[a], load_coefs[a]) >= weighted(load_vars[b], load_coefs[b]))
    if hint is not None:
        totals = [sum(per.values()) for per in hint]
        for (c, n), var in v.items():
            model.AddHint(var, int(totals[c] == n))
        for item, var in zip(rm.items, y, strict=True):
            model.AddHint(var, hint[item.c].get(item.w, 0) if totals[item.c] == item.n else 0)
    if slack:
        model.Maximize(z)
    return CpsatForm(model, y, rm.items)


def decode_cpsat(form: CpsatForm, solver, n_components: int) -> Counts:
    counts: Counts = [{} for _ in range(n_components)]
    for item, var in zip(form.items, form.y, strict=True):
        k = solver.Value(var)
        if k:
            counts[item.c][item.w] = counts[item.c].get(item.w, 0) + k
    return counts
