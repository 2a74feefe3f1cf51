"""Master problems on the T11 oracle of methods.md §6 (full master, 8 stumps)."""

import numpy as np
import pytest
from forest_bruteforce import T11_X, T11_Y, all_columns

from odtstudy.naiveforest._master import (
    HighsLPBoostMaster,
    LPBoostMaster,
    MDBoostMaster,
    make_master,
)

T11_STUMPS = all_columns(T11_X, T11_Y, 2, depth=1)

LP_EXPECTED = [(1 / 11, 5 / 11), (0.125, 0.25), (0.25, 0.0), (0.5, 0.0), (1.0, 0.0)]
MD_EXPECTED = [(0.5, 1.765), (1.0, 2.967949), (3.0, 4.35)]


def _full(master):
    for a in T11_STUMPS:
        master.add_column(a)
    return master.solve()


def test_t11_has_eight_distinct_stump_columns():
    assert len(T11_STUMPS) == 8


@pytest.mark.parametrize("cls", [LPBoostMaster, HighsLPBoostMaster])
@pytest.mark.parametrize(("reg", "expected"), LP_EXPECTED)
def test_lpboost_full_master_t11(cls, reg, expected):
    sol = _full(cls(11, reg))
    assert sol.objective == pytest.approx(expected, abs=1e-7)
    # primal = dual, and the duals are a feasible LPBoost dual point
    assert sol.dual_objective == pytest.approx(sol.objective, abs=1e-7)
    u = sol.sample_weights
    assert u.sum() == pytest.approx(1.0)
    assert np.all(u >= -1e-9) and np.all(u <= reg + 1e-9)
    assert sol.weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(("reg", "expected"), MD_EXPECTED)
def test_mdboost_full_master_t11(reg, expected):
    master = MDBoostMaster(11, reg)
    sol = _full(master)
    assert sol.objective == pytest.approx(expected, abs=1e-5)
    assert sol.dual_objective == pytest.approx(sol.objective, abs=1e-5)
    assert sol.sample_weights.sum() == pytest.approx(11.0)
    assert sol.weights.sum() == pytest.approx(reg)
    # objective = M (mean margin - unbiased variance / 2)
    rho = sol.margins
    assert sol.objective == pytest.approx(11 * (rho.mean() - rho.var(ddof=1) / 2))


def test_mdboost_exact_dual_is_an_upper_bound_for_any_u():
    """Weak duality of the exact dual: any u with sum M bounds the primal."""
    master = MDBoostMaster(11, 1.0)
    sol = _full(master)
    rng = np.random.default_rng(0)
    A = np.column_stack(T11_STUMPS)
    for _ in range(20):
        u = rng.normal(1.0, 0.5, 11)
        u *= 11 / u.sum()
        assert master.dual_objective(u, (u @ A).max()) >= sol.objective - 1e-7


def test_incremental_columns_match_a_fresh_master():
    for objective, reg in (("lpboost", 0.125), ("mdboost", 3.0)):
        inc = make_master(objective, 11, reg, lp_solver="highspy")
        for a in T11_STUMPS:
            inc.add_column(a)
            last = inc.solve()
        fresh = _full(make_master(objective, 11, reg))
        assert last.objective == pytest.approx(fresh.objective, abs=1e-6)


def test_lpboost_reg_below_one_over_m_is_rejected():
    with pytest.raises(ValueError, match="1/n_samples"):
        LPBoostMaster(11, 0.05)
    with pytest.raises(ValueError, match="1/n_samples"):
        HighsLPBoostMaster(11, 0.05)


def test_unknown_objective_and_empty_master():
    with pytest.raises(ValueError, match="objective"):
        make_master("adaboost", 5, 1.0)
    with pytest.raises(ValueError, match="no column"):
        LPBoostMaster(5, 1.0).solve()
    with pytest.raises(ValueError, match="at least 2"):
        MDBoostMaster(1, 1.0)
