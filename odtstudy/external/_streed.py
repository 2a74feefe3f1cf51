"""STreeD (``pystreed``): depth-limited optimal classification trees."""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.utils._param_validation import Interval

from odtstudy.base import FitResult
from odtstudy.external._base import ExternalTreeClassifier
from odtstudy.external._child import call_in_process
from odtstudy.external._convert import LEAF

__all__ = ["STreeDClassifier"]


def _describe(node):
    # STreeD sends rows whose (0/1) feature is 0 to left_child
    if node.is_leaf_node():
        return LEAF, int(node.label)
    return (node.feature, 0.5), (node.left_child, node.right_child)


class STreeDClassifier(ExternalTreeClassifier):
    """STreeD (Van der Linden et al., 2023) through ``pystreed``.

    Minimises training misclassifications over trees of depth at most
    ``max_depth`` on 0/1 features, with leaves of at least
    ``min_samples_leaf`` rows and no limit on the number of branching nodes
    (as DL8.5 does), so its proven objective equals DL8.5's.

    Parameters
    ----------
    max_depth : int, default=3
    time_limit : float, default=None
        Seconds (STreeD stops itself; ``None``: no limit).
    min_samples_leaf : int, default=1
    max_num_nodes : int, default=None
        Limit on branching nodes; ``None``: ``2**max_depth - 1`` (none).
    use_branch_caching : bool, default=False
        STreeD's cache choice (``False``: dataset caching, its default).
    random_state : int, default=None
        STreeD's random seed (``None``: its default, 27).

    Attributes
    ----------
    tree_, classes_, objective_, lower_bound_, optimal_, status_, fit_time_
        As every odtstudy learner; ``optimal_`` is STreeD's own
        ``is_optimal()``, ``lower_bound_`` the objective when proven.
    stats_ : dict
        ``tool``, ``tool_accuracy``, ``n_branching_nodes``, ``n_leaves``,
        ``startup_s`` (0: STreeD runs in this process), ``solver_time_s``
        (its ``fit`` call).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3)
    >>> clf = STreeDClassifier(max_depth=1).fit(X, X[:, 1])  # doctest: +SKIP
    >>> clf.objective_, clf.optimal_  # doctest: +SKIP
    (0.0, True)
    """

    _tool = "pystreed"
    _module = "pystreed"
    _requires_binary = True
    _parameter_constraints = {
        **ExternalTreeClassifier._parameter_constraints,
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_num_nodes": [Interval(Integral, 0, None, closed="left"), None],
        "use_branch_caching": ["boolean"],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        max_depth=3,
        *,
        time_limit=None,
        min_samples_leaf=1,
        max_num_nodes=None,
        use_branch_caching=False,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.time_limit = time_limit
        self.min_samples_leaf = min_samples_leaf
        self.max_num_nodes = max_num_nodes
        self.use_branch_caching = use_branch_caching
        self.random_state = random_state

    def _fit(self, X, y, sample_weight):
        self._no_sample_weight(sample_weight, "STreeD")
        pystreed = self._solver()
        if len(y) < self.min_samples_leaf:
            return FitResult(
                tree=None,
                objective=None,
                status="infeasible",
                reason=f"min_samples_leaf={self.min_samples_leaf} exceeds the "
                f"number of training rows ({len(y)}): no tree has a leaf that large",
                stats={"tool": self._tool},
            )
        solver = pystreed.STreeDClassifier(
            max_depth=self.max_depth,
            max_num_nodes=self.max_num_nodes,
            min_leaf_node_size=self.min_samples_leaf,
            time_limit=1e9 if self.time_limit is None else self._time_left(),
            use_branch_caching=self.use_branch_caching,
            use_dataset_caching=not self.use_branch_caching,
            random_seed=27 if self.random_state is None else int(self.random_state),
        )
        call = call_in_process(lambda: solver.fit(X.astype(int), y))
        result = getattr(solver, "fit_result", None)
        if result is None:  # STreeD gives no tree only when it ran out of time
            return self._result(None, X, y, timed_out=True, stats=call.timings())
        tree = self._convert(solver.tree_, _describe, X, y)
        proven = bool(result.is_optimal())
        return self._result(
            tree,
            X,
            y,
            proven=proven,
            timed_out=not proven,
            min_sup=self.min_samples_leaf,
            stats={
                "tool_accuracy": float(result.score()),
                "n_branching_nodes": int(result.tree_nodes()),
                **call.timings(),
            },
        )
