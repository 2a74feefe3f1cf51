"""The floor of the DL8.5 search: a lower bound of any tree over a cover.

No test on the features separates rows with identical feature vectors, so
every leaf of every tree (of any depth) is a union of groups of identical
rows. The objectives below price a leaf as a minimum over one prediction of
a sum over its rows, which is at least the sum over its groups of each
group's own minimum: a cover's loss under any tree is at least the sum of
its groups' losses as leaves (misclassification: the rows of a group
outside its majority class). :func:`floor_values` gives each group's loss
to one of its rows (``Searcher.set_floor``), so the floor of a cover is a
sum over its rows; the search uses it for the bound it reports at a
time-out (``_skeleton.pyx``).

It is given for the objectives whose leaf is such a minimum: "error",
"weighted", "cost", "squared", "absolute" and "quantile" (one quantile).
The user-defined objectives ("py_class", "py_rows", "py_stats") have no
floor: their leaf need not be a minimum over a prediction. The real-valued
losses are computed in floating point and lowered by a relative
``FLOOR_RTOL``, so that rounding cannot lift the floor above the search's
own prices of the same rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLOOR_RTOL", "floor_values"]

#: The real-valued floors are lowered by this fraction (rounding).
FLOOR_RTOL = 1e-9


def floor_values(
    X, kind, *, y_class=None, n_classes=1, weights=None, y=None, cost=None, quantile=0.5
):
    """Each row's share of the floor (``Searcher.set_floor``), or None when
    the objective has none or no group of identical rows has a positive loss.

    Parameters
    ----------
    X : ndarray of uint8, shape (n_samples, n_features)
        The 0/1 rows, in the searcher's order.
    kind : str
        The leaf objective (``_engine.search``).
    y_class, n_classes, weights, y, cost, quantile
        As ``_engine.search`` takes them.
    """
    if kind not in ("error", "weighted", "cost", "squared", "absolute", "quantile"):
        return None
    X = np.asarray(X, dtype=np.uint8)
    n = X.shape[0]
    if n == 0:
        return None
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    packed = np.packbits(X, axis=1) if X.shape[1] else np.zeros((n, 1), np.uint8)
    _, first, group = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    group = group.ravel()
    if len(first) == n:
        return None  # every row is its own group: each has loss 0
    if kind in ("error", "weighted", "cost"):
        loss = _class_losses(group, len(first), y_class, n_classes, w, cost)
        if kind != "error" or weights is not None:
            loss *= 1.0 - FLOOR_RTOL
    else:
        yv = np.asarray(y, dtype=np.float64)
        if yv.ndim != 1:
            return None
        tau = 0.5 if kind == "absolute" else float(quantile)
        loss = np.zeros(len(first))
        for g in np.flatnonzero(np.bincount(group) > 1):
            rows = group == g
            if kind == "squared":
                loss[g] = _squared(yv[rows], w[rows])
            else:
                scale = 2.0 if kind == "absolute" else 1.0
                loss[g] = scale * _pinball(yv[rows], w[rows], tau)
        loss *= 1.0 - FLOOR_RTOL
    loss = np.maximum(loss, 0.0)
    if not np.any(loss > 0.0):
        return None
    values = np.zeros(n)
    values[first] = loss
    return values


def _class_losses(group, n_groups, y_class, n_classes, w, cost):
    """Each group's loss as one leaf over its (weighted) class supports."""
    sup = np.zeros((n_groups, n_classes))
    np.add.at(sup, (group, np.asarray(y_class, dtype=np.int64)), w)
    if cost is None:
        return sup.sum(axis=1) - sup.max(axis=1)
    # cost[p, c]: predicting p for a row of class c; the cheapest prediction
    return (sup @ np.asarray(cost, dtype=np.float64).T).min(axis=1)


def _squared(y, w):
    """Weighted squared error of ``y`` around its weighted mean."""
    total = w.sum()
    if total <= 0.0:
        return 0.0
    mean = float(np.dot(w, y) / total)
    return float(np.dot(w, (y - mean) ** 2))


def _pinball(y, w, tau):
    """Least weighted pinball loss (quantile ``tau``) of ``y`` over one
    prediction: attained at one of the values (a weighted quantile)."""
    order = np.argsort(y, kind="stable")
    y, w = y[order], w[order]
    cw = np.cumsum(w)
    cwy = np.cumsum(w * y)
    tw, twy = cw[-1], cwy[-1]
    # prediction y[k]: rows above pay tau (y - p), rows at or below (1-tau)(p - y)
    below = (1.0 - tau) * (y * cw - cwy)
    above = tau * ((twy - cwy) - y * (tw - cw))
    return float(np.min(below + above))
