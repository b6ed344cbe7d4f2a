"""Hill climbing, ant system and hybrid for latency-aware placement (Ecker et al., section 4.3).

All three minimise the paper's score s (eq. 1) with the kind's constraints; a *violation* is a
supervisor whose cpu (or memory) exceeds ``utilisation_limit`` times its capacity (one per
supervisor and resource, the evaluator's test).

**Hill climbing** (4.3.1). Start: a greedy placement that "mainly aims to satisfy the memory"
constraint (our reading: operators in topological order, each on the supervisor with the most free
memory among those where it fits in cpu and memory, else the one with the most free memory: a
spread-out, "potentially highly inefficient" start; if that violates a limit, the same by
decreasing memory demand, whichever violates fewer). Neighbourhood, the paper's three operations:
move one operator to another supervisor; swap two operators that are not co-located; move all
operators of a supervisor to another supervisor. A neighbour is accepted only if its violations do
not grow and its score is lower ("the amount of constraint violations has to be reduced or at least
kept equal while improving the score"). Our reading of the search order: steepest descent, the best
acceptable neighbour of the whole neighbourhood each step (ties: the first in the order above), until
none is acceptable. One *iteration* is one accepted step.

**Ant system** (4.3.2, eqs. 2-5). Pheromone tau[i][u] on the edge operator i -> supervisor u,
initially ``p_init``. Each iteration, ``ants`` ants build placements: each takes the operators in
its own random order and puts operator i on supervisor u with probability proportional to
tau[i][u]^alpha eta[i][u]^beta (eq. 2) over all supervisors, with the a-priori heuristic (eq. 3)
eta = 2^[a predecessor or successor of i is on u] 2^[u already used] / 2^[i overloads u's cpu] /
2^[i overloads u's memory], judged on the ant's partial placement. Ant k is scored
S_k = s + 10000 violations; the pheromone becomes max(rho tau + sum_k Q / S_k [k put i on u], p_min)
(eqs. 4, 5: evaporation, deposit, the MAX-MIN floor). The best ant (lowest S_k, first found on ties)
is kept. Exit: ``max_iterations`` iterations, or ``patience`` iterations without a better best ant
once ``min_iterations`` are done ("the iteration count and the number of iterations since the last
[improvement of the] score are used as exit conditions"). One *iteration* is one colony of ants.
The paper gives no values; ours: ants 10, alpha 1, beta 2, rho 0.5 (Dorigo et al. 1996's
persistence), Q 1, p_init 1, p_min 0.01, iterations 20..200 with patience 20. No previous placement
seeds the pheromone (the paper's p_c: we place from scratch).

**Hybrid** (4.3.3): the ant system, then hill climbing from its best placement, "each half the
time": with a wall-clock cap the ant system gets half of it and hill climbing the rest; with an
iteration budget N the ant system gets ceil(N/2) colony iterations and hill climbing floor(N/2)
steps.

**Budgets.** The setting ``iterations`` (an iteration budget, as defined above; the
:attr:`~odrp.core.budget.Budget.max_steps` of the run's :class:`~odrp.core.budget.Budget`) makes a
run depend only on the seed: the same placement on any machine. ``time_limit`` is a wall-clock cap in
seconds; without both, the cap is 1 s ("the configured runtime limit of one second"); with
``iterations`` and no ``time_limit`` there is no cap. ``stats.stopped_by`` says what ended a run
(``iterations``, ``time``, ``local_optimum``, ``max_iterations`` or ``patience``; ``time`` marks a
run that a machine's speed decided). Hill climbing uses no randomness (``seed`` is accepted and
unused).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from odrp.core.budget import Budget
from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.kinds.latency.instance import LatencyInstance, solution_json

PAPER_CAP = 1.0
"""Seconds: the paper's runtime limit of one second per placement, the cap without an iteration budget."""
PENALTY = 10000.0
"""S_k = score + 10000 x constraint violations (section 4.3.2)."""
IMPROVEMENT = 1e-12
"""A step must lower the score by more than this (relative): float noise is no improvement."""


# ------------------------------------------------------------------------------------ scoring


