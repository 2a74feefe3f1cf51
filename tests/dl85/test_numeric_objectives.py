"""Every leaf objective on numeric data (issue 29), against a brute force.

The numeric search takes the 0/1 search's objective plug-in, so each
objective (misclassification, weights, cost matrix, ``fast_error_function``,
``error_function``, squared, absolute and quantile error, and a
:class:`~odtstudy.dl85.LeafObjective` defined here) must reach, with
``thresholds="all"``:

- the optimum of an exhaustive search over every ``x[j] <= t`` split
  (depth 1-2, small random tables with repeated values);
- the optimum of the 0/1 search on the every-midpoint threshold columns
  (depth 2-3);
- a tree whose leaves, re-priced from the rows they hold, sum to the
  reported objective (also after a time-out).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from bruteforce import optimal_loss

import odtstudy.dl85.engine._numeric_fit as nf
from odtstudy.dl85 import DL85Classifier, DL85Predictor, DL85Regressor, LeafObjective

RTOL = 1e-9


# --------------------------------------------------------------------------
# A new leaf objective, defined here: the Brier loss of class probabilities
# --------------------------------------------------------------------------


class BrierObjective(LeafObjective):
    """Each leaf predicts class probabilities ``p``; a row of class ``c``
    costs ``||e_c - p||^2``. The best ``p`` is the leaf's class shares, and
    the loss is ``W - sum_c W_c^2 / W`` (W: the leaf's weight): the Gini
    impurity times the weight, from the summed one-hot statistics."""

    monotone = True  # a minimum over p of non-negative per-row losses

    def __init__(self, n_classes=3, declare_worst=True):
        self.n_classes = n_classes
        self.declare_worst = declare_worst

    def row_stats(self, y, sample_weight):
        w = np.ones(len(y)) if sample_weight is None else sample_weight
        out = np.zeros((len(y), self.n_classes))
        out[np.arange(len(y)), y] = w
        return out

    def loss(self, stats):
        total = stats.sum(axis=1)
        safe = np.where(total > 0, total, 1.0)
        return np.maximum(total - (stats**2).sum(axis=1) / safe, 0.0)

    def value(self, stats):
        return float(np.argmax(stats))

    def worst(self, y, sample_weight):
        # ||e_c - p||^2 <= 2 for any probability vector p
        if not self.declare_worst:
            return None
        return 2.0 * (np.ones(len(y)) if sample_weight is None else sample_weight)


class UndeclaredBrier(BrierObjective):
    """The same loss without its declarations: no bound may need them."""

    monotone = False


# --------------------------------------------------------------------------
# Leaf losses of a set of rows (the oracle's), per objective
# --------------------------------------------------------------------------


def _weights(w, rows):
    return np.ones(len(rows)) if w is None else w[rows]


def _pinball(y, w, q, tau):
    d = y - q
    return float(np.sum(w * np.where(d >= 0, tau * d, (tau - 1.0) * d)))


def class_leaf(y, k, w=None, cost=None):
    def leaf(rows):
        sup = np.bincount(y[rows], weights=_weights(w, rows), minlength=k)
        if cost is not None:
            return float((cost @ sup).min())
        return float(sup.sum() - sup.max())

    return leaf


def order_leaf(y, w, tau, scale):
    """Pinball loss (``scale`` 2 at tau 0.5: the absolute error) around the
    best constant, which is one of the rows' targets."""

    def leaf(rows):
        if len(rows) == 0:
            return 0.0
        ww = _weights(w, rows)
        return scale * min(_pinball(y[rows], ww, q, tau) for q in y[rows])

    return leaf


def squared_leaf(y, w):
    def leaf(rows):
        ww = _weights(w, rows)
        if ww.sum() <= 0:
            return 0.0
        mean = np.average(y[rows], weights=ww)
        return float(np.sum(ww * (y[rows] - mean) ** 2))

    return leaf


def fast_loss(sup):
    """A loss of class supports no built-in objective has: misclassified
    weight plus 0.5 per class present beyond the first."""
    present = int(np.count_nonzero(sup > 0))
    return float(sup.sum() - sup.max() + 0.5 * max(present - 1, 0)), int(np.argmax(sup))


def batched_fast(batch):
    if np.ndim(batch) == 1:
        return fast_loss(batch)
    pairs = [fast_loss(row) for row in batch]
    return [p[0] for p in pairs], [p[1] for p in pairs]


batched_fast.batched = True


def rows_loss_of(z):
    """An ``error_function``: absolute deviations of a hidden value from
    their mean (not monotone in the rows: no bound may assume it)."""

    def loss(rows):
        return float(np.abs(z[rows] - z[rows].mean()).sum()) if len(rows) else 0.0

    return loss


# --------------------------------------------------------------------------
# The problems: one estimator per objective, its target and its oracle
# --------------------------------------------------------------------------


def problem(seed, n=14, m=3, levels=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, m)).astype(float)
    X[:, -1] += rng.integers(0, 2, size=n) * 0.5  # more distinct values
    y_class = rng.integers(0, 3, size=n)
    y_real = rng.integers(0, 6, size=n).astype(float) + rng.choice([0.0, 0.25], n)
    w = np.round(rng.uniform(0.2, 2.0, size=n), 1) + 0.05  # not integers
    return X, y_class, y_real, w


