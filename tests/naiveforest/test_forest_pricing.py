"""Pricing oracles: weighted optimal trees against brute force and CART."""

import numpy as np
import pytest
from forest_bruteforce import T11_U, T11_X, T11_Y, best_score

from odtstudy.naiveforest._pricing import (
    column_of,
    nonnegative_problem,
    price_cart,
    price_dl85,
    price_exhaustive,
)


def test_t11_weighted_stump_cart_vs_optimal():
    """methods.md §6 / thesis fig. 6.1: CART misses the optimal weighted stump."""
    cart = price_cart(T11_X, T11_Y, T11_U, 2, max_depth=1)
    pred = cart.tree.predict(T11_X)
    assert np.all(pred == 1)
    assert T11_U[pred != T11_Y].sum() == pytest.approx(0.39)
    assert np.sum(pred != T11_Y) == 5

    best = price_exhaustive(T11_X, T11_Y, T11_U, 2, max_depth=1)
    pred = best.tree.predict(T11_X)
    assert T11_U[pred != T11_Y].sum() == pytest.approx(0.36)
    assert np.sum(pred != T11_Y) == 4
    assert best.tree.feature[0] == 1  # B
    assert best.tree.predict(np.array([[0, 0, 0], [0, 1, 0]])).tolist() == [1, 0]
    assert best.exact and best.score > cart.score


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2])
def test_exhaustive_pricing_matches_brute_force(seed, depth):
    rng = np.random.default_rng(seed)
    n_classes = 2 + seed % 2
    X = rng.integers(0, 2, size=(9, 3))
    y = rng.integers(0, n_classes, size=9)
    u = rng.normal(0.3, 1.0, size=9)  # negative weights included (MDBoost)
    res = price_exhaustive(X, y, u, n_classes, depth)
    assert res.score == pytest.approx(best_score(X, y, u, n_classes, depth))
    assert res.score == pytest.approx(u @ column_of(res.tree, X, y))
    assert res.tree.depth <= depth


def test_exhaustive_pricing_respects_min_sup():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(10, 3))
    y = rng.integers(0, 2, size=10)
    u = rng.random(10)
    res = price_exhaustive(X, y, u, 2, 2, min_sup=3)
    counts = np.bincount(res.tree.apply(X), minlength=res.tree.node_count)
    leaves = res.tree.feature == -1
    assert np.all(counts[leaves] >= 3)
    assert res.score == pytest.approx(best_score(X, y, u, 2, 2, min_sup=3))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_negative_weights_rewrite_keeps_every_tree_score(n_classes):
    """sum_k w2_k [h = y2_k] = sum_i u_i [h = y_i] + sum_{u<0} |u_i| for every h."""
    rng = np.random.default_rng(n_classes)
    X = rng.integers(0, 2, size=(12, 3))
    y = rng.integers(0, n_classes, size=12)
    u = rng.normal(0.0, 1.0, size=12)
    X2, y2, w2, origin = nonnegative_problem(X, y, u, n_classes)
    assert np.all(w2 >= 0)
    assert np.array_equal(X2, X[origin])
    shift = -u[u < 0].sum()
    for _ in range(10):
        pred = rng.integers(0, n_classes, size=12)
        lhs = w2 @ (pred[origin] == y2)
        rhs = u @ (pred == y) + shift
        assert lhs == pytest.approx(rhs)


def test_cart_pricing_handles_negative_weights_and_missing_classes():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(20, 4))
    y = rng.integers(0, 3, size=20)
    u = rng.normal(0.0, 1.0, size=20)
    res = price_cart(X, y, u, 3, 2)
    assert res.score == pytest.approx(u @ column_of(res.tree, X, y))
    assert not res.exact
    u = np.where(y == 2, 0.0, 1.0)
    res = price_cart(X, y, u, 3, 1)
    assert set(np.unique(res.tree.predict(X))) <= {0, 1, 2}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [1, 2])
def test_dl85_pricing_matches_exhaustive(seed, depth):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(14, 4))
    y = rng.integers(0, 2, size=14)
    u = rng.normal(0.2, 1.0, size=14)
    dl = price_dl85(X, y, u, 2, depth)
    ex = price_exhaustive(X, y, u, 2, depth)
    assert dl.exact
    assert dl.score == pytest.approx(ex.score, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2])
def test_dl85_pricing_matches_exhaustive_on_integer_weights(seed, depth):
    """Runs with today's DL8.5 (integer weights = repeated rows), signs mixed."""
    rng = np.random.default_rng(seed)
    n_classes = 2 + seed % 2
    X = rng.integers(0, 2, size=(16, 4))
    y = rng.integers(0, n_classes, size=16)
    u = rng.integers(-3, 5, size=16).astype(float)
    dl = price_dl85(X, y, u, n_classes, depth)
    ex = price_exhaustive(X, y, u, n_classes, depth)
    assert dl.exact
    assert dl.score == pytest.approx(ex.score)
    assert dl.score == pytest.approx(u @ column_of(dl.tree, X, y))
    assert dl.score == pytest.approx(best_score(X, y, u, n_classes, depth))


def test_dl85_pricing_t11():
    res = price_dl85(T11_X, T11_Y, T11_U, 2, 1)
    pred = res.tree.predict(T11_X)
    assert T11_U[pred != T11_Y].sum() == pytest.approx(0.36)
