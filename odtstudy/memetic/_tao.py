"""TAO: Tree Alternating Optimization for axis-aligned trees (methods.md §4).

The core, :func:`tao_refine`, works on a :class:`HeapTree` and on weighted data,
so TMO can run it on a bootstrap sample given as multiplicities.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy._limits import MAX_COMPLETE_DEPTH
from odtstudy.base import BaseTreeClassifier, FitResult
from odtstudy.cart import tree_from_sklearn
from odtstudy.memetic._heap import LEAF, MISSING, UNSET, HeapTree, level_positions
from odtstudy.tree import Tree

__all__ = ["TAOClassifier", "TAOResult", "best_split", "tao_refine"]


# --------------------------------------------------------------------------
# The reduced problem of a decision node
# --------------------------------------------------------------------------
def best_split(X, to_left, weight, eps=0.0):
    """Exact weighted 0/1 minimiser of a decision node's reduced problem.

    Parameters
    ----------
    X : ndarray of shape (m, p)
        The care points.
    to_left : ndarray of bool, shape (m,)
        Pseudo-label: True when sending the point left is correct.
    weight : ndarray of float, shape (m,)
    eps : float, default=0.0
        Costs within ``eps`` of the minimum count as ties.

    Returns
    -------
    feature : int
    threshold : float
        ``-inf`` (all points right), a midpoint between two consecutive
        distinct values, or ``+inf`` (all points left).
    cost : float
        Weight of the points sent to the wrong side.
    costs : ndarray of shape (m + 1, p)
        Cost of every candidate, ascending thresholds in each column
        (``inf`` for impossible candidates, i.e. equal consecutive values).

    Notes
    -----
    Ties go to the lowest feature index, then to the lowest threshold. One
    sort per feature: ``O(p m log m)``.
    """
    m, p = X.shape
    w_left = np.where(to_left, weight, 0.0)
    delta = weight - 2.0 * w_left  # W_R - W_L of each point
    start = float(w_left.sum())  # cost at -inf: every L-labelled point is wrong
    order = np.argsort(X, axis=0)  # ties need no order: only group ends count
    values = np.take_along_axis(X, order, axis=0)
    after = start + np.cumsum(delta[order], axis=0)  # cost once rows 0..k are left
    costs = np.full((m + 1, p), np.inf)
    costs[0] = start
    if m > 1:
        distinct = values[1:] != values[:-1]
        costs[1:m] = np.where(distinct, after[:-1], np.inf)
    costs[m] = after[-1]
    best = float(costs.min())
    ties = costs <= best + eps
    flat = int(np.argmax(ties.T.ravel()))  # column-major: lowest j, then lowest tau
    feature, row = divmod(flat, m + 1)
    if row == 0:
        threshold = -np.inf
    elif row == m:
        threshold = np.inf
    else:
        a, b = values[row - 1, feature], values[row, feature]
        threshold = (a + b) / 2.0
        if not a <= threshold < b:  # midpoint rounded onto b
            threshold = float(a)
    return int(feature), float(threshold), best, costs


def _split_cost(X, to_left, weight, feature, threshold):
    goes_left = X[:, feature] <= threshold
    return float(weight[goes_left != to_left].sum())


# --------------------------------------------------------------------------
# TAO iterations
# --------------------------------------------------------------------------
@dataclass
class TAOResult:
    """What :func:`tao_refine` returns.

    Attributes
    ----------
    tree : HeapTree
        The refined tree (a new object).
    objective : float
        Weighted misclassifications of ``tree`` on the data TAO ran on.
    initial_objective : float
    n_iter : int
        Iterations run (complete or interrupted).
    n_updates : int
        Node parameters changed over the run.
    history : list of float
        Objective at the start and after every iteration.
    level_history : list of float
        Objective after every depth level (only when requested).
    timed_out : bool
        The deadline interrupted the run.
    converged : bool
        An iteration ended with no change (or a decrease within ``tol``).
    """

    tree: HeapTree
    objective: float
    initial_objective: float
    n_iter: int = 0
    n_updates: int = 0
    history: list = field(default_factory=list)
    level_history: list = field(default_factory=list)
    timed_out: bool = False
    converged: bool = False


def _objective(heap, X, y, w):
    return float(w[heap.predict(X) != y].sum())


def _majority(y, w, n_classes):
    return np.bincount(y, weights=w, minlength=n_classes)


def _label_unset_leaves(heap, X, y, w, n_classes):
    """Give every leaf without a class the weighted majority of its rows.

    An empty leaf gets the majority class of the whole data (it only matters
    for the loss of hypothetical routings; dead branches are pruned later).
    """
    unset = np.flatnonzero((heap.feature == LEAF) & (heap.label == UNSET))
    if unset.size == 0:
        return
    overall = int(np.argmax(_majority(y, w, n_classes)))
    leaf = heap.apply(X)
    for pos in unset:
        rows = leaf == pos
        if rows.any():
            heap.label[pos] = int(np.argmax(_majority(y[rows], w[rows], n_classes)))
        else:
            heap.label[pos] = overall


def _update_level(heap, X, y, w, n_classes, level, eps):
    """Optimise every node at ``level`` (they have disjoint reduced sets)."""
    path, _ = heap.route(X)
    at = path[level]
    n_changed = 0
    for pos in level_positions(level):
        f = heap.feature[pos]
        if f == MISSING:
            continue
        rows = np.flatnonzero(at == pos)
        if rows.size == 0:  # dead node: skipped
            continue
        if f == LEAF:
            counts = _majority(y[rows], w[rows], n_classes)
            current = heap.label[pos]
            if counts[current] >= counts.max() - eps:
                continue
            heap.label[pos] = int(np.argmax(counts))
            n_changed += 1
            continue
        Xr, yr = X[rows], y[rows]
        wrong_left = heap.label[heap.descend(Xr, np.full(rows.size, 2 * pos + 1))] != yr
        wrong_right = (
            heap.label[heap.descend(Xr, np.full(rows.size, 2 * pos + 2))] != yr
        )
        care = wrong_left != wrong_right
        if not care.any():
            continue
        Xc, wc = Xr[care], w[rows[care]]
        to_left = ~wrong_left[care]
        feature, threshold, best, _ = best_split(Xc, to_left, wc, eps)
        current = _split_cost(Xc, to_left, wc, int(f), heap.threshold[pos])
        if current <= best + eps:  # the current split is optimal: keep it
            continue
        heap.feature[pos] = feature
        heap.threshold[pos] = threshold
        n_changed += 1
    return n_changed


def prune_dead_branches(heap, X):
    """Replace every branch with an empty child by its other child (in place).

    A child is empty when no row of ``X`` reaches it; training predictions are
    unchanged.
    """
    while True:
        path, _ = heap.route(X)
        counts = np.bincount(path[path >= 0], minlength=heap.n_positions)
        for pos in np.flatnonzero(heap.feature >= 0):
            left, right = 2 * pos + 1, 2 * pos + 2
            if counts[left] == 0 or counts[right] == 0:
                heap.move_subtree(right if counts[left] == 0 else left, int(pos))
                break
        else:
            return heap


def collapse_pure_branches(heap):
    """Turn a branch whose leaves all predict one class into a leaf (in place).

    Predictions are unchanged for every input.
    """
    for level in range(heap.depth - 1, -1, -1):
        for pos in level_positions(level):
            if heap.feature[pos] < 0:
                continue
            left, right = 2 * pos + 1, 2 * pos + 2
            if (
                heap.feature[left] == LEAF
                and heap.feature[right] == LEAF
                and heap.label[left] == heap.label[right]
            ):
                heap.make_leaf(pos, int(heap.label[left]))
    return heap


def tao_refine(
    heap,
    X,
    y,
    n_classes,
    sample_weight=None,
    *,
    max_iter=20,
    tol=0.0,
    deadline=None,
    prune=True,
    collapse=False,
    record_levels=False,
):
    """Run TAO on a fixed-structure tree.

    Parameters
    ----------
    heap : HeapTree
        Initial tree (not modified). Leaves with ``UNSET`` labels get the
        weighted majority of their rows first.
    X : ndarray of shape (n, p)
    y : ndarray of int, shape (n,)
        Class indices in ``[0, n_classes)``.
    n_classes : int
    sample_weight : ndarray of shape (n,), default=None
        Weights ``w_i`` (e.g. bootstrap multiplicities); ``None`` means 1.
    max_iter : int, default=20
        Maximum number of iterations (one iteration visits every depth level
        once, deepest first).
    tol : float, default=0.0
        Stop when an iteration lowers the objective by at most ``tol`` (with
        ``tol=0`` this is: when an iteration changes nothing).
    deadline : Deadline, default=None
        Checked before every depth level (:class:`odtstudy._deadline.Deadline`).
    prune : bool, default=True
        Remove dead branches at the end (:func:`prune_dead_branches`).
    collapse : bool, default=False
        Also collapse branches whose leaves all predict the same class.
    record_levels : bool, default=False
        Record the objective after every depth level (for tests).

    Returns
    -------
    TAOResult
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    w = (
        np.ones(len(y))
        if sample_weight is None
        else np.asarray(sample_weight, dtype=np.float64)
    )
    eps = 1e-9 * max(1.0, float(w.sum()))
    heap = heap.copy()
    _label_unset_leaves(heap, X, y, w, n_classes)
    objective = _objective(heap, X, y, w)
    result = TAOResult(heap, objective, objective, history=[objective])
    if record_levels:
        result.level_history.append(objective)
    for _ in range(max_iter):
        n_changed = 0
        for level in range(heap.depth, -1, -1):
            if deadline is not None and deadline.expired():
                result.timed_out = True
                break
            n_changed += _update_level(heap, X, y, w, n_classes, level, eps)
            if record_levels:
                result.level_history.append(_objective(heap, X, y, w))
        result.n_iter += 1
        result.n_updates += n_changed
        new_objective = _objective(heap, X, y, w) if n_changed else objective
        result.history.append(new_objective)
        decrease = objective - new_objective
        objective = new_objective
        if result.timed_out:
            break
        if n_changed == 0 or decrease <= tol:
            result.converged = True
            break
    if prune:
        prune_dead_branches(heap, X)
    if collapse:
        collapse_pure_branches(heap)
    result.tree = heap
    result.objective = objective
    return result


