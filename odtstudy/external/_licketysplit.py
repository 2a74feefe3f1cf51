"""LicketySPLIT (``licketysplit``): near-optimal sparse trees by one-step lookahead."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from odtstudy._child import call_in_fork
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF
from odtstudy.external._penalty import LeafPenaltyMixin

__all__ = ["LicketySplitClassifier"]


def _describe(node):
    """``node`` is ``(level, [(path, label), ...])``: the leaves below it,
    each path a list of signed 1-based features (``+f``: feature ``f`` is 1)."""
    level, leaves = node
    if len(leaves) == 1 and len(leaves[0][0]) == level:
        return LEAF, int(leaves[0][1])
    feature = abs(leaves[0][0][level]) - 1
    zero = [leaf for leaf in leaves if leaf[0][level] < 0]
    one = [leaf for leaf in leaves if leaf[0][level] > 0]
    return (feature, 0.5), ((level + 1, zero), (level + 1, one))


def _solve(X, y, lambda_leaf, depth, lookahead):
    """Fit LicketySPLIT (in the forked child): its leaves as plain data."""
    import licketysplit

    solver = licketysplit.LicketySPLITClassifier(
        lambda_leaf=lambda_leaf, depth_budget=depth, lookahead_k=lookahead
    )
    solver.fit(np.ascontiguousarray(X, dtype=np.uint8), y.astype(np.int32))
    paths, labels = solver.get_tree_paths()
    return {
        "leaves": [([int(f) for f in p], int(a)) for p, a in zip(paths, labels)],
        "objective": float(solver.objective_),
    }


class LicketySplitClassifier(LeafPenaltyMixin, ExternalTreeClassifier):
    """LicketySPLIT (Babbar, McTavish, Rudin, Seltzer, 2025) through
    ``licketysplit``.

    A polynomial-time heuristic for ``misclassifications + n *
    regularization * leaves`` over trees of depth at most ``max_depth`` on
    0/1 features: each split is chosen by the best greedy completion
    ``lookahead`` levels down. It proves nothing (``optimal_`` is always
    False). With the default penalty (below one misclassification for a full
    tree) it targets misclassifications. LicketySPLIT has no time limit: the
    adapter solves in a forked child killed at ``time_limit`` (a killed run
    returns a majority-class leaf, ``status_`` ``"timeout"``).

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
    regularization : float, default=None
        Penalty per leaf as a fraction of the rows; ``None``:
        ``0.5 / (n * 2**max_depth)``.
    lookahead : int, default=1
        LicketySPLIT's ``lookahead_k``.

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner.
    stats_ : dict
        ``tool``, ``regularization``, ``killed_at_limit``, ``tool_objective``,
        ``n_leaves``, ``startup_s`` (0: a fork) and ``solver_time_s`` (the
        solver call in the child).
    """

    _tool = "licketysplit"
    _module = "licketysplit"
    _exact = False
    _requires_binary = True
    _honours_time_limit = False
    _parameter_constraints = {
        **ExternalTreeClassifier._parameter_constraints,
        "regularization": [Interval(Real, 0, 1, closed="both"), None],
        # the solver keeps it in an int8 and refuses 0
        "lookahead": [Interval(Integral, 1, 127, closed="both")],
    }

    def __init__(
        self, max_depth=3, *, time_limit=None, regularization=None, lookahead=1
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.regularization = regularization
        self.lookahead = lookahead

    def _fit(self, X, y, sample_weight):
        self._no_sample_weight(sample_weight, "LicketySPLIT")
        self._solver()
        n, depth = len(y), self.max_depth
        reg = self._leaf_penalty(n)
        timeout = self._time_left()
        call = call_in_fork(lambda: _solve(X, y, reg, depth, self.lookahead), timeout)
        stats = {
            "regularization": reg,
            "killed_at_limit": not call.finished,
            **call.timings(),
        }
        if not call.finished:
            return self._result(None, X, y, timed_out=True, stats=stats)
        stats["tool_objective"] = call.value["objective"]
        tree = self._convert((0, call.value["leaves"]), _describe, X, y)
        return self._penalised(self._result(tree, X, y, stats=stats), n, reg)
