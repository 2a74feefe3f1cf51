"""Hardening of BinOCT, OCT and CP-SAT: depth bounds, a crashing CBC, and
time limits that hold on big instances (model building included).

Each reproducer runs in a child interpreter (``subproc.run_snippet``), so a
crash or a hang fails the test instead of the test run.
"""

import pytest
from subproc import run_ok

HEADER = """
import time, warnings
import numpy as np
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.milp import BinOCTClassifier, OCTClassifier
from odtstudy.cp import CPSATClassifier
warnings.simplefilter("ignore")
"""


def _run(body, timeout=60):
    return "\n".join(run_ok(HEADER + body, timeout))


LEARNERS = "(BinOCTClassifier, OCTClassifier, CPSATClassifier)"


def test_max_depth_above_the_static_bound_is_rejected():
    out = _run(
        f"""
data = load_dataset("anneal")
for learner in {LEARNERS}:
    try:
        learner(max_depth=50, time_limit=10).fit(data.X, data.y)
    except ValueError as e:
        print("RAISED", e)
"""
    )
    assert out.count("RAISED The 'max_depth' parameter") == 3
    assert out.count("in the range [1, 20]") == 3


def test_max_depth_too_deep_for_the_data_names_the_deepest_depth():
    out = _run(
        f"""
data = load_dataset("anneal")
start = time.perf_counter()
for learner in {LEARNERS}:
    try:
        learner(max_depth=20, time_limit=10).fit(data.X, data.y)
    except ValueError as e:
        print("RAISED", e)
print("SECONDS", time.perf_counter() - start)
"""
    )
    assert out.count("RAISED max_depth=20 is too deep") == 3
    assert out.count("use max_depth <=") == 3
    assert float(out.split("SECONDS")[1]) < 3.0


def _fake_cbc_snippet(crash_on):
    """A CBC that dies of SIGSEGV when its arguments contain ``crash_on``."""
    return f"""
import os, sys, tempfile
from odtstudy.milp import _cbc, _solvers
real = _cbc.cbc_executable()
folder = tempfile.mkdtemp()
fake = os.path.join(folder, "cbc")
with open(fake, "w") as fh:
    fh.write('#!/bin/sh\\ncase "$*" in *{crash_on}*) kill -SEGV $$;; esac\\n'
             f'exec {{real}} "$@"\\n')
os.chmod(fake, 0o755)
_cbc.cbc_executable = _solvers.cbc_executable = lambda: fake
data = load_dataset("uci/iris")
before = set(os.listdir(tempfile.gettempdir()))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    clf = BinOCTClassifier(max_depth=1, solver="cbc", time_limit=30).fit(data.X, data.y)
left = {{f for f in set(os.listdir(tempfile.gettempdir())) - before
        if f.endswith((".mps", ".mst")) or f.startswith("odtstudy_cbc_")}}
print("STATUS", clf.status_, clf.optimal_, clf.stats_["returned"])
print("CRASH", clf.stats_["solver_crashed"], clf.stats_["retried_without_warm_start"])
print("WARNED", any("crashed (SIGSEGV)" in str(w.message) for w in caught))
print("LEFT", len(left))
"""


def test_cbc_crash_with_warm_start_is_detected_and_retried_without_it():
    out = _run(_fake_cbc_snippet("-mips"))
    assert "STATUS optimal True milp" in out
    assert "CRASH SIGSEGV True" in out
    assert "WARNED True" in out and "LEFT 0" in out


def test_cbc_crash_without_a_way_out_is_reported_not_hidden():
    out = _run(_fake_cbc_snippet("-solve"))
    assert "STATUS feasible False cart" in out  # the CART warm start, not optimal
    assert "CRASH SIGSEGV True" in out
    assert "WARNED True" in out and "LEFT 0" in out


def _timed_fit(learner, dataset, depth, limit, params="", binarize=False):
    prep = "X = Binarizer(max_thresholds=8).fit_transform(X)" if binarize else ""
    return f"""
data = load_dataset({dataset!r})
X, y = np.asarray(data.X, dtype=float), data.y
{prep}
start = time.perf_counter()
clf = {learner}(max_depth={depth}, time_limit={limit}{params}).fit(X, y)
wall = time.perf_counter() - start
print("WALL", wall, "BOUND", {limit} * 1.1 + 1, clf.status_, clf.objective_)
assert clf.tree_ is not None and clf.objective_ is not None
"""


def _within(out):
    wall, bound = float(out.split()[1]), float(out.split()[3])
    assert wall <= bound, out


@pytest.mark.ci_slow
@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_oct_diabetes_holds_its_limit(solver):
    _within(
        _run(_timed_fit("OCTClassifier", "uci/diabetes", 3, 2, f", solver={solver!r}"))
    )


def test_cpsat_big_model_falls_back_to_the_hint_in_time():
    _within(_run(_timed_fit("CPSATClassifier", "pendigits", 8, 2)))


@pytest.mark.slow
@pytest.mark.parametrize(
    "learner, dataset, depth",
    [
        ("BinOCTClassifier", "uci/spambase", 4),
        ("BinOCTClassifier", "uci/letter", 4),
        ("OCTClassifier", "uci/spambase", 4),
    ],
)
@pytest.mark.parametrize("solver", ["cbc", "highs"])
def test_big_milp_instances_hold_the_limit(learner, dataset, depth, solver):
    _within(
        _run(
            _timed_fit(learner, dataset, depth, 5, f", solver={solver!r}"), timeout=120
        )
    )


@pytest.mark.slow
def test_oct_diabetes_depth3_cbc_five_seconds():
    _within(_run(_timed_fit("OCTClassifier", "uci/diabetes", 3, 5, ", solver='cbc'")))


@pytest.mark.slow
def test_cpsat_pendigits_depth8_five_seconds():
    _within(_run(_timed_fit("CPSATClassifier", "pendigits", 8, 5), timeout=120))
