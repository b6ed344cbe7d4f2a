"""Throughput instance generators: the paper's topologies and seeded random instances.

The paper (Nasiri et al. 2023) evaluates on a cluster of three worker machines, one each of Pentium,
Core i3 and Core i5 (its Table 2), with the Micro-Benchmark topologies Linear, Diamond and Star built
from lowCompute, midCompute and highCompute bolts (its Fig. 9) and the two-bolt Storm-Benchmark
topologies RollingCount and UniqueVisitor. Its profiling table (Table 3) is not in its text: the
numbers in :data:`PROFILE` are **our choice** (see ``instances/README.md``), in the paper's units:
exec_time e in percent CPU per tuple/s of an instance's input, overhead MET in percent CPU.

- ``micro``: Linear (spout -> low -> mid -> high -> low), Diamond (spout -> {low, mid, high} -> low)
  or Star (two spouts -> high -> {low, mid}), five components each as in the paper's n = 4 bolts
  example, on ``per_type`` machines of each type, 10 tasks per machine.
- ``storm_benchmark``: RollingCount (spout -> split -> rolling count) or UniqueVisitor
  (spout -> parse -> unique count) on the same cluster.
- ``random``: a seeded random topology of a given shape (linear, diamond, star or a random DAG) with
  component kinds drawn among low/mid/high, each profile entry jittered by up to +-``jitter`` (so
  that machine speeds are not mere multiples of each other), on ``machines`` machines whose types
  cycle through ``types`` once and are then drawn at random.
"""

from __future__ import annotations

import random
from typing import Any

from odrp.core.generator import at_least

TYPES = ("pentium", "i3", "i5")
"""The paper's machine types (its Table 2), slowest first."""

#: Component kind -> machine type -> (exec_time e, overhead MET). Our choice (see instances/README.md).
PROFILE: dict[str, dict[str, tuple[float, float]]] = {
    "spout": {"pentium": (0.060, 3.0), "i3": (0.035, 2.0), "i5": (0.025, 1.5)},
    "low": {"pentium": (0.150, 3.5), "i3": (0.090, 2.5), "i5": (0.060, 2.0)},
    "mid": {"pentium": (0.450, 4.0), "i3": (0.260, 3.0), "i5": (0.170, 2.5)},
    "high": {"pentium": (1.200, 5.0), "i3": (0.650, 3.5), "i5": (0.400, 3.0)},
}
MAX_TASKS = 10
SHAPES = ("linear", "diamond", "star", "dag")


def _machines(types: list[str], capacity: float, max_tasks: int) -> list[dict[str, Any]]:
    return [
        {"id": f"m{w + 1}-{t}", "type": t, "capacity": capacity, "max_tasks": max_tasks} for w, t in enumerate(types)
    ]


