"""Cheap upper bounds on an optimum, to test a solver's claim of optimality.

A solver that calls its tree optimal at depth ``d >= 1`` claims that no tree
of depth at most ``d`` makes fewer misclassifications; the best tree of
depth at most 1 is such a tree and is found in one pass per feature. A
regression solver's claim is held against CART's trees of depth at most
``d`` (a cheap tree that an optimum matches or beats). A claimed optimum
worse than such a tree is refuted.
"""

from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeRegressor

__all__ = ["depth_one_errors", "greedy_squared_error"]


def depth_one_errors(X, y, min_sup: int = 1) -> int:
    """Fewest misclassifications of a tree of depth at most 1 on ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 or numeric features; a split sends ``x <= t`` left for a
        threshold ``t`` between two consecutive distinct values.
    y : ndarray of int, shape (n_samples,)
        Classes ``0 .. k-1``.
    min_sup : int, default=1
        Fewest rows in each leaf of a split.

    Returns
    -------
    int
        The errors of the best single leaf or allowed split.
    """
    y = np.asarray(y, dtype=np.int64)
    n = len(y)
    counts = np.eye(int(y.max()) + 1, dtype=np.int64)[y]
    total = counts.sum(axis=0)
    best = n - int(total.max())
    X = np.asarray(X)
    for column in X.T:
        order = np.argsort(column, kind="stable")
        values = column[order]
        left = np.cumsum(counts[order], axis=0)[:-1]  # rows 0..i on the left
        size = np.arange(1, n)
        cut = (values[1:] != values[:-1]) & (size >= min_sup) & (n - size >= min_sup)
        if not cut.any():
            continue
        left = left[cut]
        right = total - left
        errors = (left.sum(axis=1) - left.max(axis=1)) + (
            right.sum(axis=1) - right.max(axis=1)
        )
        best = min(best, int(errors.min()))
    return best


def greedy_squared_error(
    X, y, max_depth: int, min_sup: int = 1, leaf_penalty=0.0, max_leaves=None
):
    """Least sum of squared errors, plus ``leaf_penalty`` per leaf, among a
    single leaf and CART's regression trees of depths 1 to ``max_depth``
    (leaves of at least ``min_sup`` rows, each predicting its mean, at most
    ``max_leaves`` of them): the objective of trees that any optimum under
    those constraints matches or beats.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of float, shape (n_samples,)
    max_depth : int
    min_sup : int, default=1
    leaf_penalty : float, default=0.0
    max_leaves : int, default=None
        ``None``: no limit beyond the depth's.

    Returns
    -------
    float
    """
    y = np.asarray(y, dtype=np.float64)
    best = float(np.sum((y - y.mean()) ** 2)) + leaf_penalty
    if max_leaves is not None and max_leaves < 2:
        return best
    for depth in range(1, max_depth + 1):
        cart = DecisionTreeRegressor(
            max_depth=depth, min_samples_leaf=min_sup, max_leaf_nodes=max_leaves
        )
        residual = y - cart.fit(X, y).predict(X)
        leaves = cart.get_n_leaves()
        best = min(best, float(np.dot(residual, residual)) + leaf_penalty * leaves)
    return best
