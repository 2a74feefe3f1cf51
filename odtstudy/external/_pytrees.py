"""pytrees-rs (``pytrees``): what its DL8.5 and ConTree adapters share.

pytrees-rs is a Rust re-implementation of DL8.5 and ConTree, each with an
anytime mode (limited-discrepancy search) that reports every improvement to
a callback. The adapters run it in a forked child (:func:`call_in_fork`):
pytrees stops itself at its ``max_time``, and the child is killed shortly
after the fit's deadline if it does not. The child hands back plain data:
the tree's arrays, pytrees' status, error and counters, and the anytime
points its callback saw.
"""

from __future__ import annotations

import functools
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from odtstudy._child import call_in_fork
from odtstudy._deadline import now
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF, misclassifications
from odtstudy.external._ranks import RankedColumns

__all__ = ["PyTreesClassifier"]

#: pytrees' ``max_time`` for a fit without a limit (its default is 600 s).
_NO_LIMIT = 1e9

#: The tree arrays the child hands back (``pytrees.tree.Tree`` attributes).
_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value")


def _solve(estimator, X, y, fit_start, anytime):
    """Fit the pytrees ``estimator`` (in the forked child), as plain data.

    With ``anytime``, ``fit_anytime`` runs and each callback adds a point
    ``(seconds since fit_start, error)``; ``fit_start`` is on the clock of
    :func:`odtstudy._deadline.now`, which the parent shares.
    """
    trace = []

    def record(error, seconds, status):
        trace.append((now() - fit_start, float(error)))

    try:
        if anytime:
            estimator.fit_anytime(X, y, record)
        else:
            estimator.fit(X, y)
    except IndexError:
        # pytrees 2.0 fails reading an empty tree when its search stopped
        # at max_time before its first tree
        return {"tree": None, "status": "time_limit", "error": None, "trace": trace}
    tree = estimator.tree_
    return {
        "tree": None if tree is None else {a: getattr(tree, a) for a in _ARRAYS},
        "status": str(estimator.status_),
        "error": float(estimator.train_error_),
        "statistics": dict(estimator.statistics_),
        "trace": trace,
    }


def _describe(arrays):
    """``describe`` for :func:`~odtstudy.external._convert.build_tree` over
    pytrees' arrays (nodes are indices; ``x <= threshold`` goes left)."""

    def describe(node):
        if arrays["children_left"][node] < 0:
            return LEAF, int(arrays["value"][node])
        split = (int(arrays["feature"][node]), float(arrays["threshold"][node]))
        children = (arrays["children_left"][node], arrays["children_right"][node])
        return split, children

    return describe


def _anytime(points, objective, end):
    """``stats_["anytime"]``: ``[time, objective]`` at each improvement.

    Errors below ``objective`` (reported for a tree the adapter did not get
    back) are left out; the trace ends at ``objective``, at ``end`` if no
    point reached it.
    """
    trace = []
    for time, error in sorted(points):
        if error >= objective and (not trace or error < trace[-1][1]):
            trace.append([time, error])
    if not trace or trace[-1][1] > objective:
        trace.append([end, float(objective)])
    return trace


class PyTreesClassifier(ExternalTreeClassifier):
    """Base of the pytrees-rs adapters.

    Subclasses set ``_estimator`` (the name of pytrees' estimator class),
    ``_anytime`` (fit with ``fit_anytime`` and record its trace),
    ``_ranked`` (give pytrees each column's ranks, :class:`RankedColumns`,
    and map its thresholds back) and implement :meth:`_pytrees_params`
    (the estimator's parameters besides ``max_depth``, ``min_sup`` and
    ``max_time``).
    """

    _tool = "pytrees-rs"
    _module = "pytrees"
    _estimator = ""
    _anytime = False
    _ranked = False
    _parameter_constraints = {
        **ExternalTreeClassifier._parameter_constraints,
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    }

    def _pytrees_params(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _call(self, X, y):
        """Run pytrees in a forked child: the child's answer (``None`` when it
        was killed), the call's ``stats_`` entries and the seconds from the
        fit's start to the call's end."""
        pytrees = self._solver()
        limit = self._time_left()
        estimator = getattr(pytrees, self._estimator)(
            max_depth=self.max_depth,
            min_sup=self.min_samples_leaf,
            max_time=_NO_LIMIT if limit is None else limit,
            **self._pytrees_params(),
        )
        deadline = self._fit_deadline()
        timeout = None
        if limit is not None:
            # pytrees stops itself, up to about a second late (ConTree's LDS
            # on 4,600 rows); the kill keeps the fit within T * 1.1 + 1 s
            timeout = deadline.remaining(-0.1 * self.time_limit - 0.7)
        task = functools.partial(_solve, estimator, X, y, deadline.start, self._anytime)
        call = call_in_fork(task, timeout)
        stats = {"killed_at_limit": not call.finished, **call.timings()}
        return call.value, stats, deadline.elapsed()

    def fit(self, X, y):
        """Fit pytrees-rs on ``X`` (0/1 features for DL8.5, numeric for
        ConTree) and the labels ``y``; it counts plain misclassifications, so
        there is no ``sample_weight`` (``has_fit_parameter`` says so)."""
        return super().fit(X, y)

    def _fit(self, X, y, sample_weight):
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.int64)
        if 2 * self.min_samples_leaf > len(y):
            # no split leaves min_samples_leaf rows on both sides: the optimum
            # is one leaf (pytrees' ConTree refuses such a min_sup)
            leaf = self._convert(None, lambda node: (LEAF, None), X, y)
            return self._result(leaf, X, y, proven=True, stats={"no_split": True})
        ranked = RankedColumns(X) if self._ranked else None
        out, stats, end = self._call(X if ranked is None else ranked.ranks, y)
        if out is None or out["tree"] is None:
            return self._result(None, X, y, timed_out=True, stats=stats)
        stats.update(
            tool_status=out["status"],
            tool_error=out["error"],
            **{f"tool_{k}": v for k, v in out["statistics"].items() if k != "error"},
        )
        describe = _describe(out["tree"])
        if ranked is not None:
            describe = ranked.on_original(describe)
        tree = self._convert(0, describe, X, y)
        proven = out["status"] == "optimal"
        errors = misclassifications(tree, X, y)
        if proven and errors != out["error"]:
            stats["claim_refuted"] = (
                f"pytrees-rs called its tree optimal with {out['error']:g} "
                f"errors, but the tree it returned makes {errors:g}"
            )
            proven = False
        if self._anytime:
            stats["anytime"] = _anytime(out["trace"], errors, end)
        return self._result(
            tree,
            X,
            y,
            proven=proven,
            timed_out=out["status"] == "time_limit",
            stats=stats,
            min_sup=self.min_samples_leaf,
        )
