"""Generators of the latency kind (the paper's procedure and topologies), the instance files, the CLI."""

from __future__ import annotations

import copy
import glob
import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from odrp.kinds.latency.generators import (
    HOST_LINKS,
    PAPER,
    RANDOM,
    WORKERS,
    add_cycle,
    network,
    network_latency,
    paper_topology,
    random_operations,
    random_topology,
)
from odrp.kinds.latency.instance import load
from tests.conftest import ROOT
from tests.test_latency_evaluator import DIAMOND


@pytest.mark.parametrize("operations", [2, 3, 4, 7, 16, 24])
def test_random_procedure_grows_a_single_source_single_sink_dag(operations):
    for seed in range(5):
        names, edges = random_operations(random.Random(seed), operations)
        assert len(names) == operations and names[0] == "src" and names[-1] == "snk"
        heads, tails = Counter(b for _, b in edges), Counter(a for a, _ in edges)
        assert [n for n in names if not heads[n]] == ["src"]
        assert [n for n in names if not tails[n]] == ["snk"]
        # every insertion adds one edge per operation, a diamond two per operation: 1 + ops..2 ops
        assert operations - 1 <= len(edges) <= 2 * (operations - 2) + 1


def test_diamonds_appear_at_about_forty_percent():
    inserts = Counter()
    for seed in range(200):
        names, edges = random_operations(random.Random(seed), 24)
        # a single insertion adds 1 operation and 1 edge, a diamond 2 operations and 3 edges:
        # edges - 1 = singles + 3 diamonds, operations - 2 = singles + 2 diamonds
        diamonds = (len(edges) - 1) - (len(names) - 2)
        inserts["diamond"] += diamonds
        inserts["single"] += (len(names) - 2) - 2 * diamonds
    share = inserts["diamond"] / (inserts["diamond"] + inserts["single"])
    assert 0.35 < share < 0.42  # 0.4, a little less: the last insertion is single when one is missing


def test_table_1_sizes():
    # the paper's operators = 2 x operations - 2 for every random topology (parallelism 2 inside)
    expected = {"t-r1": 30, "t-r2": 12, "t-r3": 22, "t-r4": 28, "t-r5": 20, "t-r6": 20, "t-r7": 42}
    expected |= {"t-r8": 14, "t-r9": 18, "t-m1": 6, "t-m2": 12, "t-m3": 3}
    for topology in PAPER:
        inst = load(paper_topology(topology))
        assert inst.n_operators == expected[topology], topology
        assert bool(inst.back_edges) == (topology in ("t-r8", "t-r9"))
    assert len(RANDOM) == 9


def test_manual_topologies():
    m1, m2, m3 = (load(paper_topology(t)) for t in ("t-m1", "t-m2", "t-m3"))
    assert len(m1.edges) == 5  # a chain of 6
    assert len(m2.edges) == 20  # src -> 10 instances -> snk
    assert len(m3.edges) == 2


def test_cycle_is_one_back_edge_between_inner_operations():
    names, edges = random_operations(random.Random(3), 8)
    a, b = add_cycle(random.Random(3), names, edges)
    assert a not in ("src", "snk") and b not in ("src", "snk") and (a, b) == edges[-1]


def test_load_is_the_share_of_the_network_cpu():
    inst = load(random_topology(seed=2, operations=12, load=0.3))
    assert math.fsum(inst.cpu) == pytest.approx(0.3 * 6.6, abs=1e-3)  # cpu rounded to 4 decimals


def test_cpu_follows_the_derived_input_events():
    inst = load(paper_topology("t-m2", load=0.2))
    # src rate 1000 -> 10 instances of 100 events each -> snk receives 1000: cpu 10 : 1 : 10 ratios
    assert inst.cpu[0] == pytest.approx(10 * inst.cpu[1]) and inst.cpu[-1] == pytest.approx(inst.cpu[0])
    assert math.fsum(inst.cpu) == pytest.approx(1.32)


