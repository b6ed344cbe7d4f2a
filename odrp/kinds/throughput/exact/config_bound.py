"""A configuration bound on R: per-machine integrality at a fixed rate, by column generation.

At a rate rho a placement gives every component c a level N_c = n (its instance count) and every
machine w a *configuration*: how many instances k_c of each component it holds, each costing
s_cw(n) = e_cw l_c rho / n + MET_cw CPU (eq. 5) at c's level. A configuration is feasible on w when

    sum_c k_c s_cw(N_c) <= cap_w,   sum_c k_c <= k_w,   k_c <= count_bound(c, w)      (one machine)

and the machines' counts add up to the levels: sum_w k_c(w) = N_c. Identical machines (same type,
capacity and task limit: a *class* t of M_t machines) have the same configurations Q_t.

**The proof.** For any multipliers u_cn >= 0 (one per component and level) write
phi(q) = sum_c u_{c,n_c(q)} k_c(q) for a configuration q (the level it carries for c). If a placement
sustains rho, summing phi over its machines counts every instance of c once at its level, so

    sum_c u_{c,N_c} N_c  =  sum_w phi(q_w)  <=  sum_t M_t max_{q in Q_t} phi(q)  =: P(u),

and the left side is at least D(u) = sum_c min_n n u_cn (n over :func:`.bounds.count_range`,
narrowed by :func:`.bounds.fluid_count_ranges`, the fluid LP at R = rho: no other level sustains
rho). So D(u) > P(u) proves that no placement sustains rho: R* < rho. The maximum over Q_t is a
grouped knapsack (one level and count per component, capacity and task limit), solved by dynamic
programming on a grid of ``grid`` capacity units (:attr:`.settings.ConfigurationSettings.grid` by default) with
every weight rounded *down*:
every feasible configuration stays feasible on the grid, so the grid optimum is an upper bound on the
true maximum and the proof stands (it only gets slightly weaker). This holds on every grid, coarse or
fine: a finer grid only loses less (each option rounds away less than one unit, so a configuration of
at most ``slots`` options may overfill a machine by less than slots/grid of its capacity: about 0.5%
at 2,000 units and 10 tasks per machine, 0.05% at 20,000). The proof needs nothing but u >= 0 and that
upper bound: it never trusts an LP objective.

**The multipliers** are the duals of the configuration LP, the LP relaxation of choosing the
machines' configurations (Gilmore-Gomory / Dantzig-Wolfe): columns mu_tq >= 0 (machines of class t
in configuration q) and lambda_cn >= 0 (component c at level n),

    sum_n lambda_cn = 1,   sum_q mu_tq <= M_t,   sum_{t,q} k_{c,n}(q) mu_tq >= n lambda_cn,

in phase-one form (a slack of cost 1 on every linking row), grown by column generation with the
knapsack above as pricing. At its optimum D(u) - P(u) equals the LP's phase-one value, so the bound
refutes rho exactly when this LP is infeasible (up to the grid). Where the fluid and pattern LPs
(:mod:`.bounds`, :mod:`.pattern_bound`) let a machine carry a fraction of an instance, a
configuration is whole instances that fit on one machine together: this is the integrality of
instances on a machine (overheads and packing) that those LPs miss.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

import highspy
import numpy as np

from odrp.core.solvers.run import c_stdout_silenced
from odrp.kinds.throughput.exact.bounds import FluidModels, count_range, fluid_count_ranges, lp_optimum
from odrp.kinds.throughput.exact.settings import ConfigurationSettings
from odrp.kinds.throughput.instance import FEASIBILITY_TOL, ThroughputInstance

MARGIN = 1e-7
"""D(u) - P(u) must exceed this, relative to sum u, to count as a proof (rounding of floats)."""
POSITIVE = 1e-12
"""Multipliers at or below this are treated as 0 in the pricing (they cannot raise phi)."""


@dataclass(frozen=True)
class _Options:
    """The options of one component on one machine class: k instances at level n, of grid weight
    ``weight``, as arrays in the order (n, k) ascending (the level ranges are contiguous)."""

    n: np.ndarray
    k: np.ndarray
    weight: np.ndarray

    def between(self, lo: int, hi: int) -> _Options:
        """The options at levels lo..hi."""
        a, b = np.searchsorted(self.n, [lo, hi + 1])
        return _Options(self.n[a:b], self.k[a:b], self.weight[a:b])


class _PoolIndex:
    """The configurations of one class's pool as arrays of their instances, so that a node finds the distinct
    restrictions of the pool to its levels without a Python loop over the pool (a pool holds hundreds of
    configurations per class, of which a node keeps a few hundred distinct restrictions; filtering them in Python
    took over half a node's time). Configurations are told apart by a 64-bit hash of their instances: a
    collision only leaves a column out of an LP's start (the proof is the pricing's)."""

    def __init__(self) -> None:
        self.size = 0  # pool configurations indexed so far (the pool only grows)
        self._owner: list[int] = []
        self._c: list[int] = []
        self._n: list[int] = []
        self._code: list[int] = []
        self._arrays: tuple[np.ndarray, ...] | None = None

    def distinct(self, pool: list[dict[tuple[int, int], int]], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Positions in ``pool`` (ascending) of the first configuration of each distinct nonempty restriction to
        the levels lo[c]..hi[c]."""
        if self.size < len(pool):
            for i in range(self.size, len(pool)):
                for (c, n), k in pool[i].items():
                    self._owner.append(i)
                    self._c.append(c)
                    self._n.append(n)
                    self._code.append(_instance_code(c, n, k))
            self.size = len(pool)
            self._arrays = (
                np.array(self._owner, dtype=np.int64),
                np.array(self._c, dtype=np.int64),
                np.array(self._n, dtype=np.int64),
                np.array(self._code, dtype=np.uint64),
            )
        if self._arrays is None:
            return np.zeros(0, dtype=np.int64)
        owner, c, n, code = self._arrays
        inside = (lo[c] <= n) & (n <= hi[c])
        hashes = np.zeros(self.size, dtype=np.uint64)
        np.add.at(hashes, owner[inside], code[inside])  # wraps around modulo 2^64
        kept = np.bincount(owner[inside], minlength=self.size) > 0
        positions = np.flatnonzero(kept)
        _, first = np.unique(hashes[positions], return_index=True)
        return positions[np.sort(first)]


