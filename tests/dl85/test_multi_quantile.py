"""Several quantiles in one DL8.5 search (issue 30): each quantile's tree is
the one a single-quantile fit finds, and the optimum of a brute force."""

import math
import warnings

import numpy as np
import pytest
from bruteforce import optimal_loss

from odtstudy import export_text
from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Regressor

RTOL = 1e-9
NINE = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def pinball(y, tau):
    """Pinball loss of the rows ``y`` around their best constant (tried at
    every value of ``y``)."""
    if len(y) == 0:
        return 0.0
    return min(
        float(np.sum(np.where(y >= q, tau * (y - q), (1 - tau) * (q - y)))) for q in y
    )


def brute_force(X, y, tau, depth, min_sup=1):
    """Least summed pinball loss over the trees of depth <= ``depth``."""
    return optimal_loss(X, lambda rows: pinball(y[rows], tau), depth, min_sup)


def close(a, b):
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL)


def fit(quantile, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # quantile crossing
        return DL85Regressor(criterion="quantile", quantile=quantile, **params).fit(
            X, y
        )


def assert_equals_single_fits(multi, taus, X, y, **params):
    """Each quantile's objective and predictions are a single fit's."""
    assert len(multi.trees_) == len(taus)
    pred = multi.predict(X)
    assert pred.shape == (len(X), len(taus))
    for k, tau in enumerate(taus):
        single = fit(tau, X, y, **params)
        assert close(multi.objective_[k], single.objective_), tau
        # the same search per quantile: ties are broken the same way
        assert np.array_equal(pred[:, k], single.predict(X)), tau
        assert np.array_equal(multi.trees_[k].predict(X), single.predict(X))


def random_problem(seed, n, m=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m)).astype(np.uint8)
    y = rng.integers(0, 8, size=n).astype(float)  # ties on purpose
    return X, y


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_each_quantile_equals_brute_force_and_single_fit(depth, seed):
    X, y = random_problem(seed, n=24)
    taus = [0.7, 0.1, 0.5, 0.25, 0.9]  # any order
    multi = fit(taus, X, y, max_depth=depth)
    assert multi.optimal_ and multi.status_ == "optimal"
    assert multi.optimal_per_quantile_.tolist() == [True] * len(taus)
    for k, tau in enumerate(taus):
        assert close(multi.objective_[k], brute_force(X, y, tau, depth))
        assert close(multi.lower_bound_[k], multi.objective_[k])
        d = y - multi.predict(X)[:, k]
        assert close(
            float(np.sum(np.where(d >= 0, tau * d, (tau - 1) * d))), multi.objective_[k]
        )
    assert_equals_single_fits(multi, taus, X, y, max_depth=depth)


@pytest.mark.parametrize("seed", range(2))
def test_several_words_and_min_sup_equal_brute_force(seed):
    """Over 64 rows (covers of several words) and with min_sup, the
    quantiles out of order (each quadrant's scan of words starts again)."""
    X, y = random_problem(seed, n=150, m=4)
    taus = [0.5, 0.8, 0.2, 0.3]
    for params in ({"max_depth": 2}, {"max_depth": 2, "min_sup": 10}):
        multi = fit(taus, X, y, **params)
        for k, tau in enumerate(taus):
            expected = brute_force(X, y, tau, 2, params.get("min_sup", 1))
            assert close(multi.objective_[k], expected)
        assert_equals_single_fits(multi, taus, X, y, **params)


def test_weights_and_no_depth2_solver_equal_single_fits():
    """The paths where the depth-2 solver is not shared."""
    X, y = random_problem(5, n=40)
    w = np.random.default_rng(5).uniform(0.2, 2.0, size=len(y))
    taus = [0.3, 0.6]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        multi = DL85Regressor(criterion="quantile", quantile=taus, max_depth=3)
        multi.fit(X, y, sample_weight=w)
        for k, tau in enumerate(taus):
            single = DL85Regressor(criterion="quantile", quantile=tau, max_depth=3)
            assert close(multi.objective_[k], single.fit(X, y, w).objective_)
    plain = fit(taus, X, y, max_depth=3, use_depth2_solver=False)
    assert_equals_single_fits(plain, taus, X, y, max_depth=3, use_depth2_solver=False)


@pytest.mark.parametrize("name", ["osrt/servo", "osrt/yacht"])
def test_osrt_sets_nine_quantiles_equal_nine_single_fits(name):
    data = load_dataset(name)
    multi = fit(NINE, data.X, data.y, max_depth=3)
    assert multi.optimal_
    assert_equals_single_fits(multi, NINE, data.X, data.y, max_depth=3)


