"""PyDL8.5 (``pydl8.5``): the authors' C++ implementation of DL8.5."""

from __future__ import annotations

import functools
from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import Interval

from odtstudy._child import call_in_fork, call_in_process
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF

__all__ = ["PyDL85Classifier"]


def _describe(node):
    # PyDL8.5's "left" holds the rows whose feature is 1, "right" those at 0
    if "feat" not in node:
        return LEAF, int(node["value"])
    return (node["feat"], 0.5), (node["right"], node["left"])


def _solve(X, y, depth, min_sup, time_limit):
    """PyDL8.5's fit, as a picklable dict (it may run in a forked child)."""
    import pydl85

    solver = pydl85.DL85Classifier(
        max_depth=depth, min_sup=min_sup, time_limit=time_limit
    )
    solver.fit(X, y)
    return {
        "tree": solver.tree_,
        "timeout": bool(solver.timeout_),
        "error": float(solver.error_),
        "lattice_size": int(solver.lattice_size_),
        "runtime": float(solver.runtime_),
    }


class PyDL85Classifier(ExternalTreeClassifier):
    """DL8.5 (Aglin, Nijssen and Schaus, 2020) through ``pydl8.5``.

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` on 0/1 features: the same problem as
    :class:`odtstudy.dl85.DL85Classifier`, solved by the authors' C++ code.

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (PyDL8.5 stops itself and keeps its best tree; ``None``: no
        limit).
    min_samples_leaf : int, default=1
        PyDL8.5's ``min_sup``.

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is True when PyDL8.5 ended
        without reaching its time limit and its tree is not beaten by the
        best tree of depth 1 (see Notes).
    stats_ : dict
        ``tool``, ``tool_error``, ``lattice_size`` (cache entries),
        ``tool_runtime_s``, ``n_leaves``, ``solved_depth``; ``claim_refuted``
        when PyDL8.5 called a tree optimal that a depth-1 tree beats;
        ``killed_at_limit`` for a limit under 1 s; ``startup_s`` (0: in this
        process or a fork) and ``solver_time_s`` (the solver call).

    Notes
    -----
    Work-arounds for PyDL8.5 0.1.8's known defects, so that the adapter never
    certifies more than PyDL8.5 proves:

    - with ``max_depth`` above the number of features it returns worse trees
      than at that number (e.g. 2 where 1 is optimal); a path cannot usefully
      test a 0/1 feature twice, so it is solved at
      ``min(max_depth, n_features)`` (``stats_["solved_depth"]``);
    - on some tiny inputs (two rows at depth 2) it returns a worse tree and
      calls it optimal: a tree it returns that the best depth-1 tree beats
      is reported ``optimal_=False`` (status ``"feasible"``);
    - it truncates its time limit to whole seconds, 0 meaning none: a limit
      under 1 s runs it in a forked child killed at the limit.
    """

    _tool = "pydl8.5"
    _module = "pydl85"
    _requires_binary = True
    _parameter_constraints = {
        **ExternalTreeClassifier._parameter_constraints,
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_depth=3, *, time_limit=None, min_samples_leaf=1):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.min_samples_leaf = min_samples_leaf

    def _fit(self, X, y, sample_weight):
        self._no_sample_weight(sample_weight, "PyDL8.5")
        self._solver()
        X, y = X.astype(int), np.asarray(y, dtype=int)
        depth = min(int(self.max_depth), X.shape[1])
        limit = self._time_left()
        task = functools.partial(
            _solve,
            X,
            y,
            depth,
            self.min_samples_leaf,
            0 if limit is None else max(1, int(limit)),
        )
        stats = {"solved_depth": depth}
        if limit is not None and limit < 1:
            call = call_in_fork(task, limit)
            stats["killed_at_limit"] = not call.finished
        else:
            call = call_in_process(task)
        stats.update(call.timings())
        if not call.finished:
            return self._result(None, X, y, timed_out=True, stats=stats)
        out = call.value
        timed_out = out["timeout"]
        stats.update(
            tool_error=out["error"],
            lattice_size=out["lattice_size"],
            tool_runtime_s=out["runtime"],
        )
        tree = None
        if out["tree"] is not None:
            tree = self._convert(out["tree"], _describe, X, y)
        return self._result(
            tree,
            X,
            y,
            proven=not timed_out,
            timed_out=timed_out,
            stats=stats,
            min_sup=self.min_samples_leaf,
        )
