"""BinOCT / OCT optima against brute force, CP4IM subsets, DL8.5 and each other."""

import bruteforce
import numpy as np
import pytest

from odtstudy.datasets import load_dataset
from odtstudy.milp import BinOCTClassifier, OCTClassifier

LEARNERS = [BinOCTClassifier, OCTClassifier]


def _random_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 11))
    p = int(rng.integers(1, 3))
    k = int(rng.integers(2, 4))
    if seed % 2:
        X = rng.normal(size=(n, p)).round(2)
    else:
        X = rng.integers(0, 4, size=(n, p)).astype(float)
    y = rng.integers(0, k, size=n)
    y[:2] = [0, 1]  # at least two classes
    depth = 1 + seed % 2
    return X, y, depth


def _check_exact(est, X, y, expected):
    wrong = int(np.sum(est.predict(X) != y))
    assert est.optimal_ and est.status_ == "optimal"
    assert est.objective_ == expected == wrong
    assert est.lower_bound_ == expected
    assert est.stats_["milp_errors"] == pytest.approx(expected, abs=1e-6)
    assert est.tree_.depth <= est.max_depth


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("learner", LEARNERS)
def test_random_tiny_data_matches_brute_force(learner, seed):
    X, y, depth = _random_case(seed)
    expected = bruteforce.optimal_error(X, np.unique(y, return_inverse=True)[1], depth)
    solver = "highs" if seed % 3 == 0 else "cbc"
    est = learner(max_depth=depth, solver=solver, warm_start=seed % 4 != 1)
    _check_exact(est.fit(X, y), X, y, expected)


@pytest.mark.parametrize("seed", range(3))
def test_oct_min_samples_leaf_matches_brute_force(seed):
    X, y, _ = _random_case(seed + 20)
    expected = bruteforce.optimal_error(X, y, 2, min_sup=2)
    est = OCTClassifier(max_depth=2, min_samples_leaf=2, solver="highs").fit(X, y)
    _check_exact(est, X, y, expected)
    assert est.tree_.n_samples[est.tree_.feature == -1].min() >= 2


def test_binoct_min_samples_leaf_is_respected():
    X, y, _ = _random_case(21)
    est = BinOCTClassifier(max_depth=2, min_samples_leaf=3).fit(X, y)
    assert est.tree_.n_samples[est.tree_.feature == -1].min() >= 3
    assert est.objective_ >= bruteforce.optimal_error(X, y, 2, min_sup=3)


def _cp4im_subset(name, n_rows, n_features):
    data = load_dataset(name)
    X, y = data.X[:n_rows, :n_features], data.y[:n_rows]
    return X.astype(float), np.unique(y, return_inverse=True)[1]


@pytest.mark.parametrize("name", ["vote", "anneal", "hepatitis"])
@pytest.mark.parametrize("learner", LEARNERS)
def test_tiny_cp4im_subsets_match_brute_force(learner, name):
    X, y = _cp4im_subset(name, 40, 8)
    expected = bruteforce.optimal_error(X, y, 2)
    _check_exact(learner(max_depth=2).fit(X, y), X, y, expected)


@pytest.mark.parametrize("learner", LEARNERS)
def test_zoo_depth_2_is_separable(learner):
    data = load_dataset("zoo-1")  # pydl8.5's proven depth-2 optimum: 0
    est = learner(max_depth=2, solver="highs").fit(data.X, data.y)
    _check_exact(est, data.X, data.y, 0)


@pytest.mark.parametrize("learner", LEARNERS)
def test_both_solvers_prove_the_same_optimum(learner):
    X, y = _cp4im_subset("anneal", 40, 8)
    cbc = learner(max_depth=2, solver="cbc").fit(X, y)
    highs = learner(max_depth=2, solver="highs").fit(X, y)
    assert cbc.optimal_ and highs.optimal_
    assert cbc.objective_ == highs.objective_
    assert cbc.objective_ == bruteforce.optimal_error(X, y, 2)


def test_binoct_and_oct_agree_on_numeric_data():
    data = load_dataset("uci/iris")
    X, y = data.X[::5], data.y[::5]  # 30 rows, 4 numeric features
    expected = bruteforce.optimal_error(X, np.unique(y, return_inverse=True)[1], 2)
    for learner in LEARNERS:
        est = learner(max_depth=2, solver="highs").fit(X, y)
        _check_exact(est, X, y, expected)


def test_agrees_with_dl85_when_available():
    dl85 = pytest.importorskip("odtstudy.dl85")
    if not hasattr(dl85, "DL85Classifier"):
        pytest.skip("odtstudy.dl85.DL85Classifier is not available yet")
    X, y = _cp4im_subset("vote", 60, 12)
    ref = dl85.DL85Classifier(max_depth=2).fit(X, y)
    for learner in LEARNERS:
        est = learner(max_depth=2, solver="highs").fit(X, y)
        assert est.optimal_ and ref.optimal_
        assert est.objective_ == ref.objective_
