"""DL8.5 beyond accuracy: weighted and custom objectives, regression, clustering.

All estimators here run the general DL8.5 search of ``_general.pyx`` (any
additive, non-negative leaf loss). The built-in losses (weighted
misclassification, squared / absolute error, pinball loss) are computed in C;
user losses are Python callables called once per evaluated leaf.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from odtstudy.base import (
    FitResult,
    _explain_validation_error,
    _FittedTreeMixin,
    _validate_regression_data,
    _validate_sample_weight,
    _validate_X,
    check_binary_features,
)
from odtstudy.dl85._bitset import pack_columns
from odtstudy.dl85._general import GeneralSearcher
from odtstudy.tree import TreeBuilder

__all__ = [
    "BaseTreeRegressor",
    "DL85Cluster",
    "DL85Predictor",
    "DL85Regressor",
    "general_search",
]

MAX_DEPTH_LIMIT = 60
#: ``min_sup`` is a C int in the search core.
MAX_MIN_SUP = 2**31 - 1
PURITY_RTOL = 1e-12


# --------------------------------------------------------------------------
# user losses, checked
# --------------------------------------------------------------------------
def _checked_loss(loss, name: str) -> float:
    """``loss`` as a float, or a clear error: the search's bounds need every
    leaf loss finite and non-negative."""
    try:
        value = float(loss)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must return a number as the leaf loss, got {loss!r} "
            f"({type(loss).__name__})"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"{name} returned the leaf loss {value!r}; the search needs finite, "
            "non-negative losses (its bounds add them up): return e.g. a count "
            "or a cost, shifted by a constant if needed"
        )
    return value


def _checked_fast(fn):
    """Wrap ``fast_error_function``: it must return ``(loss, label)``."""

    def fast(class_weights):
        out = fn(class_weights)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(
                "fast_error_function must return a pair (loss, label), the "
                f"leaf's loss and the class index it predicts; got {out!r}"
            )
        return _checked_loss(out[0], "fast_error_function"), out[1]

    return fast


def _checked_rows(fn):
    """Wrap ``error_function``: it must return one loss."""

    def rows_loss(rows):
        return _checked_loss(fn(rows), "error_function")

    return rows_loss


# --------------------------------------------------------------------------
# the search, from Python
# --------------------------------------------------------------------------
@dataclass
class SearchOutcome:
    """What :func:`general_search` returns."""

    loss: float
    lower_bound: float
    timed_out: bool
    nodes: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return math.isfinite(self.loss)

    def rescale(self, factor: float) -> None:
        """Multiply every loss and bound by ``factor`` (in place)."""
        if factor == 1.0:
            return
        self.loss *= factor
        self.lower_bound *= factor
        for node in self.nodes:
            node["loss"] *= factor


def general_search(
    X,
    *,
    objective,
    max_depth,
    min_sup=1,
    time_limit=None,
    max_error=None,
    sample_weight=None,
    y_class=None,
    n_classes=0,
    y_value=None,
    quantile=0.5,
    callback=None,
    use_depth2_solver=True,
):
    """Run the general DL8.5 search on 0/1 data ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 features.
    objective : {"class", "squared", "absolute", "quantile", "py_fast", "py_rows"}
        The leaf loss (see ``_general.pyx``).
    max_depth, min_sup : int
    time_limit : float, default=None
    max_error : float, default=None
        Only trees with loss strictly below it are searched.
    sample_weight : ndarray of shape (n_samples,), default=None
    y_class : ndarray of int, default=None
        Class indices (``"class"``, ``"py_fast"``).
    n_classes : int, default=0
    y_value : ndarray of float, default=None
        Regression target (``"squared"``, ``"absolute"``, ``"quantile"``).
    quantile : float, default=0.5
    callback : callable, default=None
        ``f(class_weights) -> (loss, label)`` (``"py_fast"``) or
        ``f(rows) -> loss`` (``"py_rows"``, rows in the caller's order).
    use_depth2_solver : bool, default=True
        ``"squared"`` only: solve subtrees of depth <= 2 from item-pair
        statistics instead of the recursion.

    Returns
    -------
    SearchOutcome
        ``nodes`` lists the tree's nodes in preorder (``feature``, ``left``,
        ``right``, ``rows`` in the caller's row order and ``loss`` of the
        node as one leaf); empty when no tree has loss < ``max_error``.
    """
    X = np.ascontiguousarray(X, dtype=np.uint8)
    n = X.shape[0]
    w = (
        np.ones(n)
        if sample_weight is None
        else np.ascontiguousarray(sample_weight, dtype=np.float64)
    )
    yc = (
        np.zeros(n, dtype=np.int32)
        if y_class is None
        else np.ascontiguousarray(y_class, dtype=np.int32)
    )
    yv = (
        np.zeros(n)
        if y_value is None
        else np.ascontiguousarray(y_value, dtype=np.float64)
    )
    if objective == "py_fast":
        callback = _checked_fast(callback)
    elif objective == "py_rows":
        callback = _checked_rows(callback)
    perm = None
    if objective in ("absolute", "quantile"):
        # rows sorted by target: a cover's rows come out in target order
        perm = np.argsort(yv, kind="stable")
        X, w, yc, yv = X[perm], w[perm], yc[perm], yv[perm]
    searcher = GeneralSearcher(
        pack_columns(np.ascontiguousarray(X)),
        n,
        int(max_depth),
        int(min_sup),
        objective,
        np.ascontiguousarray(w),
        np.ascontiguousarray(yc),
        int(n_classes),
        np.ascontiguousarray(yv),
        quantile=float(quantile),
        callback=callback,
        time_limit=float(time_limit) if time_limit else 0.0,
        use_depth2_solver=bool(use_depth2_solver),
    )
    scale = searcher.root_leaf_loss()
    ub = math.inf if max_error is None else float(max_error)
    loss, lb = searcher.run(ub, PURITY_RTOL * abs(scale))
    stats = searcher.stats()
    nodes = searcher.tree_nodes() if loss < ub else []
    if perm is not None:
        for node in nodes:
            node["rows"] = np.sort(perm[node["rows"]])
    return SearchOutcome(
        loss=float(loss),
        lower_bound=float(lb),
        timed_out=bool(stats["timeout"]),
        nodes=nodes,
        stats=stats,
    )


def _build(nodes, n_outputs, value_of, label_of=None, kind="classifier"):
    """A :class:`Tree` from :func:`general_search` nodes."""
    builder = TreeBuilder(n_outputs=n_outputs)
    ids = []
    for node in nodes:
        value = value_of(node)
        label = None if label_of is None else label_of(node)
        n_samples = len(node["rows"])
        if node["feature"] < 0:
            ids.append(builder.add_leaf(value, n_samples=n_samples, label=label))
        else:
            ids.append(
                builder.add_split(
                    node["feature"], 0.5, value=value, n_samples=n_samples, label=label
                )
            )
    for i, node in enumerate(nodes):
        if node["feature"] >= 0:
            builder.set_children(ids[i], ids[node["left"]], ids[node["right"]])
    return builder.build(kind=kind)


def _objective(nodes):
    return float(sum(node["loss"] for node in nodes if node["feature"] < 0))


def _result(outcome, tree, max_depth, max_error, loss_unit=1.0):
    """FitResult of a general search (the status logic of DL85Classifier)."""
    stats = dict(outcome.stats)
    if tree is None:
        reason = f"no tree of depth <= {max_depth} with loss < max_error={max_error}"
        reason += " was found before the time limit" if outcome.timed_out else " exists"
        lb = outcome.lower_bound
        if not outcome.timed_out and max_error is not None:
            lb = max(lb, float(max_error))
        return FitResult(
            tree=None,
            objective=None,
            lower_bound=float(lb),
            optimal=False,
            status="infeasible",
            stats=stats,
            reason=reason,
        )
    objective = _objective(outcome.nodes)
    optimal = not outcome.timed_out
    if optimal and not math.isclose(
        objective, outcome.loss, rel_tol=1e-9, abs_tol=1e-9 * loss_unit
    ):  # pragma: no cover - internal check
        raise RuntimeError(
            f"DL8.5 internal error: rebuilt tree has loss {objective}, "
            f"search proved {outcome.loss}"
        )
    return FitResult(
        tree=tree,
        objective=objective,
        lower_bound=objective if optimal else float(outcome.lower_bound),
        optimal=optimal,
        status="optimal" if optimal else "timeout",
        stats=stats,
    )


def fit_classifier_general(
    X, y, n_classes, sample_weight, *, fast_error_function=None, **params
):
    """Weighted or custom-loss classification tree; a :class:`FitResult`.

    ``y`` holds class indices. Without ``fast_error_function`` the loss is
    the weighted misclassification (C); with it, each leaf's loss and label
    come from ``fast_error_function(class_weights) -> (loss, label)``.
    ``params``: ``max_depth``, ``min_sup``, ``time_limit``, ``max_error``.
    """
    fast = fast_error_function
    outcome = general_search(
        X,
        objective="class" if fast is None else "py_fast",
        sample_weight=sample_weight,
        y_class=y,
        n_classes=n_classes,
        callback=fast,
        **params,
    )
    if not outcome.found:
        return _result(outcome, None, params["max_depth"], params.get("max_error"))
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)

    def value_of(node):
        rows = node["rows"]
        return np.bincount(y[rows], weights=w[rows], minlength=n_classes)

    label_of = None
    if fast is not None:

        def label_of(node):
            label = int(fast(value_of(node))[1])
            if not 0 <= label < n_classes:
                raise ValueError(
                    f"fast_error_function returned label {label}; expected a "
                    f"class index in [0, {n_classes})"
                )
            return label

    tree = _build(outcome.nodes, n_classes, value_of, label_of)
    return _result(outcome, tree, params["max_depth"], params.get("max_error"))


# --------------------------------------------------------------------------
# regression
# --------------------------------------------------------------------------
#: Bound on the total loss a leaf can reach (``total weight * max(y**2)``
#: for the squared error, ``total weight * max|y|`` for the others): its sums
#: stay finite in float64 (whose largest value is about 1.8e308).
MAX_LOSS_TOTAL = 1e300
#: Smallest ``max|y|`` the squared error takes (squares above ~1e-280).
MIN_SQUARED_PEAK = 1e-140


def _check_losses_fit(y, sample_weight, squared):
    """Raise a ``ValueError`` when a leaf loss of ``y`` could overflow."""
    if len(y) == 0:
        return
    total = max(float(len(y) if sample_weight is None else np.sum(sample_weight)), 1.0)
    peak = float(np.max(np.abs(y)))
    if squared and 0.0 < peak < MIN_SQUARED_PEAK:
        raise ValueError(
            f"y has values of at most |y| = {peak:.3g}: their squares underflow "
            "float64, so every squared error would be 0. Multiply y by a "
            f"constant, e.g. y * {10.0 ** -math.floor(math.log10(peak)):.0e} "
            "(the tree's splits do not change; its values scale)"
        )
    limit = math.sqrt(MAX_LOSS_TOTAL / total) if squared else MAX_LOSS_TOTAL / total
    if peak > limit:
        what = (
            "squared error (weight times y**2" if squared else "error (weight times |y|"
        )
        raise ValueError(
            f"y has values up to |y| = {peak:.3g}: the {what}, summed over "
            f"{total:.3g} in total weight) would overflow float64; at most "
            f"|y| = {limit:.3g} fits. Divide y by a constant, e.g. y / "
            f"{10.0 ** math.floor(math.log10(peak)):.0e} (the tree's splits do "
            "not change; its values scale)"
        )


def _power_of_two_scale(y) -> float:
    """``2**k`` with ``max|y| / 2**k`` in [0.5, 1); 1 when ``max|y|`` is
    already within ``2**±64`` (or ``y`` is all zeros)."""
    peak = float(np.max(np.abs(y))) if len(y) else 0.0
    if peak == 0.0 or 2.0**-64 <= peak <= 2.0**64:
        return 1.0
    return math.ldexp(1.0, math.frexp(peak)[1])


def weighted_quantile(y, w, tau, midpoint=False):
    """Lower weighted ``tau``-quantile of ``y`` (minimiser of the pinball loss).

    With ``midpoint=True`` and a flat optimum, the middle of the interval of
    minimisers (the usual median for ``tau=0.5`` and unit weights).
    """
    order = np.argsort(y, kind="stable")
    ys, ws = np.asarray(y, float)[order], np.asarray(w, float)[order]
    keep = ws > 0
    ys, ws = ys[keep], ws[keep]
    if len(ys) == 0:
        return 0.0
    cum = np.cumsum(ws)
    total = cum[-1]
    k = int(np.searchsorted(cum, tau * total, side="left"))
    k = min(k, len(ys) - 1)
    lo = ys[k]
    if midpoint and k + 1 < len(ys) and math.isclose(cum[k], tau * total):
        return 0.5 * (lo + ys[k + 1])
    return float(lo)


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
        self._validate_params()
        X, y = _validate_regression_data(self, X, y, binary=self._requires_binary)
        sample_weight = _validate_sample_weight(sample_weight, X)
        start = time.perf_counter()
        result = self._fit(X, y, sample_weight)
        self.fit_time_ = time.perf_counter() - start
        self._store_result(result)
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


_CRITERIA = {
    "squared_error": "squared",
    "absolute_error": "absolute",
    "quantile": "quantile",
}


class DL85Regressor(BaseTreeRegressor):
    """Optimal regression tree of bounded depth by DL8.5.

    Minimises the total loss over the training rows, each leaf predicting
    its optimal constant: the weighted mean (squared error), a weighted
    median (absolute error) or the weighted ``quantile``-quantile (pinball
    loss, for quantile regression as in Aglin's thesis, section 8.2.2). The
    losses are computed in C (Cython).

    Parameters
    ----------
    criterion : {"squared_error", "absolute_error", "quantile"}, \
            default="squared_error"
    quantile : float, default=0.5
        The tau in (0, 1) of the pinball loss (``criterion="quantile"``).
    max_depth : int, default=3
    min_sup : int, default=1
        Minimum number of training rows in each leaf.
    time_limit : float, default=None
        Seconds; at the limit the best tree found so far is returned.
    max_error : float, default=None
        Only trees with loss strictly below it are searched.
    use_depth2_solver : bool, default=True
        ``criterion="squared_error"``: solve subtrees of depth <= 2 from the
        sufficient statistics ``(w, w y, w y^2)`` of feature pairs (one pass
        over the rows instead of a recursion); other criteria always use
        the recursion.
    random_state : None, int or RandomState, default=None
        Unused (deterministic search).

    Attributes
    ----------
    tree_ : Tree or None
        A ``kind="regressor"`` tree, ``value[:, 0]`` the prediction.
    objective_ : float or None
        Total (weighted) loss summed over the training rows (not a mean):
        sum of squared errors, of absolute errors or of pinball losses
        ``tau * (y - q)`` for ``y >= q`` and ``(1 - tau) * (q - y)`` below.
    lower_bound_ : float
    optimal_ : bool
    status_ : {"optimal", "timeout", "infeasible"}
    fit_time_ : float
    stats_ : dict
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from odtstudy.dl85 import DL85Regressor
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> y = np.array([1.0, 2.0, 10.0, 12.0])
    >>> reg = DL85Regressor(max_depth=1).fit(X, y)
    >>> reg.predict(X).tolist(), reg.objective_
    ([1.5, 1.5, 11.0, 11.0], 2.5)
    """

    _requires_binary = True
    _parameter_constraints: dict = {
        **BaseTreeRegressor._parameter_constraints,
        "criterion": [StrOptions(set(_CRITERIA))],
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "max_depth": [Interval(Integral, 1, MAX_DEPTH_LIMIT, closed="both")],
        "min_sup": [Interval(Integral, 1, MAX_MIN_SUP, closed="both")],
        "max_error": [Interval(Real, 0, None, closed="neither"), None],
        "use_depth2_solver": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        criterion="squared_error",
        quantile=0.5,
        max_depth=3,
        min_sup=1,
        time_limit=None,
        max_error=None,
        use_depth2_solver=True,
        random_state=None,
    ):
        self.criterion = criterion
        self.quantile = quantile
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.max_error = max_error
        self.use_depth2_solver = use_depth2_solver
        self.random_state = random_state

    def _fit(self, X, y, sample_weight):
        objective = _CRITERIA[self.criterion]
        squared = objective == "squared"
        _check_losses_fit(y, sample_weight, squared=squared)
        # the search runs on y / 2**k, |y / 2**k| near 1 (exact in binary
        # floating point); its losses scale back by 2**k (2**2k squared)
        scale = _power_of_two_scale(y)
        factor = scale * scale if squared else scale
        tau = float(self.quantile)
        outcome = general_search(
            X,
            objective=objective,
            max_depth=self.max_depth,
            min_sup=self.min_sup,
            time_limit=self.time_limit,
            max_error=None if self.max_error is None else self.max_error / factor,
            sample_weight=sample_weight,
            y_value=y / scale,
            quantile=tau,
            use_depth2_solver=self.use_depth2_solver,
        )
        outcome.rescale(factor)
        if not outcome.found:
            return _result(outcome, None, self.max_depth, self.max_error)
        w = np.ones(len(y)) if sample_weight is None else sample_weight

        def value_of(node):
            rows = node["rows"]
            if len(rows) == 0 or w[rows].sum() <= 0:
                return [0.0]
            if objective == "squared":
                return [float(np.average(y[rows], weights=w[rows]))]
            if objective == "absolute":
                return [weighted_quantile(y[rows], w[rows], 0.5, midpoint=True)]
            return [weighted_quantile(y[rows], w[rows], tau)]

        tree = _build(outcome.nodes, 1, value_of, kind="regressor")
        return _result(outcome, tree, self.max_depth, self.max_error, factor)


# --------------------------------------------------------------------------
# user-defined objectives
# --------------------------------------------------------------------------
class DL85Predictor(_FittedTreeMixin, BaseEstimator):
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

    The loss must be non-negative; the tree minimises the sum of the leaf
    losses, and ``objective_`` is that sum. The callables run with the GIL,
    once per leaf the search evaluates, so they dominate the fit time.

    Parameters
    ----------
    max_depth : int, default=3
    min_sup : int, default=1
    error_function : callable, default=None
    fast_error_function : callable, default=None
    leaf_value_function : callable, default=None
    time_limit : float, default=None
    max_error : float, default=None
    random_state : None, int or RandomState, default=None
        Unused.

    Attributes
    ----------
    tree_ : Tree or None
        A classifier tree (``fast_error_function``; labels from the
        function) or a regressor tree whose ``value[:, 0]`` is the leaf
        value when it is a number, else the leaf number.
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
        "max_depth": [Interval(Integral, 1, MAX_DEPTH_LIMIT, closed="both")],
        "min_sup": [Interval(Integral, 1, MAX_MIN_SUP, closed="both")],
        "error_function": [callable, None],
        "fast_error_function": [callable, None],
        "leaf_value_function": [callable, None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "max_error": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_depth=3,
        min_sup=1,
        error_function=None,
        fast_error_function=None,
        leaf_value_function=None,
        time_limit=None,
        max_error=None,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.error_function = error_function
        self.fast_error_function = fast_error_function
        self.leaf_value_function = leaf_value_function
        self.time_limit = time_limit
        self.max_error = max_error
        self.random_state = random_state

    def _search_params(self):
        return dict(
            max_depth=self.max_depth,
            min_sup=self.min_sup,
            time_limit=self.time_limit,
            max_error=self.max_error,
        )

    def fit(self, X, y=None, sample_weight=None):
        """Fit the tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            0/1 features.
        y : array-like of shape (n_samples,), default=None
            Labels (needed by ``fast_error_function``).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the class supports (``fast_error_function`` only).

        Returns
        -------
        self
        """
        from sklearn.utils.validation import validate_data

        self._validate_params()
        if (self.error_function is None) == (self.fast_error_function is None):
            raise ValueError(
                "DL85Predictor needs exactly one of error_function and "
                "fast_error_function"
            )
        try:
            if y is None:
                X = validate_data(self, X, dtype="numeric")
            else:
                X, y = validate_data(self, X, y, dtype="numeric")
        except ValueError as exc:
            raise _explain_validation_error(exc) from exc
        check_binary_features(X, type(self).__name__)
        sample_weight = _validate_sample_weight(sample_weight, X)
        start = time.perf_counter()
        if self.fast_error_function is not None:
            if y is None:
                raise ValueError("fast_error_function needs the labels y")
            self.classes_, y_enc = np.unique(y, return_inverse=True)
            result = fit_classifier_general(
                X,
                y_enc.astype(np.int64),
                len(self.classes_),
                sample_weight,
                fast_error_function=self.fast_error_function,
                **self._search_params(),
            )
            if result.tree is not None:
                result.tree.classes = self.classes_
        else:
            result = self._fit_rows(X)
        self.fit_time_ = time.perf_counter() - start
        self._store_result(result)
        return self

    def _fit_rows(self, X):
        fn = self.error_function
        outcome = general_search(
            X, objective="py_rows", callback=fn, **self._search_params()
        )
        if not outcome.found:
            self.leaf_values_ = {}
            return _result(outcome, None, self.max_depth, self.max_error)
        leaf_values = {}
        leaf_number = {}
        for i, node in enumerate(outcome.nodes):
            if node["feature"] < 0:
                leaf_number[i] = len(leaf_number)
                leaf_values[i] = (
                    leaf_number[i]
                    if self.leaf_value_function is None
                    else self.leaf_value_function(node["rows"])
                )

        def value_of(node_id):
            v = leaf_values.get(node_id, np.nan)
            if np.ndim(v) == 0 and isinstance(v, (Real, np.number)):
                return [float(v)]
            return [float(leaf_number.get(node_id, np.nan))]

        index = {id(node): i for i, node in enumerate(outcome.nodes)}
        tree = _build(
            outcome.nodes, 1, lambda node: value_of(index[id(node)]), kind="regressor"
        )
        self.leaf_values_ = leaf_values
        return _result(outcome, tree, self.max_depth, self.max_error)

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


class DL85Cluster(BaseEstimator):
    """Predictive clustering tree by DL8.5 (thesis Listing 7.3).

    Each leaf is a cluster; the tree minimises the sum over clusters of the
    Euclidean distances from each row to its cluster's centroid, measured
    on ``X_error`` (default: ``X`` itself) while the tests use the 0/1
    features ``X``. The loss runs in Python (NumPy) once per evaluated leaf.

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
        "max_depth": [Interval(Integral, 1, MAX_DEPTH_LIMIT, closed="both")],
        "min_sup": [Interval(Integral, 1, MAX_MIN_SUP, closed="both")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
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
        self._validate_params()
        predictor = DL85Predictor(
            max_depth=self.max_depth,
            min_sup=self.min_sup,
            time_limit=self.time_limit,
        )
        X = np.asarray(X)
        E = np.asarray(X if X_error is None else X_error, dtype=np.float64)
        if E.ndim != 2 or E.shape[0] != X.shape[0]:
            raise ValueError("X_error must be 2-D with one row per row of X")
        if not np.isfinite(E).all():
            which = "X" if X_error is None else "X_error"
            raise ValueError(
                f"{which} contains NaN or infinity; DL85Cluster measures the "
                "distances to the cluster centres on it: impute or drop those "
                "values first"
            )

        def error(rows):
            sub = E[rows]
            return float(np.sqrt(((sub - sub.mean(axis=0)) ** 2).sum(axis=1)).sum())

        def center(rows):
            return E[rows].mean(axis=0)

        predictor.set_params(error_function=error)
        predictor.fit(X)
        self.predictor_ = predictor
        for attr in (
            "tree_",
            "objective_",
            "lower_bound_",
            "optimal_",
            "status_",
            "fit_time_",
            "stats_",
            "n_features_in_",
        ):
            setattr(self, attr, getattr(predictor, attr))
        leaves = sorted(predictor.leaf_values_)
        self.cluster_centers_ = np.array(
            [center(self._rows_of(X, leaf)) for leaf in leaves]
        )
        self.labels_ = self.predict(X)
        return self

    def _rows_of(self, X, leaf):
        return np.flatnonzero(self.tree_.apply(np.asarray(X)) == leaf)

    def predict(self, X):
        """Cluster id (leaf number) of each row of ``X``."""
        check_is_fitted(self, "tree_")
        return self.predictor_.predict(X).astype(np.int64)
