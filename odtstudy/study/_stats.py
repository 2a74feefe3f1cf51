"""Rank statistics across datasets: average ranks, Friedman, Nemenyi, W/T/L.

Demšar (2006): each dataset ranks the methods (1 = best, ties share the
average rank); the Friedman test asks whether the average ranks differ; the
Nemenyi post-hoc test calls two methods different when their average ranks
differ by more than the critical difference
``CD = q_alpha * sqrt(k (k + 1) / (6 N))``. The p-values come from
``scipy.stats`` (Friedman, studentized range) and ``scikit-posthocs``
(Nemenyi); only complete cells enter a score matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "MEASURES",
    "RankTest",
    "average_ranks",
    "nemenyi_cd",
    "rank_test",
    "score_matrix",
    "win_tie_loss",
]

#: measure -> (cells column, higher is better, label)
MEASURES = {
    "test_acc": ("test_acc", True, "test accuracy"),
    "time_to_proof": ("time_to_proof", False, "fit time to a proof"),
}
#: fewest datasets for a Friedman test
MIN_DATASETS = 3
_DECIMALS = 9


@dataclass
class RankTest:
    """Friedman + Nemenyi on one score matrix (datasets × methods).

    Attributes
    ----------
    scores : DataFrame
        The complete score matrix the test used (rows: datasets).
    ranks : Series
        Average rank per method (1 = best), ascending.
    statistic, pvalue : float
        Friedman chi-square and its p-value (NaN when not computed).
    cd : float
        Nemenyi critical difference at ``alpha``.
    pairwise : DataFrame
        Nemenyi p-values (scikit-posthocs), methods × methods.
    left_out : dict
        Methods not tested -> why (complete on too few datasets).
    dropped : list
        Datasets dropped because some tested method's cell is incomplete.
    """

    measure: str
    scores: pd.DataFrame
    ranks: pd.Series
    statistic: float = math.nan
    pvalue: float = math.nan
    cd: float = math.nan
    alpha: float = 0.05
    pairwise: pd.DataFrame | None = None
    left_out: dict = field(default_factory=dict)
    dropped: list = field(default_factory=list)

    @property
    def n_datasets(self) -> int:
        return len(self.scores)

    @property
    def tested(self) -> bool:
        return not math.isnan(self.pvalue)

    def significant_pairs(self) -> list:
        """(better, worse) pairs whose average ranks differ by more than CD."""
        if not self.tested or self.pvalue >= self.alpha:
            return []
        pairs = []
        methods = list(self.ranks.index)
        for i, a in enumerate(methods):
            for b in methods[i + 1 :]:
                if self.ranks[b] - self.ranks[a] > self.cd:
                    pairs.append((a, b))
        return pairs


def score_matrix(
    cells: pd.DataFrame, column: str, methods: list, min_share: float = 0.5
) -> tuple[pd.DataFrame, dict, list]:
    """Datasets × methods matrix of ``column`` over complete cells only.

    Methods complete on fewer than ``min_share`` of the datasets are left
    out; then every dataset where a remaining method is incomplete is dropped.

    Returns
    -------
    matrix : DataFrame
    left_out : dict
        method -> reason.
    dropped : list of str
    """
    cells = cells[cells["method"].isin(methods)]
    datasets = sorted(cells["dataset"].unique())
    complete = cells[cells["complete"]]
    matrix = complete.pivot(index="dataset", columns="method", values=column)
    matrix = matrix.reindex(index=datasets, columns=list(methods))
    present = matrix.notna().sum()
    keep = [m for m in methods if present[m] >= max(1, min_share * len(datasets))]
    left_out = {
        m: f"complete on {int(present[m])}/{len(datasets)} datasets"
        for m in methods
        if m not in keep
    }
    matrix = matrix[keep]
    full = matrix.notna().all(axis=1)
    dropped = list(matrix.index[~full])
    return matrix[full], left_out, dropped


def average_ranks(matrix: pd.DataFrame, higher_is_better: bool) -> pd.Series:
    """Average rank of each column over the rows (1 = best; ties averaged)."""
    values = matrix.to_numpy(dtype=float).round(_DECIMALS)
    if higher_is_better:
        values = -values
    ranks = np.apply_along_axis(stats.rankdata, 1, values)
    return pd.Series(ranks.mean(axis=0), index=matrix.columns).sort_values()


def nemenyi_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Nemenyi critical difference for ``k`` methods on ``n`` datasets."""
    q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6.0 * n)))


def rank_test(
    matrix: pd.DataFrame,
    higher_is_better: bool,
    measure: str = "",
    alpha: float = 0.05,
    left_out=None,
    dropped=None,
) -> RankTest:
    """Average ranks, Friedman test and Nemenyi post-hoc on a complete matrix."""
    result = RankTest(
        measure,
        matrix,
        average_ranks(matrix, higher_is_better) if matrix.size else pd.Series(),
        alpha=alpha,
        left_out=dict(left_out or {}),
        dropped=list(dropped or []),
    )
    n, k = matrix.shape
    if n < MIN_DATASETS or k < 3:
        return result
    values = matrix.to_numpy(dtype=float).round(_DECIMALS)
    if np.all(values == values[:, :1]):
        result.statistic, result.pvalue = 0.0, 1.0
    else:
        statistic, pvalue = stats.friedmanchisquare(*values.T)
        result.statistic, result.pvalue = float(statistic), float(pvalue)
    result.cd = nemenyi_cd(k, n, alpha)
    result.pairwise = _nemenyi_pvalues(values, matrix.columns)
    return result


def _nemenyi_pvalues(values: np.ndarray, methods) -> pd.DataFrame:
    import scikit_posthocs as sp

    frame = pd.DataFrame(values, columns=list(methods))
    if np.all(values == values[:, :1]):
        return pd.DataFrame(1.0, index=frame.columns, columns=frame.columns)
    return sp.posthoc_nemenyi_friedman(frame)


def win_tie_loss(matrix: pd.DataFrame, higher_is_better: bool) -> pd.DataFrame:
    """``wins/ties/losses`` of each row method against each column method."""
    values = matrix.round(_DECIMALS)
    if not higher_is_better:
        values = -values
    methods = list(matrix.columns)
    table = pd.DataFrame("", index=methods, columns=methods, dtype=object)
    for a in methods:
        for b in methods:
            if a == b:
                table.loc[a, b] = "—"
                continue
            wins = int((values[a] > values[b]).sum())
            ties = int((values[a] == values[b]).sum())
            table.loc[a, b] = f"{wins}/{ties}/{len(values) - wins - ties}"
    return table
