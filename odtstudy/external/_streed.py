"""STreeD (``pystreed``): depth-limited optimal classification and regression trees."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from odtstudy._child import call_in_process
from odtstudy._cost_matrix import check_cost_matrix, cost_family, summed_cost
from odtstudy.base import FitResult
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF
from odtstudy.external._regression import ExternalTreeRegressor

__all__ = ["STreeDClassifier", "STreeDCostClassifier", "STreeDRegressor"]


def _describe(node):
    # STreeD sends rows whose (0/1) feature is 0 to left_child
    if node.is_leaf_node():
        return LEAF, int(node.label)
    return (node.feature, 0.5), (node.left_child, node.right_child)


def _describe_regression(node):
    if node.is_leaf_node():
        return LEAF, float(node.label)
    return (node.feature, 0.5), (node.left_child, node.right_child)


class _STreeDFit:
    """The fit of a pystreed solver, shared by the classifier and the
    regressor: a subclass builds the solver (``_streed_solver``) and names
    its tree's ``describe`` function (``_describe``) and the ``stats_`` key
    of STreeD's own training score (``_score_stat``)."""

    _tool = "pystreed"
    _module = "pystreed"
    _requires_binary = True
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_num_nodes": [Interval(Integral, 0, None, closed="left"), None],
        "use_branch_caching": ["boolean"],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        time_limit=None,
        min_samples_leaf=1,
        max_num_nodes=None,
        use_branch_caching=False,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.min_samples_leaf = min_samples_leaf
        self.max_num_nodes = max_num_nodes
        self.use_branch_caching = use_branch_caching
        self.random_state = random_state

    def _streed_solver(self, pystreed, time_limit, seed):  # pragma: no cover
        raise NotImplementedError

    def _streed_params(self, time_limit, seed) -> dict:
        """The parameters both of pystreed's estimators take."""
        return dict(
            max_depth=self.max_depth,
            max_num_nodes=self.max_num_nodes,
            min_leaf_node_size=self.min_samples_leaf,
            time_limit=time_limit,
            use_branch_caching=self.use_branch_caching,
            use_dataset_caching=not self.use_branch_caching,
            random_seed=seed,
        )

    def _solver_fit(self, solver, pystreed, X, y):
        """Run the solver's ``fit`` on the 0/1 rows."""
        solver.fit(X.astype(int), y)

    def _fit(self, X, y, sample_weight):
        self._no_sample_weight(sample_weight, "STreeD")
        pystreed = self._solver()
        if len(y) < self.min_samples_leaf:
            return FitResult(
                tree=None,
                objective=None,
                status="infeasible",
                reason=f"min_samples_leaf={self.min_samples_leaf} exceeds the "
                f"number of training rows ({len(y)}): no tree has a leaf that large",
                stats={"tool": self._tool},
            )
        solver = self._streed_solver(
            pystreed,
            time_limit=1e9 if self.time_limit is None else self._time_left(),
            seed=27 if self.random_state is None else int(self.random_state),
        )
        call = call_in_process(lambda: self._solver_fit(solver, pystreed, X, y))
        result = getattr(solver, "fit_result", None)
        if result is None:  # STreeD gives no tree only when it ran out of time
            return self._result(None, X, y, timed_out=True, stats=call.timings())
        tree = self._convert(solver.tree_, self._describe, X, y)
        proven = bool(result.is_optimal())
        return self._result(
            tree,
            X,
            y,
            proven=proven,
            timed_out=not proven,
            min_sup=self.min_samples_leaf,
            stats={
                self._score_stat: float(result.score()),
                "n_branching_nodes": int(result.tree_nodes()),
                **call.timings(),
            },
        )


