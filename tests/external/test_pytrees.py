"""pytrees-rs adapters: the brute-force optimum, the time limit, anytime traces.

Skipped when pytrees-rs is not installed (``pip install "odtstudy[external]"``).
"""

import numpy as np
import psutil
import pytest
from bruteforce import optimal_error
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.external import (
    PyTreesConTreeAnytimeClassifier,
    PyTreesConTreeClassifier,
    PyTreesDL85AnytimeClassifier,
    PyTreesDL85Classifier,
    _pytrees,
)
from odtstudy.tree import Tree

pytest.importorskip("pytrees")

BINARY = [PyTreesDL85Classifier, PyTreesDL85AnytimeClassifier]
NUMERIC = [PyTreesConTreeClassifier, PyTreesConTreeAnytimeClassifier]
ANYTIME = [PyTreesDL85AnytimeClassifier, PyTreesConTreeAnytimeClassifier]
LIMIT = 2.0


def _random(seed, numeric):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(10, 41)), int(rng.integers(2, 5))
    if numeric:
        X = rng.normal(size=(n, m)).round(1)
    else:
        X = rng.integers(0, 2, size=(n, m))
    y = rng.integers(0, 2 + seed % 2, size=n)
    return X, y, int(rng.integers(1, 4))


def _hard(cls):
    """An instance none of them solves in LIMIT seconds."""
    if cls in NUMERIC:
        data, depth = load_dataset("uci/spambase"), 4
    else:
        data, depth = load_dataset("splice-1"), 6
    return data.X, data.y, depth


def _no_children():
    children = psutil.Process().children(recursive=True)
    return all(c.status() == psutil.STATUS_ZOMBIE for c in children)


def _check_certified(clf, X, y, best):
    """A tree is certified only when it is optimal; otherwise the adapter
    says why (pytrees-rs 2.0's depth-2 solver can return a worse tree than
    the optimum it reports)."""
    assert clf.objective_ >= best
    assert clf.objective_ == clf.training_error(X, y)
    if clf.optimal_:
        assert clf.objective_ == clf.lower_bound_ == best
    else:
        assert "claim_refuted" in clf.stats_ and clf.status_ == "feasible"


@pytest.mark.parametrize("cls", [*BINARY, *NUMERIC], ids=lambda c: c.__name__)
def test_contract(cls):
    X, y, _ = _random(0, numeric=cls in NUMERIC)
    labels = np.array(["no", "yes", "maybe"])[y]
    clf = cls(max_depth=2, time_limit=20).fit(X, labels)
    assert isinstance(clf.tree_, Tree) and clf.tree_.depth <= 2
    assert clf.objective_ == clf.training_error(X, labels)
    assert clf.stats_["tool"] == "pytrees-rs" and clf.fit_time_ > 0
    assert clf.objective_family_ == "misclassification" and cls._exact
    assert clf.optimal_ and clf.lower_bound_ == clf.objective_
    assert clf.stats_["tool_status"] == "optimal"
    assert ("anytime" in clf.stats_) == (cls in ANYTIME)
    assert clone(clf).get_params() == clf.get_params()
    assert not has_fit_parameter(clf, "sample_weight")
    assert cls._requires_binary == (cls in BINARY)


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.__name__)
def test_binary_adapters_refuse_numeric_data(cls):
    X, y, _ = _random(0, numeric=True)
    with pytest.raises(ValueError, match="Binarizer"):
        cls(max_depth=2).fit(X, y)


@pytest.mark.parametrize("seed", range(10))
def test_dl85_equals_brute_force_and_dl85(seed):
    X, y, depth = _random(seed, numeric=False)
    best = optimal_error(X, y, depth)
    assert DL85Classifier(max_depth=depth).fit(X, y).objective_ == best
    for cls in BINARY:
        clf = cls(max_depth=depth, time_limit=30).fit(X, y)
        _check_certified(clf, X, y, best)
        exact = cls(max_depth=depth, time_limit=30, fast_d2=False).fit(X, y)
        assert exact.optimal_ and exact.objective_ == best


@pytest.mark.parametrize("seed", range(10))
def test_contree_equals_brute_force_and_dl85_on_every_threshold(seed):
    X, y, depth = _random(seed, numeric=True)
    best = optimal_error(X, y, depth)
    reference = DL85Classifier(max_depth=depth, thresholds="all").fit(X, y)
    assert reference.objective_ == best
    for cls in NUMERIC:
        clf = cls(max_depth=depth, time_limit=30).fit(X, y)
        assert clf.optimal_ and clf.objective_ == clf.lower_bound_ == best


