"""The forest methods and the scikit-learn baselines in the study registry."""

import numpy as np
import pytest

from odtstudy._deadline import now
from odtstudy.datasets import load_dataset
from odtstudy.naiveforest import (
    AdaBoostBaseline,
    GradientBoostingBaseline,
    RandomForestBaseline,
)
from odtstudy.study.registry import get_method

FOREST_METHODS = [
    "dl8forest",
    "optiboost-lp",
    "optiboost-md",
    "lpboost-cart",
    "mdboost-cart",
    "random-forest",
    "gradient-boosting",
    "adaboost",
]


@pytest.mark.parametrize("name", FOREST_METHODS)
def test_registered_and_constructible(name):
    method = get_method(name)
    assert method.available()
    assert method.data == "binary"
    est = method.make(max_depth=2, time_limit=10, random_state=0)
    assert est.get_params()["max_depth"] == 2
    assert est.get_params()["random_state"] == 0


@pytest.mark.parametrize(
    "name",
    [
        "dl8forest",
        "lpboost-cart",
        "mdboost-cart",
        "random-forest",
        "gradient-boosting",
        "adaboost",
    ],
)
def test_registered_methods_fit_zoo(name):
    data = load_dataset("zoo-1")
    est = get_method(name).make(max_depth=2, time_limit=30, random_state=0)
    start = now()
    est.fit(data.X, data.y)
    wall = now() - start
    assert est.score(data.X, data.y) > 0.9
    assert est.optimal_ is False
    assert est.status_ in ("feasible", "timeout", "optimal")
    assert 0 < est.fit_time_ <= wall


@pytest.mark.parametrize(
    "cls", [RandomForestBaseline, GradientBoostingBaseline, AdaBoostBaseline]
)
def test_baselines_use_100_trees_of_the_given_depth(cls):
    data = load_dataset("vote")
    est = cls(max_depth=2, random_state=0).fit(data.X, data.y)
    assert est.stats_["n_trees"] <= 100
    inner = est.estimator_
    trees = np.ravel(inner.estimators_)
    assert all(t.get_depth() <= 2 for t in trees)
    assert est.objective_ == np.sum(est.predict(data.X) != data.y)
    assert est.predict_proba(data.X).shape == (len(data.y), 2)
    with pytest.raises(ValueError, match="one class"):
        cls().fit(data.X, np.zeros(len(data.y)))
