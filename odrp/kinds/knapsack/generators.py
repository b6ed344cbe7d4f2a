"""Seeded generators for the knapsack family, after the classic recipes, and R-Storm's evaluation setups.

- ``kp``, ``mkp``: Pisinger's uncorrelated / weakly / strongly correlated classes (Kellerer et al.
  2004, section 5.5): weights in [1, R] (R = ``max_weight``); profits uniform in [1, R], in [w - R/10, w + R/10]
  (at least 1), or w + R/10. Capacity: ``capacity_ratio`` of the total weight (split at random over the knapsacks
  of an MKP, as in Dell'Amico et al. 2019).
- ``gap``: Chu and Beasley (1997) types C and D: weights in [5, 25] (C) or [1, 100] (D); values in
  [10, 50] (C) or 111 - weight + e, e in [-10, 10] (D); capacity 0.8 * sum_j weights[i][j] / m.
- ``mdkp``: Chu and Beasley (1998): weights in [1, 1000], capacities ``tightness`` * sum of the
  row, profit = sum of the item's weights / d + 500 * u, u in [0, 1) (integers).
- ``qkp``: Gallo, Hammer and Simeone (1980) as used by Billionnet and Soutif: each profit (linear
  and pair) nonzero with probability ``density``, then uniform in [1, 100]; weights in [1, 50];
  capacity uniform in [50, sum of the weights].
- ``qmkp``: a ``qkp`` instance with ``knapsacks`` equal capacities floor(0.8 * sum w / knapsacks)
  (Hiley and Julstrom 2006).
- ``qm3dkp``: a random layered topology on a two-level cluster; ``rstorm``: the evaluation setups of
  Peng et al. (2015), section 6 (see :data:`RSTORM_TOPOLOGIES` and ``instances/README.md``).
"""

from __future__ import annotations

import math
import random
from typing import Any

from odrp.core.generator import at_least

# ------------------------------------------------------------------------- classic kinds


