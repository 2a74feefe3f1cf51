"""CART baselines: scikit-learn's greedy trees, returned as a common ``Tree``."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy._regression_loss import summed_loss
from odtstudy.base import BaseTreeClassifier, BaseTreeRegressor, FitResult
from odtstudy.tree import Tree

__all__ = ["CARTClassifier", "CARTRegressor", "tree_from_sklearn"]

#: The objective family of each regression criterion: what ``objective_``
#: sums (the leaves predict means for the squared errors, medians for the
#: absolute errors, as scikit-learn fits them).
_REGRESSION_FAMILIES = {
    "squared_error": "squared-error",
    "friedman_mse": "squared-error",
    "absolute_error": "absolute-error",
}


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


def _regression_tree_from_sklearn(sk_tree, X) -> Tree:
    """A ``kind="regressor"`` :class:`Tree` of a fitted scikit-learn
    regression tree (``est.tree_``): each node predicts scikit-learn's value,
    ``n_samples`` counts the rows of ``X`` reaching it."""
    leaf = sk_tree.children_left == -1
    tree = Tree(
        np.where(leaf, -1, sk_tree.feature),
        np.where(leaf, -2.0, sk_tree.threshold),
        sk_tree.children_left,
        sk_tree.children_right,
        sk_tree.value[:, 0, :1],
        np.zeros(sk_tree.node_count, dtype=np.int64),
        kind="regressor",
    )
    return tree.with_training_values(X, None)


def _constraints(criteria: set) -> dict:
    """The parameter constraints of a CART learner with these criteria."""
    return {
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "criterion": [StrOptions(criteria)],
        "ccp_alpha": [Interval(Real, 0, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }


def _fit_sklearn(learner, sk_class, X, y, sample_weight):
    """scikit-learn's tree ``sk_class`` fitted with ``learner``'s parameters."""
    return sk_class(
        max_depth=learner.max_depth,
        min_samples_leaf=learner.min_samples_leaf,
        criterion=learner.criterion,
        ccp_alpha=learner.ccp_alpha,
        random_state=learner.random_state,
    ).fit(X, y, sample_weight=sample_weight)


def _shape_stats(tree: Tree) -> dict:
    return {"n_nodes": tree.node_count, "n_leaves": tree.n_leaves}


class CARTClassifier(BaseTreeClassifier):
    """scikit-learn's CART, wrapped into the odtstudy estimator contract.

    Parameters
    ----------
    max_depth : int, default=None
        Maximum depth; ``None`` grows until the leaves are pure.
    min_samples_leaf : int, default=1
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    ccp_alpha : float, default=0.0
        scikit-learn's minimal cost-complexity pruning: the subtree with the
        largest cost complexity below ``ccp_alpha`` is pruned (0: none).
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

    _parameter_constraints = _constraints({"gini", "entropy", "log_loss"})

    def __init__(
        self,
        max_depth=None,
        *,
        min_samples_leaf=1,
        criterion="gini",
        ccp_alpha=0.0,
        time_limit=None,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.ccp_alpha = ccp_alpha
        self.time_limit = time_limit
        self.random_state = random_state

    def _fit(self, X, y, sample_weight):
        sk = _fit_sklearn(self, DecisionTreeClassifier, X, y, sample_weight)
        tree = tree_from_sklearn(sk.tree_, X, y, len(self.classes_), sample_weight)
        wrong = tree.predict(X) != y
        weights = np.ones(len(y)) if sample_weight is None else sample_weight
        return FitResult(
            tree=tree,
            objective=float(np.sum(weights[wrong])),
            lower_bound=None,
            optimal=False,
            status="feasible",
            stats=_shape_stats(tree),
        )


class CARTRegressor(BaseTreeRegressor):
    """scikit-learn's CART regression tree, in the odtstudy estimator contract.

    Parameters
    ----------
    max_depth : int, default=None
        Maximum depth; ``None`` grows until every leaf is pure or too small.
    min_samples_leaf : int, default=1
    criterion : {"squared_error", "friedman_mse", "absolute_error"}, \
            default="squared_error"
        scikit-learn's split criterion; its leaves predict the mean (the
        squared errors) or the median (``"absolute_error"``) of their rows.
    ccp_alpha : float, default=0.0
        scikit-learn's minimal cost-complexity pruning (0: none).
    time_limit : float, default=None
        Accepted for interface uniformity; CART always finishes quickly.
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    tree_ : Tree
        A ``kind="regressor"`` tree, ``value[:, 0]`` the prediction.
    objective_ : float
        The training loss of the criterion's family summed over the rows
        (weighted when ``sample_weight`` is given): the sum of squared
        errors, or of absolute errors for ``"absolute_error"``.
    objective_family_ : str
        ``"squared-error"`` or ``"absolute-error"``.
    lower_bound_ : None
    optimal_ : bool
        Always False: CART is a heuristic.
    fit_time_ : float
    stats_ : dict
        ``n_nodes`` and ``n_leaves``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> reg = CARTRegressor(max_depth=1).fit(X, [1.0, 2.0, 10.0, 12.0])
    >>> reg.predict(X).tolist(), reg.objective_
    ([1.5, 1.5, 11.0, 11.0], 2.5)
    """

    _exact = False
    _study_tasks = ("regression",)
    _parameter_constraints = _constraints(set(_REGRESSION_FAMILIES))

    def __init__(
        self,
        max_depth=None,
        *,
        min_samples_leaf=1,
        criterion="squared_error",
        ccp_alpha=0.0,
        time_limit=None,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.criterion = criterion
        self.ccp_alpha = ccp_alpha
        self.time_limit = time_limit
        self.random_state = random_state

    @classmethod
    def objective_family(cls, params=None) -> str:
        """``"squared-error"`` or ``"absolute-error"``, from ``criterion``."""
        criterion = (params or {}).get("criterion", "squared_error")
        return _REGRESSION_FAMILIES[criterion]

    def _fit(self, X, y, sample_weight):
        self.objective_family_ = self.objective_family(self.get_params())
        sk = _fit_sklearn(self, DecisionTreeRegressor, X, y, sample_weight)
        tree = _regression_tree_from_sklearn(sk.tree_, X)
        loss = summed_loss(self.objective_family_, y, tree.predict(X), sample_weight)
        return FitResult(
            tree=tree,
            objective=loss,
            lower_bound=None,
            optimal=False,
            status="feasible",
            stats=_shape_stats(tree),
        )
