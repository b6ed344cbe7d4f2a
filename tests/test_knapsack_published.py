"""Published optima of the knapsack family, on the subset copied into tests/data/external.

Rows of ``optima.csv`` with ``status: optimal`` must be reproduced exactly; ``best_known`` rows only
bound the optimum (for a maximisation the true optimum is >= best_known), so there our bounds (the
LP relaxation of the model, valid and deterministic) must reach the published value, a proven
optimum may not fall below it, and no heuristic may rise above the bound.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pyomo.environ as pyo
import pytest

from odrp.core.solvers import solve as solve_model
from odrp.kinds.knapsack import readers as knapsack_io
from odrp.kinds.knapsack.exact import bounds, milp
from odrp.kinds.knapsack.mapping import family_of
from odrp.registry import KINDS
from odrp.run import run_method

DATA = Path(__file__).resolve().parent / "data" / "external"


def published(folder: str) -> dict[tuple[str, str], tuple[float, str]]:
    rows = csv.DictReader((DATA / folder / "optima.csv").open())
    return {(r["instance"], r["sense"]): (float(r["optimum"]), r["status"]) for r in rows}


def instances(fmt: str, folder: str, name: str, **options) -> list[dict]:
    return knapsack_io.read(fmt, DATA / folder / name, **options)


def solve(data: dict, time_limit: float | None = None):
    kind = KINDS[data["problem"]]
    return run_method(kind, kind.load(data, data["name"]), "exact", time_limit=time_limit)


def check(result, value: float, status: str, sense: str = "max") -> None:
    """Equality with an optimal row; for a best_known row, the bound (and any proven optimum) reaches it."""
    assert result.verified, result.message
    if status == "optimal":
        assert result.status == "optimal"
        assert result.objective == pytest.approx(value, rel=1e-9)
        return
    better_or_equal = (lambda a, b: a >= b - 1e-6) if sense == "max" else (lambda a, b: a <= b + 1e-6)
    assert better_or_equal(result.bound, value), f"bound {result.bound} does not reach best known {value}"
    if result.status == "optimal":
        assert better_or_equal(result.objective, value)
    assert better_or_equal(result.bound, result.objective)


# -------------------------------------------------------------------------------- the readers


def test_readers_shapes():
    gap1 = instances("orlib-gap", "gap_orlib", "gap1.txt")
    assert len(gap1) == 5 and len(gap1[0]["values"]) == 5 and len(gap1[0]["values"][0]) == 15
    mknap1 = instances("orlib-mknap", "mknap_orlib", "mknap1.txt")
    assert [len(d["profits"]) for d in mknap1] == [6, 10, 15, 20, 28, 39, 50]
    assert mknap1[1]["profits"][0] == 600.1  # the one fractional profit (optimum 8706.1)
    mknap2 = instances("orlib-mknap2", "mknap_orlib", "mknap2.txt")
    assert len(mknap2) == 48
    assert (len(mknap2[2]["profits"]), len(mknap2[2]["capacities"])) == (28, 2)  # WEING1: 2 constraints, 28 items
    mkp = instances("dellamico-mkp", "mkp_dellamico_small", "probT1_0U_R50_T002_M020_N0040_seed06.txt")[0]
    assert (len(mkp["capacities"]), len(mkp["profits"])) == (20, 40)
    stripped = instances("bs-qkp", "qkp_billionnet_soutif", "jeu_100_25_1.txt")[0]
    original = instances("bs-qkp", "qkp_billionnet_soutif", "jeu_200_25_3.txt")[0]  # name line, "0", Comments
    assert len(stripped["weights"]) == 100 and len(original["weights"]) == 200
    # line 2 of the file holds c[1..100] (c[4] = 57), line 3 the 99 values q[1][2..100] (q[1][5] = 5)
    assert stripped["profits"][3][3] == 57
    assert stripped["profits"][0][4] == stripped["profits"][4][0] == 5
    qmkp = instances("hj-qmkp", "qmkp_hiley_julstrom", "jeu_100_25_3_1.txt")[0]
    assert qmkp["capacities"] == [688, 688, 688]  # floor(0.8 * sum w / 3), Peng et al.'s c = 688


# ------------------------------------------------------------------------------ published optima


@pytest.mark.parametrize("sense", ["max", "min"])
def test_gap_orlib(sense):
    optima = published("gap_orlib")
    problems = instances("orlib-gap", "gap_orlib", "gap1.txt", sense=sense)
    problems += instances("orlib-gap", "gap_orlib", "gap12.txt", sense=sense)[:2]
    for data in problems:
        check(solve(data), *optima[data["name"], sense], sense=sense)


def test_mknap_orlib():
    optima = published("mknap_orlib")
    problems = instances("orlib-mknap", "mknap_orlib", "mknap1.txt")
    problems += instances("orlib-mknap2", "mknap_orlib", "mknap2.txt")
    for data in problems:
        check(solve(data), *optima[data["name"], "max"])


def test_mkp_dellamico():
    optima = published("mkp_dellamico_small")
    for name, _ in optima:
        data = instances("dellamico-mkp", "mkp_dellamico_small", name)[0]
        check(solve(data), *optima[name, "max"])


def test_qkp_billionnet_soutif_optimum():
    optima = published("qkp_billionnet_soutif")
    data = instances("bs-qkp", "qkp_billionnet_soutif", "jeu_100_75_1.txt")[0]
    check(solve(data), *optima["jeu_100_75_1.txt", "max"])


def lp_bound(instance) -> float:
    """The LP relaxation of our model: a valid upper bound, deterministic and quick to get."""
    family = bounds.reduce_capacities(family_of(instance))
    options = milp.Options(capacity_cuts=family.n_knapsacks > 1, objective_bound=bounds.surrogate_bound(family))
    model = milp.build(family, options)
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    run = solve_model(model, "highs")
    assert run.status == "optimal"
    return run.objective


@pytest.mark.parametrize(
    ("fmt", "folder", "name"),
    [
        ("bs-qkp", "qkp_billionnet_soutif", "jeu_200_25_3.txt"),  # best known 245463
        ("bs-qkp", "qkp_billionnet_soutif", "jeu_100_25_1.txt"),  # optimal 18558, bounded only here
        ("hj-qmkp", "qmkp_hiley_julstrom", "jeu_100_25_3_1.txt"),  # best known 29286
    ],
)
def test_our_bounds_reach_the_published_values(fmt, folder, name):
    """A model that cut off the published solution would bound below it; the heuristic stays under."""
    value, _ = published(folder)[name, "max"]
    data = instances(fmt, folder, name)[0]
    kind = KINDS[data["problem"]]
    instance = kind.load(data, name)
    bound = lp_bound(instance)
    assert bound >= value - 1e-6  # a valid upper bound is >= the optimum >= the published value
    heuristic = run_method(kind, instance, "local_search", options={"iterations": 5})
    assert heuristic.verified and heuristic.objective <= bound + 1e-6