class Scorer:
    """Eq. (1) and the violations of a placement ``p`` (supervisor index per operator), fast."""

    def __init__(self, inst: LatencyInstance) -> None:
        self.inst = inst
        self.n, self.m = inst.n_operators, inst.n_supervisors
        w = inst.weights
        self.w_latency = w["latency"]
        self.per_supervisor = w["supervisors"] / self.m
        per_edge = w["colocation"] / len(inst.edges) if inst.edges else 0.0
        per_event = w["events"] / inst.total_events if inst.total_events > 0 else 0.0
        self.edge_cost = [per_edge + per_event * t for t in inst.events]
        self.incident: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        for e, (i, j) in enumerate(inst.edges):
            self.incident[i].append((e, j))
            self.incident[j].append((e, i))
        self.neighbours = [sorted({k for _, k in inc}) for inc in self.incident]
        self.cpu, self.memory = inst.cpu, inst.memory
        self.cpu_limit = [c * (1 + 1e-9) + 1e-9 for c in inst.cpu_limit]
        self.memory_limit = [c * (1 + 1e-9) + 1e-9 for c in inst.memory_limit]
        self.order, self.predecessors = inst.latency_order, inst.latency_predecessors

    def latency(self, p: list[int]) -> float:
        """s_lat: the longest accumulated link latency (over the kind's latency edges)."""
        lat = self.inst.latency
        arrival = [0.0] * self.n
        for j in self.order:
            pj = p[j]
            best = 0.0
            for i in self.predecessors[j]:
                value = arrival[i] + lat[p[i]][pj]
                if value > best:
                    best = value
            arrival[j] = best
        return max(arrival)

    def main(self, p: list[int]) -> float:
        """The score without its latency term: w2 s_sup + w3 s_co + w4 s_event."""
        cut = math.fsum(self.edge_cost[e] for e, (i, j) in enumerate(self.inst.edges) if p[i] != p[j])
        return self.per_supervisor * len(set(p)) + cut

    def score(self, p: list[int]) -> float:
        return self.main(p) + self.w_latency * self.latency(p)

    def loads(self, p: list[int]) -> tuple[list[float], list[float]]:
        cpu, memory = [0.0] * self.m, [0.0] * self.m
        for i, u in enumerate(p):
            cpu[u] += self.cpu[i]
            memory[u] += self.memory[i]
        return cpu, memory

    def overloads(self, u: int, cpu: float, memory: float) -> int:
        """Violations of supervisor u at these loads (0, 1 or 2)."""
        return (cpu > self.cpu_limit[u]) + (memory > self.memory_limit[u])

    def violations(self, p: list[int]) -> int:
        cpu, memory = self.loads(p)
        return sum(self.overloads(u, cpu[u], memory[u]) for u in range(self.m))


def budget(iterations: int | None, time_limit: float | None) -> Budget:
    """The run's budget: ``iterations`` steps; without an iteration budget the cap defaults to the paper's 1 s."""
    cap = time_limit if time_limit is not None else (PAPER_CAP if iterations is None else None)
    return Budget(time_limit=cap, max_steps=iterations)


_STOPPED_BY = {"max_steps": "iterations", "time_limit": "time"}
"""The words of ``stats.stopped_by`` for the reasons a :class:`Budget` records."""


def used_up(budget: Budget) -> str:
    """Why the run must stop before its next iteration (``iterations`` or ``time``), or empty.

    The iteration budget is tested first, then the clock; nothing is counted here: the caller adds
    one to ``budget.steps`` for every iteration it completes.
    """
    if budget.max_steps is not None and budget.steps >= budget.max_steps:
        budget.stopped = "max_steps"
    elif not budget.expired():
        return ""
    return _STOPPED_BY[budget.stopped]


# ------------------------------------------------------------------------------ hill climbing


def greedy_start(scorer: Scorer) -> list[int]:
    """The first placement without violations (else the one with fewer) of two greedy passes.

    Each pass puts every operator on the supervisor with the most free memory among those where
    it fits in cpu and memory (else the one with the most free memory); the first pass takes the
    operators in topological order, the second by decreasing memory, then cpu, demand.
    """
    topological = list(scorer.order)
    by_demand = sorted(range(scorer.n), key=lambda i: (-scorer.memory[i], -scorer.cpu[i], i))
    first = _worst_fit(scorer, topological)
    if not scorer.violations(first):
        return first
    second = _worst_fit(scorer, by_demand)
    return second if scorer.violations(second) < scorer.violations(first) else first


def _worst_fit(scorer: Scorer, order: list[int]) -> list[int]:
    free_cpu, free_memory = list(scorer.cpu_limit), list(scorer.memory_limit)
    p = [0] * scorer.n
    for i in order:
        fits = [u for u in range(scorer.m) if free_cpu[u] >= scorer.cpu[i] and free_memory[u] >= scorer.memory[i]]
        u = max(fits or range(scorer.m), key=lambda v: (free_memory[v], -v))
        p[i] = u
        free_cpu[u] -= scorer.cpu[i]
        free_memory[u] -= scorer.memory[i]
    return p


