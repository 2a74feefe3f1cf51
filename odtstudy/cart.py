"""CART baseline: scikit-learn's greedy tree, returned as a common ``Tree``."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy.base import BaseTreeClassifier, FitResult
from odtstudy.tree import Tree

__all__ = ["CARTClassifier", "tree_from_sklearn"]


def tree_from_sklearn(sk_tree, X, y, n_classes, sample_weight=None) -> Tree:
    """Convert a fitted scikit-learn tree (``est.tree_``) into a ``Tree``.

    Node counts are recomputed by routing ``(X, y)`` so that ``value`` holds
    class counts (or weights), whatever scikit-learn's version stores.
    """
    leaf = sk_tree.children_left == -1
    feature = np.where(leaf, -1, sk_tree.feature)
    threshold = np.where(leaf, -2.0, sk_tree.threshold)
    skeleton = Tree(
        feature,
        threshold,
        sk_tree.children_left,
        sk_tree.children_right,
        np.zeros((sk_tree.node_count, n_classes)),
        np.zeros(sk_tree.node_count, dtype=np.int64),
        label=np.argmax(sk_tree.value[:, 0, :], axis=1),
    )
    return skeleton.with_training_values(X, y, n_classes, sample_weight)


class CARTClassifier(BaseTreeClassifier):
    """scikit-learn's CART, wrapped into the odtstudy estimator contract.

    Parameters
    ----------
    max_depth : int, default=None
        Maximum depth; ``None`` grows until the leaves are pure.
    min_samples_leaf : int, default=1
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    time_limit : float, default=None
        Accepted for interface uniformity; CART always finishes quickly.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    tree_ : Tree
    classes_ : ndarray
    objective_ : float
        Training misclassifications (weighted when ``sample_weight`` is given).
    lower_bound_ : None
    optimal_ : bool
        Always False: CART is a heuristic.
    fit_time_ : float
    stats_ : dict
        ``n_nodes`` and ``n_leaves``.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> CARTClassifier(max_depth=2).fit(X, y).objective_
    6.0
    """

    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        max_depth=None,
        *,
        min_samples_leaf=1,
        criterion="gini",
        time_limit=None,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.time_limit = time_limit
        self.random_state = random_state

    def _fit(self, X, y, sample_weight):
        sk = DecisionTreeClassifier(
            max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            criterion=self.criterion,
            random_state=self.random_state,
        ).fit(X, y, sample_weight=sample_weight)
        tree = tree_from_sklearn(sk.tree_, X, y, len(self.classes_), sample_weight)
        wrong = tree.predict(X) != y
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        return FitResult(
            tree=tree,
            objective=float(np.sum(weights[wrong])),
            lower_bound=None,
            optimal=False,
            status="feasible",
            stats={"n_nodes": tree.node_count, "n_leaves": tree.n_leaves},
        )
