"""The estimator contract shared by every odtstudy learner.

A learner subclasses :class:`BaseTreeClassifier` and implements
``_fit(X, y, sample_weight) -> FitResult``; the base class validates the
input, encodes the labels, times the fit and stores the contract attributes
(``tree_``, ``classes_``, ``objective_``, ``lower_bound_``, ``optimal_``,
``fit_time_``, ``stats_``, ``status_``, ``n_trees_``). Forests hand back a
:class:`FitResult` too (``estimators``, ``weights``, or ``n_trees`` for a
wrapped scikit-learn ensemble) and store it with the same ``_store_result``.

What the study registry reads from a learner's *class*:

- ``_requires_binary``: True when ``fit`` only accepts 0/1 features;
- ``study_data(params)`` (class method) or ``_study_data``: ``"binary"`` or
  ``"numeric"``, the data a study feeds it (default: ``"binary"`` exactly
  when ``_requires_binary``);
- ``_exact``: True when the learner can prove optimality;
- ``objective_family(params)`` (class method) or ``_objective_family``: what
  ``objective_`` measures;
- ``_study_tasks``: the study tasks it serves, ``("classification",)`` when
  absent, ``("regression",)`` for a regressor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from odtstudy._deadline import Deadline, FitClockMixin
from odtstudy.tree import Tree

__all__ = [
    "BaseTreeClassifier",
    "BaseTreeRegressor",
    "FitResult",
    "as_float64",
    "check_binary_features",
    "check_exact_float64",
    "export_graphviz",
    "export_text",
]

STATUSES = ("optimal", "feasible", "timeout", "infeasible")


@dataclass
class FitResult:
    """What a learner's ``_fit`` hands back to its base class.

    A single-tree learner sets ``tree``; it may be ``None`` only when no tree
    satisfies the learner's constraints (``status="infeasible"``, a proof) or
    when the learner stopped at its time limit before it found a tree that
    does (``status="timeout"``), and ``reason`` then says why. A forest
    leaves ``tree`` at ``None`` and sets ``estimators`` (its ``Tree`` s,
    labels as class indices) and ``weights``; a wrapped scikit-learn
    ensemble sets only ``n_trees``. A learner that
    fits one tree per output (``DL85Regressor`` with several quantiles)
    sets ``trees`` too (``tree`` is the first), with ``objective`` and
    ``lower_bound`` arrays, one value per tree.
    """

    tree: Tree | None
    objective: float | np.ndarray | None
    lower_bound: float | np.ndarray | None = None
    optimal: bool = False
    status: str = "feasible"
    stats: dict = field(default_factory=dict)
    reason: str = ""
    estimators: list | None = None
    weights: np.ndarray | None = None
    n_trees: int | None = None
    trees: list | None = None

    @property
    def is_forest(self) -> bool:
        """True for a forest (``estimators`` or ``n_trees`` given)."""
        return self.estimators is not None or self.n_trees is not None

    def count_trees(self) -> int:
        """Trees in the model: ``n_trees``, else ``len(estimators)``, else 1
        for a tree and 0 when none was found."""
        if self.n_trees is not None:
            return int(self.n_trees)
        if self.estimators is not None:
            return len(self.estimators)
        if self.trees is not None:
            return len(self.trees)
        return 0 if self.tree is None else 1


def check_binary_features(X: np.ndarray, learner: str, hint: str = "") -> None:
    """Raise a ``ValueError`` naming the ``Binarizer`` (and ``hint``, another
    way out) when ``X`` is not 0/1."""
    if X.size and not np.isin(X, (0, 1)).all():
        bad = X[~np.isin(X, (0, 1))]
        raise ValueError(
            f"{learner} needs a 0/1 feature matrix, but X contains other values "
            f"(e.g. {bad.flat[0]!r}). Binarize numeric or categorical data first "
            "with odtstudy.datasets.Binarizer (or a scikit-learn Pipeline "
            f"starting with it){hint}."
        )


def _explain_validation_error(exc: ValueError) -> ValueError:
    """Turn scikit-learn's input errors into ones that name the fix."""
    msg = str(exc)
    if "inconsistent numbers of samples" in msg:
        return ValueError(f"X and y have different lengths: {msg}")
    if "inhomogeneous" in msg or "setting an array element with a sequence" in msg:
        return ValueError(
            "X is ragged (rows of different lengths); pass a rectangular "
            "2-D array or DataFrame"
        )
    if "0 feature(s)" in msg:
        return ValueError(
            f"X has no columns ({msg}). If a Binarizer comes first, it found "
            "no test to make on its input"
        )
    if "sparse" in msg.lower():
        return TypeError(
            f"{msg}. The learners take dense data: convert it with X.toarray()"
        )
    if "could not convert" in msg or ("dtype" in msg and "numeric" in msg):
        return ValueError(
            f"X must be numeric ({msg}). Encode categorical columns first, "
            "e.g. with odtstudy.datasets.Binarizer."
        )
    return exc


