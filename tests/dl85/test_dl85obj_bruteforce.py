"""DL8.5 beyond accuracy: every objective against brute force on tiny data."""

import numpy as np
import pytest
from bruteforce import optimal_error
from hypothesis import given, settings
from hypothesis import strategies as st

from odtstudy.dl85 import (
    DL85Classifier,
    DL85Cluster,
    DL85Predictor,
    DL85Regressor,
)

TOL = 1e-9
SETTINGS = settings(max_examples=40, deadline=None)


def brute(X, depth, leaf_loss, min_sup=1):
    """Minimum over trees of depth <= ``depth`` of the summed leaf losses."""
    X = np.asarray(X)
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key not in memo:
            res = leaf_loss(rows)
            if d > 0:
                for j in range(X.shape[1]):
                    right = X[rows, j] == 1
                    lo, hi = rows[~right], rows[right]
                    if len(lo) < min_sup or len(hi) < min_sup:
                        continue
                    res = min(res, best(lo, d - 1) + best(hi, d - 1))
            memo[key] = res
        return memo[key]

    return best(np.arange(X.shape[0]), depth)


def squared_loss(y, w):
    def loss(rows):
        if len(rows) == 0 or w[rows].sum() == 0:
            return 0.0
        mean = np.average(y[rows], weights=w[rows])
        return float(np.sum(w[rows] * (y[rows] - mean) ** 2))

    return loss


def pinball_loss(y, w, tau):
    """Pinball loss of the best constant (tried at every data value)."""

    def loss(rows):
        if len(rows) == 0:
            return 0.0
        best = np.inf
        for q in y[rows]:
            d = y[rows] - q
            v = np.sum(w[rows] * np.where(d >= 0, tau * d, (tau - 1) * d))
            best = min(best, float(v))
        return best

    return loss


def absolute_loss(y, w):
    def loss(rows):
        if len(rows) == 0:
            return 0.0
        return min(float(np.sum(w[rows] * np.abs(y[rows] - q))) for q in y[rows])

    return loss


@st.composite
def tiny_data(draw, max_classes=3):
    n = draw(st.integers(2, 12))
    m = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    if draw(st.booleans()):
        # x and not-x columns, as in the CP4IM files (the weighted depth-2
        # solver keeps one feature per partition of the cover)
        X = np.hstack([X, 1 - X])
    k = draw(st.integers(2, max_classes))
    y = rng.integers(0, k, size=n)
    w = rng.uniform(0.05, 3.0, size=n)
    depth = draw(st.integers(1, 3))
    min_sup = draw(st.sampled_from([1, 1, 2]))
    return X, y, w, rng, depth, min_sup


@SETTINGS
@given(tiny_data())
def test_weighted_error_equals_bruteforce(data):
    X, y, w, _, depth, min_sup = data
    y[0], y[-1] = 0, 1  # at least 2 classes
    clf = DL85Classifier(max_depth=depth, min_sup=min_sup).fit(X, y, sample_weight=w)
    expected = optimal_error(X, y, depth, min_sup=min_sup, weights=w)
    assert clf.optimal_
    assert clf.objective_ == pytest.approx(expected, abs=TOL)
    # the objective is the weighted error of the returned tree
    assert clf.training_error(X, y, w) == pytest.approx(clf.objective_, abs=TOL)


@SETTINGS
@given(tiny_data(), st.booleans())
def test_squared_error_equals_bruteforce(data, weighted):
    X, _, w, rng, depth, min_sup = data
    y = np.round(rng.normal(size=len(X)) * 3, 2)
    w = w if weighted else np.ones(len(X))
    reg = DL85Regressor(max_depth=depth, min_sup=min_sup)
    reg.fit(X, y, sample_weight=w if weighted else None)
    expected = brute(X, depth, squared_loss(y, w), min_sup)
    assert reg.optimal_
    assert reg.objective_ == pytest.approx(expected, abs=TOL)
    # total loss over the rows, each leaf predicting its weighted mean
    pred = reg.predict(X)
    assert np.sum(w * (y - pred) ** 2) == pytest.approx(reg.objective_, abs=TOL)


@SETTINGS
@given(tiny_data(), st.sampled_from([0.1, 0.5, 0.9, 0.25]), st.booleans())
def test_quantile_loss_equals_bruteforce(data, tau, weighted):
    X, _, w, rng, depth, min_sup = data
    y = rng.integers(0, 6, size=len(X)).astype(float)  # ties on purpose
    w = w if weighted else np.ones(len(X))
    reg = DL85Regressor(
        criterion="quantile", quantile=tau, max_depth=depth, min_sup=min_sup
    ).fit(X, y, sample_weight=w if weighted else None)
    expected = brute(X, depth, pinball_loss(y, w, tau), min_sup)
    assert reg.objective_ == pytest.approx(expected, abs=TOL)
    d = y - reg.predict(X)
    total = np.sum(w * np.where(d >= 0, tau * d, (tau - 1) * d))
    assert total == pytest.approx(reg.objective_, abs=TOL)


