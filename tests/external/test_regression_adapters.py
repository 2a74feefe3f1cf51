"""Adapters of published regression solvers (STreeD, OSRT): the learner
contract, time limits, and the objective of odtstudy's DL85Regressor.

Each solver's tests skip when its package is not installed
(``pip install "odtstudy[external]"``).
"""

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from odtstudy._deadline import now
from odtstudy.base import STATUSES
from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.dl85 import DL85Regressor
from odtstudy.external import STreeDRegressor
from odtstudy.external._bounds import depth_one_squared_error
from odtstudy.tree import Tree

LIMIT = 2.0


def _needs(cls):
    pytest.importorskip(cls._module)
    return cls


def _random_regression(seed, n_rows=(30, 61)):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(*n_rows)), int(rng.integers(5, 9))
    X = rng.integers(0, 2, size=(n, m))
    y = rng.normal(size=n) * 2 + 3 * X[:, 0] * X[:, 1] + X[:, 2]
    return X, y


def _sse(est, X, y):
    return float(np.sum((y - est.predict(X)) ** 2))


def _check_contract(est, X, y, family):
    assert est.status_ in STATUSES and isinstance(est.stats_, dict)
    assert isinstance(est.optimal_, bool) and est.fit_time_ > 0
    assert isinstance(est.tree_, Tree) and est.tree_.kind == "regressor"
    assert est.n_trees_ == 1 and est.objective_family_.startswith(family)
    assert est.tree_.n_samples[0] == len(y)
    assert type(est)._study_tasks == ("regression",)


# ------------------------------------------------------------------ bounds
@pytest.mark.parametrize("seed", range(6))
def test_depth_one_bound_is_the_best_single_split(seed):
    X, y = _random_regression(seed)
    best = DL85Regressor(max_depth=1).fit(X, y).objective_
    assert depth_one_squared_error(X, y) == pytest.approx(best, rel=1e-9)
    leaf = float(np.sum((y - y.mean()) ** 2))
    assert depth_one_squared_error(X, y, leaf_penalty=leaf) == pytest.approx(2 * leaf)


# ------------------------------------------------------------------ STreeD
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_streed_proves_dl85s_optimum(seed, depth):
    _needs(STreeDRegressor)
    X, y = _random_regression(seed)
    reference = DL85Regressor(max_depth=depth).fit(X, y)
    assert reference.optimal_
    reg = STreeDRegressor(max_depth=depth, time_limit=30).fit(X, y)
    _check_contract(reg, X, y, "squared-error")
    assert reg.optimal_ and reg.status_ == "optimal"
    assert reg.objective_ == pytest.approx(reference.objective_, rel=1e-9)
    assert reg.objective_ == pytest.approx(_sse(reg, X, y), rel=1e-12)
    assert reg.lower_bound_ == reg.objective_
    assert reg.tree_.depth <= depth
    assert reg.stats_["tool_mse"] * len(y) == pytest.approx(reg.objective_, rel=1e-9)


def test_streed_proves_dl85s_optimum_on_servo():
    _needs(STreeDRegressor)
    data = load_dataset("osrt/servo")
    reference = DL85Regressor(max_depth=3).fit(data.X, data.y)
    reg = STreeDRegressor(max_depth=3, time_limit=60).fit(data.X, data.y)
    assert reference.optimal_ and reg.optimal_
    assert reg.objective_ == pytest.approx(reference.objective_, rel=1e-9)
    assert reg.objective_ == pytest.approx(_sse(reg, data.X, data.y), rel=1e-12)


def test_streed_honours_a_two_second_limit_on_a_hard_instance():
    _needs(STreeDRegressor)
    data = load_dataset("osrt/seoul-bike")
    start = now()
    reg = STreeDRegressor(max_depth=6, time_limit=LIMIT).fit(data.X, data.y)
    assert now() - start <= LIMIT * 1.1 + 1
    assert reg.status_ in ("timeout", "optimal")
    assert reg.optimal_ == (reg.status_ == "optimal")
    assert reg.objective_ == pytest.approx(_sse(reg, data.X, data.y), rel=1e-12)
    assert reg.predict(data.X[:5]).shape == (5,)


def test_streed_min_samples_leaf_is_dl85s_min_sup():
    _needs(STreeDRegressor)
    X, y = _random_regression(3)
    reference = DL85Regressor(max_depth=2, min_sup=5).fit(X, y)
    reg = STreeDRegressor(max_depth=2, min_samples_leaf=5).fit(X, y)
    assert reg.objective_ == pytest.approx(reference.objective_, rel=1e-9)
    assert reg.tree_.n_samples[reg.tree_.feature == -1].min() >= 5


def test_streed_refuses_sample_weight_and_numbers():
    _needs(STreeDRegressor)
    X, y = _random_regression(0)
    with pytest.raises(ValueError, match="sample_weight"):
        STreeDRegressor(max_depth=2).fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="Binarizer"):
        STreeDRegressor(max_depth=2).fit(X + 0.5, y)


def test_a_refuted_claim_of_optimality_is_not_passed_on():
    _needs(STreeDRegressor)
    X, y = _random_regression(1)
    reg = STreeDRegressor(max_depth=2).fit(X, y)
    single_leaf = reg._convert(None, lambda node: (None, None), X, y)
    out = reg._result(single_leaf, X, y, proven=True)
    assert not out.optimal and out.status == "feasible"
    assert "depth 1" in out.stats["claim_refuted"]


def _checked():
    estimators = []
    if STreeDRegressor.installed():
        estimators.append(
            make_pipeline(
                Binarizer(max_thresholds=4), STreeDRegressor(max_depth=2, time_limit=10)
            )
        )
    return estimators


#: scikit-learn's ``Pipeline`` keeps its fitted steps in its ``steps``
#: parameter (as in tests/test_contract_sklearn.py).
_PIPELINE = {
    "check_estimators_overwrite_params": "Pipeline.fit replaces its steps",
    "check_dont_overwrite_parameters": "Pipeline.fit changes its steps",
}


@parametrize_with_checks(_checked(), expected_failed_checks=lambda est: _PIPELINE)
def test_passes_sklearn_checks(estimator, check):
    check(estimator)
