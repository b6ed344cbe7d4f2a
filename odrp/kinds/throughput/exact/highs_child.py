"""Solve one P(rho) with HiGHS in a separate process that the rate search can stop at its deadline.

HiGHS's presolve does not look at the clock often (measured on a 20 x 30 P(rho) with 380,000 nonzeros:
a 10 s limit ran 77 s, 58 s of them in presolve; with presolve off and interrupt callbacks still
18 s), so a time limit alone does not keep the search on time. :func:`solve` pickles the model to a
fresh interpreter (``python -m odrp.kinds.throughput.exact.highs_child IN OUT``: no solver threads are
forked, and the caller's ``__main__`` is not re-imported), waits until the time limit plus
``GRACE`` seconds, and kills the child if it has not answered.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from odrp.core.solvers import SolverRun, solver_version

GRACE = 1.0
"""Seconds past its time limit the child may take to answer (HiGHS stops, then the answer is pickled)."""


def solve(model, left: float) -> tuple[SolverRun, list[float] | None]:
    """``_solve_highs(model, left)`` in a child process; a ``time_limit`` run if it does not answer in time."""
    begin = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="odrp-highs-") as folder:
        given, answer = Path(folder) / "model.pickle", Path(folder) / "answer.pickle"
        given.write_bytes(pickle.dumps((model, left)))
        command = [sys.executable, "-m", "odrp.kinds.throughput.exact.highs_child", str(given), str(answer)]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            child.wait(timeout=left + GRACE)
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
    from odrp.kinds.throughput.exact.solve import _solve_highs

    model, left = pickle.loads(Path(given).read_bytes())
    Path(answer).write_bytes(pickle.dumps(_solve_highs(model, left)))


if __name__ == "__main__":
    main(*sys.argv[1:3])
