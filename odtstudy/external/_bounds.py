"""Cheap upper bounds on an optimum, to test a solver's claim of optimality.

A solver that calls its tree optimal at depth ``d >= 1`` claims that no tree
of depth at most ``d`` makes fewer misclassifications (or, for a
regression solver, has a smaller sum of squared errors plus its leaf
penalty); the best tree of depth at most 1 is such a tree and is found in
one pass per feature. A claimed optimum worse than it is refuted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["depth_one_errors", "depth_one_squared_error"]


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


def depth_one_squared_error(X, y, leaf_penalty: float = 0.0) -> float:
    """Least sum of squared errors, plus ``leaf_penalty`` per leaf, of a
    tree of depth at most 1 on ``X`` (each leaf predicting its mean).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 or numeric features, split as in :func:`depth_one_errors`.
    y : ndarray of float, shape (n_samples,)
    leaf_penalty : float, default=0.0

    Returns
    -------
    float
    """
    y = np.asarray(y, dtype=np.float64)
    y = y - y.mean()  # the errors do not change; the sums cancel less
    n = len(y)
    best = float(np.dot(y, y)) + leaf_penalty
    size = np.arange(1, n)
    for column in np.asarray(X).T:
        order = np.argsort(column, kind="stable")
        values, ys = column[order], y[order]
        cut = values[1:] != values[:-1]
        if not cut.any():
            continue
        left_sum = np.cumsum(ys)[:-1][cut]
        left_sq = np.cumsum(ys * ys)[:-1][cut]
        left_n = size[cut]
        right_sum = ys.sum() - left_sum
        right_sq = float(np.dot(ys, ys)) - left_sq
        sse = (left_sq - left_sum**2 / left_n) + (
            right_sq - right_sum**2 / (n - left_n)
        )
        best = min(best, float(sse.min()) + 2 * leaf_penalty)
    return best
