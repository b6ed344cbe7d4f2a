"""The listing of the packing step (arcflow.candidate_sets), pruned by suffix knapsack tables.

The list must hold exactly the item multisets its docstring names, whatever the pruning: here they are
enumerated by brute force over every count vector within the class bounds and filtered by the
conditions written out again in this file (worth, weight, surrogate and rho brackets, cardinality).
Then two Dell'Amico et al. SMALL files whose thresholds the listing decides only because its tables
prune by weight (with the profit sums alone it reaches its visit limit): solved with the published
optima.
"""

from __future__ import annotations

import csv
import itertools
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import arcflow
from odrp.kinds.knapsack.exact.settings import ArcFlowSettings
from odrp.registry import KINDS
from odrp.run import run_method

DATA = Path(__file__).resolve().parent / "data" / "mkp_packing"
MKP = KINDS["mkp"]
TOL = 1e-6


def random_case(seed: int) -> tuple[arcflow.Mkp, arcflow.Bound, np.ndarray, float, float]:
    """A small MKP (classes of 1-3 copies, weights non-increasing as in the graph order), random
    multipliers, random class bounds and a threshold near the profit of a third of the copies."""
    rng = random.Random(seed)
    n = rng.randint(3, 6)
    weight = np.array(sorted((rng.randint(1, 12) for _ in range(n)), reverse=True))
    profit = np.array([float(rng.randint(1, 20)) for _ in range(n)])
    count = np.array([rng.choice((1, 1, 2, 3)) for _ in range(n)])
    capacity = np.array([rng.randint(5, 25) for _ in range(rng.randint(1, 3))])
    mkp = arcflow.Mkp(
        family_class=np.arange(n),
        profit=profit,
        weight=weight,
        count=count,
        capacity=capacity,
        free=(),
        free_profit=0.0,
        integral=True,
    )
    beta = np.array([rng.uniform(-3, 10) for _ in range(n)]) if rng.random() < 0.8 else None
    gamma = np.array([rng.uniform(-3, 10) for _ in range(n)])
    bound = arcflow.lagrangian_bound(mkp, beta, gamma, rng.uniform(0, 4) * (rng.random() < 0.5), int(count.sum()) - 1)
    lo = np.array([rng.randint(0, int(q)) if rng.random() < 0.3 else 0 for q in count])
    hi = np.array([rng.randint(int(a), int(q)) for a, q in zip(lo, count, strict=True)])
    theta = float(profit @ count) / 3 + rng.randint(-10, 5)
    delta = rng.uniform(0, 60)
    return mkp, bound, np.stack([lo, hi], axis=1), theta, delta


def brute_force(mkp: arcflow.Mkp, bound: arcflow.Bound, allowed: np.ndarray, theta: float, delta: float) -> set:
    """Every count vector within ``allowed`` that candidate_sets' docstring admits, found by trying all."""
    out = set()
    for n in itertools.product(*(range(int(a), int(b) + 1) for a, b in allowed)):
        x = np.array(n)
        copies = int(x.sum())
        if float(mkp.profit @ x) < theta - TOL or int(mkp.weight @ x) > int(mkp.capacity.sum()):
            continue
        if copies > bound.cardinality or (bound.lam > TOL and copies < bound.cardinality - delta / bound.lam - TOL):
            continue
        if bound.beta is not None and float(bound.beta @ x) < bound.surrogate - delta - TOL:
            continue
        if float(bound.rho @ x) < float(mkp.count @ np.maximum(bound.rho, 0.0)) - delta - TOL:
            continue
        out.add(n)
    return out


@pytest.mark.parametrize("table_limit", [ArcFlowSettings().suffix_table_limit, 0], ids=["tables", "sums only"])
def test_listing_equals_brute_force(table_limit):
    """200 random cases, with the knapsack tables and with their one-column fallback (no weight limit)."""
    settings = replace(ArcFlowSettings(), set_limit=10_000, suffix_table_limit=table_limit)
    nonempty = 0
    for seed in range(200):
        mkp, bound, allowed, theta, delta = random_case(seed)
        listed = arcflow.candidate_sets(mkp, bound, allowed, theta, delta, settings)
        assert listed is not None
        keys = [tuple(int(v) for v in n) for n in listed]
        assert len(keys) == len(set(keys)), f"seed {seed}: a set listed twice"
        assert set(keys) == brute_force(mkp, bound, allowed, theta, delta), f"seed {seed}"
        values = [float(mkp.profit @ n) for n in listed]
        assert values == sorted(values, reverse=True), f"seed {seed}: not best first"
        nonempty += bool(keys)
    assert nonempty >= 60  # many cases list something (77 of the 200 seeds)


def test_too_many_sets_give_none():
    """Four classes of one copy, every bracket open: 2^4 = 16 subsets worth >= 0, more than a limit of 10."""
    mkp = arcflow.Mkp(
        family_class=np.arange(4),
        profit=np.array([4.0, 3.0, 2.0, 1.0]),
        weight=np.array([4, 3, 2, 1]),
        count=np.ones(4, dtype=int),
        capacity=np.array([10]),
        free=(),
        free_profit=0.0,
        integral=True,
    )
    bound = arcflow.lagrangian_bound(mkp, None, np.zeros(4), 0.0, 4)  # rho = profit; rho bracket: >= 10 - delta
    allowed = np.array([[0, 1]] * 4)
    ten, sixteen = (replace(ArcFlowSettings(), set_limit=limit) for limit in (10, 16))
    assert arcflow.candidate_sets(mkp, bound, allowed, 0.0, 10.0, ten) is None
    assert len(arcflow.candidate_sets(mkp, bound, allowed, 0.0, 10.0, sixteen)) == 16
    # worth >= 9 (weight = profit here, total capacity 10): all four (10) and {4, 3, 2} (9); the next, {4, 3, 1}, is 8
    assert [n.tolist() for n in arcflow.candidate_sets(mkp, bound, allowed, 9.0, 10.0)] == [[1, 1, 1, 1], [1, 1, 1, 0]]


def published() -> dict[str, float]:
    return {r["instance"]: float(r["optimum"]) for r in csv.DictReader((DATA / "optima.csv").open())}


@pytest.mark.parametrize(
    "name", ["probT1_0U_R50_T002_M020_N0060_seed09.txt", "probT1_2S_R50_T002_M020_N0060_seed05.txt"]
)
def test_published_optimum_by_the_listing(name):
    """Two SMALL files whose listing needs the weight in its tables: every threshold from floor(L) down is
    decided by the packing step, no graph stage (sets listed and refuted, then the optimum packed; or, when the
    short refill has found the optimum first, every threshold above it refuted); the published optimum."""
    data = knapsack_io.read("dellamico-mkp", DATA / name)[0]
    result = run_method(MKP, MKP.load(data, data["name"]), "exact", formulation="arcflow", time_limit=120)
    assert result.status == "optimal" and result.verified, result.message
    assert result.objective == published()[name]
    stages = result.metrics["method_stats"]["stages"]
    assert stages and all("packing_sets" in s for s in stages)