def test_the_eleven_workers():
    assert [w[0] for w in WORKERS] == [f"w{k}" for k in range(1, 12)]
    capacities = {w: (c, m) for w, c, m in WORKERS}
    assert capacities["w1"] == (1.5, 2048)
    assert all(capacities[w] == (1.0, 1024) for w in ("w2", "w6", "w7"))
    assert all(capacities[w] == (0.3, 768) for w in ("w3", "w4", "w5", "w8", "w9", "w10", "w11"))
    lat = network_latency()
    # w1 and w2 share switch s1 (0.25 + 0.5); w1 to w9 crosses the core: 0.25 + 1.0 + 2.0 + 0.5
    assert lat[0][1] == 0.75 and lat[0][8] == 3.75
    assert all(0.5 <= lat[u][v] <= 6.0 for u in range(11) for v in range(11) if u != v)
    assert set(HOST_LINKS) == {w[0] for w in WORKERS}


def test_estimated_coordinates_approximate_the_switch_tree():
    points = [s["coordinates"] for s in network()["supervisors"]]
    exact = network_latency()
    errors = [abs(math.dist(points[u], points[v]) - exact[u][v]) / exact[u][v] for u in range(11) for v in range(u)]
    assert sorted(errors)[len(errors) // 2] < 0.1  # a tree metric is not Euclidean: about 5% median error


def test_generators_are_seeded():
    assert random_topology(seed=5) == random_topology(seed=5)
    assert random_topology(seed=5) != random_topology(seed=6)


def test_instance_files_are_the_generators_output():
    files = sorted(glob.glob(str(ROOT / "instances" / "latency" / "*.json")))
    assert len(files) == 24
    for path in files:
        topology, _, load_share = Path(path).stem.partition("-load")
        data = json.loads(Path(path).read_text())
        assert data == paper_topology(topology, load=float(load_share)), path


def test_generate_and_solve_through_the_cli(run_cli, tmp_path):
    path = tmp_path / "t.json"
    run_cli("generate", "latency", "--seed", "3", "--operations", "4", "--load", "0.3", "--out", str(path), check=True)
    exact = json.loads(run_cli("solve", str(path), "--json", check=True).stdout)
    assert exact["status"] == "optimal" and exact["verified"]
    hill = json.loads(
        run_cli(
            "solve", str(path), "--method", "hill_climbing", "--param", "iterations=50", "--json", check=True
        ).stdout
    )
    assert hill["verified"] and hill["objective"] >= exact["objective"] - 1e-12


BAD = [
    ("unknown operator", lambda d: d["edges"][1].update({"from": "nobody"}), "edges[1].from"),
    ("wrong matrix", lambda d: d["latency"][0].append(3), "latency[0]"),
    ("source without rate", lambda d: d["operators"][0].pop("rate"), "operators[0].rate"),
    ("utilisation_limit 0", lambda d: d.update({"utilisation_limit": 0}), "utilisation_limit"),
    ("weights typo", lambda d: d["weights"].update({"colocations": 1}), "weights.colocations"),
]


@pytest.mark.parametrize(("case", "mutate", "field"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_through_the_cli(run_cli, tmp_path, case, mutate, field):
    data = copy.deepcopy(DIAMOND)
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    proc = run_cli("solve", str(path), "--json")
    assert proc.returncode == 2 and json.loads(proc.stdout)["file"] == str(path)  # --json: the error as an object
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and field in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_heuristic_options_and_solutions_through_the_cli(run_cli, tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps(DIAMOND))
    proc = run_cli("solve", str(path), "--method", "ant_system", "--param", "ants=-3")
    assert proc.returncode == 2 and "--param ants" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("solve", str(path), "--method", "hill_climbing", "--param", "colour=red")
    assert proc.returncode == 2 and "colour" in proc.stderr and "Traceback" not in proc.stderr
    solution = tmp_path / "s.json"
    solution.write_text(json.dumps({"assignment": {"src": "mars"}}))
    proc = run_cli("evaluate", str(path), str(solution))
    assert proc.returncode == 2 and "assignment.src" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("solve", str(path), "--param", "cut=wide")
    assert proc.returncode == 2 and "cut" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("solve", str(path), "--param", "triangles=3")
    assert proc.returncode == 2 and "triangles" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("generate", "latency", "--generator", "paper", "--topology", "t-x")
    assert proc.returncode == 2 and "topology" in proc.stderr and "Traceback" not in proc.stderr
