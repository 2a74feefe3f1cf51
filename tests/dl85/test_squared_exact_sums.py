"""DL85Regressor's squared error on short decimals: exact integer sums, so
the fast sums form certifies where rounded sums fell to the stable form."""

from fractions import Fraction

import numpy as np
import pytest

from odtstudy.dl85 import DL85Regressor
from odtstudy.dl85.engine._exact_sums import exact_target
from odtstudy.dl85.estimators import _regressor


def _loss(rows, y, w):
    """Weighted squared deviation of ``y[rows]`` from its mean, in rationals."""
    ws = [Fraction(v) for v in w[rows].tolist()]
    ys = [Fraction(v) for v in y[rows].tolist()]
    weight = sum(ws)
    if weight == 0:
        return Fraction(0)
    mean = sum(a * b for a, b in zip(ws, ys)) / weight
    return sum(a * (b - mean) ** 2 for a, b in zip(ws, ys))


def _optimum(X, y, w, depth):
    """Least squared error of a tree of depth <= ``depth`` on 0/1 ``X``."""
    memo = {}

    def best(rows, d):
        key = (rows.tobytes(), d)
        if key not in memo:
            value = _loss(rows, y, w)
            for j in range(X.shape[1]) if d > 0 and value > 0 else ():
                left, right = rows[X[rows, j] == 0], rows[X[rows, j] == 1]
                if len(left) and len(right):
                    value = min(value, best(left, d - 1) + best(right, d - 1))
            memo[key] = value
        return memo[key]

    return best(np.arange(len(y)), depth)


def _achieved(reg, X, y, w):
    """The tree's squared error, in rationals."""
    leaves = reg.tree_.apply(X)
    return sum(_loss(np.flatnonzero(leaves == v), y, w) for v in np.unique(leaves))


def _todays_path(monkeypatch):
    """Fits as before exact sums: rounded sums, and the stable form when
    their bound does not certify."""
    monkeypatch.setattr(_regressor, "exact_target", lambda y, w: None)


def _stable_form(monkeypatch):
    """Fits in the stable form only."""
    monkeypatch.setattr(_regressor, "sums_certify", lambda *args: False)


def _data(seed, n=30, m=5, digits=2, weighted=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, m))
    y = np.round(rng.normal(50.0, 20.0, size=n), digits)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else np.ones(n)
    return X, y, w


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("digits", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_decimal_targets_equal_bruteforce_in_the_fast_form(
    seed, digits, depth, weighted, monkeypatch
):
    X, y, w = _data(seed + 10 * digits, digits=digits, weighted=weighted)
    weights = w if weighted else None
    exact = exact_target(y, weights)
    assert exact is not None
    assert exact.scale == 10.0**-digits
    reg = DL85Regressor(max_depth=depth).fit(X, y, sample_weight=weights)
    optimum = float(_optimum(X, y, w, depth))
    assert reg.optimal_
    assert not reg.stats_.get("stable_form", False)
    assert reg.objective_ == pytest.approx(optimum, rel=1e-9)
    assert float(_achieved(reg, X, y, w)) == pytest.approx(optimum, rel=1e-9)
    _stable_form(monkeypatch)
    stable = DL85Regressor(max_depth=depth).fit(X, y, sample_weight=weights)
    assert stable.stats_["stable_form"]
    assert reg.objective_ == pytest.approx(stable.objective_, rel=1e-9)


@pytest.mark.parametrize("thresholds", ["all", 4])
def test_numeric_search_on_decimals_equals_bruteforce(thresholds):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, size=(25, 2)).astype(float)
    y = np.round(rng.uniform(0, 10, size=25), 1)
    reg = DL85Regressor(max_depth=2, thresholds=thresholds).fit(X, y)
    onehot = np.column_stack([X[:, j] > t for j in range(2) for t in (0, 1, 2)])
    optimum = float(_optimum(onehot.astype(int), y, np.ones(25), 2))
    assert not reg.stats_.get("stable_form", False)
    assert reg.objective_ == pytest.approx(optimum, rel=1e-9)


def _near_perfect():
    """A depth-2 tree explains y up to a noise in the last digits: the
    optimum is 1e-5 of the total sum of squares (the exact sums certify
    above about 7e-7 of it)."""
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(60, 4))
    step = 10.0 * X[:, 0] + 3.0 * (X[:, 0] == X[:, 1])
    y = np.round(step + 0.01 * rng.integers(0, 6, size=60), 2)
    return X, y


def test_a_near_perfect_fit_certifies_in_the_fast_form(monkeypatch):
    X, y = _near_perfect()
    reg = DL85Regressor(max_depth=2).fit(X, y)
    optimum = float(_optimum(X, y, np.ones(len(y)), 2))
    assert 0 < optimum < 1e-4 * float(np.sum((y - y.mean()) ** 2))
    assert not reg.stats_.get("stable_form", False)
    assert reg.objective_ == pytest.approx(optimum, rel=1e-9)
    _todays_path(monkeypatch)
    before = DL85Regressor(max_depth=2).fit(X, y)
    assert before.stats_["stable_form"]  # rounded sums did not certify
    assert before.objective_ == pytest.approx(optimum, rel=1e-9)