@SETTINGS
@given(tiny_data(), st.booleans())
def test_absolute_error_equals_bruteforce(data, weighted):
    X, _, w, rng, depth, min_sup = data
    y = np.round(rng.normal(size=len(X)), 1)
    w = w if weighted else np.ones(len(X))
    reg = DL85Regressor(criterion="absolute_error", max_depth=depth, min_sup=min_sup)
    reg.fit(X, y, sample_weight=w if weighted else None)
    expected = brute(X, depth, absolute_loss(y, w), min_sup)
    assert reg.objective_ == pytest.approx(expected, abs=TOL)
    pred = reg.predict(X)
    assert np.sum(w * np.abs(y - pred)) == pytest.approx(reg.objective_, abs=TOL)


def cost_matrix_error(cost):
    """Listing 7.4: cost[predicted, true]; the leaf predicts the cheapest class."""
    cost = np.asarray(cost, dtype=float)

    def error(class_weights):
        losses = cost @ class_weights
        label = int(np.argmin(losses))
        return float(losses[label]), label

    return error


@SETTINGS
@given(tiny_data(), st.booleans())
def test_cost_matrix_equals_bruteforce(data, weighted):
    X, y, w, rng, depth, min_sup = data
    y[0], y[-1] = 0, 1
    k = int(y.max()) + 1
    cost = rng.uniform(0.5, 5.0, size=(k, k))
    np.fill_diagonal(cost, 0.0)
    w = w if weighted else np.ones(len(X))
    fn = cost_matrix_error(cost)

    def leaf(rows):
        return fn(np.bincount(y[rows], weights=w[rows], minlength=k))[0]

    expected = brute(X, depth, leaf, min_sup)
    sw = w if weighted else None
    clf = DL85Classifier(max_depth=depth, min_sup=min_sup, fast_error_function=fn)
    clf.fit(X, y, sample_weight=sw)
    assert clf.objective_ == pytest.approx(expected, abs=TOL)
    # the objective is the cost of the tree's predictions
    pred = clf.predict(X)
    assert np.sum(w * cost[pred, y]) == pytest.approx(clf.objective_, abs=TOL)
    pred2 = DL85Predictor(max_depth=depth, min_sup=min_sup, fast_error_function=fn)
    assert pred2.fit(X, y, sample_weight=sw).objective_ == pytest.approx(
        expected, abs=TOL
    )


@settings(max_examples=15, deadline=None)
@given(tiny_data())
def test_error_function_on_rows_equals_bruteforce(data):
    X, _, _, rng, depth, min_sup = data
    y = rng.normal(size=len(X))
    loss = squared_loss(y, np.ones(len(X)))
    pred = DL85Predictor(
        max_depth=depth,
        min_sup=min_sup,
        error_function=loss,
        leaf_value_function=lambda rows: float(np.mean(y[rows])),
    ).fit(X)
    assert pred.objective_ == pytest.approx(brute(X, depth, loss, min_sup), abs=TOL)
    reg = DL85Regressor(max_depth=depth, min_sup=min_sup).fit(X, y)
    assert pred.objective_ == pytest.approx(reg.objective_, abs=TOL)
    np.testing.assert_allclose(pred.predict(X), reg.predict(X), atol=1e-9)


def test_clustering_equals_bruteforce(rng):
    X = rng.integers(0, 2, size=(14, 4)).astype(np.uint8)
    E = rng.normal(size=(14, 2))

    def loss(rows):
        if len(rows) == 0:
            return 0.0
        sub = E[rows]
        return float(np.sqrt(((sub - sub.mean(axis=0)) ** 2).sum(axis=1)).sum())

    cl = DL85Cluster(max_depth=2).fit(X, X_error=E)
    assert cl.objective_ == pytest.approx(brute(X, 2, loss), abs=TOL)
    assert len(cl.cluster_centers_) == cl.tree_.n_leaves
    recomputed = sum(
        np.linalg.norm(E[cl.labels_ == c] - cl.cluster_centers_[c], axis=1).sum()
        for c in range(len(cl.cluster_centers_))
    )
    assert recomputed == pytest.approx(cl.objective_, abs=TOL)
