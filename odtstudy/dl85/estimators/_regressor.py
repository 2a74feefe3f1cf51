"""DL8.5 for regression: squared, absolute and pinball (quantile) losses."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy.base import BaseTreeRegressor, _validate_X
from odtstudy.dl85.engine._certify import (
    EXACT_LEAF_ROWS,
    ExactRows,
    certified_result,
    exact_squared_leaf,
    exact_tree_loss,
    pinball_target,
)
from odtstudy.dl85.engine._door import NumericUnavailable, fit_search
from odtstudy.dl85.engine._engine import build_tree, fit_result
from odtstudy.dl85.engine._exact_sums import binary_target, exact_target
from odtstudy.dl85.engine._losses import (
    check_losses_fit,
    power_of_two_scale,
    weighted_quantile,
)
from odtstudy.dl85.engine._numeric_fit import (
    THRESHOLDS_CONSTRAINT,
    NumericInputMixin,
    squared_stats,
)
from odtstudy.dl85.engine._quantiles import (
    check_quantiles,
    combine_results,
    crossings,
    unit_quantile_values,
    warn_crossings,
)
from odtstudy.dl85.engine._rounding import (
    CERTIFY_RTOL,
    stable_lower_bound,
    sums_certify,
    sums_error,
)
from odtstudy.dl85.estimators._options import SEARCH_CONSTRAINTS, SearchOptionsMixin

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
        search (``trees_``; ``predict`` returns one column per tau; a list
        of one tau fits as that tau alone but returns what a list returns:
        ``objective_`` an array, ``trees_``, one column): the
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
        Total (weighted) loss summed over the training rows (not a mean),
        of the tree as returned (its leaf values the doubles it holds),
        computed exactly and rounded to the nearest double:
        sum of squared errors, of absolute errors or of pinball losses
        ``tau * (y - q)`` for ``y >= q`` and ``(1 - tau) * (q - y)`` below.
        With several quantiles: an array, one loss per quantile.
    lower_bound_ : float or ndarray
        A certified lower bound on the optimum: the search's optimum less
        the most its floating-point rounding can have moved it. It can lie
        below ``objective_`` by that rounding and by the rounding of the
        leaf values to doubles (noticeable only for targets far from 0 next
        to their spread).
    optimal_ : bool
        True when the search's optimum is certified: its rounding is at
        most 1e-9 of it (or the tree's loss is 0). Otherwise the status is
        "feasible" (or "timeout") and ``stats_["reason"]`` says why.
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
    status_ : {"optimal", "feasible", "timeout", "infeasible"}
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
        stable_stats = np.column_stack([stats, np.zeros(len(stats))])
        objective = {"kind": "squared", "y": y, "stats": stable_stats, "values": y}
        searched = fit_search(
            X, cuts, objective, self._scaled_options(factor), numeric=True
        )
        searched.out.stats["stable_form"] = True
        return searched

    def _exact_leaf_search(self, X, cuts, y, sample_weight):
        """The squared error's search with each leaf priced exactly (a
        ``py_rows`` loss; numeric engine, 0/1 columns split at 0.5), for
        small data that neither float form certifies."""
        objective = {
            "kind": "py_rows",
            "callback": exact_squared_leaf(y, sample_weight),
            "purity_tol": 0.0,
        }
        searched = fit_search(
            X, cuts, objective, self._scaled_options(1.0), numeric=True
        )
        searched.out.stats["stable_form"] = True
        searched.out.stats["exact_leaves"] = True
        return searched

    def _fit(self, X, y, sample_weight):
        taus = check_quantiles(self.quantile, self.criterion)
        if taus is not None:
            return self._fit_quantiles(X, y, sample_weight, taus)
        objective = _CRITERIA[self.criterion]
        check_losses_fit(y, sample_weight, squared=objective == "squared")
        tau = float(self.quantile)
        cuts = self._thresholds_of(X, sample_weight)
        reason = ""
        if objective == "squared":
            searched, factor, error, reason = self._squared_search(
                X, cuts, y, sample_weight
            )
        else:
            pinball = pinball_target(y, sample_weight)
            factor = pinball.scale
            searched = fit_search(
                X,
                cuts,
                {
                    "kind": objective,
                    "weights": sample_weight,
                    "y": pinball.y,
                    "quantile": tau,
                },
                self._scaled_options(factor),
            )
            error = pinball.error(
                self.max_depth, None if objective == "absolute" else tau
            )
        out = searched.out
        out.rescale(factor)
        if not out.found:
            return fit_result(
                out, None, max_depth=self.max_depth, max_error=self.max_error
            )
        value_of = _leaf_values(objective, tau, y, sample_weight)
        tree = build_tree(out, 1, value_of, X=searched.X, kind="regressor")
        tree = searched.decoded(tree)
        loss = exact_tree_loss(tree, X, y, sample_weight, objective, tau)
        return certified_result(out, tree, loss, error=error * factor, reason=reason)

    def _squared_search(self, X, cuts, y, sample_weight):
        """The squared error's search of ``X`` with the candidate thresholds
        ``cuts``: in the sums form, on an exact target when there is one
        (decimals, then the binary form of ``y``); in the stable form when no
        certificate holds. Returns the search (:class:`Searched`), its unit
        of loss, how far below its optimum the true one can lie (in that
        unit) and, for the stable form, why it is not certified."""
        targets = [exact_target(y, sample_weight), binary_target(y, sample_weight)]
        targets = [t for t in targets if t is not None] or [None]
        for exact in targets[:2]:
            target, scale = _search_target(y, sample_weight, exact)
            factor = scale * scale
            stats = squared_stats(target, sample_weight)
            objective = {"kind": "squared", "weights": sample_weight, "y": target}
            if exact is not None:
                objective["purity_tol"] = exact.purity_tol
            searched = fit_search(X, cuts, objective, self._scaled_options(factor))
            out = searched.out
            if not out.found:
                return searched, factor, 0.0, ""
            found = out.lower_bound if out.timed_out else out.loss
            offset = None if exact is None else exact.offset
            engine = searched.searcher
            error = sums_error(found, stats, self.max_depth, engine, offset)
            if out.timed_out or sums_certify(
                out.loss, stats, self.max_depth, engine, offset
            ):
                return searched, factor, error, ""
        # the better of the two forms' certified bounds
        bound = max(out.loss - error, 0.0)
        stable = self._stable_search(X, cuts, stats, y / scale, factor)
        if not stable.out.timed_out:
            w = stats[:, 0]
            bound = max(
                bound, stable_lower_bound(stable.out.loss, w, y / scale, self.max_depth)
            )
        error = max(stable.out.loss - bound, 0.0)
        if stable.out.timed_out or error <= CERTIFY_RTOL * stable.out.loss:
            return stable, factor, error, ""
        if len(y) <= EXACT_LEAF_ROWS:
            exact_leaves = self._exact_leaf_search(X, cuts, y, sample_weight)
            if not exact_leaves.out.timed_out:
                exact_error = _exact_leaf_error(exact_leaves.out, self)
                return exact_leaves, 1.0, exact_error, ""
        return (
            stable,
            factor,
            error,
            (
                "the squared error's sums could not certify the optimum (targets "
                "far from 0 next to their spread, or weights across many orders "
                "of magnitude), nor its stable form's rounding bound"
            ),
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
        pinball = pinball_target(y, sample_weight)
        scale = pinball.scale
        objective = {
            "kind": "quantile",
            "weights": sample_weight,
            "y": pinball.y,
            "quantiles": taus,
        }
        try:
            searched = fit_search(X, cuts, objective, self._scaled_options(scale))
        except NumericUnavailable:
            raise ValueError(
                f"quantile={self.quantile!r}: several quantiles search 0/1 "
                f"data, and thresholds={self.thresholds!r} gives too many "
                "thresholds for 0/1 threshold columns; use thresholds=k "
                "with a small k, binarise X, or fit one quantile per fit"
            ) from None
        outs = searched.outs
        rows = ExactRows(y, sample_weight)
        results, trees = [], []
        for tau, out in zip(taus, outs):
            error = pinball.error(self.max_depth, float(tau)) * scale
            out.rescale(scale)
            if sample_weight is None:
                value_of = unit_quantile_values(y, tau)
            else:
                value_of = _leaf_values("quantile", tau, y, sample_weight)
            tree = build_tree(out, 1, value_of, X=searched.X, kind="regressor")
            tree = searched.decoded(tree)
            loss = rows.tree_loss(tree, X, "quantile", float(tau))
            results.append(certified_result(out, tree, loss, error=error))
            trees.append(tree)
        result = combine_results(results, trees, [out.stats for out in outs])
        predictions = np.column_stack([tree.predict(X) for tree in trees])
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
            # around one of the rows: y - c is exact for rows near c, and
            # c + mean rounds once (y far from 0 next to its spread)
            c = float(y[rows[0]])
            return [c + float(np.average(y[rows] - c, weights=w[rows]))]
        if objective == "absolute":
            return [weighted_quantile(y[rows], w[rows], 0.5, midpoint=True)]
        return [weighted_quantile(y[rows], w[rows], tau)]

    return value_of


def _exact_leaf_error(out, reg) -> float:
    """How far below the optimum found with exact leaf losses the true one
    can lie: the rounding of the sum of at most ``2**max_depth`` leaves."""
    return out.loss * (2.0**reg.max_depth + 2) * 2.0**-52


def _search_target(y, sample_weight, exact):
    """The target the squared error's search runs on and its unit (squared
    errors scale back by its square): ``exact``'s integers, or ``y``
    centred and scaled (``exact`` None)."""
    if exact is not None:
        return exact.z, exact.scale
    # the squared error is the same for y and y - c: centring y keeps the
    # search's sums of w y and w y**2 from cancelling when the mean of y
    # is large next to its spread (leaf values are computed from y itself)
    y = y - float(np.average(y, weights=sample_weight))
    # the search runs on y / 2**k, |y / 2**k| near 1 (exact in binary
    # floating point); its losses scale back by 2**k (2**2k squared)
    scale = power_of_two_scale(y)
    return y / scale, scale
