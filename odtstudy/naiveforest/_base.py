"""Shared fit bookkeeping and weighted voting for the forest learners."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from odtstudy.base import _ContractMixin, _validate_classification_data, _validate_X
from odtstudy.tree import Tree

__all__ = ["BaseForestClassifier", "weighted_vote"]


def weighted_vote(predictions, weights, n_classes) -> np.ndarray:
    """Sum of tree weights per class.

    Parameters
    ----------
    predictions : ndarray of shape (n_trees, n_samples)
        Class indices predicted by each tree.
    weights : ndarray of shape (n_trees,)
    n_classes : int

    Returns
    -------
    votes : ndarray of shape (n_samples, n_classes)
    """
    predictions = np.asarray(predictions, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    n = predictions.shape[1] if predictions.ndim == 2 else 0
    votes = np.zeros((n, n_classes))
    for pred, w in zip(predictions, weights):
        votes[np.arange(n), pred] += w
    return votes


class BaseForestClassifier(_ContractMixin, ClassifierMixin, BaseEstimator):
    """Input validation, weighted voting, prediction for forests of ``Tree``.

    The one ``fit`` of every forest validates the data (0/1 features when
    :meth:`_binary_input` says so; it sets ``classes_``), then runs
    ``self._timed_fit(X, y)``: the subclass's ``_fit(X, y)`` returns a
    :class:`~odtstudy.base.FitResult` with ``estimators`` (trees whose labels
    are class indices) and ``weights``, or ``n_trees`` for a wrapped
    ensemble, stored as the common contract (``estimators_``, ``weights_``,
    ``n_trees_``, ``objective_``, ``fit_time_``, ...; ``tree_`` is
    ``None``). The forest predicts ``argmax_c sum_{t: h_t(x) = c} w_t``
    (ties go to the smallest class index).
    """

    _requires_binary = False
    _exact = False
    _objective_family = "forest-misclassification"

    def fit(self, X, y):
        """Fit the forest on ``X`` and ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            0/1 features for the learners that only accept them (see
            ``_binary_input``).
        y : array-like of shape (n_samples,)
            Any labels (strings and non-contiguous integers work).

        Returns
        -------
        self
        """
        self._enter_fit()
        self._validate_params()
        X, y = self._validate_training_data(X, y)
        self._timed_fit(X, y)
        return self

    def _fit(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validate_training_data(self, X, y):
        return _validate_classification_data(self, X, y, binary=self._binary_input())

    def _validate_X(self, X):
        check_is_fitted(self, "n_trees_")
        return _validate_X(self, X, reset=False)

    def _tree_predictions(self, X) -> np.ndarray:
        return np.array([_class_index(t, X) for t in self.estimators_]).reshape(
            len(self.estimators_), X.shape[0]
        )

    def _votes(self, X) -> np.ndarray:
        return weighted_vote(
            self._tree_predictions(X), self.weights_, len(self.classes_)
        )

    def predict(self, X):
        """Weighted vote of ``estimators_`` for each row of ``X``."""
        X = self._validate_X(X)
        return self.classes_[np.argmax(self._votes(X), axis=1)]

    def predict_proba(self, X):
        """Share of the total tree weight voting for each class."""
        X = self._validate_X(X)
        votes = self._votes(X)
        total = votes.sum(axis=1, keepdims=True)
        proba = np.full_like(votes, 1.0 / votes.shape[1])
        np.divide(votes, total, out=proba, where=total > 0)
        return proba

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def _class_index(tree: Tree, X) -> np.ndarray:
    """Class index predicted by ``tree`` (its ``label`` array, not ``classes``)."""
    return tree.label[tree.apply(X)]
