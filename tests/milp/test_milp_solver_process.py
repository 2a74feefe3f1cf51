"""Solver child processes: stopped at their deadline, gone with their parent."""

import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import psutil
import pulp
import pytest

from odtstudy._deadline import Deadline
from odtstudy.milp._process import SolverProcess
from odtstudy.milp._solvers import solve


def test_run_reads_outputs_then_removes_the_directory():
    with SolverProcess() as proc:
        out = proc.file("out.txt")
        outcome = proc.run(
            ["sh", "-c", 'echo hello; echo done > "$0"', out],
            log=proc.file("log"),
            stop_at=None,
            kill_at=None,
        )
        assert outcome.returncode == 0 and not outcome.killed
        assert open(out).read() == "done\n"
        assert open(proc.file("log")).read() == "hello\n"
        path = proc.path
    assert not os.path.exists(path)


def test_solver_overrunning_its_deadline_is_killed():
    # a solver deaf to the graceful stop: SIGKILL ends it
    start = time.perf_counter()
    with SolverProcess() as proc:
        outcome = proc.run(
            ["sh", "-c", "trap '' INT; sleep 30"],
            log=proc.file("log"),
            stop_at=start + 0.3,
            kill_at=start + 0.6,
        )
    assert outcome.interrupted and outcome.killed
    assert time.perf_counter() - start < 2.0


# a solver that writes its incumbent when told to stop (as CBC does on SIGINT)
_GRACEFUL = textwrap.dedent(
    """
    import signal, sys, time

    def stop(*_):
        print("stopped", flush=True)
        sys.exit(3)

    signal.signal(signal.SIGINT, stop)
    time.sleep(30)
    """
)


def test_graceful_stop_lets_the_solver_finish():
    start = time.perf_counter()
    with SolverProcess() as proc:
        outcome = proc.run(
            [sys.executable, "-c", _GRACEFUL],
            log=proc.file("log"),
            stop_at=start + 0.3,
            kill_at=start + 10,
        )
        assert open(proc.file("log")).read() == "stopped\n"
    assert outcome.interrupted and not outcome.killed and outcome.returncode == 3
    assert time.perf_counter() - start < 2.0


_ORPHAN = textwrap.dedent(
    """
    from odtstudy.milp._process import SolverProcess
    proc = SolverProcess()
    print(proc.path, flush=True)
    proc.run(["sleep", "60"], log=proc.file("log"), stop_at=None, kill_at=None)
    """
)


def test_killed_parent_takes_its_solver_and_files_along():
    parent = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN], stdout=subprocess.PIPE, text=True
    )
    path = parent.stdout.readline().strip()
    end = time.perf_counter() + 10
    sleeper = []
    while not sleeper and time.perf_counter() < end:
        kids = psutil.Process(parent.pid).children(recursive=True)
        sleeper = [k for k in kids if k.name() == "sleep"]
        time.sleep(0.02)
    assert sleeper and os.path.isdir(path)
    parent.kill()
    parent.wait()
    parent.stdout.close()
    sleeper[0].wait(timeout=5)  # psutil.TimeoutExpired if it outlives its parent
    assert not sleeper[0].is_running()
    end = time.perf_counter() + 5
    while os.path.exists(path) and time.perf_counter() < end:
        time.sleep(0.02)
    assert not os.path.exists(path)


@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_bounds_of_every_kind_reach_the_solver(solver):
    # free, negative, shifted and integer bounds: min x - y + 2 z + w
    prob = pulp.LpProblem("bounds", pulp.LpMinimize)
    x = prob.add_variable("x", None, None)
    y = prob.add_variable("y", -3, 4.5)
    z = prob.add_variable("z", 1.5, None, cat="Integer")
    w = prob.add_variable("w", None, -1)
    prob += x - y + 2 * z + w
    prob += x >= -2.25
    prob += x + y <= 10
    prob += w >= -7
    info = solve(prob, solver, deadline=Deadline(30))
    assert info.proven_optimal and info.has_solution
    assert info.objective == pytest.approx(-2.25 - 4.5 + 4 - 7)
    values = [v.varValue for v in (x, y, z, w)]
    np.testing.assert_allclose(values, [-2.25, 4.5, 2, -7], atol=1e-6)
