"""scikit-learn ensembles wrapped for the study runner (the seeds' baselines).

Each wrapper takes ``max_depth``, ``n_estimators`` (100, as in the thesis),
``time_limit`` (accepted, ignored) and ``random_state``, fits the
scikit-learn ensemble in ``estimator_`` and exposes the odtstudy contract
(``objective_`` = training misclassifications, ``lower_bound_ = None``,
``optimal_ = False``, ``fit_time_``, ``stats_``, ``status_``).
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import (
    AdaBoostClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from odtstudy.base import _explain_validation_error

__all__ = ["AdaBoostBaseline", "GradientBoostingBaseline", "RandomForestBaseline"]


class _SklearnEnsemble(ClassifierMixin, BaseEstimator):
    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self, max_depth=3, *, n_estimators=100, time_limit=None, random_state=None
    ):
        self.max_depth = max_depth
        self.n_estimators = n_estimators
        self.time_limit = time_limit
        self.random_state = random_state

    def _make(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, X, y):
        """Fit the scikit-learn ensemble.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._validate_params()
        try:
            X, y = validate_data(self, X, y, dtype="numeric")
        except ValueError as exc:
            raise _explain_validation_error(exc) from exc
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has only one class ({self.classes_[0]!r}); a classifier "
                "needs at least 2 classes"
            )
        start = time.perf_counter()
        self.estimator_ = self._make().fit(X, y)
        self.fit_time_ = time.perf_counter() - start
        self.objective_ = float(np.sum(self.estimator_.predict(X) != y))
        self.lower_bound_ = None
        self.optimal_ = False
        self.status_ = "feasible"
        self.stats_ = {"n_trees": int(np.size(self.estimator_.estimators_))}
        return self

    def predict(self, X):
        """Predict with the fitted scikit-learn ensemble."""
        check_is_fitted(self, "estimator_")
        X = validate_data(self, X, reset=False, dtype="numeric")
        return self.estimator_.predict(X)

    def predict_proba(self, X):
        """Class probabilities of the fitted scikit-learn ensemble."""
        check_is_fitted(self, "estimator_")
        X = validate_data(self, X, reset=False, dtype="numeric")
        return self.estimator_.predict_proba(X)


class RandomForestBaseline(_SklearnEnsemble):
    """scikit-learn's ``RandomForestClassifier`` with trees of depth ``max_depth``.

    Parameters
    ----------
    max_depth : int, default=3
    n_estimators : int, default=100
    time_limit : float, default=None
        Accepted for interface uniformity, ignored.
    random_state : int, RandomState instance or None, default=None
    """

    def _make(self):
        return RandomForestClassifier(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            random_state=self.random_state,
            n_jobs=1,
        )


class GradientBoostingBaseline(_SklearnEnsemble):
    """scikit-learn's ``GradientBoostingClassifier`` with trees of depth ``max_depth``.

    Parameters
    ----------
    max_depth : int, default=3
    n_estimators : int, default=100
    time_limit : float, default=None
        Accepted for interface uniformity, ignored.
    random_state : int, RandomState instance or None, default=None
    """

    def _make(self):
        return GradientBoostingClassifier(
            n_estimators=self.n_estimators,
            max_depth=self.max_depth,
            random_state=self.random_state,
        )


class AdaBoostBaseline(_SklearnEnsemble):
    """scikit-learn's ``AdaBoostClassifier`` over CART trees of depth ``max_depth``.

    Parameters
    ----------
    max_depth : int, default=3
    n_estimators : int, default=100
    time_limit : float, default=None
        Accepted for interface uniformity, ignored.
    random_state : int, RandomState instance or None, default=None
    """

    def _make(self):
        return AdaBoostClassifier(
            DecisionTreeClassifier(max_depth=self.max_depth),
            n_estimators=self.n_estimators,
            random_state=self.random_state,
        )