def _instance_code(c: int, n: int, k: int) -> int:
    """A 64-bit hash of k instances of component c at level n (splitmix64 of the triple packed in 21 bits each)."""
    x = ((c << 42 | n << 21 | k) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


class _Table:
    """Everything the pricing needs at a rate that does not depend on the node: the closed-form level
    ranges (:func:`.bounds.count_range`), every option of every class on those ranges, their weights by
    (c, n, k), the most instances of each (c, n) that fit a class alone, and the (c, n) some class can
    carry. Built once per (instance, rho, grid) and shared by the nodes of a level search (:class:`Tables`)."""

    def __init__(self, inst: ThroughputInstance, rho: float, grid: int) -> None:
        self.grid = grid
        self.ranges = [count_range(inst, c, rho) for c in range(inst.n_components)]
        self.classes = [group for group in inst.machine_classes]
        self.options: list[list[_Options]] = []  # options[t][c]
        self.weights: list[dict[tuple[int, int, int], int]] = []  # weights[t][c, n, k]
        self.slots: list[int] = []
        self.most: list[dict[tuple[int, int], int]] = []  # most[t][c, n]: the most instances fitting alone
        for group in self.classes:
            w = group[0]
            cap = inst.capacity[w] * (1 + FEASIBILITY_TOL) + FEASIBILITY_TOL
            per_class, weights, total = [], {}, 0
            for c, (lo, hi) in enumerate(self.ranges):
                bound = inst.count_bound(c, w)
                rows: list[tuple[int, int, int]] = []
                for n in range(lo, hi + 1):
                    size = inst.coefficient(c, w) * rho / n + inst.overhead[c][w]
                    for k in range(1, min(n, bound) + 1):
                        weight = math.floor(k * size / cap * grid * (1 - 1e-12))
                        if weight > grid:
                            break
                        rows.append((n, k, weight))
                        weights[c, n, k] = weight
                table = np.array(rows, dtype=np.int64).reshape(-1, 3)
                per_class.append(_Options(table[:, 0], table[:, 1], table[:, 2]))
                total += int(table[:, 1].max()) if rows else 0
            limit = inst.max_tasks[w]
            slots = total if limit is None else min(limit, total)
            most: dict[tuple[int, int], int] = {}
            for c, n, k in weights:
                if k <= slots:
                    most[c, n] = max(most.get((c, n), 0), k)
            self.options.append(per_class)
            self.weights.append(weights)
            self.slots.append(slots)
            self.most.append(most)
        self.carried = {(c, n) for weights in self.weights for c, n, _ in weights}
        self.pool: list[list[dict[tuple[int, int], int]]] = [[] for _ in self.classes]
        """Every configuration of each class priced at this rate (:attr:`ConfigurationSettings.pool`)."""
        self.pool_index = [_PoolIndex() for _ in self.classes]

    def within(self, config: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
        """``config`` without its instances at levels outside the table's ranges."""
        ranges = self.ranges
        return {(c, n): k for (c, n), k in config.items() if ranges[c][0] <= n <= ranges[c][1]}

    def fits(self, t: int, config: dict[tuple[int, int], int]) -> bool:
        """Whether ``config`` (at the table's levels) is an option set of class t within its grid and task slots."""
        weights = self.weights[t]
        if any((c, n, k) not in weights for (c, n), k in config.items()):
            return False
        return (
            sum(config.values()) <= self.slots[t] and sum(weights[c, n, k] for (c, n), k in config.items()) <= self.grid
        )


class Tables:
    """The pricing tables of one solve's rates (:class:`_Table`), with their pools of configurations, kept between
    LPs: a solve (or a worker's instance) makes one and passes it to every configuration LP, so that the nodes of
    a level search at one rate share a table and a pool. At most ``settings.tables_kept`` rates are kept (the one
    used least recently is forgotten first). ``fluid``: the fluid LPs that narrow every LP's levels."""

    def __init__(
        self, settings: ConfigurationSettings = ConfigurationSettings(), fluid: FluidModels | None = None
    ) -> None:
        self.settings = settings
        self.fluid = FluidModels(settings.fluid_kept) if fluid is None else fluid
        self._tables: dict[tuple[int, float, int], tuple[ThroughputInstance, _Table]] = {}

    def at(self, inst: ThroughputInstance, rho: float, grid: int) -> _Table:
        """The :class:`_Table` of (inst, rho, grid), built on first use (the instance is kept with it, so that its
        id cannot be reused by another instance while the entry lives). With the pool on, a new table's pool
        starts with the last ``settings.carried`` configurations of the pool at the rate used last (same instance
        and grid) that fit at this rate."""
        tables = self._tables
        key = (id(inst), rho, grid)
        entry = tables.get(key)
        if entry is None or entry[0] is not inst:
            last = next((e[1] for k, e in reversed(tables.items()) if e[0] is inst and k[2] == grid), None)
            while len(tables) >= self.settings.tables_kept:
                del tables[next(iter(tables))]
            entry = tables[key] = (inst, _Table(inst, rho, grid))
            if last is not None and self.settings.pool:
                table = entry[1]
                for t, configs in enumerate(last.pool):
                    for config in configs[-self.settings.carried :] if self.settings.carried else []:
                        kept = table.within(config)
                        if kept and table.fits(t, kept):
                            table.pool[t].append(kept)
        else:  # the rate used last: at the end of the order
            tables[key] = tables.pop(key)
        return entry[1]


class _Pricing:
    """The configurations of every machine class at rho, as grouped knapsack options (``within``: N_c restricted
    to within[c]; ``grid`` None: ``tables.settings.grid``; ``tables`` None: tables of its own)."""

    def __init__(
        self,
        inst: ThroughputInstance,
        rho: float,
        within: list[tuple[int, int]] | None = None,
        grid: int | None = None,
        tables: Tables | None = None,
    ) -> None:
        tables = Tables() if tables is None else tables
        grid = tables.settings.grid if grid is None else grid
        self.inst = inst
        self.rho = rho
        self.grid = grid
        table = self.table = tables.at(inst, rho, grid)
        ranges = list(table.ranges)
        if within is not None:  # a node of the level search: N_c restricted to within[c]
            ranges = [(max(lo, a), min(hi, b)) for (lo, hi), (a, b) in zip(ranges, within, strict=True)]
        if all(lo <= hi for lo, hi in ranges) and any(lo < hi for lo, hi in ranges):
            ranges = fluid_count_ranges(inst, rho, ranges, tables.fluid)
        self.levels = [range(lo, hi + 1) for lo, hi in ranges]
        self._allowed = {(c, n) for c, levels in enumerate(self.levels) for n in levels}
        self.classes = table.classes
        self.slots = table.slots
        self.weights = table.weights  # weights[t][c, n, k]: grid weight of an option (at the table's levels)
        self.options = [  # options[t][c]: the options at the node's levels
            [options.between(lo, hi) for options, (lo, hi) in zip(per_class, ranges, strict=True)]
            for per_class in table.options
        ]

    def singletons(self) -> list[list[dict[tuple[int, int], int]]]:
        """For every class the configurations with as many instances of one (c, n) as fit alone."""
        levels = self.levels
        return [[{(c, n): k} for (c, n), k in most.items() if n in levels[c]] for most in self.table.most]

    def restricted(self, config: dict[tuple[int, int], int]) -> dict[tuple[int, int], int]:
        """``config`` without its instances at levels outside the node's (``config`` itself if none is)."""
        allowed = self._allowed
        if config.keys() <= allowed:
            return config
        return {key: k for key, k in config.items() if key in allowed}

    def empty(self) -> bool:
        """Some component has no level at rho (then rho is refuted outright)."""
        if any(len(levels) == 0 for levels in self.levels):
            return True
        carried = self.table.carried
        return any(all((c, n) not in carried for n in levels) for c, levels in enumerate(self.levels))

    def _multipliers(self, u: dict[tuple[int, int], float]) -> list[np.ndarray]:
        """u as one array per component, indexed by level - the node's lowest level."""
        return [np.array([u.get((c, n), 0.0) for n in levels]) for c, levels in enumerate(self.levels)]

    def best(
        self, t: int, u: dict[tuple[int, int], float], arrays: list[np.ndarray] | None = None
    ) -> tuple[float, dict[tuple[int, int], int]]:
        """An upper bound on max phi over class t's configurations, and a grid configuration attaining it
        (up to the float32 rounding of the table, below 1e-5 relative).

        Grouped knapsack by dynamic programming: f[tasks, units] = the most phi with at most that many
        tasks and grid units, components added one at a time (one level and count each, or none).
        ``arrays``: u as :meth:`_multipliers` gives it (computed here if not given).
        """
        slots, grid = self.slots[t], self.grid
        arrays = self._multipliers(u) if arrays is None else arrays
        f = np.zeros((slots + 1, grid + 1), dtype=np.float32)
        stages = []  # each component's useful options (c, n, k, weight, profit) and f before it
        for c, options in enumerate(self.options[t]):
            if not len(options.n):
                continue
            per_unit = arrays[c][options.n - self.levels[c].start]
            keep = np.flatnonzero((per_unit > POSITIVE) & (options.k <= slots))
            if not len(keep):
                continue
            k, weight, profit = options.k[keep], options.weight[keep], options.k[keep] * per_unit[keep]
            useful = _undominated(k, weight, profit)
            rows = list(
                zip(
                    options.n[keep][useful].tolist(),
                    k[useful].tolist(),
                    weight[useful].tolist(),
                    profit[useful].astype(np.float32).tolist(),  # float32 values: added exactly to f
                    strict=True,
                )
            )
            new = f.copy()
            for _, kk, ww, pp in rows:
                target = new[kk:, ww:]
                np.maximum(target, f[: slots + 1 - kk, : grid + 1 - ww] + pp, out=target)
            stages.append((c, rows, f))
            f = new
        # f is float32 (twice as fast as float64): every profit and every sum of the DP is rounded to nearest,
        # which loses at most a factor (1 - 2^-24) each, so the true maximum over at most m = min(slots,
        # components) options is below f (1 - 2^-24)^(-2m) < f (1 + m 2^-21): the bound stays an upper bound
        # (the proof margins of the level search are 1e-4 - 2e-3 of D(u), far above this rounding)
        value = float(f[slots, grid]) * (1 + min(slots, len(stages)) * 2.0**-21)
        config: dict[tuple[int, int], int] = {}
        tasks, units = slots, grid
        for c, rows, before in reversed(stages):  # backtrack: the option (if any) that gave f[tasks, units]
            fitting = [
                (before[tasks - kk, units - ww] + pp, n, kk, ww)
                for n, kk, ww, pp in rows
                if kk <= tasks and ww <= units
            ]
            if fitting:
                got, n, kk, ww = max(fitting, key=lambda row: row[0])
                if got > before[tasks, units]:
                    config[c, n] = kk
                    tasks, units = tasks - kk, units - ww
        return value, config

    def lagrangian(self, u: dict[tuple[int, int], float]) -> tuple[float, list[dict[tuple[int, int], int]]]:
        """D(u) - P(u) (> 0: rho refuted) and the best configuration of every class."""
        dual = sum(min(n * u.get((c, n), 0.0) for n in levels) for c, levels in enumerate(self.levels))
        arrays = self._multipliers(u)
        primal, configs = 0.0, []
        for t, group in enumerate(self.classes):
            value, config = self.best(t, u, arrays)
            primal += len(group) * value
            configs.append(config)
        return dual - primal, configs


def _undominated(k: np.ndarray, weight: np.ndarray, profit: np.ndarray) -> np.ndarray:
    """The positions (ascending) of the options no other option dominates: another with no more instances
    k, no more grid weight and at least the profit k u_cn (of any level n of the same component) takes no
    more tasks and units and gives no less, so an optimal knapsack never needs the dominated one. Of
    identical options the first is kept (near R* on 10 x 10 this leaves about a fifth of the options).

    By sorting: in the order (weight, k, -profit, position) every option that dominates another comes before
    it, so an option is dominated exactly when some option before it in that order with no more instances has
    at least its profit (a running maximum per instance count, then over counts up to k).
    """
    size = len(k)
    if size <= 1:
        return np.arange(size)
    order = np.lexsort((np.arange(size), -profit, k, weight))
    counts, rank = np.unique(k[order], return_inverse=True)
    table = np.full((len(counts), size), -np.inf)
    table[rank, np.arange(size)] = profit[order]
    table = np.maximum.accumulate(np.maximum.accumulate(table, axis=0), axis=1)  # most profit, count <= , up to i
    before = np.full(size, -np.inf)
    before[1:] = table[rank[1:], np.arange(size - 1)]
    dominated = np.empty(size, dtype=bool)
    dominated[order] = before >= profit[order]
    return np.flatnonzero(~dominated)


class ConfigurationLP:
    """The configuration LP at rho, grown by column generation (``previous``: start from the columns of
    another LP that still fit here, as the bisection of :func:`upper_bound` and the level search do; an LP
    on another grid passes its configurations, their weights recomputed on this one).

    ``within``: N_c restricted to the range within[c] (a node of :mod:`.level_search`). The proof above
    holds for the placements with counts in the ranges, since D(u) then takes its minimum over fewer
    levels: a refutation says that no placement with such counts sustains rho. ``grid``: capacity units
    of the pricing knapsack (any grid keeps the proof; a finer one refutes a little more and prices slower;
    None: ``tables.settings.grid``). ``tables``: the tables and pools of the solve (None: for this LP alone).
    """

    def __init__(
        self,
        inst: ThroughputInstance,
        rho: float,
        previous: HasColumns | None = None,
        within: list[tuple[int, int]] | None = None,
        grid: int | None = None,
        tables: Tables | None = None,
    ) -> None:
        tables = Tables() if tables is None else tables
        self.settings = tables.settings
        grid = self.settings.grid if grid is None else grid
        self.inst = inst
        self.rho = rho
        self.pricing = _Pricing(inst, rho, within, grid, tables)
        self.shares: dict[tuple[int, int], float] = {}
        """lambda_cn of the last restricted master (the share of component c at level n)."""
        self.fit_at = (rho, grid)
        """Every column fits a machine of its class on this grid at this rate (and so do its restrictions)."""
        self.columns = self.pricing.singletons()
        table = self.pricing.table
        sources = []  # (configurations per class, whether they are known to fit at this rate and grid)
        if previous is not None:  # another LP's, perhaps at another rate or grid: those that still fit here
            sources.append((previous.columns, getattr(previous, "fit_at", None) == self.fit_at))
        if self.settings.pool:  # every configuration priced at this rate in this process (sibling subtrees' too)
            lo = np.array([levels.start for levels in self.pricing.levels])  # distinct restriction to the node
            hi = np.array([levels.stop - 1 for levels in self.pricing.levels])
            distinct = [index.distinct(pool, lo, hi) for index, pool in zip(table.pool_index, table.pool, strict=True)]
            sources.append(([[pool[i] for i in d] for pool, d in zip(table.pool, distinct, strict=True)], True))
        self._seen = [{frozenset(config.items()) for config in configs} for configs in self.columns]
        allowed = self.pricing._allowed  # (the loop below is :meth:`_Pricing.restricted` inlined: ~700 columns a node)
        for t, seen in enumerate(self._seen):
            columns = self.columns[t]
            for configs, fitting in sources:
                for config in configs[t]:
                    if config.keys() <= allowed:
                        kept = config
                    else:
                        kept = {key: k for key, k in config.items() if key in allowed}
                        if not kept:
                            continue
                    key = frozenset(kept.items())
                    if key not in seen and (fitting or table.fits(t, kept)):
                        seen.add(key)
                        columns.append(kept)
        self.iterations = 0
        self.seconds = {"master": 0.0, "pricing": 0.0}
        """CPU seconds of this process spent in the masters and in the pricing (for benchmarks)."""
        self._master: _Master | None = None

    def refutes(self, deadline: float | None = None) -> bool | None:
        """True: proven that no placement sustains rho; False: the configuration LP is feasible at rho
        (this bound cannot refute it); None: undecided (iteration or time limit)."""
        pricing = self.pricing
        if pricing.empty():
            return True
        if self._master is None:
            self._master = _Master(pricing)
        seconds = self.seconds
        for _ in range(self.settings.max_iterations):
            if deadline is not None and time.perf_counter() > deadline:
                return None
            self.iterations += 1
            begin = time.process_time()
            value, u, self.shares = self._master.solve(self.columns)
            middle = time.process_time()
            seconds["master"] += middle - begin
            if value <= 1e-9:
                return False
            lb, configs = pricing.lagrangian(u)
            seconds["pricing"] += time.process_time() - middle
            if lb > MARGIN * max(1.0, sum(u.values())):
                return True
            added = False
            for t, config in enumerate(configs):
                key = frozenset(config.items())
                if config and key not in self._seen[t]:
                    self._seen[t].add(key)
                    self.columns[t].append(config)
                    if self.settings.pool:
                        self.pricing.table.pool[t].append(config)
                    added = True
            if not added:
                return None  # the pricing repeats a column: the master's duals do not move
        return None


def refutes(
    inst: ThroughputInstance,
    rho: float,
    deadline: float | None = None,
    grid: int | None = None,
    tables: Tables | None = None,
) -> bool | None:
    """True: proven that no placement sustains rho; False: the configuration LP is feasible at rho; None: undecided."""
    return ConfigurationLP(inst, rho, grid=grid, tables=tables).refutes(deadline)


class _Master:
    """The restricted configuration LP in excess-machine form, kept in one HiGHS model per
    :class:`ConfigurationLP`: each column generation step adds the new configurations as columns and
    re-solves from the slack basis, as a model built afresh would (a warm basis makes each master 3-7 times
    cheaper, but its duals price worse columns: more column generation steps, and the pricing is 70-90% of
    an LP's time), instead of building a new model.

    min sum_t s_t  s.t.  sum_n lambda_cn = 1,  sum_q k_{c,n}(q) mu_tq >= n lambda_cn,
    sum_q mu_tq - s_t <= M_t: the value is positive exactly when the restricted LP is infeasible
    without extra machines. The columns hold, for every (c, n) some class can carry, a configuration
    with an instance of it (:meth:`_Pricing.singletons`), so that the LP is feasible.
    """

    def __init__(self, pricing: _Pricing) -> None:
        # columns: lambda_cn (c, then n ascending), then s_t; rows: sum_n lambda_cn = 1 (every c), the
        # machine rows (every t), the linking rows (every (c, n)); built as arrays (the LP is rebuilt at
        # every node: ``MatrixModel``'s dictionaries cost more than the master's first solve)
        keys = [(c, n) for c, levels in enumerate(pricing.levels) for n in levels]
        n_lambdas, n_classes, n_components = len(keys), len(pricing.classes), len(pricing.levels)
        self.lambdas = {key: j for j, key in enumerate(keys)}
        self.machines = list(range(n_components, n_components + n_classes))
        self.links = {key: n_components + n_classes + j for j, key in enumerate(keys)}
        infinity = self.infinity = highspy.kHighsInf
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n_lambdas + n_classes, n_components + n_classes + n_lambdas
        lp.col_cost_ = np.concatenate([np.zeros(n_lambdas), np.ones(n_classes)])
        lp.col_lower_ = np.zeros(n_lambdas + n_classes)
        lp.col_upper_ = np.full(n_lambdas + n_classes, infinity)
        machines = np.array([float(len(group)) for group in pricing.classes])
        lp.row_lower_ = np.concatenate([np.ones(n_components), np.full(n_classes, -infinity), np.zeros(n_lambdas)])
        lp.row_upper_ = np.concatenate([np.ones(n_components), machines, np.full(n_lambdas, infinity)])
        sizes = [len(levels) for levels in pricing.levels]
        starts = np.concatenate([[0], np.cumsum(sizes), n_lambdas + 1 + np.arange(n_classes + n_lambdas)])
        index = np.concatenate([np.arange(n_lambdas), n_lambdas + np.arange(n_classes), np.arange(n_lambdas)])
        value = np.concatenate([np.ones(n_lambdas), -np.ones(n_classes), -np.array([n for _, n in keys], float)])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = starts.astype(np.int32)
        lp.a_matrix_.index_ = index.astype(np.int32)
        lp.a_matrix_.value_ = value
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = lp.num_col_, lp.num_row_
        lp.sense_ = highspy.ObjSense.kMinimize
        self.highs = highspy.Highs()
        self.highs.setOptionValue("output_flag", False)
        self.highs.passModel(lp)
        self.added = [0] * len(pricing.classes)  # columns of each class already in the model

    def solve(self, columns: list[list[dict[tuple[int, int], int]]]):
        """Add the configurations of ``columns`` not yet in the model (mu_tq, cost 0) and re-solve: the
        value, the multipliers u >= 0 of the linking rows and the shares lambda."""
        starts, index, value = [], [], []
        for t, configs in enumerate(columns):
            for config in configs[self.added[t] :]:
                starts.append(len(index))
                index.append(self.machines[t])
                value.append(1.0)
                for key, k in config.items():
                    index.append(self.links[key])
                    value.append(float(k))
            self.added[t] = len(configs)
        highs = self.highs
        if starts:
            n = len(starts)
            highs.addCols(
                n,
                np.zeros(n),
                np.zeros(n),
                np.full(n, self.infinity),
                len(index),
                np.array(starts, dtype=np.int32),
                np.array(index, dtype=np.int32),
                np.array(value, dtype=float),
            )
        highs.clearSolver()  # solve from the slack basis, as a model built afresh would
        with c_stdout_silenced():  # one LP per column generation step: no per-call wrapper
            objective = lp_optimum(highs, "min")
        if not isinstance(objective, float):
            raise RuntimeError(f"configuration LP master: {highs.modelStatusToString(highs.getModelStatus())}")
        solution = highs.getSolution()
        duals, values = solution.row_dual, solution.col_value
        shares = {key: values[col] for key, col in self.lambdas.items()}
        return objective, {key: max(0.0, duals[r]) for key, r in self.links.items()}, shares


def upper_bound(
    inst: ThroughputInstance,
    low: float,
    high: float,
    deadline: float | None,
    steps: int = 30,
    precision: float = 1e-7,
    grid: int | None = None,
    tables: Tables | None = None,
) -> float:
    """The lowest rate in (low, high] this bound refutes, by bisection (``high`` if none is found).

    Every LP after the first starts from the previous one's columns that still fit at its rate.
    Stops after ``steps``, at ``deadline`` or when high - low <= ``precision`` high.
    """
    return bisect(inst, low, high, deadline, steps, precision, grid=grid, tables=tables)[0]


def bisect(
    inst: ThroughputInstance,
    low: float,
    high: float,
    deadline: float | None,
    steps: int = 30,
    precision: float = 1e-7,
    first: float = 0.5,
    grid: int | None = None,
    tables: Tables | None = None,
    log: list[dict[str, Any]] | None = None,
) -> tuple[float, ConfigurationLP | None]:
    """:func:`upper_bound` and the last LP it solved (its columns start later LPs); the first rate tried is
    ``first`` of the way from ``low`` to ``high`` (then halves). ``tables``: the solve's tables and pools (None:
    one for this bisection); ``log`` gets every LP's rate, verdict, iterations and CPU seconds."""
    tables = Tables() if tables is None else tables
    previous = None
    for step in range(steps):
        if high - low <= precision * high or (deadline is not None and time.perf_counter() > deadline):
            break
        mid = low + (first if step == 0 else 0.5) * (high - low)
        previous = ConfigurationLP(inst, mid, previous, grid=grid, tables=tables)
        verdict = previous.refutes(deadline)
        if log is not None:
            log.append({"rho": mid, "refuted": verdict, "iterations": previous.iterations, **previous.seconds})
        if verdict is True:
            high = mid
        else:
            low = mid
    return high, previous


def refine(
    inst: ThroughputInstance,
    low: float,
    high: float,
    deadline: float | None,
    grid: int,
    step: float,
    precision: float,
    previous: ConfigurationLP | None = None,
    log: list[dict[str, Any]] | None = None,
    tables: Tables | None = None,
) -> tuple[float, ConfigurationLP | None]:
    """Lower a bound ``high`` (refuted on a coarser grid) on ``grid``: try high (1 - step); refuted, it is
    the new ``high`` and the next try is a step below it; else the step halves (and a rate this grid
    cannot refute bounds the tries from below), until the step is below ``precision`` or ``deadline``.

    A finer grid refutes only a little more (at 20 x 30, 0.04-0.09% lower on 20,000 units than on 2,000), so
    the tries stay just below the bound rather than bisecting from ``low``. Every LP starts from the previous
    one's columns (``previous``: e.g. the last LP of the coarse bisection), weights recomputed on this grid:
    then few column generation steps remain (1-6 per LP at 20 x 30, where one LP from scratch on 20,000 units
    costs as much as the whole refinement). Returns the bound and the last LP; ``log`` gets every LP's rate,
    verdict, iterations and seconds.
    """
    tables = Tables() if tables is None else tables
    while step >= precision and (deadline is None or time.perf_counter() < deadline):
        rho = high * (1 - step)
        if rho <= low * (1 + precision):  # at or next to a rate known not refuted
            step /= 2
            continue
        begin = time.perf_counter()
        previous = ConfigurationLP(inst, rho, previous, grid=grid, tables=tables)
        verdict = previous.refutes(deadline)
        if log is not None:
            log.append(
                {"rho": rho, "refuted": verdict, "iterations": previous.iterations, "s": time.perf_counter() - begin}
            )
        if verdict is True:
            high = rho
        else:
            if verdict is False:
                low = rho
            step /= 2
    return high, previous


class HasColumns(Protocol):
    """What a node passes to its children: the configurations of its LP (:attr:`ConfigurationLP.columns`)."""

    columns: list[list[dict[tuple[int, int], int]]]


@dataclass
class Columns:
    """The columns of an LP without the LP (what a worker process sends back for a node's children)."""

    columns: list[list[dict[tuple[int, int], int]]]
    fit_at: tuple[float, int] | None = None
    """(rho, grid) at which every column fits (:attr:`ConfigurationLP.fit_at`; None: not known)."""

    @classmethod
    def of(cls, lp: HasColumns) -> Columns:
        """``lp``'s columns, and the rate and grid at which they fit if it says."""
        return cls(lp.columns, getattr(lp, "fit_at", None))
