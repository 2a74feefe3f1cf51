"""pytrees-rs's ConTree: exact, and anytime by limited-discrepancy search."""

from __future__ import annotations

from sklearn.utils._param_validation import StrOptions

from odtstudy.external._pytrees import PyTreesClassifier

__all__ = ["PyTreesConTreeAnytimeClassifier", "PyTreesConTreeClassifier"]


class PyTreesConTreeClassifier(PyTreesClassifier):
    """ConTree (Brița, van der Linden and Demirović, 2025) through pytrees-rs.

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` whose tests are ``x[feature] <= t`` for any threshold of a
    numeric feature, with leaves of at least ``min_samples_leaf`` rows: the
    problem of :class:`ConTreeClassifier` (pycontree) and of
    ``DL85Classifier(thresholds="all")``, solved by a Rust re-implementation.
    pytrees merges values closer than its tolerance (about 1e-15), so the
    adapter gives it each column's ranks and maps its thresholds back to
    midpoints of the original values: distinct values never merge. It runs
    with ``max_gap=0`` (exact) in a forked child: pytrees stops itself at
    the time limit, and the child is killed soon after if it does not (a
    killed run returns a majority-class leaf, ``status_`` ``"timeout"``).

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (``None``: no limit).
    min_samples_leaf : int, default=1
        pytrees' ``min_sup``.

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is True when pytrees ended
        with status ``"optimal"`` and the tree it returned makes the errors
        it reported.
    stats_ : dict
        ``tool``, ``tool_status``, ``tool_error``, its counters as
        ``tool_<name>`` (``tool_cache_size``, ``tool_general_solver_calls``,
        ``tool_duration``, ...), ``n_leaves``, ``killed_at_limit``,
        ``startup_s`` (0: a fork), ``solver_time_s`` (the call in the
        child); ``claim_refuted`` when pytrees called a tree optimal that
        its own error or a depth-1 tree contradicts.
    """

    _estimator = "ConTreeClassifier"
    _ranked = True

    def __init__(self, max_depth=3, *, time_limit=None, min_samples_leaf=1):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.min_samples_leaf = min_samples_leaf

    def _pytrees_params(self) -> dict:
        return {"max_gap": 0}


class PyTreesConTreeAnytimeClassifier(PyTreesConTreeClassifier):
    """Anytime ConTree (Kiossou, Schaus and Nijssen, 2026) through pytrees-rs.

    ConTree by limited-discrepancy search: successive passes over a growing
    budget (``budget_schedule``), each reporting its improvement, until a
    pass is unrestricted. Good trees come early, and a search that completes
    proves its tree optimal, as :class:`PyTreesConTreeClassifier` does: the
    same problem, the same parameters and attributes.

    Parameters
    ----------
    max_depth, time_limit, min_samples_leaf
        As :class:`PyTreesConTreeClassifier`.
    budget_schedule : {"diagonal", "square"}, default="diagonal"
        How the budget grows from one pass to the next.

    Attributes
    ----------
    stats_ : dict
        As :class:`PyTreesConTreeClassifier`, plus ``anytime``: a
        ``[seconds since fit started, objective]`` point at each improvement
        pytrees reported, ending at ``objective_``.
    """

    _anytime = True
    _parameter_constraints = {
        **PyTreesConTreeClassifier._parameter_constraints,
        "budget_schedule": [StrOptions({"diagonal", "square"})],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        time_limit=None,
        min_samples_leaf=1,
        budget_schedule="diagonal",
    ):
        super().__init__(
            max_depth, time_limit=time_limit, min_samples_leaf=min_samples_leaf
        )
        self.budget_schedule = budget_schedule

    def _pytrees_params(self) -> dict:
        return {"max_gap": 0, "budget_schedule": self.budget_schedule}
