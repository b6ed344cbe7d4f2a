"""The paper's mapping methods on pathmap instances: the heuristics, the exhaustive reference, the bound.

Asaduzzaman & Maheswaran, section 4. All but the bound run the diffusing computation of
:mod:`odrp.heuristics.pathmap_diffusion` on the instance's network and report, beside the cost of the
cheapest map the delivery node received, the number of map messages (``stats.map_messages``):

- ``least_cost_map``: Algorithm 1 with LeastCostMap pruning (4.1.1), every link a neighbour;
- ``annealed_least_cost_map``: pruning relaxed with probability ``anneal_start * exp(-anneal_rate *
  prefix length)`` (4.1.2); seeded;
- ``random_neighbor``: each map extended to ``k`` random eligible neighbours (4.1.3); seeded. With
  LeastCostMap's pruning by default (``least_cost=false`` turns it off): the paper reports fewer
  messages than LeastCostMap with k = 1, and without pruning the number of maps still grows
  exponentially with the chain (measured: 10^6 messages and more on 60 servers);
- ``process_map2``: the bi-modal variant (Algorithm 3): LeastCostMap over dedicated links, plus public
  links to at most ``public_fanout`` servers hosting the next service;
- ``exhaustive_map``: Algorithm 1 as written, no pruning: exact when it completes (then its bound is its
  cost and its status ``optimal``; no map at all proves infeasibility); ``max_messages`` caps it;
- ``multistage_bound``: the paper's lower bound (section 4.2, :mod:`odrp.heuristics.pathmap_bound`). It
  reports the bound in the Result's ``bound``; when the bound's own multistage path is a feasible
  mapping of that cost it returns it (``optimal``), when no path exists the instance is proven
  ``infeasible``, and otherwise it returns no solution and the status is ``error`` with a message
  saying it is a bound only (the Result vocabulary has no "bound only" status).

Every method but the bound has the setting ``max_messages`` (a safety budget) and honours
``time_limit``; an incomplete run says so in its message and in ``stats.complete``. Each method's
settings are a frozen dataclass (``--param NAME=VALUE``).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.heuristics.pathmap_bound import multistage_bound as bound_of
from odrp.heuristics.pathmap_diffusion import ChainTask, Channel, Diffusion, MapNetwork, Policy, diffuse
from odrp.kinds.pathmap.instance import PathmapInstance, solution_json

KINDS = ("pathmap",)


@dataclass(frozen=True)
class LeastCostMapSettings:
    """Settings of ``least_cost_map``; the other diffusing methods extend them."""

    max_messages: int = field(default=1_000_000, metadata={"ge": 1})
    """Map messages after which the diffusing computation stops, incomplete (a safety budget)."""


@dataclass(frozen=True)
class ExhaustiveMapSettings(LeastCostMapSettings):
    """Settings of ``exhaustive_map``: its message budget (a run cut short proves no bound)."""


@dataclass(frozen=True)
class AnnealedLeastCostMapSettings(LeastCostMapSettings):
    """Settings of ``annealed_least_cost_map``: a map LeastCostMap would prune still goes on with
    probability ``anneal_start * exp(-anneal_rate * prefix length)``."""

    anneal_start: float = field(default=0.5, metadata={"ge": 0})
    """Probability factor of the annealing at prefix length 0."""
    anneal_rate: float = field(default=0.5, metadata={"ge": 0})
    """Decay of that probability per placed component."""


@dataclass(frozen=True)
class RandomNeighborSettings(LeastCostMapSettings):
    """Settings of ``random_neighbor``."""

    k: int = field(default=2, metadata={"ge": 1})
    """Neighbours each extended map is sent to, drawn at random among those whose link carries it."""
    least_cost: bool = True
    """Keep LeastCostMap's pruning (without it the number of maps grows exponentially with the chain)."""


@dataclass(frozen=True)
class ProcessMap2Settings(LeastCostMapSettings):
    """Settings of ``process_map2``."""

    public_fanout: int = field(default=3, metadata={"ge": 0})
    """Most servers hosting the next service a map is sent to over public links (the paper's "small subset")."""


def network(inst: PathmapInstance) -> MapNetwork:
    """The map managers' view of an instance: its links from both ends, and the service hosts."""
    channels: list[dict[int, list[Channel]]] = [{} for _ in inst.servers]
    dedicated: list[set[int]] = [set() for _ in inst.servers]
    public: list[set[int]] = [set() for _ in inst.servers]
    for link in inst.links:
        channel = Channel(link.kind, link.bandwidth, link.cost, link.delay)
        for a, b in ((link.u, link.v), (link.v, link.u)):
            channels[a].setdefault(b, []).append(channel)
            (dedicated if link.kind == "dedicated" else public)[a].add(b)
    return MapNetwork(
        capacity=inst.capacity,
        services=inst.services,
        channels=[{k: tuple(cs) for k, cs in c.items()} for c in channels],
        dedicated=[tuple(sorted(s)) for s in dedicated],
        public=[tuple(sorted(s)) for s in public],
        hosts=inst.hosts,
    )


def chain(inst: PathmapInstance) -> ChainTask:
    return ChainTask(inst.source, inst.sink, inst.component_service, inst.cpu, inst.bandwidth, inst.max_null)


