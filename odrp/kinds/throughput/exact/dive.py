"""A primal heuristic at fixed rate and counts: diving on the configuration LP (column generation).

At a rate rho with instance counts N_c fixed, an instance of component c on a machine of class t
(identical machines: same type, capacity and task limit) costs s_tc = e_tc l_c rho / N_c + MET_tc
CPU (eq. 5), so a placement that sustains rho is a bin packing with a few classes of bins: M_t
machines of class t, N_c items of every component c. Its configuration LP (Gilmore-Gomory, as in
:mod:`.config_bound` but with the counts fixed and every weight rounded to the nearest grid unit, so that
its value guides a search and proves nothing) is

    min sum_t e_t   s.t.   sum_q a_cq mu_q >= d_c  (every c),   sum_{q of t} mu_q - e_t <= M_t  (every t),

mu_q >= 0 machines in configuration q (a_cq instances of c), e_t >= 0 machines missing in class t,
grown by column generation: the pricing of class t is a bounded knapsack (capacity on a grid of
:attr:`.settings.DiveSettings.grid` units, each instance's weight rounded to the nearest unit, and the task
limit) solved by dynamic programming.

**The dive** (the classic primal heuristic of cutting stock): solve the LP; if it needs extra machines,
stop (no placement found); otherwise fix machines in the configurations the LP uses most (every column
at mu_q >= 1 gets floor(mu_q) machines, else the largest mu_q gets one), take their instances from the
demands d_c and their machines from M_t, and solve again, until every instance is placed. A
configuration that fits on the grid may exceed a machine by half a unit per instance (at most 5 * 10 /
2000 = 2.5 permille of its capacity with 10 tasks): the placement sustains rho to within that, and the
caller scores it exactly (the evaluator's formula) and keeps it only when that rate beats its incumbent.
Weights are rounded to the nearest unit, not up: rounded up, the incumbent's own counts on 20 x 30 seed 2
lack 0.03 machines at the incumbent's rate, so the search could never reach a placement just above it.
A failed dive proves nothing.
"""

from __future__ import annotations

import math
import time

import numpy as np

from odrp.core.solvers.highs import run_highspy
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.exact.settings import DiveSettings
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, Counts, ThroughputInstance

EPS = 1e-9

Config = dict[int, int]
"""A configuration of one machine: component -> instances."""


