"""Estimator contract of the MILP learners: errors, time limits, CART guard."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

from odtstudy.datasets import load_dataset
from odtstudy.milp import BinOCTClassifier, OCTClassifier, _solvers
from odtstudy.study.registry import get_method

LEARNERS = [BinOCTClassifier, OCTClassifier]
X6 = np.arange(1, 7, dtype=float).reshape(-1, 1)
Y6 = np.array(["a", "a", "b", "b", "b", "a"])


@pytest.mark.parametrize("learner", LEARNERS)
def test_string_labels_and_contract_attributes(learner):
    est = learner(max_depth=1).fit(X6, Y6)
    assert list(est.classes_) == ["a", "b"]
    assert est.predict(X6).tolist() == ["a", "a", "b", "b", "b", "b"]
    assert est.fit_time_ > 0
    for key in ("n_variables", "n_constraints", "mip_gap", "solver_status",
                "solve_time"):  # fmt: skip
        assert key in est.stats_
    assert est.stats_["n_variables"] > 0 and est.stats_["mip_gap"] == 0


@pytest.mark.parametrize("learner", LEARNERS)
def test_bad_input_errors(learner):
    X_nan = X6.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        learner().fit(X_nan, Y6)
    with pytest.raises(ValueError, match="solver"):
        learner(solver="gurobi").fit(X6, Y6)
    for limit in (0, -1.0):
        with pytest.raises(ValueError, match="time_limit"):
            learner(time_limit=limit).fit(X6, Y6)
    with pytest.raises(ValueError, match="one class"):
        learner().fit(X6, np.zeros(6))
    with pytest.raises(ValueError, match="lengths"):
        learner().fit(X6, Y6[:4])
    # the MILPs count misclassified rows: fit takes no sample_weight
    assert not has_fit_parameter(learner(), "sample_weight")
    with pytest.raises(TypeError, match="sample_weight"):
        learner().fit(X6, Y6, sample_weight=np.ones(6))
    with pytest.raises(ValueError, match="max_depth"):
        learner(max_depth=0).fit(X6, Y6)


def test_missing_solver_names_the_package(monkeypatch):
    monkeypatch.setattr(_solvers, "_highs_available", lambda: False)
    with pytest.raises(ImportError, match="pip install highspy"):
        BinOCTClassifier(solver="highs").fit(X6, Y6)


@pytest.mark.parametrize("learner", LEARNERS)
def test_clone_and_registry(learner):
    est = clone(learner(max_depth=3, time_limit=5, solver="highs"))
    assert est.get_params()["solver"] == "highs"
    name = "binoct" if learner is BinOCTClassifier else "oct"
    made = get_method(name).make(max_depth=2, time_limit=10, random_state=0)
    assert isinstance(made, learner)
    assert made.max_depth == 2 and made.time_limit == 10 and made.random_state == 0


def test_oct_alpha_penalises_splits():
    X, y = X6, Y6
    # baseline loss 3; one split saves 2/3 < alpha = 1: a single leaf is best
    est = OCTClassifier(max_depth=2, alpha=1.0).fit(X, y)
    assert est.tree_.n_leaves == 1 and est.objective_ == 3 and est.optimal_
    est = OCTClassifier(max_depth=2, alpha=0.1).fit(X, y)
    assert est.tree_.n_leaves == 3 and est.objective_ == 0 and est.optimal_
    assert est.stats_["penalized_objective"] == pytest.approx(0.2)


def test_oct_rank_scaling_gives_the_same_optimum():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10, 2)) * [1e-3, 1e3]
    y = rng.integers(0, 2, size=10)
    y[:2] = [0, 1]
    a = OCTClassifier(max_depth=2, scaling="minmax").fit(X, y)
    b = OCTClassifier(max_depth=2, scaling="rank").fit(X, y)
    assert a.optimal_ and b.optimal_ and a.objective_ == b.objective_


@pytest.mark.parametrize("solver", ["cbc", "highs"])
@pytest.mark.parametrize("learner", LEARNERS)
def test_time_limit_never_worse_than_cart(learner, solver):
    data = load_dataset("vote")
    est = learner(max_depth=2, solver=solver, time_limit=1.0).fit(data.X, data.y)
    cart_err = est.stats_["cart_objective"]
    assert est.objective_ <= cart_err
    assert est.objective_ == np.sum(est.predict(data.X) != data.y)
    assert est.status_ in ("timeout", "optimal", "feasible")
    if not est.optimal_:
        assert est.status_ != "optimal"
        assert est.lower_bound_ is None or est.lower_bound_ <= est.objective_


def test_cart_warm_start_is_accepted_by_highs():
    data = load_dataset("zoo-1")
    est = BinOCTClassifier(max_depth=2, solver="highs").fit(data.X, data.y)
    assert est.stats_["warm_start_accepted"] is True
    assert est.stats_["warm_start_objective"] == est.stats_["cart_objective"]


def test_predict_on_new_data_uses_midpoint_thresholds():
    X = np.array([[0.0], [1.0], [10.0], [11.0]])
    y = np.array([0, 0, 1, 1])
    est = OCTClassifier(max_depth=1).fit(X, y)
    assert est.tree_.threshold[0] == pytest.approx(5.5)
    assert est.predict([[5.0], [6.0]]).tolist() == [0, 1]


@pytest.mark.parametrize("learner", LEARNERS)
def test_cheap_sklearn_api_checks(learner):
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
    )

    name = learner.__name__
    check_parameters_default_constructible(name, learner())
    check_no_attributes_set_in_init(name, learner())
    check_get_params_invariance(name, learner())


@pytest.mark.parametrize("learner", LEARNERS)
def test_highs_warm_start_accepted_for_both_models(learner):
    est = learner(max_depth=2, solver="highs").fit(X6, Y6)
    assert est.stats_["warm_start_accepted"] is True
