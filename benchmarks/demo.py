"""``make debs``: solve the paper's DEBS 2015 instances exactly and print what the optimum is.

For each source rate and three weightings of the paper's utility (response time only, cost only,
all four metrics at 0.25) it solves the compact ODRP model with HiGHS, has the evaluator re-score
the placement, and prints one row per case.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from odrp.kinds.replication.generators import debs2015
from odrp.kinds.replication.instance import load
from odrp.registry import KINDS
from odrp.run import run_method

INSTANCES = Path(__file__).resolve().parent.parent / "instances" / "odrp"
PROFILES = {"response_time": "w_r = 1", "cost": "w_c = 1", "balanced": "all 0.25"}


def main() -> None:
    console = Console(width=150)
    table = Table(title="ODRP optimum of the DEBS 2015 application (Cardellini et al. 2017), compact model + HiGHS")
    for column in (
        "weights",
        "rate t/s",
        "status",
        "F",
        "R ms",
        "cost",
        "A",
        "traffic B/s",
        "replicas",
        "nodes",
        "time s",
        "verified",
    ):
        table.add_column(column, justify="right")
    start = time.perf_counter()
    for profile, label in PROFILES.items():
        for rate in (20, 40, 60, 80, 100, 120):
            result = run_method(KINDS["odrp"], load(debs2015(rate, profile)), "exact")
            m = result.metrics
            table.add_row(
                label,
                str(rate),
                result.status,
                f"{result.objective:.6f}",
                f"{1000 * m['response_time']:.1f}",
                f"{m['cost']:g}",
                f"{m['availability']:.4f}",
                f"{m['network']:.0f}",
                str(m["total_replicas"]),
                ",".join(m["nodes_used"]),
                f"{result.runtime_s:.2f}",
                "yes" if result.verified else "NO",
            )
    console.print(table)
    console.print(
        f"18 exact solves in {time.perf_counter() - start:.1f} s. Instance files: {INSTANCES}/ "
        "(w_r = 1); try `odrp solve instances/odrp/debs2015-080.json`."
    )


if __name__ == "__main__":
    main()
