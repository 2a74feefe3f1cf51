"""A runner killed with SIGKILL leaves no process behind: the preflight fit's
child, the run's worker and what the learner started all die with it, and the
next runner resumes the study from the records already written."""

import os
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="parent-death signals are Linux's"
)

# Sleeps in fit (with a `sleep` child of its own) where $ORPHANS_SLEEP_IN says:
# "preflight" (the 24-row preflight fit), "run" (a study's run) or nowhere.
# Each sleeping fit logs "<its pid> <its session> <its child's pid>".
LEARNER = """
import os
import subprocess
import time

from sklearn.tree import DecisionTreeClassifier


class Sleeper(DecisionTreeClassifier):
    def fit(self, X, y, sample_weight=None):
        where = "preflight" if len(X) == 24 else "run"
        if os.environ.get("ORPHANS_SLEEP_IN") == where:
            child = subprocess.Popen(["sleep", "60"])
            with open(os.environ["ORPHANS_LOG"], "a") as log:
                log.write(f"{os.getpid()} {os.getsid(0)} {child.pid}\\n")
            time.sleep(60)
        return super().fit(X, y, sample_weight)
"""

STUDY = """
[study]
name = "orphans"
datasets = ["vote"]
methods = ["cart", "sleeper"]
depths = [2]
folds = 2
time_limit = 6
grace_s = 1
workers = 1

[methods.sleeper]
target = "orphans_learner:Sleeper"
data = "binary"
exact = false
"""


def _runner(tmp_path, sleep_in):
    (tmp_path / "orphans_learner.py").write_text(textwrap.dedent(LEARNER))
    toml = tmp_path / "study.toml"
    toml.write_text(textwrap.dedent(STUDY))
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        ORPHANS_SLEEP_IN=sleep_in,
        ORPHANS_LOG=str(tmp_path / "fits.log"),
    )
    args = [sys.executable, "-m", "odtstudy.cli", "study", str(toml)]
    args += ["--output", str(tmp_path / "out"), "--quiet"]
    return subprocess.Popen(args, env=env, cwd=tmp_path, stderr=subprocess.PIPE)


def _sleeping_fit(tmp_path, runner, timeout=60):
    """``(pid, session, child pid)`` of the first sleeping fit, once logged."""
    log = tmp_path / "fits.log"
    end = time.monotonic() + timeout
    while time.monotonic() < end and runner.poll() is None:
        if log.exists() and log.read_text().endswith("\n"):
            return tuple(map(int, log.read_text().split()[:3]))
        time.sleep(0.05)
    raise AssertionError(f"no fit slept: {runner.stderr.read().decode()[-2000:]}")


def _alive(process) -> bool:
    """True while ``process`` runs (a zombie is not: it has ended)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _kill_runner(runner, descendants, seconds=3.0) -> list:
    """SIGKILL the runner; the descendants still alive ``seconds`` later."""
    runner.kill()
    runner.wait()
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(map(_alive, descendants)):
        time.sleep(0.05)
    survivors = [p for p in descendants if _alive(p)]
    for process in survivors:  # leave nothing behind, whatever the outcome
        process.kill()
    return survivors


def _descendants(runner, *pids) -> list:
    found = psutil.Process(runner.pid).children(recursive=True)
    assert {*pids} <= {p.pid for p in found}
    return found


def test_killed_runner_leaves_no_preflight_fit(tmp_path):
    runner = _runner(tmp_path, "preflight")
    pid, session, child = _sleeping_fit(tmp_path, runner)
    assert session != pid  # the preflight's fork, not a run's worker
    descendants = _descendants(runner, pid, child)
    survivors = _kill_runner(runner, descendants)
    assert survivors == [], [p.pid for p in survivors]


def test_killed_runner_leaves_no_worker_and_the_study_resumes(tmp_path):
    runner = _runner(tmp_path, "run")
    pid, session, child = _sleeping_fit(tmp_path, runner)
    assert session == pid  # a run's worker: it leads its session
    descendants = _descendants(runner, pid, child)
    survivors = _kill_runner(runner, descendants)
    assert survivors == [], [p.pid for p in survivors]

    results = tmp_path / "out" / "orphans" / "results.jsonl"
    kept = results.read_text().splitlines()[1:]  # after the format header
    assert len(kept) == 1 and '"method": "cart"' in kept[0]  # before the sleeper
    resumed = _runner(tmp_path, "")
    _, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err.decode()[-2000:]
    records = results.read_text().splitlines()[1:]
    assert len(records) == 4 and records[0] == kept[0]
    assert sum('"method": "sleeper"' in record for record in records) == 2
