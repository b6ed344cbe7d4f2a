"""Network coordinates by spring relaxation (Ecker et al., section 3.4, Algorithms 1 and 2).

Every supervisor keeps an estimated position in a (three-dimensional) latency space, in which the
Euclidean distance between two supervisors estimates their latency. Periodically each supervisor

1. takes its peer set P (Algorithm 1, line 1) and the peers' current positions (line 2),
2. measures its latency to every peer (line 3; here: a noisy measurement function),
3. relaxes its own position with the peers held fixed (lines 4-15): m = sum of the spring forces
   of Algorithm 2, p_est <- p_est + m, until |m| <= eps_min or 100 steps;
4. renews its peers: the ``keep`` (i) peers with the lowest measured latency stay, ``peers - keep``
   (j) new random peers join, so that there are ``peers`` (n) again (the paper's "n random peers",
   "only the i peers with the lowest latency are kept, and j new random peers are selected").

Algorithm 2, the force of a peer p on the estimate: d = p_p - p_est, f = k log(|d| / l_p) with l_p the
measured latency, return f d / |d|: a peer estimated too far away pulls (|d| > l_p, f > 0), one too
close pushes; the logarithm keeps far-off peers from dominating.

Readings where the paper is vague (our choices, in :class:`SpringSettings`): the spring constant k
(0.2), eps_min (1e-3), the number of rounds (every supervisor updates once per round, in a random
order per round: the paper's "slightly randomized" intervals), initial positions uniform in a cube
of the median measured latency (the paper: "randomized"), and, when two positions coincide
(|d| = 0), a random unit direction with |d| taken as 1e-9 (the force then pushes them apart).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Point = list[float]

MAX_STEPS = 100
"""Algorithm 1, line 6: at most 100 relaxation steps per update."""


@dataclass(frozen=True)
class SpringSettings:
    """Parameters of the estimation (the paper names them but gives no values)."""

    dimensions: int = 3
    peers: int = 5
    """n: peers per supervisor (all other supervisors when there are fewer)."""
    keep: int = 3
    """i: peers with the lowest latency kept after each update; j = n - i are renewed at random."""
    spring: float = 0.2
    """k of Algorithm 2."""
    eps_min: float = 1e-3
    """epsilon_min of Algorithm 1: stop relaxing when a step moves less than this."""
    rounds: int = 60
    """Periodic updates per supervisor."""


def spring_force(
    peer: Sequence[float], estimate: Sequence[float], measured: float, spring: float, rng: random.Random
) -> Point:
    """Algorithm 2: the movement that peer ``peer`` (at its position) asks of ``estimate``."""
    d = [a - b for a, b in zip(peer, estimate, strict=True)]
    norm = math.hypot(*d)
    if norm == 0.0:
        d = _random_unit(len(d), rng)
        norm = 1e-9
    else:
        d = [x / norm for x in d]
    f = spring * math.log(norm / measured)
    return [x * f for x in d]


def relax(
    estimate: Sequence[float],
    peers: Sequence[tuple[Sequence[float], float]],
    settings: SpringSettings,
    rng: random.Random,
) -> Point:
    """Algorithm 1, lines 4-16: move ``estimate`` under the springs of ``(position, latency)`` peers."""
    p_est = list(estimate)
    for _ in range(MAX_STEPS):
        m = [0.0] * len(p_est)
        for position, measured in peers:
            f = spring_force(position, p_est, measured, settings.spring, rng)
            m = [a + b for a, b in zip(m, f, strict=True)]
        p_est = [a + b for a, b in zip(p_est, m, strict=True)]
        if math.hypot(*m) <= settings.eps_min:
            break
    return p_est


def estimate_coordinates(
    n: int,
    measure: Callable[[int, int], float],
    *,
    seed: int = 0,
    settings: SpringSettings = SpringSettings(),
) -> list[Point]:
    """Positions of ``n`` supervisors from repeated noisy measurements ``measure(u, v)`` (ms, > 0).

    Every round, every supervisor (in a random order) runs Algorithm 1 against its peer set, then
    renews its peers. Deterministic for a given seed and measurement function.
    """
    rng = random.Random(seed)
    if n == 1:
        return [[0.0] * settings.dimensions]
    n_peers = min(settings.peers, n - 1)
    n_keep = min(settings.keep, n_peers)
    scale = _median([measure(u, v) for u in range(n) for v in range(n) if u != v])
    positions = [[rng.uniform(0.0, scale) for _ in range(settings.dimensions)] for _ in range(n)]
    peer_sets = [rng.sample([v for v in range(n) if v != u], n_peers) for u in range(n)]
    for _ in range(settings.rounds):
        order = list(range(n))
        rng.shuffle(order)
        for u in order:
            measured = {v: measure(u, v) for v in peer_sets[u]}
            springs = [(positions[v], measured[v]) for v in peer_sets[u]]
            positions[u] = relax(positions[u], springs, settings, rng)
            peer_sets[u] = renew_peers(u, measured, n, n_keep, rng)
    return positions


def renew_peers(u: int, measured: dict[int, float], n: int, keep: int, rng: random.Random) -> list[int]:
    """Keep the ``keep`` peers of u with the lowest measured latency, draw the rest anew at random
    from the other supervisors (the dropped ones included), so that u has as many peers again."""
    kept = sorted(measured, key=lambda v: (measured[v], v))[:keep]
    others = [v for v in range(n) if v != u and v not in kept]
    return kept + rng.sample(others, len(measured) - len(kept))


def noisy_measurements(latency: Sequence[Sequence[float]], noise: float, seed: int) -> Callable[[int, int], float]:
    """A measurement function: the true latency times (1 + noise * N(0, 1)), at least 5% of it."""
    rng = random.Random(seed)

    def measure(u: int, v: int) -> float:
        true = latency[u][v]
        return true * max(0.05, 1.0 + noise * rng.gauss(0.0, 1.0))

    return measure


def distance_matrix(points: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[math.dist(p, q) for q in points] for p in points]


def _random_unit(dimensions: int, rng: random.Random) -> Point:
    v = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.hypot(*v) or 1.0
    return [x / norm for x in v]


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