def _profile(kinds: dict[str, str], types: list[str], rng: random.Random | None, jitter: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for comp, kind in kinds.items():
        out[comp] = {}
        for t in dict.fromkeys(types):
            e, met = PROFILE[kind][t]
            if rng is not None and jitter > 0:
                e *= rng.uniform(1 - jitter, 1 + jitter)
                met *= rng.uniform(1 - jitter, 1 + jitter)
            out[comp][t] = {"exec_time": round(e, 4), "overhead": round(met, 3)}
    return out


# ------------------------------------------------------------------------- the paper's shapes

MICRO = {
    "linear": (
        {"spout": "spout", "low1": "low", "mid": "mid", "high": "high", "low2": "low"},
        [("spout", "low1"), ("low1", "mid"), ("mid", "high"), ("high", "low2")],
    ),
    "diamond": (
        {"spout": "spout", "low1": "low", "mid": "mid", "high": "high", "low2": "low"},
        [("spout", "low1"), ("spout", "mid"), ("spout", "high"), ("low1", "low2"), ("mid", "low2"), ("high", "low2")],
    ),
    "star": (
        {"spout1": "spout", "spout2": "spout", "high": "high", "low": "low", "mid": "mid"},
        [("spout1", "high"), ("spout2", "high"), ("high", "low"), ("high", "mid")],
    ),
}


def micro_benchmark(shape: str = "linear", per_type: int = 1, max_tasks: int = MAX_TASKS) -> dict[str, Any]:
    """The paper's Micro-Benchmark topology ``shape`` on ``per_type`` Pentium, Core i3 and Core i5 machines."""
    if shape not in MICRO:
        raise ValueError(f"shape: expected one of {', '.join(MICRO)}, got {shape!r}")
    at_least(1, per_type=per_type)
    kinds, edges = MICRO[shape]
    types = [t for t in TYPES for _ in range(per_type)]
    return {
        "problem": "throughput",
        "name": f"micro-{shape}" + (f"-x{per_type}" if per_type > 1 else ""),
        "components": [{"id": c} for c in kinds],
        "edges": [list(e) for e in edges],
        "machines": _machines(types, 100.0, max_tasks),
        "profile": _profile(kinds, types, None, 0.0),
    }


#: Storm-Benchmark topologies: components (id, kind, alpha) and edges. Alphas are our choice: a
#: sentence splits into about 6 words; a rolling counter emits rarely; a page view yields one visit.
STORM_BENCHMARK = {
    "rollingcount": (
        [("spout", "spout", 1.0), ("split", "low", 6.0), ("rolling_count", "low", 0.05)],
        [("spout", "split"), ("split", "rolling_count")],
    ),
    "uniquevisitor": (
        [("spout", "spout", 1.0), ("parse", "mid", 1.0), ("unique", "mid", 0.1)],
        [("spout", "parse"), ("parse", "unique")],
    ),
}


def storm_benchmark(topology: str = "rollingcount", max_tasks: int = MAX_TASKS) -> dict[str, Any]:
    """A two-bolt Storm-Benchmark topology on the paper's three-machine cluster."""
    if topology not in STORM_BENCHMARK:
        raise ValueError(f"topology: expected one of {', '.join(STORM_BENCHMARK)}, got {topology!r}")
    comps, edges = STORM_BENCHMARK[topology]
    kinds = {c: k for c, k, _ in comps}
    types = list(TYPES)
    return {
        "problem": "throughput",
        "name": topology,
        "components": [{"id": c, "alpha": a} for c, _, a in comps],
        "edges": [list(e) for e in edges],
        "machines": _machines(types, 100.0, max_tasks),
        "profile": _profile(kinds, types, None, 0.0),
    }


# ---------------------------------------------------------------------------------- random


def _shape_edges(shape: str, n: int, rng: random.Random) -> tuple[list[int], list[tuple[int, int]]]:
    """Sources and edges (component indices) of a topology of ``n`` components."""
    if shape == "linear" or (shape in ("diamond", "star") and n < 3):
        return [0], [(j - 1, j) for j in range(1, n)]
    if shape == "diamond":
        return [0], [(0, j) for j in range(1, n - 1)] + [(j, n - 1) for j in range(1, n - 1)]
    if shape == "star":
        spouts = max(1, (n - 1) // 2)
        center = spouts
        return list(range(spouts)), [(s, center) for s in range(spouts)] + [(center, j) for j in range(center + 1, n)]
    if shape == "dag":
        edges = []
        for j in range(1, n):
            first = rng.randrange(max(0, j - 3), j)
            edges.append((first, j))
            if j >= 2 and rng.random() < 0.3:
                second = rng.randrange(0, j)
                if second != first:
                    edges.append((second, j))
        return [0], edges
    raise ValueError(f"shape: expected one of {', '.join(SHAPES)}, got {shape!r}")


def random_instance(
    seed: int = 0,
    components: int = 5,
    machines: int = 3,
    shape: str = "linear",
    types: str = ",".join(TYPES),
    max_tasks: int = MAX_TASKS,
    capacity: float = 100.0,
    jitter: float = 0.2,
) -> dict[str, Any]:
    """A random topology of ``components`` components (spouts included) on ``machines`` machines.

    ``types`` is a comma-separated list drawn from pentium, i3, i5. Component kinds (low, mid,
    high) are drawn uniformly; alphas uniformly in [0.7, 1.3] (one decimal); every profile entry is
    the kind's entry in :data:`PROFILE` times a factor in [1 - jitter, 1 + jitter].
    """
    at_least(1, components=components, machines=machines, max_tasks=max_tasks)
    type_list = [t.strip() for t in types.split(",") if t.strip()]
    unknown = [t for t in type_list if t not in TYPES]
    if not type_list or unknown:
        raise ValueError(f"types: a comma-separated list of {', '.join(TYPES)}, got {types!r}")
    if not 0 <= jitter < 1:
        raise ValueError(f"jitter: expected 0 <= jitter < 1, got {jitter}")
    rng = random.Random(seed)
    sources, edges = _shape_edges(shape, components, rng)
    kinds: dict[str, str] = {}
    ids = []
    for c in range(components):
        kind = "spout" if c in sources else rng.choice(("low", "mid", "high"))
        ids.append(f"{'spout' if kind == 'spout' else kind}{c}")
        kinds[ids[-1]] = kind
    machine_types = [type_list[w] if w < len(type_list) else rng.choice(type_list) for w in range(machines)]
    return {
        "problem": "throughput",
        "name": f"random-{shape}-c{components}-m{machines}-s{seed}",
        "components": [
            {"id": ids[c], "alpha": round(rng.uniform(0.7, 1.3), 1)} if c not in sources else {"id": ids[c]}
            for c in range(components)
        ],
        "edges": [[ids[a], ids[b]] for a, b in edges],
        "machines": _machines(machine_types, capacity, max_tasks),
        "profile": _profile(kinds, machine_types, rng, jitter),
    }
