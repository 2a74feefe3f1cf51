"""The report's tables, as DataFrames of display strings.

Bold (``**...**``) marks the best complete cell of a row; an incomplete cell
is shown in brackets and is never bolded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy.study.report._records import CELL_KEYS, StudyRecords, _stat
from odtstudy.study.report._regression import objective_tolerance

__all__ = [
    "ERROR_CELL_MEANS",
    "accuracy_table",
    "cells_table",
    "errors_table",
    "gap_table",
    "measure_table",
    "objective_table",
    "primal_integral_table",
    "summary_table",
]


def _geomean(values) -> float:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    return float(np.exp(np.log(values).mean())) if len(values) else np.nan


def _seconds(value) -> str:
    return "" if pd.isna(value) else f"{value:.3g}"


def _measure(value, fmt) -> str:
    """``value`` in ``fmt``; ``—`` for a measure the method has none of (the
    MSE of a fit of several quantiles)."""
    return "—" if pd.isna(value) else format(value, fmt)


def _best_per_row(values: pd.DataFrame, complete: pd.DataFrame, higher: bool, decimals):
    """Boolean frame: the best complete value(s) of each row, at display precision
    (``decimals`` places, or a format spec such as ``".4g"``)."""
    if isinstance(decimals, str):
        shown = values.map(lambda v: float(format(v, decimals)), na_action="ignore")
    else:
        shown = values.round(decimals)
    shown = shown.where(complete)
    best = shown.max(axis=1) if higher else shown.min(axis=1)
    return shown.eq(best, axis=0) & complete


def _pivot(cells, depth, column, methods):
    part = cells[cells["depth"] == depth]
    table = part.pivot(index="dataset", columns="method", values=column)
    return table.reindex(columns=[m for m in methods if m in table.columns])


def _marked(texts: pd.DataFrame, complete: pd.DataFrame, best: pd.DataFrame):
    """Bracket incomplete cells, bold the best complete ones, ``—`` for no tree."""
    table = texts.astype(object).copy()
    for method in texts.columns:
        for dataset in texts.index:
            text = texts.loc[dataset, method]
            if pd.isna(text):
                text = "—"
            elif not complete.loc[dataset, method]:
                text = f"({text})"
            elif best.loc[dataset, method]:
                text = f"**{text}**"
            table.loc[dataset, method] = text
    return table.reset_index()


def _cell_frames(records, depth, column, methods, higher, decimals):
    mean = _pivot(records.cells, depth, column, methods)
    complete = _pivot(records.cells, depth, "complete", methods)
    complete = complete.reindex_like(mean).fillna(False).astype(bool)
    return mean, complete, _best_per_row(mean, complete, higher, decimals)


def accuracy_table(records: StudyRecords, depth: int, methods=None) -> pd.DataFrame:
    """Datasets × methods: mean ± std test accuracy at one depth."""
    return measure_table(records, depth, methods)


def measure_table(
    records: StudyRecords,
    depth: int,
    methods=None,
    column: str = "test_acc",
    std: str = "test_std",
    higher: bool = True,
    fmt: str = ".3f",
) -> pd.DataFrame:
    """Datasets × methods: mean ± std of a cells ``column`` at one depth.

    The best complete cell of a row (highest, or lowest when ``higher`` is
    false, at the display precision ``fmt``) is bold.
    """
    methods = methods or records.method_order
    decimals = int(fmt[1:-1]) if fmt.endswith("f") else fmt
    mean, complete, best = _cell_frames(
        records, depth, column, methods, higher, decimals
    )
    spread = _pivot(records.cells, depth, std, methods).reindex_like(mean)
    texts = mean.astype(object).copy()
    for method in mean.columns:
        texts[method] = [
            None
            if pd.isna(m)
            else format(m, fmt) + ("" if pd.isna(s) else f" ± {format(s, fmt)}")
            for m, s in zip(mean[method], spread[method])
        ]
    return _marked(texts, complete, best)


def objective_table(records: StudyRecords, depth: int, methods=None) -> pd.DataFrame:
    """Datasets × exact methods (default: all of them): mean training
    objective at one depth (``*``: some run not proven optimal)."""
    methods = methods or records.exact_methods
    mean, complete, best = _cell_frames(records, depth, "objective", methods, False, 6)
    if mean.empty:
        return pd.DataFrame()
    proven = _pivot(records.cells, depth, "all_proven", methods).reindex_like(mean)
    proven = proven.fillna(False).astype(bool)
    # cell by cell, as objects: a column without any objective is float NaN,
    # to which pandas 3 refuses to add strings
    texts = pd.DataFrame(
        {
            method: [
                None if pd.isna(value) else f"{value:.6g}" + ("" if ok else "*")
                for value, ok in zip(mean[method], proven[method])
            ]
            for method in mean.columns
        },
        index=mean.index,
        dtype=object,
    )
    texts.columns.name = mean.columns.name
    return _marked(texts, complete, best)


def summary_table(
    records: StudyRecords,
    tests: dict,
    column: str = "test_acc",
    heading: str | None = None,
    fmt: str = ".3f",
) -> pd.DataFrame:
    """Method × depth: accuracy (and its average rank where a rank test ran),
    complete cells, runs with a tree of their own, proofs, fit time and memory.

    ``tests`` maps depth -> :class:`RankTest` on held-out accuracy; a rank is
    shown only where that test ran (:func:`odtstudy.study.report._stats.rank_test`).
    Another measure than accuracy: its cells ``column``, ``heading`` and
    display format ``fmt``.
    """
    frame = records.frame
    cells = records.cells
    accuracy = heading or records.accuracy_heading
    ranked = any(test.tested for test in tests.values())
    rows = []
    for depth in records.depths:
        test = tests.get(depth)
        for method in records.method_order:
            part = cells[(cells["depth"] == depth) & (cells["method"] == method)]
            if part.empty:
                continue
            runs = frame[(frame["depth"] == depth) & (frame["method"] == method)]
            times = runs["fit_time_s"].dropna()
            n_runs = int(part["expected"].sum())
            complete = part[part["complete"]]
            row = {"depth": depth, "method": method}
            if ranked:
                rank = (
                    test.ranks.get(method, np.nan)
                    if test is not None and test.tested
                    else np.nan
                )
                row[f"avg rank, {accuracy}"] = "" if pd.isna(rank) else f"{rank:.2f}"
            row.update(
                {
                    f"{accuracy}, mean over complete cells": ""
                    if complete.empty
                    else _measure(complete[column].mean(), fmt),
                    "cells complete": f"{len(complete)}/{len(part)}",
                    "runs with a tree of its own": f"{int(part['n_trees'].sum())}"
                    f"/{n_runs}",
                    "runs proven": f"{int(part['proven'].sum())}/{n_runs}"
                    if records.is_exact(method)
                    else "",
                    "median fit time (s)": _seconds(times.median()),
                    "geo-mean fit time (s)": _seconds(_geomean(times)),
                    **_tuning_column(runs, method, records),
                    "median fit memory (MB)": _seconds(runs["fit_mem_mb"].median()),
                    "trees": _seconds(runs["n_trees"].mean()),
                }
            )
            rows.append(row)
    table = pd.DataFrame(rows)
    if "trees" in table and not table["trees"].astype(bool).any():
        table = table.drop(columns="trees")  # no forest in the study
    return table


def _tuning_column(runs: pd.DataFrame, method: str, records: StudyRecords) -> dict:
    """The median time of a tuned method's inner fits, in a study with tuned
    methods (empty for another method); no column in a study without."""
    if not records.tuned_methods:
        return {}
    median = ""
    if method in records.tuned_methods:
        seconds = runs["stats"].map(lambda stats: _stat(stats, "tuning_time_s"))
        median = _seconds(pd.to_numeric(seconds, errors="coerce").dropna().median())
    return {"median tuning time (s)": median}


def primal_integral_table(
    integrals: pd.DataFrame, records: StudyRecords
) -> pd.DataFrame:
    """Method × depth: mean primal integral (s) over the traced runs, and over
    the runs every traced method of that depth shares."""
    if integrals.empty:
        return pd.DataFrame()
    keys = ["dataset", "depth", "fold", "seed"]
    methods = [m for m in records.exact_methods if m in set(integrals["method"])]
    rows = []
    for depth in records.depths:
        part = integrals[integrals["depth"] == depth]
        wide = part.pivot_table(index=keys, columns="method", values="primal_integral")
        common = wide.dropna()
        for method in methods:
            values = part.loc[part["method"] == method, "primal_integral"]
            if values.empty:
                continue
            rows.append(
                {
                    "depth": depth,
                    "method": method,
                    "runs traced": len(values),
                    "mean primal integral (s)": f"{values.mean():.3g}",
                    "median (s)": f"{values.median():.3g}",
                    "runs all traced methods share": len(common),
                    "mean on those (s)": f"{common[method].mean():.3g}"
                    if method in common
                    else "",
                }
            )
    return pd.DataFrame(rows)


def gap_table(gaps: pd.DataFrame, records: StudyRecords) -> pd.DataFrame:
    """Method × depth: runs compared with a proven optimum, share at the
    optimum, mean and max gap (misclassifications and accuracy points; on
    regression records, the loss and its percent of the optimum)."""
    if gaps.empty:
        return pd.DataFrame()
    relative = "relative_gap" in gaps
    order = {m: i for i, m in enumerate(records.method_order)}
    rows = []
    for (method, depth), part in gaps.groupby(["method", "depth"]):
        at_optimum = (
            part["gap"].abs() <= objective_tolerance(part["optimum"])
            if relative
            else part["gap"].abs() < 1e-9
        )
        row = {
            "method": method,
            "exact": "yes (not proven)" if records.is_exact(method) else "no",
            "depth": int(depth),
            "runs": len(part),
            "at the optimum": f"{at_optimum.mean():.0%}",
            "mean gap": part["gap"].mean(),
            "max gap": part["gap"].max(),
        }
        if relative:
            row["mean gap (% of the optimum)"] = part["relative_gap"].mean()
            row["max gap (% of the optimum)"] = part["relative_gap"].max()
        else:
            row["mean gap (acc. points)"] = part["gap_points"].mean()
        rows.append(row)
    table = pd.DataFrame(rows)
    key = table["method"].map(order).fillna(len(order))
    return table.assign(_k=key).sort_values(["_k", "depth"]).drop(columns="_k")


#: (heading, cells column) of the means in the table of every cell
_CELL_MEANS = (
    ("test acc", "test_acc"),
    ("± std", "test_std"),
    ("train acc", "train_acc"),
    ("objective", "objective"),
)
#: the same for regression records
ERROR_CELL_MEANS = (
    ("test MSE", "test_mse"),
    ("± std", "test_mse_std"),
    ("train MSE", "train_mse"),
    ("test MAE", "test_mae"),
    ("test R²", "test_r2"),
    ("objective", "objective"),
)
#: (heading, cells column) of a regression cell's held-out errors
_ERRORS = (
    ("test MSE", "test_mse"),
    ("test MAE", "test_mae"),
    ("test R²", "test_r2"),
    ("test pinball loss", "test_pinball"),
)


def errors_table(records: StudyRecords, depth: int) -> pd.DataFrame:
    """Dataset × method rows at one depth: mean test MSE, MAE, R² and, for
    methods with a pinball objective, the pinball loss (at their τ);
    incomplete cells in brackets, ``—``: no tree of its own."""
    cells = records.cells
    part = cells[cells["depth"] == depth]
    order = {m: i for i, m in enumerate(records.method_order)}
    part = part.assign(_k=part["method"].map(order)).sort_values(["dataset", "_k"])
    shown = [(name, c) for name, c in _ERRORS if c in part and part[c].notna().any()]
    rows = []
    for cell in part.to_dict("records"):
        row = {"dataset": cell["dataset"], "method": cell["method"]}
        for name, column in shown:
            value = cell[column]
            text = "—" if pd.isna(value) else f"{value:.4g}"
            if not pd.isna(value) and not cell["complete"]:
                text = f"({text})"
            row[name] = text
        rows.append(row)
    return pd.DataFrame(rows)


def cells_table(records: StudyRecords, means=_CELL_MEANS) -> pd.DataFrame:
    """Every cell, flat: ``k/n ok``, completeness, means (incomplete in
    brackets; ``means``: (heading, cells column) pairs) and the runs with a
    tree of their own (``own tree``)."""
    cells = records.cells.copy()
    expected = cells["expected"]
    table = pd.DataFrame({key: cells[key] for key in CELL_KEYS})
    table["runs ok"] = [f"{n}/{e}" for n, e in zip(cells["n_ok"], expected)]
    table["complete"] = cells["complete"].map({True: "yes", False: "incomplete"})
    for name, column in means:
        if column not in cells:
            continue
        table[name] = [
            v if ok or pd.isna(v) else f"({v:.3f})"
            for v, ok in zip(cells[column], cells["complete"])
        ]
    table["proven"] = cells["proven"].astype(int)
    table["fit time (s)"] = cells["fit_time"]
    table["fit memory (MB)"] = cells["fit_mem"]
    table["own tree"] = [f"{n}/{e}" for n, e in zip(cells["n_trees"], expected)]
    return table
