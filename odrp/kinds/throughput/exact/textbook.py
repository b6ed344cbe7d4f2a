"""The textbook method: bisection on R over the plain fixed-rate feasibility MILP (``--formulation textbook``).

R multiplies a ratio of integers (R sum_c e_cw l_c x_cw / N_c on machine w), so no single linear model states
the problem; a practitioner fixes the rate and bisects on it. For a fixed rate rho, with levels n = 1..U_c for
N_c (U_c = ``max_instances``, else :meth:`.ThroughputInstance.instance_bound`), the plain model P(rho) is

    v_cn in {0,1}                                   N_c = n
    y_cwn in Z+                                     instances of c on w when N_c = n
    sum_n v_cn = 1                                  for every c           (one level per component)
    sum_w y_cwn = n v_cn                            for every c, n        (N_c = n instances in all)
    sum_{c,n} (e_cw l_c rho / n + MET_cw) y_cwn <= cap_w   for every w    (eq. 5 summed over w's tasks)
    sum_{c,n} y_cwn <= k_w                          for every w with a task limit

a feasibility problem (no objective): feasible exactly when some placement sustains rho, and feasibility is
monotone in rho. Nothing else: no symmetry rows, no level pruning, no caps on y, no patterns, no start, no
bound but the closed form below. It is :func:`.rate_model.build_matrix` / :func:`.rate_model.build_cpsat`
with every option off, on items whose only bound is y_cwn <= n. CP-SAT gets every machine row scaled to
capacity 10^9 with coefficients rounded down (integers are what it takes; rounding down keeps "infeasible"
a proof), HiGHS (with tight feasibility tolerances; a large model in a child process stopped at the deadline)
and CBC the same matrix.

**Bisection.**

1. P(0): infeasible means no placement fits the overheads (the instance is infeasible); else its placement
   x_0 gives lo = R(x_0) (with a warm start, its rate instead, and no P(0)).
2. hi = sum_w cap_w / sum_c min_w e_cw l_c: a placement that sustains R has, summed over the machines,
   R sum_c sum_w e_cw l_c x_cw / N_c <= sum_w cap_w, and sum_w e_cw l_c x_cw / N_c >= min_w e_cw l_c (a
   convex combination). When that denominator is 0, hi is found by doubling rho from lo until P(rho) is
   infeasible.
3. While (hi - lo) / lo > g (``mip_gap``): rho = (lo + hi) / 2; P(rho) feasible with placement x: lo = R(x)
   (>= rho, its exact rate by the evaluator's formula); infeasible: hi = rho; undecided at the deadline: stop.
   Under a time limit a round is not started when building its model would take longer than the time left (as
   long as the last round's, the model has the same size at every rate; before the first, an estimate per item).

On a time limit the answer is the best placement found (lo) and the lowest rate refuted (hi).
"""

from __future__ import annotations

import time
from typing import Any

from odrp.core.budget import Budget
from odrp.core.exact import ExactOutcome, checked_start
from odrp.core.memory import check_model
from odrp.core.result import relative_gap
from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers.cpsat import run_cpsat
from odrp.core.solvers.cpsat import version as cpsat_version
from odrp.kinds.throughput.evaluator import evaluate, rate
from odrp.kinds.throughput.exact import rate_model
from odrp.kinds.throughput.exact.rate_model import Item, RateModel
from odrp.kinds.throughput.exact.rounds import solve_matrix
from odrp.kinds.throughput.exact.settings import ThroughputSettings
from odrp.kinds.throughput.instance import Counts, ThroughputInstance, parse_solution, solution_json


def levels(inst: ThroughputInstance, fixed: dict[int, int] | None = None) -> list[list[int]]:
    """The levels n = 1..U_c of every component (``fixed``: N_c = fixed[c] only)."""
    if fixed is not None:
        return [[fixed[c]] for c in range(inst.n_components)]
    return [list(range(1, inst.instance_bound(c) + 1)) for c in range(inst.n_components)]


