"""Bounds for the throughput search: the fluid upper bound on R and the instance counts worth trying.

Fluid relaxation (an LP): forget that a component's instances share its input evenly and that
counts are integers. For any placement x with rate R, the point q_cw = R x_cw / N_c (the part of c's
stream, in units of R, processed on w) and X_cw = x_cw satisfies

    sum_w q_cw = R,   sum_c (e_cw l_c q_cw + MET_cw X_cw) <= cap_w,   sum_c X_cw <= k_w,
    1 <= sum_w X_cw <= max_instances_c,   e_cw l_c q_cw <= (cap_w - MET_cw) X_cw   (every instance fits),

(the capacity row is eq. 5 summed over w's instances, with IR_c = l_c R from eq. 6),

so the LP's maximum of R is an upper bound on R*. With R fixed at a rate rho, the LP's largest and
smallest sum_w X_cw bound the instance count N_c of every placement that sustains rho (scale q down
to rho: every row stays satisfied), which prunes the levels of the rate model.
"""

from __future__ import annotations

import math

import highspy
import numpy as np

from odrp.core.solvers.highs import run_highspy
from odrp.core.solvers.run import c_stdout_silenced
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, ThroughputInstance


def fluid_model(
    inst: ThroughputInstance,
    rate: float | None = None,
    counts: list[tuple[int, int]] | None = None,
    by_class: bool = False,
) -> tuple[MatrixModel, int, dict]:
    """The fluid LP (objective max R), or with R fixed at ``rate``; returns (model, R column, X columns).

    ``counts``: a range (lo, hi) of N_c per component, imposed on sum_w X_cw (a placement whose counts
    lie in the ranges is still a point of the LP). ``by_class``: one column pair per component and machine
    class t (M_t interchangeable machines, :attr:`.ThroughputInstance.machine_classes`) instead of per
    machine, keyed (c, t), the class's rows M_t times one machine's: the same LP up to the symmetry of
    identical machines (any point averaged over a class is a point, and a class point split evenly over
    its machines is one), so its R and its sums sum_w X_cw have the same extremes, with M_t times fewer
    columns (20 x 30: 120 against 1,200)."""
    model, r, x, _ = _fluid_model(inst, rate, counts, by_class)
    return model, r, x


def _fluid_model(
    inst: ThroughputInstance, rate: float | None, counts: list[tuple[int, int]] | None, by_class: bool
) -> tuple[MatrixModel, int, dict, list[int]]:
    """:func:`fluid_model` and the rows lo_c <= sum_w X_cw <= hi_c of the components (in their order)."""
    units = [(g[0], len(g)) for g in inst.machine_classes] if by_class else [(w, 1) for w in range(inst.n_machines)]
    model = MatrixModel(sense="max")
    r = model.column(cost=1.0) if rate is None else model.column(lower=rate, upper=rate)
    q, x = {}, {}
    count_rows: list[int] = []
    for c in range(inst.n_components):
        for i, (w, many) in enumerate(units):
            top = inst.count_bound(c, w)
            q[c, i] = model.column(upper=0.0 if top == 0 else math.inf)
            x[c, i] = model.column(upper=float(many * top))
            a, room = inst.coefficient(c, w), inst.capacity[w] - inst.overhead[c][w]
            if a > 0:
                model.row({q[c, i]: a, x[c, i]: -max(room, 0.0)}, upper=0.0)
        model.row({**{q[c, i]: 1.0 for i in range(len(units))}, r: -1.0}, 0.0, 0.0)
        lo, top = 1.0, math.inf if inst.max_instances[c] is None else float(inst.max_instances[c])
        if counts is not None:
            lo, top = max(lo, float(counts[c][0])), min(top, float(counts[c][1]))
        count_rows.append(model.row({x[c, i]: 1.0 for i in range(len(units))}, lo, top))
    for i, (w, many) in enumerate(units):
        row = {}
        for c in range(inst.n_components):
            row[q[c, i]] = inst.coefficient(c, w)
            row[x[c, i]] = inst.overhead[c][w]
        model.row(row, upper=many * (inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL))
        if inst.max_tasks[w] is not None:
            model.row({x[c, i]: 1.0 for c in range(inst.n_components)}, upper=float(many * inst.max_tasks[w]))
    return model, r, x, count_rows


def fluid_solution(inst: ThroughputInstance) -> tuple[float, list[list[float]], list[list[float]]] | None:
    """An optimal point of the fluid LP: (R, shares q_cw / R, instances X_cw); None if infeasible."""
    model, r, x = fluid_model(inst)
    highs = model.to_highs()
    run = run_highspy(highs, "max", mip=False)
    if run.status != "optimal" or run.objective is None or run.objective <= 0:
        return None
    values = list(highs.getSolution().col_value)
    machines = range(inst.n_machines)
    # fluid_model creates the column q_cw just before X_cw
    shares = [[values[x[c, w] - 1] / values[r] for w in machines] for c in range(inst.n_components)]
    counts = [[values[x[c, w]] for w in machines] for c in range(inst.n_components)]
    return values[r], shares, counts