# --------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------
class TAOClassifier(BaseTreeClassifier):
    """Tree Alternating Optimization of an axis-aligned tree (0/1 loss).

    Starting from an initial tree (CART by default), TAO repeatedly visits
    the depth levels from the leaves up to the root. A leaf takes the
    (weighted) majority class of the points reaching it. A decision node
    solves its *reduced problem* exactly: over the care points (those for
    which only one of the two child subtrees classifies correctly), the
    feature and threshold sending most weight to its correct side, found by
    one sorted sweep per feature. The training error never increases; the
    structure never grows.

    Parameters
    ----------
    max_depth : int, default=3
        Depth of the CART tree grown as the starting point; an ``initial``
        tree must not be deeper. At most 20 (TAO stores the complete tree:
        ``2**(max_depth + 1)`` node slots).
    initial : "cart" or Tree, default="cart"
        The starting tree: scikit-learn's CART of depth ``max_depth``
        (``random_state`` passed on), or a :class:`~odtstudy.tree.Tree`
        whose ``label`` holds class indices of the encoded ``y`` (index into
        ``classes_``).
    max_iter : int, default=20
        Maximum number of TAO iterations (0 returns the initial tree, pruned).
    tol : float, default=0.0
        Stop when an iteration lowers the training error by at most ``tol``.
    time_limit : float, default=None
        Seconds; checked before every depth level. ``None`` means no limit.
    random_state : int, RandomState instance or None, default=None
        Passed to CART (it breaks ties between equally good splits).

    Attributes
    ----------
    tree_ : Tree
        The refined tree, dead branches pruned and branches whose leaves all
        predict the same class collapsed.
    classes_ : ndarray
    objective_ : float
        Training misclassifications (weighted when ``sample_weight`` is given).
    lower_bound_ : None
    optimal_ : bool
        Always False: TAO is a local search.
    status_ : str
        ``"feasible"``, or ``"timeout"`` when the time limit stopped it.
    fit_time_ : float
    n_iter_ : int
        TAO iterations run.
    stats_ : dict
        ``initial_objective``, ``n_iter``, ``n_updates``, ``converged``,
        ``history`` (training error before and after each iteration),
        ``n_nodes``, ``n_leaves``.

    See Also
    --------
    TMOClassifier : memetic search using TAO as local search.

    Notes
    -----
    Nodes of one depth have disjoint reduced sets, so a level is optimised
    node by node on one routing. Tie rules: a leaf keeps its class and a
    node its split when they are among the best; otherwise the lowest class
    index, then lowest feature index and lowest threshold win. Thresholds
    are midpoints of the care points' values; a node whose best move is to
    send every care point one way becomes a dead branch, pruned at the end.

    References
    ----------
    M. Á. Carreira-Perpiñán, P. Tavallali. *Alternating Optimization of
    Decision Trees, with Application to Learning Sparse Oblique Trees.*
    NeurIPS 2018.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from odtstudy.memetic import TAOClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> tao = TAOClassifier(max_depth=2, random_state=0).fit(X, y)
    >>> tao.objective_ <= 6.0
    True
    """

    _parameter_constraints = {
        **BaseTreeClassifier._parameter_constraints,
        "max_depth": [Interval(Integral, 1, MAX_COMPLETE_DEPTH, closed="both")],
        "initial": [StrOptions({"cart"}), Tree],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        initial="cart",
        max_iter=20,
        tol=0.0,
        time_limit=None,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.initial = initial
        self.max_iter = max_iter
        self.tol = tol
        self.time_limit = time_limit
        self.random_state = random_state

    def _initial_tree(self, X, y, sample_weight):
        n_classes = len(self.classes_)
        if isinstance(self.initial, Tree):
            tree = self.initial
            if tree.depth > self.max_depth:
                raise ValueError(
                    f"the initial tree has depth {tree.depth} > max_depth="
                    f"{self.max_depth}"
                )
            used = tree.feature[tree.feature >= 0]
            if used.size and used.max() >= X.shape[1]:
                raise ValueError(
                    f"the initial tree tests feature {int(used.max())} but X has "
                    f"{X.shape[1]} features"
                )
            heap = HeapTree.from_tree(tree)
            bad = (heap.label < 0) | (heap.label >= n_classes)
            heap.label[bad] = UNSET
            return heap
        sk = DecisionTreeClassifier(
            max_depth=self.max_depth, random_state=self.random_state
        ).fit(X, y, sample_weight=sample_weight)
        tree = tree_from_sklearn(sk.tree_, X, y, n_classes, sample_weight)
        return HeapTree.from_tree(tree)

    def _fit(self, X, y, sample_weight):
        deadline = self._fit_deadline()
        heap = self._initial_tree(X, y, sample_weight)
        result = tao_refine(
            heap,
            X,
            y,
            len(self.classes_),
            sample_weight,
            max_iter=self.max_iter,
            tol=self.tol,
            deadline=deadline,
            prune=True,
            collapse=True,
        )
        tree = result.tree.to_tree(X, y, len(self.classes_), sample_weight)
        self.n_iter_ = result.n_iter
        return FitResult(
            tree=tree,
            objective=result.objective,
            lower_bound=None,
            optimal=False,
            status="timeout" if result.timed_out else "feasible",
            stats={
                "initial_objective": result.initial_objective,
                "n_iter": result.n_iter,
                "n_updates": result.n_updates,
                "converged": result.converged,
                "history": [float(v) for v in result.history],
                "n_nodes": tree.node_count,
                "n_leaves": tree.n_leaves,
            },
        )
