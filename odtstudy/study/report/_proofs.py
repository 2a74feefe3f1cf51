"""Exact methods of one objective family, per depth: what each proved.

Exact methods that solve the same problem reach the same optimum when they
prove it, so their training accuracies are not ranked. What differs is
whether they prove it in time, how fast, and, when they do not, how far from
a proof they stopped: the gap at the limit, ``(objective − lower bound) /
objective`` from the run's own bound.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy.datasets._published import published_optimum
from odtstudy.study.report._records import StudyRecords

__all__ = [
    "PROOF_RULE",
    "PUBLISHED_RULE",
    "REGRESSION_PROOF_RULE",
    "proof_table",
    "published_table",
]

_RULE = (
    "Exact methods of one objective family solve the same problem: their "
    "{measure} are not ranked. Per depth: runs proven optimal "
    "within the allowed time, the time to a proof (fit time of the proven "
    "runs), and for the runs not proven, the gap at the limit "
    "(objective − the method's own lower bound) / objective; `no bound`: "
    "runs not proven that report no lower bound; `no tree of its own`: runs "
    "that returned none (fallback leaf, warm start, killed, failed); PAR-2: "
    "the mean over the runs of the time to a proof, a run not proven counting "
    "twice its time limit."
)
PROOF_RULE = _RULE.format(measure="training accuracies")
#: the same rule worded for regression records
REGRESSION_PROOF_RULE = _RULE.format(measure="training losses")


def _gap_at_limit(runs: pd.DataFrame) -> pd.Series:
    objective = runs["objective"].astype(float)
    bound = runs["lower_bound"].astype(float)
    gap = (objective - bound) / np.maximum(objective.abs(), 1e-12)
    gap = gap.where(objective.abs() > 1e-12, 0.0)
    return gap.clip(lower=0.0)[np.isfinite(bound) & np.isfinite(objective)]


def proof_table(records: StudyRecords) -> pd.DataFrame:
    """Depth × exact method: proofs, time to a proof, gap at the limit.

    Parameters
    ----------
    records : StudyRecords

    Returns
    -------
    DataFrame
        One row per depth and exact method (an ``objective family`` column
        when the exact methods optimise more than one), empty without exact
        methods.
    """
    frame = records.frame
    exact = records.exact_methods
    families = {
        m: str(frame.loc[frame["method"] == m, "objective_family"].mode().iloc[0])
        for m in exact
    }
    several = len(set(families.values())) > 1
    order = sorted(exact, key=lambda m: (families[m], exact.index(m)))
    rows = []
    for depth in records.depths:
        for method in order:
            runs = frame[(frame["depth"] == depth) & (frame["method"] == method)]
            if runs.empty:
                continue
            n_runs = sum(map(records.expected_for, runs["dataset"].unique()))
            proven = runs[runs["optimal"] & runs["has_tree"]]
            own = runs[runs["has_tree"] & runs["has_solver_tree"]]
            open_runs = own[~own["optimal"]]
            gaps = _gap_at_limit(open_runs)
            times = proven["fit_time_s"].dropna()
            limit = float(runs["time_limit"].max())
            par2 = (times.sum() + 2 * limit * (n_runs - len(times))) / n_runs
            row = {"depth": depth, "method": method}
            if several:
                row["objective family"] = families[method]
            row.update(
                {
                    "proven": f"{len(proven)}/{n_runs}",
                    "time to proof, median (s)": _fmt(times.median()),
                    "time to proof, max (s)": _fmt(times.max()),
                    "PAR-2 (s)": _fmt(par2),
                    "not proven (own tree)": len(open_runs),
                    "gap at the limit, median": _percent(gaps.median()),
                    "gap at the limit, max": _percent(gaps.max()),
                    "no bound": len(open_runs) - len(gaps),
                    "no tree of its own": n_runs - len(own),
                }
            )
            rows.append(row)
    return pd.DataFrame(rows)


PUBLISHED_RULE = (
    "Instances whose optimum a solver's authors published, fitted on all "
    "rows: the published value (source below) and each exact method's "
    "objective, `proven` when the method proved it optimal; a proof of "
    "another value is marked **contradicts**, a tree worse than the "
    "optimum at the limit `not proven`."
)


def published_table(records: StudyRecords) -> tuple[pd.DataFrame, list]:
    """Each instance with a published optimum beside each exact method's
    objective on it (fits on all rows only).

    Parameters
    ----------
    records : StudyRecords

    Returns
    -------
    table : DataFrame
        A row per (dataset, depth) with a published optimum, a column per
        exact method that ran on one; empty when the study has none.
    sources : list of str
        The sources of the values in the table.
    """
    frame = records.frame
    exact = records.exact_methods
    if not exact or "n_folds" not in frame or not (frame["n_folds"] == 1).any():
        return pd.DataFrame(), []
    rows, sources = [], []
    for (dataset, depth), runs in frame[frame["n_folds"] == 1].groupby(
        ["dataset", "depth"], sort=True
    ):
        published = published_optimum(dataset, depth)
        if published is None:
            continue
        value, source = published
        if source not in sources:
            sources.append(source)
        row = {"dataset": dataset, "depth": depth, "published": f"{value:g}"}
        for method in exact:
            run = runs[runs["method"] == method]
            row[method] = _against_published(run, value) if len(run) else ""
        rows.append(row)
    table = pd.DataFrame(rows)
    unrun = [m for m in exact if m in table and (table[m] == "").all()]
    return table.drop(columns=unrun), sources


def _against_published(runs: pd.DataFrame, published: float) -> str:
    run = runs.iloc[0]
    if not run["has_tree"] or pd.isna(run["objective"]):
        return "no tree"
    objective = float(run["objective"])
    if not run["optimal"]:
        return f"{objective:g} not proven"
    if objective == published:
        return f"{objective:g} proven"
    return f"**{objective:g} proven: contradicts**"


def _fmt(value) -> str:
    return "" if pd.isna(value) else f"{value:.3g}"


def _percent(value) -> str:
    return "" if pd.isna(value) else f"{100 * value:.3g} %"
