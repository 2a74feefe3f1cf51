"""``n_jobs``: the DL8.5 searches on several threads sharing one cache.

The threads take the root's candidates in turn; the loss, the bound and
the proof are those of one thread (and of brute force), on 0/1 and numeric
data, for built-in and Python losses, with and without a time limit.
"""

from __future__ import annotations

import os
import time

import bruteforce
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.utils._param_validation import InvalidParameterError

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier, DL85Predictor, DL85Regressor

SETTINGS = settings(max_examples=25, deadline=None)


def _problems(values, rows, columns, depths):
    """``(X, y, depth)``: an ``X`` of ``values`` (the first two rows of y
    set to 0 and 1 so that both classes occur)."""
    return st.tuples(st.integers(*rows), st.integers(*columns)).flatmap(
        lambda shape: st.tuples(
            arrays(np.float64, shape, elements=values),
            arrays(np.int64, shape[0], elements=st.integers(0, 2)).map(
                lambda y: np.concatenate([[0, 1], y[2:]])
            ),
            st.integers(*depths),
        )
    )


binary_problems = _problems(st.sampled_from([0.0, 1.0]), (20, 120), (4, 9), (2, 4))
numeric_problems = _problems(st.integers(0, 25).map(float), (20, 150), (2, 5), (2, 3))


def _same_outcome(one, two):
    assert two.objective_ == pytest.approx(one.objective_, rel=1e-12, abs=1e-9)
    assert two.lower_bound_ == pytest.approx(one.lower_bound_, rel=1e-12, abs=1e-9)
    assert two.optimal_ == one.optimal_


@SETTINGS
@given(binary_problems, st.sampled_from([2, 3]))
def test_binary_threads_equal_one_thread_and_brute_force(problem, n_jobs):
    X, y, depth = problem
    X = X.astype(np.uint8)
    one = DL85Classifier(max_depth=depth).fit(X, y)
    many = DL85Classifier(max_depth=depth, n_jobs=n_jobs).fit(X, y)
    _same_outcome(one, many)
    assert many.optimal_
    assert many.objective_ == bruteforce.optimal_error(X, y, depth)
    assert many.objective_ == np.sum(many.predict(X) != y)
    assert many.stats_["threads"] == n_jobs


@pytest.mark.parametrize("n_jobs", [2, 3])
def test_binary_threads_read_and_write_entries_while_the_cache_grows(n_jobs):
    """Entries read and written outside the cache's lock (batched lookups
    from the first entry on) while other threads insert and the entry array
    moves (it doubles from 1,024 entries); three threads on two cores are
    preempted inside their guarded sections: the one-thread optimum, tree
    and bound every time."""
    from odtstudy.dl85.engine import _search

    old = _search.set_peek_min_entries(0)
    try:
        for seed in range(3):
            rng = np.random.default_rng(seed)
            X = rng.integers(0, 2, size=(600, 30))
            y = (X[:, 0] ^ X[:, 1] ^ X[:, 2] ^ (rng.random(600) < 0.2)).astype(int)
            one = DL85Classifier(max_depth=5).fit(X, y)
            many = DL85Classifier(max_depth=5, n_jobs=n_jobs).fit(X, y)
            _same_outcome(one, many)
            assert many.optimal_
            assert many.objective_ == np.sum(many.predict(X) != y)
            assert many.stats_["cache_entries"] > 16 * 1024
            assert many.stats_["root_candidates_of_helpers"] > 0
    finally:
        _search.set_peek_min_entries(old)


@SETTINGS
@given(numeric_problems)
def test_numeric_threads_equal_one_thread(problem):
    X, y, depth = problem
    one = DL85Classifier(max_depth=depth, thresholds="all").fit(X, y)
    two = DL85Classifier(max_depth=depth, thresholds="all", n_jobs=2).fit(X, y)
    _same_outcome(one, two)
    assert two.objective_ == np.sum(two.predict(X) != y)


@SETTINGS
@given(numeric_problems, st.sampled_from(["squared_error", "absolute_error"]))
def test_regression_threads_equal_one_thread(problem, criterion):
    X, _, depth = problem
    y = np.round(X @ np.arange(1, X.shape[1] + 1) % 7 + 0.25 * X[:, 0], 2)
    for thresholds in (None, "all"):
        Xb = (X > np.median(X, axis=0)).astype(np.uint8) if thresholds is None else X
        kw = dict(criterion=criterion, max_depth=depth, thresholds=thresholds)
        one = DL85Regressor(**kw).fit(Xb, y)
        two = DL85Regressor(**kw, n_jobs=2).fit(Xb, y)
        _same_outcome(one, two)


def test_python_losses_on_threads_equal_one_thread():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(150, 8)).astype(np.uint8)
    y = rng.integers(0, 2, size=150)

    def fast(supports):
        # a cost matrix: predicting 0 for a row of class 1 costs 3
        return min((3.0 * supports[1], 0), (supports[0], 1))

    kw = dict(max_depth=3, fast_error_function=fast)
    one = DL85Predictor(**kw).fit(X, y)
    _same_outcome(one, DL85Predictor(**kw, n_jobs=2).fit(X, y))


def test_a_python_loss_that_raises_on_a_helper_thread_is_reraised():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 2, size=(200, 10)).astype(np.uint8)
    y = rng.integers(0, 2, size=200)

    def broken(supports):
        if supports.sum() < 20:
            raise ArithmeticError("a leaf too small")
        return min((supports[1], 0), (supports[0], 1))

    with pytest.raises(ArithmeticError, match="a leaf too small"):
        DL85Predictor(max_depth=3, fast_error_function=broken, n_jobs=2).fit(X, y)