def test_a_fit_too_near_perfect_for_exact_sums_takes_the_stable_form():
    # the leaves' evaluation error, 3.1 u of the total sum of squares,
    # exceeds 1e-9 of an optimum 6e-11 of it
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(60, 4))
    step = 1000.0 * X[:, 0] + 300.0 * (X[:, 0] == X[:, 1])
    y = np.round(step + 0.01 * rng.integers(0, 2, size=60), 2)
    assert exact_target(y) is not None
    reg = DL85Regressor(max_depth=2).fit(X, y)
    optimum = float(_optimum(X, y, np.ones(len(y)), 2))
    assert reg.stats_["stable_form"]
    assert reg.objective_ == pytest.approx(optimum, rel=1e-9)
    assert float(_achieved(reg, X, y, np.ones(len(y)))) == pytest.approx(
        optimum, rel=1e-9
    )


def test_a_perfect_fit_certifies():
    X, y = _near_perfect()
    y = np.round(10.0 * X[:, 0] + 0.5 * X[:, 1], 1)
    reg = DL85Regressor(max_depth=2).fit(X, y)
    assert reg.objective_ == 0.0
    assert not reg.stats_.get("stable_form", False)


def _not_exact():
    """Data whose sums cannot be exact, and why."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(200, 4))
    decimals = np.round(rng.normal(5.0, 2.0, size=200), 2)
    return X, {
        "floats": (rng.normal(5.0, 2.0, size=200), None),
        "huge": (np.round(rng.normal(0, 1e8, size=200)), None),
        "weights": (decimals, rng.uniform(0.5, 2.0, size=200)),
        "computed": (decimals / 3.0, None),
    }


@pytest.mark.parametrize("case", ["floats", "huge", "weights", "computed"])
@pytest.mark.parametrize("depth", [2, 3])
def test_other_targets_keep_todays_path(case, depth, monkeypatch):
    X, cases = _not_exact()
    y, w = cases[case]
    assert exact_target(y, w) is None
    reg = DL85Regressor(max_depth=depth).fit(X, y, sample_weight=w)
    _todays_path(monkeypatch)
    before = DL85Regressor(max_depth=depth).fit(X, y, sample_weight=w)
    assert reg.objective_ == before.objective_
    assert reg.stats_.get("stable_form") == before.stats_.get("stable_form")
    assert np.array_equal(reg.predict(X), before.predict(X))


def test_exact_target_values():
    y = np.array([1.25, -0.5, 3.0, 2.75])
    exact = exact_target(y, np.array([1.0, 2.0, 1.0, 1.0]))
    assert exact.scale == 0.01
    assert np.array_equal(
        exact.z + 120.0,  # weighted mean 120
        [125.0, -50.0, 300.0, 275.0],
    )
    assert exact.offset < 1e-20
    assert 0 < exact.purity_tol <= 0.25
    assert exact_target(y, np.array([1.0, 0.5, 1.0, 1.0])) is None
    assert exact_target(np.array([1e-7, 2.0])) is None  # 7 digits
    assert exact_target(np.array([0.1 + 0.2, 0.3])) is None  # not a decimal


def test_enb_heat_depth_4_matches_streed_without_the_stable_form():
    pystreed = pytest.importorskip("pystreed")
    from odtstudy.datasets import load_dataset

    data = load_dataset("osrt/enb-heat")
    reg = DL85Regressor(max_depth=4).fit(data.X, data.y)
    ref = pystreed.STreeDRegressor(optimization_task="regression", max_depth=4)
    ref.fit(data.X, data.y)
    sse = float(np.sum((ref.predict(data.X) - data.y) ** 2))
    assert reg.optimal_
    assert not reg.stats_.get("stable_form", False)
    assert reg.objective_ == pytest.approx(sse, rel=1e-9)


def test_a_large_table_certifies_in_the_fast_form(monkeypatch):
    # 20k rows: the rounded sums' bound (K n u) exceeded 1e-9 of the optimum
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20000, 6))
    y = np.round(5.0 * X[:, 0] + 2.0 * X[:, 1] + rng.normal(size=20000), 2)
    reg = DL85Regressor(max_depth=2).fit(X, y)
    assert not reg.stats_.get("stable_form", False)
    _todays_path(monkeypatch)
    before = DL85Regressor(max_depth=2).fit(X, y)
    assert before.stats_["stable_form"]
    assert reg.objective_ == pytest.approx(before.objective_, rel=1e-9)
    assert np.array_equal(reg.predict(X), before.predict(X))


@pytest.mark.parametrize("name", ["osrt/yacht", "osrt/real-estate", "osrt/enb-cool"])
def test_osrt_sets_give_todays_trees(name, monkeypatch):
    from odtstudy.datasets import load_dataset

    data = load_dataset(name)
    assert exact_target(data.y) is not None
    reg = DL85Regressor(max_depth=3).fit(data.X, data.y)
    _todays_path(monkeypatch)
    before = DL85Regressor(max_depth=3).fit(data.X, data.y)
    assert not before.stats_.get("stable_form", False)
    assert reg.objective_ == pytest.approx(before.objective_, rel=1e-12)
    assert np.array_equal(reg.predict(data.X), before.predict(data.X))
