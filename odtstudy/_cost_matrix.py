"""Cost-sensitive classification: one convention for a cost matrix.

``cost_matrix[p, c]`` is the cost of predicting class ``p`` (an index into
``classes_``) for a row of class ``c``. Every learner that takes a cost
matrix checks it here and names its objective family here, so the study's
consistency check pairs two learners exactly when they minimise the same
costs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_cost_matrix", "cost_family", "summed_cost"]


def check_cost_matrix(cost_matrix, n_classes: int) -> np.ndarray:
    """``cost_matrix`` as a float64 ``(n_classes, n_classes)`` array, or a
    ``ValueError`` that names the argument and the fix."""
    try:
        cost = np.array(cost_matrix, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "cost_matrix must be a numeric (n_classes, n_classes) array with "
            f"cost_matrix[predicted, true]; got {cost_matrix!r} ({exc})"
        ) from None
    if cost.shape != (n_classes, n_classes):
        raise ValueError(
            f"cost_matrix has shape {cost.shape}, but y has {n_classes} classes: "
            f"give a ({n_classes}, {n_classes}) matrix, cost_matrix[p, c] being "
            "the cost of predicting class p (index into classes_) for a row of "
            "class c"
        )
    if not np.isfinite(cost).all():
        raise ValueError(
            "cost_matrix contains NaN or infinity; the search needs finite costs "
            "(use a large finite cost for a forbidden prediction)"
        )
    if np.any(cost < 0):
        raise ValueError(
            "cost_matrix has negative entries; the search's bounds need "
            "non-negative costs: add a constant to each column (the optimal "
            "tree does not change) or set the diagonal to 0"
        )
    return np.ascontiguousarray(cost)


def cost_family(cost_matrix) -> str:
    """The objective family of a cost matrix: ``"cost@0,5;1,0"`` for
    ``[[0, 5], [1, 0]]`` (rows by predicted class, ``;`` between rows)."""
    rows = np.atleast_2d(np.asarray(cost_matrix, dtype=np.float64))
    return "cost@" + ";".join(",".join(f"{v:g}" for v in row) for row in rows)


def summed_cost(cost, predicted, y, sample_weight=None) -> float:
    """Total cost ``sum_i w_i * cost[predicted_i, y_i]`` of class indices."""
    each = np.asarray(cost)[np.asarray(predicted), np.asarray(y)]
    if sample_weight is None:
        return float(np.sum(each))
    return float(np.dot(np.asarray(sample_weight, dtype=np.float64), each))
