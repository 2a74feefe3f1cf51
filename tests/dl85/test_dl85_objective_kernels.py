"""The fast paths of the DL8.5 objectives against brute force: the cost
kernels per instruction set (integer and floating-point costs); Python
losses that price a whole batch of leaves in one call; the order statistics
of unit-weight covers from popcounts and byte tables."""

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


def _cost_fn(cost):
    def error(weights):
        losses = cost @ weights
        return float(losses.min()), int(np.argmin(losses))

    return error


@pytest.mark.parametrize("isa", ["baseline", "popcnt", "avx2", "avx512"])
def test_two_class_cost_kernels_are_exact(isa):
    """Integer costs (int32 kernel), real costs (double kernel) and the same
    loss in Python (table kernel), on several words and on the compacted
    covers of deeper trees."""
    from odtstudy.dl85.engine import _depth2

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
            # the same loss in Python: table of priced counts, lookup kernel
            py = DL85Classifier(max_depth=depth, fast_error_function=_cost_fn(cost))
            assert py.fit(X, y).objective_ == pytest.approx(clf.objective_, abs=TOL)
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


def _batched_cost(cost, calls):
    """A cost-matrix ``fast_error_function`` that also prices 2-D batches."""

    def error(weights):
        calls.append(np.ndim(weights))
        losses = np.asarray(weights) @ cost.T
        return losses.min(axis=-1), losses.argmin(axis=-1)

    error.batched = True
    return error


@pytest.mark.parametrize("k", [2, 3])
def test_batched_fast_error_function_is_called_per_batch(k):
    from odtstudy.dl85 import DL85Predictor

    rng = np.random.default_rng(k)
    X = rng.integers(0, 2, size=(150, 9)).astype(np.uint8)
    y = rng.integers(0, k, size=150)
    cost = rng.uniform(0.5, 4.0, size=(k, k))
    np.fill_diagonal(cost, 0.0)
    calls = []
    est = DL85Predictor(max_depth=3, fast_error_function=_batched_cost(cost, calls))
    est.fit(X, y)
    ref = DL85Classifier(max_depth=3, cost_matrix=cost).fit(X, y)
    assert est.objective_ == pytest.approx(ref.objective_, abs=TOL)
    assert est.objective_ == pytest.approx(
        brute(X, 3, _cost_leaf(y, np.ones(150), cost)), abs=TOL
    )
    # the search prices 2-D batches; 1-D calls are the leaves' labels
    assert calls.count(2) >= 1
    assert calls.count(1) <= est.tree_.node_count


def test_batched_fast_error_function_is_checked():
    from odtstudy.dl85 import DL85Predictor

    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]] * 5, dtype=np.uint8)
    y = np.array([0, 1, 1, 0] * 5)

    def short(weights):
        w = np.atleast_2d(weights)
        return w[:1, 0], np.zeros(1, dtype=int)

    short.batched = True
    with pytest.raises(ValueError, match="one loss and one label per row"):
        DL85Predictor(max_depth=2, fast_error_function=short).fit(X, y)

    def negative(weights):
        w = np.atleast_2d(weights)
        return -w[:, 0] - 1.0, np.zeros(len(w), dtype=int)

    negative.batched = True
    with pytest.raises(ValueError, match="non-negative"):
        DL85Predictor(max_depth=2, fast_error_function=negative).fit(X, y)

    def not_a_number(weights):
        w = np.atleast_2d(weights)
        return np.full(len(w), np.nan), np.zeros(len(w), dtype=int)

    not_a_number.batched = True
    with pytest.raises(ValueError, match="finite, non-negative"):
        DL85Classifier(max_depth=2, fast_error_function=not_a_number).fit(X, y)

    def bad_label(weights):
        w = np.atleast_2d(np.asarray(weights, dtype=float))
        if np.ndim(weights) == 1:
            return float(w[0, 0]), 7
        return w[:, 0], np.full(len(w), 7)

    bad_label.batched = True
    # labels are checked on the leaves of the returned tree
    with pytest.raises(ValueError, match="returned label 7"):
        DL85Classifier(max_depth=2, fast_error_function=bad_label).fit(X, y)


