"""A family of quantiles fitted in one search against one fit per quantile.

A *family* method fits several quantiles at once (objective family
``pinball@t1,t2,...``: ``DL85Regressor(criterion="quantile",
quantile=[0.1, ..., 0.9])``, one tree per tau); a *single* method fits one
(``pinball@t``). A family run is compared with the single fits of each of
its taus on the same run (dataset, depth, fold and seed) of the same problem
(:func:`~odtstudy.study.report._checks.with_problem`), and only when every tau has
one; when several single methods fit one tau, the first by label is used.

Per run: the family's fit time, the sum and the largest of the single fits'
times, the family's time over each, and whether every fit was proven
optimal. Per depth: the geometric mean of each ratio over the datasets where
every fit was proven, with the bootstrap interval of the speed tables
(:func:`~odtstudy.study.report._speed.geometric_ratio`: none below
:data:`~odtstudy.study.report._speed.MIN_UNITS` datasets). The objective check
compares each tau's objective in the family fit (the record's
``stats.objective_per_quantile``) with the single fit's where both proved,
within :func:`~odtstudy.study.report._regression.objective_tolerance`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from odtstudy._deadline import allowed_fit_time
from odtstudy.study._regression_scores import pinball_taus
from odtstudy.study._solver_tree import stats_dict
from odtstudy.study.report._checks import with_problem
from odtstudy.study.report._document import Document
from odtstudy.study.report._records import RUN_KEYS, StudyRecords
from odtstudy.study.report._regression import RELATIVE_TOLERANCE, objective_tolerance
from odtstudy.study.report._speed import (
    MIN_UNITS,
    N_RESAMPLES,
    SEED,
    RatioEstimate,
    geometric_ratio,
)

__all__ = [
    "QUANTILE_FAMILY_RULE",
    "family_comparisons",
    "family_summary",
    "objective_mismatches",
    "quantile_family_section",
]

_KEYS = [*RUN_KEYS, "problem"]

QUANTILE_FAMILY_RULE = (
    "{family} fits the quantiles τ = {taus} in one search (one tree per τ); "
    "it is compared with the fits of one τ each ({singles}) on the same run: "
    "the same data (dataset, fold and seed: the same training rows and "
    "features) and the same depth, and only where every τ has its single fit. "
    "Times are fit wall times (`fit_time_s`, from entering `fit` to its "
    "return; the median of a run's repeats), each fit in a fresh process of "
    "its own (its time includes what a first fit in a process costs), "
    "{concurrency}. Per run: the family's time, the sum of the single fits' "
    "times (the quantiles fitted one after the other) and the slowest single "
    "fit's (the quantiles fitted side by side, one core each), and the "
    "family's time over each (< 1: the family is faster). Per depth: the "
    "geometric mean of each ratio over the datasets where every fit (the "
    "family and each single fit) was proven optimal within the allowed time, "
    "the log ratios averaged over a dataset's folds and seeds first; with at "
    f"least {MIN_UNITS} datasets a 95 % percentile bootstrap interval "
    f"({N_RESAMPLES} resamples of the datasets, NumPy seed {SEED}), below "
    f"{MIN_UNITS} none. Runs where some fit was not proven are shown, never "
    "averaged. Objective check: each τ's objective in the family fit against "
    "its single fit's, where both were proven; they agree when they differ by "
    f"at most {RELATIVE_TOLERANCE:g} × max(1, |objective|)."
)


def _methods_by_taus(frame: pd.DataFrame) -> tuple[dict, dict]:
    """``(families, singles)``: family label -> its taus; tau -> the first
    single method (by label) that fits it alone. Penalised families are
    neither."""
    families, singles = {}, {}
    for label in sorted(frame["method"].unique()):
        family = frame.loc[frame["method"] == label, "objective_family"].dropna()
        if family.empty or "+" in str(family.iloc[0]):
            continue
        taus = pinball_taus(family.iloc[0])
        if taus is None:
            continue
        if len(taus) > 1:
            families[label] = taus
        else:
            singles.setdefault(taus[0], label)
    return families, singles


def _family_taus(run, n: int) -> tuple[list, list]:
    """Each tau's objective in a family run and whether it was proven within
    the allowed time (NaN and False where the record has none)."""
    stats = stats_dict(run["stats"])
    objectives = stats.get("objective_per_quantile") or [math.nan] * n
    claimed = stats.get("optimal_per_quantile") or [False] * n
    in_time = (
        run["status"] == "ok"
        and bool(run["has_tree"])
        and run["fit_time_s"] <= allowed_fit_time(run["time_limit"])
    )
    return [float(v) for v in objectives], [bool(c) and in_time for c in claimed]


def _runs_of(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    runs = frame[frame["method"] == label].set_index(_KEYS)
    return runs[~runs.index.duplicated(keep="last")]


def _time(run) -> float:
    seconds = run["fit_time_s"]
    return float(seconds) if pd.notna(seconds) and seconds > 0 else math.nan


def family_comparisons(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The family runs that have a single fit of every tau, and their taus.

    Parameters
    ----------
    frame : DataFrame
        Records of one protocol (with ``objective_family``).

    Returns
    -------
    runs : DataFrame
        One row per compared family run: ``family``, ``dataset``,
        ``depth``, ``fold``, ``seed``, ``family_s`` (its fit time),
        ``sum_s`` and ``slowest_s`` (of the single fits), ``per_sum`` and
        ``per_slowest`` (``family_s`` over each; NaN when a fit has no
        time), ``all_proven`` (the family and every single fit proven).
    taus : DataFrame
        One row per tau of those runs: the run's keys, ``tau``, ``single``
        (the single method), ``family_objective``, ``single_objective``,
        ``family_proven``, ``single_proven``.
    """
    frame = with_problem(frame)
    families, singles = _methods_by_taus(frame)
    rows, pairs = [], []
    for family, taus in families.items():
        labels = [singles.get(tau) for tau in taus]
        if None in labels:
            continue
        single_runs = [_runs_of(frame, label) for label in labels]
        for key, run in _runs_of(frame, family).iterrows():
            if any(key not in runs.index for runs in single_runs):
                continue
            others = [runs.loc[key] for runs in single_runs]
            ids = {"family": family, **dict(zip(_KEYS, key))}
            del ids["problem"]
            times = [_time(other) for other in others]
            family_s = _time(run)
            rows.append(
                {
                    **ids,
                    "family_s": family_s,
                    "sum_s": sum(times),
                    "slowest_s": max(times),
                    "per_sum": family_s / sum(times),
                    "per_slowest": family_s / max(times),
                    "all_proven": bool(run["optimal"])
                    and all(bool(other["optimal"]) for other in others),
                    "workers": _workers(run, others),
                }
            )
            objectives, proven = _family_taus(run, len(taus))
            for k, (tau, label, other) in enumerate(zip(taus, labels, others)):
                pairs.append(
                    {
                        **ids,
                        "tau": tau,
                        "single": label,
                        "family_objective": objectives[k],
                        "single_objective": float(other["objective"]),
                        "family_proven": proven[k],
                        "single_proven": bool(other["optimal"]),
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(pairs)


def _workers(run, others) -> int | None:
    """The most runs executed at once among these runs (provenance)."""
    counts = []
    for record in [run, *others]:
        provenance = stats_dict(record.get("provenance"))
        if "workers" in provenance:
            counts.append(int(provenance["workers"]))
    return max(counts) if counts else None


def family_summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per family and depth: the geometric means of the family's time over
    the sum and over the slowest of the single fits.

    Parameters
    ----------
    runs : DataFrame
        The runs of :func:`family_comparisons`.

    Returns
    -------
    DataFrame
        One row per family and depth: ``family``, ``depth``, ``datasets``,
        ``datasets_proven`` (the units of the means: datasets with a run
        where every fit was proven), and ``per_sum`` / ``per_slowest`` with
        ``_low`` / ``_high`` (bootstrap bounds, NaN below
        :data:`~odtstudy.study.report._speed.MIN_UNITS` datasets).
    """
    rows = []
    for (family, depth), part in runs.groupby(["family", "depth"], sort=True):
        proven = part[part["all_proven"] & part["per_sum"].notna()]
        row = {
            "family": family,
            "depth": int(depth),
            "datasets": part["dataset"].nunique(),
            "datasets_proven": proven["dataset"].nunique(),
        }
        for column, times in (("per_sum", "sum_s"), ("per_slowest", "slowest_s")):
            estimate = geometric_ratio(
                proven["family_s"], proven[times], units=proven["dataset"]
            )
            row[column] = estimate.ratio
            row[f"{column}_low"] = estimate.low
            row[f"{column}_high"] = estimate.high
        rows.append(row)
    return pd.DataFrame(rows)


def objective_mismatches(taus: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The taus whose proven objectives differ between the family fit and
    the single fit, and how many taus both proved.

    Parameters
    ----------
    taus : DataFrame
        The taus of :func:`family_comparisons`.

    Returns
    -------
    mismatches : DataFrame
        The run's keys, ``tau``, ``single``, both objectives and their
        difference, for each tau where they disagree.
    compared : int
        Taus proven by both fits.
    """
    if taus.empty:
        return taus, 0
    both = taus[
        taus["family_proven"]
        & taus["single_proven"]
        & np.isfinite(taus["family_objective"])
        & np.isfinite(taus["single_objective"])
    ]
    difference = both["family_objective"] - both["single_objective"]
    scale = np.maximum(both["family_objective"].abs(), both["single_objective"].abs())
    wrong = difference.abs() > objective_tolerance(scale)
    mismatches = both[wrong].assign(difference=difference[wrong])
    columns = [
        "family", "dataset", "depth", "fold", "seed", "tau", "single",
        "family_objective", "single_objective", "difference",
    ]  # fmt: skip
    return mismatches[columns].reset_index(drop=True), len(both)


def _ratio_text(ratio, low, high, n) -> str:
    """The speed tables' wording of a ratio over ``n`` datasets."""
    if n == 0:
        return "no dataset with every fit proven"
    return RatioEstimate(ratio, low, high, n).text()


def _concurrency(runs: pd.DataFrame) -> str:
    workers = sorted({int(w) for w in runs["workers"].dropna()})
    if not workers:
        return "at a concurrency the records do not say"
    if workers == [1]:
        return "one at a time"
    return f"up to {workers[-1]} at a time"


def _run_table(runs: pd.DataFrame) -> pd.DataFrame:
    several = runs.groupby(["dataset", "depth"]).size().max() > 1
    keys = ["dataset", "depth", *(["fold", "seed"] if several else [])]
    table = runs.sort_values(["depth", "dataset", "fold", "seed"])[keys].copy()
    table["family (s)"] = runs["family_s"].map(lambda v: f"{v:.3g}")
    table["sum of single fits (s)"] = runs["sum_s"].map(lambda v: f"{v:.3g}")
    table["slowest single fit (s)"] = runs["slowest_s"].map(lambda v: f"{v:.3g}")
    table["family / sum"] = runs["per_sum"].map(lambda v: f"{v:.3g}")
    table["family / slowest"] = runs["per_slowest"].map(lambda v: f"{v:.3g}")
    table["all proven"] = runs["all_proven"].map({True: "yes", False: "no"})
    return table.reset_index(drop=True)


def _summary_table(summary: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for row in summary.to_dict("records"):
        rows.append(
            {
                "depth": row["depth"],
                "datasets": row["datasets"],
                "datasets with every fit proven": row["datasets_proven"],
                "family / sum (geo-mean over datasets [95 % CI])": _ratio_text(
                    *(row[f"per_sum{s}"] for s in ("", "_low", "_high")),
                    row["datasets_proven"],
                ),
                "family / slowest (geo-mean over datasets [95 % CI])": _ratio_text(
                    *(row[f"per_slowest{s}"] for s in ("", "_low", "_high")),
                    row["datasets_proven"],
                ),
            }
        )
    return pd.DataFrame(rows)


def _objective_check(doc: Document, taus: pd.DataFrame) -> None:
    mismatches, compared = objective_mismatches(taus)
    unchecked = len(taus) - compared
    note = f" {unchecked} τ not checked (not proven by both fits)." if unchecked else ""
    if mismatches.empty:
        doc.text(
            f"Objective check: OK, the {compared} τ proven by both fits have "
            f"the same objective in the family as in their single fit.{note}"
        )
        return
    doc.text(
        f"Objective check: MISMATCH at {len(mismatches)} of the {compared} τ "
        f"proven by both fits (by dataset, depth and τ below).{note}",
        alert=True,
    )
    doc.table(mismatches, floatfmt=".10g")


def quantile_family_section(doc: Document, records: StudyRecords) -> None:
    """The section comparing each quantile family with its single fits.

    Written only when the records hold a family run and a single fit of
    each of its taus on the same run (see the module documentation).

    Parameters
    ----------
    doc : Document
    records : StudyRecords
        One protocol's records.
    """
    runs, taus = family_comparisons(records.frame)
    if runs.empty:
        return
    doc.heading("Quantile family against one fit per quantile")
    families = list(dict.fromkeys(runs["family"]))
    for family in families:
        mine = runs[runs["family"] == family]
        its_taus = taus[taus["family"] == family]
        if len(families) > 1:
            doc.heading(family, 3)
        ordered = its_taus.drop_duplicates("tau")
        doc.text(
            QUANTILE_FAMILY_RULE.format(
                family=family,
                taus=", ".join(f"{tau:g}" for tau in ordered["tau"]),
                singles=", ".join(ordered["single"]),
                concurrency=_concurrency(mine),
            )
        )
        doc.table(_summary_table(family_summary(mine)))
        doc.table(_run_table(mine))
        _objective_check(doc, its_taus)