def model_size(inst: ThroughputInstance, fixed: dict[int, int] | None = None) -> tuple[int, int, int]:
    """(variables, constraints, nonzeros) of P(rho) in closed form: L = sum_c |levels_c| levels, each with one
    v and m items y (L (m + 1) + 1 variables with the slack column); one row per component and per level, two
    per machine; each y in three rows, each v in two."""
    m = inst.n_machines
    total = sum(len(x) for x in levels(inst, fixed))
    return total * (m + 1) + 1, inst.n_components + total + 2 * m, total * (3 * m + 2) + m


def plain_model(inst: ThroughputInstance, rho: float, allowed: list[list[int]]) -> RateModel:
    """P(rho) with every level allowed and every item y_cwn bounded by n only."""
    items = tuple(
        Item(c, w, n, inst.coefficient(c, w) * rho / n + inst.overhead[c][w], n)
        for c, ns in enumerate(allowed)
        for n in ns
        for w in range(inst.n_machines)
    )
    return RateModel(rho, tuple(tuple(x) for x in allowed), items, tuple(range(inst.n_components)))


ITEM_SECONDS = 2e-5
"""Seconds to build P(rho) per item y_cwn before a round has measured it (20 x 30, 180,000 items: 1.8 s for CP-SAT
and 1.6 s for the matrix on a quiet machine, 1e-5 s an item; twice that for a shared machine)."""


def build_estimate(inst: ThroughputInstance, allowed: list[list[int]], rounds: list[dict[str, Any]]) -> float:
    """Seconds building P(rho) will take: as long as the last round's (the model has the same size at every rate),
    else :data:`ITEM_SECONDS` per item."""
    built = [r["model_s"] for r in rounds if "model_s" in r]
    return built[-1] if built else ITEM_SECONDS * inst.n_machines * sum(len(x) for x in allowed)


CPSAT_ITEM_MARGIN = 3e-6
"""Seconds per item by which CP-SAT's time limit is cut short: its presolve of the 20 x 30 plain P(0) (180,000
items) went 0.2-0.8 s past its limit."""


def closed_form_bound(inst: ThroughputInstance) -> float | None:
    """sum_w cap_w / sum_c min_w e_cw l_c (None when the denominator is 0): every placement's R is at most it."""
    per_rate = sum(min(inst.coefficient(c, w) for w in range(inst.n_machines)) for c in range(inst.n_components))
    return sum(inst.capacity) / per_rate if per_rate > 0 else None


def decide(
    inst: ThroughputInstance, rho: float, allowed: list[list[int]], solver: str, deadline: float | None, workers: int
) -> tuple[str, Counts | None, float]:
    """P(rho) once: (``feasible``, placement), (``infeasible``, None) or (the solver's status, None), and the
    seconds it took to build the model."""
    begin = time.perf_counter()
    rm = plain_model(inst, rho, allowed)
    if solver == "cpsat":
        form = rate_model.build_cpsat(inst, rm, symmetry=False, slack=False)
        built = time.perf_counter() - begin
        margin = CPSAT_ITEM_MARGIN * len(rm.items)
        left = None if deadline is None else max(0.0, deadline - time.perf_counter() - margin)
        run, cp = run_cpsat(form.model, "max", left, 0.0, workers, 1)
        if run.status in ("optimal", "feasible") or run.objective is not None:
            return "feasible", rate_model.decode_cpsat(form, cp, inst.n_components), built
        return run.status, None, built
    matrix = rate_model.build_matrix(inst, rm, symmetry=False)
    built = time.perf_counter() - begin
    left = None if deadline is None else max(0.0, deadline - time.perf_counter())
    run, values = solve_matrix(matrix.model, solver, left, ThroughputSettings())
    if values is not None:
        return "feasible", rate_model.decode_matrix(matrix, values, inst.n_components), built
    return run.status, None, built


