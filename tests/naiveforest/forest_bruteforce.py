"""Brute-force oracles for the forest tests: every tree of small depth on 0/1 data.

Only for tiny data: the number of distinct prediction vectors grows quickly.
"""

from __future__ import annotations

import numpy as np

# Thesis Table 4.1 / 6.1 (methods.md "T11"): features A, B, C and the class.
T11_X = np.array(
    [
        [int(c) for c in row]
        for row in "011 101 001 010 100 000 001 110 000 001 000".split()
    ]
)
T11_Y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1])
T11_U = np.array([0.05, 0.06, 0.33, 0.02, 0.09, 0.02, 0.22, 0.04, 0.02, 0.08, 0.07])


def all_predictions(X, n_classes, depth, min_sup=1):
    """Every distinct prediction vector (class indices) of a tree of depth <= depth."""
    X = np.asarray(X)

    def rec(rows, d):
        out = {tuple([c] * len(rows)) for c in range(n_classes)}
        if d == 0:
            return out
        for f in range(X.shape[1]):
            left = rows[X[rows, f] == 0]
            right = rows[X[rows, f] == 1]
            if len(left) < min_sup or len(right) < min_sup:
                continue
            pos_l = np.searchsorted(rows, left)
            pos_r = np.searchsorted(rows, right)
            for pl in rec(left, d - 1):
                for pr in rec(right, d - 1):
                    pred = np.empty(len(rows), dtype=np.int64)
                    pred[pos_l] = pl
                    pred[pos_r] = pr
                    out.add(tuple(pred))
        return out

    return [np.array(p) for p in rec(np.arange(X.shape[0]), depth)]


def all_columns(X, y, n_classes, depth, min_sup=1):
    """Distinct columns ``a`` (+1 correct / -1 wrong) of all trees of depth <= depth."""
    cols = {
        tuple(np.where(p == y, 1, -1))
        for p in all_predictions(X, n_classes, depth, min_sup)
    }
    return [np.array(c, dtype=float) for c in sorted(cols)]


def best_score(X, y, u, n_classes, depth, min_sup=1):
    """``max_h u . a(h)`` over every tree of depth <= depth."""
    return max(
        float(np.asarray(u) @ a) for a in all_columns(X, y, n_classes, depth, min_sup)
    )
