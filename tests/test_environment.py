"""The pinned solver stack loads in one process (highspy and ortools both ship libhighs)."""

from __future__ import annotations

import subprocess
import sys


def test_highspy_ortools_pulp_and_pyomo_in_one_process():
    code = """
import highspy, pulp
from ortools.sat.python import cp_model
from ortools.linear_solver import pywraplp
import pyomo.environ as pyo
from odrp.core.solvers import solve, solver_version
m = pyo.ConcreteModel(); m.x = pyo.Var(range(3), domain=pyo.Binary)
m.c = pyo.Constraint(expr=m.x[0] + m.x[1] + m.x[2] <= 2)
m.o = pyo.Objective(expr=m.x[0] + 2 * m.x[1] + 3 * m.x[2], sense=pyo.maximize)
assert solve(m, "highs").objective == 5 and solve(m, "cbc").objective == 5
cp = cp_model.CpModel(); y = [cp.NewBoolVar(str(i)) for i in range(3)]
cp.Add(sum(y) <= 2); cp.Maximize(y[0] + 2 * y[1] + 3 * y[2])
s = cp_model.CpSolver(); assert s.Solve(cp) == cp_model.OPTIMAL and s.ObjectiveValue() == 5
print(solver_version("highs"), solver_version("cbc"))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "highs 1.12" in proc.stdout and "cbc 2.10" in proc.stdout