def _profits(rng: random.Random, weights: list[int], correlation: str, r: int) -> list[int]:
    if correlation == "uncorrelated":
        return [rng.randint(1, r) for _ in weights]
    if correlation == "weak":
        return [max(1, w + rng.randint(-r // 10, r // 10)) for w in weights]
    if correlation == "strong":
        return [w + r // 10 for w in weights]
    raise ValueError(f"correlation: expected uncorrelated, weak or strong, got {correlation!r}")


def kp(
    seed: int = 1,
    items: int = 20,
    correlation: str = "uncorrelated",
    max_weight: int = 100,
    capacity_ratio: float = 0.5,
) -> dict[str, Any]:
    """A 0-1 knapsack of Pisinger's class ``correlation``."""
    rng = random.Random(seed)
    weights = [rng.randint(1, max_weight) for _ in range(items)]
    return {
        "problem": "kp",
        "name": f"kp-{correlation}-{items}-s{seed}",
        "profits": _profits(rng, weights, correlation, max_weight),
        "weights": weights,
        "capacity": max(1, int(capacity_ratio * sum(weights))),
    }


def mkp(
    seed: int = 1,
    items: int = 20,
    knapsacks: int = 3,
    correlation: str = "uncorrelated",
    max_weight: int = 100,
    capacity_ratio: float = 0.5,
) -> dict[str, Any]:
    """A 0-1 multiple knapsack: the total capacity split at random over ``knapsacks`` knapsacks."""
    rng = random.Random(seed)
    weights = [rng.randint(1, max_weight) for _ in range(items)]
    total = capacity_ratio * sum(weights)
    shares = [rng.uniform(0.5, 1.5) for _ in range(knapsacks)]
    capacities = [max(1, int(total * s / sum(shares))) for s in shares]
    return {
        "problem": "mkp",
        "name": f"mkp-{correlation}-{items}x{knapsacks}-s{seed}",
        "profits": _profits(rng, weights, correlation, max_weight),
        "weights": weights,
        "capacities": capacities,
    }


def gap(seed: int = 1, agents: int = 5, jobs: int = 15, gap_type: str = "d", sense: str = "min") -> dict[str, Any]:
    """A generalized assignment problem of Chu and Beasley's type C or D."""
    if gap_type not in ("c", "d"):
        raise ValueError(f"gap_type: expected c or d, got {gap_type!r}")
    if sense not in ("min", "max"):
        raise ValueError(f"sense: expected min or max, got {sense!r}")
    rng = random.Random(seed)
    if gap_type == "c":
        weights = [[rng.randint(5, 25) for _ in range(jobs)] for _ in range(agents)]
        values = [[rng.randint(10, 50) for _ in range(jobs)] for _ in range(agents)]
    else:
        weights = [[rng.randint(1, 100) for _ in range(jobs)] for _ in range(agents)]
        values = [[111 - w + rng.randint(-10, 10) for w in row] for row in weights]
    capacities = [int(0.8 * sum(row) / agents) for row in weights]
    return {
        "problem": "gap",
        "name": f"gap-{gap_type}-{agents}x{jobs}-s{seed}",
        "sense": sense,
        "values": values,
        "weights": weights,
        "capacities": capacities,
    }


def mdkp(seed: int = 1, items: int = 30, dimensions: int = 5, tightness: float = 0.5) -> dict[str, Any]:
    """A multidimensional knapsack after Chu and Beasley (1998)."""
    rng = random.Random(seed)
    weights = [[rng.randint(1, 1000) for _ in range(items)] for _ in range(dimensions)]
    profits = [
        int(sum(weights[d][j] for d in range(dimensions)) / dimensions + 500 * rng.random()) for j in range(items)
    ]
    return {
        "problem": "mdkp",
        "name": f"mdkp-{items}x{dimensions}-t{tightness:g}-s{seed}",
        "profits": profits,
        "weights": weights,
        "capacities": [int(tightness * sum(row)) for row in weights],
    }


def _quadratic_profits(rng: random.Random, items: int, density: float) -> list[list[int]]:
    profits = [[0] * items for _ in range(items)]
    for i in range(items):
        for j in range(i, items):
            if rng.random() < density:
                profits[i][j] = profits[j][i] = rng.randint(1, 100)
    return profits


def qkp(seed: int = 1, items: int = 20, density: float = 0.5) -> dict[str, Any]:
    """A quadratic knapsack after Gallo, Hammer and Simeone (1980)."""
    rng = random.Random(seed)
    profits = _quadratic_profits(rng, items, density)
    weights = [rng.randint(1, 50) for _ in range(items)]
    return {
        "problem": "qkp",
        "name": f"qkp-{items}-d{density:g}-s{seed}",
        "profits": profits,
        "weights": weights,
        "capacity": rng.randint(min(50, sum(weights)), sum(weights)),
    }


def qmkp(seed: int = 1, items: int = 20, knapsacks: int = 3, density: float = 0.5) -> dict[str, Any]:
    """A quadratic multiple knapsack with Hiley and Julstrom's capacities floor(0.8 * sum w / m)."""
    rng = random.Random(seed)
    profits = _quadratic_profits(rng, items, density)
    weights = [rng.randint(1, 50) for _ in range(items)]
    return {
        "problem": "qmkp",
        "name": f"qmkp-{items}x{knapsacks}-d{density:g}-s{seed}",
        "profits": profits,
        "weights": weights,
        "capacities": [math.floor(0.8 * sum(weights) / knapsacks)] * knapsacks,
    }


# ------------------------------------------------------------------------------- QM3DKP

#: R-Storm's worker nodes (paper, section 6.1): one 3 GHz core = 100 CPU points ("100 * # of
#: cores", section 5.2), 2 GB of RAM = 2048 MB, a 100 Mbps NIC = 100 bandwidth units.
RSTORM_NODE = {"cpu": 100.0, "memory": 2048.0, "bandwidth": 100.0}

#: Components (id, parallelism, cpu, memory MB, bandwidth Mbps per task) and edges (from, to,
#: weight) of the paper's topologies. Figures 7 and 11 are lost in the text; the shapes follow the
#: topology names and the numbers are OUR CHOICE (instances/README.md), see RSTORM_DEMANDS.
RSTORM_TOPOLOGIES: dict[str, dict[str, Any]] = {
    "linear": {
        "components": [("spout", 6), ("bolt1", 6), ("bolt2", 6), ("bolt3", 6)],
        "edges": [("spout", "bolt1", 100), ("bolt1", "bolt2", 100), ("bolt2", "bolt3", 100)],
    },
    "diamond": {
        "components": [("spout", 6), ("bolt1", 4), ("bolt2", 4), ("bolt3", 4), ("bolt4", 6)],
        "edges": [
            ("spout", "bolt1", 100),
            ("spout", "bolt2", 100),
            ("spout", "bolt3", 100),
            ("bolt1", "bolt4", 100),
            ("bolt2", "bolt4", 100),
            ("bolt3", "bolt4", 100),
        ],
    },
    "star": {
        "components": [("spout1", 4), ("spout2", 4), ("center", 6), ("bolt1", 4), ("bolt2", 4)],
        "edges": [
            ("spout1", "center", 100),
            ("spout2", "center", 100),
            ("center", "bolt1", 100),
            ("center", "bolt2", 100),
        ],
    },
    "pageload": {
        "components": [
            ("event_spout", 6),
            ("parse", 6),
            ("filter_bots", 4),
            ("sessionize", 4),
            ("enrich", 4),
            ("aggregate", 4),
            ("hbase_writer", 2),
        ],
        "edges": [
            ("event_spout", "parse", 300),
            ("parse", "filter_bots", 300),
            ("filter_bots", "sessionize", 150),
            ("filter_bots", "enrich", 150),
            ("sessionize", "aggregate", 100),
            ("enrich", "aggregate", 100),
            ("aggregate", "hbase_writer", 50),
        ],
    },
    "processing": {
        "components": [
            ("kafka_spout", 6),
            ("decode", 6),
            ("clicks", 4),
            ("views", 4),
            ("conversions", 2),
            ("join", 4),
            ("rollup", 4),
            ("sink", 2),
        ],
        "edges": [
            ("kafka_spout", "decode", 300),
            ("decode", "clicks", 100),
            ("decode", "views", 150),
            ("decode", "conversions", 50),
            ("clicks", "join", 100),
            ("views", "join", 150),
            ("conversions", "join", 50),
            ("join", "rollup", 150),
            ("rollup", "sink", 50),
        ],
    },
}

#: Per-task demands by workload (our choice): (cpu points, memory MB, bandwidth Mbps). A task's
#: memory (its share of the worker JVM) is the same in both workloads; the workload changes how much
#: it computes (CPU) and how much it sends (bandwidth). Computation-bound: the CPU of a topology adds
#: up to about the 6-7 machines R-Storm used for the micro-benchmarks (section 6.3.2: 6 for Linear,
#: 7 for Diamond, half of the 12 for Star), and 4 bolts fill a machine's CPU and memory exactly.
RSTORM_DEMANDS = {
    "computation": {"spout": (20.0, 256.0, 10.0), "bolt": (25.0, 512.0, 10.0)},
    "network": {"spout": (10.0, 256.0, 25.0), "bolt": (5.0, 512.0, 25.0)},
}


def rstorm(topology: str = "linear", workload: str = "computation", seed: int = 0) -> dict[str, Any]:
    """One of the paper's evaluation setups on its cluster.

    ``topology``: linear, diamond, star (the micro-benchmarks, Figure 7), pageload, processing
    (Yahoo!, Figure 11) on the 12-node cluster of two racks of 6 (section 6.1), or
    ``pageload+processing`` on the 24-node cluster of two subclusters (racks) of 12 (section 6.5).
    ``workload``: computation or network (section 6.3). ``seed`` is unused (the setups are fixed).
    """
    del seed
    if workload not in RSTORM_DEMANDS:
        raise ValueError(f"workload: expected {' or '.join(RSTORM_DEMANDS)}, got {workload!r}")
    names = topology.split("+")
    for name in names:
        if name not in RSTORM_TOPOLOGIES:
            raise ValueError(f"topology: expected one of {', '.join(RSTORM_TOPOLOGIES)} or pageload+processing")
    prefix = len(names) > 1
    components: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for name in names:
        spec = RSTORM_TOPOLOGIES[name]
        sources = {a for a, _, _ in spec["edges"]} - {b for _, b, _ in spec["edges"]}
        for cid, parallelism in spec["components"]:
            cpu, memory, bandwidth = RSTORM_DEMANDS[workload]["spout" if cid in sources else "bolt"]
            components.append(
                {
                    "id": f"{name}.{cid}" if prefix else cid,
                    "parallelism": parallelism,
                    "cpu": cpu,
                    "memory": memory,
                    "bandwidth": bandwidth,
                }
            )
        for a, b, w in spec["edges"]:
            edges.append({"from": f"{name}.{a}" if prefix else a, "to": f"{name}.{b}" if prefix else b, "weight": w})
    racks, per_rack = (2, 12) if prefix else (2, 6)
    return {
        "problem": "qm3dkp",
        "name": f"rstorm-{topology}-{workload}",
        "components": components,
        "edges": edges,
        "nodes": _cluster(racks, per_rack),
        "colocation": {"node": 1.0, "rack": 0.5},
        "penalty": {"cpu": 5.0, "bandwidth": 5.0},
    }


def _cluster(racks: int, per_rack: int, node: dict[str, float] = RSTORM_NODE) -> list[dict[str, Any]]:
    return [
        {"id": f"r{r + 1}n{u + 1:02d}", "rack": f"rack{r + 1}", **node} for r in range(racks) for u in range(per_rack)
    ]


def qm3dkp(
    seed: int = 1,
    components: int = 5,
    max_parallelism: int = 3,
    racks: int = 2,
    nodes_per_rack: int = 3,
    load: float = 0.7,
) -> dict[str, Any]:
    """A random layered topology on ``racks`` x ``nodes_per_rack`` R-Storm nodes.

    Components form a chain of layers (one spout first); every later component reads from one or
    two earlier ones. Per task: CPU in [10, 50], memory in {256, 512, 768} MB, bandwidth in [5, 30];
    edge weights in [10, 100]. Node memory is scaled so that the tasks fill ``load`` of the cluster's
    memory (at least one task of each kind fits on a node); CPU and bandwidth are R-Storm's 100.
    """
    at_least(1, components=components, max_parallelism=max_parallelism, racks=racks, nodes_per_rack=nodes_per_rack)
    if not 0 < load <= 1:
        raise ValueError(f"load: expected 0 < load <= 1, got {load}")
    rng = random.Random(seed)
    comps = []
    for c in range(components):
        comps.append(
            {
                "id": f"c{c}",
                "parallelism": rng.randint(1, max_parallelism),
                "cpu": float(rng.randint(10, 50)),
                "memory": float(rng.choice((256, 512, 768))),
                "bandwidth": float(rng.randint(5, 30)),
            }
        )
    edges = []
    for c in range(1, components):
        for p in sorted(rng.sample(range(c), min(c, rng.randint(1, 2)))):
            edges.append({"from": f"c{p}", "to": f"c{c}", "weight": float(rng.randint(10, 100))})
    total_memory = sum(c["parallelism"] * c["memory"] for c in comps)
    n_nodes = racks * nodes_per_rack
    memory = max(max(c["memory"] for c in comps), math.ceil(total_memory / (load * n_nodes) / 256) * 256)
    node = {"cpu": 100.0, "memory": float(memory), "bandwidth": 100.0}
    return {
        "problem": "qm3dkp",
        "name": f"qm3dkp-c{components}-p{max_parallelism}-{racks}x{nodes_per_rack}-s{seed}",
        "components": comps,
        "edges": edges,
        "nodes": _cluster(racks, nodes_per_rack, node),
        "colocation": {"node": 1.0, "rack": 0.5},
        "penalty": {"cpu": 1.0, "bandwidth": 1.0},
    }
