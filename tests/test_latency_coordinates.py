"""Network coordinates by spring relaxation (Algorithms 1 and 2) reproduce a known geometry."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from odrp.kinds.latency.coordinates import (
    SpringSettings,
    distance_matrix,
    estimate_coordinates,
    noisy_measurements,
    relax,
    renew_peers,
    spring_force,
)


def test_force_of_algorithm_2_by_hand():
    rng = random.Random(0)
    # peer 2 units away along x, measured latency 1: too far, pulled towards it by k log(2 / 1)
    f = spring_force([2.0, 0.0, 0.0], [0.0, 0.0, 0.0], 1.0, 0.5, rng)
    assert f == pytest.approx([0.5 * math.log(2.0), 0.0, 0.0], rel=1e-15)
    # peer 1 unit away along y, measured latency 4: too close, pushed away by k log(1 / 4) < 0
    f = spring_force([0.0, 1.0, 0.0], [0.0, 0.0, 0.0], 4.0, 0.5, rng)
    assert f == pytest.approx([0.0, 0.5 * math.log(0.25), 0.0], rel=1e-15)
    # at the measured distance: no force
    assert spring_force([3.0, 4.0, 0.0], [0.0, 0.0, 0.0], 5.0, 0.5, rng) == pytest.approx([0.0, 0.0, 0.0], abs=1e-15)


def test_coinciding_positions_push_apart():
    f = spring_force([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], 2.0, 0.2, random.Random(0))
    assert math.hypot(*f) > 0


def test_relaxation_of_algorithm_1_settles_at_the_measured_distances():
    # three fixed peers at the corners of a right triangle, the supervisor belongs at the origin
    peers = [([3.0, 0.0, 0.0], 3.0), ([0.0, 4.0, 0.0], 4.0), ([0.0, 0.0, 5.0], 5.0)]
    settings = SpringSettings(spring=0.5, eps_min=1e-9)
    p = relax([1.0, 1.0, 1.0], peers, settings, random.Random(0))
    for position, measured in peers:
        assert math.dist(p, position) == pytest.approx(measured, rel=1e-3)


def _relative_errors(true: list[list[float]], estimate: list[list[float]]) -> list[float]:
    n = len(true)
    return [abs(estimate[u][v] - true[u][v]) / true[u][v] for u in range(n) for v in range(u + 1, n)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_embedding_reproduces_a_known_geometry(seed):
    rng = random.Random(100 + seed)
    points = [[rng.uniform(0, 10) for _ in range(3)] for _ in range(11)]
    true = distance_matrix(points)
    estimate = distance_matrix(estimate_coordinates(11, noisy_measurements(true, 0.0, seed), seed=seed))
    errors = _relative_errors(true, estimate)
    assert max(errors) < 0.01  # every pairwise latency within 1%


def test_noisy_measurements_give_errors_of_the_noise_level():
    rng = random.Random(7)
    points = [[rng.uniform(0, 10) for _ in range(3)] for _ in range(11)]
    true = distance_matrix(points)
    estimate = distance_matrix(estimate_coordinates(11, noisy_measurements(true, 0.05, 7), seed=7))
    assert statistics.median(_relative_errors(true, estimate)) < 0.06


def test_peer_renewal_keeps_the_nearest_and_draws_new_ones():
    measured = {1: 5.0, 2: 1.0, 3: 3.0}
    for seed in range(5):
        peers = renew_peers(0, measured, 6, 2, random.Random(seed))
        assert peers[:2] == [2, 3]  # the i = 2 lowest latencies stay
        assert len(peers) == 3 and peers[2] in (1, 4, 5)  # j = 1 new random peer, never itself


def test_a_line_embeds_in_three_dimensions():
    true = [[abs(u - v) * 1.0 for v in range(6)] for u in range(6)]
    settings = SpringSettings(peers=5, keep=5, rounds=60)
    estimate = distance_matrix(estimate_coordinates(6, noisy_measurements(true, 0.0, 0), seed=0, settings=settings))
    assert max(_relative_errors(true, estimate)) < 0.01


def test_deterministic_per_seed():
    true = [[abs(u - v) + (u != v) for v in range(5)] for u in range(5)]
    a = estimate_coordinates(5, noisy_measurements(true, 0.05, 3), seed=3)
    b = estimate_coordinates(5, noisy_measurements(true, 0.05, 3), seed=3)
    assert a == b