def _validate_X(estimator, X, reset):
    try:
        return validate_data(estimator, X, reset=reset, dtype="numeric")
    except ValueError as exc:
        raise _explain_validation_error(exc) from exc


#: Total sample weight above which sums of weights (and of weighted squares)
#: come too close to the float64 range; the optimal tree is unchanged when
#: all weights are multiplied by one constant.
MAX_TOTAL_WEIGHT = 1e100


def _validate_sample_weight(sample_weight, X):
    """Checked float64 weights (or None): finite, non-negative, not all zero,
    one per row of ``X``, and of a total the float64 sums can hold."""
    if sample_weight is None:
        return None
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight must be non-negative")
    total = float(np.sum(sample_weight))
    if not total <= MAX_TOTAL_WEIGHT:
        raise ValueError(
            f"sample_weight sums to {total:.3g}; at most {MAX_TOTAL_WEIGHT:g} "
            "keeps float64 sums of weights (and weighted squares) in range: "
            "divide all weights by one constant (the optimal tree does not change)"
        )
    return sample_weight


def _validate_supervised_data(estimator, X, y, y_numeric):
    """``validate_data`` for ``(X, y)``, with clear errors for a missing ``y``
    and bad ``X``."""
    if y is None:
        raise ValueError(
            f"{type(estimator).__name__} requires y to be passed, "
            "but the target y is None"
        )
    try:
        return validate_data(estimator, X, y, dtype="numeric", y_numeric=y_numeric)
    except ValueError as exc:
        raise _explain_validation_error(exc) from exc


def as_float64(values, problem: str, fix: str, name: str = "X") -> np.ndarray:
    """``values`` as a float64 array, or a ``ValueError`` saying ``problem``
    (with NumPy's reason) and ``fix``; integers that float64 cannot hold
    exactly are refused (:func:`check_exact_float64`)."""
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{problem} ({exc}); {fix}") from exc
    check_exact_float64(values, out, name)
    return out


def check_exact_float64(values, as_float: np.ndarray, name: str = "X") -> None:
    """Refuse integers beyond 2**53 that float64 rounds.

    Two such integers can round to one double, and no float64 threshold
    ``t`` then has ``a <= t < b``: a tree on the rounded values could not
    separate rows the data separates, yet be proven optimal on them.
    """
    original = np.asarray(values)
    if original.dtype.kind not in "iu" or original.size == 0:
        return
    big = np.abs(original.astype(np.float64)) >= 2.0**53
    if not big.any():
        return
    lost = original[big] != as_float[big].astype(original.dtype)
    if lost.any():
        example = original[big][lost].flat[0]
        raise ValueError(
            f"{name} holds integers beyond 2**53 (e.g. {example}) that float64 "
            "cannot represent exactly, so distinct values would merge and "
            "thresholds could not separate them; subtract an offset from the "
            "column (e.g. X - X.min(axis=0)), or replace its values by their "
            "ranks"
        )


def _validate_regression_data(estimator, X, y, binary=False):
    """Validate ``(X, y)`` for a regressor: ``X`` and ``y`` as float64, clear
    errors for a missing ``y``, bad ``X`` and, with ``binary=True``, non-0/1
    features."""
    name = type(estimator).__name__
    X, y = _validate_supervised_data(estimator, X, y, y_numeric=True)
    if binary:
        check_binary_features(X, name, getattr(estimator, "_binary_hint", ""))
    y = as_float64(
        y,
        f"y must be numeric for {name} (a regressor), but it holds non-numbers",
        "for class labels use a classifier such as DL85Classifier, or convert "
        "y to numbers first",
    )
    if not np.isfinite(y).all():
        raise ValueError(f"y contains NaN or infinity; {name} needs finite targets")
    return X, y


