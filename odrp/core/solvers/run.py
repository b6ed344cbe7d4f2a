"""What every solver backend returns, and what they share.

:class:`SolverRun` is a backend's account of one model: a status from the Result vocabulary (optimal,
feasible, infeasible, time_limit, error), the incumbent objective, the proven bound and the gap.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import pyomo.environ as pyo

from odrp.core.result import Status, relative_gap

COMMERCIAL = ("gurobi", "cplex", "xpress")
"""The commercial solvers, driven through Pyomo when their Python package is installed (:mod:`.commercial`)."""
MILP_SOLVERS = ("highs", "cbc", "scip", *COMMERCIAL)
"""The solvers that take any linear Pyomo model (CP-SAT takes integral ones only)."""
SOLVERS = ("highs", "cbc", "cpsat", "scip", *COMMERCIAL)
DEFAULT_SOLVER = "highs"
DEFAULT_MIP_GAP = 1e-6


@dataclass
class SolverRun:
    """What a solver said about one model."""

    solver: str
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    runtime_s: float
    message: str = ""
    warm_start: dict[str, Any] | None = None
    """With a MIP start: ``accepted`` (the solver took it as an incumbent; None if its log does
    not say), the start's ``objective`` as the solver computed it, and the solver's ``log`` lines
    about it."""
    threads: int | None = None
    """The threads the solver was given (None: its own default)."""

    @classmethod
    def ended(
        cls,
        solver: str,
        status: Status,
        objective: float | None,
        bound: float | None,
        sense: str,
        runtime_s: float,
        error: str = "",
        warm_start: dict[str, Any] | None = None,
        threads: int | None = None,
    ) -> SolverRun:
        """A finished run: its gap from the incumbent and the bound; ``error`` is its message if it failed."""
        gap = relative_gap(objective, bound, sense)  # type: ignore[arg-type]
        message = error if status == "error" else ""
        return cls(solver, status, objective, bound, gap, runtime_s, message, warm_start, threads)

    @property
    def has_solution(self) -> bool:
        return self.objective is not None


def model_sense(model: pyo.ConcreteModel) -> str:
    objective = next(model.component_data_objects(pyo.Objective, active=True))
    return "max" if objective.sense == pyo.maximize else "min"


_LOG: ContextVar[bool] = ContextVar("solver_log", default=False)


def log_enabled() -> bool:
    """True inside :func:`solver_log`: the backends show the solver's own log on stderr (``--log``)."""
    return _LOG.get()


@contextlib.contextmanager
def solver_log(enabled: bool = True) -> Iterator[None]:
    """Show (or hide) the solvers' own logs on stderr inside the ``with`` block."""
    token = _LOG.set(enabled)
    try:
        yield
    finally:
        _LOG.reset(token)


_SILENCE_LOCK = threading.Lock()
_silenced: dict[str, int] = {"depth": 0, "saved": -1}
"""How many :func:`c_stdout_silenced` blocks are open, in any thread, and the stdout the first one saved."""


@contextlib.contextmanager
def c_stdout_silenced():
    """Send the C-level stdout to /dev/null (to stderr inside :func:`solver_log`): HiGHS prints some MIP
    messages there even when silent, which would break ``odrp solve --json`` (one JSON object on stdout).

    Blocks may overlap (threads pricing at once, :func:`odrp.core.colgen.generate`): the first to open
    redirects, the last to close restores."""
    import sys

    with _SILENCE_LOCK:
        if _silenced["depth"] == 0:
            sys.stdout.flush()
            _silenced["saved"] = os.dup(1)
            if log_enabled():
                os.dup2(2, 1)
            else:
                with open(os.devnull, "w") as devnull:
                    os.dup2(devnull.fileno(), 1)
        _silenced["depth"] += 1
    try:
        yield
    finally:
        with _SILENCE_LOCK:
            _silenced["depth"] -= 1
            if _silenced["depth"] == 0:
                sys.stdout.flush()  # what Python printed inside goes where the C output went
                os.dup2(_silenced["saved"], 1)
                os.close(_silenced["saved"])
