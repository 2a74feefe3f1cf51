"""DL8.5 for user-defined objectives and predictive clustering."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from odtstudy.base import (
    FitResult,
    _FittedTreeMixin,
    _validate_sample_weight,
    _validate_supervised_data,
    _validate_X,
    check_binary_features,
)
from odtstudy.dl85.engine._class_loss import solve_class_loss
from odtstudy.dl85.engine._door import fit_search
from odtstudy.dl85.engine._engine import build_tree, fit_result, node_rows
from odtstudy.dl85.engine._leaf_objective import LeafObjective, objective_arguments
from odtstudy.dl85.engine._losses import checked_fast, checked_rows
from odtstudy.dl85.engine._numeric_fit import THRESHOLDS_CONSTRAINT, NumericInputMixin
from odtstudy.dl85.estimators._options import SEARCH_CONSTRAINTS, SearchOptionsMixin

__all__ = ["DL85Cluster", "DL85Predictor", "fit_classifier_general"]


def fit_classifier_general(
    X, y, n_classes, sample_weight, *, fast_error_function=None, **options
):
    """A tree minimising a loss of the leaves' class supports; a FitResult.

    ``y`` holds class indices. Without ``fast_error_function`` the loss is
    the (weighted) misclassification; with it, each leaf's loss and label
    come from ``fast_error_function(class_weights) -> (loss, label)``
    (priced in batches by the engine). Every row is kept, including rows
    of weight 0. ``options``: the search options (``max_depth``, ...).
    The search is :func:`~odtstudy.dl85.engine._class_loss.solve_class_loss`, the one
    ``DL85Classifier`` runs on 0/1 data.
    """
    fast = None
    if fast_error_function is not None:
        fast = checked_fast(fast_error_function, n_classes)
    return solve_class_loss(X, y, n_classes, sample_weight, options, fast=fast)


class DL85Predictor(
    NumericInputMixin, SearchOptionsMixin, _FittedTreeMixin, BaseEstimator
):
    """DL8.5 for a user-defined additive objective (PyDL8.5's ``DL85Predictor``).

    Give exactly one of:

    * ``fast_error_function(class_weights) -> (loss, label)``: called with
      the per-class supports of a leaf (weighted when ``sample_weight`` is
      given; a float array indexed like ``classes_``); returns the leaf's
      loss and the index of the class it predicts. Needs ``y``. Typical use:
      cost-sensitive classification with a cost matrix.
    * ``error_function(rows) -> loss``: called with the indices of the
      training rows in a leaf (an int64 array). ``y`` is optional (the
      function captures what it needs, e.g. for predictive clustering).
      ``leaf_value_function(rows)`` then gives each leaf's prediction
      (default: the leaf's number, a cluster id).
    * ``objective``: a :class:`~odtstudy.dl85.LeafObjective`, a loss of
      summed per-row statistics with its declarations; each leaf predicts
      ``objective.value`` of its statistics.

    The loss must be non-negative; the tree minimises the sum of the leaf
    losses, and ``objective_`` is that sum. The callables run with the GIL.
    ``fast_error_function`` is called once per distinct vector of class
    supports (the engine memoises them and prices the candidate leaves of
    a depth-2 subproblem in one batch); ``error_function`` once per leaf
    the search evaluates, so it dominates the fit time.

    Parameters
    ----------
    max_depth : int, default=3
    min_sup : int, default=1
    error_function : callable, default=None
    fast_error_function : callable, default=None
    leaf_value_function : callable, default=None
    objective : LeafObjective, default=None
    time_limit : float, default=None
    max_error : float, default=None
    random_state : None, int or RandomState, default=None
        Unused.
    branching, use_infeasibility_lb, use_similarity_lb, use_depth2_solver : \
            see DL85Classifier
    cache, algorithm, max_cache_size, wipe_factor, wipe_strategy : see DL85Classifier
        The search options of ``DL85Classifier``, same defaults (Python
        losses promise no similarity bound; the depth-2 solver applies to
        ``fast_error_function`` on unweighted data).
    thresholds : {"all"} or int, default=None
        Fit numeric features directly; see :class:`DL85Classifier`. Every
        loss works on numeric data: the numeric search sums the class
        supports (``fast_error_function``) or the objective's statistics
        along its sweeps and prices them in batches, and gives
        ``error_function`` the rows of each side of each threshold it
        evaluates (exact, and slow: one call per side). Python losses get no
        interval bounds unless they declare ``monotone``
        (:class:`LeafObjective`).
    n_jobs : int, default=None
        Threads of the search; see :class:`DL85Classifier`. The callables
        run with the GIL, so they run on one thread at a time.

    Attributes
    ----------
    tree_ : Tree or None
        A classifier tree (``fast_error_function``; labels from the
        function) or a regressor tree whose ``value[:, 0]`` is the leaf
        value when it is a number, else the leaf number (``objective``:
        ``objective.value``).
    classes_ : ndarray
        Only with ``fast_error_function``.
    leaf_values_ : dict
        Leaf node id -> leaf value (``error_function`` only).
    objective_, lower_bound_, optimal_, status_, fit_time_, stats_
        As for every odtstudy learner.

    Examples
    --------
    Cost-sensitive classification (thesis Listing 7.4): predicting class 0
    for a row of class 1 costs 5, the other mistake costs 1.

    >>> import numpy as np
    >>> from odtstudy.dl85 import DL85Predictor
    >>> cost = np.array([[0.0, 5.0], [1.0, 0.0]])  # cost[predicted, true]
    >>> def cost_error(weights):
    ...     losses = cost @ weights
    ...     label = int(np.argmin(losses))
    ...     return float(losses[label]), label
    >>> X = np.array([[0], [0], [0], [1]])
    >>> y = np.array([0, 0, 1, 1])
    >>> clf = DL85Predictor(max_depth=1, fast_error_function=cost_error)
    >>> clf.fit(X, y).predict([[0], [1]]).tolist(), clf.objective_
    ([1, 1], 2.0)
    """

    _parameter_constraints: dict = {
        **SEARCH_CONSTRAINTS,
        "error_function": [callable, None],
        "fast_error_function": [callable, None],
        "leaf_value_function": [callable, None],
        "objective": [LeafObjective, None],
        "thresholds": THRESHOLDS_CONSTRAINT,
    }
    _requires_binary = True

    def __init__(
        self,
        *,
        max_depth=3,
        min_sup=1,
        error_function=None,
        fast_error_function=None,
        leaf_value_function=None,
        objective=None,
        time_limit=None,
        max_error=None,
        random_state=None,
        branching="data",
        use_infeasibility_lb=True,
        use_similarity_lb=True,
        use_depth2_solver=True,
        cache="trie",
        algorithm="dl85",
        max_cache_size=None,
        wipe_factor=0.5,
        wipe_strategy="reuses",
        thresholds=None,
        n_jobs=None,
    ):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.error_function = error_function
        self.fast_error_function = fast_error_function
        self.leaf_value_function = leaf_value_function
        self.objective = objective
        self.time_limit = time_limit
        self.max_error = max_error
        self.random_state = random_state
        self.branching = branching
        self.use_infeasibility_lb = use_infeasibility_lb
        self.use_similarity_lb = use_similarity_lb
        self.use_depth2_solver = use_depth2_solver
        self.cache = cache
        self.algorithm = algorithm
        self.max_cache_size = max_cache_size
        self.wipe_factor = wipe_factor
        self.wipe_strategy = wipe_strategy
        self.thresholds = thresholds
        self.n_jobs = n_jobs

    def fit(self, X, y=None, sample_weight=None):
        """Fit the tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            0/1 features (numbers with ``thresholds``).
        y : array-like of shape (n_samples,), default=None
            Labels (needed by ``fast_error_function``); ``objective`` gets
            it as given.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the class supports (``fast_error_function``), or
            given to ``objective.row_stats``.

        Returns
        -------
        self
        """
        self._enter_fit()
        self._validate_params()
        given = [
            name
            for name in ("error_function", "fast_error_function", "objective")
            if getattr(self, name) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                "DL85Predictor needs exactly one of error_function, "
                f"fast_error_function and objective; got {given or 'none'}"
            )
        X, y, sample_weight = self._validate_training_data(X, y, sample_weight)
        self._timed_fit(X, y, sample_weight)
        return self

    def _validate_training_data(self, X, y, sample_weight):
        """0/1 ``X``, ``y`` as class indices (``fast_error_function``; sets
        ``classes_``; else None) and the checked ``sample_weight``."""
        if y is None:
            X = _validate_X(self, X, reset=True)
        else:
            X, y = _validate_supervised_data(self, X, y, y_numeric=False)
        if self.thresholds is None:
            check_binary_features(X, type(self).__name__)
        sample_weight = _validate_sample_weight(sample_weight, X)
        if self.fast_error_function is None:
            return X, y, sample_weight
        if y is None:
            raise ValueError("fast_error_function needs the labels y")
        self.classes_, y_encoded = np.unique(y, return_inverse=True)
        return X, y_encoded.astype(np.int64), sample_weight

    def _fit(self, X, y, sample_weight) -> FitResult:
        cuts = self._thresholds_of(X, sample_weight)
        if self.fast_error_function is not None:
            return self._fit_class(X, y, sample_weight, cuts)
        return self._fit_rows(X, y, sample_weight, cuts)

    def _fit_class(self, X, y, sample_weight, cuts):
        n_classes = len(self.classes_)
        options = self._search_options()
        fast = checked_fast(self.fast_error_function, n_classes)
        result = solve_class_loss(
            X, y, n_classes, sample_weight, options, fast=fast, cuts=cuts
        )
        if result.tree is not None:
            result.tree.classes = self.classes_
        return result

    def _leaf_objective(self, y, sample_weight) -> dict:
        """The search's objective for ``objective`` or ``error_function``."""
        if self.objective is not None:
            args = objective_arguments(self.objective, y, sample_weight)
            return {"kind": "py_stats", **args}
        fn = checked_rows(self.error_function)
        return {"kind": "py_rows", "callback": fn, "loss_name": "error_function"}

    def _fit_rows(self, X, y, sample_weight, cuts):
        options = self._search_options()
        objective = self._leaf_objective(y, sample_weight)
        searched = fit_search(X, cuts, objective, options)
        out = searched.out
        if not out.found:
            self.leaf_values_ = {}
            return fit_result(
                out, None, max_depth=self.max_depth, max_error=self.max_error
            )
        rows = node_rows(out, searched.X)
        leaf_values = self._leaf_values(out, rows, y, sample_weight)
        leaf_number = {node: i for i, node in enumerate(sorted(leaf_values))}

        def value_of(node, rows):
            v = leaf_values.get(node, np.nan)
            if np.ndim(v) == 0 and isinstance(v, (Real, np.number)):
                return [float(v)]
            return [float(leaf_number.get(node, np.nan))]

        tree = build_tree(out, 1, value_of, X=searched.X, kind="regressor")
        self.leaf_values_ = leaf_values
        tree = searched.decoded(tree)
        return fit_result(out, tree, max_depth=self.max_depth, max_error=self.max_error)

    def _leaf_values(self, out, rows, y, sample_weight) -> dict:
        """Leaf node id -> leaf value: ``objective.value`` of the leaf's
        statistics, ``leaf_value_function(rows)``, or the leaf's number."""
        leaves = [i for i, f in enumerate(out.feature) if f < 0]
        if self.objective is not None:
            stats = np.asarray(self.objective.row_stats(y, sample_weight), float)
            return {i: self.objective.value(stats[rows[i]].sum(axis=0)) for i in leaves}
        if self.leaf_value_function is None:
            return {i: number for number, i in enumerate(leaves)}
        return {i: self.leaf_value_function(rows[i]) for i in leaves}

    def predict(self, X):
        """Class (``fast_error_function``) or leaf value of each row of ``X``."""
        tree = self._fitted_tree()
        X = _validate_X(self, X, reset=False)
        if self.fast_error_function is not None:
            return tree.predict(X)
        leaves = tree.apply(X)
        values = [self.leaf_values_[int(leaf)] for leaf in leaves]
        try:
            return np.asarray(values)
        except ValueError:  # pragma: no cover - ragged leaf values
            out = np.empty(len(values), dtype=object)
            out[:] = values
            return out


class DL85Cluster(_FittedTreeMixin, BaseEstimator):
    """Predictive clustering tree by DL8.5 (thesis Listing 7.3).

    Each leaf is a cluster; the tree minimises the sum over clusters of the
    Euclidean distances from each row to its cluster's centroid, measured
    on ``X_error`` (default: ``X`` itself) while the tests use the 0/1
    features ``X``. The loss runs in Python (NumPy) once per evaluated leaf
    (``DL85Predictor`` with ``error_function``).

    Parameters
    ----------
    max_depth : int, default=2
    min_sup : int, default=1
    time_limit : float, default=None
    random_state : None, int or RandomState, default=None
        Unused.

    Attributes
    ----------
    tree_ : Tree
        Regressor-kind tree whose leaf ``value[:, 0]`` is the cluster id.
    labels_ : ndarray of shape (n_samples,)
        Cluster id of each training row.
    cluster_centers_ : ndarray of shape (n_clusters, n_error_features)
    objective_ : float
        Sum of the distances to the centroids.
    lower_bound_, optimal_, status_, fit_time_, stats_
    """

    _parameter_constraints: dict = {
        key: SEARCH_CONSTRAINTS[key]
        for key in ("max_depth", "min_sup", "time_limit", "random_state")
    }

    def __init__(self, *, max_depth=2, min_sup=1, time_limit=None, random_state=None):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.random_state = random_state

    def fit(self, X, y=None, X_error=None):
        """Cluster the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            0/1 features the tree tests.
        y : None
            Ignored.
        X_error : array-like of shape (n_samples, n_error_features), default=None
            Where distances are measured (default: ``X``).

        Returns
        -------
        self
        """
        self._enter_fit()
        self._validate_params()
        X, E = self._validate_training_data(X, X_error)
        self._timed_fit(X, E)
        return self

    def _validate_training_data(self, X, X_error):
        """0/1 ``X`` (sets ``n_features_in_`` and ``feature_names_in_``) and
        the finite float64 space ``E`` the distances are measured in."""
        E = np.asarray(X if X_error is None else X_error, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != np.asarray(X).shape[0]:
            raise ValueError("X_error must be 2-D with one row per row of X")
        if not np.isfinite(E).all():
            which = "X" if X_error is None else "X_error"
            raise ValueError(
                f"{which} contains NaN or infinity; DL85Cluster measures the "
                "distances to the cluster centres on it: impute or drop those "
                "values first"
            )
        X = _validate_X(self, X, reset=True)
        check_binary_features(X, type(self).__name__)
        return X, E

    def _fit(self, X, E) -> FitResult:
        def error(rows):
            sub = E[rows]
            return float(np.sqrt(((sub - sub.mean(axis=0)) ** 2).sum(axis=1)).sum())

        predictor = DL85Predictor(
            max_depth=self.max_depth,
            min_sup=self.min_sup,
            time_limit=self._time_left(),
            error_function=error,
        )
        predictor.fit(X)
        self.predictor_ = predictor
        self.labels_ = predictor.predict(X).astype(np.int64)
        self.cluster_centers_ = self._centres(
            E, self.labels_, len(predictor.leaf_values_)
        )
        return FitResult(
            tree=predictor.tree_,
            objective=predictor.objective_,
            lower_bound=predictor.lower_bound_,
            optimal=predictor.optimal_,
            status=predictor.status_,
            stats=predictor.stats_,
            reason=predictor._no_tree_reason,
        )

    @staticmethod
    def _centres(E, labels, n_clusters) -> np.ndarray:
        """The mean row of ``E`` in each cluster (clusters numbered from 0)."""
        return np.array([E[labels == c].mean(axis=0) for c in range(n_clusters)])

    def predict(self, X):
        """Cluster id (leaf number) of each row of ``X``."""
        check_is_fitted(self, "tree_")
        X = _validate_X(self, X, reset=False)
        return self.predictor_.predict(X).astype(np.int64)
