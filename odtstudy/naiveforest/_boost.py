"""LPBoost and MDBoost forests by column generation (Optiboost).

The restricted master (:mod:`._master`) gives tree weights and sample weights
``u``; the pricing oracle (:mod:`._pricing`) returns the tree maximising
``u . a(h)``; the tree joins the master while it violates a dual constraint.
With an exact oracle (weighted DL8.5, or exhaustive enumeration) the loop
ends with a forest that is optimal over *all* trees of the given depth
(Aglin's thesis, ch. 6, Algorithm 11); with CART it is the classic heuristic.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy.base import FitResult
from odtstudy.naiveforest._base import BaseForestClassifier, weighted_vote
from odtstudy.naiveforest._master import make_master
from odtstudy.naiveforest._pricing import (
    column_of,
    price_cart,
    price_dl85,
    price_exhaustive,
)

__all__ = ["OptimalBoostClassifier"]

TOL = 1e-6
_EXACT_PRICING = {"dl85", "exhaustive"}


class OptimalBoostClassifier(BaseForestClassifier):
    """LPBoost / MDBoost forest of depth-limited trees by column generation.

    The master problem over the trees found so far is solved to optimality;
    its dual sample weights ``u`` define the pricing problem, an optimal
    *weighted* decision tree (maximise ``sum_i u_i a_i(h)``, ``a_i = +1`` on
    correctly classified rows, ``-1`` otherwise). The loop stops when the
    priced tree does not violate a dual constraint (``u . a(h) <= beta +
    1e-6``): with an exact oracle the forest is then optimal among all trees
    of depth ``max_depth`` and ``optimal_`` is True (OptiLPBoost /
    OptiMDBoost). With ``pricing="cart"`` this is the classic LPBoost /
    MDBoost, which stops when CART finds no violating tree and never proves
    optimality.

    Parameters
    ----------
    objective : {"lpboost", "mdboost"}, default="lpboost"
        LPBoost: maximise the soft minimum margin ``rho - D sum_i xi_i``
        with ``sum_t w_t = 1`` (LP, PuLP + HiGHS). MDBoost: maximise
        ``1^T rho - rho^T A rho / 2`` (mean margin minus margin variance)
        with ``sum_t w_t = D`` (convex QP, highspy).
    reg : float, default=1.0
        The regularisation ``D``. LPBoost needs ``D >= 1 / n_samples``
        (grid of the thesis: 0.125, ..., 1); MDBoost ``D > 0`` (grid 0.5,
        1, 3, 6, 12, 25, 50, 100).
    max_depth : int, default=2
        Depth of every tree, at most 60 (as DL8.5's).
    pricing : {"dl85", "cart", "exhaustive"}, default="dl85"
        Pricing oracle: weighted DL8.5 (exact; needs 0/1 features and
        DL8.5 with real-valued sample weights; while the DL8.5 build lacks
        them, a ``RuntimeWarning`` is raised and the exhaustive oracle is
        used for ``max_depth <= 3``), weighted CART (heuristic;
        any numeric features), or exhaustive dynamic programming over all
        0/1 splits (exact, for ``max_depth <= 3`` on small data).
    max_iterations : int, default=1000
        Maximum number of master solves, hence of trees generated.
    time_limit : float, default=None
        Seconds for the whole fit; the forest built so far is returned at the
        limit (``status_ = "timeout"``). ``None``: no limit.
    stop_after_positive_margin : int, default=None
        Bosch's cut-off: stop this many trees after the margin first becomes
        positive (LPBoost: the LP's ``rho``; MDBoost: the minimum normalised
        margin ``min_i rho_i / sum_t w_t``). ``None``: run to optimality.
    lp_solver : {"pulp", "highspy"}, default="pulp"
        LPBoost master backend: PuLP + HiGHS (duals from ``constraint.pi``,
        the model is rebuilt at each iteration) or one highspy model
        warm-started after each new column (same solutions, faster on
        hundreds of rows). MDBoost always uses highspy.
    min_sup : int, default=1
        Minimum number of rows in every leaf of a priced tree, at most
        ``2**31 - 1`` (as DL8.5's). With DL8.5
        pricing and negative MDBoost weights, rewritten rows are counted
        (see Notes).
    random_state : int, RandomState instance or None, default=None
        Seeds CART pricing.

    Attributes
    ----------
    estimators_ : list of Tree
        Trees with non-zero weight, in generation order.
    weights_ : ndarray of shape (n_estimators,)
        Their weights (LPBoost: sum to 1; MDBoost: sum to ``reg``).
    n_trees_ : int
        ``len(estimators_)``.
    tree_ : None
        A forest has no single tree (the common contract).
    classes_ : ndarray of shape (n_classes,)
    objective_ : float
        Master objective of the returned forest (maximised).
    lower_bound_ : None
        The problem is a maximisation; see ``stats_["upper_bound"]``.
    optimal_ : bool
        True when an exact oracle proved that no tree violates a dual
        constraint.
    status_ : {"optimal", "feasible", "timeout"}
    fit_time_ : float
    stats_ : dict
        One entry per iteration: ``objective`` (master objective),
        ``n_trees`` (trees with non-zero weight), ``reduced_cost`` (score of
        the priced tree minus ``beta``; NaN when no pricing ran),
        ``train_accuracy`` (weighted vote), ``beta``, ``time``. Scalars:
        ``n_columns``, ``n_iterations``, ``pricing`` (the oracle used),
        ``stop_reason``, ``upper_bound`` (Lagrangian bound on the optimum
        over all trees from the last exact pricing, else None),
        ``dual_objective``, ``positive_margin_at`` (number of trees when the
        margin first became positive), ``normalized_objective`` (the master
        objective divided by the sum of the tree weights: ``objective_`` for
        LPBoost, ``objective_ / reg`` for MDBoost; see Notes).
    n_features_in_ : int

    Notes
    -----
    Labels may have more than two classes: as in PyDL8.5 and Bosch's thesis,
    ``a_it = +1`` when tree ``t`` predicts row ``i``'s class and ``-1``
    otherwise, and the forest predicts the class with the largest total
    weight. MDBoost's sample weights can be negative; a row with
    ``u_i < 0`` is rewritten as ``n_classes - 1`` rows, one per other class,
    weighted ``|u_i|`` (for two classes: the row with its label flipped),
    which leaves the best tree unchanged. Rows of zero weight are dropped
    before DL8.5 pricing, so ``min_sup > 1`` then counts weighted rows only.

    MDBoost's master objective grows with ``D`` (the tree weights sum to
    ``D``). ``stats_["normalized_objective"]`` is the scale of the thesis
    (Aglin, eq. 6.12, and Table 6.2): the optimum of its dual ``min r +
    (u - 1)^T A^-1 (u - 1) / (2 D)`` is the master objective divided by
    ``D``; in the normalised margins ``r = rho / D`` (tree weights summing
    to 1) it reads ``1^T r - (D / 2) r^T A r``, the variance still weighted
    by ``D``.

    References
    ----------
    .. [1] G. Aglin, S. Nijssen, P. Schaus. "Assessing optimal forests of
       decision trees", ICTAI 2021; Aglin's PhD thesis, ch. 6.
    .. [2] A. Demiriz, K. Bennett, J. Shawe-Taylor. "Linear programming
       boosting via column generation", Machine Learning 46, 2002.
    .. [3] C. Shen, H. Li. "Boosting through optimization of margin
       distributions", IEEE TNN 21(4), 2010.
    .. [4] S. Bosch. "Constructing optimal forests of decision trees", MSc
       thesis, UCLouvain, 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from odtstudy.naiveforest import OptimalBoostClassifier
    >>> X = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 1], [0, 1, 0], [1, 0, 0],
    ...               [0, 0, 0], [0, 0, 1], [1, 1, 0], [0, 0, 0], [0, 0, 1],
    ...               [0, 0, 0]])
    >>> y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1])
    >>> clf = OptimalBoostClassifier(objective="mdboost", reg=1.0, max_depth=1,
    ...                              pricing="exhaustive").fit(X, y)
    >>> round(clf.objective_, 6), clf.optimal_
    (2.967949, True)
    """

    _parameter_constraints: dict = {
        "objective": [StrOptions({"lpboost", "mdboost"})],
        "reg": [Interval(Real, 0, None, closed="neither")],
        "max_depth": [Interval(Integral, 1, 60, closed="both")],
        "pricing": [StrOptions({"dl85", "cart", "exhaustive"})],
        "max_iterations": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "stop_after_positive_margin": [
            Interval(Integral, 0, None, closed="left"),
            None,
        ],
        "lp_solver": [StrOptions({"pulp", "highspy"})],
        "min_sup": [Interval(Integral, 1, 2**31 - 1, closed="both")],
        "random_state": ["random_state"],
    }
    #: studied on 0/1 data (DL8.5 pricing needs it; the CART-priced
    #: baselines run on the same data for the comparison)
    _study_data = "binary"

    def __init__(
        self,
        objective="lpboost",
        reg=1.0,
        max_depth=2,
        *,
        pricing="dl85",
        max_iterations=1000,
        time_limit=None,
        stop_after_positive_margin=None,
        lp_solver="pulp",
        min_sup=1,
        random_state=None,
    ):
        self.objective = objective
        self.reg = reg
        self.max_depth = max_depth
        self.pricing = pricing
        self.max_iterations = max_iterations
        self.time_limit = time_limit
        self.stop_after_positive_margin = stop_after_positive_margin
        self.lp_solver = lp_solver
        self.min_sup = min_sup
        self.random_state = random_state

    # ------------------------------------------------------------ pricing
    def _price(self, X, y, u, remaining):
        k = len(self.classes_)
        # solver noise in the duals (|u_i| ~ 1e-17) only slows the oracles
        # down and can trip their internal checks: search on cleaned weights,
        # score the tree on the true ones (the difference is far below TOL)
        scale = float(np.max(np.abs(u))) if len(u) else 0.0
        clean = np.where(np.abs(u) <= 1e-12 * scale, 0.0, u)
        if self._pricing == "dl85":
            try:
                res = price_dl85(
                    X,
                    y,
                    clean,
                    k,
                    self.max_depth,
                    self.min_sup,
                    time_limit=remaining,
                )
            except RuntimeError as exc:
                if self.max_depth > 3:
                    raise
                warnings.warn(
                    f"DL8.5 pricing failed ({exc}); this round is priced by "
                    "exhaustive enumeration (also exact)",
                    RuntimeWarning,
                    stacklevel=3,
                )
                res = price_exhaustive(
                    X,
                    y,
                    clean,
                    k,
                    self.max_depth,
                    self.min_sup,
                    time_limit=remaining,
                )
        elif self._pricing == "exhaustive":
            res = price_exhaustive(
                X, y, clean, k, self.max_depth, self.min_sup, time_limit=remaining
            )
        else:
            res = price_cart(
                X,
                y,
                clean,
                k,
                self.max_depth,
                self.min_sup,
                random_state=self._rng_seed,
            )
        res.score = float(u @ column_of(res.tree, X, y))
        return res

    # ---------------------------------------------------------------- fit
    def _binary_input(self) -> bool:
        """0/1 features for the exact pricings (DL8.5, exhaustive); CART
        pricing takes any numbers."""
        return self.pricing in _EXACT_PRICING

    @classmethod
    def objective_family(cls, params=None) -> str:
        """``"lpboost"`` or ``"mdboost"``: what ``objective_`` (the master
        problem's value) measures for a learner built with ``params``."""
        return (params or {}).get("objective", "lpboost")

    def _fit(self, X, y) -> FitResult:
        if self.pricing == "exhaustive" and self.max_depth > 3:
            raise ValueError(
                "pricing='exhaustive' enumerates every tree and is limited to "
                f"max_depth <= 3 (got {self.max_depth}); use pricing='dl85'"
            )
        self._pricing = self.pricing
        deadline = self._fit_deadline()
        rs = self.random_state
        self._rng_seed = (
            rs
            if rs is None or isinstance(rs, Integral)
            else int(np.random.RandomState(rs).randint(2**31 - 1))
        )
        M = X.shape[0]
        k = len(self.classes_)
        master = make_master(self.objective, M, self.reg, self.lp_solver)

        def remaining():
            left = deadline.remaining()
            return None if left is None else max(left, 1e-3)

        # first tree: uniform weights (a plain optimal / CART tree)
        u0 = np.full(M, 1.0 / M if self.objective == "lpboost" else 1.0)
        priced = self._price(X, y, u0, remaining())
        trees = [priced.tree]
        preds = [priced.tree.predict(X)]
        master.add_column(column_of(priced.tree, X, y))
        seen = {np.where(preds[0] == y, 1, -1).astype(np.int8).tobytes()}
        history = {
            k_: []
            for k_ in (
                "objective",
                "n_trees",
                "reduced_cost",
                "train_accuracy",
                "beta",
                "time",
            )
        }
        status, optimal, reason = "feasible", False, "max_iterations"
        upper_bound = None
        positive_at = None
        sol = None
        iteration = 0
        while True:
            iteration += 1
            try:
                sol = master.solve(time_limit=remaining())
            except RuntimeError:
                if not deadline.expired():
                    raise
                # the time limit stopped the master: keep the previous forest
                # (its weights cover the trees before the last column), or
                # the first tree alone
                status, reason = "timeout", "time_limit"
                iteration -= 1
                if sol is None:
                    sol = master.single_tree_solution()
                break
            votes = weighted_vote(np.array(preds), sol.weights, k)
            train_acc = float(np.mean(np.argmax(votes, axis=1) == y))
            history["objective"].append(sol.objective)
            history["n_trees"].append(int(np.sum(sol.weights > 1e-9)))
            history["train_accuracy"].append(train_acc)
            history["beta"].append(sol.beta)
            margin = sol.rho
            if positive_at is None and margin > 1e-9:
                positive_at = len(trees)
            if deadline.expired():
                status, reason = "timeout", "time_limit"
                history["reduced_cost"].append(np.nan)
                history["time"].append(deadline.elapsed())
                break
            if iteration >= self.max_iterations:
                history["reduced_cost"].append(np.nan)
                history["time"].append(deadline.elapsed())
                break
            if (
                self.stop_after_positive_margin is not None
                and positive_at is not None
                and len(trees) - positive_at >= self.stop_after_positive_margin
            ):
                history["reduced_cost"].append(np.nan)
                history["time"].append(deadline.elapsed())
                reason = "stop_after_positive_margin"
                break
            priced = self._price(X, y, sol.sample_weights, remaining())
            reduced = priced.score - sol.beta
            history["reduced_cost"].append(reduced)
            history["time"].append(deadline.elapsed())
            if priced.exact:
                upper_bound = master.dual_objective(
                    sol.sample_weights, max(priced.score, sol.beta)
                )
            if reduced <= TOL:
                if priced.exact:
                    status, optimal, reason = "optimal", True, "no_violated_constraint"
                elif deadline.expired():
                    status, reason = "timeout", "time_limit"
                else:
                    reason = "pricing_found_no_violating_tree"
                break
            pred = priced.tree.predict(X)
            key = np.where(pred == y, 1, -1).astype(np.int8).tobytes()
            if key in seen:  # pragma: no cover - only through numerical noise
                reason = "duplicate_column"
                break
            seen.add(key)
            trees.append(priced.tree)
            preds.append(pred)
            master.add_column(column_of(priced.tree, X, y))

        keep = np.flatnonzero(sol.weights > 1e-9)
        if keep.size == 0:  # pragma: no cover - weights always sum to > 0
            keep = np.array([int(np.argmax(sol.weights))])
        self.sample_weights_ = sol.sample_weights.copy()
        # the objective per unit of tree weight (LPBoost's weights sum to 1)
        scale = self.reg if self.objective == "mdboost" else 1.0
        return FitResult(
            tree=None,
            objective=float(sol.objective),
            lower_bound=None,
            optimal=bool(optimal),
            status=status,
            stats={
                **history,
                "pricing": self._pricing,
                "n_columns": master.n_columns,
                "n_iterations": iteration,
                "stop_reason": reason,
                "upper_bound": upper_bound,
                "dual_objective": sol.dual_objective,
                "positive_margin_at": positive_at,
                "normalized_objective": float(sol.objective) / scale,
            },
            estimators=[trees[t] for t in keep],
            weights=sol.weights[keep],
        )
