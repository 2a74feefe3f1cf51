"""Rank statistics checked against scipy, scikit-posthocs and autorank."""

import math

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from scipy import stats

from odtstudy.study.report._stats import (
    average_ranks,
    nemenyi_cd,
    rank_test,
    score_matrix,
    win_tie_loss,
)


@pytest.fixture
def scores():
    """12 datasets x 5 methods, method e best on average (a known seed)."""
    rng = np.random.default_rng(0)
    values = rng.normal(size=(12, 5)) + np.array([0.0, 0.3, 0.6, 0.9, 1.2])
    return pd.DataFrame(values, columns=list("abcde"))


# Demšar (2006), Table 5(a): q_0.05 of the Nemenyi test for k = 2..10
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]


@pytest.mark.parametrize("k", range(2, 11))
def test_critical_difference_matches_demsar_table(k):
    q = DEMSAR_Q05[k - 2]
    n = 14
    assert nemenyi_cd(k, n) == pytest.approx(
        q * math.sqrt(k * (k + 1) / (6 * n)), abs=2e-3
    )


def test_demsar_worked_example_cd():
    # four C4.5 variants on 14 datasets: CD = 1.25 at alpha = 0.05
    assert nemenyi_cd(4, 14) == pytest.approx(1.25, abs=0.005)


def test_ranks_friedman_and_cd_match_autorank(scores):
    autorank = pytest.importorskip("autorank")
    lib = autorank.autorank(
        scores, alpha=0.05, verbose=False, force_mode="nonparametric"
    )
    ours = rank_test(scores, higher_is_better=True)
    assert lib.omnibus == "friedman" and lib.posthoc == "nemenyi"
    pd.testing.assert_series_equal(
        ours.ranks.sort_index(), lib.rankdf["meanrank"].sort_index(), check_names=False
    )
    assert ours.pvalue == pytest.approx(lib.pvalue, rel=1e-9)
    assert ours.cd == pytest.approx(lib.cd, rel=1e-4)


def test_friedman_matches_scipy_and_pairs_match_scikit_posthocs(scores):
    ours = rank_test(scores, higher_is_better=True)
    statistic, pvalue = stats.friedmanchisquare(*scores.to_numpy().T)
    assert ours.statistic == pytest.approx(statistic) and ours.pvalue == pytest.approx(
        pvalue
    )
    assert ours.pvalue < 0.05
    nemenyi = sp.posthoc_nemenyi_friedman(scores)
    significant = {
        frozenset((a, b))
        for a in scores
        for b in scores
        if a < b and nemenyi.loc[a, b] < 0.05
    }
    assert {frozenset(p) for p in ours.significant_pairs()} == significant
    assert significant  # the example has at least one significant pair
    for better, worse in ours.significant_pairs():
        assert ours.ranks[better] < ours.ranks[worse]


def test_lower_is_better_reverses_the_ranks(scores):
    up = average_ranks(scores, higher_is_better=True)
    down = average_ranks(scores, higher_is_better=False)
    k = scores.shape[1]
    for method in scores:
        assert up[method] + down[method] == pytest.approx(k + 1)


def test_ties_share_ranks_and_identical_methods_are_not_different():
    column = np.linspace(0.5, 1.0, 11)
    tied = pd.DataFrame({"a": column, "b": column, "c": column})
    result = rank_test(tied, True)
    assert (result.ranks == 2.0).all() and result.pvalue == 1.0
    assert result.significant_pairs() == []


def test_too_few_datasets_is_not_tested_but_its_cd_is_given():
    two = pd.DataFrame({"a": [1.0, 0.5], "b": [0.0, 0.1], "c": [0.2, 0.3]})
    result = rank_test(two, True)
    assert not result.tested and result.cd == pytest.approx(nemenyi_cd(3, 2))
    assert "more than 10 datasets" in result.untested


def test_win_tie_loss_counts():
    matrix = pd.DataFrame({"a": [0.9, 0.8, 0.7], "b": [0.8, 0.8, 0.9]})
    table = win_tie_loss(matrix, True)
    assert table.loc["a", "b"] == "1/1/1" and table.loc["b", "a"] == "1/1/1"
    times = win_tie_loss(pd.DataFrame({"a": [1.0, np.inf], "b": [2.0, np.inf]}), False)
    assert times.loc["a", "b"] == "1/1/0"


def _cells(rows):
    return pd.DataFrame(rows, columns=["dataset", "method", "complete", "test_acc"])


def test_incomplete_cells_drop_their_dataset_or_their_method():
    rows = []
    for d in "pqrs":
        rows += [(d, "a", True, 0.9), (d, "b", True, 0.8), (d, "c", d != "p", 0.7)]
        rows.append((d, "x", d == "p", 0.99))  # complete on 1 of 4 datasets
    matrix, left_out, dropped = score_matrix(
        _cells(rows), "test_acc", ["a", "b", "c", "x"]
    )
    assert list(matrix.columns) == ["a", "b", "c"]
    assert "x" in left_out and dropped == ["p"]
    assert list(matrix.index) == ["q", "r", "s"] and matrix.notna().all().all()