def test_min_samples_leaf_is_pytrees_min_sup():
    X, y, _ = _random(3, numeric=True)
    best = optimal_error(X, y, 2, min_sup=5)
    clf = PyTreesConTreeClassifier(max_depth=2, min_samples_leaf=5).fit(X, y)
    assert clf.optimal_ and clf.objective_ == best
    assert clf.tree_.n_samples[clf.tree_.feature < 0].min() >= 5


def test_a_tree_worse_than_the_reported_optimum_is_not_certified():
    # pytrees-rs 2.0.0's depth-2 solver returns here a tree with 8 errors
    # while reporting the optimum, 6
    rng = np.random.default_rng(256)
    n, m = int(rng.integers(2, 40)), int(rng.integers(1, 5))
    X = rng.integers(0, 2, (n, m))
    y = rng.integers(0, 2, n)
    y[0], y[-1] = 0, 1
    best = optimal_error(X, y, 3)
    clf = PyTreesDL85Classifier(max_depth=3).fit(X, y)
    _check_certified(clf, X, y, best)
    if not clf.optimal_:
        assert clf.stats_["tool_error"] == best < clf.objective_


@pytest.mark.ci_slow
@pytest.mark.parametrize("cls", [*BINARY, *NUMERIC], ids=lambda c: c.__name__)
def test_limit_held_on_a_hard_instance(cls):
    X, y, depth = _hard(cls)
    clf = cls(max_depth=depth, time_limit=LIMIT).fit(X, y)
    assert clf.fit_time_ <= LIMIT * 1.1 + 1
    assert not clf.optimal_ and clf.status_ == "timeout"
    assert clf.objective_ == clf.training_error(X, y)
    assert _no_children()
    if cls in ANYTIME and not clf.stats_["killed_at_limit"]:
        trace = np.array(clf.stats_["anytime"])
        times, objectives = trace[:, 0], trace[:, 1]
        assert len(trace) >= 2, "the anytime search improved its tree once at least"
        assert np.all(np.diff(times) >= 0) and np.all(np.diff(objectives) < 0)
        assert 0 <= times[0] and times[-1] <= clf.fit_time_
        assert objectives[-1] == clf.objective_


def test_a_solver_past_its_limit_is_killed(monkeypatch):
    # pytrees told to take all the time it wants: the forked child is killed
    solve = _pytrees._solve

    def unlimited(estimator, *args):
        estimator.max_time = _pytrees._NO_LIMIT
        return solve(estimator, *args)

    monkeypatch.setattr(_pytrees, "_solve", unlimited)
    X, y, depth = _hard(PyTreesDL85Classifier)
    clf = PyTreesDL85Classifier(max_depth=depth, time_limit=1.0).fit(X, y)
    assert clf.stats_["killed_at_limit"] and clf.stats_["no_solver_tree"]
    assert clf.fit_time_ <= 1.0 * 1.1 + 1
    assert clf.status_ == "timeout" and clf.tree_.n_leaves == 1
    assert _no_children()


@pytest.mark.parametrize(
    "cls, name, depth",
    [
        (PyTreesDL85AnytimeClassifier, "tic-tac-toe", 3),
        (PyTreesConTreeAnytimeClassifier, "uci/wine", 3),
    ],
    ids=["dl85", "contree"],
)
def test_anytime_never_below_the_proven_optimum(cls, name, depth):
    data = load_dataset(name)
    thresholds = {"thresholds": "all"} if cls in NUMERIC else {}
    best = DL85Classifier(max_depth=depth, **thresholds).fit(data.X, data.y)
    assert best.optimal_
    for limit in (0.2, 30):
        clf = cls(max_depth=depth, time_limit=limit).fit(data.X, data.y)
        trace = clf.stats_.get("anytime", [])
        assert all(obj >= best.objective_ for _, obj in trace)
        assert clf.objective_ >= best.objective_
        if clf.optimal_:
            assert clf.objective_ == best.objective_
    assert clf.optimal_, "the search completes within 30 s"


@pytest.mark.parametrize("cls", [*BINARY, *NUMERIC], ids=lambda c: c.__name__)
@pytest.mark.parametrize("min_samples_leaf", [6, 11])
def test_no_room_for_a_split_gives_the_majority_leaf(cls, min_samples_leaf):
    # pytrees-rs's ConTree refuses a min_sup above half the rows
    X = np.random.default_rng(0).integers(0, 2, size=(10, 3))
    y = np.array([0, 1] * 3 + [0] * 4)
    clf = cls(max_depth=2, min_samples_leaf=min_samples_leaf).fit(X, y)
    assert clf.optimal_ and clf.objective_ == 3 and clf.tree_.n_leaves == 1
    assert (
        DL85Classifier(max_depth=2, min_sup=min_samples_leaf).fit(X, y).objective_ == 3
    )