class STreeDClassifier(_STreeDFit, ExternalTreeClassifier):
    """STreeD (Van der Linden et al., 2023) through ``pystreed``.

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` on 0/1 features, with leaves of at least
    ``min_samples_leaf`` rows and no limit on the number of branching nodes
    (as DL8.5 does), so its proven objective equals DL8.5's.

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (STreeD stops itself; ``None``: no limit).
    min_samples_leaf : int, default=1
    max_num_nodes : int, default=None
        Limit on branching nodes; ``None``: ``2**max_depth - 1`` (none).
    use_branch_caching : bool, default=False
        STreeD's cache choice (``False``: dataset caching, its default).
    random_state : int, default=None
        STreeD's random seed (``None``: its default, 27).

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is STreeD's own
        ``is_optimal()``, ``lower_bound_`` the objective when proven.
    stats_ : dict
        ``tool``, ``tool_accuracy``, ``n_branching_nodes``, ``n_leaves``,
        ``startup_s`` (0: STreeD runs in this process), ``solver_time_s``
        (its ``fit`` call).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> clf = STreeDClassifier(max_depth=1).fit(X, X[:, 1])  # doctest: +SKIP
    >>> clf.objective_, clf.optimal_  # doctest: +SKIP
    (0.0, True)
    """

    _describe = staticmethod(_describe)
    _score_stat = "tool_accuracy"

    def _streed_solver(self, pystreed, time_limit, seed):
        return pystreed.STreeDClassifier(**self._streed_params(time_limit, seed))


class STreeDRegressor(_STreeDFit, ExternalTreeRegressor):
    """STreeD's regression trees (Van der Linden et al., 2023) through
    ``pystreed``.

    Minimises the sum of squared errors (each leaf predicting the mean of
    its rows) over trees of depth at most ``max_depth`` on 0/1 features, with
    leaves of at least ``min_samples_leaf`` rows and no penalty per branching
    node (pystreed's ``optimization_task="regression"``, where
    ``cost_complexity`` is 0): the problem of
    ``DL85Regressor(max_depth=d, min_sup=min_samples_leaf)``, so their
    proven objectives are equal.

    Parameters
    ----------
    max_depth, time_limit, min_samples_leaf, max_num_nodes, \
            use_branch_caching, random_state
        As for :class:`STreeDClassifier` (same defaults).

    Attributes
    ----------
    tree_ : Tree
        A ``kind="regressor"`` tree predicting STreeD's leaf values.
    objective_ : float
        Sum of squared errors of ``predict`` on the training rows
        (STreeD's own mean squared error is ``stats_["tool_mse"]``).
    objective_family_ : str
        ``"squared-error"``.
    lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is STreeD's own
        ``is_optimal()`` unless a tree of depth 1 refutes it,
        ``lower_bound_`` the objective when proven.
    stats_ : dict
        ``tool``, ``tool_mse``, ``n_branching_nodes``, ``n_leaves``,
        ``startup_s`` (0: STreeD runs in this process), ``solver_time_s``
        (its ``fit`` call), ``claim_refuted`` (when it is).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> reg = STreeDRegressor(max_depth=1)
    >>> reg.fit(X, [1.0, 2.0, 10.0, 12.0]).objective_  # doctest: +SKIP
    2.5
    """

    _describe = staticmethod(_describe_regression)
    _score_stat = "tool_mse"

    def _max_leaves(self):
        return None if self.max_num_nodes is None else self.max_num_nodes + 1

    def _streed_solver(self, pystreed, time_limit, seed):
        return pystreed.STreeDRegressor(
            optimization_task="regression",
            cost_complexity=0.0,
            **self._streed_params(time_limit, seed),
        )


