"""Adapters keep the harness apart from the solver: ``stats_["startup_s"]``
(a fresh interpreter's start-up) and ``stats_["solver_time_s"]`` (the solver
call), and a study record charges a forked solver only what it adds.

Each adapter's tests skip when its solver's package is not installed.
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from odtstudy.external import (
    ConTreeClassifier,
    GOSDTClassifier,
    LicketySplitClassifier,
    PyDL85Classifier,
    STreeDClassifier,
)
from odtstudy.study import _memory
from odtstudy.study._worker import execute_run

ADAPTERS = [
    STreeDClassifier,
    PyDL85Classifier,
    GOSDTClassifier,
    LicketySplitClassifier,
    ConTreeClassifier,
]


def _binary(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(60, 7))
    return X, (X[:, 0] ^ X[:, 3] ^ (rng.random(60) < 0.1)).astype(int)


@pytest.mark.parametrize("cls", ADAPTERS, ids=lambda c: c.__name__)
def test_adapter_times_its_solver_call_apart(cls):
    pytest.importorskip(cls._module)
    X, y = _binary()
    clf = cls(max_depth=2, time_limit=30).fit(X, y)
    stats = clf.stats_
    spawned = cls is GOSDTClassifier and "pulp" in sys.modules
    assert (stats["startup_s"] > 0) if spawned else stats["startup_s"] == 0.0
    assert 0 < stats["solver_time_s"] < clf.fit_time_
    assert stats["startup_s"] + stats["solver_time_s"] <= clf.fit_time_


def test_pydl85_killed_under_one_second_reports_the_time_it_ran():
    pytest.importorskip("pydl85")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(400, 40))
    y = rng.integers(0, 2, size=400)
    clf = PyDL85Classifier(max_depth=6, time_limit=0.3).fit(X, y)
    assert clf.stats_["killed_at_limit"] and clf.status_ == "timeout"
    assert 0.1 < clf.stats_["solver_time_s"] < clf.fit_time_


_GOSDT_AFTER_PULP = """
import json, pulp
from odtstudy.external import GOSDTClassifier
from odtstudy.datasets import load_dataset
data = load_dataset("cp4im/zoo-1")
clf = GOSDTClassifier(max_depth=2, time_limit=60).fit(data.X, data.y)
print(json.dumps(dict(clf.stats_, fit_time=clf.fit_time_)))
"""


def test_gosdt_in_a_fresh_interpreter_reports_its_start_up():
    """With PuLP loaded, GOSDT runs in a fresh interpreter (it crashes
    beside PuLP): its start-up is reported apart from the solver call."""
    pytest.importorskip("gosdt")
    done = subprocess.run(
        [sys.executable, "-c", _GOSDT_AFTER_PULP],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    stats = json.loads(done.stdout.splitlines()[-1])
    assert stats["startup_s"] > 0.1  # an interpreter importing scikit-learn
    assert 0 < stats["solver_time_s"] < stats["fit_time"]
    assert stats["startup_s"] + stats["solver_time_s"] <= stats["fit_time"]


def _run(method, time_limit=30.0):
    return {
        "dataset": "cp4im/vote",
        "method": method,
        "params": {},
        "depth": 2,
        "fold": 0,
        "n_folds": 1,
        "seed": 0,
        "time_limit": time_limit,
        "max_thresholds": None,
    }


def test_record_solver_time_is_the_fit_time_for_an_in_process_learner():
    outcome = execute_run(_run("dl85"))
    assert outcome["solver_time_s"] == outcome["fit_time_s"]


def test_record_of_a_forked_solver_charges_what_it_adds_not_the_workers_pages():
    pytest.importorskip("licketysplit")
    ballast = np.ones(150 * 2**20, dtype=np.uint8)  # the worker's own pages
    assert _memory.current_rss_mb() > 150
    outcome = execute_run(_run("licketysplit"))
    assert outcome["status"] == "ok", outcome.get("error")
    assert outcome["stats"]["startup_s"] == 0.0
    assert 0 < outcome["solver_time_s"] < outcome["fit_time_s"]
    assert outcome["fit_mem_mb"] < 30  # was the fork's whole RSS
    assert ballast[-1] == 1
