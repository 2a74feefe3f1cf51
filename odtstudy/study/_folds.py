"""The cross-validation splits of a study: a run's folds and a tuned
learner's inner folds are made the same way."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

__all__ = ["kfold_splits"]


def kfold_splits(y, n_folds: int, seed: int, task: str = "classification") -> list:
    """The ``(train, test)`` index pairs of ``n_folds`` shuffled folds:
    stratified for classification when every class has ``n_folds`` rows,
    plain k-fold otherwise (regression, or a class too small)."""
    y = np.asarray(y)
    _, counts = np.unique(y, return_counts=True)
    if task == "classification" and counts.min() >= n_folds:
        splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    else:
        splitter = KFold(n_splits=n_folds, shuffle=True, random_state=seed)
    return list(splitter.split(np.zeros(len(y)), y))
