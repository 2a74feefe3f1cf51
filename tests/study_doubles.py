"""Learner test doubles for the study runner, registered on import.

Importable from a subprocess (``PYTHONPATH=tests``) so the command-line tests
can run them too.
"""

import os
import subprocess
import tempfile
import time

from odtstudy._incumbent import report_incumbent
from odtstudy.cart import CARTClassifier
from odtstudy.study import MethodSpec, StudyConfig, register_method


def unit_config(methods, **kw):
    """A small study of the registered ``methods`` (overrides in ``kw``)."""
    base = dict(
        name="unit",
        datasets=["zoo-1", "uci/iris"],
        methods=[MethodSpec(m, m) for m in methods],
        depths=[1, 2],
        folds=2,
        seeds=[0],
        time_limit=0.5,
        grace_s=1.5,
    )
    base.update(kw)
    return StudyConfig(**base)


class SleepyClassifier(CARTClassifier):
    """CART after a short sleep: runs that take a moment, for signal tests."""

    def _fit(self, X, y, sample_weight):
        time.sleep(0.4)
        return super()._fit(X, y, sample_weight)


class OverrunningClassifier(CARTClassifier):
    """Ignores its time limit and never reports a tree."""

    def _fit(self, X, y, sample_weight):
        time.sleep(120)


class IncumbentThenHang(CARTClassifier):
    """Reports CART's tree as its incumbent, then ignores its time limit."""

    def _fit(self, X, y, sample_weight):
        result = super()._fit(X, y, sample_weight)
        report_incumbent(self, result.tree, result.objective)
        time.sleep(120)


class SolverSpawner(CARTClassifier):
    """Starts a 'solver' child that writes a temp file, then overruns.

    The child's pid and file name go to ``$ODTSTUDY_TEST_SPAWN_LOG``.
    """

    def _fit(self, X, y, sample_weight):
        handle, name = tempfile.mkstemp(suffix=".mps")
        os.write(handle, b"x" * 4096)
        os.close(handle)
        child = subprocess.Popen(["sleep", "300"])
        with open(os.environ["ODTSTUDY_TEST_SPAWN_LOG"], "a") as log:
            log.write(f"{child.pid} {name}\n")
        child.wait()


for _name, _cls in [
    ("test-sleepy", SleepyClassifier),
    ("test-overrun", OverrunningClassifier),
    ("test-incumbent-hang", IncumbentThenHang),
    ("test-spawner", SolverSpawner),
]:
    register_method(_name, _cls, replace=True)
