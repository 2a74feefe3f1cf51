import numpy as np
import pytest
from sklearn.tree import DecisionTreeRegressor

from odtstudy.cart import CARTRegressor
from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Regressor


@pytest.mark.parametrize(
    "criterion", ["squared_error", "friedman_mse", "absolute_error"]
)
def test_matches_sklearn_and_reports_the_summed_training_loss(criterion):
    ds = load_dataset("sklearn/diabetes")
    ours = CARTRegressor(max_depth=3, criterion=criterion, random_state=0)
    ours.fit(ds.X, ds.y)
    theirs = DecisionTreeRegressor(max_depth=3, criterion=criterion, random_state=0)
    predicted = theirs.fit(ds.X, ds.y).predict(ds.X)
    assert np.array_equal(ours.predict(ds.X), predicted)
    residual = ds.y - predicted
    if criterion == "absolute_error":
        assert ours.objective_family_ == "absolute-error"
        assert ours.objective_ == pytest.approx(np.abs(residual).sum(), rel=1e-12)
    else:
        assert ours.objective_family_ == "squared-error"
        assert ours.objective_ == pytest.approx((residual**2).sum(), rel=1e-12)
    assert ours.lower_bound_ is None and ours.optimal_ is False
    assert ours.status_ == "feasible" and ours.tree_.kind == "regressor"
    assert ours.tree_.n_samples[0] == len(ds.y) and ours.tree_.depth <= 3
    assert ours.stats_["n_leaves"] == ours.tree_.n_leaves


def test_sample_weight_gives_the_weighted_loss():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 1.0, 5.0, 6.0])
    w = np.array([1.0, 3.0, 1.0, 1.0])
    reg = CARTRegressor(max_depth=1).fit(X, y, sample_weight=w)
    assert reg.objective_ == pytest.approx(np.dot(w, (y - reg.predict(X)) ** 2))


@pytest.mark.parametrize("depth", [1, 2, 3])
@pytest.mark.parametrize("seed", range(4))
def test_never_better_than_the_optimum(depth, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(40, 6))
    y = rng.normal(size=40) + 3 * X[:, 0] * X[:, 1]
    greedy = CARTRegressor(max_depth=depth).fit(X, y)
    best = DL85Regressor(max_depth=depth).fit(X, y)
    assert best.optimal_
    assert greedy.objective_ >= best.objective_ * (1 - 1e-12)
    if depth == 1:  # one split: the greedy choice is the optimal one
        assert greedy.objective_ == pytest.approx(best.objective_, rel=1e-12)


def test_declarations():
    assert CARTRegressor._study_tasks == ("regression",)
    assert CARTRegressor._exact is False
    assert CARTRegressor.objective_family({}) == "squared-error"
    assert CARTRegressor.objective_family({"criterion": "absolute_error"}) == (
        "absolute-error"
    )


def test_bad_criterion_names_the_choices():
    with pytest.raises(ValueError, match="criterion"):
        CARTRegressor(criterion="gini").fit([[0.0], [1.0]], [0.0, 1.0])