class Scratch:
    """Scratch arrays of the pricing, kept between its calls: its tables are about 176 kB each, and allocated
    afresh for every component they took more time than the dynamic programme itself."""

    def __init__(self) -> None:
        self._held: dict[str, np.ndarray] = {}

    def array(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A scratch array of ``shape`` (a view of one kept between calls, grown when too small)."""
        held = self._held.get(name)
        if held is None or held.ndim != len(shape) or any(h < n for h, n in zip(held.shape, shape, strict=True)):
            size = shape if held is None or held.ndim != len(shape) else tuple(map(max, held.shape, shape))
            held = self._held[name] = np.empty(size)
        return held[tuple(slice(0, n) for n in shape)]


class _Classes:
    """Machine classes at rho and counts N: instance weights on a grid of ``grid`` units, count bounds and task
    slots; ``scratch``: the pricing's tables."""

    def __init__(self, inst: ThroughputInstance, rho: float, levels: list[int], grid: int, scratch: Scratch) -> None:
        self.grid = grid
        self.scratch = scratch
        self.groups = inst.machine_classes
        self.weight: list[list[int | None]] = []  # weight[t][c]: grid units of one instance (None: never fits)
        self.bound: list[list[int]] = []
        self.slots: list[int] = []
        for group in self.groups:
            w = group[0]
            cap = inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
            weights: list[int | None] = []
            bounds = []
            for c, n in enumerate(levels):
                size = inst.coefficient(c, w) * rho / n + inst.overhead[c][w]
                fits = size <= cap  # an instance too large for the machine alone is never placed there
                weights.append(min(round(size / cap * grid), grid) if fits else None)
                bounds.append(min(inst.count_bound(c, w), n) if fits else 0)
            self.weight.append(weights)
            self.bound.append(bounds)
            limit = inst.max_tasks[w]
            self.slots.append(sum(bounds) if limit is None else min(limit, sum(bounds)))

    def fill(self, t: int, c: int, demand: int) -> int:
        """The most instances of c a machine of class t holds alone (within ``demand``)."""
        weight = self.weight[t][c]
        if weight is None:
            return 0
        return min(self.bound[t][c], self.slots[t], demand, self.grid // max(weight, 1))

    def fits(self, t: int, config: Config) -> bool:
        """Whether ``config`` fits a machine of class t at this rho and these counts (on the grid)."""
        weights = self.weight[t]
        if sum(config.values()) > self.slots[t]:
            return False
        total = 0
        for c, k in config.items():
            weight = weights[c]
            if weight is None or k > self.bound[t][c]:
                return False
            total += k * weight
        return total <= self.grid

    def price(self, t: int, u: list[float], demand: list[int]) -> tuple[float, Config]:
        """max sum_c u_c k_c over the configurations of class t (k_c <= demand c), and one attaining it."""
        slots, grid = self.slots[t], self.grid
        tables = self.scratch.array("tables", (len(u) + 1, slots + 1, grid + 1))  # f before and after each component
        temp = self.scratch.array("temp", (slots + 1, grid + 1))
        f = tables[0]
        f.fill(0.0)
        stages: list[tuple[int, int, np.ndarray]] = []
        for c, value in enumerate(u):
            most = self.fill(t, c, demand[c])
            if value <= EPS or most == 0:
                continue
            weight = self.weight[t][c]
            assert weight is not None
            new = tables[len(stages) + 1]
            np.copyto(new, f)
            for k in range(1, most + 1):
                target = new[k:, k * weight :]
                shifted = temp[: slots + 1 - k, : grid + 1 - k * weight]
                np.add(f[: slots + 1 - k, : grid + 1 - k * weight], k * value, out=shifted)
                np.maximum(target, shifted, out=target)
            stages.append((c, most, f))
            f = new
        best = float(f[slots, grid])
        config: Config = {}
        tasks, units = slots, grid
        for c, most, before in reversed(stages):
            weight = self.weight[t][c]
            assert weight is not None
            here = before[tasks, units]
            chosen = 0
            for k in range(1, min(most, tasks, units // max(weight, 1)) + 1):
                candidate = before[tasks - k, units - k * weight] + k * u[c]
                if candidate > here + 1e-12:
                    here, chosen = candidate, k
            if chosen:
                config[c] = chosen
                tasks, units = tasks - chosen, units - chosen * weight
        return best, config


def _lp(
    classes: _Classes, columns: list[list[Config]], demand: list[int], supply: list[int]
) -> tuple[float, list[float], list[float], list[list[float]]]:
    """The restricted LP: its value (machines missing), duals u_c >= 0 and pi_t <= 0, and mu per column."""
    model = MatrixModel(sense="min")
    cover: dict[int, dict[int, float]] = {c: {} for c, d in enumerate(demand) if d > 0}
    mus: list[list[int]] = []
    supply_rows = []
    for t, configs in enumerate(columns):
        mu = [model.column() for _ in configs]
        mus.append(mu)
        supply_rows.append(model.row({**dict.fromkeys(mu, 1.0), model.column(cost=1.0): -1.0}, upper=float(supply[t])))
        for col, config in zip(mu, configs, strict=True):
            for c, k in config.items():
                if c in cover:
                    cover[c][col] = float(k)
    demand_rows = {c: model.row(row, lower=float(demand[c])) for c, row in cover.items()}
    highs = model.to_highs()
    run = run_highspy(highs, "min", mip=False)
    if run.status != "optimal" or run.objective is None:
        raise RuntimeError(f"dive LP: {run.status} {run.message}")
    solution = highs.getSolution()
    duals, values = list(solution.row_dual), list(solution.col_value)
    u = [max(0.0, duals[demand_rows[c]]) if c in demand_rows else 0.0 for c in range(len(demand))]
    pi = [min(0.0, duals[r]) for r in supply_rows]
    return run.objective, u, pi, [[values[col] for col in mu] for mu in mus]


def _column_generation(
    classes: _Classes,
    columns: list[list[Config]],
    demand: list[int],
    supply: list[int],
    deadline: float | None,
    max_iterations: int,
) -> tuple[float, list[list[float]]] | None:
    """Grow ``columns`` until no configuration prices out (at most ``max_iterations`` steps); the LP value and mu
    (None: deadline, or an instance no machine left can hold)."""
    covered = {c for configs in columns for config in configs for c in config}
    if any(d > 0 and c not in covered for c, d in enumerate(demand)):
        return None
    for _ in range(max_iterations):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        value, u, pi, mu = _lp(classes, columns, demand, supply)
        added = False
        if value > EPS:  # phase one: only columns that lower the missing machines matter
            for t in range(len(columns)):
                if supply[t] <= 0:
                    continue
                best, config = classes.price(t, u, demand)
                if config and best + pi[t] > 1e-9 and config not in columns[t]:
                    columns[t].append(config)
                    added = True
        if not added:
            return value, mu
    return _lp(classes, columns, demand, supply)[0], mu


class Pool:
    """What a sequence of LPs and dives keeps between calls: the configurations met so far, per machine class
    (they start the next LP at other counts or rates, each only where it still fits, :meth:`_Classes.fits`),
    and the pricing's scratch arrays."""

    def __init__(self, n_classes: int) -> None:
        self.configs: list[list[Config]] = [[] for _ in range(n_classes)]
        self._seen: list[set[frozenset[tuple[int, int]]]] = [set() for _ in range(n_classes)]
        self.scratch = Scratch()

    def add(self, columns: list[list[Config]]) -> None:
        for kept, seen, configs in zip(self.configs, self._seen, columns, strict=True):
            for config in configs:
                key = frozenset(config.items())
                if len(config) > 1 and key not in seen:
                    seen.add(key)
                    kept.append(config)


def _classes(inst: ThroughputInstance, rho: float, levels: list[int], pool: Pool | None, grid: int) -> _Classes:
    return _Classes(inst, rho, levels, grid, Scratch() if pool is None else pool.scratch)


def missing(
    inst: ThroughputInstance,
    rho: float,
    levels: list[int],
    pool: Pool | None = None,
    deadline: float | None = None,
    settings: DiveSettings = DiveSettings(),
) -> float | None:
    """The configuration LP's value at rho and counts ``levels``: how many machines the placement lacks
    in the LP relaxation (0: the dive may succeed; > 0: no placement with these counts sustains rho, up
    to the grid). None: an instance fits on no machine, or the deadline passed."""
    classes = _classes(inst, rho, levels, pool, settings.grid)
    supply = [len(group) for group in classes.groups]
    columns = _start_columns(classes, list(levels), supply, pool)
    solved = _column_generation(classes, columns, list(levels), supply, deadline, settings.max_iterations)
    if pool is not None:
        pool.add(columns)
    return None if solved is None else solved[0]


def dive(
    inst: ThroughputInstance,
    rho: float,
    levels: list[int],
    deadline: float | None = None,
    pool: Pool | None = None,
    settings: DiveSettings = DiveSettings(),
) -> Counts | None:
    """A placement with ``levels[c]`` instances of every component that sustains rho, found by diving on
    the configuration LP (None: the dive failed or the deadline passed; this proves nothing)."""
    classes = _classes(inst, rho, levels, pool, settings.grid)
    demand = list(levels)
    supply = [len(group) for group in classes.groups]
    columns = _start_columns(classes, demand, supply, pool)
    fixed: list[list[Config]] = [[] for _ in supply]
    while any(demand):
        solved = _column_generation(classes, columns, demand, supply, deadline, settings.max_iterations)
        if pool is not None:
            pool.add(columns)
        if solved is None or solved[0] > 1e-7:
            return None
        mu = solved[1]
        whole = [(t, i, math.floor(v + 1e-9)) for t, row in enumerate(mu) for i, v in enumerate(row) if v >= 1 - 1e-9]
        if not whole:
            t, i = max(((t, i) for t, row in enumerate(mu) for i in range(len(row))), key=lambda ti: mu[ti[0]][ti[1]])
            whole = [(t, i, 1)]
        for t, i, copies in whole:
            for _ in range(copies):
                config = {c: min(k, demand[c]) for c, k in columns[t][i].items() if min(k, demand[c]) > 0}
                if not config or supply[t] <= 0:
                    break
                fixed[t].append(config)
                supply[t] -= 1
                for c, k in config.items():
                    demand[c] -= k
        columns = _start_columns(classes, demand, supply, None, columns)
    placement: Counts = [{} for _ in levels]
    for group, configs in zip(classes.groups, fixed, strict=True):
        for w, config in zip(group, configs, strict=False):
            for c, k in config.items():
                placement[c][w] = k
    return placement


def _start_columns(
    classes: _Classes,
    demand: list[int],
    supply: list[int],
    pool: Pool | None,
    previous: list[list[Config]] | None = None,
) -> list[list[Config]]:
    """For every class with machines left: one column per component holding as many instances as fit alone
    (they keep the LP feasible), then the configurations of ``previous`` and of ``pool`` that still fit, cut
    to the demands left."""
    columns: list[list[Config]] = []
    for t, left in enumerate(supply):
        configs: list[Config] = []
        if left > 0:
            for c, d in enumerate(demand):
                most = classes.fill(t, c, d) if d > 0 else 0
                if most:
                    configs.append({c: most})
            seen = {frozenset(config.items()) for config in configs}
            sources = (previous[t] if previous is not None else []) + (pool.configs[t] if pool is not None else [])
            for config in _trimmed(sources, demand):
                if frozenset(config.items()) not in seen and classes.fits(t, config):
                    configs.append(config)
        columns.append(configs)
    return columns


def _trimmed(configs: list[Config], demand: list[int]) -> list[Config]:
    """The configurations cut to the demands left (empty and repeated ones dropped)."""
    kept: list[Config] = []
    seen: set[frozenset[tuple[int, int]]] = set()
    for config in configs:
        cut = {c: min(k, demand[c]) for c, k in config.items() if min(k, demand[c]) > 0}
        key = frozenset(cut.items())
        if cut and key not in seen:
            seen.add(key)
            kept.append(cut)
    return kept
