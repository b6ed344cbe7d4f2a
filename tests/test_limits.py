"""Time and memory limits as contracts: the watchdog, the memory cap, and what the CLI makes of them.

The test doubles stand for the three ways a method can ignore its clock: a sleep, a loop in Python,
and a native call that never returns to the interpreter (libc's ``sleep`` through ctypes). Every
bound asserted below is the contract itself: the limit plus :data:`odrp.core.limits.GRACE`, plus a
margin for forking and reaping (0.5 s).
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from odrp.cli import main
from odrp.core.errors import InputError
from odrp.core.exact import ExactOutcome
from odrp.core.limits import GRACE, HEADROOM, MemoryLimitExceeded, MethodDied, TimeLimitKilled, data_size, run_limited
from odrp.core.memory import GB, ModelTooLarge, budget, check_model, estimate, gigabytes, memory_budget
from odrp.core.method import Heuristic, HeuristicOutcome
from odrp.core.solvers import SolverRun
from odrp.registry import KINDS
from odrp.run import WARM_START_SHARE, run_within_limits
from tests.test_odrp_evaluator import SPLIT, TINY

MARGIN = 0.5


def _room(gigabytes_more: float) -> int:
    """A budget ``gigabytes_more`` GB above what this process already holds (a budget counts the whole
    process, and a long test run holds a few GB of its own)."""
    return int(data_size() + HEADROOM + gigabytes_more * GB)


def _sleeps() -> None:
    time.sleep(30)


def _loops() -> None:
    while True:
        pass


def _stuck_in_c() -> None:
    ctypes.CDLL(None).sleep(30)


@pytest.mark.parametrize("stuck", [_sleeps, _loops, _stuck_in_c], ids=["sleep", "python-loop", "native-call"])
def test_the_watchdog_stops_a_run_that_ignores_its_limit(stuck):
    began = time.perf_counter()
    with pytest.raises(TimeLimitKilled, match="did not return"):
        run_limited(stuck, time_limit=1.0)
    assert time.perf_counter() - began <= 1.0 + GRACE + MARGIN


def test_the_watchdog_also_stops_the_runs_subprocesses(tmp_path):
    marker = tmp_path / "child.pid"

    def spawns() -> None:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        marker.write_text(str(pid))
        time.sleep(30)

    with pytest.raises(TimeLimitKilled):
        run_limited(spawns, time_limit=0.5)
    stat = Path(f"/proc/{int(marker.read_text())}/stat")
    time.sleep(0.2)
    state = stat.read_text().split()[2] if stat.exists() else "gone"
    assert state in ("gone", "Z")  # killed with its parent (a zombie waits for init to reap it)


def test_a_value_and_an_exception_come_back_from_the_child():
    assert run_limited(lambda a, b=0: a + b, 2, b=3) == 5
    with pytest.raises(KeyError, match="lost"):
        run_limited(lambda: {}["lost"])
    with pytest.raises(InputError) as raised:  # the one-line error keeps its three parts
        run_limited(lambda: (_ for _ in ()).throw(InputError("f.json", "nodes[0].slots", "an integer >= 1")))
    assert (raised.value.source, raised.value.field) == ("f.json", "nodes[0].slots")


def test_a_process_that_dies_is_reported_not_fatal():
    with pytest.raises(MethodDied, match=r"exit code 7"):
        run_limited(lambda: os._exit(7))


def test_an_allocation_past_the_budget_ends_the_run_not_the_machine():
    def hog() -> int:
        blocks = [bytearray(50 * 1024**2) for _ in range(200)]  # 10 GB, far past a 1 GB budget
        return len(blocks)

    limit = _room(1)
    began = time.perf_counter()
    with pytest.raises(MemoryLimitExceeded, match=f"memory budget of {gigabytes(limit)}"):
        run_limited(hog, memory_limit=limit)
    assert time.perf_counter() - began < 10


def test_a_budget_below_the_toolkits_own_size_is_refused_before_the_run():
    with pytest.raises(MemoryLimitExceeded, match="the toolkit itself uses"):
        run_limited(lambda: 1, memory_limit=1024**2)


def test_a_model_over_the_budget_is_refused_with_its_size():
    assert estimate(10, 10, 100) > 0
    check_model(1_000, 1_000, 10_000, "a small model")  # far below the default budget: no error
    with memory_budget(GB):
        assert budget() == GB
        with pytest.raises(ModelTooLarge) as refused:
            check_model(10**7, 10**6, 10**8, "the paper formulation")
    message = str(refused.value)
    assert message.startswith("command line: --memory-limit: ") and "10,000,000 variables" in message
    assert "the memory budget is 1 GB" in message and "\n" not in message


# ---------------------------------------------------------------------------------------- the CLI


def _with_exact(monkeypatch, exact) -> None:
    monkeypatch.setitem(KINDS, "odrp", dataclasses.replace(KINDS["odrp"], exact=exact))


def _tiny(tmp_path) -> str:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return str(path)


def test_the_cli_returns_a_time_limit_result_when_the_solver_is_stuck(tmp_path, monkeypatch, capsys):
    def stuck(instance, **_):
        _stuck_in_c()

    _with_exact(monkeypatch, stuck)
    began = time.perf_counter()
    code = main(["solve", _tiny(tmp_path), "--time-limit", "1", "--json"])
    assert time.perf_counter() - began <= 1.0 + GRACE + MARGIN
    out = json.loads(capsys.readouterr().out)
    # the start heuristics ran before the stuck solver: their best placement is the verified incumbent
    assert code == 0 and out["status"] == "time_limit" and out["verified"] and out["solution"] is not None
    assert "did not return" in out["message"] and "last ones it reported" in out["message"]


def test_the_cli_refuses_a_model_over_the_memory_budget_with_exit_2(tmp_path, monkeypatch, capsys):
    def huge(instance, **_):
        check_model(10**8, 10**7, 10**9, "a huge model")
        raise AssertionError("built a model over the budget")

    _with_exact(monkeypatch, huge)
    limit = _room(2)
    code = main(["solve", _tiny(tmp_path), "--memory-limit", repr(limit / GB)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and len(err[0]) <= 1000
    assert err[0].startswith("error: command line: --memory-limit: at least") and "budget is" in err[0]


def test_the_cli_ends_a_run_past_its_memory_budget_with_exit_2(tmp_path, monkeypatch, capsys):
    def grows(instance, **_):
        blocks = [bytearray(50 * 1024**2) for _ in range(200)]
        raise AssertionError(f"allocated {len(blocks)} blocks past the budget")

    _with_exact(monkeypatch, grows)
    code = main(["solve", _tiny(tmp_path), "--memory-limit", repr(_room(1) / GB)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "needed more than the memory budget of" in err[0]


def test_a_warm_start_heuristic_shares_the_limit_with_the_exact_method(tmp_path, monkeypatch, capsys):
    """The heuristic uses its whole share, the exact method the rest: together within the one limit."""

    def slow_split(instance, *, seed=0, time_limit=None):
        assert time_limit == WARM_START_SHARE * 2
        time.sleep(time_limit)
        return HeuristicOutcome(SPLIT, None, {})

    def exact(instance, *, solver, time_limit, mip_gap, **_):
        assert time_limit <= (1 - WARM_START_SHARE) * 2
        time.sleep(time_limit)
        run = SolverRun("test", "time_limit", None, None, None, time_limit, "stopped at the limit")
        return ExactOutcome(run, None, {})

    heuristic = Heuristic("slow_split", ("odrp",), slow_split, "test double", scores_itself=False)
    monkeypatch.setattr("odrp.run.heuristics", lambda: {"slow_split": heuristic})
    _with_exact(monkeypatch, exact)
    began = time.perf_counter()
    result = run_within_limits(KINDS["odrp"], KINDS["odrp"].load(TINY, "tiny"), warm_start="slow_split", time_limit=2)
    assert time.perf_counter() - began <= 2.0 + GRACE + MARGIN
    assert result.status == "time_limit" and result.metrics["method_stats"]["warm_start"]["source"] == "slow_split"
    assert result.runtime_s <= 2.0 + MARGIN