def test_helpers_search_root_candidates_on_a_real_instance():
    data = load_dataset("vehicle")
    X, y = np.asarray(data.X), np.asarray(data.y)
    one = DL85Classifier(max_depth=4).fit(X, y)
    two = DL85Classifier(max_depth=4, n_jobs=2).fit(X, y)
    _same_outcome(one, two)
    assert two.stats_["root_candidates_of_helpers"] > 0
    assert one.stats_["threads"] == 1
    assert one.stats_["root_candidates_of_helpers"] == 0


def test_numeric_helpers_search_root_features():
    data = load_dataset("contree/bidding")
    X, y = np.asarray(data.X, dtype=float), np.asarray(data.y)
    one = DL85Classifier(max_depth=3, thresholds="all").fit(X, y)
    two = DL85Classifier(max_depth=3, thresholds="all", n_jobs=2).fit(X, y)
    _same_outcome(one, two)
    assert two.optimal_
    assert two.stats_["root_candidates_of_helpers"] > 0


def test_numeric_threads_take_intervals_of_a_root_feature_from_each_other():
    # two features: once out of root candidates, a thread takes half of the
    # other's queue of intervals; the proof is the same as on one thread
    taken = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 400, size=(3000, 2)).astype(float)
        noise = rng.normal(0, 60, 3000)
        y = ((X[:, 0] + 0.5 * X[:, 1] + noise) > 300).astype(int) + (X[:, 1] > 200)
        one = DL85Classifier(max_depth=3, thresholds="all").fit(X, y)
        two = DL85Classifier(max_depth=3, thresholds="all", n_jobs=2).fit(X, y)
        _same_outcome(one, two)
        assert two.optimal_
        assert two.objective_ == np.sum(two.predict(X) != y)
        assert one.stats_["root_intervals_taken"] == 0
        taken.append(two.stats_["root_intervals_taken"])
    assert sum(taken) > 0


@pytest.mark.parametrize("thresholds", [None, "all"])
def test_a_time_limit_holds_on_threads(thresholds):
    data = load_dataset("splice-1")
    X, y = np.asarray(data.X), np.asarray(data.y)
    if thresholds == "all":
        X = X.astype(float)
    start = time.perf_counter()
    model = DL85Classifier(max_depth=6, time_limit=2.0, thresholds=thresholds, n_jobs=2)
    model.fit(X, y)
    assert time.perf_counter() - start < 2.0 + 3.0
    assert not model.optimal_
    assert model.objective_ == np.sum(model.predict(X) != y)
    assert model.lower_bound_ <= model.objective_


def test_threads_stop_once_one_finds_a_tree_at_the_root_bound():
    # a perfect tree exists: the thread that finds it ends the search
    data = load_dataset("ionosphere")
    X, y = np.asarray(data.X), np.asarray(data.y)
    model = DL85Classifier(max_depth=5, n_jobs=2).fit(X, y)
    assert model.optimal_ and model.objective_ == 0
    assert model.objective_ == np.sum(model.predict(X) != y)


@pytest.mark.parametrize(
    ("estimator", "kw", "match"),
    [
        (DL85Classifier, {"max_cache_size": 10_000}, "max_cache_size=None"),
        (
            DL85Regressor,
            {"criterion": "quantile", "quantile": [0.2, 0.8]},
            "one quantile",
        ),
    ],
)
def test_threads_refuse_what_they_cannot_share(estimator, kw, match):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(40, 5)).astype(np.uint8)
    y = rng.integers(0, 2, size=40)
    with pytest.raises(ValueError, match=match):
        estimator(max_depth=3, n_jobs=2, **kw).fit(X, y)
    estimator(max_depth=3, n_jobs=1, **kw).fit(X, y)


@pytest.mark.parametrize("n_jobs", [0, 1.5, "2"])
def test_bad_n_jobs_is_refused(n_jobs):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.uint8)
    with pytest.raises(InvalidParameterError, match="n_jobs"):
        DL85Classifier(n_jobs=n_jobs).fit(X, [0, 1, 1, 0])


def test_n_jobs_minus_one_is_one_thread_per_cpu():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.uint8)
    model = DL85Classifier(n_jobs=-1).fit(X, [0, 1, 1, 0])
    assert model.stats_["threads"] == len(os.sched_getaffinity(0))
    model = DL85Classifier(n_jobs=-2).fit(X, [0, 1, 1, 0])
    assert model.stats_["threads"] == max(1, len(os.sched_getaffinity(0)) - 1)


def test_an_interrupt_while_waiting_for_the_threads_is_reraised(monkeypatch):
    import threading

    join = threading.Thread.join
    calls = []

    def interrupted_once(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return join(self, *args, **kwargs)

    data = load_dataset("vehicle")
    X, y = np.asarray(data.X), np.asarray(data.y)
    monkeypatch.setattr(threading.Thread, "join", interrupted_once)
    with pytest.raises(KeyboardInterrupt):
        DL85Classifier(max_depth=4, n_jobs=2).fit(X, y)
    # the helper was waited for (a second join), and the next fit is whole
    assert len(calls) >= 2
    monkeypatch.setattr(threading.Thread, "join", join)
    model = DL85Classifier(max_depth=3, n_jobs=2).fit(X, y)
    assert model.optimal_
    assert model.objective_ == DL85Classifier(max_depth=3).fit(X, y).objective_
