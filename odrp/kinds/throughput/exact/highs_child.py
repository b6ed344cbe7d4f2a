"""Solve one P(rho) in matrix form with HiGHS, in this process or in a child process stopped at its deadline.

:func:`solve_highs` runs HiGHS (highspy) on the model with tight feasibility tolerances. HiGHS's presolve
does not look at the clock often (a 20 x 30 P(rho) with 380,000 nonzeros ran 77 s on a 10 s limit, 58 s of
them in presolve; 18 s with presolve off and interrupt callbacks), so a time limit alone does not keep the
search on time: :func:`solve` pickles the model to a fresh interpreter (``python -m
odrp.kinds.throughput.exact.highs_child IN OUT``: no solver threads are forked, and the caller's
``__main__`` is not re-imported), waits until the time limit plus ``grace`` seconds, and kills the child if
it has not answered.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from odrp.core.solvers import SolverRun, solver_version
from odrp.core.solvers.highs import run_highspy
from odrp.kinds.throughput.exact.matrix import MatrixModel
from odrp.kinds.throughput.exact.settings import ThroughputSettings

FEASIBILITY = 1e-9
"""HiGHS's feasibility tolerances for P(rho) (rows are scaled to capacity 1): far below the gap, so that
a solution HiGHS accepts at rho sustains rho to within 1e-9 of a machine's capacity."""


def solve_highs(
    model: MatrixModel,
    left: float | None,
    gap: float = ThroughputSettings.subproblem_gap,
    solutions: int = ThroughputSettings.subproblem_solutions,
) -> tuple[SolverRun, list[float] | None]:
    """The run of HiGHS on ``model`` (at most ``left`` seconds, relative gap ``gap``, stopped after ``solutions``
    improving solutions) and the column values of its solution, if any."""
    highs = model.to_highs()
    for option in ("mip_feasibility_tolerance", "primal_feasibility_tolerance"):
        highs.setOptionValue(option, FEASIBILITY)
    run = run_highspy(highs, "max", left, gap, max_solutions=solutions)
    return run, list(highs.getSolution().col_value) if run.objective is not None else None


def solve(
    model: MatrixModel,
    left: float,
    gap: float = ThroughputSettings.subproblem_gap,
    solutions: int = ThroughputSettings.subproblem_solutions,
    grace: float = ThroughputSettings.child_grace,
) -> tuple[SolverRun, list[float] | None]:
    """:func:`solve_highs` in a child process; a ``time_limit`` run if it does not answer within ``left`` +
    ``grace`` seconds."""
    begin = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="odrp-highs-") as folder:
        given, answer = Path(folder) / "model.pickle", Path(folder) / "answer.pickle"
        given.write_bytes(pickle.dumps((model, left, gap, solutions)))
        command = [sys.executable, "-m", "odrp.kinds.throughput.exact.highs_child", str(given), str(answer)]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            child.wait(timeout=left + grace)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.returncode == 0 and answer.exists():
            return pickle.loads(answer.read_bytes())
    message = "stopped at the deadline (HiGHS was still in presolve or setup)"
    return SolverRun(
        solver_version("highs"), "time_limit", None, None, None, time.perf_counter() - begin, message
    ), None


def main(given: str, answer: str) -> None:
    """The child: solve the pickled model, pickle the answer."""
    model, left, gap, solutions = pickle.loads(Path(given).read_bytes())
    Path(answer).write_bytes(pickle.dumps(solve_highs(model, left, gap, solutions)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
