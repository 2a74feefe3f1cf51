"""Time limits that hold: a MILP fit returns by 1.1 T + 1 s and leaves nothing behind.

CP4IM vote at depth 4 is far beyond what either solver proves in 2 s (the
OCT model has ~35 000 rows, the BinOCT one ~7 700 columns), so every fit
here stops at its limit. Besides the wall time, each test checks that the
returned tree is not worse than CART's, that no solver process survives the
fit and that no solver file is left in the temporary directory.
"""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np
import psutil
import pytest
from sklearn.tree import DecisionTreeClassifier

from odtstudy.datasets import load_dataset
from odtstudy.milp import BinOCTClassifier, OCTClassifier

LIMIT = 2.0
BOUND = LIMIT * 1.1 + 1.0
CASES = [
    (learner, solver)
    for learner in (BinOCTClassifier, OCTClassifier)
    for solver in ("cbc", "highs")
]


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Point every temporary file of this process (and its children) at tmp_path."""
    for key in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.setenv(key, str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _children():
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.ci_slow
@pytest.mark.parametrize(("learner", "solver"), CASES)
def test_fit_stops_at_the_limit_and_cleans_up(learner, solver, private_tmp):
    data = load_dataset("vote")
    X, y = np.asarray(data.X, dtype=float), data.y
    before = _children()
    est = learner(max_depth=4, time_limit=LIMIT, solver=solver, random_state=0)
    start = time.perf_counter()
    est.fit(X, y)
    wall = time.perf_counter() - start
    assert wall <= BOUND, f"fit took {wall:.2f} s on a {LIMIT:g} s limit"
    assert not est.optimal_ and est.status_ == "timeout"
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    assert est.objective_ <= np.sum(cart.predict(X) != y)
    assert est.training_error(X, y) == est.objective_
    assert _children() - before == set()
    assert list(private_tmp.iterdir()) == []


_KILLED_FIT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from odtstudy.datasets import load_dataset
    from odtstudy.milp import BinOCTClassifier, OCTClassifier

    learner = {"binoct": BinOCTClassifier, "oct": OCTClassifier}[sys.argv[1]]
    data = load_dataset("vote")
    print("fitting", flush=True)
    learner(max_depth=4, time_limit=60, solver=sys.argv[2]).fit(
        np.asarray(data.X, dtype=float), data.y
    )
    """
)


def _solver_started(proc, timeout):
    """Descendants of ``proc`` once its solver process runs (or at ``timeout``)."""
    end = time.perf_counter() + timeout
    seen = set()
    while time.perf_counter() < end:
        try:
            kids = psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            break
        seen |= {(k.pid, k.create_time()) for k in kids}
        if any("cbc" in k.name() or "python" in k.name() for k in kids):
            return seen
        time.sleep(0.05)
    return seen


def _running(pid, created) -> bool:
    """True while the process ``pid`` started at ``created`` runs (not a zombie)."""
    try:
        process = psutil.Process(pid)
        return (
            process.create_time() == created
            and process.status() != psutil.STATUS_ZOMBIE
        )
    except psutil.NoSuchProcess:
        return False


@pytest.mark.ci_slow
@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_killed_fit_leaves_no_solver_and_no_file(solver, private_tmp):
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED_FIT, "oct", solver],
        stdout=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(private_tmp)},
    )
    try:
        assert proc.stdout.readline().strip() == b"fitting"
        seen = _solver_started(proc, timeout=30)
        assert seen, "the solver never started"
        assert list(private_tmp.iterdir()), "the solver's files are not there"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    end = time.perf_counter() + 5
    alive = seen
    while alive and time.perf_counter() < end:
        alive = {(pid, created) for pid, created in alive if _running(pid, created)}
        time.sleep(0.05)
    assert not alive, "solver processes outlived the killed fit"
    while list(private_tmp.iterdir()) and time.perf_counter() < end:
        time.sleep(0.05)
    assert list(private_tmp.iterdir()) == []
