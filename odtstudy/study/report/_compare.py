"""Two studies side by side (``odtstudy report A B``).

Each method of study A becomes ``method@A`` and of study B ``method@B``; the
datasets and depths both studies ran are reported with every section of a
protocol report, after a paired table (B vs A) for the methods both ran. The
two protocols must agree on what makes numbers comparable (folds, seeds,
time limits, grace, memory limit, binarisation); package versions and method
parameters may differ, and are listed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from odtstudy.study.report._build import protocol_section
from odtstudy.study.report._document import Document
from odtstudy.study.report._records import StudyRecords, with_defaults
from odtstudy.study.report._regression import REGRESSION, RegressionRecords, study_task
from odtstudy.study.report._speed import MIN_UNITS, geometric_ratio
from odtstudy.study.results import ResultsStore

__all__ = ["compare_studies", "paired_table"]

_SAME = ("folds", "seeds", "time_limit", "grace_s", "memory_limit_mb", "max_thresholds")


def _resolve(name, output_dir, scale) -> Path:
    path = Path(name)
    if (path / "results.jsonl").exists():
        return path
    from odtstudy.study.runner import study_folder

    folder = study_folder(output_dir, str(name), scale)
    if not (folder / "results.jsonl").exists():
        raise ValueError(f"no results.jsonl in {path} nor in {folder}")
    return folder


def _newest_protocol(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict, int]:
    newest = frame.groupby("protocol_id")["utc"].max().sort_values().index[-1]
    part = frame[frame["protocol_id"] == newest]
    n_protocols = frame["protocol_id"].nunique()
    return part, json.loads(part["protocol"].dropna().iloc[0]), n_protocols


def _differences(pa: dict, pb: dict) -> list:
    wrong = [
        f"{key}: {pa.get(key)} vs {pb.get(key)}"
        for key in _SAME
        if pa.get(key) != pb.get(key)
    ]
    for method in sorted(set(pa["methods"]) & set(pb["methods"])):
        ta, tb = (
            pa["methods"][method]["time_limit"],
            pb["methods"][method]["time_limit"],
        )
        if ta != tb:
            wrong.append(f"{method} time limit: {ta} vs {tb}")
    return wrong


def paired_table(
    frame: pd.DataFrame, methods, label_a, label_b, expected
) -> pd.DataFrame:
    """Per method both studies ran and depth: B minus A on complete cells.

    Columns: datasets compared, mean Δ test accuracy (test MSE on
    regression records; B wins where it is lower), wins/ties/losses of B,
    Wilcoxon signed-rank p (scipy; two-sided, over datasets; none below
    :data:`~odtstudy.study.report._speed.MIN_UNITS` datasets), geometric mean of
    B's fit time over A's on the runs both proved optimal, averaged per
    dataset, with its bootstrap interval over datasets
    (:func:`odtstudy.study.report._speed.geometric_ratio`).
    """
    if study_task(frame) == REGRESSION:
        records = RegressionRecords(frame, expected, {})
        column, name, sign, fmt = "test_mse", "Δ test MSE (B − A)", -1, "+.4g"
    else:
        records = StudyRecords(frame, expected, {})
        column, name, sign, fmt = "test_acc", "Δ test acc (B − A)", 1, "+.4f"
    cells = records.cells
    rows = []
    for method in methods:
        a, b = f"{method}@{label_a}", f"{method}@{label_b}"
        for depth in records.depths:
            part = cells[(cells["depth"] == depth) & cells["method"].isin([a, b])]
            wide = part[part["complete"]].pivot(
                index="dataset", columns="method", values=column
            )
            if a not in wide or b not in wide:
                continue
            wide = wide[[a, b]].dropna()
            diff = (wide[b] - wide[a]).round(9)
            wins, losses = int((sign * diff > 0).sum()), int((sign * diff < 0).sum())
            ties = len(diff) - wins - losses
            nonzero = diff[diff != 0]
            if len(diff) < MIN_UNITS:
                pvalue = np.nan  # too few datasets for a test
            elif nonzero.empty:
                pvalue = 1.0
            else:
                pvalue = float(stats.wilcoxon(diff).pvalue)
            rows.append(
                {
                    "method": method,
                    "depth": depth,
                    "datasets": len(wide),
                    name: format(diff.mean(), fmt) if len(wide) else "",
                    "B wins/ties/losses": f"{wins}/{ties}/{losses}",
                    "Wilcoxon p": "" if np.isnan(pvalue) else f"{pvalue:.3g}",
                    "fit time B / A (geo-mean [95 % CI], both proven)": _time_ratio(
                        frame, a, b, depth
                    ),
                }
            )
    return pd.DataFrame(rows)


def _time_ratio(frame, a, b, depth) -> str:
    keys = ["dataset", "fold", "seed"]
    runs = frame[(frame["depth"] == depth) & frame["optimal"]]
    ta = runs[runs["method"] == a].set_index(keys)["fit_time_s"]
    tb = runs[runs["method"] == b].set_index(keys)["fit_time_s"]
    both = pd.concat([ta.rename("a"), tb.rename("b")], axis=1).dropna()
    both = both[(both["a"] > 0) & (both["b"] > 0)]
    if both.empty:
        return ""
    datasets = both.index.get_level_values("dataset")
    ratio = geometric_ratio(both["b"], both["a"], units=datasets)
    return f"{ratio.text()} ({len(both)} runs, {ratio.n} datasets)"


def compare_studies(
    a, b, output_dir="reports", scale: str = "default", out=None, reference=None
) -> Path:
    """Write a side-by-side report of two studies (``report.md`` / ``.html``).

    Parameters
    ----------
    a, b : str or path
        Study folders (holding ``results.jsonl``) or study names resolved in
        ``output_dir`` at ``scale``.
    output_dir : path, default="reports"
    scale : str, default="default"
    out : path, default=None
        Report folder; default ``<output_dir>/compare-<folder A>-vs-<folder B>``.
    reference : str, default=None
        Exact method (``method@label``) the others' fit times are compared with.

    Returns
    -------
    Path
        The Markdown report.

    Raises
    ------
    ValueError
        When the two protocols differ in folds, seeds, time limits, grace,
        memory limit or binarisation.
    """
    folders = [_resolve(x, output_dir, scale) for x in (a, b)]
    labels = ["A", "B"]
    parts, protocols, notes = [], [], []
    for folder, label in zip(folders, labels):
        frame = ResultsStore(folder).load()
        if frame.empty:
            raise ValueError(f"no results recorded in {folder}")
        frame, protocol, n = _newest_protocol(frame)
        if n > 1:
            notes.append(f"{label}: newest of its {n} protocols only")
        parts.append(frame)
        protocols.append(protocol)
    wrong = _differences(*protocols)
    if wrong:
        raise ValueError(
            "the two studies ran different protocols, their numbers are not "
            "comparable: " + "; ".join(wrong)
        )
    datasets = set(parts[0]["dataset"]) & set(parts[1]["dataset"])
    depths = set(parts[0]["depth"]) & set(parts[1]["depth"])
    methods, renamed = {}, []
    for frame, protocol, label in zip(parts, protocols, labels):
        frame = frame[frame["dataset"].isin(datasets) & frame["depth"].isin(depths)]
        renamed.append(frame.assign(method=frame["method"] + f"@{label}"))
        for name, spec in protocol["methods"].items():
            methods[f"{name}@{label}"] = spec
    combined = with_defaults(pd.concat(renamed, ignore_index=True))
    expected = int(protocols[0]["folds"]) * len(protocols[0]["seeds"])
    records = StudyRecords(combined, expected, methods)
    name = f"compare-{folders[0].name}-vs-{folders[1].name}"
    folder = Path(out or Path(output_dir) / name)
    folder.mkdir(parents=True, exist_ok=True)
    doc = Document(
        f"Comparison: {folders[0].name} (A) vs {folders[1].name} (B)", folder
    )
    doc.text(
        f"A: `{folders[0]}` (protocol {parts[0]['protocol_id'].iloc[0]}), B: "
        f"`{folders[1]}` (protocol {parts[1]['protocol_id'].iloc[0]}); "
        f"{len(datasets)} datasets and depths {sorted(int(d) for d in depths)} "
        "both ran. Method `m` of A is `m@A`, of B `m@B`."
        + (f" {'; '.join(notes)}." if notes else "")
    )
    shared = sorted(set(protocols[0]["methods"]) & set(protocols[1]["methods"]))
    doc.heading("B vs A, method by method")
    doc.table(paired_table(combined, shared, labels[0], labels[1], expected))
    versions = [
        f"{k}: {protocols[0]['versions'].get(k)} → {protocols[1]['versions'].get(k)}"
        for k in sorted(set(protocols[0]["versions"]) | set(protocols[1]["versions"]))
        if protocols[0]["versions"].get(k) != protocols[1]["versions"].get(k)
    ]
    if versions:
        doc.text("Versions that differ: " + ", ".join(versions) + ".")
    protocol_section(doc, records, folder, reference=reference)
    path = folder / "report.md"
    path.write_text(doc.markdown())
    (folder / "report.html").write_text(doc.html())
    return path
