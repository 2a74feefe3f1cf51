"""GOSDT (``gosdt``): optimal sparse trees, misclassifications plus a leaf penalty."""

from __future__ import annotations

import functools
import json
import math
import sys
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval

from odtstudy._child import call_in_fork, call_in_fresh_interpreter
from odtstudy._deadline import now
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._convert import LEAF
from odtstudy.external._penalty import PENALTY_FAMILY, LeafPenaltyMixin

__all__ = ["GOSDTClassifier"]


def _describe(node):
    # GOSDT sends rows whose feature is 1 ("true") to its first child
    if node is None:
        return LEAF, None
    if "prediction" in node:
        return LEAF, int(node["prediction"])
    return (node["feature"], 0.5), (node["false"], node["true"])


def _solve(X, y, regularization, depth, stop_at):
    """Fit GOSDT (in a child process) until ``stop_at``, a time on the
    deadline clock (:func:`odtstudy._deadline.now`, the system-wide monotonic
    clock, so a forked child or a fresh interpreter reads the parent's
    deadline on it): its model and result as plain data."""
    import gosdt

    time_limit = None if stop_at is None else stop_at - now()
    solver = gosdt.GOSDTClassifier(
        regularization=regularization,
        allow_small_reg=True,
        depth_budget=depth,
        time_limit=None if time_limit is None else max(1, math.ceil(time_limit)),
    )
    solver.fit(X.astype(bool), y)
    result = solver.result_
    return {
        "model": json.loads(result.model),
        "status": result.status.name,
        "lower_bound": float(result.lowerbound),
        "upper_bound": float(result.upperbound),
        "model_loss": float(result.model_loss),
        "graph_size": int(result.graph_size),
        "n_iterations": int(result.n_iterations),
    }


class GOSDTClassifier(LeafPenaltyMixin, ExternalTreeClassifier):
    """GOSDT (Lin et al., 2020; McTavish et al., 2022) through ``gosdt``.

    GOSDT minimises ``misclassifications / n + regularization * leaves`` over
    trees of depth at most ``max_depth`` on 0/1 features. With a penalty
    below ``1 / (n * 2**max_depth)`` (the default), all trees of the depth
    together cost less than one misclassification: the optimum then has the
    fewest misclassifications (and the fewest leaves among those), so its
    objective family is ``"misclassification"`` and its proven objective
    equals DL8.5's. A larger penalty makes it another family,
    ``"misclassification+leaf-penalty"``, whose ``objective_`` is
    ``misclassifications + n * regularization * leaves``.

    GOSDT checks its clock only every 10,000 iterations, so the adapter
    solves in a forked child and kills it at ``time_limit`` (in a new
    interpreter when PuLP is loaded, where GOSDT crashes: its start-up,
    about 1.3 s, then counts in ``fit_time_`` and apart in
    ``stats_["startup_s"]``); a killed run
    returns a single leaf predicting the majority class (``status_`` is
    ``"timeout"``, ``stats_["no_solver_tree"]`` is True).

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (``None``: no limit).
    regularization : float, default=None
        Penalty per leaf (as a fraction of the rows); ``None``:
        ``0.5 / (n * 2**max_depth)``.

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is True when GOSDT converged.
        ``lower_bound_`` is GOSDT's bound in misclassifications.
    objective_family_ : str
    stats_ : dict
        ``tool``, ``regularization``, ``tool_status``, ``tool_lower_bound``,
        ``tool_upper_bound``, ``tool_model_loss`` (GOSDT's normalised
        figures), ``graph_size``, ``n_iterations``, ``n_leaves``,
        ``killed_at_limit``, ``startup_s`` (the fresh interpreter's start-up,
        its imports and the data it receives; 0 in a fork) and
        ``solver_time_s`` (the solver call in the child).
    """

    _tool = "gosdt"
    _module = "gosdt"
    _requires_binary = True
    _honours_time_limit = False
    _install_note = (
        "gosdt 1.0.4 has wheels for Python 3.9-3.12 only, so the extra skips it "
        "on newer Pythons; there it builds from source with the system's TBB "
        "(apt install libtbb-dev, then pip install gosdt)"
    )
    _parameter_constraints = {
        **ExternalTreeClassifier._parameter_constraints,
        "regularization": [Interval(Real, 0, 1, closed="both"), None],
    }

    def __init__(self, max_depth=3, *, time_limit=None, regularization=None):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.regularization = regularization

    def _check_some_split_can_pay(self, y, reg) -> None:
        """GOSDT returns no model (``false convergence``) when the penalty of
        one more leaf is at least the majority leaf's error rate: then no
        split can pay for itself and the optimum is a single leaf."""
        error_rate = 1.0 - np.bincount(y).max() / len(y)
        if reg > 0 and reg >= error_rate:
            raise ValueError(
                f"regularization={self.regularization} is at least the error "
                f"rate of a single leaf on this data ({error_rate:.4g}), so no "
                "split can pay for its extra leaf and GOSDT finds no model; "
                f"use a regularization below {error_rate:.4g}"
            )

    def _fit(self, X, y, sample_weight):
        self._no_sample_weight(sample_weight, "GOSDT")
        n, depth = len(y), self.max_depth
        reg = self._leaf_penalty(n)
        self._check_some_split_can_pay(y, reg)
        self._solver()
        deadline = self._fit_deadline()
        timeout = None
        if self.time_limit is not None:
            timeout = deadline.remaining(-0.05 * self.time_limit - 0.5)
        stop_at = deadline.at
        task = functools.partial(_solve, X, y, reg, depth, stop_at)
        try:
            # GOSDT segfaults in a process that has imported PuLP (odtstudy.milp)
            if "pulp" in sys.modules:
                call = call_in_fresh_interpreter(task, timeout, [self._module])
            else:
                call = call_in_fork(task, timeout)
        except RuntimeError as exc:
            if self.regularization is None:
                raise
            raise RuntimeError(
                f"GOSDT stopped without a model at regularization="
                f"{self.regularization} ({exc}); GOSDT aborts this way (its "
                "'false convergence') when the penalty per leaf is close to the "
                "errors a split can save: try a smaller regularization"
            ) from exc
        out = call.value
        stats = {
            "regularization": reg,
            "killed_at_limit": not call.finished,
            **call.timings(),
        }
        if not call.finished:
            return self._result(None, X, y, timed_out=True, stats=stats)
        stats.update(
            tool_status=out["status"],
            tool_lower_bound=out["lower_bound"],
            tool_upper_bound=out["upper_bound"],
            tool_model_loss=out["model_loss"],
            graph_size=out["graph_size"],
            n_iterations=out["n_iterations"],
        )
        tree = self._convert(out["model"][0], _describe, X, y)
        converged = out["status"] == "CONVERGED"
        # GOSDT's bound is on errors / n + reg * leaves, with at most 2**depth
        # leaves; 1e-4 absorbs its single-precision arithmetic
        bound = math.ceil(n * out["lower_bound"] - n * reg * 2**depth - 1e-4)
        result = self._result(
            tree,
            X,
            y,
            proven=converged,
            timed_out=not converged,
            lower_bound=max(0, bound),
            stats=stats,
        )
        if self.objective_family_ == PENALTY_FAMILY:
            result = self._penalised(result, n, reg)
            result.lower_bound = (
                result.objective if converged else n * out["lower_bound"]
            )
        return result