COST = np.array([[0.0, 1.0, 3.0], [2.0, 0.0, 1.0], [1.0, 4.0, 0.0]])

OBJECTIVES = [
    "error",
    "weighted",
    "cost",
    "fast",
    "fast_batched",
    "fast_weighted",
    "rows",
    "squared",
    "squared_weighted",
    "absolute",
    "absolute_weighted",
    "quantile",
    "quantile_weighted",
    "leaf_objective",
    "leaf_objective_weighted",
    "leaf_objective_undeclared",
]


def case(name, X, y_class, y_real, w, depth, **options):
    """(estimator, y, fit keywords, leaf loss of a set of rows)."""
    weighted = name.endswith("_weighted")
    sw = w if weighted else None
    fit = {"sample_weight": sw} if weighted else {}
    common = {"max_depth": depth, "thresholds": "all", **options}
    k = 3
    if name in ("error", "weighted"):
        fit = {"sample_weight": w} if name == "weighted" else {}
        leaf = class_leaf(y_class, k, w if name == "weighted" else None)
        return DL85Classifier(**common), y_class, fit, leaf
    if name == "cost":
        est = DL85Classifier(cost_matrix=COST, **common)
        return est, y_class, fit, class_leaf(y_class, k, cost=COST)
    if name.startswith("fast"):
        fn = batched_fast if name == "fast_batched" else fast_loss

        def leaf(rows):
            sup = np.bincount(y_class[rows], weights=_weights(sw, rows), minlength=k)
            return fast_loss(sup)[0]

        return DL85Classifier(fast_error_function=fn, **common), y_class, fit, leaf
    if name == "rows":
        z = y_real * 1.5 - X[:, 0]
        est = DL85Predictor(error_function=rows_loss_of(z), **common)
        return est, None, {}, rows_loss_of(z)
    if name.startswith("squared"):
        est = DL85Regressor(criterion="squared_error", **common)
        return est, y_real, fit, squared_leaf(y_real, sw)
    if name.startswith("absolute"):
        est = DL85Regressor(criterion="absolute_error", **common)
        return est, y_real, fit, order_leaf(y_real, sw, 0.5, 2.0)
    if name.startswith("quantile"):
        tau = 0.7 if weighted else 0.2
        est = DL85Regressor(criterion="quantile", quantile=tau, **common)
        return est, y_real, fit, order_leaf(y_real, sw, tau, 1.0)
    objective = (
        UndeclaredBrier(k, declare_worst=False)
        if name.endswith("undeclared")
        else BrierObjective(k)
    )

    def brier(rows):
        return float(
            objective.loss(objective.row_stats(y_class, sw)[rows].sum(0)[None])[0]
        )

    est = DL85Predictor(objective=objective, **common)
    return est, y_class, fit, brier


@pytest.fixture
def search_path(monkeypatch):
    """``search_path("numeric")`` sends numeric data to the numeric search,
    ``"columns"`` to the 0/1 search on every-midpoint threshold columns."""

    def choose(path):
        limit = -1 if path == "numeric" else 10**9
        monkeypatch.setattr(nf, "BITSET_MAX_THRESHOLDS", limit)
        monkeypatch.setattr(nf, "BITSET_MAX_MEAN", limit)

    return choose


def fitted(est, X, y, fit, numeric):
    est.fit(X, y, **fit) if y is not None else est.fit(X, **fit)
    assert ("thresholds_evaluated" in est.stats_) == numeric
    return est


def brute_force(X, leaf, depth):
    """Minimum summed leaf loss over trees of depth <= ``depth`` splitting
    on ``x[j] <= t`` between any two distinct values."""
    return optimal_loss(X, leaf, depth)


def tree_loss(est, X, leaf):
    """The returned tree's loss, each leaf re-priced from its rows."""
    ids = est.tree_.apply(X)
    return sum(leaf(np.flatnonzero(ids == u)) for u in np.unique(ids))


def close(a, b):
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", OBJECTIVES)
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_numeric_search_equals_brute_force(search_path, name, depth, seed):
    search_path("numeric")
    X, y_class, y_real, w = problem(seed)
    est, y, fit, leaf = case(name, X, y_class, y_real, w, depth)
    fitted(est, X, y, fit, numeric=True)
    expected = brute_force(X, leaf, depth)
    assert est.optimal_
    assert close(est.objective_, expected), (est.objective_, expected)
    assert close(tree_loss(est, X, leaf), est.objective_)


