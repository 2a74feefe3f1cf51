"""DL8.5 on numeric features (issue 19) against ConTree (``pycontree``).

ConTree (Brița, van der Linden, Demirović, 2025) finds optimal trees over
every threshold of numeric features; run with ``max_gap=0`` it is exact, so
wherever both it and ``DL85Classifier(thresholds="all")`` prove optimality
their training misclassifications must be equal (any threshold and every
midpoint give the same partitions of the training rows). Where only ConTree
proves, its optimum must lie within DL8.5's ``[lower_bound_, objective_]``.

Needs ``pycontree`` (``pip install "odtstudy[external]"``); skipped without.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier

pytestmark = pytest.mark.bench

LIMIT = 60.0

CASES = [
    ("uci/iris", 2),
    ("uci/iris", 3),
    ("uci/wine", 2),
    ("uci/wine", 3),
    ("uci/monk1", 2),
    ("uci/monk1", 3),
    ("uci/balance-scale", 2),
    ("uci/balance-scale", 3),
    ("uci/banknote", 2),
    ("uci/banknote", 3),
    ("uci/heart", 2),
    ("uci/heart", 3),
    ("uci/parkinsons", 2),
]

#: rows of ``uci/banknote`` kept (a seeded subsample keeps the test quick)
BANKNOTE_ROWS = 300


def _contree(X, y, depth):
    """(training misclassifications, proven) of ``pycontree.ConTree``."""
    pycontree = pytest.importorskip("pycontree")
    solver = pycontree.ConTree(max_depth=depth, max_gap=0, time_limit=LIMIT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver.fit(X, y)
    # ConTree's only signal that it stopped at its limit is a warning
    timed_out = any("time limit" in str(w.message) for w in caught)
    errors = int(np.sum(solver.predict(X) != y))
    return errors, not timed_out


def _load(name):
    data = load_dataset(name)
    X = np.asarray(data.X, dtype=np.float64)
    y = np.unique(data.y, return_inverse=True)[1].astype(np.int64)
    if name == "uci/banknote":
        rows = np.random.default_rng(0).choice(len(y), BANKNOTE_ROWS, replace=False)
        X, y = X[np.sort(rows)], y[np.sort(rows)]
    return X, y


def _compare(X, y, depth, label):
    expected, contree_proven = _contree(X, y, depth)
    clf = DL85Classifier(max_depth=depth, thresholds="all", time_limit=LIMIT)
    clf.fit(X, y)
    case = f"{label} depth={depth}: ConTree {expected} (proven={contree_proven}), "
    case += f"DL8.5 {clf.objective_} (status={clf.status_}, lb={clf.lower_bound_})"
    assert clf.tree_ is not None and clf.tree_.depth <= depth, case
    assert clf.training_error(X, y) == clf.objective_, case
    if contree_proven and clf.optimal_:
        assert clf.objective_ == expected, case
    elif contree_proven:
        assert clf.lower_bound_ <= expected <= clf.objective_, case
    elif clf.optimal_:
        assert clf.objective_ <= expected, case
    return clf, contree_proven


@pytest.mark.parametrize("name, depth", CASES, ids=[f"{n}-d{d}" for n, d in CASES])
def test_same_optimum_as_contree(name, depth):
    X, y = _load(name)
    clf, contree_proven = _compare(X, y, depth, name)
    # these sets are small: both prove well within the limit
    assert contree_proven, f"ConTree did not prove {name} at depth {depth}"
    assert clf.optimal_, (
        f"DL8.5 did not prove {name} at depth {depth} within {LIMIT} s "
        f"(objective {clf.objective_}, lower bound {clf.lower_bound_})"
    )


@pytest.mark.parametrize("seed", range(15))
def test_random_numeric_same_optimum_as_contree(seed):
    rng = np.random.default_rng(1000 + seed)
    n, m = int(rng.integers(20, 120)), int(rng.integers(1, 6))
    k = int(rng.integers(2, 4))
    # few levels per column (ties) and some continuous columns
    X = np.column_stack(
        [
            rng.choice(np.round(rng.normal(size=rng.integers(2, 8)) * 10, 1), size=n)
            if j % 2 == 0
            else rng.normal(size=n).round(3)
            for j in range(m)
        ]
    )
    y = rng.integers(0, k, size=n)
    y[0], y[-1] = 0, 1
    y = np.unique(y, return_inverse=True)[1]
    depth = 2 + seed % 2
    clf, contree_proven = _compare(X, y, depth, f"seed={seed} n={n} m={m} k={k}")
    assert contree_proven and clf.optimal_
