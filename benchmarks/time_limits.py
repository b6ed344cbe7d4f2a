"""Time-limit overshoot of every method of every kind, as the CLI and a grid run them.

For each kind, one generated instance too large to be solved within the limit, and every exact solver
and heuristic that applies to it, run through :func:`odrp.run.run_within_limits` (a child process
under the watchdog, as ``odrp solve`` and ``odrp bench`` run it) with ``--time-limit`` (5 s by
default). Prints one row per run: status, wall seconds, overshoot past the limit, and whether the run
kept a solution; then the worst overshoot, and the machine's load before and after.

    python -m benchmarks.time_limits [--time-limit 5] [--kinds odrp,gap] [--exact-only]

The contract (docs/design.md): wall <= limit + 1 s for every run. The instances are fixed here; no
constant of the toolkit was chosen on them.
"""

from __future__ import annotations

import argparse
import os
import time

from odrp.core.solvers import usable
from odrp.registry import KINDS
from odrp.run import available_methods, run_within_limits

LARGE: dict[str, tuple[str, dict]] = {
    "odrp": ("random", {"operators": 30, "nodes": 12}),
    "throughput": ("random", {"components": 20, "machines": 30, "shape": "dag"}),
    "kp": ("random", {"items": 2000, "correlation": "strong"}),
    "mkp": ("random", {"items": 200, "knapsacks": 10, "correlation": "strong"}),
    "gap": ("random", {"agents": 20, "jobs": 200, "gap_type": "d"}),
    "mdkp": ("random", {"items": 250, "dimensions": 10}),
    "qkp": ("random", {"items": 200, "density": 0.5}),
    "qmkp": ("random", {"items": 60, "knapsacks": 5}),
    "qm3dkp": ("random", {"components": 12, "max_parallelism": 6, "racks": 3, "nodes_per_rack": 6}),
    "latency": ("random", {"operations": 14, "parallelism": 3, "load": 0.7}),
    "pathmap": ("ba", {"servers": 400, "components": 25, "max_null": 3}),
}
"""Per kind: a generator and parameters giving an instance that is not solved within seconds."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--kinds", default=",".join(LARGE), help="comma-separated kinds")
    parser.add_argument("--exact-only", action="store_true", help="skip the heuristics")
    args = parser.parse_args(argv)
    print(f"load before: {os.getloadavg()[0]:.2f}; time limit {args.time_limit:g} s")
    print(f"{'kind':<11} {'method':<22} {'solver':<7} {'status':<11} {'wall_s':>7} {'over_s':>7} solution")
    worst = -float("inf")
    for name in args.kinds.split(","):
        kind = KINDS[name]
        generator, params = LARGE[name]
        instance = kind.load(kind.generators[generator](seed=1, **params), f"<{name} large>")
        runs = [("exact", s) for s in kind.solvers if usable(s)]
        if not args.exact_only:
            runs += [(m, None) for m in available_methods(name) if m != "exact"]
        for method, solver in runs:
            keywords = {"solver": solver} if solver else {}
            began = time.perf_counter()
            try:
                result = run_within_limits(kind, instance, method, time_limit=args.time_limit, **keywords)
                status, solved = result.status, result.solution is not None
            except Exception as error:
                status, solved = f"raised {type(error).__name__}", False
            wall = time.perf_counter() - began
            worst = max(worst, wall - args.time_limit)
            print(
                f"{name:<11} {method:<22} {solver or '-':<7} {status:<11} {wall:7.2f} "
                f"{wall - args.time_limit:7.2f} {'yes' if solved else 'no'}",
                flush=True,
            )
    print(f"worst overshoot: {worst:.2f} s past {args.time_limit:g} s; load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