def _check_one_label_type(y) -> None:
    """Labels that mix strings with numbers cannot be ordered into classes_."""
    if np.asarray(y).dtype != object:
        return
    kinds = {"str" if isinstance(v, str) else type(v).__name__ for v in y}
    if "str" in kinds and len(kinds) > 1:
        raise ValueError(
            f"y mixes label types ({', '.join(sorted(kinds))}); give labels of "
            "one type, e.g. all strings with y.astype(str)"
        )


def _validate_classification_data(estimator, X, y, binary=False):
    """Validate ``(X, y)`` for a classifier; set ``classes_`` on ``estimator``.

    Returns ``X`` and ``y`` encoded as class indices (int64). Raises clear
    ``ValueError`` s for a missing ``y``, bad ``X``, a single class and, with
    ``binary=True``, non-0/1 features.
    """
    X, y = _validate_supervised_data(estimator, X, y, y_numeric=False)
    _check_one_label_type(y)
    check_classification_targets(y)
    estimator.classes_, y_encoded = np.unique(y, return_inverse=True)
    if len(estimator.classes_) < 2:
        raise ValueError(
            f"y has only one class ({estimator.classes_[0]!r}); a classifier "
            "needs at least 2 classes"
        )
    if binary:
        check_binary_features(
            X, type(estimator).__name__, getattr(estimator, "_binary_hint", "")
        )
    return X, y_encoded.astype(np.int64)


class _ContractMixin(FitClockMixin):
    """Stores a :class:`FitResult` as the contract attributes, for every
    learner (single trees and forests alike).

    Sets ``tree_`` (``None`` for a forest), ``objective_``, ``lower_bound_``,
    ``optimal_``, ``status_``, ``stats_`` and ``n_trees_``; a forest also
    gets ``estimators_`` and ``weights_`` when the result lists its trees.
    :meth:`_timed_fit` also sets ``fit_time_``.
    """

    def _binary_input(self) -> bool:
        """Whether this instance's ``fit`` only accepts 0/1 features."""
        return self._requires_binary

    def _timed_fit(self, *args) -> FitResult:
        """Run ``self._fit(*args)``, set ``fit_time_`` (from entering ``fit``)
        and store the result."""
        clock = Deadline(None, start=getattr(self, "_fit_entered", None))
        result = self._fit(*args)
        self.fit_time_ = clock.elapsed()
        self._store_result(result)
        return result

    def _store_result(self, result: FitResult):
        if result.status not in STATUSES:
            raise ValueError(f"unknown fit status {result.status!r}")
        names = getattr(self, "feature_names_in_", None)
        names = None if names is None else [str(n) for n in names]
        tree = result.tree
        if tree is not None and tree.feature_names is None:
            tree.feature_names = names
        if result.estimators is not None:
            # a forest of classifiers: its trees' labels are class indices
            self.estimators_ = list(result.estimators)
            self.weights_ = (
                np.ones(len(self.estimators_))
                if result.weights is None
                else np.asarray(result.weights, dtype=np.float64).copy()
            )
            for member in self.estimators_:
                member.classes = self.classes_
                member.feature_names = names
        self.tree_ = tree
        self.n_trees_ = result.count_trees()
        self.objective_ = result.objective
        self.lower_bound_ = result.lower_bound
        self.optimal_ = bool(result.optimal)
        self.status_ = result.status
        self.stats_ = dict(result.stats)
        self._no_tree_reason = result.reason


class _FittedTreeMixin(_ContractMixin):
    """Fitted-state bookkeeping shared by every single-tree estimator:
    storing a :class:`FitResult`, the ``tree_ is None`` guard and ``apply``."""

    def _fitted_tree(self) -> Tree:
        check_is_fitted(self, "tree_")
        if self.tree_ is None:
            raise ValueError(
                f"{type(self).__name__} found no tree during fit: "
                f"{self._no_tree_reason or 'no tree satisfies the constraints'}"
            )
        return self.tree_

    def apply(self, X):
        """Return the leaf id each row of ``X`` reaches."""
        tree = self._fitted_tree()
        return tree.apply(_validate_X(self, X, reset=False))


