"""The level search on worker processes (:mod:`odrp.kinds.throughput.exact.parallel`): the same proofs as in one
process, brute force's optima on tiny instances, and no worker left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.throughput import random_case
from odrp.kinds.throughput.evaluator import evaluate_counts
from odrp.kinds.throughput.exact import level_search, parallel
from odrp.kinds.throughput.exact.cache import Cache
from odrp.kinds.throughput.exact.settings import ConfigurationSettings, ThroughputSettings
from odrp.kinds.throughput.instance import load
from tests.test_throughput_config_bound import PACKING
from tests.test_throughput_exact import brute_force, tiny
from tests.test_throughput_level_search import _boxes, solve_through_level_search

GAP = 1e-6
SEEDS = range(6)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (a killed child not yet reaped is dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _workers(inst, processes: int = 2) -> parallel.Workers:
    return parallel.Workers(inst, processes, "cpsat")


@pytest.fixture(scope="module")
def nodes():
    """Two workers shared by the tests (a worker's imports take seconds on a loaded machine)."""
    with _workers(tiny(0)) as workers:
        workers.start()
        yield workers


@pytest.mark.parametrize("pool", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_two_processes_reach_brute_force_and_prove_the_same_rates_as_one(seed, pool, nodes):
    settings = ThroughputSettings(configuration=ConfigurationSettings(pool=pool))
    inst = tiny(seed)
    nodes.use(inst, settings)  # the workers take the settings with the instance
    optimum, _ = brute_force(inst)
    # from a poor start: the incumbent rises while nodes are in flight, and the proof is brute force's
    out = parallel.search(inst, optimum / 2, None, nodes, lambda best: best * (1 + GAP / 2))
    assert out.proven and out.best == pytest.approx(optimum, rel=GAP)
    assert evaluate_counts(inst, out.counts).objective == pytest.approx(out.best, rel=1e-12)
    # just above R*: refuted by both; just below: both find a placement there
    for target, proven in ((optimum * (1 + 1e-6), True), (optimum * (1 - 1e-3), False)):
        two = parallel.search(inst, 0.0, None, nodes, lambda best, t=target: max(best, t))
        one = level_search.search(
            inst, 0.0, None, _boxes(inst), lambda best, t=target: max(best, t), cache=Cache.of(settings)
        )
        assert two.proven == one.proven == proven
        if proven and not pool:  # one rate, no incumbent, no time limit: every node is decided as in one process
            assert two.stats.nodes == one.stats.nodes and two.stats.pruned == one.stats.pruned
        # (with the pool an LP starts from the configurations its process priced, which depend on which worker took
        # which node: the trees may differ, the proofs may not)
        if not proven:  # R* >= target: the search finds a placement at least there and proves next_rho(it)
            assert two.best >= target and one.best >= target


def test_two_processes_on_the_packing_case_by_hand(nodes):
    # tests/test_throughput_config_bound.py: R* = 60 (a and b on one machine each); from 30 the search finds
    # 60 and proves 60 (1 + 5e-7) out of reach, with the nodes on two processes
    inst = load(PACKING)
    nodes.use(inst, ThroughputSettings())
    out = parallel.search(inst, 30.0, None, nodes, lambda best: max(best, 30.0) * (1 + GAP / 2))
    assert out.proven and out.best == pytest.approx(60.0, rel=1e-9) and out.stats.processes == 2


@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("seed", [3])  # a seed whose first round above P(0) bisects
def test_exact_method_with_one_or_two_processes_equals_brute_force(seed, processes):
    """The route of 10 x 10 instances (first round undecided, configuration bound, level searches) with the
    level search in process or on two workers: both prove brute force's optimum."""
    inst = tiny(seed)
    optimum, _ = brute_force(inst)
    outcome, _ = solve_through_level_search(inst, processes=processes)
    assert outcome.run.status == "optimal"
    assert outcome.run.objective == pytest.approx(optimum, rel=1e-6)
    searches = [r["level_search"] for r in outcome.stats["rounds"] if "level_search" in r]
    assert searches and all(s["processes"] == processes for s in searches)


def test_no_worker_left_after_a_deadline_or_an_exception():
    inst = random_case(0, 10, 10)  # 10 x 10: nodes take long enough to be in flight at the deadline
    rho = 218.0
    with _workers(inst) as nodes:
        out = parallel.search(inst, 0.0, None, nodes, lambda best: rho, deadline=time.perf_counter() + 1.0)
        assert not out.proven
        pids = [proc.pid for proc in nodes.procs]
        nodes.start()  # the workers stopped with nodes in flight are replaced
        pids += [proc.pid for proc in nodes.procs]
    with pytest.raises(KeyboardInterrupt), _workers(inst) as more:  # Ctrl-C in the parent: the workers are killed
        more.start()
        pids += [proc.pid for proc in more.procs]
        raise KeyboardInterrupt
    assert len(pids) >= 4
    assert not any(_alive(pid) for pid in pids)


def test_workers_die_with_a_parent_that_is_killed(tmp_path):
    """SIGKILL leaves the parent no chance to clean up: the workers must notice (parent-death signal)."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import sys, time\n"
        "from odrp.kinds.throughput.exact import parallel\n"
        "from tests.test_throughput_exact import tiny\n"
        "nodes = parallel.Workers(tiny(0), 2)\n"
        "nodes.start()\n"
        "nodes.warm()\n"
        "print(*[proc.pid for proc in nodes.procs], flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]  # type: ignore[union-attr]
        assert len(pids) == 2 and all(_alive(pid) for pid in pids)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        waited = time.perf_counter()
        while any(_alive(pid) for pid in pids) and time.perf_counter() - waited < 10:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_open_nodes_are_taken_in_depth_first_order_whatever_order_answers_come_in():
    """Root split into A (explored second) and B (first); two workers take B then A (look-ahead). A's answer
    comes first, yet B's children must come before A's, last child first: the serial depth-first order."""
    inst = tiny(0)
    tree = level_search.Tree(inst, 0.0, None, lambda best: 1.0, None, processes=2)
    columns = level_search.Columns([[] for _ in inst.machine_classes])

    def split(path, node, children):
        result = level_search.NodeResult(1.0, "split", columns, children)
        assert tree.take(path, node, None, result)

    path, node, _ = tree.pop()
    assert path == ()
    split(path, node, [[(1, 1)], [(2, 2)]])  # children in stack order: (2, 2) is explored first
    b, a = tree.pop(), tree.pop()
    assert (b[0], b[1], a[0], a[1]) == ((1,), [(2, 2)], (0,), [(1, 1)])
    split(a[0], a[1], [[(1, 1)], [(1, 1)]])  # A answers first: its children (0, 0) and (0, 1)
    split(b[0], b[1], [[(2, 2)], [(2, 2)]])  # then B: (1, 0) and (1, 1)
    assert [tree.pop()[0] for _ in range(4)] == [(1, 1), (1, 0), (0, 1), (0, 0)]
