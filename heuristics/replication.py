"""Heuristics for ODRP (joint operator replication and placement, Cardellini et al. 2017).

The paper closes with "we plan to develop efficient heuristics to deal with large problem instances"
and offers the exact ODRP as the benchmark to judge them by. Three heuristics, all working on the
paper's decision (a multiset U_i of candidate nodes per operator) and scoring it with the paper's
utility F (eq. 21) through the incremental evaluator of :mod:`odrp.heuristics.replication_state`:

``odrp_greedy``
    1. *Replication*: each operator gets the fewest replicas k <= k_i that keep every replica's
       utilisation lambda_i / (k mu_i) at or below a target (``utilisation``, default 0.8); when no
       k <= k_i reaches it, k_i. An operator with a fixed latency gets one replica.
    2. *Placement*: operators with a single candidate node (pinned) first, then the others in
       topological order; the replicas of an operator one by one, each on the candidate node with
       room whose addition leaves the partial placement with the highest F, i.e. adds least to the
       SAW utility loss (response-time path, availability, cost, network metric). F of a partial
       placement counts the placed replicas only (streams with an unplaced end carry nothing) and
       takes an operator's latency at its target count. Ties go to the node with more replicas of
       already placed neighbours, then more free capacity, then the lower index.
    If the target counts do not fit, the greedy retries with the fewest stable counts.
    Deterministic (the seed is not used).

``odrp_local_search``
    From a start (``start``: ``greedy``, the default; ``random``; or a solution JSON), a
    first-improvement variable neighbourhood descent. Its neighbourhoods, scanned in a seeded random
    order and the next one only when the previous one holds no improving move:

    1. *add* one replica (of an operator below k_i, on a candidate node with room), *remove* one
       (keeping a stable count), *move* one to another candidate node;
    2. *swap* two replicas of different operators between their nodes;
    3. *swap two nodes*: every operator that may run on both exchanges its replicas there.

    A move is accepted when it raises F (by more than 1e-12 relative). F is flat over many moves:
    the response time moves only when *every* longest path shortens, availability only when the
    *last* replica leaves a lossy node or link. On such a plateau a move is also accepted when F
    stays equal and a plateau measure drops (the sum over operators of the longest path through
    them; the replicas and streams on lossy nodes and links, weighted by -log A): a lexicographic
    (F, measure) descent, so it cannot cycle. After a local optimum the search restarts
    (``restarts`` times, default 40) from the best placement found, perturbed by ruin and recreate
    (Schrimpf, Schneider, Stamm-Wilbrandt, Dueck, J. Comput. Phys. 159, 2000): ``ruin`` connected
    operators (default a third of them) lose every replica, each gets a random stable count (or
    keeps its own, with probability 1/2), and the greedy's insertion puts them back. That makes it
    an iterated local search (Lourenco, Martin, Stuetzle, Handbook of Metaheuristics, 2003).

``odrp_tabu``
    Tabu search (Glover, Taillard, de Werra, "A user's guide to tabu search", Ann. Oper. Res. 41,
    1993), the metaheuristic Nardelli, Cardellini, Grassi and Lo Presti apply to ODP in "Efficient
    Operator Placement for Distributed Data Stream Processing Applications" (IEEE TPDS 30(8), 2019).
    Our reading for ODRP: from the start (``start``, as above), each iteration takes the best admissible move
    of the local search's three neighbourhoods together (a seeded sample of at most ``sample``
    moves, default 100, when there are more), even when it lowers F; ties in F go to the lower
    plateau measure. The attributes (operator, node, direction) of a taken move are tabu for a
    random tenure in [``tenure_min``, ``tenure_max``] iterations (default 4-10): a replica taken
    off a node may not come back, one put on may not leave. The aspiration criterion admits a tabu
    move that beats the best F found; when every move is tabu, the one whose tabu status ends
    first is taken. ``iterations`` (default 300) bounds the search.

Settings: :class:`GreedySettings`, :class:`LocalSearchSettings` and :class:`TabuSettings`
(``--param NAME=VALUE``; the names above). Budgets: the searches honour ``time_limit`` (seconds)
and an evaluation budget (``max_evaluations``); the greedy construction and the recreate steps are
never cut short and count apart, in ``construction_evaluations``. The iteration budgets above make
the result deterministic for a seed on any machine as long as the time limit does not cut the
search short (``stats.stopped`` says which budget ended it). Each heuristic reports F of its best
placement as computed by the incremental evaluator; :func:`odrp.run.judge` checks it against
the evaluator.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Literal

from odrp.core.budget import Budget
from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.heuristics.replication_moves import LEVELS, Move, attributes, neighbourhood, realise, shifted
from odrp.heuristics.replication_state import PlacementState, Tables
from odrp.kinds.replication.instance import OdrpInstance, Placement, parse_solution, solution_json

IMPROVEMENT = 1e-12
"""A move improves F when it raises it by more than this, relative to max(1, |F|)."""


# ------------------------------------------------------------------------------------ settings


@dataclass(frozen=True)
class GreedySettings:
    """Settings of ``odrp_greedy``."""

    utilisation: float = field(default=0.8, metadata={"gt": 0})
    """Target utilisation lambda_i / (k mu_i) of a replica: each operator gets the fewest replicas
    k <= k_i that reach it (k_i when none does)."""


@dataclass(frozen=True)
class SearchSettings(GreedySettings):
    """What ``odrp_local_search`` and ``odrp_tabu`` share: their start and their evaluation budget."""

    start: Literal["greedy", "random"] | dict[str, Any] = "greedy"
    """The start: the greedy placement, a random feasible one (seeded), or a solution JSON. When the
    chosen construction finds no placement, the other one is tried."""
    max_evaluations: int | None = field(default=None, metadata={"ge": 0})
    """Evaluations of F the search may spend (None: no limit); the constructions (greedy, recreate)
    count apart and are never cut short."""


@dataclass(frozen=True)
class LocalSearchSettings(SearchSettings):
    """Settings of ``odrp_local_search``."""

    restarts: int | None = field(default=40, metadata={"ge": 0})
    """Ruin-and-recreate restarts from the best placement after the first descent (None: until the time
    limit or ``max_evaluations`` ends the search, 40 when there is neither; an exact run's race uses it
    so, :data:`odrp.kinds.replication.kind.KIND`'s ``race_search``)."""
    ruin: int | None = field(default=None, metadata={"ge": 1})
    """Connected operators a restart takes off and puts back (None: a third of them, at least 2)."""


@dataclass(frozen=True)
class TabuSettings(SearchSettings):
    """Settings of ``odrp_tabu``."""

    iterations: int = field(default=300, metadata={"ge": 0})
    """Iterations of the tabu search (one move each)."""
    sample: int = field(default=100, metadata={"ge": 1})
    """Moves evaluated per iteration at most (a seeded sample when the neighbourhood is larger)."""
    tenure_min: int = field(default=4, metadata={"ge": 0})
    """Least tabu tenure, in iterations (each attribute draws its tenure uniformly)."""
    tenure_max: int = field(default=10, metadata={"ge": 0})
    """Largest tabu tenure, in iterations (raised to ``tenure_min`` when below it)."""


# ------------------------------------------------------------------------------------- effort


@dataclass
class Effort:
    """What a run spends: its :class:`~odrp.core.budget.Budget`, one step per evaluation of F in the
    search, and the evaluations of the constructions (greedy, recreate), which no budget cuts
    short (they would leave a partial placement)."""

    budget: Budget = field(default_factory=Budget)
    construction: int = 0

    def stats(self) -> dict[str, Any]:
        """Evaluations spent and which limit ended the search (``max_evaluations``, ``time_limit``
        or ``completed``)."""
        stopped = {"max_steps": "max_evaluations"}.get(self.budget.stopped, self.budget.stopped)
        return {
            "evaluations": self.budget.steps,
            "construction_evaluations": self.construction,
            "stopped": stopped or "completed",
        }


def _better(new: float, old: float) -> bool:
    return new > old + IMPROVEMENT * max(1.0, abs(old))


# ---------------------------------------------------------------------------------------- greedy


def target_replicas(inst: OdrpInstance, utilisation: float) -> list[int]:
    """The fewest replicas that keep lambda_i / (k mu_i) <= ``utilisation`` (k_i when none does)."""
    out = []
    for i in range(inst.n_operators):
        mu = inst.service_rate[i]
        if mu is None:
            out.append(1)
            continue
        k_max = inst.max_replicas[i]
        out.append(next((k for k in range(1, k_max + 1) if inst.arrival_rate[i] / (k * mu) <= utilisation), k_max))
    return out


def fewest_stable_replicas(inst: OdrpInstance) -> list[int] | None:
    counts = [inst.replica_counts(i) for i in range(inst.n_operators)]
    return None if any(not c for c in counts) else [c[0] for c in counts]


def placement_order(inst: OdrpInstance) -> list[int]:
    """Pinned operators (one candidate node) first, then the others in topological order."""
    pinned = [i for i in inst.topological_order if len(inst.candidates[i]) == 1]
    return pinned + [i for i in inst.topological_order if len(inst.candidates[i]) > 1]


def insert_replicas(state: PlacementState, operators: list[int], replicas: dict[int, int], effort: Effort) -> bool:
    """Add ``replicas[i]`` replicas of each operator (in the given order) one by one, each on the
    candidate node with room that leaves F of the partial placement highest; False if one fits
    nowhere. The greedy's placement step, and the recreate step of the local search's restarts."""
    t = state.t
    for i in operators:
        state.planned[i] = replicas[i]
    for i in operators:
        for _ in range(replicas[i] - state.total[i]):
            best_key, best_node = None, None
            for v in t.candidates[i]:
                if not state.fits(i, v):
                    continue
                undo = state.apply([(i, shifted(state.counts[i], v, 1))])
                f = state.utility()
                effort.construction += 1
                state.revert(undo)
                together = sum(state.counts[j].get(v, 0) for j in t.neighbours[i])
                key = (round(f, 12), together, t.capacity[v] - state.load[v], -v)
                if best_key is None or key > best_key:
                    best_key, best_node = key, v
            if best_node is None:
                return False
            state.set_operator(i, shifted(state.counts[i], best_node, 1))
        state.planned[i] = 0
    return True


def greedy_state(tables: Tables, replicas: list[int], effort: Effort) -> PlacementState | None:
    """Place ``replicas[i]`` replicas of every operator one by one (see the module docstring)."""
    state = PlacementState(tables)
    if not insert_replicas(state, placement_order(tables.inst), dict(enumerate(replicas)), effort):
        return None
    return state if state.complete() else None


def greedy(tables: Tables, utilisation: float, effort: Effort) -> tuple[PlacementState | None, str]:
    """The greedy placement at the target utilisation, else at the fewest stable counts."""
    inst = tables.inst
    fewest = fewest_stable_replicas(inst)
    if fewest is None:
        return None, "some operator has no stable replica count within max_replicas"
    state = greedy_state(tables, target_replicas(inst, utilisation), effort)
    if state is not None:
        return state, ""
    state = greedy_state(tables, fewest, effort)
    if state is not None:
        return state, "target replica counts did not fit; placed the fewest stable counts"
    return None, "greedy found no placement within capacity"


# ------------------------------------------------------------------------------- random start


def random_state(tables: Tables, rng: random.Random, attempts: int = 50) -> PlacementState | None:
    """A random feasible placement: random stable counts on random candidate nodes with room."""
    inst = tables.inst
    for _ in range(attempts):
        state = PlacementState(tables)
        order = list(range(tables.n_ops))
        rng.shuffle(order)
        ok = True
        for i in order:
            k = rng.choice(inst.replica_counts(i))
            for _ in range(k):
                room = [v for v in tables.candidates[i] if state.fits(i, v)]
                if not room:
                    ok = False
                    break
                state.set_operator(i, shifted(state.counts[i], rng.choice(room), 1))
            if not ok:
                break
        if ok and state.complete():
            return state
    return None


# ------------------------------------------------------------------------------- local search


def descend(state: PlacementState, rng: random.Random, effort: Effort) -> float:
    """First-improvement descent over the moves of :data:`LEVELS`, in that order; a move is taken
    when it raises F, or leaves F flat and lowers the plateau measure (see PlacementState)."""
    f = state.utility()
    flat = state.plateau_measure()
    while True:
        improved = False
        for generate in LEVELS:
            moves = list(generate(state))
            rng.shuffle(moves)
            for move in moves:
                if not effort.budget.spend():
                    return f
                undo = state.apply(realise(state, move))
                g = state.utility()
                if _better(g, f):
                    f, flat, improved = g, state.plateau_measure(), True
                    break
                if not _better(f, g) and flat > 0:
                    h = state.plateau_measure()
                    if h < flat - IMPROVEMENT * flat:
                        f, flat, improved = max(f, g), h, True
                        break
                state.revert(undo)
            if improved:
                break
        if not improved:
            return f


def ruin_and_recreate(state: PlacementState, rng: random.Random, size: int, effort: Effort) -> bool:
    """Take every replica of ``size`` connected operators off (a random movable operator and,
    breadth first in random order, its neighbours in the DAG), give each a random stable replica
    count (its current one with probability 1/2) and put them back with the greedy insertion.
    False when they no longer fit (the state is then partial and must be dropped)."""
    t = state.t
    movable = [i for i in range(t.n_ops) if len(t.candidates[i]) > 1 or t.max_replicas[i] > 1]
    if not movable:
        return True
    ruined = [rng.choice(movable)]
    frontier = list(ruined)
    while frontier and len(ruined) < size:
        i = frontier.pop(0)
        around = [j for j in t.neighbours[i] if j not in ruined and j in movable]
        rng.shuffle(around)
        for j in around[: size - len(ruined)]:
            ruined.append(j)
            frontier.append(j)
    counts = {}
    for i in ruined:
        stable = [k for k in range(1, t.max_replicas[i] + 1) if t.stable[i][k]]
        counts[i] = state.total[i] if rng.random() < 0.5 else rng.choice(stable)
        state.set_operator(i, {})
    order = [i for i in t.inst.topological_order if i in counts]
    return insert_replicas(state, order, counts, effort)


def iterated_local_search(
    start: PlacementState, rng: random.Random, effort: Effort, restarts: int | None, ruin: int
) -> tuple[Placement, dict[str, Any]]:
    state = start
    best_f = descend(state, rng, effort)
    best = state.placement()
    descents, improvements, last = 1, 0, 0
    for restart in itertools.count(1) if restarts is None else range(1, restarts + 1):
        if effort.budget.stopped:
            break
        state = PlacementState(state.t, best)
        if not ruin_and_recreate(state, rng, ruin, effort):
            continue
        f = descend(state, rng, effort)
        descents += 1
        if _better(f, best_f):
            best_f, best = f, state.placement()
            improvements, last = improvements + 1, restart
    return best, {"descents": descents, "restart_improvements": improvements, "last_improvement": last}


# -------------------------------------------------------------------------------- tabu search


def tabu_search(
    start: PlacementState,
    rng: random.Random,
    effort: Effort,
    iterations: int,
    sample: int,
    tenure: tuple[int, int],
) -> tuple[Placement, dict[str, Any]]:
    state = start
    f = state.utility()
    best_f, best = f, state.placement()
    plateaus = state.plateau_measure() > 0  # ties in F are broken by the plateau measure
    tabu_until: dict[tuple[int, int, int], int] = {}
    done = 0
    for it in range(iterations):
        moves = neighbourhood(state)
        if len(moves) > sample:
            moves = rng.sample(moves, sample)
        chosen: tuple[float, float, Move, list[tuple[int, int, int]]] | None = None
        oldest: tuple[int, float, Move, list[tuple[int, int, int]]] | None = None
        for move in moves:
            if not effort.budget.spend():
                break
            attrs = attributes(move)
            # a tabu move reverses a recent one: it puts back what left, or takes off what came
            expiry = max((tabu_until.get((i, u, -d), -1) for i, u, d in attrs), default=-1)
            undo = state.apply(realise(state, move))
            g = state.utility()
            if expiry >= it and not _better(g, best_f):
                if oldest is None or (expiry, -g) < (oldest[0], -oldest[1]):
                    oldest = (expiry, g, move, attrs)
            elif chosen is None or _better(g, chosen[0]):
                chosen = (g, state.plateau_measure() if plateaus else 0.0, move, attrs)
            elif plateaus and not _better(chosen[0], g):
                h = state.plateau_measure()
                if h < chosen[1]:
                    chosen = (g, h, move, attrs)
            state.revert(undo)
        if chosen is None and oldest is not None:  # every move is tabu: the one freed soonest
            chosen = (oldest[1], 0.0, oldest[2], oldest[3])
        if chosen is None:
            break
        f, _, move, attrs = chosen
        state.apply(realise(state, move))
        for i, u, d in attrs:
            tabu_until[(i, u, d)] = it + rng.randint(*tenure)
        done = it + 1
        if _better(f, best_f):
            best_f, best = f, state.placement()
        if effort.budget.stopped:
            break
    return best, {"iterations": done}


# ------------------------------------------------------------------------------ the entry points


def _outcome(tables: Tables, placement: Placement, effort: Effort, stats: dict[str, Any], message: str = ""):
    final = PlacementState(tables, placement)
    return HeuristicOutcome(
        solution=solution_json(tables.inst, placement),
        objective=final.utility(),
        stats={**stats, **effort.stats(), "runtime_s": effort.budget.elapsed()},
        message=message,
    )


def _failure(message: str, effort: Effort) -> HeuristicOutcome:
    return HeuristicOutcome(solution=None, objective=None, stats=effort.stats(), message=message)


def _start_state(
    tables: Tables, settings: SearchSettings, rng: random.Random, effort: Effort
) -> tuple[PlacementState | None, str]:
    start = settings.start
    if isinstance(start, dict):
        placement = parse_solution(tables.inst, start, "start")
        state = PlacementState(tables, placement)
        return (state, "") if state.complete() else (None, "the start placement is infeasible")
    if fewest_stable_replicas(tables.inst) is None:
        return None, "some operator has no stable replica count within max_replicas"

    def build(kind: str) -> tuple[PlacementState | None, str]:
        if kind == "greedy":
            return greedy(tables, settings.utilisation, effort)
        state = random_state(tables, rng)
        return state, "" if state is not None else "no random placement fitted within capacity"

    other = "random" if start == "greedy" else "greedy"
    state, message = build(start)
    if state is None:  # the other construction may still find room
        state, _ = build(other)
        message += f"; started from a {other} placement" if state is not None else ""
    return state, message


def run_greedy(
    instance: OdrpInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: GreedySettings = GreedySettings(),
) -> HeuristicOutcome:
    """``odrp_greedy`` (module docstring); deterministic, the seed is not used."""
    effort = Effort(Budget(time_limit))
    tables = Tables(instance)
    state, message = greedy(tables, settings.utilisation, effort)
    if state is None:
        return _failure(message, effort)
    return _outcome(tables, state.placement(), effort, {"utilisation": settings.utilisation}, message)


def run_local_search(
    instance: OdrpInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: LocalSearchSettings = LocalSearchSettings(),
) -> HeuristicOutcome:
    """``odrp_local_search`` (module docstring)."""
    effort = Effort(Budget(time_limit, settings.max_evaluations))
    tables = Tables(instance)
    rng = random.Random(seed)
    state, message = _start_state(tables, settings, rng, effort)
    if state is None:
        return _failure(message, effort)
    start_f = state.utility()
    size = max(2, -(-tables.n_ops // 3)) if settings.ruin is None else settings.ruin
    restarts = settings.restarts
    if restarts is None and time_limit is None and settings.max_evaluations is None:
        restarts = LocalSearchSettings.restarts  # nothing else would end the search
    best, stats = iterated_local_search(state, rng, effort, restarts, size)
    return _outcome(tables, best, effort, {"start_objective": start_f, **stats}, message)


def run_tabu(
    instance: OdrpInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: TabuSettings = TabuSettings(),
) -> HeuristicOutcome:
    """``odrp_tabu`` (module docstring)."""
    effort = Effort(Budget(time_limit, settings.max_evaluations))
    tables = Tables(instance)
    rng = random.Random(seed)
    state, message = _start_state(tables, settings, rng, effort)
    if state is None:
        return _failure(message, effort)
    start_f = state.utility()
    tenure = (settings.tenure_min, max(settings.tenure_min, settings.tenure_max))
    best, stats = tabu_search(state, rng, effort, settings.iterations, settings.sample, tenure)
    return _outcome(tables, best, effort, {"start_objective": start_f, **stats}, message)


HEURISTICS: tuple[Heuristic, ...] = (
    Heuristic(
        name="odrp_greedy",
        kinds=("odrp",),
        run=run_greedy,
        settings=GreedySettings,
        description="replicas to a target utilisation (--param utilisation=0.8), then each replica on the node "
        "that lowers F least",
    ),
    Heuristic(
        name="odrp_local_search",
        kinds=("odrp",),
        run=run_local_search,
        settings=LocalSearchSettings,
        description="add/remove/move/swap replicas, swap nodes, on improvement of F from the greedy; "
        "ruin-and-recreate restarts (--param restarts=40|none ruin=N start=greedy|random)",
        randomized=True,
    ),
    Heuristic(
        name="odrp_tabu",
        kinds=("odrp",),
        run=run_tabu,
        settings=TabuSettings,
        description="tabu search over add/remove/move/swap moves (Nardelli et al. 2019) "
        "(--param iterations=300 sample=100)",
        randomized=True,
    ),
)