@dataclass
class Climb:
    """State of a hill climb: placement, loads, counts, violations and score terms."""

    scorer: Scorer
    p: list[int]
    cpu: list[float] = field(init=False)
    memory: list[float] = field(init=False)
    count: list[int] = field(init=False)
    violations: int = field(init=False)
    main: float = field(init=False)
    score: float = field(init=False)

    def __post_init__(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        s = self.scorer
        self.cpu, self.memory = s.loads(self.p)
        self.count = [0] * s.m
        for u in self.p:
            self.count[u] += 1
        self.violations = sum(s.overloads(u, self.cpu[u], self.memory[u]) for u in range(s.m))
        self.main = s.main(self.p)
        self.score = self.main + s.w_latency * s.latency(self.p)

    def _violations_after(self, changes: dict[int, tuple[float, float]]) -> int:
        """Violations when supervisors' loads change by (cpu, memory) deltas."""
        s, total = self.scorer, self.violations
        for u, (dc, dm) in changes.items():
            total += s.overloads(u, self.cpu[u] + dc, self.memory[u] + dm) - s.overloads(u, self.cpu[u], self.memory[u])
        return total

    def neighbours(self) -> list[tuple[float, int, tuple[str, int, int]]]:
        """(main score, violations, move) of every neighbour that might be accepted."""
        s, p = self.scorer, self.p
        limit = self.score * (1 - IMPROVEMENT) if self.score > 0 else self.score
        out: list[tuple[float, int, tuple[str, int, int]]] = []

        def consider(main: float, violations: int, move: tuple[str, int, int]) -> None:
            if violations <= self.violations and main < limit:
                out.append((main, violations, move))

        # 1. move one operator
        for i in range(s.n):
            u = p[i]
            for v in range(s.m):
                if v == u:
                    continue
                delta = s.per_supervisor * ((self.count[v] == 0) - (self.count[u] == 1))
                for e, k in s.incident[i]:
                    delta += s.edge_cost[e] * ((v != p[k]) - (u != p[k]))
                viol = self._violations_after({u: (-s.cpu[i], -s.memory[i]), v: (s.cpu[i], s.memory[i])})
                consider(self.main + delta, viol, ("move", i, v))
        # 2. swap two operators on different supervisors
        for i in range(s.n):
            for k in range(i + 1, s.n):
                u, v = p[i], p[k]
                if u == v:
                    continue
                delta = 0.0
                for e, j in s.incident[i]:
                    if j != k:
                        delta += s.edge_cost[e] * ((v != p[j]) - (u != p[j]))
                for e, j in s.incident[k]:
                    if j != i:
                        delta += s.edge_cost[e] * ((u != p[j]) - (v != p[j]))
                dc, dm = s.cpu[k] - s.cpu[i], s.memory[k] - s.memory[i]
                viol = self._violations_after({u: (dc, dm), v: (-dc, -dm)})
                consider(self.main + delta, viol, ("swap", i, k))
        # 3. move every operator of a supervisor
        between = [[0.0] * s.m for _ in range(s.m)]
        for e, (i, j) in enumerate(s.inst.edges):
            if p[i] != p[j]:
                between[p[i]][p[j]] += s.edge_cost[e]
        for u in range(s.m):
            if not self.count[u]:
                continue
            for v in range(s.m):
                if v == u:
                    continue
                delta = -s.per_supervisor * (self.count[v] > 0) - between[u][v] - between[v][u]
                viol = self._violations_after({u: (-self.cpu[u], -self.memory[u]), v: (self.cpu[u], self.memory[u])})
                consider(self.main + delta, viol, ("move_all", u, v))
        return out

    def apply(self, move: tuple[str, int, int], p: list[int] | None = None) -> list[int]:
        """The placement after ``move`` (a copy of ``p``, the current one by default)."""
        q = list(self.p if p is None else p)
        kind, a, b = move
        if kind == "move":
            q[a] = b
        elif kind == "swap":
            q[a], q[b] = q[b], q[a]
        else:
            q = [b if u == a else u for u in q]
        return q

    def step(self) -> bool:
        """Take the best acceptable neighbour; False at a local optimum."""
        s = self.scorer
        candidates = sorted(enumerate(self.neighbours()), key=lambda t: (t[1][0], t[0]))
        best: tuple[float, tuple[str, int, int]] | None = None
        for _, (main, _, move) in candidates:
            if best is not None and main >= best[0]:
                break  # s_lat >= 0: no later candidate can beat the best exact score
            score = main + s.w_latency * s.latency(self.apply(move))
            if score < self.score * (1 - IMPROVEMENT) and (best is None or score < best[0]):
                best = (score, move)
        if best is None:
            return False
        self.p = self.apply(best[1])
        self.refresh()
        return True


def climb(scorer: Scorer, start: list[int], budget: Budget) -> tuple[list[int], dict[str, Any]]:
    """Steepest descent from ``start`` until a local optimum or the end of ``budget`` (one step per iteration)."""
    state = Climb(scorer, list(start))
    while not (stopped_by := used_up(budget)):
        if not state.step():
            stopped_by = "local_optimum"
            break
        budget.steps += 1
    return state.p, {"steps": budget.steps, "stopped_by": stopped_by}


@dataclass(frozen=True)
class HillClimbingSettings:
    """Settings of ``hill_climbing``."""

    iterations: int | None = field(default=None, metadata={"ge": 0})
    """Most accepted steps; with it and no time limit no wall-clock cap applies. None: the paper's 1 s cap."""


def _hill_climbing(
    instance: LatencyInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: HillClimbingSettings = HillClimbingSettings(),
) -> HeuristicOutcome:
    scorer = Scorer(instance)
    p, stats = climb(scorer, greedy_start(scorer), budget(settings.iterations, time_limit))
    return _outcome(scorer, p, stats)


# -------------------------------------------------------------------------------- ant system


@dataclass(frozen=True)
class AntSystemSettings:
    """Settings of ``ant_system``: the iteration budget and the parameters section 4.3.2 names (the values are ours)."""

    iterations: int | None = field(default=None, metadata={"ge": 0})
    """Colonies to run (the exit conditions below still apply); with it and no time limit no wall-clock
    cap applies. None: the paper's 1 s cap."""
    ants: int = field(default=10, metadata={"ge": 0})
    """Ants per colony (iteration)."""
    alpha: float = field(default=1.0, metadata={"ge": 0})
    """Exponent of the pheromone in eq. (2)."""
    beta: float = field(default=2.0, metadata={"ge": 0})
    """Exponent of the a-priori heuristic eta in eq. (2)."""
    rho: float = field(default=0.5, metadata={"ge": 0})
    """Persistence of the pheromone in eq. (4): tau <- rho tau + deposits (Dorigo et al. 1996's 0.5)."""
    q: float = field(default=1.0, metadata={"ge": 0})
    """Q of eq. (4): ant k deposits Q / S_k on the edges of its placement."""
    p_init: float = field(default=1.0, metadata={"ge": 0})
    """Initial pheromone on every edge operator -> supervisor."""
    p_min: float = field(default=0.01, metadata={"ge": 0})
    """Pheromone floor of eq. (5)."""
    min_iterations: int = field(default=20, metadata={"ge": 0})
    """Colonies before the patience exit may end the run."""
    max_iterations: int = field(default=200, metadata={"ge": 0})
    """Most colonies when no iteration budget is given."""
    patience: int = field(default=20, metadata={"ge": 0})
    """Colonies without a better best ant that end the run (after ``min_iterations``)."""


def ant_system(
    scorer: Scorer, rng: random.Random, budget: Budget, params: AntSystemSettings
) -> tuple[list[int], dict[str, Any]]:
    """The ant system of eqs. (2)-(5) within ``budget`` (one step per colony); the best ant's placement.

    The colonies end with the budget, or by the exit conditions of ``params`` (``max_iterations``
    only without a step limit in ``budget``).
    """
    n, m = scorer.n, scorer.m
    tau = [[params.p_init] * m for _ in range(n)]
    # eta^beta depends only on the exponent of 2 in eq. (3), from -2 to 2
    eta_beta = {k: (2.0**k) ** params.beta for k in range(-2, 3)}
    best: tuple[float, list[int]] | None = None
    last_improvement = 0
    while not (stopped_by := used_up(budget)):
        iteration = budget.steps
        if budget.max_steps is None and iteration >= params.max_iterations:
            stopped_by = "max_iterations"
            break
        if iteration >= params.min_iterations and iteration - last_improvement >= params.patience:
            stopped_by = "patience"
            break
        deposits: list[tuple[float, list[int]]] = []
        for _ in range(params.ants):
            p = _construct(scorer, tau, eta_beta, params.alpha, rng)
            s_k = scorer.score(p) + PENALTY * scorer.violations(p)
            deposits.append((s_k, p))
            if best is None or s_k < best[0]:
                best = (s_k, p)
                last_improvement = iteration
        for i in range(n):
            row = tau[i]
            for u in range(m):
                row[u] *= params.rho
        for s_k, p in deposits:
            amount = params.q / max(s_k, 1e-12)
            for i, u in enumerate(p):
                tau[i][u] += amount
        for row in tau:
            for u in range(m):
                if row[u] < params.p_min:
                    row[u] = params.p_min
        budget.steps += 1
    if best is None:  # no iteration at all (a zero budget): one greedy ant-free placement
        return greedy_start(scorer), {"colonies": 0, "stopped_by": stopped_by}
    return best[1], {"colonies": budget.steps, "best_colony": last_improvement, "stopped_by": stopped_by}


def _construct(
    scorer: Scorer, tau: list[list[float]], eta_beta: dict[int, float], alpha: float, rng: random.Random
) -> list[int]:
    """One ant's placement: operators in a random order, supervisors drawn by eq. (2)."""
    n, m = scorer.n, scorer.m
    order = list(range(n))
    rng.shuffle(order)
    p = [-1] * n
    cpu, memory, count = [0.0] * m, [0.0] * m, [0] * m
    for i in order:
        near = {p[k] for k in scorer.neighbours[i] if p[k] >= 0}
        weights = []
        for u in range(m):
            exponent = (u in near) + (count[u] > 0)
            exponent -= cpu[u] + scorer.cpu[i] > scorer.cpu_limit[u]
            exponent -= memory[u] + scorer.memory[i] > scorer.memory_limit[u]
            t = tau[i][u] if alpha == 1.0 else tau[i][u] ** alpha
            weights.append(t * eta_beta[exponent])
        u = _roulette(weights, rng)
        p[i] = u
        cpu[u] += scorer.cpu[i]
        memory[u] += scorer.memory[i]
        count[u] += 1
    return p


def _roulette(weights: list[float], rng: random.Random) -> int:
    r = rng.random() * math.fsum(weights)
    acc = 0.0
    for u, w in enumerate(weights):
        acc += w
        if r < acc:
            return u
    return max(u for u, w in enumerate(weights) if w > 0)


def _ant_system(
    instance: LatencyInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: AntSystemSettings = AntSystemSettings(),
) -> HeuristicOutcome:
    scorer = Scorer(instance)
    p, stats = ant_system(scorer, random.Random(seed), budget(settings.iterations, time_limit), settings)
    return _outcome(scorer, p, stats)


# ------------------------------------------------------------------------------------ hybrid


@dataclass(frozen=True)
class HybridSettings(AntSystemSettings):
    """Settings of ``hybrid``: those of ``ant_system``; ``iterations`` N gives the ant system ceil(N/2)
    colonies and hill climbing at most floor(N/2) steps (a time cap is halved the same way)."""


def _hybrid(
    instance: LatencyInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: HybridSettings = HybridSettings(),
) -> HeuristicOutcome:
    scorer = Scorer(instance)
    whole = budget(settings.iterations, time_limit)
    left = whole.left()
    iterations = whole.max_steps
    first = Budget(
        time_limit=None if left is None else left / 2,
        max_steps=None if iterations is None else (iterations + 1) // 2,
    )
    p, ant_stats = ant_system(scorer, random.Random(seed), first, settings)
    second = Budget(time_limit=whole.left(), max_steps=None if iterations is None else iterations // 2)
    p, climb_stats = climb(scorer, p, second)
    stats = {
        "colonies": ant_stats["colonies"],
        "ant_stopped_by": ant_stats["stopped_by"],
        "steps": climb_stats["steps"],
        "stopped_by": climb_stats["stopped_by"],
    }
    return _outcome(scorer, p, stats)


# ------------------------------------------------------------------------------------- shared


def _outcome(scorer: Scorer, p: list[int], stats: dict[str, Any]) -> HeuristicOutcome:
    violations = scorer.violations(p)
    stats = {**stats, "violations": violations}
    message = "" if not violations else f"the best placement found violates {violations} capacity limit(s)"
    return HeuristicOutcome(solution_json(scorer.inst, p), scorer.score(p), stats, message)


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="hill_climbing",
        kinds=("latency",),
        run=_hill_climbing,
        description="Ecker et al.'s hill climbing: move, swap, move-all from a spread greedy start (1 s cap)",
        settings=HillClimbingSettings,
    ),
    Heuristic(
        name="ant_system",
        kinds=("latency",),
        run=_ant_system,
        description="Ecker et al.'s ant system (eqs. 2-5), pheromone floor, random operator order (1 s cap)",
        randomized=True,
        settings=AntSystemSettings,
    ),
    Heuristic(
        name="hybrid",
        kinds=("latency",),
        run=_hybrid,
        description="Ecker et al.'s hybrid: ant system, then hill climbing, half the budget each (1 s cap)",
        randomized=True,
        settings=HybridSettings,
    ),
)
