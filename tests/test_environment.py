"""The pinned solver stack loads in one process (highspy and ortools both ship libhighs; ortools bundles a SCIP
of its own beside PySCIPOpt's), in either import order, and SCIP runs in a forked child as every run does."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODEL = """
import pyomo.environ as pyo
from odrp.core.solvers import solve, solver_version
def model():
    m = pyo.ConcreteModel(); m.x = pyo.Var(range(3), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
    m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
    return m
"""

OTHERS = """
import highspy, pulp
from ortools.sat.python import cp_model
from ortools.linear_solver import pywraplp
import pyomo.environ as pyo
"""

CHECKS = """
assert solve(model(), "highs").objective == 5 and solve(model(), "cbc").objective == 5
assert solve(model(), "scip").objective == 5
cp = cp_model.CpModel(); y = [cp.NewBoolVar(str(i)) for i in range(3)]
cp.Add(sum(y) <= 2); cp.Maximize(y[0] + 2 * y[1] + 3 * y[2])
s = cp_model.CpSolver(); assert s.Solve(cp) == cp_model.OPTIMAL and s.ObjectiveValue() == 5
ortools_scip = pywraplp.Solver.CreateSolver("SCIP")  # OR-Tools' own SCIP, in the same process as PySCIPOpt's
x = [ortools_scip.BoolVar(str(i)) for i in range(3)]
ortools_scip.Add(sum(x) <= 2); ortools_scip.Maximize(x[0] + 2 * x[1] + 3 * x[2])
assert ortools_scip.Solve() == pywraplp.Solver.OPTIMAL and round(ortools_scip.Objective().Value()) == 5
print(solver_version("highs"), solver_version("cbc"), solver_version("scip"))
"""


@pytest.mark.parametrize("scip_first", [False, True], ids=["pyscipopt last", "pyscipopt first"])
def test_highspy_ortools_pulp_pyomo_and_pyscipopt_in_one_process(scip_first):
    imports = "import pyscipopt\n" + OTHERS if scip_first else OTHERS + "import pyscipopt\n"
    code = imports + MODEL + CHECKS
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "highs 1.12" in proc.stdout and "cbc 2.10" in proc.stdout and "scip 10." in proc.stdout


def test_scip_and_highs_in_a_forked_child_after_the_parent_used_them():
    """odrp.core.limits forks every run: SCIP and HiGHS run in the child after the parent ran them, HiGHS with
    two threads (its worker thread stays in the parent: without a reset after the fork HiGHS waits for it)."""
    code = (
        OTHERS
        + "import pyscipopt, os\n"
        + MODEL
        + """
def knapsack():  # a model HiGHS branches on (the three-variable one is solved by its presolve)
    m = pyo.ConcreteModel(); m.x = pyo.Var(range(30), domain=pyo.Binary)
    m.c = pyo.Constraint(expr=sum((i % 7 + 1) * m.x[i] for i in range(30)) <= 20)
    m.o = pyo.Objective(expr=sum((i % 5 + 1) * m.x[i] for i in range(30)), sense=pyo.maximize)
    return m
assert solve(model(), "scip").objective == 5 and solve(knapsack(), "highs", threads=2).objective == 40
pid = os.fork()
if pid == 0:
    ok = solve(model(), "scip").objective == 5 and solve(knapsack(), "highs").objective == 40
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "child 0" in proc.stdout