def run_policy(
    inst: PathmapInstance,
    policy: Policy,
    *,
    seed: int,
    time_limit: float | None,
    max_messages: int | None,
) -> Diffusion:
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    return diffuse(
        network(inst), chain(inst), policy, rng=random.Random(seed), max_messages=max_messages, deadline=deadline
    )


def outcome(inst: PathmapInstance, run: Diffusion, *, exact: bool = False) -> HeuristicOutcome:
    """The cheapest received map as a solution, with the message count (and a bound if ``exact``)."""
    stats = {
        "map_messages": run.messages,
        "feasible_maps": len(run.maps),
        "complete": run.complete,
        "last_arrival_ms": run.last_arrival_ms,
    }
    bound = (run.best.cost if run.best else math.inf) if exact and run.complete else None
    best = run.best
    if best is None:
        message = "no feasible map reached the delivery node" + (f" ({run.reason})" if run.reason else "")
        return HeuristicOutcome(None, None, stats, message, bound)
    solution = solution_json(inst, best.nodes, best.paths)
    return HeuristicOutcome(solution, best.cost, stats, run.reason, bound)


def least_cost_map(
    instance: PathmapInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: LeastCostMapSettings = LeastCostMapSettings(),
) -> HeuristicOutcome:
    policy = Policy(prune="least_cost")
    run = run_policy(instance, policy, seed=seed, time_limit=time_limit, max_messages=settings.max_messages)
    return outcome(instance, run)


def annealed_least_cost_map(
    instance: PathmapInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: AnnealedLeastCostMapSettings = AnnealedLeastCostMapSettings(),
) -> HeuristicOutcome:
    policy = Policy(prune="annealed", anneal_start=settings.anneal_start, anneal_rate=settings.anneal_rate)
    run = run_policy(instance, policy, seed=seed, time_limit=time_limit, max_messages=settings.max_messages)
    return outcome(instance, run)


def random_neighbor(
    instance: PathmapInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: RandomNeighborSettings = RandomNeighborSettings(),
) -> HeuristicOutcome:
    policy = Policy(prune="least_cost" if settings.least_cost else "none", random_neighbours=settings.k)
    run = run_policy(instance, policy, seed=seed, time_limit=time_limit, max_messages=settings.max_messages)
    return outcome(instance, run)


def process_map2(
    instance: PathmapInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: ProcessMap2Settings = ProcessMap2Settings(),
) -> HeuristicOutcome:
    policy = Policy(prune="least_cost", bimodal=True, public_fanout=settings.public_fanout)
    run = run_policy(instance, policy, seed=seed, time_limit=time_limit, max_messages=settings.max_messages)
    return outcome(instance, run)


def exhaustive_map(
    instance: PathmapInstance,
    *,
    seed: int = 0,
    time_limit: float | None = None,
    settings: ExhaustiveMapSettings = ExhaustiveMapSettings(),
) -> HeuristicOutcome:
    run = run_policy(instance, Policy(), seed=seed, time_limit=time_limit, max_messages=settings.max_messages)
    return outcome(instance, run, exact=True)


def multistage_bound(instance: PathmapInstance, *, seed: int = 0, time_limit: float | None = None) -> HeuristicOutcome:
    result = bound_of(instance)
    stats = {"bound": result.bound if math.isfinite(result.bound) else None}
    if result.optimal_paths is not None and result.nodes is not None:
        solution = solution_json(instance, result.nodes, result.optimal_paths)
        return HeuristicOutcome(solution, result.bound, stats, "the bound's multistage path is feasible", result.bound)
    if not math.isfinite(result.bound):
        return HeuristicOutcome(None, None, stats, "no multistage path even with bandwidth relaxed", result.bound)
    message = f"bound only: lower bound {result.bound:g}; its multistage path violates bandwidth or summed capacity"
    return HeuristicOutcome(None, None, stats, message, result.bound)


def _declare(name: str, run: Any, description: str, settings: type | None, randomized: bool = False) -> Heuristic:
    return Heuristic(name=name, kinds=KINDS, run=run, description=description, randomized=randomized, settings=settings)


HEURISTICS: tuple[Heuristic, ...] = (
    _declare(
        "least_cost_map",
        least_cost_map,
        "LeastCostMap: diffusing computation with least-cost pruning (sec. 4.1.1)",
        LeastCostMapSettings,
    ),
    _declare(
        "annealed_least_cost_map",
        annealed_least_cost_map,
        "AnnealedLeastCostMap: pruning relaxed with probability falling exponentially in prefix length (4.1.2)",
        AnnealedLeastCostMapSettings,
        randomized=True,
    ),
    _declare(
        "random_neighbor",
        random_neighbor,
        "RandomNeighbor: each map extended to k random neighbours (4.1.3)",
        RandomNeighborSettings,
        randomized=True,
    ),
    _declare(
        "process_map2",
        process_map2,
        "ProcessMap2: bi-modal LeastCostMap, dedicated then a few public links (Alg. 3)",
        ProcessMap2Settings,
    ),
    _declare(
        "exhaustive_map",
        exhaustive_map,
        "Algorithm 1 without pruning: exact reference that counts map messages",
        ExhaustiveMapSettings,
    ),
    _declare(
        "multistage_bound",
        multistage_bound,
        "the paper's lower bound: bandwidth relaxed, multistage least-cost path",
        None,
    ),
)