def fluid_bound(inst: ThroughputInstance) -> float | None:
    """max R of the fluid LP (None: the LP is infeasible, hence so is the instance)."""
    model, _, _ = fluid_model(inst)
    highs = model.to_highs()
    run = run_highspy(highs, "max", mip=False)
    if run.status == "infeasible":
        return None
    if run.status != "optimal" or run.objective is None:
        raise RuntimeError(f"fluid LP: {run.status} {run.message}")
    return run.objective * (1 + 1e-9) + 1e-12


def count_range(inst: ThroughputInstance, c: int, rate: float) -> tuple[int, int]:
    """Closed-form bounds on N_c for placements that sustain ``rate``.

    Below: one instance must fit on some machine, e l rate / N + MET <= cap. Above: the task slots
    left by one instance of every other component, max_instances, and the CPU left after every
    component's cheapest load and the other components' cheapest overhead.
    """
    lo = math.inf
    for w in range(inst.n_machines):
        room = inst.capacity[w] * (1 + FEASIBILITY_TOL) - inst.overhead[c][w]
        if inst.count_bound(c, w) == 0 or room < 0:
            continue
        load = inst.coefficient(c, w) * rate
        if load == 0:
            lo = 1
        elif room > 0:
            lo = min(lo, max(1, math.ceil(load / room * (1 - 1e-9))))
    hi = inst.instance_bound(c)
    if all(t is not None for t in inst.max_tasks):
        hi = min(hi, sum(inst.max_tasks) - (inst.n_components - 1))  # type: ignore[arg-type]
    cheapest_met = [min(inst.overhead[k]) for k in range(inst.n_components)]
    if cheapest_met[c] > 0:
        machines = range(inst.n_machines)
        cheapest_load = sum(min(inst.coefficient(k, w) for w in machines) for k in range(inst.n_components))
        left = sum(inst.capacity) * (1 + FEASIBILITY_TOL) - rate * cheapest_load
        left -= sum(cheapest_met[k] for k in range(inst.n_components) if k != c)
        hi = min(hi, math.floor(left / cheapest_met[c] * (1 + 1e-9)))
    return (int(lo), int(hi)) if math.isfinite(lo) and lo <= hi else (1, 0)


