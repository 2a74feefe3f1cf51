"""Helpers on top of the DL8.5 estimators (thesis chapter 7)."""

from __future__ import annotations

import numpy as np

from odtstudy.dl85.estimators._classes import MAX_DEPTH_LIMIT, DL85Classifier

__all__ = ["shallowest_perfect_tree"]


def shallowest_perfect_tree(X, y, *, max_depth=None, sample_weight=None, **params):
    """Shallowest tree with zero training error (thesis Listing 7.2).

    Fits ``DL85Classifier(max_depth=d, max_error=1)`` for ``d = 1, 2, ...``:
    with ``max_error=1`` the search only looks for trees with fewer than one
    misclassified row, i.e. perfect ones, so each depth without a perfect
    tree is refuted quickly. With ``sample_weight`` the bound is the smallest
    positive weight instead (a tree below it misclassifies no row of
    positive weight).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        0/1 features.
    y : array-like of shape (n_samples,)
    max_depth : int, default=None
        Largest depth tried (default: the number of features, capped at 60).
    sample_weight : array-like of shape (n_samples,), default=None
    **params
        Other ``DL85Classifier`` parameters (``min_sup``, ``time_limit``...).

    Returns
    -------
    DL85Classifier
        Fitted at the smallest depth that admits a perfect tree.

    Raises
    ------
    ValueError
        When no tree of depth ``<= max_depth`` is perfect (e.g. two identical
        rows with different labels), or a fit timed out before deciding.

    Examples
    --------
    >>> import numpy as np
    >>> from odtstudy.dl85 import shallowest_perfect_tree
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> clf = shallowest_perfect_tree(X, [0, 1, 1, 0])
    >>> clf.max_depth, clf.objective_
    (2, 0.0)
    """
    X = np.asarray(X)
    if max_depth is None:
        max_depth = max(1, min(X.shape[1], MAX_DEPTH_LIMIT))
    bound = 1.0
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        if not np.any(w > 0):
            raise ValueError("all sample weights are zero")
        bound = float(w[w > 0].min())
    for depth in range(1, int(max_depth) + 1):
        clf = DL85Classifier(max_depth=depth, max_error=bound, **params)
        clf.fit(X, y, sample_weight=sample_weight)
        if clf.tree_ is not None:
            return clf
        if not clf.lower_bound_ >= bound:
            raise ValueError(
                f"the fit at depth {depth} stopped (time limit) before proving "
                "whether a perfect tree exists"
            )
    raise ValueError(f"no tree of depth <= {max_depth} classifies all rows correctly")