@pytest.mark.parametrize("name", OBJECTIVES)
@pytest.mark.parametrize("depth", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_numeric_search_equals_the_01_search_on_threshold_columns(
    search_path, name, depth, seed
):
    X, y_class, y_real, w = problem(100 + seed, n=24, levels=7)
    objectives = []
    for path in ("numeric", "columns"):
        search_path(path)
        est, y, fit, leaf = case(name, X, y_class, y_real, w, depth)
        fitted(est, X, y, fit, numeric=path == "numeric")
        assert est.optimal_
        assert close(tree_loss(est, X, leaf), est.objective_)
        objectives.append(est.objective_)
    assert close(*objectives), objectives


@pytest.mark.parametrize("name", OBJECTIVES)
def test_interval_bounds_do_not_change_the_optimum(search_path, name):
    """min_sup=2 switches the interval bounds off; with min_sup=1 they are
    on (for the objectives that declare monotone): same optimum as the
    brute force under each min_sup."""
    search_path("numeric")
    X, y_class, y_real, w = problem(7, n=20, levels=6)
    for min_sup in (1, 2):
        est, y, fit, leaf = case(name, X, y_class, y_real, w, 2, min_sup=min_sup)
        fitted(est, X, y, fit, numeric=True)

        def sized_leaf(rows, leaf=leaf, min_sup=min_sup):
            return leaf(rows) if len(rows) >= min_sup else math.inf

        assert close(est.objective_, brute_force(X, sized_leaf, 2))


@pytest.mark.parametrize("name", OBJECTIVES)
def test_time_limit_returns_a_tree_of_the_reported_loss(search_path, name):
    search_path("numeric")
    rng = np.random.default_rng(3)
    n = 160
    X = rng.normal(size=(n, 4)).round(3)
    y_class = (X[:, 0] + rng.normal(size=n) > 0).astype(int) + (X[:, 1] > 1)
    y_real = (X[:, 2] * 3 + rng.normal(size=n)).round(2)
    w = rng.uniform(0.2, 2.0, size=n)
    est, y, fit, leaf = case(name, X, y_class, y_real, w, 4, time_limit=0.05)
    fitted(est, X, y, fit, numeric=True)
    assert est.tree_ is not None
    assert close(tree_loss(est, X, leaf), est.objective_)
    assert est.lower_bound_ <= est.objective_ * (1 + RTOL) + RTOL


def test_leaf_objective_on_01_data_equals_brute_force():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(30, 5)).astype(float)
    y = rng.integers(0, 3, size=30)
    for objective in (BrierObjective(), UndeclaredBrier(declare_worst=False)):
        est = DL85Predictor(max_depth=2, objective=objective).fit(X, y)
        stats = objective.row_stats(y, None)

        def leaf(rows, objective=objective, stats=stats):
            return float(objective.loss(stats[rows].sum(0)[None])[0])

        assert close(est.objective_, brute_force(X, leaf, 2))
        assert close(tree_loss(est, X, leaf), est.objective_)
        # each leaf predicts objective.value of its statistics
        ids = est.tree_.apply(X)
        expected = [objective.value(stats[ids == u].sum(0)) for u in ids]
        assert est.predict(X).tolist() == expected


def test_python_losses_returning_nan_are_named(search_path):
    search_path("numeric")
    X, y_class, _, _ = problem(5, n=30, levels=8)

    def nan_fast(sup):
        return math.nan, 0

    with pytest.raises(ValueError, match="fast_error_function"):
        DL85Classifier(max_depth=2, thresholds="all", fast_error_function=nan_fast).fit(
            X, y_class
        )
    with pytest.raises(ValueError, match="error_function"):
        DL85Predictor(
            max_depth=2, thresholds="all", error_function=lambda rows: math.nan
        ).fit(X)

    class Negative(BrierObjective):
        def loss(self, stats):
            return -np.ones(len(stats))

    with pytest.raises(ValueError, match=r"Negative\.loss"):
        DL85Predictor(max_depth=2, thresholds="all", objective=Negative()).fit(
            X, y_class
        )


@pytest.mark.parametrize("quantile", [0.0, 1.0, 1.5, -0.2])
def test_quantile_outside_the_open_interval_is_refused(quantile):
    X, _, y_real, _ = problem(0)
    with pytest.raises(ValueError, match="quantile"):
        DL85Regressor(criterion="quantile", quantile=quantile, thresholds="all").fit(
            X, y_real
        )


def test_leaf_objective_statistics_are_checked():
    X, y_class, _, _ = problem(0)

    class WrongShape(BrierObjective):
        def row_stats(self, y, sample_weight):
            return np.ones(len(y))

    with pytest.raises(ValueError, match="row_stats"):
        DL85Predictor(objective=WrongShape(), thresholds="all").fit(X, y_class)
    with pytest.raises(ValueError, match="exactly one"):
        DL85Predictor(objective=BrierObjective(), error_function=len).fit(X, y_class)
