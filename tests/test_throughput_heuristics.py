"""hetero_greedy, mkp_view and storm_default on the throughput kind: hand traces, never above the optimum."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from odrp.heuristics.throughput import HeteroGreedySettings, hetero_greedy
from odrp.io import load_instance
from odrp.kinds.throughput.generators import random_instance
from odrp.kinds.throughput.instance import load
from odrp.registry import KINDS
from odrp.run import run_method
from tests.test_throughput_exact import SPOUT_AB

THROUGHPUT = KINDS["throughput"]
HETERO = sorted((Path(__file__).resolve().parent.parent / "instances" / "throughput").glob("*.json"))


def test_greedy_trace_on_two_different_machines_by_hand():
    # R_0 = 10: FirstAssignment puts the spout on A (TCU 1*10 + 10 = 20 < B's 2*10 + 10 = 30).
    # The rate doubles while A holds: 10, 20, 40, 80 (TCU 90); at 160 A is over-utilised and a
    # second instance fits nowhere (B: 2*160/2 + 10 = 170 > 100). Scale 2: back to 80, try 120
    # (B would need 130), scale 4: 100 (B 110), scale 8: 90 holds (TCU 100), then 101.25, 95.6,
    # 92.8, 91.4, 90.7 fail with B at 2*IR/2 + 10 > 100, and 90.7 <= Scale = 128 ends the search.
    # Final_ETG: the spout alone on A, R = (100 - 10) / 1 = 90 (the optimum is 120, see the exact test).
    out = hetero_greedy(load(SPOUT_AB), settings=HeteroGreedySettings(r0=10))
    assert out.solution == {"instances": {"spout": {"A": 1}}}
    assert out.objective == pytest.approx(90.0, rel=1e-12)
    assert out.stats["last_stable_rate"] == pytest.approx(90.0, rel=1e-12)


def test_greedy_trace_on_two_identical_machines_by_hand():
    # both machines e 1, MET 5. From R_0 = 10 the rate doubles to 80 on A; at 160 A is over-utilised
    # (165) and the new instance goes to B (160/2 + 5 = 85 <= 100): both hold 85. At 320 nothing fits
    # a third instance; the step halves until 180 holds (95 each) and the search ends near 190. The
    # final ETG is one instance on each machine: R = (100 - 5) / (1/2) = 190, which is optimal (two on
    # each: 2 (R/4) + 10 <= 100 gives 180).
    data = copy.deepcopy(SPOUT_AB)
    data["profile"]["spout"] = {"a": {"exec_time": 1, "overhead": 5}, "b": {"exec_time": 1, "overhead": 5}}
    out = hetero_greedy(load(data), settings=HeteroGreedySettings(r0=10))
    assert out.solution == {"instances": {"spout": {"A": 1, "B": 1}}}
    assert out.objective == pytest.approx(190.0, rel=1e-12)
    exact = run_method(THROUGHPUT, load(data), "exact")
    assert exact.objective == pytest.approx(190.0, rel=1e-9)


def test_storm_default_deals_tasks_round_robin_by_hand():
    # parallelism: spout 2, bolt 1; tasks by component id: bolt#0, spout#0, spout#1 dealt over the
    # interleaved slots m1:6700, m2:6700, m1:6701 -> bolt on m1, spout on m2 and m1
    data = {
        "problem": "throughput",
        "components": [{"id": "spout", "parallelism": 2}, {"id": "bolt"}],
        "edges": [["spout", "bolt"]],
        "machines": [{"id": "m1", "type": "t", "max_tasks": 4}, {"id": "m2", "type": "t", "max_tasks": 4}],
        "profile": {c: {"t": {"exec_time": 1, "overhead": 2}} for c in ("spout", "bolt")},
    }
    result = run_method(THROUGHPUT, load(data), "storm_default")
    assert result.solution == {"instances": {"spout": {"m2": 1, "m1": 1}, "bolt": {"m1": 1}}}
    # m1: overheads 4, load per R: spout 1/2 + bolt 1 = 1.5 -> R = 96 / 1.5 = 64; m2: 98 / 0.5 = 196
    assert result.verified and result.objective == pytest.approx(64.0, rel=1e-12)


def test_storm_default_over_the_task_limit_finds_no_solution():
    data = {
        "problem": "throughput",
        "components": [{"id": "spout", "parallelism": 3}],
        "machines": [{"id": "m1", "type": "t", "max_tasks": 1}, {"id": "m2", "type": "t", "max_tasks": 1}],
        "profile": {"spout": {"t": {"exec_time": 1, "overhead": 2}}},
    }
    result = run_method(THROUGHPUT, load(data), "storm_default")
    assert result.status == "no_solution" and not result.verified  # a heuristic failing proves nothing


def _cases():
    yield from ((path.stem, load_instance(path)[1]) for path in HETERO)
    for seed in range(3):
        shape = ("dag", "star")[seed % 2]
        yield f"random-{seed}", load(random_instance(seed=seed, components=5, machines=3, shape=shape))


@pytest.mark.parametrize(("name", "inst"), list(_cases()), ids=lambda v: v if isinstance(v, str) else "")
def test_heuristics_are_feasible_verified_and_never_above_the_optimum(name, inst):
    optimum = run_method(THROUGHPUT, inst, "exact", solver="cpsat")
    assert optimum.status == "optimal" and optimum.verified
    for method in ("hetero_greedy", "mkp_view", "storm_default"):
        result = run_method(THROUGHPUT, inst, method)
        assert result.status == "feasible" and result.verified, (method, result.message)
        assert result.objective <= optimum.objective * (1 + 1e-9), method
    assert len(HETERO) == 5
