"""The DL8.5 estimator (scikit-learn interface over the Cython search core)."""

from __future__ import annotations

import numpy as np

from odtstudy._cost_matrix import check_cost_matrix, cost_family
from odtstudy.base import BaseTreeClassifier
from odtstudy.dl85.engine._class_loss import solve_class_loss
from odtstudy.dl85.engine._engine import _pack_classes
from odtstudy.dl85.engine._losses import checked_fast
from odtstudy.dl85.engine._numeric_fit import THRESHOLDS_CONSTRAINT, NumericInputMixin
from odtstudy.dl85.estimators._options import (
    MAX_DEPTH_LIMIT,
    MAX_MIN_SUP,
    SEARCH_CONSTRAINTS,
    SearchOptionsMixin,
)

__all__ = ["MAX_DEPTH_LIMIT", "MAX_MIN_SUP", "DL85Classifier", "_pack_classes"]


def _integral(sample_weight) -> bool:
    """True when there are no weights or all of them are whole numbers."""
    if sample_weight is None:
        return True
    w = np.asarray(sample_weight, dtype=np.float64)
    r = np.rint(w)
    # a positive weight that rounds to 0 (e.g. 1e-300) is not a count of 0
    return bool(np.all((np.abs(w - r) <= 1e-9) & ((r > 0) | (w == 0))))


def _replicable(sample_weight) -> bool:
    """Whether integer weights are applied by repeating rows: whole numbers
    whose total keeps the repeated data small."""
    n = len(sample_weight)
    return _integral(sample_weight) and float(np.sum(sample_weight)) <= 8 * n + 100_000


def _worded_as_error(result):
    """``result`` with its reason speaking of the error (the classifier's
    objective) instead of the loss."""
    result.reason = result.reason.replace("loss", "error")
    return result


