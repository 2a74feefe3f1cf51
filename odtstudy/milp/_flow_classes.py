"""Estimators: FlowOCTClassifier and BendersOCTClassifier."""

from __future__ import annotations

import math

import numpy as np

from odtstudy._incumbent import report_incumbent
from odtstudy.milp._anytime import anytime_trace
from odtstudy.milp._bendersoct import BendersMaster, cutting_planes
from odtstudy.milp._classes import _ErrorCountObjective, _MILPTreeClassifier
from odtstudy.milp._common import tree_of_splits
from odtstudy.milp._flow_tree import to_splits
from odtstudy.milp._flowoct import FlowOCTModel
from odtstudy.milp._solvers import solve

__all__ = ["BendersOCTClassifier", "FlowOCTClassifier"]


class _StrongOCTClassifier(_ErrorCountObjective, _MILPTreeClassifier):
    """What FlowOCT and BendersOCT share: 0/1 data, no ``min_samples_leaf``."""

    _parameter_constraints: dict = {
        key: value
        for key, value in _MILPTreeClassifier._parameter_constraints.items()
        if key != "min_samples_leaf"
    }
    _requires_binary = True

    def __init__(
        self,
        max_depth=2,
        *,
        time_limit=None,
        solver="cbc",
        threads=1,
        warm_start=True,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.solver = solver
        self.threads = threads
        self.warm_start = warm_start
        self.random_state = random_state

    def _make_model(self, X, y, n_classes, deadline):
        model = self._model(X, y, n_classes, self.max_depth, deadline)
        return model if model.usable else None

    def _warm_start(self, model, splits):
        return model.set_warm_start(splits)


class FlowOCTClassifier(_StrongOCTClassifier):
    """FlowOCT: optimal classification tree as a max-flow MILP on 0/1 features.

    The formulation of Aghaei, Gómez & Vayanos (2024): each training row is
    a unit of flow that reaches the sink when the tree classifies it
    correctly; the tree maximises the flow. Its LP relaxation is much
    tighter than the big-M one of OCT. Any node may predict, so the optimum
    is the depth-limited one of DL8.5 (trees of depth at most
    ``max_depth``). Constant features are dropped, equal or complementary
    features kept once and identical rows merged (none changes the optimum).

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth, at most 20; the model holds about three flow
        variables per training row and node, so ``n_samples *
        2**max_depth`` must not exceed ``2**22`` (a ``ValueError`` names the
        deepest feasible depth).
    time_limit : float, default=None
        Seconds for the whole fit (model building included); ``None`` for no
        limit. At the limit the best solution found is returned with
        ``optimal_ = False``.
    solver : {"cbc", "highs"}, default="cbc"
        CBC (through PuLP) or HiGHS (``highspy``).
    threads : int, default=1
        Solver threads, at most 256.
    warm_start : bool, default=True
        Start the solver from the CART tree of the same depth.
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
    status_ : {"optimal", "feasible", "timeout"}
    fit_time_ : float
    stats_ : dict
        As :class:`BinOCTClassifier`: model size (``n_variables``,
        ``n_constraints``, ``n_nonzeros``), the solve (``mip_gap``,
        ``solver_status``, ``solve_time``, ``build_time``,
        ``solver_killed``, ``solver_crashed``, ``milp_objective``,
        ``milp_bound``, ``milp_errors``, ``cart_objective``,
        ``warm_start_objective``, ``returned``) and the ``anytime`` trace
        (``[seconds, errors]`` or ``[seconds, errors, lower bound]``
        points: CART's tree, then the solver's incumbents and bounds).

    Notes
    -----
    ``fit`` takes 0/1 features only (binarize with
    :class:`odtstudy.datasets.Binarizer`) and no ``sample_weight``. The
    solver runs in a child process stopped at the time limit and killed
    shortly after, as for :class:`BinOCTClassifier`: a fit returns within
    ``1.1 * time_limit + 1`` s and leaves nothing running.

    References
    ----------
    S. Aghaei, A. Gómez, P. Vayanos. Strong Optimal Classification Trees.
    Operations Research, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> y = np.array([0, 1, 1, 0])
    >>> FlowOCTClassifier(max_depth=2).fit(X, y).objective_
    0.0
    """

    _per_row_and_leaf = "about three flow variables per training row"
    _model = FlowOCTModel

    def _count_variables(self, model):
        return None  # the objective is the number of errors

    def _milp_errors(self, model):
        return model.errors()


class BendersOCTClassifier(_StrongOCTClassifier):
    """BendersOCT: FlowOCT by Benders decomposition, in a cutting-plane loop.

    The master problem holds the tree (which feature each node tests, which
    nodes predict which class) and one variable ``g_i`` in [0, 1] per
    distinct training row, ``1`` when the row is counted correct; it
    minimises the rows not counted. A row's max-flow subproblem (FlowOCT's
    network for that row alone) bounds ``g_i`` by the capacity of any of its
    cuts. PuLP gives no lazy-constraint callback for CBC or HiGHS, so the
    cuts are added in a loop:

    1. (warm start) take CART's tree as the incumbent and add, for every
       row, the cut of its path in that tree;
    2. solve the master (started from the incumbent) within the time left;
    3. read its tree, relabel its leaves by majority and count its errors
       exactly: a better tree becomes the incumbent;
    4. stop when the master's bound (a lower bound on the optimal errors,
       however the master solve ended) proves the incumbent optimal;
    5. otherwise add, for each row the master counts as correct but its
       tree misclassifies, the cut of the row's path (0 at that solution:
       the arcs leaving the path), and the cuts of the other rows' paths
       in that tree, then go to 2; stop when no row is such or at the time
       limit.

    The incumbent is returned, with the best master bound as
    ``lower_bound_``; ``optimal_`` is True only when that bound proves it.

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth, at most 20 (a tree of depth at most ``max_depth``:
        any node may predict); ``n_samples * 2**max_depth`` must not exceed
        ``2**22``, as for :class:`FlowOCTClassifier`.
    time_limit : float, default=None
        Seconds for the whole fit (all master solves included); ``None``
        for no limit.
    solver : {"cbc", "highs"}, default="cbc"
    threads : int, default=1
        Solver threads, at most 256.
    warm_start : bool, default=True
        Start from the CART tree of the same depth and its rows' cuts.
    random_state : int or None, default=None
        Seed of the CART warm start.

    Attributes
    ----------
    tree_ : Tree
    classes_ : ndarray
    objective_ : float
        Training misclassifications of ``tree_``.
    lower_bound_ : float or None
        The best master bound, rounded up.
    optimal_ : bool
    status_ : {"optimal", "feasible", "timeout"}
    fit_time_ : float
    stats_ : dict
        As :class:`FlowOCTClassifier` (the size is the final master's,
        ``solve_time`` sums the master solves, ``solver_status`` is the last
        one's, ``milp_objective`` / ``milp_errors`` the last master's
        objective), plus ``benders_iterations`` (master solves),
        ``benders_cuts`` (cuts added, the warm start's included) and
        ``benders_stopped`` ("proven", "no violated cut", "time limit" or
        the last solver status). The ``anytime`` trace holds CART's tree,
        the masters' bounds and each better tree when its master solve
        ended (a master's own incumbents overcount correct rows and are
        left out).

    Notes
    -----
    ``fit`` takes 0/1 features only and no ``sample_weight``. Every master
    solve runs in a child process under the fit's deadline (see
    :class:`BinOCTClassifier`): a fit returns within ``1.1 * time_limit +
    1`` s and leaves nothing running.

    References
    ----------
    S. Aghaei, A. Gómez, P. Vayanos. Strong Optimal Classification Trees.
    Operations Research, 2024.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> y = np.array([0, 1, 1, 0])
    >>> BendersOCTClassifier(max_depth=2).fit(X, y).objective_
    0.0
    """

    _per_row_and_leaf = "up to two Benders cuts per training row"
    _model = BendersMaster

    def _solve_model(self, model, X, y, start, stats, deadline):
        n_classes = len(self.classes_)

        def solve_master(warm_start):
            return solve(
                model.prob,
                self.solver,
                deadline=deadline,
                threads=self.threads,
                warm_start=warm_start,
                gap_abs=self._gap_abs(model),
                count=None,
            )

        def on_improve(flow_tree, errors):
            tree = tree_of_splits(
                self.max_depth, to_splits(model.data, flow_tree), X, y, n_classes
            )
            report_incumbent(self, tree, float(errors))

        outcome = cutting_planes(model, solve_master, deadline, on_improve)
        solved_at = deadline.elapsed()
        infos = outcome.infos
        stats.update(
            benders_iterations=outcome.iterations,
            benders_cuts=model.n_cuts,
            benders_stopped=outcome.stopped,
            n_constraints=model.n_constraints,
            n_nonzeros=model.n_nonzeros,
        )
        if not infos:
            return self._cart_result(start, stats, deadline, "before the first solve")
        self._record_solve(stats, infos[-1])
        stats["solve_time"] = sum(info.solve_time for info in infos)
        stats["solver_killed"] = any(info.killed for info in infos)
        stats["milp_bound"] = outcome.bound
        if infos[-1].objective is not None:
            stats["milp_errors"] = infos[-1].objective
        lower_bound = self._bound_to_lb(outcome.bound, model)

        tree, err = start.tree, start.errors
        stats["returned"] = "cart"
        if outcome.tree is not None and outcome.errors < start.errors:
            splits = to_splits(model.data, outcome.tree)
            tree = tree_of_splits(self.max_depth, splits, X, y, n_classes)
            err = int(np.sum(tree.predict(X) != y))
            stats["returned"] = "milp"
        optimal = self._proves(float(err), err, outcome.bound, model)
        points = [start.point, *outcome.points]
        points = [
            (at, value, None if low is None else self._bound_to_lb(low, model))
            for at, value, low in points
        ]
        stats["anytime"] = anytime_trace(
            points, objective=err, bound=lower_bound, end=solved_at
        )
        # "time limit": the loop stopped with too little time left for
        # another master solve, which can be before the deadline itself
        timed_out = (
            deadline.expired()
            or outcome.stopped == "time limit"
            or any(info.timed_out for info in infos)
        )
        if not optimal and lower_bound is not None and math.isfinite(err):
            stats["mip_gap"] = max(0.0, (err - lower_bound) / max(err, 1e-10))
        return self._result(
            tree, err, float(err), lower_bound, optimal, timed_out, stats, infos[-1]
        )
