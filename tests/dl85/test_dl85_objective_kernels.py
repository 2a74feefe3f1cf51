"""The fast paths of the DL8.5 objectives against brute force: the cost
kernels per instruction set (integer and floating-point costs)."""

import numpy as np
import pytest
from test_dl85obj_bruteforce import brute

from odtstudy.dl85 import DL85Classifier

TOL = 1e-9


def _cost_leaf(y, w, cost):
    k = cost.shape[0]

    def leaf(rows):
        return float((cost @ np.bincount(y[rows], weights=w[rows], minlength=k)).min())

    return leaf


@pytest.mark.parametrize("isa", ["baseline", "popcnt", "avx2", "avx512"])
def test_two_class_cost_kernels_are_exact(isa):
    """Integer costs (int32 kernel) and real costs (double kernel), on
    several words and on the compacted covers of deeper trees."""
    from odtstudy.dl85 import _depth2

    if not _depth2.set_kernel_isa(isa):
        pytest.skip(f"this CPU lacks {isa}")
    rng = np.random.default_rng(7)
    try:
        for case in range(8):
            n = int(rng.integers(20, 260))
            X = rng.integers(0, 2, size=(n, 8)).astype(np.uint8)
            if case % 2:
                X = np.hstack([X, 1 - X])
            y = (X[:, 0] ^ X[:, 1] ^ (rng.random(n) < 0.3)).astype(int)
            y[0], y[-1] = 0, 1
            cost = rng.uniform(0.0, 6.0, size=(2, 2))
            if case < 4:
                cost = np.round(cost)
            depth = 2 if case < 6 else 3
            leaf = _cost_leaf(y, np.ones(n), cost)
            clf = DL85Classifier(max_depth=depth, cost_matrix=cost).fit(X, y)
            assert clf.stats_["kernel_isa"] == isa
            assert clf.objective_ == pytest.approx(brute(X, depth, leaf), abs=TOL)
            pred = clf.predict(X)
            assert np.sum(cost[pred, y]) == pytest.approx(clf.objective_, abs=TOL)
    finally:
        _depth2.set_kernel_isa("auto")


def test_large_integer_costs_fall_back_to_doubles():
    """Costs whose sums could overflow int32 use the double kernel."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(120, 8)).astype(np.uint8)
    y = rng.integers(0, 2, size=120)
    y[0], y[-1] = 0, 1
    cost = np.array([[0.0, 3e7], [2e7 + 1, 0.0]])
    clf = DL85Classifier(max_depth=2, cost_matrix=cost).fit(X, y)
    leaf = _cost_leaf(y, np.ones(120), cost)
    assert clf.objective_ == pytest.approx(brute(X, 2, leaf), rel=1e-12)
