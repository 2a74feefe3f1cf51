"""DL8.5 for regression: squared, absolute and pinball (quantile) losses."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy.base import BaseTreeRegressor, _validate_X
from odtstudy.dl85._engine import build_tree, fit_result, search, search_quantiles
from odtstudy.dl85._exact_sums import exact_target
from odtstudy.dl85._losses import (
    check_losses_fit,
    power_of_two_scale,
    weighted_quantile,
)
from odtstudy.dl85._numeric_fit import (
    THRESHOLDS_CONSTRAINT,
    NumericInputMixin,
    bitset_encodes,
    candidate_thresholds,
    numeric_search,
    squared_stats,
    threshold_columns,
)
from odtstudy.dl85._options import SEARCH_CONSTRAINTS, SearchOptionsMixin
from odtstudy.dl85._quantiles import (
    check_quantiles,
    combine_results,
    crossings,
    unit_quantile_values,
    warn_crossings,
)
from odtstudy.dl85._rounding import sums_certify

__all__ = ["DL85Regressor"]

_CRITERIA = {
    "squared_error": "squared",
    "absolute_error": "absolute",
    "quantile": "quantile",
}


class DL85Regressor(NumericInputMixin, SearchOptionsMixin, BaseTreeRegressor):
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
    quantile : float or array-like of float, default=0.5
        The tau in (0, 1) of the pinball loss (``criterion="quantile"``).
        A list of distinct taus learns one optimal tree per tau in one
        search (``trees_``; ``predict`` returns one column per tau): the
        taus share the sorted rows, the covers, the cache (an entry per
        node holds every tau's bound and best tree) and the depth-2 solver
        (one pass over the feature pairs prices a subtree at the tau
        searched and every later one); each tau has its own bounds and
        pruning. 0/1 data, or ``thresholds`` few enough to become 0/1
        threshold columns; no ``max_error`` or ``max_cache_size``.
    max_depth : int, default=3
    min_sup : int, default=1
        Minimum number of training rows in each leaf.
    time_limit : float, default=None
        Seconds; at the limit the best tree found so far is returned. As in
        :class:`DL85Classifier`: a greedy tree after 1 s improved by
        limited-discrepancy passes (for at most 1 s more), and passes again
        over the last tenth when the search has not ended by then.
    max_error : float, default=None
        Only trees with loss strictly below it are searched.
    use_depth2_solver : bool, default=True
        ``criterion="squared_error"``: solve subtrees of depth <= 2 from the
        sufficient statistics ``(w, w y, w y^2)`` of feature pairs (one pass
        over the rows instead of a recursion); the absolute and pinball
        losses solve subtrees of depth 1 directly (two passes over the rows,
        sorted by target, per feature).
    random_state : None, int or RandomState, default=None
        Unused (deterministic search).
    branching, use_infeasibility_lb, use_similarity_lb, cache, algorithm : \
            see DL85Classifier
    max_cache_size, wipe_factor, wipe_strategy : see DL85Classifier
        The search options of :class:`DL85Classifier`, same defaults. The
        similarity bound holds for every criterion (a row adds at most its
        largest distance to the range of ``y`` to a leaf's loss).
    thresholds : {"all"} or int, default=None
        Fit numeric features directly, for every criterion; see
        :class:`DL85Classifier` (0/1 data goes to the bitset search). The
        numeric search prices the absolute and pinball losses of every
        threshold of a sweep from Fenwick trees over the rows ranked by
        target (O(log n) per row). The neighbour bound is off for the
        squared error; the interval bounds hold for every criterion.
    n_jobs : int, default=None
        Threads of the search; see :class:`DL85Classifier`. Not with
        several quantiles (``criterion="quantile"`` with a list).

    Attributes
    ----------
    tree_ : Tree or None
        A ``kind="regressor"`` tree, ``value[:, 0]`` the prediction (with
        several quantiles: the first quantile's tree).
    objective_ : float or None
        Total (weighted) loss summed over the training rows (not a mean):
        sum of squared errors, of absolute errors or of pinball losses
        ``tau * (y - q)`` for ``y >= q`` and ``(1 - tau) * (q - y)`` below.
        With several quantiles: an array, one loss per quantile.
    lower_bound_ : float or ndarray
    optimal_ : bool
        With several quantiles: True when every quantile's tree is proven.
    trees_ : list of Tree
        Several quantiles only: one tree per quantile, in the order given.
    optimal_per_quantile_ : ndarray of bool
        Several quantiles only: which trees are proven optimal.
    crossings_ : ndarray of int, shape (n_quantiles, n_quantiles)
        Several quantiles only: ``crossings_[i, j]`` counts the training
        rows where the tree of quantile i predicts more than the tree of
        quantile j although quantile i is the smaller (0 elsewhere); a
        ``UserWarning`` names every such pair.
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
    _study_tasks = ("regression",)

    @classmethod
    def objective_family(cls, params) -> str:
        """What ``objective_`` sums for these parameters: ``"squared-error"``,
        ``"absolute-error"`` or ``"pinball@<tau>"`` (``"pinball@0.1,0.9"``
        for a list of quantiles)."""
        criterion = params.get("criterion", "squared_error")
        if criterion == "quantile":
            taus = np.atleast_1d(params.get("quantile", 0.5))
            return "pinball@" + ",".join(f"{float(tau):g}" for tau in taus)
        return criterion.replace("_", "-")

    _parameter_constraints: dict = {
        **BaseTreeRegressor._parameter_constraints,
        **SEARCH_CONSTRAINTS,
        "criterion": [StrOptions(set(_CRITERIA))],
        "quantile": [Interval(Real, 0, 1, closed="neither"), "array-like"],
        "thresholds": THRESHOLDS_CONSTRAINT,
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
        branching="data",
        use_infeasibility_lb=True,
        use_similarity_lb=True,
        cache="trie",
        algorithm="dl85",
        max_cache_size=None,
        wipe_factor=0.5,
        wipe_strategy="reuses",
        thresholds=None,
        n_jobs=None,
    ):
        self.criterion = criterion
        self.quantile = quantile
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.max_error = max_error
        self.use_depth2_solver = use_depth2_solver
        self.random_state = random_state
        self.branching = branching
        self.use_infeasibility_lb = use_infeasibility_lb
        self.use_similarity_lb = use_similarity_lb
        self.cache = cache
        self.algorithm = algorithm
        self.max_cache_size = max_cache_size
        self.wipe_factor = wipe_factor
        self.wipe_strategy = wipe_strategy
        self.thresholds = thresholds
        self.n_jobs = n_jobs

    def _scaled_options(self, factor):
        """The search options for losses in units of ``factor``."""
        options = self._search_options()
        if self.max_error is not None:
            options["max_error"] = self.max_error / factor
        return options

    def _stable_search(self, X, cuts, stats, y, factor):
        """The squared-error search in its stable form (numeric engine; 0/1
        columns split at 0.5), for data whose sums cannot certify. ``y`` is
        not centred: the stable form needs no centring, and centring rounds
        away the spread of values far from the mean."""
        if cuts is None:
            cuts = candidate_thresholds(np.asarray(X, dtype=np.float64), "all")
        options = self._scaled_options(factor)
        stable_stats = np.column_stack([stats, np.zeros(len(stats))])
        out = numeric_search(
            X, cuts, kind="squared", y=y, stats=stable_stats, values=y, **options
        )
        out.stats["stable_form"] = True
        return out

    def _fit(self, X, y, sample_weight):
        taus = check_quantiles(self.quantile, self.criterion)
        if taus is not None:
            return self._fit_quantiles(X, y, sample_weight, taus)
        objective = _CRITERIA[self.criterion]
        squared = objective == "squared"
        check_losses_fit(y, sample_weight, squared=squared)
        target, scale, exact = _search_target(y, sample_weight, squared)
        factor = scale * scale if squared else scale
        purity = {} if exact is None else {"purity_tol": exact.purity_tol}
        tau = float(self.quantile)
        options = self._scaled_options(factor)
        cuts = self._thresholds_of(X, sample_weight)
        numeric_X, decode = X, None
        if cuts is not None and bitset_encodes(cuts):
            X, decode = threshold_columns(X, cuts)
        stats = squared_stats(target, sample_weight) if squared else None
        if cuts is not None and decode is None:
            out = numeric_search(
                X,
                cuts,
                kind=objective,
                weights=sample_weight,
                y=target,
                quantile=tau,
                stats=stats,
                **purity,
                **options,
            )
        else:
            out = search(
                X,
                kind=objective,
                weights=sample_weight,
                y=target,
                quantile=tau,
                **purity,
                **options,
            )
        if squared and out.found and not out.timed_out:
            engine = "bitset" if cuts is None or decode is not None else "numeric"
            offset = None if exact is None else exact.offset
            if not sums_certify(out.loss, stats, self.max_depth, engine, offset):
                X, decode = numeric_X, None
                out = self._stable_search(X, cuts, stats, y / scale, factor)
        out.rescale(factor)
        if not out.found:
            return fit_result(
                out, None, max_depth=self.max_depth, max_error=self.max_error
            )
        value_of = _leaf_values(objective, tau, y, sample_weight)
        tree = build_tree(out, 1, value_of, X=X, kind="regressor")
        if decode is not None:
            tree = decode(tree)
        return fit_result(
            out,
            tree,
            max_depth=self.max_depth,
            max_error=self.max_error,
            loss_unit=factor,
        )

    def _fit_quantiles(self, X, y, sample_weight, taus):
        """One search for every quantile of ``taus`` (see ``quantile``)."""
        for name in ("max_error", "max_cache_size"):
            if getattr(self, name) is not None:
                raise ValueError(
                    f"{name}={getattr(self, name)!r} is not available with several "
                    f"quantiles (quantile={self.quantile!r}); use {name}=None or "
                    "one quantile per fit"
                )
        check_losses_fit(y, sample_weight, squared=False)
        cuts = self._thresholds_of(X, sample_weight)
        decode = None
        if cuts is not None:
            if not bitset_encodes(cuts):
                raise ValueError(
                    f"quantile={self.quantile!r}: several quantiles search 0/1 "
                    f"data, and thresholds={self.thresholds!r} gives too many "
                    "thresholds for 0/1 threshold columns; use thresholds=k "
                    "with a small k, binarise X, or fit one quantile per fit"
                )
            X, decode = threshold_columns(X, cuts)
        scale = power_of_two_scale(y)
        options = self._scaled_options(scale)
        outs = search_quantiles(
            X, y=y / scale, quantiles=taus, weights=sample_weight, **options
        )
        results, trees = [], []
        for tau, out in zip(taus, outs):
            out.rescale(scale)
            if sample_weight is None:
                value_of = unit_quantile_values(y, tau)
            else:
                value_of = _leaf_values("quantile", tau, y, sample_weight)
            tree = build_tree(out, 1, value_of, X=X, kind="regressor")
            results.append(
                fit_result(
                    out, tree, max_depth=self.max_depth, max_error=None, loss_unit=scale
                )
            )
            trees.append(tree if decode is None else decode(tree))
        result = combine_results(results, trees, [out.stats for out in outs])
        predictions = np.column_stack([r.tree.predict(X) for r in results])
        counts = crossings(predictions, taus)
        result.stats["crossings"] = counts.tolist()
        warn_crossings(counts, taus)
        return result

    def _store_result(self, result):
        super()._store_result(result)
        for name in ("trees_", "optimal_per_quantile_", "crossings_"):
            self.__dict__.pop(name, None)
        if result.trees is None:
            return
        self.trees_ = list(result.trees)
        for tree in self.trees_:
            tree.feature_names = self.tree_.feature_names
        self.optimal_per_quantile_ = np.array(
            result.stats["optimal_per_quantile"], dtype=bool
        )
        self.crossings_ = np.array(result.stats["crossings"], dtype=np.int64)

    def predict(self, X):
        """Predict ``y`` for each row of ``X``.

        Returns
        -------
        ndarray of shape (n_samples,), or (n_samples, n_quantiles) when
        ``quantile`` is a list (one column per quantile, in its order).
        """
        if getattr(self, "trees_", None) is None:
            return super().predict(X)
        self._fitted_tree()
        X = _validate_X(self, X, reset=False)
        return np.column_stack([tree.predict(X) for tree in self.trees_])


def _leaf_values(objective, tau, y, sample_weight):
    """``value_of(node, rows)`` of ``build_tree``: each leaf's optimal
    constant (mean, median or ``tau``-quantile of its rows)."""
    w = np.ones(len(y)) if sample_weight is None else sample_weight

    def value_of(node, rows):
        if len(rows) == 0 or w[rows].sum() <= 0:
            return [0.0]
        if objective == "squared":
            return [float(np.average(y[rows], weights=w[rows]))]
        if objective == "absolute":
            return [weighted_quantile(y[rows], w[rows], 0.5, midpoint=True)]
        return [weighted_quantile(y[rows], w[rows], tau)]

    return value_of


def _search_target(y, sample_weight, squared):
    """The target the search runs on, its unit (losses scale back by it,
    squared for the squared error) and, for short decimals, the
    :class:`~odtstudy.dl85._exact_sums.ExactTarget` it comes from (None
    otherwise)."""
    exact = exact_target(y, sample_weight) if squared else None
    if exact is not None:
        return exact.z, exact.scale, exact
    # the squared error is the same for y and y - c: centring y keeps the
    # search's sums of w y and w y**2 from cancelling when the mean of y
    # is large next to its spread (leaf values are computed from y itself)
    if squared:
        y = y - float(np.average(y, weights=sample_weight))
    # the search runs on y / 2**k, |y / 2**k| near 1 (exact in binary
    # floating point); its losses scale back by 2**k (2**2k squared)
    scale = power_of_two_scale(y)
    return y / scale, scale, None
