"""DL8.5 beyond accuracy: weights, estimators' contract, helpers and export."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import (
    DL85Classifier,
    DL85Cluster,
    DL85Predictor,
    DL85Regressor,
    export_graphviz,
    export_text,
    shallowest_perfect_tree,
)
from odtstudy.dl85.engine._losses import weighted_quantile
from odtstudy.dl85.estimators._predictor import fit_classifier_general


def _data(rng, n=60, m=6, k=2):
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = rng.integers(0, k, size=n)
    return X, y


# ------------------------------------------------------------------ weights
@pytest.mark.parametrize("depth", [2, 3])
def test_integer_weights_same_as_duplicated_rows(rng, depth):
    X, y = _data(rng, n=50)
    w = rng.integers(0, 4, size=50)
    dup = DL85Classifier(max_depth=depth).fit(np.repeat(X, w, 0), np.repeat(y, w))
    clf = DL85Classifier(max_depth=depth).fit(X, y, sample_weight=w)
    assert clf.objective_ == dup.objective_
    assert clf.tree_.to_dict()["feature"] == dup.tree_.to_dict()["feature"]
    # the weighted core (real-valued path) reaches the same optimum
    real = DL85Classifier(max_depth=depth).fit(
        X, y, sample_weight=w.astype(float) + 1e-7 * (w > 0)
    )
    assert real.objective_ == pytest.approx(dup.objective_, abs=1e-4)
    # and so does the general search with the same integer weights
    gen = fit_classifier_general(X, y, 2, w.astype(float), max_depth=depth)
    assert gen.objective == pytest.approx(dup.objective_, abs=1e-9)


def test_duplicated_rows_equal_integer_weights_regression(rng):
    X, _ = _data(rng, n=40)
    y = rng.normal(size=40)
    w = rng.integers(1, 4, size=40)
    for crit in ("squared_error", "absolute_error", "quantile"):
        a = DL85Regressor(criterion=crit, quantile=0.3, max_depth=2)
        b = DL85Regressor(criterion=crit, quantile=0.3, max_depth=2)
        a.fit(X, y, sample_weight=w)
        b.fit(np.repeat(X, w, 0), np.repeat(y, w))
        assert a.objective_ == pytest.approx(b.objective_, abs=1e-9)


@pytest.mark.parametrize("name", ["vote", "tic-tac-toe", "hepatitis"])
@pytest.mark.parametrize("depth", [2, 3])
def test_weighted_objective_not_above_cart(name, depth):
    data = load_dataset(name)
    X, y = data.X, data.y
    w = np.random.default_rng(depth).uniform(0.1, 5.0, size=len(y))
    clf = DL85Classifier(max_depth=depth).fit(X, y, sample_weight=w)
    cart = DecisionTreeClassifier(max_depth=depth, random_state=0)
    cart.fit(X, y, sample_weight=w)
    cart_error = float(np.sum(w[cart.predict(X) != y]))
    assert clf.optimal_
    assert clf.objective_ <= cart_error + 1e-9
    assert clf.training_error(X, y, w) == pytest.approx(clf.objective_, rel=1e-12)
    # same optimum as the general search (no depth-2 solver, no similarity)
    gen = fit_classifier_general(
        X.astype(np.uint8), np.unique(y, return_inverse=True)[1], 2, w, max_depth=2
    )
    if depth == 2:
        assert gen.objective == pytest.approx(clf.objective_, rel=1e-12)


def test_weighted_tree_counts_rows_and_weights(rng):
    X, y = _data(rng)
    w = rng.uniform(0.5, 2.0, size=len(y))
    clf = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w)
    tree = clf.tree_
    assert tree.n_samples[0] == len(y)
    assert tree.value[0].sum() == pytest.approx(w.sum())
    w[:5] = 0.0  # rows of weight 0 are dropped, as replication does
    assert (
        DL85Classifier(max_depth=2).fit(X, y, sample_weight=w).tree_.n_samples[0]
        == len(y) - 5
    )


def test_weighted_regressor_not_above_cart(rng):
    X, _ = _data(rng, n=80, m=7)
    y = X @ rng.normal(size=7) + rng.normal(size=80)
    w = rng.uniform(0.2, 3.0, size=80)
    reg = DL85Regressor(max_depth=3).fit(X, y, sample_weight=w)
    cart = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y, sample_weight=w)
    cart_loss = float(np.sum(w * (y - cart.predict(X)) ** 2))
    assert reg.objective_ <= cart_loss + 1e-9


# ------------------------------------------------------- custom objectives
def test_fast_error_function_reproduces_accuracy(rng):
    X, y = _data(rng, n=80, k=3)

    def error(weights):
        return float(weights.sum() - weights.max()), int(np.argmax(weights))

    ref = DL85Classifier(max_depth=3).fit(X, y)
    clf = DL85Classifier(max_depth=3, fast_error_function=error).fit(X, y)
    assert clf.objective_ == ref.objective_
    assert clf.optimal_ and clf.status_ == "optimal"
    assert clf.training_error(X, y) == clf.objective_


def test_cost_sensitive_prefers_expensive_class(rng):
    X, y = _data(rng, n=80)
    cost = np.array([[0.0, 10.0], [1.0, 0.0]])  # missing a 1 costs 10

    def error(weights):
        losses = cost @ weights
        label = int(np.argmin(losses))
        return float(losses[label]), label

    clf = DL85Classifier(max_depth=2, fast_error_function=error).fit(X, y)
    plain = DL85Classifier(max_depth=2).fit(X, y)
    pred = clf.predict(X)
    assert np.sum(cost[pred, y]) == pytest.approx(clf.objective_)
    assert clf.objective_ <= np.sum(cost[plain.predict(X), y])
    assert np.sum((pred == 0) & (y == 1)) <= np.sum((plain.predict(X) == 0) & (y == 1))


def test_callback_errors_propagate(rng):
    X, y = _data(rng)

    def broken(weights):
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        DL85Classifier(max_depth=2, fast_error_function=broken).fit(X, y)
    with pytest.raises(ZeroDivisionError):
        DL85Predictor(max_depth=2, error_function=lambda rows: 1 / 0).fit(X)


def test_predictor_needs_exactly_one_function(rng):
    X, y = _data(rng)
    with pytest.raises(ValueError, match="exactly one"):
        DL85Predictor().fit(X, y)
    with pytest.raises(ValueError, match="needs the labels"):
        DL85Predictor(fast_error_function=lambda w: (0.0, 0)).fit(X)
    with pytest.raises(ValueError, match="Binarizer"):
        DL85Predictor(error_function=len).fit(X * 2)


def test_predictor_leaf_values_and_cluster_ids(rng):
    X, _ = _data(rng, n=30)
    target = rng.normal(size=30)

    def sse(rows):
        return float(np.sum((target[rows] - target[rows].mean()) ** 2))

    pred = DL85Predictor(max_depth=2, error_function=sse).fit(X)
    ids = pred.predict(X)
    assert set(ids.tolist()) == set(range(pred.tree_.n_leaves))
    with_values = DL85Predictor(
        max_depth=2,
        error_function=sse,
        leaf_value_function=lambda rows: float(target[rows].mean()),
    ).fit(X)
    reg = DL85Regressor(max_depth=2).fit(X, target)
    np.testing.assert_allclose(with_values.predict(X), reg.predict(X))


def test_cluster_on_numeric_error_space(rng):
    X, _ = _data(rng, n=40, m=5)
    centres = np.array([[0.0, 0.0], [5.0, 5.0]])
    E = centres[X[:, 0]] + 0.1 * rng.normal(size=(40, 2))
    cl = DL85Cluster(max_depth=1).fit(X, X_error=E)
    assert cl.tree_.feature[0] == 0  # the split that separates the blobs
    assert cl.labels_.shape == (40,)
    np.testing.assert_allclose(np.sort(cl.cluster_centers_[:, 0]), [0.0, 5.0], atol=0.2)


# ------------------------------------------------------------- regression
def test_regressor_leaf_values_are_optimal(rng):
    X, _ = _data(rng, n=50, m=4)
    y = rng.exponential(size=50)
    w = rng.uniform(0.5, 2, size=50)
    for crit, tau in (
        ("squared_error", 0.5),
        ("absolute_error", 0.5),
        ("quantile", 0.8),
    ):
        reg = DL85Regressor(criterion=crit, quantile=tau, max_depth=2)
        reg.fit(X, y, sample_weight=w)
        leaves = reg.apply(X)
        for leaf in np.unique(leaves):
            rows = leaves == leaf
            value = reg.tree_.value[leaf, 0]
            if crit == "squared_error":
                assert value == pytest.approx(np.average(y[rows], weights=w[rows]))
            else:
                grid = np.concatenate([y[rows], [value]])
                d = y[rows][:, None] - grid[None, :]
                loss = (
                    w[rows][:, None] * np.where(d >= 0, tau * d, (tau - 1) * d)
                ).sum(axis=0)
                assert loss[-1] == pytest.approx(loss.min(), abs=1e-9)


def test_weighted_quantile_median_midpoint():
    assert weighted_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.5, midpoint=True) == 2.5
    assert weighted_quantile([1, 2, 3, 4], [1, 1, 1, 1], 0.5) == 2.0
    assert weighted_quantile([1, 2, 3], [1, 5, 1], 0.9) == 3.0


def test_regressor_params_and_infeasible(rng):
    X, _ = _data(rng, n=20)
    y = rng.normal(size=20)
    with pytest.raises(ValueError, match="quantile"):
        DL85Regressor(criterion="quantile", quantile=1.5).fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        DL85Regressor(criterion="huber").fit(X, y)
    reg = DL85Regressor(max_depth=1, max_error=1e-6).fit(X, y)
    assert reg.status_ == "infeasible" and reg.tree_ is None
    assert reg.lower_bound_ >= 1e-6
    with pytest.raises(ValueError, match="found no tree"):
        reg.predict(X)


def test_regressor_time_limit_is_anytime():
    data = load_dataset("anneal")
    y = np.random.default_rng(0).normal(size=len(data.y)) + data.y
    reg = DL85Regressor(max_depth=4, time_limit=0.2).fit(data.X, y)
    assert reg.fit_time_ < 5
    assert reg.tree_ is not None
    if not reg.optimal_:
        assert reg.status_ == "timeout"
        assert reg.lower_bound_ <= reg.objective_


def test_regressor_pickle_and_dataframe_names(rng):
    X, _ = _data(rng, n=30, m=3)
    y = rng.normal(size=30)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    reg = DL85Regressor(max_depth=2).fit(df, y)
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(df), reg.predict(df))
    text = export_text(reg)
    assert "value:" in text and ("a <=" in text or "b <=" in text or "c <=" in text)


# ---------------------------------------------------------------- helpers
def test_shallowest_perfect_tree(rng):
    X = rng.integers(0, 2, size=(40, 6)).astype(np.uint8)
    y = (X[:, 0] ^ X[:, 1]) | (X[:, 2] & X[:, 3])
    clf = shallowest_perfect_tree(X, y)
    assert clf.objective_ == 0 and clf.training_error(X, y) == 0
    depth = clf.max_depth
    if depth > 1:
        shallower = DL85Classifier(max_depth=depth - 1).fit(X, y)
        assert shallower.objective_ > 0
    w = rng.uniform(0.1, 1.0, size=40)
    assert shallowest_perfect_tree(X, y, sample_weight=w).max_depth == depth


def test_shallowest_perfect_tree_inconsistent_data():
    X = np.array([[0, 1], [0, 1], [1, 0]])
    with pytest.raises(ValueError, match="no tree of depth"):
        shallowest_perfect_tree(X, [0, 1, 0])


def test_export_with_feature_and_class_names(rng):
    X, y = _data(rng, n=40, m=3)
    df = pd.DataFrame(X, columns=["red", "round", "big"])
    labels = np.where(y == 1, "apple", "pear")
    clf = DL85Classifier(max_depth=2).fit(
        df, labels, sample_weight=rng.uniform(1, 2, 40)
    )
    text = export_text(clf)
    assert "class: apple" in text or "class: pear" in text
    assert any(name in text for name in ("red <=", "round <=", "big <="))
    dot = export_graphviz(clf, class_names=["A", "P"])
    assert dot.startswith("digraph Tree {") and ("class: A" in dot or "class: P" in dot)
    renamed = export_text(clf, feature_names=["f1", "f2", "f3"])
    assert "red" not in renamed


@pytest.mark.parametrize(
    "options",
    [
        {"algorithm": "dl8"},
        {"use_depth2_solver": False},
        {"use_similarity_lb": False},
        {"use_infeasibility_lb": False},
        {"branching": "desc"},
        {"cache": "hash"},
        {"max_cache_size": 40},
    ],
)
def test_weighted_search_options_agree(rng, options):
    X, y = _data(rng, n=70, m=8, k=3)
    X = np.hstack([X, 1 - X])
    w = rng.uniform(0.1, 3.0, size=len(y))
    ref = DL85Classifier(max_depth=3).fit(X, y, sample_weight=w)
    clf = DL85Classifier(max_depth=3, **options).fit(X, y, sample_weight=w)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(ref.objective_, abs=1e-9)
    assert clf.training_error(X, y, w) == pytest.approx(clf.objective_, abs=1e-9)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("min_sup", [1, 3])
@pytest.mark.parametrize("depth", [3, 4])
def test_weighted_sibling_counts_agree_with_plain_recursion(rng, k, min_sup, depth):
    # below a depth-3 node, the weighted depth-2 solver derives a child's
    # pair weights as the parent's minus its sibling's; the plain recursion
    # (no depth-2 solver) checks that path
    X, y = _data(rng, n=90, m=7, k=k)
    X = np.hstack([X, 1 - X, X[:, :2] & X[:, 2:4]])
    w = rng.uniform(0.1, 3.0, size=len(y))
    fast = DL85Classifier(max_depth=depth, min_sup=min_sup).fit(X, y, sample_weight=w)
    plain = DL85Classifier(
        max_depth=depth, min_sup=min_sup, use_depth2_solver=False
    ).fit(X, y, sample_weight=w)
    assert fast.optimal_ and plain.optimal_
    assert fast.objective_ == pytest.approx(plain.objective_, abs=1e-9)
    assert fast.training_error(X, y, w) == pytest.approx(fast.objective_, abs=1e-9)


def test_integer_weights_same_as_duplicated_rows_cp4im_depth4():
    data = load_dataset("vote")
    X = data.X.astype(np.uint8)
    y = np.unique(data.y, return_inverse=True)[1]
    w = np.random.default_rng(3).integers(0, 4, size=len(y))
    dup = DL85Classifier(max_depth=4).fit(np.repeat(X, w, 0), np.repeat(y, w))
    real = DL85Classifier(max_depth=4).fit(
        X, y, sample_weight=w.astype(float) + 1e-7 * (w > 0)
    )
    assert real.objective_ == pytest.approx(dup.objective_, abs=1e-4)


@pytest.mark.parametrize("min_sup", [1, 3])
@pytest.mark.parametrize("depth", [1, 2, 3, 4])
@pytest.mark.parametrize("offset", [0.0, 1e6])
def test_squared_error_depth2_solver_agrees_with_recursion(rng, depth, min_sup, offset):
    # the depth-2 solver works on sums of (w, w y, w y^2); a large offset of
    # y checks that they do not cancel catastrophically
    X, _ = _data(rng, n=80, m=6)
    X = np.hstack([X, 1 - X[:, :3]])
    y = offset + rng.normal(size=80) + 2.0 * X[:, 0] - 3.0 * X[:, 1] * X[:, 2]
    w = rng.uniform(0.2, 2.0, size=80)
    fast = DL85Regressor(max_depth=depth, min_sup=min_sup).fit(X, y, sample_weight=w)
    plain = DL85Regressor(max_depth=depth, min_sup=min_sup, use_depth2_solver=False)
    plain.fit(X, y, sample_weight=w)
    assert fast.optimal_ and plain.optimal_
    assert fast.objective_ == pytest.approx(plain.objective_, rel=1e-9, abs=1e-9)
    assert fast.stats_["depth2_calls"] > 0 and plain.stats_["depth2_calls"] == 0
    pred = fast.predict(X)
    assert np.sum(w * (y - pred) ** 2) == pytest.approx(fast.objective_, rel=1e-9)


@pytest.mark.parametrize(
    "make, target",
    [
        (lambda: DL85Classifier(max_depth=2), "classes"),
        (lambda: DL85Regressor(max_depth=2), "values"),
        (
            lambda: DL85Predictor(max_depth=2, error_function=lambda r: float(len(r))),
            None,
        ),
    ],
)
@pytest.mark.parametrize(
    "weights, message",
    [
        (np.full(30, -1.0), "non-negative"),
        (np.full(30, np.nan), "NaN"),
        (np.full(30, 1e300), "divide all weights by one constant"),
        (np.ones(10), "shape"),
    ],
)
def test_bad_sample_weight_is_a_clear_error(rng, make, target, weights, message):
    X, y = _data(rng, n=30, m=4)
    y = {"classes": y, "values": rng.normal(size=30), None: None}[target]
    with pytest.raises(ValueError, match=message):
        make().fit(X, y, sample_weight=weights)


def test_large_integer_weights_use_the_weighted_core(rng):
    # repeating rows would need 10^12 of them: the weighted core gives the
    # optimum of the same weighted problem
    X, y = _data(rng, n=40, m=5)
    w = rng.integers(1, 4, size=40)
    small = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w)
    big = DL85Classifier(max_depth=2).fit(X, y, sample_weight=w * 10**10)
    assert big.optimal_
    assert big.objective_ == pytest.approx(small.objective_ * 10**10, rel=1e-12)
