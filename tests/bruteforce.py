"""Brute-force optimal decision trees, the oracle the exact learners are tested on.

Exhaustive recursion over every feature (and, for numeric data, every
midpoint threshold) at every node: only for tiny data.
"""

from __future__ import annotations

import itertools

import numpy as np


def leaf_error(y, n_classes, weights=None):
    """(Weighted) misclassifications of the best constant prediction."""
    if len(y) == 0:
        return 0.0
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    per_class = np.bincount(y, weights=w, minlength=n_classes)
    return float(per_class.sum() - per_class.max())


def candidate_splits(X, rows):
    """Yield (feature, threshold) for every split between two consecutive
    distinct values ``a < b`` of the rows: the threshold is ``a`` itself, so
    ``x <= a`` separates them exactly whatever the magnitudes (a midpoint
    can overflow or round onto ``b``)."""
    for j in range(X.shape[1]):
        values = np.unique(X[rows, j])
        for a, _ in itertools.pairwise(values):
            yield j, a


def optimal_error(X, y, depth, min_sup=1, weights=None, n_classes=None):
    """Minimum (weighted) training error of a tree of depth <= ``depth``.

    Every leaf must hold at least ``min_sup`` rows. Works for 0/1 and numeric
    ``X`` (numeric features are split at all midpoints).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=np.int64)
    n_classes = int(n_classes if n_classes is not None else y.max() + 1)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key in memo:
            return memo[key]
        result = leaf_error(y[rows], n_classes, w[rows])
        if d > 0 and result > 0:
            for j, t in candidate_splits(X, rows):
                go_left = X[rows, j] <= t
                left, right = rows[go_left], rows[~go_left]
                if len(left) < min_sup or len(right) < min_sup:
                    continue
                el = best(left, d - 1)
                if el >= result:
                    continue
                result = min(result, el + best(right, d - 1))
        memo[key] = result
        return result

    return best(np.arange(len(y)), depth)


def optimal_loss(X, leaf, depth, min_sup=1):
    """Least summed ``leaf(rows)`` over the trees of depth <= ``depth`` whose
    leaves hold ``min_sup`` rows or more, splitting on ``x[j] <= t`` between
    any two distinct values (0/1 or numeric ``X``)."""
    X = np.asarray(X, dtype=float)
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key not in memo:
            result = leaf(rows)
            if d > 0:
                for j, t in candidate_splits(X, rows):
                    go = X[rows, j] <= t
                    if go.sum() < min_sup or (~go).sum() < min_sup:
                        continue
                    left = best(rows[go], d - 1)
                    if left < result:
                        result = min(result, left + best(rows[~go], d - 1))
            memo[key] = result
        return memo[key]

    return best(np.arange(X.shape[0]), depth)
