"""The column generation's HiGHS runs keep the C stdout clean: ``odrp solve --json`` prints one JSON object.

HiGHS 1.12 prints some MIP messages to the C-level stdout even with ``output_flag`` off (seen as
``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();`` ahead of the JSON of a
latency run at 38 operators). The stand-ins below print to file descriptor 1 from inside ``run``, as
HiGHS does; nothing may reach the process's stdout.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import highspy
import numpy as np

from odrp.core.colgen import Column, Master, price_units


class NoisyPricing:
    """The calls :func:`price_units` makes on a pricing model; ``run`` writes to fd 1 and finds nothing."""

    def changeColsCost(self, *args):
        pass

    def setOptionValue(self, *args):
        pass

    def clearSolver(self):
        pass

    def setSolution(self, *args):
        pass

    def run(self):
        os.write(1, b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n")
        return highspy.HighsStatus.kOk

    def getInfo(self):
        return SimpleNamespace(primal_solution_status=0, mip_dual_bound=1.0, objective_function_value=1.0)

    def getModelStatus(self):
        return highspy.HighsModelStatus.kOptimal


def test_a_pricing_run_prints_nothing_on_stdout(capfd):
    priced = price_units(NoisyPricing(), [(0, 0)], 1, np.array([1.0]), 1.0, (1,), 0.5)
    assert priced.least_reduced_cost is not None  # the run was read
    assert capfd.readouterr().out == ""


class NoisyHighs(highspy.Highs):
    def run(self):
        os.write(1, b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n")
        return super().run()


class WithNoisyHighs:
    """highspy, with :class:`NoisyHighs` as its solver."""

    Highs = NoisyHighs

    def __getattr__(self, name):
        return getattr(highspy, name)


def test_the_restricted_master_ip_prints_nothing_on_stdout(capfd):
    master = Master([1, 1], [2], artificial_cost=10.0)
    master.add(Column(0, (1, 1), 1.0))
    master.highspy = WithNoisyHighs()
    chosen = master.restricted_ip(5.0)
    assert chosen is not None and [c.counts for c in chosen] == [(1, 1)]
    assert capfd.readouterr().out == ""


def test_overlapping_silenced_blocks_in_threads_restore_stdout(capfd):
    """Two threads pricing at once open overlapping silenced blocks, closing in the order they opened:
    nothing they print reaches stdout, and stdout is the process's again afterwards (a per-block save
    and restore would have left /dev/null in its place)."""
    import threading

    from odrp.core.solvers.run import c_stdout_silenced

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with c_stdout_silenced():
            first_in.set()
            second_in.wait(5)
            os.write(1, b"first\n")
        first_out.set()

    def second():
        first_in.wait(5)
        with c_stdout_silenced():
            second_in.set()
            first_out.wait(5)
            os.write(1, b"second\n")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.write(1, b"after\n")
    assert capfd.readouterr().out == "after\n"