class BaseTreeClassifier(_FittedTreeMixin, ClassifierMixin, BaseEstimator):
    """Fit bookkeeping, prediction and scoring for single-tree classifiers.

    Subclasses set ``_requires_binary = True`` when they only accept 0/1
    features and implement ``_fit``.
    """

    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }
    _requires_binary = False
    _exact = False
    _objective_family = "misclassification"

    # ----------------------------------------------------------------- fit
    def _validate_training_data(self, X, y, sample_weight):
        X, y_encoded = _validate_classification_data(
            self, X, y, binary=self._binary_input()
        )
        return X, y_encoded, _validate_sample_weight(sample_weight, X)

    def fit(self, X, y, sample_weight=None):
        """Fit the tree on ``X`` and ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Any labels (strings and non-contiguous integers work).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._enter_fit()
        self._validate_params()
        X, y_encoded, sample_weight = self._validate_training_data(X, y, sample_weight)
        self._timed_fit(X, y_encoded, sample_weight)
        return self

    def _store_result(self, result: FitResult):
        if result.tree is not None:
            result.tree.classes = self.classes_
        super()._store_result(result)

    def _fit(self, X, y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError

    # ------------------------------------------------------------- predict
    def predict(self, X):
        """Predict the class of each row of ``X``."""
        tree = self._fitted_tree()
        X = _validate_X(self, X, reset=False)
        return tree.predict(X)

    def predict_proba(self, X):
        """Class frequencies of the training rows in the leaf each row reaches."""
        tree = self._fitted_tree()
        X = _validate_X(self, X, reset=False)
        proba = tree.predict_proba(X)
        if proba.shape[1] != len(self.classes_):
            raise ValueError("the tree's value arrays do not match classes_")
        return proba

    def training_error(self, X, y, sample_weight=None) -> float:
        """(Weighted) number of misclassified rows of ``(X, y)``."""
        wrong = self.predict(X) != np.asarray(y)
        if sample_weight is None:
            return float(np.sum(wrong))
        return float(np.sum(np.asarray(sample_weight, dtype=float)[wrong]))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class BaseTreeRegressor(_FittedTreeMixin, RegressorMixin, BaseEstimator):
    """Fit bookkeeping and prediction for single-tree regressors.

    Same contract as :class:`odtstudy.base.BaseTreeClassifier` (``tree_``,
    ``objective_``, ``lower_bound_``, ``optimal_``, ``status_``,
    ``fit_time_``, ``stats_``) without the classes.
    """

    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }
    _requires_binary = False

    def fit(self, X, y, sample_weight=None):
        """Fit the tree on ``X`` and the real target ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._enter_fit()
        self._validate_params()
        X, y = _validate_regression_data(self, X, y, binary=self._binary_input())
        sample_weight = _validate_sample_weight(sample_weight, X)
        self._timed_fit(X, y, sample_weight)
        return self

    def _fit(self, X, y, sample_weight):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X):
        """Predict the value of each row of ``X``."""
        tree = self._fitted_tree()
        return tree.predict(_validate_X(self, X, reset=False))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def _resolve(model):
    if isinstance(model, Tree):
        return model, model.feature_names, None
    tree = model._fitted_tree() if hasattr(model, "_fitted_tree") else model.tree_
    names = getattr(model, "feature_names_in_", None)
    names = None if names is None else [str(n) for n in names]
    classes = getattr(model, "classes_", None)
    classes = None if classes is None else [str(c) for c in classes]
    return tree, names, classes


def export_text(model, feature_names=None, class_names=None, decimals=2) -> str:
    """Text rendering of a fitted learner's tree (or of a :class:`Tree`).

    Feature names default to ``feature_names_in_`` and class names to
    ``classes_``.
    """
    tree, names, classes = _resolve(model)
    return tree.export_text(
        feature_names=feature_names if feature_names is not None else names,
        class_names=class_names if class_names is not None else classes,
        decimals=decimals,
    )


def export_graphviz(model, feature_names=None, class_names=None, decimals=2) -> str:
    """Graphviz ``.dot`` source of a fitted learner's tree (or of a :class:`Tree`)."""
    tree, names, classes = _resolve(model)
    return tree.export_graphviz(
        feature_names=feature_names if feature_names is not None else names,
        class_names=class_names if class_names is not None else classes,
        decimals=decimals,
    )
