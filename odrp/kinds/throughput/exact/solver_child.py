"""Solve one P(rho) in matrix form, in this process or in a child process stopped at its deadline.

HiGHS gets the matrix directly; CBC, SCIP and the commercial solvers get it through Pyomo (:func:`solve_cbc`).

:func:`solve_highs` runs HiGHS (highspy) on the model with tight feasibility tolerances. Neither solver keeps a
time limit on a large model: HiGHS's presolve does not look at the clock often (a 20 x 30 P(rho) with 380,000
nonzeros ran 77 s on a 10 s limit, 58 s of them in presolve), and CBC through Pyomo spent 102 s on a 1 s limit
with a 20 x 30 P(rho) of 550,000 nonzeros (Pyomo writing the model, then CBC's preprocessing). So :func:`solve`
pickles the model to a fresh interpreter (``python -m odrp.kinds.throughput.exact.solver_child IN OUT``: no
solver threads are forked, and the caller's ``__main__`` is not re-imported), waits until the deadline plus
``grace`` seconds, and kills the child and its descendants (CBC runs as the child's child) if it has not
answered. The child stays in the caller's process group, so that a watchdog that kills the group kills it too.
It is given the deadline as a wall-clock time, so that its own start and the model's hand-over count against
it, and it dies with its parent (Linux's parent-death signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers import solve as solve_pyomo
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.throughput.exact.matrix import MatrixModel, pyomo_values
from odrp.kinds.throughput.exact.settings import ThroughputSettings

FEASIBILITY = 1e-9
"""HiGHS's feasibility tolerances for P(rho) (rows are scaled to capacity 1), and SCIP's and the commercial
solvers': far below the gap, so that a solution the solver accepts at rho sustains rho to within 1e-9 of a
machine's capacity (with SCIP's default 1e-6 the search could not separate rho from its incumbent)."""


def solve_highs(
    model: MatrixModel,
    left: float | None,
    gap: float = ThroughputSettings.subproblem_gap,
    solutions: int = ThroughputSettings.subproblem_solutions,
) -> tuple[SolverRun, list[float] | None]:
    """The run of HiGHS on ``model`` (at most ``left`` seconds, relative gap ``gap``, stopped after ``solutions``
    improving solutions) and the column values of its solution, if any. An ``infeasible`` answer is checked
    again without presolve, within the same time: HiGHS 1.12's presolve, at these tolerances, has called
    feasible P(rho) models infeasible (a 10-component instance whose optimum CP-SAT and CBC prove at
    96.933 was ended at 96.889; ``tests/test_throughput_highs_presolve.py``)."""
    begin = time.perf_counter()
    highs = _tight(model)
    run = run_highspy(highs, "max", left, gap, max_solutions=solutions)
    if run.status == "infeasible":  # HiGHS 1.12's presolve at these tolerances refutes some feasible P(rho)
        highs = _tight(model)
        highs.setOptionValue("presolve", "off")
        spent = time.perf_counter() - begin
        run = run_highspy(highs, "max", None if left is None else max(0.0, left - spent), gap, max_solutions=solutions)
        run.runtime_s = time.perf_counter() - begin
    return run, list(highs.getSolution().col_value) if run.objective is not None else None


def _tight(model: MatrixModel):
    """``model`` in HiGHS with the feasibility tolerances :data:`FEASIBILITY`."""
    highs = model.to_highs()
    for option in ("mip_feasibility_tolerance", "primal_feasibility_tolerance"):
        highs.setOptionValue(option, FEASIBILITY)
    return highs


def solve_cbc(
    model: MatrixModel, left: float | None, gap: float, solver: str = "cbc"
) -> tuple[SolverRun, list[float] | None]:
    """The run of CBC (or ``solver``: SCIP, a commercial solver) through Pyomo on ``model`` and the column values
    of its solution, if any. CBC's clock starts after Pyomo has written the model, which takes about as long as
    building it: the solver gets ``left`` less twice the building time."""
    begin = time.perf_counter()
    pyomo_model = model.to_pyomo()
    if left is not None:
        left = max(0.0, left - 2 * (time.perf_counter() - begin))
    tolerance = None if solver == "cbc" else FEASIBILITY  # CBC keeps its defaults, with which it separates rates
    run = solve_pyomo(pyomo_model, solver, left, gap, feasibility_tolerance=tolerance)
    return run, pyomo_values(pyomo_model) if run.objective is not None else None


def solve_here(
    model: MatrixModel, solver: str, left: float | None, gap: float, solutions: int
) -> tuple[SolverRun, list[float] | None]:
    """:func:`solve_highs`, or :func:`solve_cbc` with ``solver``, in this process."""
    if solver == "highs":
        return solve_highs(model, left, gap, solutions)
    return solve_cbc(model, left, gap, solver)


def solve(
    model: MatrixModel,
    left: float,
    gap: float = ThroughputSettings.subproblem_gap,
    solutions: int = ThroughputSettings.subproblem_solutions,
    grace: float = ThroughputSettings.child_grace,
    solver: str = "highs",
) -> tuple[SolverRun, list[float] | None]:
    """:func:`solve_here` in a child process; a ``time_limit`` run if it does not answer within ``left`` + ``grace``
    seconds."""
    begin = time.perf_counter()
    deadline = time.time() + left
    with tempfile.TemporaryDirectory(prefix="odrp-child-") as folder:
        given, answer = Path(folder) / "model.pickle", Path(folder) / "answer.pickle"
        given.write_bytes(pickle.dumps((model, solver, deadline, gap, solutions, os.getpid())))
        command = [sys.executable, "-m", "odrp.kinds.throughput.exact.solver_child", str(given), str(answer)]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            child.wait(timeout=max(0.0, deadline - time.time()) + grace)
        except subprocess.TimeoutExpired:
            for pid in [*descendants(child.pid), child.pid]:  # CBC, the child's child, first
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            child.wait()
        if child.returncode == 0 and answer.exists():
            return pickle.loads(answer.read_bytes())
    message = f"stopped at the deadline ({solver} was still in presolve or setup)"
    return SolverRun(solver_version(solver), "time_limit", None, None, None, time.perf_counter() - begin, message), None


def descendants(pid: int) -> list[int]:
    """The process ids of ``pid``'s children, grandchildren and so on (Linux's /proc; none elsewhere)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = entry.read_text().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
            parents[int(entry.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        children = [p for p, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def main(given: str, answer: str) -> None:
    """The child: solve the pickled model until the deadline it was given, pickle the answer."""
    model, solver, deadline, gap, solutions, parent = pickle.loads(Path(given).read_bytes())
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the parent
    if os.getppid() != parent:
        return
    left = max(0.0, deadline - time.time())
    Path(answer).write_bytes(pickle.dumps(solve_here(model, solver, left, gap, solutions)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
