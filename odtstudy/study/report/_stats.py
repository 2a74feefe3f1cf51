"""Rank statistics across datasets: average ranks, Friedman, Nemenyi, W/T/L.

Demšar (2006): each dataset ranks the methods (1 = best, ties share the
average rank); the Friedman test asks whether the average ranks differ; the
Nemenyi post-hoc test calls two methods different when their average ranks
differ by more than the critical difference
``CD = q_alpha * sqrt(k (k + 1) / (6 N))``. The p-values come from
``scipy.stats`` (Friedman, studentized range) and ``scikit-posthocs``
(Nemenyi); only complete cells enter a score matrix.

No test is run where it cannot separate anything: fewer than 3 methods,
too few datasets for the Friedman statistic's χ² approximation (scipy and
Demšar: more than 10), or a critical difference no pair of average ranks can
exceed (``CD >= k - 1``). :func:`rank_verdict` then says so in one line, with
``k``, ``N`` and ``CD``, and names no best method.
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
    "rank_verdict",
    "score_matrix",
    "win_tie_loss",
]

#: measure -> (cells column, higher is better, label)
MEASURES = {
    "test_acc": ("test_acc", True, "test accuracy"),
}
#: fewest datasets for a Friedman test: its χ² p-value is reliable only for
#: more than 10 (scipy.stats.friedmanchisquare; Demšar 2006, section 3.2.2)
MIN_DATASETS = 11
#: fewest methods for a Friedman test
MIN_METHODS = 3
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
    untested : str
        Why no test was run (empty when it was).
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
    untested: str = ""

    @property
    def n_datasets(self) -> int:
        return len(self.scores)

    @property
    def n_methods(self) -> int:
        return self.scores.shape[1]

    @property
    def tested(self) -> bool:
        return not math.isnan(self.pvalue)

    @property
    def rejects(self) -> bool:
        """The Friedman test ran and rejects equal ranks at ``alpha``."""
        return self.tested and self.pvalue < self.alpha

    def significant_pairs(self) -> list:
        """(better, worse) pairs whose average ranks differ by more than CD."""
        if not self.rejects:
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
    if n and k >= 2:
        result.cd = nemenyi_cd(k, n, alpha)
    result.untested = _why_untestable(n, k, result.cd)
    if result.untested:
        return result
    values = matrix.to_numpy(dtype=float).round(_DECIMALS)
    if np.all(values == values[:, :1]):
        result.statistic, result.pvalue = 0.0, 1.0
    else:
        statistic, pvalue = stats.friedmanchisquare(*values.T)
        result.statistic, result.pvalue = float(statistic), float(pvalue)
    result.pairwise = _nemenyi_pvalues(values, matrix.columns)
    return result


def _why_untestable(n: int, k: int, cd: float) -> str:
    if k < MIN_METHODS:
        return f"the Friedman test needs at least {MIN_METHODS} methods"
    if n < MIN_DATASETS:
        return f"the Friedman χ² p-value needs more than {MIN_DATASETS - 1} datasets"
    if cd >= k - 1:
        return "no two average ranks can differ by more than k − 1"
    return ""


def rank_verdict(test: RankTest, depth: int, what: str) -> str:
    """One sentence on a rank test: its numbers and what it separates.

    A test that was not run gives ``k``, ``N``, ``CD`` and why; a test that
    finds no difference names no best method.
    """
    head = f"**Depth {depth}, {what}**: "
    notes = []
    if test.dropped:
        notes.append(
            f"{len(test.dropped)} dataset(s) dropped for incomplete or missing cells"
        )
    if test.left_out:
        notes.append(
            "left out: " + ", ".join(f"{m} ({why})" for m, why in test.left_out.items())
        )
    note = f" ({'; '.join(notes)})" if notes else ""
    k, n = test.n_methods, test.n_datasets
    sizes = f"k = {k} methods on N = {n} datasets"
    if not test.tested:
        cd = "" if math.isnan(test.cd) else f", Nemenyi CD = {test.cd:.2f}"
        bound = f" of at most k − 1 = {k - 1} rank units" if cd else ""
        reason = test.untested or "not tested"
        return head + f"no rank test: {sizes}{cd}{bound}; {reason}{note}."
    text = head + f"{sizes}{note}; Friedman p = {test.pvalue:.3g}"
    if not test.rejects:
        return text + ": no significant difference between the methods."
    top = test.ranks.iloc[0]
    best = list(test.ranks.index[test.ranks - top < 1e-9])
    who = best[0] if len(best) == 1 else f"shared by {', '.join(best)}"
    text += f"; best average rank {top:.2f} ({who})"
    pairs = test.significant_pairs()
    if not pairs:
        return text + (
            f"; Nemenyi (CD = {test.cd:.2f}) finds no pair significantly different."
        )
    better, worse = {}, {}
    for a, b in pairs:
        better.setdefault(a, []).append(b)
        worse.setdefault(b, []).append(a)
    if len(worse) < len(better):
        listed = "; ".join(f"{b} worse than {', '.join(a)}" for b, a in worse.items())
    else:
        listed = "; ".join(f"{a} better than {', '.join(b)}" for a, b in better.items())
    return text + f"; Nemenyi (CD = {test.cd:.2f}): {listed}."


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