class _FluidRanges:
    """The fluid LP at R = ``rate`` in class form, held in one HiGHS model that every call at this rate reuses:
    a call sets the rows lo_c <= sum_t X_ct <= hi_c to its ranges and goes on from the last basis.

    ``sums`` maps the model's columns to the sums sum_t X_ct; each LP solved gives a point of the LP whose sums
    s_c bound its extremes (min <= s_c <= max), so an LP whose answer cannot narrow c's range is skipped: its
    maximum if some point of this call has s_c >= hi_c (then floor(max) >= hi_c), its minimum if some point has
    s_c <= lo_c. Skipping narrows nothing that solving would narrow (the same ranges)."""

    def __init__(self, inst: ThroughputInstance, rate: float) -> None:
        model, _, x, self.count_rows = _fluid_model(inst, rate, None, by_class=True)
        classes = len(inst.machine_classes)
        self.sums = np.array([[x[c, t] for t in range(classes)] for c in range(inst.n_components)], dtype=np.int64)
        self.highs = model.to_highs()
        self.highs.setOptionValue("output_flag", False)
        # primal simplex: a new objective leaves the last basis primal feasible, so each LP goes on from it
        # (measured, 20 x 30 seed 2, five rates: 4.0 CPU s with HiGHS's default dual simplex, 0.4 s; same ranges)
        self.highs.setOptionValue("simplex_strategy", 4)
        self.costed = np.zeros(0, dtype=np.int32)  # the columns of cost 1 (the others cost 0)
        self.tops = [math.inf if top is None else float(top) for top in inst.max_instances]

    def narrow(self, inst: ThroughputInstance, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """:func:`fluid_count_ranges` on this model."""
        highs = self.highs
        for row, (lo, hi), top in zip(self.count_rows, ranges, self.tops, strict=True):
            highs.changeRowBounds(row, max(1.0, float(lo)), min(top, float(hi)))
        wide = [c for c, (lo, hi) in enumerate(ranges) if lo < hi]
        out = list(ranges)
        seen_max = np.full(inst.n_components, -np.inf)
        seen_min = np.full(inst.n_components, np.inf)
        with c_stdout_silenced():
            if not wide:
                self._costs(np.zeros(0, dtype=np.int32))
                return out if lp_optimum(highs, "min") is not INFEASIBLE else [(1, 0)] * inst.n_components
            for c in wide:
                lo, hi = ranges[c]
                self._costs(self.sums[c].astype(np.int32))
                for sense in ("max", "min"):
                    if (seen_max[c] >= hi - 1e-9) if sense == "max" else (seen_min[c] <= lo + 1e-9):
                        continue  # a point of this LP already reaches the range's end: no narrowing
                    value = lp_optimum(highs, sense)
                    if value is INFEASIBLE:
                        return [(1, 0)] * inst.n_components
                    if value is None:
                        continue
                    point = np.asarray(highs.getSolution().col_value)[self.sums].sum(axis=1)
                    np.maximum(seen_max, point, out=seen_max)
                    np.minimum(seen_min, point, out=seen_min)
                    if sense == "max":
                        hi = min(hi, math.floor(value * (1 + 1e-9) + 1e-9))
                    else:
                        lo = max(lo, math.ceil(value * (1 - 1e-9) - 1e-9))
                out[c] = (lo, hi)
        return out

    def _costs(self, columns: np.ndarray) -> None:
        """Cost 1 on ``columns``, 0 on the others."""
        highs = self.highs
        highs.changeColsCost(len(self.costed), self.costed, np.zeros(len(self.costed)))
        highs.changeColsCost(len(columns), columns, np.ones(len(columns)))
        self.costed = columns


class FluidModels:
    """The fluid LPs at fixed rates of one instance (:class:`_FluidRanges`), kept between calls: a solve (or a
    worker's instance) makes one and passes it to every narrowing, so that the level search's nodes at one rate
    share one model. At most ``kept`` rates are kept (the oldest is forgotten first)."""

    def __init__(self, kept: int = 4) -> None:
        self.kept = kept
        self._models: dict[tuple[int, float], tuple[ThroughputInstance, _FluidRanges]] = {}

    def at(self, inst: ThroughputInstance, rate: float) -> _FluidRanges:
        """The model of ``inst`` at R = ``rate``, built on first use (the instance is kept with it, so that its id
        cannot be reused by another instance while the entry lives)."""
        key = (id(inst), rate)
        entry = self._models.get(key)
        if entry is None or entry[0] is not inst:
            while len(self._models) >= self.kept:
                del self._models[next(iter(self._models))]
            entry = self._models[key] = (inst, _FluidRanges(inst, rate))
        return entry[1]


def fluid_count_ranges(
    inst: ThroughputInstance, rate: float, ranges: list[tuple[int, int]], models: FluidModels | None = None
) -> list[tuple[int, int]]:
    """Tighten ``ranges`` of N_c with the fluid LP at R = ``rate`` (min and max of sum_w X_cw), the
    ranges imposed on the LP (every placement with counts in them that sustains ``rate`` is a point).

    A component whose range is one count has nothing to narrow and gets no LP (if every range is one
    count, one LP with a zero objective decides the LP's feasibility). The LP is the class form
    (``by_class``: M_t times fewer columns, the same extremes). The LPs run without
    :func:`odrp.core.solvers.highs.run_highspy`'s per-call bookkeeping: the level search solves up to twenty
    of them at every node. ``models``: where the model at this rate is kept between calls (None: a model for
    this call alone)."""
    if any(lo > hi for lo, hi in ranges):
        return [(1, 0)] * inst.n_components
    model = _FluidRanges(inst, rate) if models is None else models.at(inst, rate)
    return model.narrow(inst, ranges)


INFEASIBLE = object()


def lp_optimum(highs, sense: str):
    """Solve the LP held by ``highs`` (output off, C stdout silenced by the caller) in this sense: its
    optimum, ``INFEASIBLE`` (proven infeasible), or None (any other end)."""
    highs.changeObjectiveSense(_highs_sense(sense))
    highs.run()
    status = highs.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        return highs.getInfo().objective_function_value
    if status == highspy.HighsModelStatus.kInfeasible:
        return INFEASIBLE
    return None  # unbounded, or unbounded-or-infeasible: nothing proven, nothing narrowed


def _highs_sense(sense: str):
    return highspy.ObjSense.kMaximize if sense == "max" else highspy.ObjSense.kMinimize


def fluid_pair_bounds(inst: ThroughputInstance, rate: float) -> list[list[int]] | None:
    """The most instances of c on w in any placement that sustains ``rate`` (fluid LP: max X_cw); None:
    the LP is infeasible, no placement sustains ``rate``. One HiGHS model for all pairs, without
    :func:`odrp.core.solvers.highs.run_highspy`'s per-call bookkeeping (up to 100 LPs)."""
    model, _, x = fluid_model(inst, rate)
    highs = model.to_highs()
    highs.setOptionValue("output_flag", False)
    out = [[0] * inst.n_machines for _ in range(inst.n_components)]
    previous: list[int] = []
    with c_stdout_silenced():
        for (c, w), col in x.items():
            if inst.count_bound(c, w) == 0:
                continue
            highs.changeColsCost(len(previous), np.array(previous, dtype=np.int32), np.zeros(len(previous)))
            highs.changeColsCost(1, np.array([col], dtype=np.int32), np.ones(1))
            previous = [col]
            top = lp_optimum(highs, "max")
            if top is INFEASIBLE:
                return None
            top = inst.count_bound(c, w) if top is None else top
            out[c][w] = min(inst.count_bound(c, w), math.floor(top * (1 + 1e-9) + 1e-9))
    return out
