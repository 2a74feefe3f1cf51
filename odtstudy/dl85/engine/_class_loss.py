"""The DL8.5 search for a loss of the leaves' class supports, and its result.

One function, :func:`solve_class_loss`, searches for the
misclassification (weighted or not), a cost matrix or a Python loss of the
class supports, on 0/1 or numeric data (through the front door
:func:`~odtstudy.dl85.engine._door.fit_search`); ``DL85Classifier`` and
``DL85Predictor`` both call it, and :func:`class_result` turns its search
into a ``FitResult``.
"""

from __future__ import annotations

import numpy as np

from odtstudy.dl85.engine._door import fit_search
from odtstudy.dl85.engine._engine import SEARCH_OPTIONS, build_tree, fit_result

__all__ = ["class_result", "leaf_labeller", "solve_class_loss"]


def leaf_labeller(out, cost=None, fast=None):
    """``label_of(node, rows)`` for :func:`build_tree`: the class a leaf of
    the search ``out`` predicts under ``cost`` or ``fast`` (None: the
    majority class, the tree's default)."""
    if cost is not None:

        def label_of(node, rows):
            return int(np.argmin(cost @ np.asarray(out.value[node])))

        return label_of
    if fast is not None:

        def label_of(node, rows):
            return fast(np.asarray(out.value[node], dtype=np.float64))[1]

        return label_of
    return None


def class_result(out, n_classes, options, *, label_of=None, X=None, loss_unit=1.0):
    """The :class:`~odtstudy.base.FitResult` of a search on class supports:
    its tree (class supports as values; ``X``, when given, counts the rows
    of each node), or the reason there is none."""
    limits = {
        "max_depth": options.get("max_depth", SEARCH_OPTIONS["max_depth"]),
        "max_error": options.get("max_error"),
    }
    if not out.found:
        return fit_result(out, None, **limits)
    tree = build_tree(out, n_classes, lambda node, rows: out.value[node], label_of, X=X)
    return fit_result(out, tree, loss_unit=loss_unit, **limits)


def solve_class_loss(
    X, y, n_classes, weights, options, *, cost=None, fast=None, cuts=None, rows=None
):
    """The optimal tree for a loss of the leaves' class supports.

    The one search behind :class:`~odtstudy.dl85.DL85Classifier` and
    :class:`~odtstudy.dl85.DL85Predictor` with ``fast_error_function``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 features, or numbers with ``cuts``; the rows ``rows`` are
        searched, rows of weight 0 too.
    y : ndarray of shape (n_searched,)
        Class index of each row searched.
    n_classes : int
    weights : ndarray of shape (n_searched,) or None
        Row weights of the class supports (None: every row counts 1).
    options : dict
        The search options (``max_depth``, ``min_sup``, ``max_error``, ...).
    cost : ndarray of shape (n_classes, n_classes), default=None
        A checked cost matrix (``cost[p, c]``: predicting ``p`` for class ``c``).
    fast : callable, default=None
        A checked ``fast_error_function`` (:func:`checked_fast`).
    cuts : list of ndarray, default=None
        The candidate thresholds of ``X``'s columns (None: 0/1 data).
    rows : ndarray of int, default=None
        The rows of ``X`` searched, repeats allowed (None: every row).

    Returns
    -------
    FitResult
        Without ``cost`` and ``fast`` the loss is the (weighted)
        misclassification; ``reason`` (no tree) speaks of the loss. The tree
        tests ``X``'s columns (real thresholds with ``cuts``).
    """
    if cost is not None:
        kind = "cost"
    elif fast is not None:
        kind = "py_class"
    else:
        kind = "error" if weights is None else "weighted"
    objective = {
        "kind": kind,
        "y_class": y,
        "n_classes": n_classes,
        "weights": weights,
        "cost": cost,
        "callback": None if fast is None else fast.losses,
    }
    searched = fit_search(X, cuts, objective, options, rows=rows)
    out = searched.out
    # n_samples: the value's sum for counts; weighted rows need X applied
    result = class_result(
        out,
        n_classes,
        options,
        label_of=leaf_labeller(out, cost, fast),
        X=None if weights is None else searched.X,
        loss_unit=1.0 if weights is None else float(np.sum(weights)),
    )
    result.tree = searched.decoded(result.tree)
    return result
