"""One path from data to a fitted DL8.5 model: search, then Tree and FitResult.

The DL8.5 estimators (classifier, regressor, user-defined objectives,
clustering) and the forests' pricing reach a searcher through one front
door, :func:`~odtstudy.dl85.engine._door.fit_search`, which runs :func:`search`
(0/1 data) or the numeric search with a leaf objective and the search
options (:func:`search_options`: the defaults of :data:`SEARCH_OPTIONS`,
unknown names refused). Both return arrays and a status
(:class:`SearchOutput`); :func:`fit_result` turns them into the ``Tree`` and
the ``FitResult`` the estimators store. The objective decides the leaves'
values and labels (``value_of`` / ``label_of``), nothing else does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from odtstudy._deadline import Deadline
from odtstudy.base import FitResult
from odtstudy.dl85.engine._bitset import pack_columns
from odtstudy.dl85.engine._floor import floor_values
from odtstudy.dl85.engine._objective import make_objective
from odtstudy.dl85.engine._search import Searcher
from odtstudy.tree import TreeBuilder

__all__ = [
    "SEARCH_OPTIONS",
    "SearchOutput",
    "fit_result",
    "node_rows",
    "search",
    "search_options",
    "search_quantiles",
]

#: Leaves whose loss is at most this fraction of the root leaf's are pure
#: (sums of real numbers round), for the real-valued objectives.
PURITY_RTOL = 1e-12

#: The options of the search, with their defaults (every objective takes them).
SEARCH_OPTIONS = {
    "max_depth": 3,
    "min_sup": 1,
    "time_limit": None,
    "max_error": None,
    "branching": "data",
    "use_infeasibility_lb": True,
    "use_similarity_lb": True,
    "use_depth2_solver": True,
    "cache": "trie",
    "algorithm": "dl85",
    "max_cache_size": None,
    "wipe_factor": 0.5,
    "wipe_strategy": "reuses",
    "n_jobs": 1,
}


def search_options(options: dict) -> dict:
    """The search options ``options`` over the defaults of
    :data:`SEARCH_OPTIONS`; a TypeError names any other key."""
    unknown = set(options) - set(SEARCH_OPTIONS)
    if unknown:
        raise TypeError(f"unknown search options {sorted(unknown)}")
    return {**SEARCH_OPTIONS, **options}


@dataclass
class SearchOutput:
    """What :func:`search` returns: the tree as arrays, and the outcome.

    ``feature``, ``left``, ``right`` describe the tree in preorder
    (``feature`` -1 for a leaf); ``value`` holds each node's class supports
    (class-based objectives) or row count, ``node_loss`` its loss as one
    leaf. All are empty when no tree has loss below ``max_error``.
    ``threshold`` is empty on 0/1 data (the test is ``x == 0``: left) and
    holds each node's real threshold on numeric data (``x <= t``: left).
    """

    loss: float
    lower_bound: float
    timed_out: bool
    feature: list = field(default_factory=list)
    left: list = field(default_factory=list)
    right: list = field(default_factory=list)
    value: list = field(default_factory=list)
    node_loss: list = field(default_factory=list)
    threshold: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    max_error: float = math.inf

    @classmethod
    def of_run(cls, result, stats, anytime, setup, max_error):
        """The outcome of a searcher's ``run`` (``result``: loss and lower
        bound), with its counters and its anytime trace shifted by the
        ``setup`` seconds spent before the run."""
        stats = dict(stats)
        stats["anytime"] = [(setup + t, e, b) for t, e, b in anytime]
        return cls(
            loss=float(result[0]),
            lower_bound=float(result[1]),
            timed_out=bool(stats["timeout"]),
            stats=stats,
            max_error=max_error,
        )

    @property
    def found(self) -> bool:
        return self.loss < self.max_error

    def rescale(self, factor: float) -> None:
        """Multiply every loss and bound by ``factor`` (in place)."""
        if factor == 1.0:
            return
        self.loss *= factor
        self.lower_bound *= factor
        self.max_error *= factor
        self.node_loss = [v * factor for v in self.node_loss]


def _pack_classes(y: np.ndarray, n_classes: int) -> np.ndarray:
    """Packed row masks of each class, shape (n_classes, n_words)."""
    onehot = np.zeros((len(y), n_classes), dtype=np.uint8)
    onehot[np.arange(len(y)), y] = 1
    return pack_columns(onehot)


def search(
    X,
    *,
    kind="error",
    y_class=None,
    n_classes=1,
    weights=None,
    y=None,
    cost=None,
    quantile=0.5,
    callback=None,
    purity_tol=None,
    row_stats=None,
    worst=None,
    monotone=None,
    loss_name="fast_error_function",
    **options,
) -> SearchOutput:
    """Run one DL8.5 search on the 0/1 matrix ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 features.
    kind : str, default="error"
        The leaf objective (see ``_objective.pyx``): "error", "weighted",
        "cost", "squared", "absolute", "quantile", "py_class", "py_rows".
    y_class : ndarray of int, default=None
        Class index of each row (class-based objectives).
    n_classes : int, default=1
    weights : ndarray of float, default=None
        Row weights (``None``: every row counts 1).
    y : ndarray of float, default=None
        Regression target.
    cost : ndarray of shape (n_classes, n_classes), default=None
        ``cost[p, c]``: loss of predicting p for a row of class c.
    quantile : float, default=0.5
    callback : callable, default=None
        "py_class": ``f(class_supports) -> loss``; "py_rows": ``f(rows) -> loss``
        (rows in the caller's order).
    purity_tol : float, default=None
        Leaves of loss at most this are pure (default: 0 for counts,
        ``1e-12`` times the total weight or the root leaf's loss otherwise).
    row_stats, worst, monotone, loss_name
        A user objective's statistics and declarations ("py_stats"; see
        ``_objective.Objective``), as the numeric search takes them.
    **options
        The search options of :data:`SEARCH_OPTIONS` (:func:`search_options`).

    Returns
    -------
    SearchOutput
    """
    clock = Deadline(None)
    objective = {
        "y_class": y_class,
        "n_classes": n_classes,
        "cost": cost,
        "quantile": quantile,
        "callback": callback,
        "row_stats": row_stats,
        "worst": worst,
        "monotone": monotone,
        "loss_name": loss_name,
    }
    searcher, opts = _searcher(X, options, kind, y, weights, **objective)
    if purity_tol is None and kind not in ("error", "weighted"):
        purity_tol = PURITY_RTOL * abs(searcher.root_leaf_loss())
    max_error = math.inf if opts["max_error"] is None else float(opts["max_error"])
    return _run(searcher, max_error, purity_tol, clock.elapsed())


def search_quantiles(X, *, y, quantiles, weights=None, **options) -> list:
    """One DL8.5 search of the pinball loss at several quantiles.

    The quantiles share the rows sorted by target, the packed columns and
    covers, one cache (an entry per itemset with a slot per quantile) and
    the depth-2 solver, which solves a subtree for the quantile searched
    and every later one in one pass over the feature pairs; they are
    searched one after the other, each with its own bounds. A time limit
    covers the whole search: each quantile gets an equal share of what is
    left when its turn comes.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        0/1 features.
    y : ndarray of float
    quantiles : sequence of float
        At least two distinct values in (0, 1).
    weights : ndarray of float, default=None
    **options
        The search options of :data:`SEARCH_OPTIONS` (no ``max_error``).

    Returns
    -------
    list of SearchOutput
        One per quantile, in the order given.
    """
    clock = Deadline(options.get("time_limit"))
    searcher, _ = _searcher(X, options, "quantile", y, weights, quantile=quantiles[0])
    purity = searcher.quantiles([float(t) for t in quantiles], PURITY_RTOL)
    outs = []
    for k in range(len(quantiles)):
        left = clock.remaining()
        share = 0.0 if left is None else max(left / (len(quantiles) - k), 1e-6)
        searcher.select_quantile(k, share)
        outs.append(_run(searcher, math.inf, purity[k], clock.elapsed()))
    return outs


def _searcher(X, options, kind, y, weights, *, y_class=None, n_classes=1, **objective):
    """The ``Searcher`` of :func:`search` and the options it was made with;
    ``objective``: the other arguments of ``make_objective``."""
    opts = search_options(options)
    X = np.ascontiguousarray(X, dtype=np.uint8)
    n = X.shape[0]
    if kind in ("absolute", "quantile"):
        # rows sorted by target: a cover's rows come out in target order
        perm = np.argsort(np.asarray(y, dtype=np.float64), kind="stable")
        X = np.ascontiguousarray(X[perm])
        y = np.asarray(y, dtype=np.float64)[perm]
        weights = None if weights is None else np.asarray(weights)[perm]
    cols = pack_columns(X)
    if y_class is not None:
        y_class = np.asarray(y_class, dtype=np.int64)
        cmask = _pack_classes(y_class, n_classes)
    else:
        cmask = pack_columns(np.ones((n, 1), dtype=np.uint8))
    searchers = []

    def set_floors():
        """The floor of every searcher (``_floor.floor_values``): made only
        when a search is cut short, the one use of it."""
        floor = floor_values(
            X,
            kind,
            y_class=y_class,
            n_classes=n_classes,
            weights=weights,
            y=y,
            cost=objective.get("cost"),
            quantile=objective.get("quantile", 0.5),
        )
        if floor is not None:
            for each in searchers:
                each.set_floor(floor)

    def make():
        """A searcher of these rows with its own objective (a thread's)."""
        searcher = Searcher(
            cols,
            cmask,
            n,
            int(opts["max_depth"]),
            min_sup=int(opts["min_sup"]),
            branching=opts["branching"],
            use_infeasibility_lb=bool(opts["use_infeasibility_lb"]),
            use_similarity_lb=bool(opts["use_similarity_lb"]),
            use_depth2_solver=bool(opts["use_depth2_solver"]),
            cache=opts["cache"],
            dl8=opts["algorithm"] == "dl8",
            time_limit=float(opts["time_limit"]) if opts["time_limit"] else 0.0,
            max_cache_size=int(opts["max_cache_size"] or 0),
            wipe_factor=float(opts["wipe_factor"]),
            wipe_strategy=opts["wipe_strategy"],
            objective=make_objective(
                kind,
                cols,
                n,
                y_class=y_class,
                n_classes=n_classes,
                weights=weights,
                y=y,
                min_sup=int(opts["min_sup"]),
                pair_stats=bool(opts["use_depth2_solver"]),
                **objective,
            ),
        )
        searchers.append(searcher)
        return searcher

    searcher = make()
    n_jobs = int(opts["n_jobs"] or 1)
    if n_jobs > 1:
        searcher.share_root([make() for _ in range(n_jobs - 1)])
    searcher.floor_source = set_floors
    return searcher, opts


def _run(searcher, max_error, purity_tol, setup) -> SearchOutput:
    """Run ``searcher`` (``setup``: the seconds spent before) into a
    :class:`SearchOutput` with its tree."""
    result = searcher.run(max_error, purity_tol)
    out = SearchOutput.of_run(
        result, searcher.stats(), searcher.anytime(), setup, max_error
    )
    if out.found:
        feature, left, right, value = searcher.tree_arrays()
        out.feature, out.left, out.right = list(feature), list(left), list(right)
        out.value = [list(v) for v in value]
        out.node_loss = searcher.node_losses()
    return out


def node_rows(out: SearchOutput, X) -> list:
    """Row indices (of ``X``, ascending) reaching each node of ``out``'s tree."""
    X = np.asarray(X)
    rows = [None] * len(out.feature)
    if not rows:
        return rows
    rows[0] = np.arange(X.shape[0])
    for node, f in enumerate(out.feature):
        if f >= 0:
            here = rows[node]
            if out.threshold:
                right = X[here, f] > out.threshold[node]
            else:
                right = X[here, f] == 1
            rows[out.left[node]] = here[~right]
            rows[out.right[node]] = here[right]
    return rows


def build_tree(
    out: SearchOutput,
    n_outputs,
    value_of,
    label_of=None,
    *,
    X=None,
    kind="classifier",
    n_samples=None,
):
    """The :class:`~odtstudy.tree.Tree` of a search.

    ``value_of(node, rows)`` and ``label_of(node, rows)`` give each node's
    value and label (``rows``: its rows of ``X``, or None without ``X``);
    ``n_samples`` defaults to the rows (or the value's sum without ``X``).
    """
    rows = node_rows(out, X) if X is not None else [None] * len(out.feature)
    builder = TreeBuilder(n_outputs=n_outputs)
    ids = []
    for node, f in enumerate(out.feature):
        value = value_of(node, rows[node])
        label = None if label_of is None else label_of(node, rows[node])
        count = len(rows[node]) if rows[node] is not None else round(float(sum(value)))
        if f < 0:
            ids.append(builder.add_leaf(value, n_samples=count, label=label))
        else:
            ids.append(
                builder.add_split(
                    int(f),
                    out.threshold[node] if out.threshold else 0.5,
                    value=value,
                    n_samples=count,
                    label=label,
                )
            )
    for node, f in enumerate(out.feature):
        if f >= 0:
            builder.set_children(ids[node], ids[out.left[node]], ids[out.right[node]])
    return builder.build(kind=kind)


def fit_result(out: SearchOutput, tree, *, max_depth, max_error, loss_unit=1.0):
    """The :class:`FitResult` of a search whose tree is ``tree`` (or None).

    The objective is the sum of the leaves' losses (checked against the
    search's proven optimum); the status is "optimal", "timeout" (the
    search stopped at its time limit, with or without a tree) or
    "infeasible" (proven: no tree below ``max_error``).
    """
    stats = dict(out.stats)
    if tree is None:
        reason = f"no tree of depth <= {max_depth} with loss < max_error={max_error}"
        if out.timed_out:
            # a stop is not a proof: trees below max_error may still exist
            return FitResult(
                tree=None,
                objective=None,
                lower_bound=float(out.lower_bound),
                optimal=False,
                status="timeout",
                stats=stats,
                reason=reason + " was found before the time limit stopped the "
                "search; raise time_limit to finish it",
            )
        lb = out.lower_bound
        if max_error is not None:
            lb = max(lb, float(max_error))
        return FitResult(
            tree=None,
            objective=None,
            lower_bound=float(lb),
            optimal=False,
            status="infeasible",
            stats=stats,
            reason=reason + " exists",
        )
    objective = float(sum(v for v, f in zip(out.node_loss, out.feature) if f < 0))
    optimal = not out.timed_out
    if optimal and not math.isclose(
        objective, out.loss, rel_tol=1e-9, abs_tol=1e-9 * loss_unit
    ):  # pragma: no cover - internal check
        raise RuntimeError(
            f"DL8.5 internal error: rebuilt tree has loss {objective}, "
            f"search proved {out.loss}"
        )
    return FitResult(
        tree=tree,
        objective=objective,
        lower_bound=objective if optimal else min(float(out.lower_bound), objective),
        optimal=optimal,
        status="optimal" if optimal else "timeout",
        stats=stats,
    )
