"""The CP-SAT time limit covers model building: a model too big to build in time."""

import time

import numpy as np

from odtstudy.cp import CPSATClassifier


def test_limit_reached_while_building_returns_the_hint():
    # 20 000 distinct rows at depth 5: over a million routing literals, far
    # more than Python builds in one second
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20_000, 60))
    y = rng.integers(0, 3, size=20_000)
    start = time.perf_counter()
    clf = CPSATClassifier(max_depth=5, time_limit=1.0, random_state=0).fit(X, y)
    assert time.perf_counter() - start <= 1.0 * 1.1 + 1.0
    assert clf.status_ == "timeout" and not clf.optimal_
    assert clf.stats_["n_booleans"] is None  # the model was not finished
    assert clf.objective_ == clf.stats_["hint_objective"]
    assert clf.objective_ == np.sum(clf.predict(X) != y)
