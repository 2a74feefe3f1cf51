"""PyDL8.5 (``pydl8.5``): the authors' C++ implementation of DL8.5."""

from __future__ import annotations

from numbers import Integral

from sklearn.utils._param_validation import Interval

from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF

__all__ = ["PyDL85Classifier"]


def _describe(node):
    # PyDL8.5's "left" holds the rows whose feature is 1, "right" those at 0
    if "feat" not in node:
        return LEAF, int(node["value"])
    return (node["feat"], 0.5), (node["right"], node["left"])


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
        without reaching its time limit.
    stats_ : dict
        ``tool``, ``tool_error``, ``lattice_size`` (cache entries),
        ``tool_runtime_s``, ``n_leaves``.
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
        pydl85 = self._solver()
        solver = pydl85.DL85Classifier(
            max_depth=self.max_depth,
            min_sup=self.min_samples_leaf,
            time_limit=0 if self.time_limit is None else float(self.time_limit),
        )
        solver.fit(X.astype(int), y)
        timed_out = bool(solver.timeout_)
        stats = {
            "tool_error": float(solver.error_),
            "lattice_size": int(solver.lattice_size_),
            "tool_runtime_s": float(solver.runtime_),
        }
        tree = None
        if solver.tree_ is not None:
            tree = self._convert(solver.tree_, _describe, X, y)
        return self._result(
            tree, X, y, proven=not timed_out, timed_out=timed_out, stats=stats
        )
