"""Numeric features in DL8.5 (issue 19): the ``thresholds`` interface.

Exported trees name the DataFrame's columns and real thresholds, ``predict``
applies ``x[feature] <= threshold`` to new data, bad values and unsupported
combinations raise a ``ValueError`` naming the argument, 0/1 data gives the
same optimum with or without ``thresholds``, and the time limit / anytime
trace keep working on numeric data.
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris

import odtstudy.dl85.engine._numeric_fit as nf
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.dl85 import DL85Classifier, DL85Regressor, export_text


@pytest.fixture(autouse=True, scope="module")
def numeric_search_path():
    """These tests exercise the numeric search itself, whatever the number
    of thresholds (the estimators send few thresholds per column to the
    bitset search, see test_threshold_count_chooses_the_search)."""
    saved = (nf.BITSET_MAX_THRESHOLDS, nf.BITSET_MAX_MEAN)
    nf.BITSET_MAX_THRESHOLDS = nf.BITSET_MAX_MEAN = -1
    yield
    nf.BITSET_MAX_THRESHOLDS, nf.BITSET_MAX_MEAN = saved


def _iris_frame():
    data = load_iris()
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    return pd.DataFrame(data.data, columns=names), data.target


def _walk(tree, x):
    """Leaf reached by row ``x`` (left when ``x[feature] <= threshold``)."""
    node = 0
    while tree.feature[node] >= 0:
        f, t = int(tree.feature[node]), float(tree.threshold[node])
        node = int(tree.left[node] if x[f] <= t else tree.right[node])
    return node


def _random_numeric(seed, n=40, m=3, k=2):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, m)) * 5, 1)
    y = rng.integers(0, k, size=n)
    y[0], y[-1] = 0, 1
    return X, y


# --------------------------------------------------------------------------
# Names and thresholds in the tree
# --------------------------------------------------------------------------


def test_export_text_names_the_columns_and_thresholds():
    frame, y = _iris_frame()
    X = frame[["sepal_width", "petal_length"]]
    setosa = (y == 0).astype(int)
    clf = DL85Classifier(max_depth=1, thresholds="all").fit(X, setosa)
    # petal_length 1.9 (largest setosa) | 3.0 (smallest other): midpoint 2.45,
    # the only perfect split
    assert clf.objective_ == 0 and clf.optimal_
    assert list(clf.feature_names_in_) == ["sepal_width", "petal_length"]
    assert clf.tree_.feature[0] == 1  # the original column index
    assert clf.tree_.threshold[0] == pytest.approx(2.45, abs=1e-12)
    text = export_text(clf)
    assert "petal_length <= 2.45" in text
    assert "petal_length >  2.45" in text
    assert "feature" not in text and "x1" not in text


def test_iris_depth_2_tree_uses_real_midpoints():
    frame, y = _iris_frame()
    clf = DL85Classifier(max_depth=2, thresholds="all").fit(frame, y)
    assert clf.optimal_ and clf.objective_ == 6
    assert clf.training_error(frame, y) == 6
    tree = clf.tree_
    for node in np.flatnonzero(tree.feature >= 0):
        column = frame.iloc[:, tree.feature[node]].to_numpy()
        distinct = np.unique(column)
        mids = (distinct[:-1] + distinct[1:]) / 2
        assert np.isclose(mids, tree.threshold[node], rtol=0, atol=1e-12).any()
    text = export_text(clf)
    names = [frame.columns[f] for f in tree.feature[tree.feature >= 0]]
    for node, name in zip(np.flatnonzero(tree.feature >= 0), names, strict=True):
        assert f"{name} <= {tree.threshold[node]:.2f}" in text


def test_predict_on_new_data_follows_the_tests():
    X, y = _random_numeric(1, n=40, m=3, k=3)
    clf = DL85Classifier(max_depth=3, thresholds="all").fit(X, y)
    rng = np.random.default_rng(7)
    new = np.round(rng.normal(size=(200, 3)) * 6, 2)
    # values at the thresholds themselves go left
    internal = np.flatnonzero(clf.tree_.feature >= 0)
    for i, node in enumerate(internal):
        new[i, clf.tree_.feature[node]] = clf.tree_.threshold[node]
    expected = [clf.classes_[clf.tree_.label[_walk(clf.tree_, x)]] for x in new]
    assert clf.predict(new).tolist() == expected
    proba = clf.predict_proba(new)
    assert proba.shape == (200, len(clf.classes_))
    assert np.allclose(proba.sum(axis=1), 1.0)
    # the tree applied to the training rows gives back the objective
    assert clf.training_error(X, y) == clf.objective_


def test_string_labels_and_dataframe_predict():
    frame, y = _iris_frame()
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = DL85Classifier(max_depth=2, thresholds="all").fit(frame, labels)
    assert set(clf.predict(frame)) <= set(labels)
    assert clf.training_error(frame, labels) == clf.objective_ == 6
    assert "class: setosa" in export_text(clf)


def test_clone_keeps_thresholds():
    for est in (DL85Classifier(thresholds=3), DL85Regressor(thresholds="all")):
        assert clone(est).get_params()["thresholds"] == est.get_params()["thresholds"]
    assert DL85Classifier().get_params()["thresholds"] is None
    assert DL85Regressor().get_params()["thresholds"] is None


def test_predict_checks_the_number_of_columns():
    X, y = _random_numeric(2)
    clf = DL85Classifier(max_depth=2, thresholds="all").fit(X, y)
    with pytest.raises(ValueError):
        clf.predict(X[:, :2])


def test_regressor_exports_real_thresholds():
    frame, _ = _iris_frame()
    target = frame["petal_width"].to_numpy()
    X = frame[["sepal_length", "petal_length"]]
    reg = DL85Regressor(max_depth=1, thresholds="all").fit(X, target)
    assert reg.optimal_ and reg.tree_.feature[0] == 1
    assert "petal_length <= 2.45" in export_text(reg)
    left = frame["petal_length"].to_numpy() <= 2.45
    expected = sum(
        float(np.sum((target[s] - target[s].mean()) ** 2)) for s in (left, ~left)
    )
    assert reg.objective_ == pytest.approx(expected, rel=1e-9)


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


def test_numeric_data_without_thresholds_names_the_option():
    X, y = _random_numeric(3)
    with pytest.raises(ValueError, match="thresholds"):
        DL85Classifier(max_depth=2).fit(X, y)


def test_regressor_numeric_data_without_thresholds_raises():
    X, _ = _random_numeric(3)
    with pytest.raises(ValueError, match="thresholds"):
        DL85Regressor(max_depth=2).fit(X, X[:, 0] * 2.0)


@pytest.mark.parametrize("value", ["some", 0, -1, 1.5, "ALL", ""])
@pytest.mark.parametrize("cls", [DL85Classifier, DL85Regressor])
def test_invalid_thresholds_raise(cls, value):
    X, y = _random_numeric(4)
    with pytest.raises(ValueError, match="thresholds"):
        cls(max_depth=2, thresholds=value).fit(X, y)


def test_unsupported_combinations_name_the_argument():
    X, y = _random_numeric(5)
    with pytest.raises(ValueError, match="algorithm"):
        DL85Classifier(max_depth=2, thresholds="all", algorithm="dl8").fit(X, y)
    with pytest.raises(ValueError, match="algorithm"):
        DL85Classifier(max_depth=2, thresholds=3, algorithm="dl8").fit(X, y)
    # the numeric search orders features itself
    for branching in ("asc", "desc"):
        with pytest.raises(ValueError, match="branching"):
            DL85Classifier(max_depth=2, thresholds="all", branching=branching).fit(X, y)
        with pytest.raises(ValueError, match="branching"):
            DL85Regressor(max_depth=2, thresholds="all", branching=branching).fit(
                X, X[:, 0]
            )
    with pytest.raises(ValueError, match="algorithm"):
        DL85Regressor(max_depth=2, thresholds="all", algorithm="dl8").fit(X, X[:, 0])


# --------------------------------------------------------------------------
# 0/1 data, constant data, k thresholds
# --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("thresholds", ["all", 1, 2])
def test_binary_data_same_optimum_with_thresholds(seed, thresholds):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(10, 60)), int(rng.integers(2, 8))
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = rng.integers(0, 3, size=n)
    y[0], y[-1] = 0, 1
    depth = 1 + seed % 3
    ref = DL85Classifier(max_depth=depth).fit(X, y)
    clf = DL85Classifier(max_depth=depth, thresholds=thresholds).fit(X, y)
    assert clf.optimal_ and ref.optimal_
    assert clf.objective_ == ref.objective_
    assert clf.training_error(X, y) == clf.objective_
    internal = clf.tree_.feature >= 0
    assert np.all(clf.tree_.threshold[internal] == 0.5)


def test_constant_columns_give_a_leaf():
    X = np.full((10, 2), 3.5)
    y = np.array([0, 1, 1, 0, 1, 1, 1, 0, 1, 1])
    clf = DL85Classifier(max_depth=3, thresholds="all").fit(X, y)
    assert clf.optimal_ and clf.objective_ == 3
    assert clf.tree_.node_count == 1
    assert clf.predict(X).tolist() == [1] * 10


def test_one_varying_column_among_constants():
    X = np.column_stack([np.full(6, 2.0), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    clf = DL85Classifier(max_depth=2, thresholds="all").fit(X, y)
    assert clf.optimal_ and clf.objective_ == 0
    internal = clf.tree_.feature >= 0
    assert internal.any() and np.all(clf.tree_.feature[internal] == 1)
    assert set(clf.tree_.threshold[internal]) <= {1.5, 2.5, 3.5, 4.5, 5.5}
    # each test is x <= threshold, for unseen values too
    new = [[2.0, 3.4], [2.0, 3.6], [9.0, -1.0], [0.0, 7.0]]
    assert clf.predict(new).tolist() == [0, 1, 0, 1]


def test_k_thresholds_are_the_binarizer_thresholds():
    frame, y = _iris_frame()
    for k in (1, 2, 4):
        chosen = {}
        for position, op, value in Binarizer(max_thresholds=k).fit(frame).outputs_:
            assert op == "<="
            chosen.setdefault(position, []).append(value)
        for depth in (1, 2):
            clf = DL85Classifier(max_depth=depth, thresholds=k).fit(frame, y)
            ref = DL85Classifier(max_depth=depth).fit(
                Binarizer(max_thresholds=k).fit_transform(frame), y
            )
            assert clf.optimal_ and clf.objective_ == ref.objective_, (k, depth)
            tree = clf.tree_
            for node in np.flatnonzero(tree.feature >= 0):
                allowed = chosen[int(tree.feature[node])]
                assert np.isclose(allowed, tree.threshold[node], atol=1e-12).any()
            assert clf.training_error(frame, y) == clf.objective_


@pytest.mark.parametrize("name", ["uci/wine", "uci/heart", "uci/diabetes"])
@pytest.mark.parametrize("k", [2, 8])
def test_k_thresholds_on_real_sets_equal_binarized(name, k):
    data = load_dataset(name)
    clf = DL85Classifier(max_depth=3, thresholds=k).fit(data.X, data.y)
    ref = DL85Classifier(max_depth=3).fit(
        Binarizer(max_thresholds=k).fit_transform(data.X), data.y
    )
    assert clf.optimal_ and ref.optimal_
    assert clf.objective_ == ref.objective_
    assert clf.training_error(data.X, data.y) == clf.objective_


def test_thresholds_all_on_iris_is_the_binarized_optimum():
    frame, y = _iris_frame()
    for depth, expected in ((1, 50), (2, 6), (3, 1)):
        clf = DL85Classifier(max_depth=depth, thresholds="all").fit(frame, y)
        ref = DL85Classifier(max_depth=depth).fit(Binarizer().fit_transform(frame), y)
        assert clf.optimal_ and clf.objective_ == ref.objective_
        if expected is not None:
            assert clf.objective_ == expected


# --------------------------------------------------------------------------
# Time limit, anytime trace, attributes
# --------------------------------------------------------------------------


def test_time_limit_on_ionosphere_returns_a_valid_tree():
    data = load_dataset("uci/ionosphere")
    X, y = data.X, data.y
    start = time.perf_counter()
    clf = DL85Classifier(max_depth=4, thresholds="all", time_limit=1).fit(X, y)
    elapsed = time.perf_counter() - start
    assert elapsed < 4.0, elapsed
    assert clf.status_ == "timeout" and not clf.optimal_
    assert clf.stats_["timeout"] is True
    assert clf.tree_ is not None and clf.tree_.depth <= 4
    assert clf.training_error(X, y) == clf.objective_
    assert 0 <= clf.lower_bound_ <= clf.objective_
    _, counts = np.unique(y, return_counts=True)
    assert clf.objective_ < len(y) - counts.max()  # better than a leaf
    trace = clf.stats_["anytime"]
    assert trace, "empty anytime trace"
    times = [t for t, _, _ in trace]
    errors = [e for _, e, _ in trace]
    assert times == sorted(times) and times[-1] <= elapsed
    assert all(b <= a for a, b in itertools.pairwise(errors)), errors
    assert errors[-1] >= clf.objective_


@pytest.mark.parametrize("max_cache_size", [None, 10])
def test_regressor_time_limit_returns_the_best_tree_found(max_cache_size):
    data = load_dataset("uci/ionosphere")
    X = data.X[:, 6:]
    target = 3 * data.X[:, 2] + data.X[:, 5]
    reg = DL85Regressor(
        max_depth=3, thresholds="all", time_limit=0.5, max_cache_size=max_cache_size
    ).fit(X, target)
    errors = [e for _, e, _ in reg.stats_["anytime"]]
    assert reg.tree_ is not None and errors
    sse = float(np.sum((target - reg.predict(X)) ** 2))
    assert sse == pytest.approx(reg.objective_, rel=1e-9)
    assert reg.objective_ == pytest.approx(min(errors), rel=1e-9), (
        reg.status_,
        reg.objective_,
        errors,
    )


@pytest.mark.parametrize("depth, limit", [(3, 0.05), (4, 1.0)])
def test_anytime_trace_ends_at_the_returned_tree(depth, limit):
    """The trace records every improvement of the incumbent, so its last
    point is the tree returned (as on 0/1 data)."""
    data = load_dataset("uci/ionosphere")
    clf = DL85Classifier(max_depth=depth, thresholds="all", time_limit=limit)
    clf.fit(data.X, data.y)
    errors = [e for _, e, _ in clf.stats_["anytime"]]
    assert errors[-1] == clf.objective_, (clf.status_, clf.objective_, errors)


@pytest.mark.parametrize("max_cache_size", [None, 10])
def test_time_limit_returns_the_best_tree_found(max_cache_size):
    """At the limit the tree returned is the best incumbent of the trace, with
    a bounded cache too (wiped nodes of the incumbent are rebuilt)."""
    data = load_dataset("uci/ionosphere")
    X, y = data.X, data.y
    clf = DL85Classifier(
        max_depth=3, thresholds="all", time_limit=0.5, max_cache_size=max_cache_size
    ).fit(X, y)
    errors = [e for _, e, _ in clf.stats_["anytime"]]
    assert clf.tree_ is not None and errors
    assert clf.training_error(X, y) == clf.objective_
    if max_cache_size is not None:  # far below the search's need: wipes
        assert clf.stats_["cache_wipes"] > 0
    assert clf.objective_ == min(errors), (clf.status_, clf.objective_, errors)
    if clf.optimal_:
        assert clf.objective_ == 19  # ionosphere's depth-3 optimum (ConTree)


def test_anytime_trace_when_proven():
    frame, y = _iris_frame()
    clf = DL85Classifier(max_depth=3, thresholds="all").fit(frame, y)
    assert clf.status_ == "optimal" and clf.optimal_
    assert clf.lower_bound_ == clf.objective_
    trace = clf.stats_["anytime"]
    assert trace
    errors = [e for _, e, _ in trace]
    bounds = [b for _, _, b in trace]
    assert all(b <= a for a, b in itertools.pairwise(errors)), errors
    assert all(b >= a for a, b in itertools.pairwise(bounds)), bounds
    assert errors[-1] == bounds[-1] == clf.objective_
    assert clf.fit_time_ > 0
    for key in ("cache_entries", "cache_peak_entries", "timeout"):
        assert key in clf.stats_


def test_max_error_infeasible_and_feasible():
    frame, y = _iris_frame()
    clf = DL85Classifier(max_depth=2, thresholds="all", max_error=6).fit(frame, y)
    assert clf.status_ == "infeasible" and clf.tree_ is None
    with pytest.raises(ValueError, match="no tree"):
        clf.predict(frame)
    clf = DL85Classifier(max_depth=2, thresholds="all", max_error=7).fit(frame, y)
    assert clf.status_ == "optimal" and clf.objective_ == 6


def test_real_sample_weights_objective_is_the_weighted_error():
    frame, y = _iris_frame()
    w = np.random.default_rng(0).uniform(0.2, 2.0, size=len(y))
    clf = DL85Classifier(max_depth=2, thresholds="all").fit(frame, y, sample_weight=w)
    ref = DL85Classifier(max_depth=2).fit(Binarizer().fit_transform(frame), y, w)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(ref.objective_, rel=1e-9)
    assert clf.training_error(frame, y, w) == pytest.approx(clf.objective_, rel=1e-9)


def test_threshold_count_chooses_the_search():
    """Few thresholds per column go to the bitset search over threshold
    columns, many to the numeric search; both prove the same optimum."""
    nf.BITSET_MAX_THRESHOLDS, nf.BITSET_MAX_MEAN = 2000, 16
    try:
        data = load_dataset("uci/ionosphere")
        few = DL85Classifier(max_depth=2, thresholds=8).fit(data.X, data.y)
        every = DL85Classifier(max_depth=2, thresholds="all").fit(data.X, data.y)
        binarized = Binarizer(max_thresholds=8).fit(data.X)
        reference = DL85Classifier(max_depth=2).fit(binarized.transform(data.X), data.y)
    finally:
        nf.BITSET_MAX_THRESHOLDS = nf.BITSET_MAX_MEAN = -1
    assert "kernel_isa" in few.stats_ and "thresholds_evaluated" not in few.stats_
    assert "thresholds_evaluated" in every.stats_
    assert few.objective_ == reference.objective_
    assert every.objective_ <= few.objective_
    # the tree over threshold columns is a tree over the original columns
    assert set(few.tree_.feature[few.tree_.feature >= 0]) <= set(range(34))
    assert np.array_equal(
        few.predict(data.X), reference.predict(binarized.transform(data.X))
    )


def test_the_root_tries_each_features_best_split_first_from_depth_3():
    """Seeds first (``_try_seeds``): at depth 3 the root tries one full
    subtree per feature with an allowed split before its interval searches,
    on one thread or on two, and the optimum is still that of the search
    over threshold columns; at depth 2 (the depth-2 passes) it tries none."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 4))
    X[:, 3] = 1.0  # no split on a constant feature
    noise = rng.random(40) < 0.25
    y = ((X[:, 0] > 0) ^ (X[:, 1] * X[:, 2] > 0.2) ^ noise).astype(int)
    columns = Binarizer().fit_transform(X)
    for depth, seeds in ((2, 0), (3, 3)):
        expected = DL85Classifier(max_depth=depth).fit(columns, y).objective_
        for n_jobs in (1, 2):
            clf = DL85Classifier(max_depth=depth, thresholds="all", n_jobs=n_jobs)
            clf.fit(X, y)
            assert clf.optimal_ and clf.objective_ == expected
            assert clf.stats_["root_seeds_tried"] == seeds
