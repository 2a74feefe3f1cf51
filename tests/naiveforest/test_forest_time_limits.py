"""Boosting under a time limit on many rows: every master solve is limited."""

import time

import numpy as np
import pytest

from odtstudy.naiveforest import OptimalBoostClassifier
from odtstudy.naiveforest._master import MDBoostMaster, _run_highs


def test_mdboost_many_rows_returns_by_the_limit():
    # the QP master on 20 000 rows takes HiGHS longer than the limit
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20_000, 60))
    y = rng.integers(0, 3, size=20_000)
    start = time.perf_counter()
    clf = OptimalBoostClassifier(
        "mdboost", 3.0, max_depth=3, pricing="cart", time_limit=1.0, random_state=0
    ).fit(X, y)
    assert time.perf_counter() - start <= 1.0 * 1.1 + 1.0
    assert clf.status_ == "timeout" and not clf.optimal_
    assert len(clf.estimators_) >= 1
    assert clf.predict(X).shape == y.shape


def test_mdboost_single_tree_master_matches_the_qp():
    # one column: w = (D,) is the only feasible point; HiGHS's QP agrees
    a = np.where(np.arange(50) % 3 == 0, -1.0, 1.0)
    master = MDBoostMaster(50, 2.0)
    master.add_column(a)
    closed = master.solve()
    assert closed.weights.tolist() == [2.0]
    master._pass_hessian()
    x = np.asarray(_run_highs(master._h, master._highspy, None, "QP").col_value)
    w = x[master._n_free :]
    np.testing.assert_allclose(w, [2.0], atol=1e-7)
    qp = master._solution(np.clip(w, 0.0, None))
    np.testing.assert_allclose(closed.sample_weights, qp.sample_weights, atol=1e-6)
    assert closed.objective == pytest.approx(qp.objective)