class DL85Classifier(NumericInputMixin, SearchOptionsMixin, BaseTreeClassifier):
    """Optimal classification tree of bounded depth by DL8.5.

    DL8.5 (Aglin, Nijssen and Schaus, AAAI 2020) is a depth-first
    branch-and-bound search over itemsets (the paths of the tree) with a
    cache of itemsets, a hierarchical upper bound and lower bounds stored
    for itemsets searched without success. This implementation adds the
    refinements of MurTree (Demirović et al., JMLR 2022): a specialised
    depth-2 solver, the similarity lower bound, dynamic ordering of the two
    children and the strong infeasibility bound. The search runs in C
    (Cython) on bitsets.

    The tree minimises the number of misclassified training rows among all
    trees of depth at most ``max_depth`` whose leaves hold at least
    ``min_sup`` rows.

    Parameters
    ----------
    max_depth : int, default=3
        Maximum depth of the tree (a single leaf has depth 0).
    min_sup : int, default=1
        Minimum number of training rows in each leaf, at most ``2**31 - 1``
        (a C int in the search core). A value above half the rows leaves
        the single leaf as the only tree.
    time_limit : float, default=None
        Seconds. At the limit the best tree found so far is returned and
        ``optimal_`` is False (anytime search). ``None``: no limit. With a
        limit, a search that has not ended after 1 s (or 5 % of the limit)
        builds a greedy tree (each node split on the root of its optimal
        depth-2 tree), improves it by limited-discrepancy passes (the
        candidate splits of highest information gain first) while they find
        better trees, for at most as long again, and starts again with the
        best tree's loss as its bound;
        when it has not ended by 90 % of the limit, passes spend the last
        tenth improving the tree it returns. The optimum is the same as
        without a limit; the tree may be another optimal one.
    max_error : float, default=None
        Initial upper bound: only trees with error strictly below it are
        searched. When none exists the fit still succeeds, ``tree_`` is
        ``None``, ``status_`` is ``"infeasible"`` (a proof) and ``predict``
        raises; when ``time_limit`` stops the search before it finds one,
        ``tree_`` is ``None`` and ``status_`` is ``"timeout"``.
    branching : {"data", "asc", "desc"}, default="data"
        Order in which the features are tried at each node: column order, or
        increasing / decreasing information gain on the node's rows.
    use_infeasibility_lb : bool, default=True
        Store a lower bound for itemsets searched without finding a tree
        under their upper bound (the strong bound of MurTree). ``False``
        reproduces DL8.5's "no partial solutions" ablation.
    use_similarity_lb : bool, default=True
        Similarity lower bound from recently solved covers. Only valid for
        ``min_sup=1``; switched off automatically otherwise.
    use_depth2_solver : bool, default=True
        Solve subtrees of depth at most 2 from item and item-pair counts.
    cache : {"trie", "hash"}, default="trie"
        Cache of itemsets: a trie (as in DL8.5) or a hash table.
    algorithm : {"dl85", "dl8"}, default="dl85"
        ``"dl8"`` runs plain DL8 (Nijssen and Fromont 2007): no upper bound
        passed to children and no stored lower bounds, similarity bound,
        depth-2 solver or dynamic ordering.
    random_state : None, int or RandomState, default=None
        Unused (the search is deterministic); accepted for a uniform
        interface across learners.
    fast_error_function : callable, default=None
        Custom leaf loss ``f(class_weights) -> (loss, label)`` (as in
        PyDL8.5): called with the per-class supports of a leaf (weighted by
        ``sample_weight`` when given), it returns the leaf's non-negative
        loss and the index of the class it predicts. ``objective_`` is then
        the sum of these losses. The search calls it once per distinct
        vector of class supports, and prices the candidate leaves of a
        depth-2 subproblem in one batch: a function with the attribute
        ``batched = True`` gets the batch as one 2-D array (a leaf per row)
        and returns ``(losses, labels)``, one call per batch; others are
        called once per leaf. For a cost matrix, ``cost_matrix`` does the
        same in C.
    cost_matrix : array-like of shape (n_classes, n_classes), default=None
        Cost-sensitive classification: ``cost_matrix[p, c]`` (finite,
        non-negative) is the cost of predicting class ``p`` (index into
        ``classes_``) for a row of class ``c``. Each leaf predicts its
        cheapest class and the tree minimises the total (weighted) cost;
        ``objective_`` is that cost. The zero-one matrix ``1 - eye`` gives
        the misclassification. Not with ``fast_error_function``.
    max_cache_size : int, default=None
        Maximum number of live cache entries (bounded cache of Aglin et al.,
        2022). When inserting a path would exceed it, part of the cache is
        wiped; wiped nodes of the optimal tree are re-solved after the search
        ("reconstitution"), so the tree stays optimal. ``None``: unbounded.
        A bound smaller than the paths under evaluation need
        (``1 + max_depth * (max_depth + 1) / 2`` entries for the trie,
        ``max_depth + 1`` for the hash table) raises a ``ValueError``, and
        so does one above ``2**31 - 2`` (entry ids are 32-bit). Memory is
        allocated as entries are created, not from the bound.
    wipe_factor : float, default=0.5
        Fraction of ``max_cache_size`` freed by each wipe, in (0, 1].
    wipe_strategy : {"reuses", "descendants", "remaining_depth", "all_non_useful"}, \
            default="reuses"
        Which entries a wipe deletes first (entries on a path under
        evaluation or in the current best tree are never deleted): the
        least reused ones (lookups that returned them), those with the
        fewest descendant paths in the cache, those of smallest remaining
        depth (the cheapest to solve again), or every other entry. One
        meaning in every cache (``odtstudy.dl85.engine._cache_policy``).
        ``"descendants"`` is for 0/1 data only: with ``thresholds`` it
        raises a ``ValueError`` (the numeric search's box cache has no
        links from an entry to its descendants).
    thresholds : {"all"} or int, default=None
        Fit numeric features directly. ``None``: ``X`` must be 0/1 (the
        bitset search). ``"all"``: every midpoint between two consecutive
        distinct training values of a column is a candidate threshold; an
        integer ``k``: at most ``k`` per column, the ones
        ``Binarizer(max_thresholds=k)`` keeps (the optimum is then relative
        to them). Thresholds are chosen on the rows of positive weight (a
        row of weight 0 is as if removed). The tree tests ``x[feature] <= threshold``
        with real thresholds on the original columns. Many thresholds per
        column go to the numeric search (``_numeric.pyx``), which exploits
        the order of each column: it sweeps the sorted values of a node once
        per feature, and prunes whole intervals of thresholds with bounds
        that carry from a threshold to its neighbours; its cache is keyed by
        the box of each subproblem (``cache`` is not used) and its
        similarity bound is that neighbour bound. Few thresholds (at most
        16 per varying column on average and 2000 in all) go to the bitset
        search as threshold columns, as do 0/1 data; both give the same
        optimum. Every leaf loss works with thresholds (the misclassification,
        weights, ``cost_matrix``, ``fast_error_function``; the numeric search
        prices a Python loss in batches, but without its interval bounds,
        which need a loss that never grows when rows are removed).
        ``algorithm="dl8"`` and ``branching`` other than ``"data"`` are not
        available with thresholds (the numeric search tries features by
        increasing loss of their best single split).
    n_jobs : int, default=None
        Threads of the search (``None``: 1; ``-1``: one per CPU, as in
        scikit-learn); at most four per usable CPU (a larger ``n_jobs``
        runs that many, with a ``UserWarning``; ``stats_["threads"]`` says
        how many ran). The threads share one cache; each root candidate (a
        0/1 feature, or a numeric feature with its thresholds) goes to the
        first thread free to take it, and every thread searches under the
        best tree any of them has found. The loss, the lower bound and
        ``optimal_`` are those of ``n_jobs=1``; among several optimal trees,
        which one is returned may depend on the threads' timing. Needs an
        unbounded cache (``max_cache_size=None``); the first descent and
        the limited-discrepancy passes of a time-limited search run on one
        thread.

    Attributes
    ----------
    tree_ : Tree or None
        The tree found (``None`` when ``max_error`` excluded every tree).
    classes_ : ndarray of shape (n_classes,)
    objective_ : float or None
        Training misclassifications of ``tree_`` (their total weight with
        ``sample_weight``; the sum of the leaf losses with
        ``fast_error_function``).
    lower_bound_ : float
        Proven lower bound on the optimal error.
    optimal_ : bool
        True when ``tree_`` is proven optimal.
    status_ : {"optimal", "timeout", "infeasible"}
        "optimal": ``tree_`` is proven optimal; "timeout": the time limit
        stopped the search (``tree_`` is the best found, or ``None``);
        "infeasible": proven that no tree has error below ``max_error``.
    fit_time_ : float
    stats_ : dict
        ``cache_entries``, ``itemsets_explored`` (nodes searched past the
        cache), ``cache_hits``, ``depth2_calls`` (of which
        ``depth2_by_difference`` counted a child of a depth-3 node as its
        parent's counts minus its sibling's), ``similarity_prunes``,
        ``timeout`` and ``kernel_isa`` (instruction set of the depth-2
        kernels: ``"avx512"``, ``"avx2"``, ``"popcnt"`` or ``"baseline"``).
        Cache memory: ``cache_bytes`` (bytes held by the cache's arrays at
        the end of the search; they never shrink, so this is their peak),
        ``cache_entries_created`` (including re-created ones),
        ``cache_live_entries`` (at the end), ``cache_peak_entries`` (never
        above ``max_cache_size``), ``cache_wipes``, ``cache_entries_wiped``
        and ``reconstitution_ms`` (time spent rebuilding wiped nodes of the
        optimal tree; 0 when unbounded). ``anytime``: the root's trace, a
        list of ``(seconds since fit started, best error, lower bound)``
        points recorded each time the incumbent or the bound improved (for
        every objective). The numeric search reports
        ``thresholds_evaluated`` and ``thresholds_pruned`` (split positions
        evaluated, and pruned by the interval and neighbour bounds),
        ``root_seeds_tried`` (features whose best single split the root
        tried as a full subtree first, from depth 3 on),
        ``n_thresholds`` and the cache counters; its bounded cache
        re-solves wiped nodes without ``reconstitution_ms``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` has string column names.

    Notes
    -----
    Integer ``sample_weight`` values make a row of weight ``w`` count ``w``
    times (the same tree as duplicating rows), as long as the repeated data
    stays small (total weight at most ``8 * n_samples + 100000``). Other
    weights minimise the weighted error (total weight minus the largest
    class weight per leaf): the core then sums the weights of the set bits
    of each cover, runs an exact weighted depth-2 solver (``_weighted.pyx``)
    and a weighted similarity bound; ``min_sup`` counts rows of positive
    weight, and ``tree_.value`` holds class weights. Weighted fits cost
    more than unweighted ones: the weighted solver adds one weight per row
    where the unweighted one counts 64 rows per instruction
    (``_weighted.pyx``).

    See Also
    --------
    odtstudy.datasets.Binarizer : turns numeric / categorical data into 0/1.

    References
    ----------
    .. [1] G. Aglin, S. Nijssen, P. Schaus. "Learning optimal decision trees
       using caching branch-and-bound search", AAAI 2020.
    .. [2] E. Demirović et al. "MurTree: optimal decision trees via dynamic
       programming and search", JMLR 23, 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from odtstudy.dl85 import DL85Classifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    >>> y = np.array([0, 1, 1, 0])
    >>> clf = DL85Classifier(max_depth=2).fit(X, y)
    >>> clf.objective_, clf.optimal_
    (0.0, True)
    """

    _requires_binary = True
    _exact = True

    @classmethod
    def objective_family(cls, params) -> str:
        """``"cost@..."`` with a cost matrix (:func:`cost_family`),
        ``"custom"`` with a user loss, else the misclassification."""
        if params.get("cost_matrix") is not None:
            return cost_family(params["cost_matrix"])
        if params.get("fast_error_function") is not None:
            return "custom"
        return "misclassification"

    _parameter_constraints: dict = {
        **BaseTreeClassifier._parameter_constraints,
        **SEARCH_CONSTRAINTS,
        "fast_error_function": [callable, None],
        "cost_matrix": ["array-like", None],
        "thresholds": THRESHOLDS_CONSTRAINT,
    }

    def __init__(
        self,
        *,
        max_depth=3,
        min_sup=1,
        time_limit=None,
        max_error=None,
        branching="data",
        use_infeasibility_lb=True,
        use_similarity_lb=True,
        use_depth2_solver=True,
        cache="trie",
        algorithm="dl85",
        random_state=None,
        fast_error_function=None,
        cost_matrix=None,
        max_cache_size=None,
        wipe_factor=0.5,
        wipe_strategy="reuses",
        thresholds=None,
        n_jobs=None,
    ):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.max_error = max_error
        self.branching = branching
        self.use_infeasibility_lb = use_infeasibility_lb
        self.use_similarity_lb = use_similarity_lb
        self.use_depth2_solver = use_depth2_solver
        self.cache = cache
        self.algorithm = algorithm
        self.random_state = random_state
        self.fast_error_function = fast_error_function
        self.cost_matrix = cost_matrix
        self.max_cache_size = max_cache_size
        self.wipe_factor = wipe_factor
        self.wipe_strategy = wipe_strategy
        self.thresholds = thresholds
        self.n_jobs = n_jobs

    def _fit(self, X, y, sample_weight):
        n_classes = len(self.classes_)
        cost, fast = self._class_loss(n_classes)
        replicate = cost is None and fast is None
        cuts = self._thresholds_of(X, sample_weight)
        rows, y, weights = self._weighted_rows(y, sample_weight, replicate)
        result = solve_class_loss(
            X,
            y,
            n_classes,
            weights,
            self._search_options(),
            cost=cost,
            fast=fast,
            cuts=cuts,
            rows=rows,
        )
        return _worded_as_error(result)

    def _class_loss(self, n_classes):
        """The checked ``(cost_matrix, fast_error_function)``, at most one set."""
        if self.cost_matrix is not None:
            if self.fast_error_function is not None:
                raise ValueError(
                    "give either cost_matrix or fast_error_function, not both "
                    "(a cost matrix is a fast_error_function computed in C)"
                )
            return check_cost_matrix(self.cost_matrix, n_classes), None
        if self.fast_error_function is not None:
            return None, checked_fast(self.fast_error_function, n_classes)
        return None, None

    @classmethod
    def _weighted_rows(cls, y, sample_weight, replicate):
        """The rows to search (indices into ``X``, None: every row), their
        labels and their weights (None: unit weights). With ``replicate``
        (misclassification), whole weights count as repeated rows;
        otherwise the rows of positive weight keep their weights (a row of
        weight 0 is dropped, as replication does)."""
        rows, weights = None, None
        if sample_weight is not None and replicate and _replicable(sample_weight):
            rows = cls._replicate(sample_weight)
        elif sample_weight is not None:
            rows = np.flatnonzero(sample_weight > 0)
            weights = sample_weight[rows]
        if rows is not None:
            y = y[rows]
        if len(y) == 0:
            raise ValueError("all sample weights are zero: nothing to fit")
        return rows, y, weights

    @staticmethod
    def _replicate(sample_weight):
        """Integer sample weights as repeated rows (fractional ones: issue
        4): each row's index, repeated its weight's number of times."""
        w = np.asarray(sample_weight, dtype=np.float64)
        counts = np.rint(w)
        if np.any(np.abs(w - counts) > 1e-9):
            raise ValueError(
                "DL85Classifier only supports integer sample weights for now "
                "(each row counts that many times)"
            )
        counts = counts.astype(np.int64)
        return np.repeat(np.arange(len(w)), counts)
