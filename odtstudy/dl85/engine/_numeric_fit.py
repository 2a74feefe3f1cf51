"""Numeric features for DL8.5: candidate thresholds, ranks, and the search.

``thresholds="all"`` makes every midpoint between consecutive distinct
training values of a column a candidate threshold; an integer ``k`` keeps
at most ``k`` of them per column, the ones the
:class:`~odtstudy.datasets.Binarizer` with ``max_thresholds=k`` keeps. The
search (``_numeric.pyx``) sees each column as threshold ranks; its tree
comes back as a :class:`~odtstudy.dl85.engine._engine.SearchOutput` with the
column indices and real thresholds, so the estimators build their ``Tree``
and ``FitResult`` through the same path as on 0/1 data. The leaf objective
is built by the same ``make_objective`` as the 0/1 search's, from the same
arguments and options (:func:`numeric_search` mirrors
:func:`_engine.search`): every objective works on both kinds of data.
Estimators reach it through :func:`~odtstudy.dl85.engine._door.fit_search`, which
decides between it and the 0/1 search (:func:`bitset_encodes`).
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from odtstudy._deadline import Deadline
from odtstudy.base import as_float64
from odtstudy.datasets._binarizer import _midpoints, _quantile_thresholds
from odtstudy.dl85.engine._engine import PURITY_RTOL, SearchOutput, search_options
from odtstudy.dl85.engine._numeric import NumericSearcher
from odtstudy.dl85.engine._objective import make_objective

__all__ = [
    "BITSET_MAX_THRESHOLDS",
    "THRESHOLDS_CONSTRAINT",
    "NumericInputMixin",
    "candidate_thresholds",
    "numeric_search",
]

#: ``_parameter_constraints`` entry of ``thresholds``.
THRESHOLDS_CONSTRAINT = [
    StrOptions({"all"}),
    Interval(Integral, 1, None, closed="left"),
    None,
]

#: Largest number of classes (statistics per row) the numeric search takes.
MAX_STATS = 64

#: Options of the 0/1 search that the numeric search does not have.
_UNSUPPORTED = {
    "algorithm": ("dl85", "plain DL8 has no numeric search"),
    "branching": (
        "data",
        "the numeric search orders features by their best single split",
    ),
}


class NumericInputMixin:
    """``thresholds=None`` keeps 0/1 input; otherwise ``fit`` takes numbers."""

    _binary_hint = (
        ", or pass thresholds='all' (every midpoint) or an integer k (at most "
        "k thresholds per column) to fit the numeric columns directly"
    )

    def _binary_input(self) -> bool:
        return self._requires_binary and self.thresholds is None

    def _thresholds_of(self, X, sample_weight=None):
        """The candidate thresholds of ``X``'s columns, or None when ``X``
        goes to the bitset search as it is (no ``thresholds``, or 0/1 data).

        They are chosen on the rows of positive weight, each once: a row of
        weight 0 is as if removed, and a whole weight is as if the row were
        repeated for ``"all"`` (as scikit-learn's estimators do); ``k``
        quantile thresholds do not weigh the rows."""
        if self.thresholds is None:
            return None
        if isinstance(self.thresholds, bool):
            raise ValueError(
                f"thresholds={self.thresholds!r}: give 'all' or a number of "
                "thresholds per column (an int >= 1), or None for 0/1 data"
            )
        check_numeric_options(self._search_options())
        X = as_float64(
            X,
            f"thresholds={self.thresholds!r} needs numeric columns, but X holds "
            "non-numbers",
            "encode categorical columns first (one-hot, or "
            "odtstudy.datasets.Binarizer) or drop them",
        )
        if np.isin(X, (0, 1)).all():
            return None
        if sample_weight is not None:
            X = X[np.asarray(sample_weight) > 0]
        return candidate_thresholds(X, self.thresholds)

    @classmethod
    def study_data(cls, params) -> str:
        """The data a study feeds it: raw numbers when given ``thresholds``."""
        return "binary" if params.get("thresholds") is None else "numeric"


def candidate_thresholds(X: np.ndarray, thresholds) -> list:
    """The sorted candidate thresholds of each column of ``X``."""
    out = []
    for j in range(X.shape[1]):
        column = X[:, j]
        if thresholds == "all":
            out.append(_midpoints(column))
        else:
            out.append(_quantile_thresholds(column, int(thresholds)))
    return out


#: Numeric data with at most this many candidate thresholds in all, and at
#: most ``BITSET_MAX_MEAN`` per varying column on average, is encoded as
#: threshold columns (``x > t``) for the bitset search: with few thresholds
#: per column its depth-2 solver beats the numeric search, whose passes cost
#: the same whatever the number of thresholds. Both find the same optimum.
BITSET_MAX_THRESHOLDS = 2000
BITSET_MAX_MEAN = 16


def threshold_columns(X: np.ndarray, cuts: list):
    """The 0/1 matrix of the tests ``x[:, j] > t`` (1: right) for every
    candidate threshold, and the function turning a tree over its columns
    back into a tree over ``X``'s columns with real thresholds."""
    columns = np.asarray([j for j, c in enumerate(cuts) for _ in c], dtype=np.int64)
    values = np.concatenate([np.asarray(c, float) for c in cuts] or [np.zeros(0)])
    B = np.ascontiguousarray(X[:, columns] > values, dtype=np.uint8)

    def decode(tree):
        split = tree.feature >= 0
        feature = tree.feature.copy()
        threshold = tree.threshold.copy()
        feature[split] = columns[tree.feature[split]]
        threshold[split] = values[tree.feature[split]]
        return tree._replace(feature=feature, threshold=threshold)

    return B, decode


def bitset_encodes(cuts: list) -> bool:
    """Whether these candidate thresholds go to the bitset search as
    threshold columns (few of them, and few per column)."""
    total = sum(len(c) for c in cuts)
    varying = sum(1 for c in cuts if len(c) > 0)
    return total <= BITSET_MAX_THRESHOLDS and total <= BITSET_MAX_MEAN * varying


def check_numeric_options(options: dict) -> None:
    """Raise a ValueError naming an option the numeric search does not take."""
    for name, (allowed, why) in _UNSUPPORTED.items():
        if options.get(name, allowed) != allowed:
            raise ValueError(
                f"{name}={options[name]!r} is not available with thresholds "
                f"(numeric features): {why}; use {name}={allowed!r}, or "
                "thresholds=None on binarised data"
            )


def _ranks(X: np.ndarray, cuts: list):
    """Threshold ranks (number of thresholds below each value) of the
    columns that have a threshold, and those columns' indices."""
    used = [j for j, c in enumerate(cuts) if len(c) > 0]
    rank = np.empty((len(used), X.shape[0]), dtype=np.int32)
    for i, j in enumerate(used):
        rank[i] = np.searchsorted(cuts[j], X[:, j], side="left")
    n_thr = np.asarray([len(cuts[j]) for j in used], dtype=np.int32)
    return rank, n_thr, used


def numeric_search(
    X,
    cuts,
    *,
    kind="error",
    y_class=None,
    n_classes=1,
    weights=None,
    y=None,
    cost=None,
    quantile=0.5,
    callback=None,
    row_stats=None,
    worst=None,
    monotone=None,
    loss_name="fast_error_function",
    stats=None,
    purity_tol=None,
    values=None,
    **options,
) -> SearchOutput:
    """Run the numeric DL8.5 search on ``X`` (float, no NaN).

    The objective arguments are those of :func:`~odtstudy.dl85.engine._engine.search`
    (the same ``Objective`` prices the leaves of both searches).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    cuts : list of ndarray
        The sorted candidate thresholds of each column
        (:func:`candidate_thresholds`).
    kind : {"error", "weighted", "cost", "squared", "absolute", "quantile", \
"py_class", "py_rows", "py_stats"}, default="error"
        The leaf objective; "error" with ``weights`` is "weighted".
    y_class : ndarray of int, default=None
        Class index of each row (class-based kinds).
    n_classes : int, default=1
    weights : ndarray of float, default=None
        Row weights (None: every row counts 1).
    y : ndarray of float, default=None
        Regression target.
    cost : ndarray of shape (n_classes, n_classes), default=None
    quantile : float, default=0.5
    callback : callable, default=None
        The Python loss: ``f(Q) -> losses`` on 2-D batches of summed
        statistics ("py_class", "py_stats"; ``batched``), ``f(rows) -> loss``
        ("py_rows").
    row_stats : ndarray of shape (n_samples, n_stats), default=None
        "py_stats": each row's additive statistics.
    worst : ndarray of shape (n_samples,), default=None
        "py_stats": each row's largest loss in a leaf (the neighbour bound).
    monotone : bool, default=None
        Python kinds: whether a subset's optimal loss is never larger (the
        interval bounds).
    loss_name : str, default="fast_error_function"
        The Python loss, as its error messages name it.
    stats : ndarray of shape (n_samples, n_stats), default=None
        The rows' statistics, when not the kind's own (the stable squared
        form: ``(w, w y, w y^2, 0)``).
    purity_tol : float, default=None
        A leaf of loss at most this is not split; None: 0 for the
        misclassification, ``1e-12`` times the total weight (the total of
        each row's largest cost for "cost") for weights, 0 in the stable
        form, and ``PURITY_RTOL`` times the root's loss as one leaf
        otherwise, as :func:`_engine.search` does.
    values : ndarray of shape (n_samples,), default=None
        ``kind="squared"`` only: each row's target, for the stable form of
        the squared error (each set of rows as its weight, mean and sum of
        squared deviations; ``stats[:, 0]`` gives the weights).
    **options
        The search options (``SEARCH_OPTIONS`` of ``_engine``, merged and
        checked by :func:`~odtstudy.dl85.engine._engine.search_options`).

    Returns
    -------
    SearchOutput
        ``feature`` holds column indices of ``X`` and ``threshold`` real
        thresholds; ``value`` each node's statistics.
    """
    clock = Deadline(None)
    opts = search_options(options)
    X = np.asarray(X, dtype=np.float64)
    if kind == "error" and weights is not None:
        kind = "weighted"
    if purity_tol is None:
        purity_tol = _class_purity_tol(kind, y_class, weights, cost)
    if kind in ("absolute", "quantile"):
        # the pinball loss does not move with y; centred, the Fenwick sums
        # of w y cancel less
        y = np.asarray(y, dtype=np.float64)
        y = y - np.median(y) if len(y) else y
    if stats is None:
        stats = _row_stats(kind, len(X), y_class, n_classes, weights, y, row_stats)
    if stats.shape[1] > MAX_STATS:
        raise ValueError(
            f"the numeric DL8.5 search takes at most {MAX_STATS} classes "
            f"(statistics per row), got {stats.shape[1]}; binarise the data and "
            "use thresholds=None"
        )
    rank, n_thr, used = _ranks(X, cuts)

    def make():
        """``(objective, searcher)`` of these rows (a thread's own)."""
        objective = make_objective(
            kind,
            np.zeros((0, 1), dtype=np.uint64),
            len(X),
            y_class=y_class,
            n_classes=n_classes,
            weights=weights,
            y=y,
            cost=cost,
            quantile=quantile,
            callback=callback,
            min_sup=int(opts["min_sup"]),
            row_stats=row_stats,
            worst=worst,
            monotone=monotone,
            bitsets=False,
            loss_name=loss_name,
        )
        # the squared error keeps its search without the neighbour bound
        neighbour = opts["use_similarity_lb"] and kind != "squared"
        return objective, NumericSearcher(
            rank,
            n_thr,
            np.ascontiguousarray(stats, dtype=np.float64),
            objective,
            int(opts["max_depth"]),
            min_sup=int(opts["min_sup"]),
            worst=objective.row_worst() if neighbour else None,
            time_limit=float(opts["time_limit"] or 0.0),
            max_cache_size=int(opts["max_cache_size"] or 0),
            wipe_factor=float(opts["wipe_factor"]),
            wipe_strategy=opts["wipe_strategy"],
            use_infeasibility_lb=bool(opts["use_infeasibility_lb"]),
            use_depth2_solver=bool(opts["use_depth2_solver"]),
            purity_tol=0.0 if purity_tol is None else float(purity_tol),
            values=values,
        )

    objective, searcher = make()
    n_jobs = int(opts["n_jobs"] or 1)
    if n_jobs > 1:
        searcher.share_root([make()[1] for _ in range(n_jobs - 1)])
    _raise_python_error(objective)
    if purity_tol is None and values is None:
        purity_tol = PURITY_RTOL * abs(searcher.root_leaf_loss())
    max_error = math.inf if opts["max_error"] is None else float(opts["max_error"])
    setup = clock.elapsed()
    result = searcher.run(max_error, purity_tol)
    _raise_python_error(objective)
    out = SearchOutput.of_run(
        result, searcher.stats(), searcher.anytime(), setup, max_error
    )
    out.stats["n_thresholds"] = int(n_thr.sum())
    if out.found:
        feature, thr, left, right, value, node_loss = searcher.tree_arrays(
            out.loss if not out.timed_out else math.inf
        )
        _raise_python_error(objective)
        out.feature = [used[f] if f >= 0 else -1 for f in feature]
        out.threshold = [
            float(cuts[used[f]][t]) if f >= 0 else -2.0 for f, t in zip(feature, thr)
        ]
        out.left, out.right = list(left), list(right)
        out.value = [list(v) for v in value]
        out.node_loss = list(node_loss)
        _trace_returned_tree(out, clock.elapsed())
    return out


def _class_purity_tol(kind, y_class, weights, cost):
    """The purity tolerance of the class-based built-in objectives (None
    for the others): 0 for counts, ``1e-12`` times the total weight, or
    the total of each row's largest cost (``cost``)."""
    if kind == "error":
        return 0.0
    if kind not in ("weighted", "cost"):
        return None
    w = np.ones(len(y_class)) if weights is None else np.asarray(weights, float)
    if kind == "cost":
        return 1e-12 * float(np.sum(w * np.asarray(cost).max(axis=0)[y_class]))
    return 1e-12 * float(np.sum(w))


def _raise_python_error(objective) -> None:
    """Re-raise the exception a Python loss raised inside the search."""
    exc = objective.pop_error()
    if exc is not None:
        raise exc


def _row_stats(kind, n, y_class, n_classes, weights, y, row_stats) -> np.ndarray:
    """Each row's statistics vector for the objective ``kind``."""
    if kind in ("error", "weighted", "cost", "py_class"):
        return class_stats(y_class, n_classes, weights)
    if kind == "squared":
        return squared_stats(y, weights)
    w = np.ones(n) if weights is None else np.asarray(weights, float)
    if kind in ("absolute", "quantile"):
        return np.column_stack([w, w * np.asarray(y, float)])
    if kind == "py_stats":
        return np.asarray(row_stats, dtype=np.float64)
    return w[:, None]


def _trace_returned_tree(out: SearchOutput, now: float) -> None:
    """After a time-out, subtrees wiped from a bounded cache are re-solved
    and may beat the incumbent they replace: the anytime trace then ends
    with the tree returned."""
    trace = out.stats.get("anytime")
    if not out.timed_out or not trace:
        return
    loss = sum(v for v, f in zip(out.node_loss, out.feature) if f < 0)
    if loss < trace[-1][1] - 1e-9 * max(1.0, abs(loss)):
        trace.append((now, loss, trace[-1][2]))


def class_stats(y_class, n_classes, weights=None) -> np.ndarray:
    """Each row's weight in its class's column, shape (n_rows, n_classes)."""
    w = np.ones(len(y_class)) if weights is None else np.asarray(weights, float)
    out = np.zeros((len(y_class), n_classes))
    out[np.arange(len(y_class)), y_class] = w
    return out


def squared_stats(y, weights=None) -> np.ndarray:
    """``(w, w y, w y^2)`` of each row."""
    w = np.ones(len(y)) if weights is None else np.asarray(weights, float)
    y = np.asarray(y, float)
    return np.column_stack([w, w * y, w * y * y])