@pytest.mark.parametrize(
    ("criterion", "tau"),
    [("absolute_error", 0.5), ("quantile", 0.3), ("quantile", 0.9)],
)
def test_order_statistics_from_byte_tables_are_exact(criterion, tau):
    """Unit weights (popcounts and byte tables of y) agree with explicit unit
    weights (a pass over the rows) and with brute force, on several words."""
    from test_dl85obj_bruteforce import absolute_loss, pinball_loss

    from odtstudy.dl85 import DL85Regressor

    rng = np.random.default_rng(11)
    for n, m, depth in ((150, 7, 2), (300, 10, 3), (90, 6, 3)):
        X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
        y = np.round(X[:, 0] * 2 + X[:, 1] + rng.normal(size=n), 1)
        kw = {"criterion": criterion, "max_depth": depth}
        if criterion == "quantile":
            kw["quantile"] = tau
        fast = DL85Regressor(**kw).fit(X, y)
        rows = DL85Regressor(**kw).fit(X, y, sample_weight=np.ones(n))
        assert fast.objective_ == pytest.approx(rows.objective_, abs=1e-9)
        if depth == 2:
            ones = np.ones(n)
            leaf = absolute_loss(y, ones) if tau == 0.5 else pinball_loss(y, ones, tau)
            assert fast.objective_ == pytest.approx(brute(X, depth, leaf), abs=1e-9)


@pytest.mark.parametrize("isa", ["baseline", "auto"])
@pytest.mark.parametrize("min_sup", [1, 4, 25])
def test_depth2_order_statistics_solver_is_exact(isa, min_sup):
    """The depth-2 solver of absolute / pinball losses (packed rows, pair
    counts, quadrant quantiles over several words; ``baseline`` packs the
    rows without BMI2) against the row-by-row path of explicit unit weights
    and, at depth 2, brute force; ties in y, x / not-x and repeated columns."""
    from test_dl85obj_bruteforce import pinball_loss

    from odtstudy.dl85 import DL85Regressor
    from odtstudy.dl85.engine import _depth2

    if not _depth2.set_kernel_isa(isa):
        pytest.skip(f"this CPU lacks {isa}")
    rng = np.random.default_rng(5 + min_sup)
    try:
        for case in range(6):
            n = int(rng.integers(65, 400))
            X = rng.integers(0, 2, size=(n, 5)).astype(np.uint8)
            X[: n // 3, 4] = 1
            X = np.hstack([X, 1 - X[:, :2], X[:, 2:3]])
            y = np.round(X[:, 0] * 3 - X[:, 1] * X[:, 2] + rng.normal(size=n), 0)
            tau = (0.5, 0.1, 0.3, 0.75, 0.5, 0.95)[case]
            depth = 2 if case < 3 else 3
            kw = {"max_depth": depth, "min_sup": min_sup}
            if tau == 0.5:
                kw["criterion"] = "absolute_error"
            else:
                kw.update(criterion="quantile", quantile=tau)
            fast = DL85Regressor(**kw).fit(X, y)
            assert fast.stats_["depth2_calls"] >= 1
            rows = DL85Regressor(**kw).fit(X, y, sample_weight=np.ones(n))
            assert fast.objective_ == pytest.approx(rows.objective_, abs=1e-7)
            pred = fast.predict(X)
            d = y - pred
            again = np.sum(np.where(d >= 0, tau * d, (tau - 1) * d))
            if tau == 0.5:
                again *= 2
            assert again == pytest.approx(fast.objective_, abs=1e-7)
            if depth == 2:
                leaf = pinball_loss(y, np.ones(n), tau)
                scale = 2 if tau == 0.5 else 1
                expected = scale * brute(X, depth, leaf, min_sup)
                assert fast.objective_ == pytest.approx(expected, abs=1e-7)
    finally:
        _depth2.set_kernel_isa("auto")
