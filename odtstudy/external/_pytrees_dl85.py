"""pytrees-rs's DL8.5: exact, and anytime by limited-discrepancy search."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from odtstudy.external._base import _import
from odtstudy.external._pytrees import PyTreesClassifier

__all__ = ["PyTreesDL85AnytimeClassifier", "PyTreesDL85Classifier"]


class PyTreesDL85Classifier(PyTreesClassifier):
    """DL8.5 (Aglin, Nijssen and Schaus, 2020) through pytrees-rs (``pytrees``).

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` on 0/1 features, with leaves of at least
    ``min_samples_leaf`` rows: the problem of
    :class:`odtstudy.dl85.DL85Classifier`, solved by a Rust
    re-implementation. pytrees runs in a forked child: it stops itself at
    the time limit, and the child is killed soon after if it does not (a
    killed run returns a majority-class leaf, ``status_`` ``"timeout"``).

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (``None``: no limit).
    min_samples_leaf : int, default=1
        pytrees' ``min_sup``.
    fast_d2 : bool, default=True
        pytrees' specialised depth-2 solver (its default; see Notes).

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is True when pytrees ended
        with status ``"optimal"`` and the tree it returned makes the errors
        it reported.
    stats_ : dict
        ``tool``, ``tool_status``, ``tool_error`` (pytrees' own figure),
        its counters as ``tool_<name>`` (``tool_cache_size``,
        ``tool_restarts``, ``tool_duration``, ...), ``n_leaves``,
        ``killed_at_limit``, ``startup_s`` (0: a fork), ``solver_time_s``
        (the call in the child); ``claim_refuted`` when pytrees called a
        tree optimal that its own error or a depth-1 tree contradicts.

    Notes
    -----
    pytrees-rs 2.0.0 with ``fast_d2=True`` sometimes returns a tree that
    makes more errors than the optimum it reports (about 2% of small random
    problems; the reported optimum is right): such a tree is not certified
    (``optimal_`` False, ``stats_["claim_refuted"]``). ``fast_d2=False``
    avoids it, more slowly.
    """

    _estimator = "DL85Classifier"
    _requires_binary = True
    _parameter_constraints = {
        **PyTreesClassifier._parameter_constraints,
        "fast_d2": ["boolean"],
    }

    def __init__(
        self, max_depth=3, *, time_limit=None, min_samples_leaf=1, fast_d2=True
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.min_samples_leaf = min_samples_leaf
        self.fast_d2 = fast_d2

    def _pytrees_params(self) -> dict:
        return {"fast_d2": self.fast_d2}


class PyTreesDL85AnytimeClassifier(PyTreesDL85Classifier):
    """LDS-DL8.5 (Kiossou, Schaus, Nijssen and Houndji, 2022) through pytrees-rs.

    DL8.5 by limited-discrepancy search: each pass explores only the trees
    whose features, ranked by ``heuristic`` at every node, deviate from the
    best-ranked ones by at most a budget of discrepancies; the budget grows
    after each pass (``step_strategy``) until a pass is unrestricted. Good
    trees come early, and a search that completes proves its tree optimal,
    as :class:`PyTreesDL85Classifier` does: the same problem, the same
    parameters and attributes.

    Parameters
    ----------
    max_depth, time_limit, min_samples_leaf, fast_d2
        As :class:`PyTreesDL85Classifier`.
    heuristic : {"information_gain", "gini", "weighted_entropy", "none"}, \
default="information_gain"
        How features are ranked at each node.
    step_strategy : {"monotonic", "exponential", "luby"}, default="monotonic"
        How the budget grows from one pass to the next.

    Attributes
    ----------
    stats_ : dict
        As :class:`PyTreesDL85Classifier`, plus ``anytime``: a
        ``[seconds since fit started, objective]`` point at each improvement
        pytrees reported (after each pass), ending at ``objective_``.
    """

    _anytime = True
    _parameter_constraints = {
        **PyTreesDL85Classifier._parameter_constraints,
        "heuristic": [
            StrOptions({"information_gain", "gini", "weighted_entropy", "none"})
        ],
        "step_strategy": [StrOptions({"monotonic", "exponential", "luby"})],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        time_limit=None,
        min_samples_leaf=1,
        fast_d2=True,
        heuristic="information_gain",
        step_strategy="monotonic",
    ):
        super().__init__(
            max_depth,
            time_limit=time_limit,
            min_samples_leaf=min_samples_leaf,
            fast_d2=fast_d2,
        )
        self.heuristic = heuristic
        self.step_strategy = step_strategy

    def _pytrees_params(self) -> dict:
        rules = _import("pytrees.rules")
        return {
            "fast_d2": self.fast_d2,
            "heuristic": self.heuristic,
            "discrepancy": rules.DiscrepancyRule(step_strategy=self.step_strategy),
        }
