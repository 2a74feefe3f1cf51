"""One memory measure for every learner (``odtstudy.study._memory``): a fit is
charged what it adds, whether it runs in this process, in a forked child or
in a fresh interpreter; and a solver call's time is kept apart from the
harness's start-up (``odtstudy._child``)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
import time

import numpy as np
import psutil
import pytest

from odtstudy._child import (
    call_in_fork,
    call_in_fresh_interpreter,
    call_in_process,
)
from odtstudy._procmem import harness_children
from odtstudy.study import _memory

ALLOCATED_MB = 120
TOLERANCE_MB = 25


def _hold(mb: int, seconds: float) -> int:
    """Allocate and touch ``mb`` MB, hold them ``seconds`` (so the sampler
    sees them), return a small value."""
    block = np.ones(mb * 2**20, dtype=np.uint8)
    time.sleep(seconds)
    return int(block[::4096].sum() > 0)


@pytest.fixture
def large_parent_array():
    """200 MB held and touched by this process while a child runs."""
    array = np.ones(200 * 2**20, dtype=np.uint8)
    yield array
    del array


@pytest.fixture
def tests_on_child_path(monkeypatch):
    """A fresh interpreter can unpickle tasks defined in this module."""
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.path.dirname(here)
    path = os.environ.get("PYTHONPATH")
    paths = [here, shared] + ([path] if path else [])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))


def _measured(call):
    memory = _memory.FitMemory()
    with memory:
        result = call()
    return memory, result


def test_in_process_fit_is_charged_what_it_allocates():
    memory, result = _measured(lambda: call_in_process(lambda: _hold(ALLOCATED_MB, 0)))
    assert result.value == 1 and result.startup_s == 0.0
    assert abs(memory.fit_mb - ALLOCATED_MB) < TOLERANCE_MB


def test_forked_child_is_charged_its_own_allocation_not_the_parents(
    large_parent_array,
):
    rss = _memory.current_rss_mb()
    assert rss > 200  # the fork maps all of it
    memory, result = _measured(
        lambda: call_in_fork(lambda: _hold(ALLOCATED_MB, 0.4), 30)
    )
    assert result.finished and result.value == 1
    assert abs(memory.fit_mb - ALLOCATED_MB) < TOLERANCE_MB


def test_forked_child_allocating_nothing_is_charged_nothing(large_parent_array):
    memory, result = _measured(
        lambda: call_in_fork(lambda: _hold(0, 0.4) + int(large_parent_array[7]), 30)
    )
    assert result.finished and result.value == 1
    assert memory.fit_mb < 10


def test_fresh_interpreter_is_charged_its_task_and_timed_apart_from_its_start_up(
    tests_on_child_path,
):
    task = functools.partial(_hold, ALLOCATED_MB, 0.3)
    started = time.perf_counter()
    memory, call = _measured(
        lambda: call_in_fresh_interpreter(task, 120, preload=["sklearn.tree"])
    )
    elapsed = time.perf_counter() - started
    assert call.finished and call.value == 1
    assert abs(memory.fit_mb - ALLOCATED_MB) < TOLERANCE_MB
    assert call.startup_s > 0.05  # an interpreter, numpy and scikit-learn
    assert call.solver_time_s >= 0.3  # the task's sleep, not its start-up
    assert call.startup_s + call.solver_time_s <= elapsed
    memory, call = _measured(
        lambda: call_in_fresh_interpreter(functools.partial(_hold, 0, 0.3), 120)
    )
    assert call.finished and memory.fit_mb < 10


def test_forked_child_killed_at_its_timeout_reports_the_time_it_ran():
    call = call_in_fork(lambda: _hold(0, 30), 0.5)
    assert not call.finished and call.value is None
    assert call.startup_s == 0.0 and 0.3 < call.solver_time_s < 5.0


def test_runner_view_counts_a_forked_childs_unique_pages(large_parent_array):
    """The runner's sample of a worker's tree (:func:`tree_rss_mb`) counts
    the worker's RSS once, not again for its forked child."""
    seen = []

    def sample_while_the_child_runs():
        time.sleep(0.3)
        seen.append(_memory.tree_rss_mb(psutil.Process()))

    thread = threading.Thread(target=sample_while_the_child_runs)
    thread.start()
    call_in_fork(lambda: _hold(0, 0.6), 30)
    thread.join()
    assert seen and seen[0] < _memory.current_rss_mb() + 10


def test_harness_child_is_not_charged_before_its_task_starts():
    pid = os.getpid()
    with harness_children.lock:
        harness_children.starting(pid)
    try:
        assert harness_children.baseline(pid) == (True, None)
        harness_children.call_began(pid, 12.5)
        assert harness_children.baseline(pid) == (True, 12.5)
    finally:
        harness_children.ended(pid)
    assert harness_children.baseline(pid) == (False, None)


def test_memory_rule_is_one_sentence():
    rule = _memory.MEMORY_RULE
    assert rule.endswith(".") and rule.count(". ") == 0 and "USS" in rule


def test_the_sampler_lists_descendants_only_while_there_is_a_child():
    # in a fresh interpreter: a test process may hold other tests' children
    code = """
import subprocess, time
from odtstudy.study import _memory
calls = []
_memory.descendants_mb = lambda p: calls.append(1) or 0.0
assert not _memory.has_children()
with _memory.ChildrenSampler(interval=0.005):
    time.sleep(0.1)
assert calls == [], calls  # a fit without a child costs no /proc scan
child = subprocess.Popen(["sleep", "0.6"])
assert _memory.has_children()
with _memory.ChildrenSampler(interval=0.005):
    time.sleep(0.45)
# listed while the child lives, at most every SCAN_S (0.1 s), not 90 times
assert 2 <= len(calls) <= 6, calls
child.wait()
assert not _memory.has_children()
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