class STreeDCostClassifier(_STreeDFit, ExternalTreeClassifier):
    """STreeD's cost-sensitive classification trees (Van der Linden et al.,
    2023) through ``pystreed``'s ``STreeDCostSensitiveClassifier``.

    Minimises the total misclassification cost
    ``sum_i cost_matrix[predicted_i, y_i]`` over trees of depth at most
    ``max_depth`` on 0/1 features (no feature costs), with leaves of at least
    ``min_samples_leaf`` rows: the problem of
    ``DL85Classifier(cost_matrix=cost_matrix)``, so their proven objectives
    are equal.

    Parameters
    ----------
    cost_matrix : array-like of shape (n_classes, n_classes), default=None
        ``cost_matrix[p, c]`` (finite, non-negative) is the cost of
        predicting class ``p`` (an index into ``classes_``) for a row of
        class ``c``, as for :class:`~odtstudy.dl85.DL85Classifier`; ``None``:
        1 for every error (the misclassification). STreeD's own matrix is
        indexed the other way round (true class first); the adapter
        transposes it.
    max_depth, time_limit, min_samples_leaf, max_num_nodes, random_state
        As for :class:`STreeDClassifier` (same defaults).
    use_branch_caching : bool, default=True
        STreeD's cache choice; ``True`` is the default of its cost-sensitive
        classifier (which has no dataset cache).

    Attributes
    ----------
    tree_, classes_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is STreeD's own
        ``is_optimal()`` unless a single leaf refutes it, ``lower_bound_``
        the objective when proven.
    objective_ : float
        Total misclassification cost of ``predict`` on the training rows
        (STreeD's own score, in its units, is ``stats_["tool_cost"]``).
    objective_family_ : str
        ``"cost@..."`` for the matrix (``"misclassification"`` without one).
    stats_ : dict
        ``tool``, ``tool_cost``, ``n_branching_nodes``, ``n_leaves``,
        ``startup_s``, ``solver_time_s``, ``claim_refuted`` (when it is).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> clf = STreeDCostClassifier(max_depth=1, cost_matrix=[[0, 5], [1, 0]])
    >>> clf.fit(X, X[:, 1]).objective_  # doctest: +SKIP
    0.0
    """

    _describe = staticmethod(_describe)
    _score_stat = "tool_cost"
    _objective_family = "misclassification"
    _parameter_constraints = {
        **_STreeDFit._parameter_constraints,
        "cost_matrix": ["array-like", None],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        cost_matrix=None,
        time_limit=None,
        min_samples_leaf=1,
        max_num_nodes=None,
        use_branch_caching=True,
        random_state=None,
    ):
        super().__init__(
            max_depth,
            time_limit=time_limit,
            min_samples_leaf=min_samples_leaf,
            max_num_nodes=max_num_nodes,
            use_branch_caching=use_branch_caching,
            random_state=random_state,
        )
        self.cost_matrix = cost_matrix

    @classmethod
    def objective_family(cls, params=None) -> str:
        """``"cost@..."`` for ``params["cost_matrix"]``, else the
        misclassification."""
        matrix = (params or {}).get("cost_matrix")
        return cls._objective_family if matrix is None else cost_family(matrix)

    def _costs(self) -> np.ndarray:
        """The checked matrix, ``cost[predicted, true]``."""
        n_classes = len(self.classes_)
        if self.cost_matrix is None:
            return 1.0 - np.eye(n_classes)
        return check_cost_matrix(self.cost_matrix, n_classes)

    def _streed_solver(self, pystreed, time_limit, seed):
        params = self._streed_params(time_limit, seed)
        del params["use_dataset_caching"]  # the cost-sensitive solver has none
        return pystreed.STreeDCostSensitiveClassifier(**params)

    def _solver_fit(self, solver, pystreed, X, y):
        data = pystreed.data
        no_feature_costs = [
            data.FeatureCostSpecifier(0.0, 0.0, f"f{j}", j, j)
            for j in range(X.shape[1])
        ]
        costs = data.CostSpecifier(self._costs().T.tolist(), no_feature_costs)
        solver.fit(X.astype(int), y, costs)

    def _fit(self, X, y, sample_weight):
        self._costs()  # a bad matrix fails before the solver is imported
        return super()._fit(X, y, sample_weight)

    def _recount(self, tree, X, y, sample_weight) -> float:
        """Total misclassification cost of ``tree`` on the training rows."""
        return summed_cost(self._costs(), tree.predict(X), y, sample_weight)

    def _refuted_claim(self, objective, X, y, sample_weight, min_sup) -> str:
        """Why STreeD's claim that a tree of cost ``objective`` is optimal is
        false, or ``""``: a single leaf costs less (with unit costs, the
        classifiers' check: a tree of depth at most 1 errs less)."""
        if self.cost_matrix is None:
            return super()._refuted_claim(objective, X, y, sample_weight, min_sup)
        counts = np.bincount(y, minlength=len(self.classes_))
        leaf = float(np.min(self._costs() @ counts))
        if objective <= leaf:
            return ""
        return (
            f"{self._tool} called a tree of cost {objective:g} optimal; a single "
            f"leaf costs {leaf:g}"
        )
