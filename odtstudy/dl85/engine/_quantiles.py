"""Several quantiles in one DL8.5 fit: the quantiles checked, the per-quantile
results combined into one ``FitResult``, and quantile crossing reported.

``DL85Regressor(criterion="quantile", quantile=[...])`` comes here; the
search itself is ``_engine.search_quantiles``.
"""

from __future__ import annotations

import math
import warnings
from numbers import Real

import numpy as np

from odtstudy.base import FitResult

__all__ = [
    "check_quantiles",
    "combine_results",
    "crossings",
    "unit_quantile_values",
    "warn_crossings",
]


def check_quantiles(quantile, criterion: str):
    """The quantiles of a list ``quantile`` as a float array, or None for a
    scalar; raise a ValueError naming ``quantile`` for a bad list."""
    if isinstance(quantile, Real):
        return None
    taus = np.asarray(quantile, dtype=object).ravel()
    if criterion != "quantile":
        raise ValueError(
            f"quantile={quantile!r}: several quantiles need "
            f"criterion='quantile' (got criterion={criterion!r}); give one "
            "quantile or set criterion='quantile'"
        )
    if taus.size == 0:
        raise ValueError(
            "quantile=[] is empty: give a value in (0, 1) or a list of them"
        )
    if not all(isinstance(t, Real) and not isinstance(t, bool) for t in taus):
        raise ValueError(f"quantile={quantile!r}: every quantile must be a number")
    taus = taus.astype(np.float64)
    bad = taus[~((taus > 0) & (taus < 1))]
    if bad.size:
        raise ValueError(
            f"quantile={quantile!r}: every quantile must lie in (0, 1), got {bad[0]!r}"
        )
    if np.unique(taus).size != taus.size:
        raise ValueError(
            f"quantile={quantile!r} repeats a value: give distinct quantiles"
        )
    return taus


def unit_quantile_values(y: np.ndarray, tau: float):
    """``value_of(node, rows)`` of ``build_tree`` for unit weights: the lower
    ``tau``-quantile of the rows' targets, the ``ceil(tau * n)``-th smallest
    (``weighted_quantile`` with unit weights), from the ranks of ``y``."""
    order = np.argsort(y, kind="stable")
    rank = np.empty(len(y), dtype=np.int64)
    rank[order] = np.arange(len(y))
    y_sorted = np.asarray(y, dtype=np.float64)[order]

    def value_of(node, rows):
        if len(rows) == 0:
            return [0.0]
        k = min(max(math.ceil(tau * len(rows)) - 1, 0), len(rows) - 1)
        return [float(y_sorted[np.partition(rank[rows], k)[k]])]

    return value_of


def combine_results(results: list, trees: list, stats_of: list) -> FitResult:
    """One ``FitResult`` of the per-quantile ``results`` (in the order of the
    quantiles): ``tree`` the first quantile's, ``trees`` all of them,
    ``objective`` / ``lower_bound`` arrays, ``optimal`` when every quantile
    is proven; ``stats``: the whole search's counters (``stats_of[-1]``, the
    last run's), each quantile's anytime trace and proof."""
    optimal = [bool(r.optimal) for r in results]
    statuses = [r.status for r in results]
    stats = dict(stats_of[-1])
    stats["timeout"] = any(s["timeout"] for s in stats_of)
    stats["anytime"] = stats_of[0]["anytime"]
    stats["anytime_per_quantile"] = [s["anytime"] for s in stats_of]
    stats["optimal_per_quantile"] = optimal
    return FitResult(
        tree=trees[0],
        trees=list(trees),
        objective=np.array([r.objective for r in results], dtype=np.float64),
        lower_bound=np.array([r.lower_bound for r in results], dtype=np.float64),
        optimal=all(optimal),
        status=_combined_status(statuses),
        stats=stats,
        reason="; ".join(
            f"quantile {k}: {r.reason}" for k, r in enumerate(results) if r.reason
        ),
    )


def _combined_status(statuses: list) -> str:
    """One status of the per-quantile ones: a timeout over an unproven
    (feasible) optimum over a proven one."""
    for status in ("timeout", "feasible"):
        if status in statuses:
            return status
    return "optimal"


def crossings(predictions: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """``counts[i, j]``: the rows where the tree of ``taus[i]`` predicts more
    than the tree of ``taus[j]`` although ``taus[i] < taus[j]`` (0 for the
    other pairs); ``predictions`` one column per quantile."""
    K = len(taus)
    counts = np.zeros((K, K), dtype=np.int64)
    for i in range(K):
        for j in range(K):
            if taus[i] < taus[j]:
                counts[i, j] = int(np.sum(predictions[:, i] > predictions[:, j]))
    return counts


def warn_crossings(counts: np.ndarray, taus: np.ndarray) -> None:
    """A ``UserWarning`` naming each pair of quantiles whose trees cross on
    training rows, and how many rows."""
    pairs = [
        f"quantile {taus[i]:g} above quantile {taus[j]:g} on {counts[i, j]} rows"
        for i, j in zip(*np.nonzero(counts))
    ]
    if pairs:
        warnings.warn(
            "DL85Regressor: the quantile trees cross on training rows: "
            + "; ".join(pairs)
            + " (see crossings_)",
            UserWarning,
            stacklevel=6,
        )
