"""scikit-learn ensembles wrapped for the study runner (the seeds' baselines).

Each wrapper takes ``max_depth``, ``n_estimators`` (100, as in the thesis),
``time_limit`` (accepted, ignored) and ``random_state``, fits the
scikit-learn ensemble in ``estimator_`` and stores the odtstudy contract
through :class:`~odtstudy.base.FitResult` (``objective_`` = training
misclassifications, ``lower_bound_ = None``, ``optimal_ = False``,
``n_trees_``, ``fit_time_``, ``stats_``, ``status_``; ``tree_ = None``).
They are studied on the same 0/1 data as the optimal forests they are
compared with (``_study_data = "binary"``), though they accept any numbers.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.ensemble import (
    AdaBoostClassifier,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval

from odtstudy.base import FitResult
from odtstudy.naiveforest._base import BaseForestClassifier

__all__ = ["AdaBoostBaseline", "GradientBoostingBaseline", "RandomForestBaseline"]


class _SklearnEnsemble(BaseForestClassifier):
    _study_data = "binary"

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

    def _fit(self, X, y) -> FitResult:
        self.estimator_ = self._make().fit(X, y)
        n_trees = int(np.size(self.estimator_.estimators_))
        return FitResult(
            tree=None,
            objective=float(np.sum(self.estimator_.predict(X) != y)),
            lower_bound=None,
            optimal=False,
            status="feasible",
            stats={"n_trees": n_trees},
            n_trees=n_trees,
        )

    def predict(self, X):
        """Predict with the fitted scikit-learn ensemble."""
        X = self._validate_X(X)
        return self.classes_[self.estimator_.predict(X)]

    def predict_proba(self, X):
        """Class probabilities of the fitted scikit-learn ensemble."""
        X = self._validate_X(X)
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
