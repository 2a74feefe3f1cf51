"""A leaf objective written in Python: one class, both searches.

A :class:`LeafObjective` gives each training row a vector of statistics
that add up over the rows of a leaf, and prices a leaf from their sum. The
engine needs nothing else: the 0/1 search sums the statistics of a cover,
the numeric search sums them along its sweeps (and its depth-2 pass), and
both price the sums in batches through the memoised Python loss of
``_objective.Objective`` (kind ``"py_stats"``). What holds for the loss is
declared on the class and switches the bounds that need it on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LeafObjective", "objective_arguments"]


class LeafObjective:
    """Base class of a user leaf objective of additive per-row statistics.

    Subclass it, define :meth:`row_stats`, :meth:`loss` and :meth:`value`,
    and pass an instance as ``DL85Predictor(objective=...)``: the tree
    minimises the sum of the leaf losses, on 0/1 data and on numeric data
    (``thresholds``), with no change to the search.

    Declarations (class attributes, or override :meth:`worst`):

    Attributes
    ----------
    monotone : bool, default=False
        True when a leaf's optimal loss never grows when rows are removed
        from it (true of any loss that is a minimum over predictions of a
        sum of non-negative per-row losses). The numeric search's interval
        and neighbour bounds need it (with ``min_sup=1``); without it every
        threshold is evaluated.

    Notes
    -----
    The depth-2 solver that applies is the one of additive statistics: the
    numeric search's depth-2 pass prices every depth-1 split of both
    children of a threshold from running sums, priced by :meth:`loss` in
    batches. The 0/1 search's depth-2 solvers are C kernels of the built-in
    objectives; a Python objective is solved there by the recursion. The
    purity test (a leaf of loss 0 is not split) holds for every objective.

    Examples
    --------
    The misclassification of two classes, as a user objective:

    >>> import numpy as np
    >>> from odtstudy.dl85 import DL85Predictor, LeafObjective
    >>> class TwoClassError(LeafObjective):
    ...     monotone = True
    ...     def row_stats(self, y, sample_weight):
    ...         return np.column_stack([y == 0, y == 1]).astype(float)
    ...     def loss(self, stats):
    ...         return stats.min(axis=1)
    ...     def value(self, stats):
    ...         return float(np.argmax(stats))
    >>> X = np.array([[0.1], [0.4], [0.6], [0.9]])
    >>> y = np.array([0, 0, 1, 1])
    >>> est = DL85Predictor(max_depth=1, objective=TwoClassError(), thresholds="all")
    >>> est.fit(X, y).objective_, est.predict(X).tolist()
    (0.0, [0.0, 0.0, 1.0, 1.0])
    """

    monotone = False

    def row_stats(self, y, sample_weight):
        """Each training row's statistics.

        Parameters
        ----------
        y : ndarray of shape (n_samples,) or None
            The target given to ``fit`` (None when it was not given).
        sample_weight : ndarray of shape (n_samples,) or None

        Returns
        -------
        ndarray of shape (n_samples, n_stats)
            At most 64 statistics per row for the numeric search.
        """
        raise NotImplementedError

    def loss(self, stats):
        """The losses of a batch of leaves.

        Parameters
        ----------
        stats : ndarray of shape (n_leaves, n_stats)
            Each leaf's summed statistics.

        Returns
        -------
        ndarray of shape (n_leaves,)
            Finite, non-negative losses.
        """
        raise NotImplementedError

    def value(self, stats):
        """The prediction (a number) of a leaf whose summed statistics are
        ``stats`` (ndarray of shape (n_stats,))."""
        raise NotImplementedError

    def worst(self, y, sample_weight):
        """The largest loss each row can add to a leaf whose prediction is
        optimal for the leaf's other rows, or None (the default: unknown).

        Given, it switches on the similarity bound of the 0/1 search and the
        neighbour bound of the numeric search.

        Returns
        -------
        ndarray of shape (n_samples,) or None
        """
        return None


def objective_arguments(objective: LeafObjective, y, sample_weight) -> dict:
    """The engine's arguments for ``objective`` on these rows: the batched
    loss and the declarations, keywords of both searches (``search`` and
    ``numeric_search``)."""
    stats = np.ascontiguousarray(objective.row_stats(y, sample_weight), dtype=float)
    if stats.ndim != 2 or (y is not None and stats.shape[0] != len(y)):
        raise ValueError(
            f"{type(objective).__name__}.row_stats must return a 2-D array with "
            f"one row of statistics per training row; got shape {stats.shape}"
        )
    if not np.isfinite(stats).all():
        raise ValueError(
            f"{type(objective).__name__}.row_stats returned NaN or infinity; "
            "the statistics must be finite numbers"
        )
    name = f"{type(objective).__name__}.loss"

    def losses(batch):
        out = np.asarray(objective.loss(batch), dtype=np.float64).reshape(-1)
        if out.shape[0] != len(batch):
            raise ValueError(
                f"{name} must return one loss per row of its 2-D input: "
                f"{len(batch)} rows, got {out.shape[0]} losses"
            )
        return out

    losses.batched = True
    worst = objective.worst(y, sample_weight)
    return {
        "callback": losses,
        "row_stats": stats,
        "worst": None if worst is None else np.asarray(worst, dtype=np.float64),
        "monotone": bool(objective.monotone),
        "loss_name": name,
    }
