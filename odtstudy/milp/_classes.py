"""Estimators: BinOCTClassifier and OCTClassifier, and the fit flow of every MILP
learner (:class:`_MILPTreeClassifier`)."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy._complete_tree import encode, to_splits
from odtstudy._deadline import DeadlineReached
from odtstudy._incumbent import report_incumbent
from odtstudy._limits import MAX_COMPLETE_DEPTH, check_complete_tree
from odtstudy.base import BaseTreeClassifier, FitResult
from odtstudy.cart import tree_from_sklearn
from odtstudy.milp._anytime import anytime_trace, integral
from odtstudy.milp._binoct import BinOCTModel
from odtstudy.milp._common import fit_cart, tree_of_splits
from odtstudy.milp._oct import OCTModel
from odtstudy.milp._solvers import SOLVERS, check_solver_available, solve
from odtstudy.tree import Tree, TreeBuilder

__all__ = ["BinOCTClassifier", "OCTClassifier"]

_MIN_SOLVE_SECONDS = 0.05
#: Most (training row, leaf) pairs, each a binary variable of the model
#: (PuLP holds about 1 KB per variable with its constraints).
MAX_ROW_LEAF_PAIRS = 2**22
#: Most solver threads (CBC and HiGHS gain nothing from more).
MAX_THREADS = 256


class _CartStart(NamedTuple):
    """The CART tree every MILP fit starts from (and falls back to)."""

    tree: Tree
    errors: int
    objective: float
    point: tuple


class _MILPTreeClassifier(BaseTreeClassifier):
    """Fit flow shared by the MILP learners.

    Subclasses implement ``_make_model`` (``None`` when one leaf is optimal),
    ``_warm_start``, ``_errors_to_obj`` (training errors and tree -> the
    MILP's objective scale), ``_obj_to_errors`` (the MILP's objective ->
    errors, ``None`` when it does not determine them), ``_milp_errors`` (the
    errors the solution claims), ``_count_variables`` (the variables summing
    to the errors, or ``None``), ``_bound_to_lb`` (solver bound -> lower
    bound on misclassifications), ``_proves``, ``_gap_abs`` and
    ``_tolerance``. A learner whose solve is not one MILP (BendersOCT)
    overrides ``_solve_model``.
    """

    _parameter_constraints: dict = {
        **BaseTreeClassifier._parameter_constraints,
        "max_depth": [Interval(Integral, 1, MAX_COMPLETE_DEPTH, closed="both")],
        "solver": [StrOptions(set(SOLVERS))],
        "threads": [Interval(Integral, 1, MAX_THREADS, closed="both")],
        "warm_start": ["boolean"],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    _exact = True
    #: What the model allocates per training row and leaf (size check).
    _per_row_and_leaf = "one binary variable per training row"

    def fit(self, X, y):
        """Fit the tree on ``X`` and ``y``.

        The MILP minimises the plain number of misclassifications, so
        ``fit`` takes no ``sample_weight`` (scikit-learn's
        ``has_fit_parameter`` then tells meta-estimators so); to weight rows,
        use ``DL85Classifier`` or ``CPSATClassifier``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Any labels (strings and non-contiguous integers work).

        Returns
        -------
        self
        """
        return super().fit(X, y)

    def _min_leaf(self) -> int:
        return getattr(self, "min_samples_leaf", 1)

    def _fit(self, X, y, sample_weight):
        deadline = self._fit_deadline()
        check_solver_available(self.solver)
        X = np.asarray(X, dtype=float)
        n_classes = len(self.classes_)
        n = len(y)
        check_complete_tree(
            type(self).__name__,
            self.max_depth,
            n,
            MAX_ROW_LEAF_PAIRS,
            self._per_row_and_leaf,
        )
        if n < self._min_leaf():
            return FitResult(
                tree=None,
                objective=None,
                status="infeasible",
                reason=f"min_samples_leaf={self._min_leaf()} exceeds the "
                f"number of training rows ({n})",
            )

        start = self._cart_start(X, y, n_classes, deadline)
        stats = {
            "solver": self.solver,
            "cart_objective": float(start.errors),
        }
        try:
            model = self._make_model(X, y, n_classes, deadline)
            if model is None:  # nothing to split on: one leaf is optimal
                return self._one_leaf(y, n_classes, start, stats, deadline)
            warm_obj = None
            if self.warm_start:
                warm_obj = self._warm_start(model, to_splits(encode(start.tree)))
        except DeadlineReached:
            return self._cart_result(start, stats, deadline, "while building the model")

        stats["n_variables"] = model.n_variables
        stats["n_constraints"] = model.n_constraints
        stats["n_nonzeros"] = model.n_nonzeros
        stats["warm_start_objective"] = warm_obj
        stats["build_time"] = deadline.elapsed()
        if deadline.expired(reserve=_MIN_SOLVE_SECONDS):
            return self._cart_result(start, stats, deadline, "while building the model")
        return self._solve_model(model, X, y, start, stats, deadline)

    def _cart_start(self, X, y, n_classes, deadline) -> _CartStart:
        """CART of depth ``max_depth``, reported as the first incumbent."""
        random_state = self.random_state
        if not (random_state is None or isinstance(random_state, Integral)):
            random_state = None
        cart = fit_cart(X, y, self.max_depth, self._min_leaf(), random_state)
        tree = tree_from_sklearn(cart.tree_, X, y, n_classes)
        errors = int(np.sum(tree.predict(X) != y))
        report_incumbent(self, tree, float(errors))
        return _CartStart(
            tree,
            errors,
            self._errors_to_obj(errors, tree, X, y),
            (deadline.elapsed(), float(errors), None),
        )

    def _cart_result(self, start, stats, deadline, why) -> FitResult:
        """CART's tree, the solver not run: the time limit came ``why``."""
        stats.update(
            mip_gap=None,
            solver_status=f"not run: time limit reached {why}",
            solve_time=0.0,
            build_time=deadline.elapsed(),
            returned="cart",
            anytime=anytime_trace(
                [start.point],
                objective=start.errors,
                bound=None,
                end=deadline.elapsed(),
            ),
        )
        return FitResult(start.tree, float(start.errors), None, False, "timeout", stats)

    def _one_leaf(self, y, n_classes, start, stats, deadline) -> FitResult:
        counts = np.bincount(y, minlength=n_classes)
        builder = TreeBuilder(n_outputs=n_classes)
        builder.add_leaf(counts, n_samples=len(y))
        err = int(len(y) - counts.max())
        stats.update(n_variables=0, n_constraints=0, n_nonzeros=0, mip_gap=0.0)
        stats.update(solver_status="trivial", solve_time=0.0)
        stats["anytime"] = anytime_trace(
            [start.point], objective=err, bound=err, end=deadline.elapsed()
        )
        return FitResult(
            builder.build(), float(err), float(err), True, "optimal", stats
        )

    def _solve_model(self, model, X, y, start, stats, deadline) -> FitResult:
        """Solve ``model`` once and return its tree (or CART's, when better)."""
        n_classes = len(self.classes_)
        try:
            info = solve(
                model.prob,
                self.solver,
                deadline=deadline,
                threads=self.threads,
                warm_start=stats["warm_start_objective"] is not None,
                gap_abs=self._gap_abs(model),
                tolerance=self._tolerance(model),
                count=self._count_variables(model),
            )
        except DeadlineReached:
            return self._cart_result(
                start, stats, deadline, "while writing the solver's input"
            )
        solved_at = deadline.elapsed()
        self._record_solve(stats, info)
        lower_bound = self._bound_to_lb(info.bound, model)
        timed_out = info.timed_out or deadline.expired()

        tree, err, obj = None, None, None
        if info.has_solution:
            splits, _ = model.decode()
            tree = tree_of_splits(self.max_depth, splits, X, y, n_classes)
            err = int(np.sum(tree.predict(X) != y))
            obj = self._errors_to_obj(err, tree, X, y)
            milp_errors = self._milp_errors(model)
            stats["milp_errors"] = milp_errors
            if abs(err - milp_errors) > 1e-4 * max(1.0, milp_errors):
                stats["objective_mismatch"] = True
                if err > milp_errors + 1e-4 * max(1.0, milp_errors):
                    warnings.warn(
                        f"{type(self).__name__}: the decoded tree makes {err} "
                        f"errors but the MILP solution claims {milp_errors:g} "
                        "(numerical tolerance issue); optimality is not claimed",
                        RuntimeWarning,
                        stacklevel=4,
                    )

        if tree is None or obj > start.objective + 1e-9:
            # the solver has nothing better than the warm start (or nothing
            # usable): return CART, optimal only if the bound proves it
            stats["returned"] = "cart"
            tree, err, obj = start.tree, start.errors, start.objective
            optimal = self._proves(obj, err, info.bound, model)
        else:
            stats["returned"] = "milp"
            optimal = info.proven_optimal and self._proves(obj, err, info.bound, model)
        stats["anytime"] = self._anytime(
            start.point, info.trace, model, err, lower_bound, solved_at
        )
        return self._result(
            tree, err, obj, lower_bound, optimal, timed_out, stats, info
        )

    def _record_solve(self, stats, info) -> None:
        """The solve's outcome in ``stats_`` (a crash also warns)."""
        stats.update(
            mip_gap=info.gap,
            solver_status=info.solver_status,
            solve_time=info.solve_time,
            milp_objective=info.objective,
            milp_bound=info.bound,
            solver_killed=info.killed,
            solver_crashed=info.crashed,
            retried_without_warm_start=info.retried_without_warm_start,
        )
        if info.crashed is not None:
            warnings.warn(
                f"{type(self).__name__}: the {self.solver} solver crashed "
                f"({info.crashed})"
                + (
                    "; it was run again without the warm start"
                    if info.retried_without_warm_start
                    else ""
                )
                + f" (stats_['solver_status']: {info.solver_status!r})",
                RuntimeWarning,
                stacklevel=5,
            )
        if info.solver_cpu_time is not None:
            stats["solver_cpu_time"] = info.solver_cpu_time
        if info.warm_start_accepted is not None:
            stats["warm_start_accepted"] = info.warm_start_accepted

    @staticmethod
    def _result(tree, err, obj, lower_bound, optimal, timed_out, stats, info):
        if optimal:
            status = "optimal"
            stats["mip_gap"] = 0.0
        else:
            status = "timeout" if timed_out else "feasible"
            if stats["mip_gap"] is None and info.bound is not None:
                stats["mip_gap"] = max(0.0, (obj - info.bound) / max(abs(obj), 1e-10))
        return FitResult(tree, float(err), lower_bound, optimal, status, stats)

    def _count_variables(self, model):
        return self._error_variables(model)

    def _milp_errors(self, model):
        return float(sum(var.varValue or 0.0 for var in self._error_variables(model)))

    def _anytime(self, cart_point, trace, model, errors, lower_bound, end):
        """``stats_["anytime"]``: CART's point, then the solver's progress
        (:attr:`SolveInfo.trace`) in errors and lower bounds on them."""
        points = [cart_point]
        for at, value, bound, count in trace:
            if count is None and value is not None:
                count = self._obj_to_errors(value, model)
            lower = None if bound is None else self._bound_to_lb(bound, model)
            points.append((at, integral(count), lower))
        return anytime_trace(points, objective=errors, bound=lower_bound, end=end)


