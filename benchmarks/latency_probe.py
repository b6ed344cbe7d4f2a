"""One solve of the one-model latency MILP under a probe: the experiments of docs/methods/latency.md.

    python -m benchmarks.latency_probe FILE [--w1 W] [--option NAME=VALUE ...] [--highs KEY=VALUE ...]
        [--start "[u0, u1, ...]"] [--window LO HI] [--supervisors K] [--class-counts "{cpu: count}"]
        [--only "[u, ...]"] [--cutoff S] [--log FILE]

The model is :func:`odrp.kinds.latency.exact.model.build` with the exact method's settings
(``--option knapsack_trees=false``: fields of :class:`~odrp.kinds.latency.exact.settings.LatencySettings`)
and its triangle rows separated as in the one-model solve; the probe then adds what it tests and runs
HiGHS directly (``--highs mip_pscost_minreliable=0``: a HiGHS option; relative gap 1e-6):

- ``--w1``: the latency weight (0: interchangeable supervisors ordered, the lexicographic first stage);
- ``--start``: a placement (supervisor index per operator) as MIP start;
- ``--window LO HI``: LO <= F <= HI for F the score without the latency term (the second stage);
- ``--supervisors K``: exactly K supervisors used; ``--class-counts``: per cpu capacity, how many of
  the supervisors of that capacity are used; ``--only``: exactly these supervisors used;
- ``--cutoff S``: objective <= S (a proof that nothing better exists when infeasible).

Prints one markdown row: instance, probe, HiGHS status, objective, bound, the evaluator's score of the
placement, CPU s (separation and MIP), wall s, simplex iterations (of them in strong branching), and
the 1-minute load average (the machine may be shared: CPU seconds are the fairer measure).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import tempfile
import time
from pathlib import Path

import pyomo.environ as pyo

from odrp.core.settings import from_options
from odrp.core.solvers.highs import _highs_interface
from odrp.kinds.latency.evaluator import evaluate_assignment
from odrp.kinds.latency.exact import model
from odrp.kinds.latency.exact.separation import separate_triangles
from odrp.kinds.latency.exact.settings import LatencySettings
from odrp.kinds.latency.instance import load, solution_json


def probe(args: argparse.Namespace) -> str:
    data = json.loads(Path(args.file).read_text())
    if args.w1 is not None:
        data["weights"]["latency"] = args.w1
    inst = load(data)
    settings = from_options(LatencySettings, dict(o.split("=", 1) for o in args.option), where="--option")
    cpu = time.process_time()
    wall = time.perf_counter()
    m = model.build(inst, settings)
    sups = range(inst.n_supervisors)
    if args.supervisors is not None:
        m.probe_k = pyo.Constraint(expr=sum(m.y[u] for u in sups) == args.supervisors)
    separate_triangles(m, inst, settings)
    if args.start is not None:
        model.set_start(m, inst, solution_json(inst, ast.literal_eval(args.start)))
    if args.window is not None:
        c = model.objective_coefficients(inst)
        f = c["supervisors"] * sum(m.y[u] for u in sups) + sum(
            (c["colocation"] + c["events"] * inst.events[e]) * m.z[e] for e in range(len(inst.edges))
        )
        m.probe_window = pyo.Constraint(
            expr=pyo.inequality(args.window[0] * m.scale, m.scale * f, args.window[1] * m.scale)
        )
    if args.only is not None:
        used = set(ast.literal_eval(args.only))
        for u in sups:
            m.y[u].fix(1 if u in used else 0)
            for i in range(inst.n_operators):
                if u not in used:
                    m.x[i, u].fix(0)
    if args.class_counts is not None:
        counts = ast.literal_eval(args.class_counts)
        m.probe_counts = pyo.ConstraintList()
        for capacity in sorted(set(inst.supervisor_cpu)):
            members = [u for u in sups if inst.supervisor_cpu[u] == capacity]
            m.probe_counts.add(sum(m.y[u] for u in members) == counts.get(capacity, 0))
    if args.cutoff is not None:
        m.probe_cutoff = pyo.Constraint(expr=m.objective.expr <= args.cutoff * m.scale)
    separated = time.process_time()
    log = args.log or tempfile.mkstemp(suffix=".log")[1]
    highs_options = {"mip_rel_gap": 1e-6, "log_file": log}
    highs_options.update({k: ast.literal_eval(v) for k, v in (o.split("=", 1) for o in args.highs)})
    results = _highs_interface(args.start is not None).solve(
        m, load_solutions=False, raise_exception_on_nonoptimal_result=False, solver_options=highs_options
    )
    cpu_mip = time.process_time() - separated
    score = None
    if results.incumbent_objective is not None:
        results.solution_loader.load_vars()
        score = evaluate_assignment(inst, model.assignment(m, inst)).objective
    text = Path(log).read_text()
    iterations = re.findall(r"LP iterations\s+(\d+)\s*\n\s*(\d+) \(strong br\.\)", text)
    lp = f"{iterations[-1][0]} ({iterations[-1][1]})" if iterations else "-"

    def num(value: float | None) -> str:
        return "-" if value is None else f"{value / m.scale:.7f}"

    what = " ".join(f"{k}={v}" for k, v in vars(args).items() if k not in ("file", "log") and v not in (None, []))
    return (
        f"| {Path(args.file).stem} | {what or 'default'} | {results.termination_condition.name} |"
        f" {num(results.incumbent_objective)} | {num(results.objective_bound)} |"
        f" {'-' if score is None else f'{score:.7f}'} | {separated - cpu:.1f} + {cpu_mip:.1f} |"
        f" {time.perf_counter() - wall:.0f} | {lp} | {os.getloadavg()[0]:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--w1", type=float)
    parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--highs", action="append", default=[])
    parser.add_argument("--start")
    parser.add_argument("--window", type=float, nargs=2)
    parser.add_argument("--supervisors", type=int)
    parser.add_argument("--class-counts")
    parser.add_argument("--only")
    parser.add_argument("--cutoff", type=float)
    parser.add_argument("--log")
    args = parser.parse_args()
    head = "| instance | probe | HiGHS | objective | bound | evaluator | CPU s (sep + MIP) | wall s | LP (strong br.)"
    print(head + " | load |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    print(probe(args), flush=True)


if __name__ == "__main__":
    main()