def solve(
    inst: ThroughputInstance,
    solver: str,
    time_limit: float | None,
    mip_gap: float,
    fixed_instances: dict[int, int] | None = None,
    warm_start: dict[str, Any] | None = None,
    workers: int = 0,
) -> ExactOutcome:
    """Bisection on R over the plain P(rho) (the module's docstring); ``workers``: CP-SAT's threads (0: its own
    choice, every core)."""
    budget = Budget(time_limit=None if time_limit is None else float(time_limit))
    deadline = budget.deadline
    allowed = levels(inst, fixed_instances)
    check_model(*model_size(inst, fixed_instances), "the textbook fixed-rate model P(rho)")
    stats: dict[str, Any] = {"rounds": [], "form": "textbook", "solver": solver}

    def outcome(status: str, counts: Counts | None, lo: float | None, hi: float | None, message: str = ""):
        if status == "optimal" and lo is not None:
            hi = lo if hi is None else max(lo, hi)
        name = cpsat_version() if solver == "cpsat" else solver_version(solver)
        run = SolverRun(
            name, status, lo, hi if status != "infeasible" else None,  # type: ignore[arg-type]
            relative_gap(lo, hi, "max"), budget.elapsed(), message,
        )  # fmt: skip
        stats["iterations"] = len(stats["rounds"])
        return ExactOutcome(run, None if counts is None else solution_json(inst, counts), stats)

    def round_(rho: float) -> tuple[str, Counts | None]:
        begin = time.perf_counter()
        if deadline is not None and build_estimate(inst, allowed, stats["rounds"]) > deadline - begin:
            status, counts = "time_limit", None  # too little time left to build P(rho) (at the last round's pace)
            stats["rounds"].append({"rho": rho, "status": status, "why": "too little time left to build P(rho)"})
            return status, counts
        status, counts, built = decide(inst, rho, allowed, solver, deadline, workers)
        record: dict[str, Any] = {"rho": rho, "status": status, "seconds": time.perf_counter() - begin}
        record["model_s"] = built
        if counts is not None:
            record["rate"] = rate(inst, counts)
        stats["rounds"].append(record)
        return status, counts

    hi = closed_form_bound(inst)
    stats["closed_form_bound"] = hi
    incumbent: Counts | None = None
    lo = 0.0
    if warm_start is not None:
        lo = checked_start(evaluate, inst, warm_start)
        incumbent = parse_solution(inst, warm_start, "warm start")
        stats["warm_start"] = {"objective": lo, "accepted": True, "solver_objective": None, "solver_log": []}
    else:
        status, incumbent = round_(0.0)
        if status == "infeasible":
            return outcome("infeasible", None, None, None, "no placement fits the overheads")
        if incumbent is None:
            return outcome(status, None, None, hi, f"P(0) ended with {status} before a first placement")
        lo = rate(inst, incumbent)
    gap = max(float(mip_gap), 1e-9)
    doubling = hi is None
    while True:
        if hi is not None and (lo > 0 and relative_gap(lo, hi, "max") <= gap):  # type: ignore[operator]
            return outcome("optimal", incumbent, lo, hi)
        if deadline is not None and time.perf_counter() >= deadline:
            return outcome("time_limit", incumbent, lo, hi, "time limit reached")
        rho = max(2 * lo, 1.0) if doubling else (lo + hi) / 2  # type: ignore[operator]
        status, counts = round_(rho)
        if status == "infeasible":
            hi, doubling = rho, False
            continue
        if counts is None:
            if status == "time_limit":
                return outcome("time_limit", incumbent, lo, hi, "time limit reached (P(rho) undecided)")
            return outcome("error", incumbent, lo, hi, f"P({rho:g}) ended with {status}")
        found = rate(inst, counts)
        if found <= lo:  # the solver's tolerance: a placement at rho that does not beat the incumbent
            return outcome("feasible", incumbent, lo, hi, f"solver tolerance: P({rho:g}) gave no rate above {lo:g}")
        incumbent, lo = counts, found