def test_numeric_data_through_threshold_columns():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 3))
    y = X[:, 0] * 2 + rng.normal(size=60)
    taus = [0.25, 0.75]
    multi = fit(taus, X, y, max_depth=2, thresholds=4)
    assert_equals_single_fits(multi, taus, X, y, max_depth=2, thresholds=4)


def test_quantile_crossing_is_reported():
    # the 0.2 tree splits on x0 and predicts 7 for the last row, the 0.8
    # tree splits on x1 and predicts 5 there
    X = np.array(
        [[0, 0], [0, 0], [1, 1], [0, 1], [0, 0], [0, 1], [0, 0], [1, 0]], dtype=np.uint8
    )
    y = np.array([5.0, 2.0, 9.0, 0.0, 0.0, 9.0, 2.0, 7.0])
    reg = DL85Regressor(criterion="quantile", quantile=[0.8, 0.2], max_depth=1)
    with pytest.warns(
        UserWarning, match=r"quantile 0\.2 above quantile 0\.8 on 1 rows"
    ):
        reg.fit(X, y)
    pred = reg.predict(X)
    assert reg.crossings_.tolist() == [
        [0, 0],
        [int(np.sum(pred[:, 1] > pred[:, 0])), 0],
    ]
    assert reg.crossings_[1, 0] == 1


def test_no_warning_without_crossing():
    X = np.array([[0], [0], [1], [1]], dtype=np.uint8)
    y = np.array([1.0, 2.0, 10.0, 12.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = DL85Regressor(criterion="quantile", quantile=[0.1, 0.9], max_depth=1)
        reg.fit(X, y)
    assert reg.crossings_.sum() == 0


def test_time_limit_keeps_valid_bounds():
    data = load_dataset("osrt/enb-cool")
    limit = 0.05
    multi = fit(NINE, data.X, data.y, max_depth=4, time_limit=limit)
    assert not multi.optimal_ and multi.status_ == "timeout"
    assert not multi.optimal_per_quantile_.all()
    assert multi.fit_time_ < limit + 5.0  # generous: shared, loaded machines
    for k, tau in enumerate(NINE):
        optimum = fit(tau, data.X, data.y, max_depth=4).objective_
        assert multi.lower_bound_[k] <= optimum * (1 + RTOL)
        assert multi.objective_[k] >= optimum * (1 - RTOL)
        if multi.optimal_per_quantile_[k]:
            assert close(multi.objective_[k], optimum)
        # the tree returned has the loss reported
        d = data.y - multi.predict(data.X)[:, k]
        assert close(
            float(np.sum(np.where(d >= 0, tau * d, (tau - 1) * d))), multi.objective_[k]
        )


def test_scalar_quantile_is_unchanged_and_refit_forgets_the_trees():
    X, y = random_problem(0, n=30)
    reg = fit([0.2, 0.8], X, y, max_depth=2)
    assert reg.n_trees_ == 2 and reg.tree_ is reg.trees_[0]
    reg.set_params(quantile=0.2).fit(X, y)
    assert reg.predict(X).shape == (len(X),)
    assert isinstance(reg.objective_, float)
    for name in ("trees_", "crossings_", "optimal_per_quantile_"):
        assert not hasattr(reg, name)


def test_export_text_of_each_tree():
    data = load_dataset("osrt/servo")
    reg = fit([0.1, 0.5, 0.9], data.X, data.y, max_depth=2)
    for k, tree in enumerate(reg.trees_):
        text = export_text(tree, feature_names=data.feature_names)
        assert text.count("value:") == int(np.sum(tree.feature < 0))
        for f in tree.feature[tree.feature >= 0]:
            assert data.feature_names[f] in text
        for value in np.unique(reg.predict(data.X)[:, k]):
            assert f"value: {value:.2f}" in text


@pytest.mark.parametrize(
    "quantile, extra, match",
    [
        ([0.2, 1.0], {}, r"quantile=.*\(0, 1\)"),
        ([0.0, 0.5], {}, r"quantile=.*\(0, 1\)"),
        ([0.3, 0.3], {}, r"quantile=.*distinct"),
        ([], {}, r"quantile=\[\] is empty"),
        (
            [0.2, 0.8],
            {"criterion": "squared_error"},
            r"quantile=.*criterion='quantile'",
        ),
        ([0.2, 0.8], {"max_error": 3.0}, r"max_error=3.0 .*quantile="),
        (["a", 0.5], {}, r"quantile=.*number"),
    ],
)
def test_bad_quantile_lists_are_refused_by_name(quantile, extra, match):
    X, y = random_problem(0, n=10)
    params = {"criterion": "quantile", **extra}
    with pytest.raises(ValueError, match=match):
        DL85Regressor(quantile=quantile, **params).fit(X, y)
