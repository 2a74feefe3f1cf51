"""Tuning a learner by inner cross-validation on a run's training fold.

A method table of a study may declare a grid to tune over::

    [methods.cart-tuned]
    method = "cart"

    [methods.cart-tuned.tune]
    max_depth = "up-to-depth"       # every depth from 1 to the run's depth
    ccp_alpha = [0.0, 0.001, 0.01]  # any constructor parameter: a list
    folds = 3                       # inner folds (default 3)

A run of such a method splits its training fold into ``folds`` inner folds
(stratified for classification, shuffled with the run's seed), fits every
candidate of the grid on each inner training part at the run's time limit,
scores it on the inner test part (accuracy; for regression the negative
mean squared error) and keeps the candidate of best mean score. Ties go to
the simplest candidate: the smallest ``max_depth``, then the first in the
grid's order. The chosen candidate is then fitted on the whole training
fold: that fit is the run's. The inner folds see the training fold as the
run prepared it (binarised on the whole training fold for 0/1 learners).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import numpy as np

from odtstudy.study._folds import kfold_splits

__all__ = [
    "DEFAULT_FOLDS",
    "FOLDS_KEY",
    "UP_TO_DEPTH",
    "candidates",
    "inner_splits",
    "select",
    "tune_problem",
    "tuned_text",
]

#: The key of a tune table that sets the number of inner folds.
FOLDS_KEY = "folds"
DEFAULT_FOLDS = 3
#: ``max_depth = "up-to-depth"``: every depth from 1 to the run's depth.
UP_TO_DEPTH = "up-to-depth"


def _plain(value) -> bool:
    return isinstance(value, (bool, int, float, str)) or value is None


def tune_problem(tune, known: Callable[[str], bool]) -> tuple[str, str] | None:
    """``(key, problem)`` of a malformed tune table, or ``None``.

    ``known(name)`` tells whether the learner's constructor takes ``name``.
    """
    if not isinstance(tune, dict) or not tune:
        return "", (
            "expected a table of parameter grids, e.g. tune = {max_depth = "
            f'"{UP_TO_DEPTH}", ccp_alpha = [0.0, 0.01]}}'
        )
    grids = {k: v for k, v in tune.items() if k != FOLDS_KEY}
    if not grids:
        return "", 'names no parameter to tune: add e.g. max_depth = "up-to-depth"'
    folds = tune.get(FOLDS_KEY, DEFAULT_FOLDS)
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        return FOLDS_KEY, f"expected an integer >= 2 (inner folds), got {folds!r}"
    for key, grid in grids.items():
        if key == "max_depth":
            if grid == UP_TO_DEPTH:
                continue
            if (
                isinstance(grid, list)
                and grid
                and all(
                    isinstance(d, int) and not isinstance(d, bool) and d >= 1
                    for d in grid
                )
            ):
                continue
            return key, (
                f'expected "{UP_TO_DEPTH}" or a list of depths >= 1, got {grid!r}'
            )
        if key in ("time_limit", "random_state"):
            return key, "is set by the runner and cannot be tuned"
        if not known(key):
            return key, "not a parameter of this learner's constructor"
        if not isinstance(grid, list) or not grid or not all(map(_plain, grid)):
            return key, f"expected a non-empty list of values, got {grid!r}"
    return None


def tuned_text(tune: dict) -> str:
    """How a tuned learner chooses, for a report's parameter table."""
    grids = []
    for key, grid in sorted(tune.items(), key=lambda item: item[0] != "max_depth"):
        if key == FOLDS_KEY:
            continue
        if key == "max_depth" and grid == UP_TO_DEPTH:
            grids.append("max_depth from 1 to the depth")
        else:
            grids.append(f"{key} in {{{', '.join(repr(v) for v in grid)}}}")
    folds = tune.get(FOLDS_KEY, DEFAULT_FOLDS)
    return (
        f"tuned by {folds}-fold inner cross-validation on each training fold: "
        + ", ".join(grids)
    )


def candidates(tune: dict, depth: int) -> list[dict]:
    """Every candidate of the grid at a run's ``depth``, simplest first:
    ``max_depth`` ascending (never above ``depth``), then the other
    parameters in the table's order."""
    grids = {k: v for k, v in tune.items() if k != FOLDS_KEY}
    depths = grids.pop("max_depth", [depth])
    if depths == UP_TO_DEPTH:
        depths = list(range(1, depth + 1))
    depths = sorted({d for d in depths if d <= depth}) or [depth]
    keys = list(grids)
    return [
        {"max_depth": d, **dict(zip(keys, values))}
        for d in depths
        for values in itertools.product(*(grids[k] for k in keys))
    ]


def inner_splits(y, folds: int, seed: int, task: str) -> list:
    """The inner (train, test) index pairs of a training fold, made as the
    run's folds are (:func:`~odtstudy.study._folds.kfold_splits`), at most
    one fold per row."""
    return kfold_splits(y, min(folds, len(y)), seed, task)


def _score(estimator, X, y, task) -> float:
    predicted = estimator.predict(X)
    if task == "classification":
        return float(np.mean(predicted == y))
    return -float(np.mean((np.asarray(predicted, dtype=float) - y) ** 2))


def select(make, X, y, tune, depth, seed, task, on_fit_start=None):
    """The candidate of best mean inner score, and what the tuning did.

    Parameters
    ----------
    make : callable
        ``make(max_depth=..., **params)`` returns an unfitted learner.
    X, y : arrays
        The run's training fold, as the run prepared it.
    tune : dict
        The method's tune table.
    depth, seed : int
        The run's depth (the largest tried) and seed (the inner folds').
    task : str
        ``"classification"`` (accuracy) or ``"regression"`` (negative MSE).
    on_fit_start : callable, default=None
        Called before every inner fit (the runner moves its deadline).

    Returns
    -------
    best : dict
        The chosen candidate (``max_depth`` and the tuned parameters).
    record : dict
        ``tuned`` (the chosen candidate), ``tune_scores`` (each candidate's
        mean inner score, in grid order), ``tune_fits`` and ``tuning_time_s``.
    """
    started = time.perf_counter()
    folds = tune.get(FOLDS_KEY, DEFAULT_FOLDS)
    splits = inner_splits(y, folds, seed, task)
    scores = []
    for candidate in candidates(tune, depth):
        fold_scores = []
        for inner_train, inner_test in splits:
            if on_fit_start is not None:
                on_fit_start()
            estimator = make(**candidate)
            estimator.fit(X[inner_train], y[inner_train])
            fold_scores.append(_score(estimator, X[inner_test], y[inner_test], task))
        scores.append((candidate, float(np.mean(fold_scores))))
    best_score = max(score for _, score in scores)
    best = next(candidate for candidate, score in scores if score == best_score)
    record = {
        "tuned": best,
        "tune_scores": [
            {**candidate, "score": round(score, 6)} for candidate, score in scores
        ],
        "tune_fits": len(scores) * len(splits),
        "tuning_time_s": round(time.perf_counter() - started, 3),
    }
    return best, record
