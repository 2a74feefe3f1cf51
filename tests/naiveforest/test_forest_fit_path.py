"""Every forest goes through one fit: BaseForestClassifier.fit and _timed_fit."""

import time

import numpy as np
import pytest

from odtstudy._deadline import now
from odtstudy.naiveforest import (
    AdaBoostBaseline,
    DL8ForestClassifier,
    GradientBoostingBaseline,
    OptimalBoostClassifier,
    RandomForestBaseline,
)
from odtstudy.naiveforest._base import BaseForestClassifier

SLOW_S = 0.2

FORESTS = [
    lambda: DL8ForestClassifier(n_estimators=3, max_depth=2, random_state=0),
    lambda: OptimalBoostClassifier(max_depth=1, pricing="cart", max_iterations=3),
    lambda: RandomForestBaseline(max_depth=2, n_estimators=3, random_state=0),
    lambda: GradientBoostingBaseline(max_depth=2, n_estimators=3, random_state=0),
    lambda: AdaBoostBaseline(max_depth=2, n_estimators=3, random_state=0),
]


def _data(n=40, m=5):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 2, size=(n, m))
    return X, X[:, 0]


@pytest.mark.parametrize(
    "cls",
    [
        DL8ForestClassifier,
        OptimalBoostClassifier,
        RandomForestBaseline,
        GradientBoostingBaseline,
        AdaBoostBaseline,
    ],
)
def test_every_forest_uses_the_base_fit(cls):
    assert cls.fit is BaseForestClassifier.fit


@pytest.mark.parametrize("make", FORESTS, ids=lambda f: type(f()).__name__)
def test_forest_fit_time_covers_its_fit(make, monkeypatch):
    forest = make()
    original = type(forest)._fit

    def slow(self, X, y):
        time.sleep(SLOW_S)
        return original(self, X, y)

    monkeypatch.setattr(type(forest), "_fit", slow)
    X, y = _data()
    start = now()
    forest.fit(X, y)
    wall = now() - start
    assert SLOW_S <= forest.fit_time_ <= wall
    assert forest.n_trees_ >= 1 and forest.score(X, y) >= 0.9


def test_binary_input_follows_the_pricing():
    X, y = _data()
    X = X + 0.5 * (X == 0)  # 0.5 / 1 instead of 0 / 1
    cart = OptimalBoostClassifier(max_depth=1, pricing="cart", max_iterations=3)
    assert cart.fit(X, y).n_trees_ >= 1
    with pytest.raises(ValueError, match="Binarizer"):
        OptimalBoostClassifier(max_depth=1, pricing="dl85").fit(X, y)
    with pytest.raises(ValueError, match="Binarizer"):
        DL8ForestClassifier(n_estimators=2, max_depth=1).fit(X, y)
    assert RandomForestBaseline(max_depth=1, n_estimators=2).fit(X, y).n_trees_ == 2
