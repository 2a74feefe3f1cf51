"""ConTree (``pycontree``): optimal trees over every threshold of numeric features."""

from __future__ import annotations

import warnings

import numpy as np

from odtstudy._child import call_in_process
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF
from odtstudy.external._ranks import RankedColumns

__all__ = ["ConTreeClassifier"]


def _describe(node):
    if node.is_leaf_node():
        return LEAF, int(node.get_label())
    split = (node.get_split_feature(), node.get_split_threshold())
    return split, (node.get_left(), node.get_right())


class ConTreeClassifier(ExternalTreeClassifier):
    """ConTree (Brița, van der Linden, Demirović, 2025) through ``pycontree``.

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` whose tests are ``x[feature] <= t`` for *any* threshold of a
    numeric feature. Its proven objective equals DL8.5's on the same data
    binarised at every midpoint (``Binarizer(max_thresholds=None)``).

    ConTree computes in float32, so the adapter gives it each column's ranks
    (exact) and maps its thresholds back to midpoints of the original values:
    distinct float64 values never merge.

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (ConTree stops itself; ``None``: no limit).

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is True when ConTree ended
        within its time limit (it runs with ``max_gap=0``: exact).
    stats_ : dict
        ``tool``, ``n_leaves``, ``startup_s`` (0: ConTree runs in this
        process), ``solver_time_s`` (its ``fit`` call).
    """

    _tool = "pycontree"
    _module = "pycontree"

    def __init__(self, max_depth=3, *, time_limit=None):
        self.max_depth = max_depth
        self.time_limit = time_limit

    def fit(self, X, y):
        """Fit ConTree on ``X`` and ``y``.

        ConTree minimises the plain number of misclassifications, so ``fit``
        takes no ``sample_weight`` (scikit-learn's ``has_fit_parameter`` then
        tells meta-estimators so).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Numeric features.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _fit(self, X, y, sample_weight):
        pycontree = self._solver()
        solver = pycontree.ConTree(
            max_depth=self.max_depth,
            max_gap=0,
            time_limit=1e9 if self.time_limit is None else self._time_left(),
        )
        ranked = RankedColumns(np.asarray(X, dtype=np.float64))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call = call_in_process(lambda: solver.fit(ranked.ranks, y.astype(int)))
        # ConTree's only signal that it stopped at its limit is this warning
        timed_out = any("time limit" in str(w.message) for w in caught)
        tree = self._convert(solver.tree_, ranked.on_original(_describe), X, y)
        return self._result(
            tree,
            X,
            y,
            proven=not timed_out,
            timed_out=timed_out,
            stats=call.timings(),
        )
