"""Boosting under a time limit on many rows: every master solve is limited."""

import os
import time

import numpy as np
import pytest

from odtstudy.naiveforest import OptimalBoostClassifier
from odtstudy.naiveforest._bounded import CHILD_MIN_ROWS, BoundedSolves
from odtstudy.naiveforest._master import (
    LPBoostMaster,
    MDBoostMaster,
    _run_highs,
)


@pytest.fixture(scope="module")
def many_rows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(20_000, 60))
    y = rng.integers(0, 3, size=20_000)
    return X, y


def _fit_by_the_limit(X, y, objective, reg, **params):
    start = time.perf_counter()
    clf = OptimalBoostClassifier(
        objective,
        reg,
        max_depth=3,
        pricing="cart",
        time_limit=1.0,
        random_state=0,
        **params,
    ).fit(X, y)
    assert time.perf_counter() - start <= 1.0 * 1.1 + 1.0
    assert clf.status_ == "timeout" and not clf.optimal_
    assert len(clf.estimators_) >= 1
    assert clf.predict(X).shape == y.shape


def test_mdboost_many_rows_returns_by_the_limit(many_rows):
    # the QP master on 20 000 rows takes HiGHS longer than the limit, and
    # HiGHS's QP solver does not stop at it
    _fit_by_the_limit(*many_rows, "mdboost", 3.0)


@pytest.mark.parametrize("lp_solver", ["pulp", "highspy"])
def test_lpboost_many_rows_returns_by_the_limit(many_rows, lp_solver):
    _fit_by_the_limit(*many_rows, "lpboost", 0.001, lp_solver=lp_solver)


def test_bounded_solves_run_short_solves_here_and_large_ones_in_a_child():
    pid = os.getpid()
    assert BoundedSolves(CHILD_MIN_ROWS - 1).run(os.getpid, 5.0, "task") == pid
    assert BoundedSolves(CHILD_MIN_ROWS).run(os.getpid, None, "task") == pid
    assert BoundedSolves(CHILD_MIN_ROWS).run(os.getpid, 5.0, "task") != pid
    # a slow solve on few rows sends the next limited one to a child
    solves = BoundedSolves(10)
    solves.run(lambda: time.sleep(0.15), None, "task")
    assert solves.run(os.getpid, 5.0, "task") != pid


def test_bounded_solves_kill_an_overrunning_solve_at_the_limit():
    solves = BoundedSolves(CHILD_MIN_ROWS)
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="slow task was stopped at its time limit"):
        solves.run(lambda: time.sleep(30), 0.3, "slow task")
    assert time.perf_counter() - start < 0.3 + 1.0
    with pytest.raises(ZeroDivisionError):
        solves.run(lambda: 1 / 0, 5.0, "task")


@pytest.mark.parametrize(("cls", "reg"), [(MDBoostMaster, 3.0), (LPBoostMaster, 0.01)])
def test_master_solved_in_a_child_matches_the_solve_here(cls, reg):
    rng = np.random.default_rng(3)
    M = CHILD_MIN_ROWS
    columns = [np.where(rng.random(M) < 0.4, -1.0, 1.0) for _ in range(4)]
    here, child = cls(M, reg), cls(M, reg)
    for a in columns:
        here.add_column(a)
        child.add_column(a)
    assert child._solves.in_child(60.0)
    expected, got = here.solve(), child.solve(time_limit=60.0)
    assert got.objective == pytest.approx(expected.objective, abs=1e-9)
    np.testing.assert_allclose(got.weights, expected.weights, atol=1e-9)
    np.testing.assert_allclose(got.sample_weights, expected.sample_weights, atol=1e-9)


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
