"""Rank encoding for solvers over every threshold of numeric features.

ConTree's implementations (pycontree in float32, pytrees-rs whose splits
need gaps wider than its tolerance) can merge distinct values of a column.
On ranks (small whole numbers, exact in any float) they see every split the
data has; their thresholds map back to midpoints of the original values.
"""

from __future__ import annotations

import math

import numpy as np

from odtstudy.datasets._binarizer import _midpoints
from odtstudy.external._convert import LEAF

__all__ = ["RankedColumns"]


class RankedColumns:
    """Each column's values replaced by their rank among its distinct values.

    A threshold a solver returns between ranks ``r`` and ``r + 1`` maps back
    to the threshold between the ``r``-th and ``r + 1``-th distinct values
    of the column, so the same rows go left on the original data.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Numeric features.

    Attributes
    ----------
    ranks : ndarray of shape (n_samples, n_features)
        The ranks, as float64: what the solver is given.
    distinct : list of ndarray
        Each column's distinct values, sorted.
    """

    def __init__(self, X):
        self.distinct = [np.unique(column) for column in X.T]
        self.ranks = np.column_stack(
            [np.searchsorted(d, column) for d, column in zip(self.distinct, X.T)]
        ).astype(np.float64)
        self._cuts = [_midpoints(d) for d in self.distinct]

    def threshold(self, feature, rank_threshold) -> float:
        """The threshold on the original column with the same rows left."""
        r = math.floor(rank_threshold)  # the largest rank going left
        cuts, distinct = self._cuts[feature], self.distinct[feature]
        if r >= len(cuts):  # every row goes left
            return float(distinct[-1])
        if r < 0:  # every row goes right
            return float(np.nextafter(distinct[0], -np.inf))
        return float(cuts[r])

    def on_original(self, describe):
        """``describe`` (for :func:`~odtstudy.external._convert.build_tree`)
        of a tree fitted on :attr:`ranks`, with its thresholds mapped back to
        the original values."""

        def mapped(node):
            split, rest = describe(node)
            if split is LEAF:
                return split, rest
            feature, rank_threshold = split
            return (feature, self.threshold(int(feature), rank_threshold)), rest

        return mapped
