"""The splits of a study: how a run's test rows are chosen (the ``split``
of its record), and the cross-validation folds, made the same way for a
run's folds and a tuned learner's inner folds."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

__all__ = [
    "ALL_ROWS",
    "CROSS_VALIDATION",
    "SPLITS",
    "TEST_FILE",
    "kfold_splits",
    "split_of",
]

#: ``folds`` > 1: each run tests on one fold of the rows.
CROSS_VALIDATION = "cross-validation"
#: ``folds`` = 1: each run fits and scores on all the rows.
ALL_ROWS = "all-rows"
#: A user table with ``test_path``: each run fits on every row of the
#: training file and tests on the rows of the held-out test file.
TEST_FILE = "test-file"
SPLITS = (CROSS_VALIDATION, ALL_ROWS, TEST_FILE)


def split_of(n_folds, test_file: bool = False) -> str:
    """The split of a run with ``n_folds`` folds (or a held-out test file)."""
    if test_file:
        return TEST_FILE
    return CROSS_VALIDATION if n_folds > 1 else ALL_ROWS


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