class _ErrorCountObjective:
    """The MILP's objective is the number of training errors (BinOCT, FlowOCT,
    BendersOCT): a bound ``b`` proves ``ceil(b)`` errors, and the solver may
    stop half an error from its bound."""

    def _errors_to_obj(self, err, tree, X, y):
        return float(err)

    def _obj_to_errors(self, value, model):
        return value

    def _bound_to_lb(self, bound, model):
        if bound is None or not math.isfinite(bound):
            return None
        return float(max(0, math.ceil(bound - 1e-6)))

    def _proves(self, obj, err, bound, model):
        lb = self._bound_to_lb(bound, model)
        return lb is not None and err <= lb

    def _gap_abs(self, model):
        return 0.5

    def _tolerance(self, model):
        return None


class BinOCTClassifier(_ErrorCountObjective, _MILPTreeClassifier):
    """BinOCT: optimal classification tree as a binary linear program.

    The model of Verwer & Zhang (2019): every branch node picks a feature and
    a threshold among the feature's candidate cuts (midpoints between
    consecutive distinct values, dropped when both values hold rows of one
    same class only), the threshold index being encoded in ``O(log K)`` bits
    through a binary search tree. Works on numeric and on 0/1 features (there
    the bits vanish). The complete tree of depth ``max_depth`` is learned;
    splits that send every training row to one side are removed from the
    returned tree.

    Parameters
    ----------
    max_depth : int, default=2
        Depth of the complete tree, at most 20; the model has a binary
        variable per training row and leaf, so ``n_samples * 2**max_depth``
        must not exceed ``2**22`` (a ``ValueError`` names the deepest
        feasible depth).
    time_limit : float, default=None
        Seconds for the whole fit (model building included); ``None`` for no
        limit. At the limit the best solution found is returned with
        ``optimal_ = False``.
    solver : {"cbc", "highs"}, default="cbc"
        CBC (bundled with PuLP) or HiGHS (``highspy``).
    threads : int, default=1
        Solver threads, at most 256.
    warm_start : bool, default=True
        Start the solver from the CART tree of the same depth.
    min_samples_leaf : int, default=1
        ``N_min``: every leaf reached by some training row holds at least that
        many rows.
    random_state : int or None, default=None
        Seed of the CART warm start.

    Attributes
    ----------
    tree_ : Tree
    classes_ : ndarray
    objective_ : float
        Training misclassifications of ``tree_``.
    lower_bound_ : float or None
        Lower bound on the optimal number of errors from the solver's bound.
    optimal_ : bool
        True only when the solver proved optimality.
    status_ : {"optimal", "feasible", "timeout", "infeasible"}
    fit_time_ : float
    stats_ : dict
        Model size: ``n_variables``, ``n_constraints``, ``n_nonzeros``.
        Solve: ``mip_gap``, ``solver_status``, ``solve_time`` (the solver
        process, its input files included), ``build_time`` (CART and the
        model), ``solver_killed`` (it overran the time limit and was killed),
        ``solver_crashed`` (``None``, or the signal the solver died of, e.g.
        ``"SIGSEGV"``: a ``RuntimeWarning`` says so, and CBC is run again
        without the warm start within the same limit:
        ``retried_without_warm_start``),
        ``milp_objective``, ``milp_bound``, ``milp_errors``,
        ``cart_objective``, ``warm_start_objective``, ``returned`` ("milp",
        or "cart" when the solver found nothing better).
        ``anytime``: ``[seconds, errors]`` or ``[seconds, errors, lower
        bound]`` points, seconds since ``fit`` started, one per improvement
        of the incumbent or of the bound: CART's tree first, then the
        solver's incumbents and bounds (HiGHS: its callbacks; CBC: its log,
        whose CPU seconds are scaled to wall-clock seconds), and the final
        ``objective_`` / ``lower_bound_`` when they improve on the last
        point. Incumbents the solver reported but the fit could not read
        back (a solver killed at the limit) are left out.

    Notes
    -----
    A node tests ``x < c`` with ``c`` never equal to a training value, so the
    tree's ``x <= c`` test routes the training data identically. The returned
    tree is never worse than CART on the training data. ``fit`` takes no
    ``sample_weight``: the model counts misclassified rows.

    The solver runs in a child process that gets the time left as its own
    limit, is stopped at the time limit and killed shortly after (at most
    ``0.05 * time_limit + 0.5`` s later, 5 s at most); its files are removed
    and it does not outlive the fit, even when the fitting process is
    killed. A fit therefore returns within ``1.1 * time_limit + 1`` s.

    References
    ----------
    S. Verwer, Y. Zhang. Learning Optimal Classification Trees Using a Binary
    Linear Program Formulation. AAAI 2019.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(1, 7).reshape(-1, 1)
    >>> y = np.array([0, 0, 1, 1, 1, 0])
    >>> BinOCTClassifier(max_depth=1).fit(X, y).objective_
    1.0
    """

    def __init__(
        self,
        max_depth=2,
        *,
        time_limit=None,
        solver="cbc",
        threads=1,
        warm_start=True,
        min_samples_leaf=1,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.solver = solver
        self.threads = threads
        self.warm_start = warm_start
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def _make_model(self, X, y, n_classes, deadline):
        model = BinOCTModel(
            X, y, n_classes, self.max_depth, self.min_samples_leaf, deadline=deadline
        )
        return model if model.usable else None

    def _warm_start(self, model, splits):
        return model.set_warm_start(model.assignment_from_splits(splits))

    def _error_variables(self, model):
        return [
            model.e[leaf][c] for leaf in model.leaves for c in range(model.n_classes)
        ]


class OCTClassifier(_MILPTreeClassifier):
    """OCT: axis-aligned optimal classification tree (Bertsimas & Dunn 2017).

    Minimises ``errors / L_hat + alpha * (number of splits)`` with ``L_hat``
    the baseline error (predicting the majority class), over trees of depth
    at most ``max_depth`` whose non-empty leaves hold at least
    ``min_samples_leaf`` rows. Features are scaled to [0, 1] inside the
    estimator; the split ``a x < b`` uses per-feature epsilons (smallest gap
    between consecutive distinct values), and a node that does not split
    sends all its rows right. 0/1 data uses the variant without ``b``.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth ``D``, at most 20; the model has a binary variable per
        training row and leaf, so ``n_samples * 2**max_depth`` must not
        exceed ``2**22`` (a ``ValueError`` names the deepest feasible depth).
    alpha : float, default=0.0
        Complexity penalty per split (in units of the normalised loss).
    min_samples_leaf : int, default=1
        ``N_min``.
    time_limit : float, default=None
        Seconds for the whole fit (model building included); ``None`` for no
        limit.
    solver : {"cbc", "highs"}, default="cbc"
    threads : int, default=1
        Solver threads, at most 256.
    warm_start : bool, default=True
        Start from the CART tree of the same depth (``min_samples_leaf`` =
        ``N_min``).
    random_state : int or None, default=None
        Seed of the CART warm start.
    scaling : {"minmax", "rank"}, default="minmax"
        ``"minmax"`` scales with the training min / max, as in the paper
        (when some epsilon is below 1e-3 the solver's feasibility and
        integrality tolerances are tightened to 1e-9); ``"rank"`` replaces
        values by their rank / (#distinct - 1), which allows the same
        partitions with well-separated values.

    Attributes
    ----------
    tree_ : Tree
        Thresholds in original units (midpoints between the largest training
        value sent left and the smallest sent right).
    classes_ : ndarray
    objective_ : float
        Training misclassifications of ``tree_``.
    lower_bound_ : float or None
        Lower bound on the number of errors implied by the solver's bound
        (with ``alpha > 0`` it is the bound minus the largest possible
        penalty, hence weak).
    optimal_ : bool
        True only when the solver proved optimality of the penalised
        objective.
    status_ : {"optimal", "feasible", "timeout", "infeasible"}
    fit_time_ : float
    stats_ : dict
        As :class:`BinOCTClassifier`, plus ``penalized_objective`` and
        ``n_splits``. The ``anytime`` trace is in errors, like
        ``objective_``: the MILP's objective is converted with
        ``errors = L_hat * objective`` when ``alpha = 0``; with ``alpha > 0``
        it does not determine the errors, so HiGHS's incumbents are counted
        from their ``L`` variables and CBC's (known by objective only) are
        left out (the trace then holds CART's tree, the bounds and the final
        tree). Bounds are as ``lower_bound_``.

    References
    ----------
    D. Bertsimas, J. Dunn. Optimal Classification Trees. Machine Learning
    106(7), 2017.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.arange(1, 7).reshape(-1, 1)
    >>> y = np.array([0, 0, 1, 1, 1, 0])
    >>> OCTClassifier(max_depth=2).fit(X, y).objective_
    0.0
    """

    _parameter_constraints: dict = {
        **_MILPTreeClassifier._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
        "scaling": [StrOptions({"minmax", "rank"})],
    }

    @classmethod
    def objective_family(cls, params=None) -> str:
        """What the proven objective measures for a learner built with
        ``params``: misclassifications, plus a split penalty when ``alpha``
        is positive."""
        if (params or {}).get("alpha"):
            return "misclassification+split-penalty"
        return "misclassification"

    def __init__(
        self,
        max_depth=2,
        *,
        alpha=0.0,
        min_samples_leaf=1,
        time_limit=None,
        solver="cbc",
        threads=1,
        warm_start=True,
        random_state=None,
        scaling="minmax",
    ):
        self.max_depth = max_depth
        self.alpha = alpha
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit
        self.solver = solver
        self.threads = threads
        self.warm_start = warm_start
        self.random_state = random_state
        self.scaling = scaling

    def _make_model(self, X, y, n_classes, deadline):
        return OCTModel(
            X,
            y,
            n_classes,
            self.max_depth,
            alpha=self.alpha,
            min_samples_leaf=self.min_samples_leaf,
            scaling=self.scaling,
            deadline=deadline,
        )

    def _warm_start(self, model, splits):
        return model.set_warm_start(splits)

    def _baseline(self, y):
        counts = np.bincount(y)
        return float(len(y) - counts.max())

    def _errors_to_obj(self, err, tree, X, y):
        n_splits = tree.node_count - tree.n_leaves
        return err / self._baseline(y) + float(self.alpha) * n_splits

    def _error_variables(self, model):
        return [model.L[t] for t in model.leaves]

    def _obj_to_errors(self, value, model):
        # errors / L_hat + alpha * splits: the splits are unknown when alpha > 0
        return value * model.baseline if self.alpha == 0 else None

    def _bound_to_lb(self, bound, model):
        if bound is None or not math.isfinite(bound):
            return None
        penalty = float(self.alpha) * len(model.branches)
        return float(max(0, math.ceil(model.baseline * (bound - penalty) - 1e-6)))

    def _proves(self, obj, err, bound, model):
        if bound is None or not math.isfinite(bound):
            return False
        if self.alpha == 0:
            return err <= self._bound_to_lb(bound, model)
        return obj <= bound + 1e-6 * max(1.0, abs(bound))

    def _gap_abs(self, model):
        return 0.5 / model.baseline if self.alpha == 0 else 1e-6

    def _tolerance(self, model):
        if model.binary or float(model.eps.min()) >= 1e-3:
            return None
        return 1e-9

    def _fit(self, X, y, sample_weight):
        result = super()._fit(X, y, sample_weight)
        if result.tree is not None:
            n_splits = result.tree.node_count - result.tree.n_leaves
            result.stats["n_splits"] = n_splits
            result.stats["penalized_objective"] = self._errors_to_obj(
                result.objective, result.tree, X, y
            )
        return result
