"""Reports built only from a study's stored records: Markdown tables + figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from odtstudy.study.registry import get_method
from odtstudy.study.results import ResultsStore

__all__ = ["consistency_violations", "make_report", "markdown_table"]


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """Render a DataFrame as a GitHub Markdown table."""
    def cell(value):
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else format(value, floatfmt)
        return str(value).replace("|", "\\|")

    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def _is_exact(label: str, params) -> bool:
    try:
        return get_method(label).exact
    except KeyError:
        pass
    base = params.get("method") if isinstance(params, dict) else None
    try:
        return bool(base) and get_method(base).exact
    except KeyError:
        return False


def consistency_violations(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs where two methods both proved optimality but disagree on the objective.

    Only methods whose objective is the training misclassification count are
    compared (they are the exact learners run with default objectives).
    """
    proven = frame[(frame["status"] == "ok") & frame["optimal"]].copy()
    if proven.empty:
        return pd.DataFrame(columns=["dataset", "depth", "fold", "seed", "objectives"])
    keys = ["dataset", "depth", "fold", "seed"]
    rows = []
    for key, group in proven.groupby(keys):
        values = group.set_index("method")["objective"].round(6)
        if values.nunique() > 1:
            rows.append(dict(zip(keys, key), objectives=values.to_dict()))
    return pd.DataFrame(rows, columns=[*keys, "objectives"])


def _summary(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame["status"] == "ok"]
    grouped = ok.groupby(["dataset", "depth", "method"])
    table = pd.DataFrame(
        {
            "runs ok": grouped.size(),
            "test acc": grouped["test_acc"].mean(),
            "± std": grouped["test_acc"].std(),
            "train acc": grouped["train_acc"].mean(),
            "objective": grouped["objective"].mean(),
            "proven optimal": grouped["optimal"].sum().astype(int),
            "fit time (s)": grouped["fit_time_s"].mean(),
            "peak RSS (MB)": grouped["peak_rss_mb"].max(),
        }
    )
    return table.reset_index()


def _status_counts(frame: pd.DataFrame) -> pd.DataFrame:
    counts = frame.pivot_table(
        index="method", columns="status", values="run_id", aggfunc="count",
        fill_value=0,
    )
    for status in ("ok", "timeout", "error", "memout"):
        if status not in counts.columns:
            counts[status] = 0
    return counts[["ok", "timeout", "error", "memout"]].reset_index()


def _accuracy_figure(frame: pd.DataFrame, folder: Path) -> str | None:
    ok = frame[frame["status"] == "ok"]
    if ok.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    grid = sns.relplot(
        data=ok, x="depth", y="test_acc", hue="method", col="dataset",
        col_wrap=min(4, ok["dataset"].nunique()), kind="line", marker="o",
        errorbar="sd", height=3, facet_kws={"sharey": False},
    )
    grid.set_axis_labels("max depth", "test accuracy")
    name = "test_accuracy_vs_depth"
    for ext in ("png", "svg"):
        grid.savefig(folder / f"{name}.{ext}", dpi=110)
    plt.close(grid.figure)
    return f"{name}.png"


def make_report(study: str, output_dir="reports") -> Path:
    """Write ``<output_dir>/<study>/report.md`` from the stored records.

    The report holds: the consistency check of exact methods (any pair that
    proves optimality with different objectives is listed first), run status
    counts per method, the per dataset / depth / method table (mean ± std
    test accuracy, train accuracy, objective, proven optimal runs, fit time,
    peak RSS), error messages, a test-accuracy-vs-depth figure and the
    package versions used.
    """
    folder = Path(output_dir) / study
    frame = ResultsStore(folder).load()
    if frame.empty:
        raise ValueError(f"no results recorded for study {study!r} in {folder}")
    lines = [f"# Study `{study}`", ""]
    lines += [
        f"{len(frame)} runs recorded; {frame['dataset'].nunique()} datasets, "
        f"{frame['method'].nunique()} methods, depths "
        f"{sorted(int(d) for d in frame['depth'].unique())}, "
        f"{int(frame['n_folds'].max())}-fold CV. Config hash(es): "
        f"{', '.join(sorted(frame['config_hash'].dropna().unique()))}.",
        "",
    ]
    violations = consistency_violations(frame)
    lines.append("## Consistency of exact methods")
    lines.append("")
    if violations.empty:
        lines.append(
            "OK: every pair of methods that proved optimality on the same fold "
            "reports the same objective."
        )
    else:
        lines.append(
            '<span style="color:red">**DISAGREEMENT: exact methods proved '
            "different optima on these runs.**</span>"
        )
        lines.append("")
        lines.append(markdown_table(violations))
    lines += ["", "## Run status", "", markdown_table(_status_counts(frame)), ""]
    lines += ["## Results (mean over folds and seeds)", ""]
    lines += [markdown_table(_summary(frame)), ""]
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        lines += ["## Failed runs", ""]
        shown = failed[["dataset", "method", "depth", "fold", "status", "error"]]
        lines += [markdown_table(shown.head(50)), ""]
    figure = _accuracy_figure(frame, folder)
    if figure:
        lines += ["## Test accuracy vs depth", "", f"![test accuracy]({figure})", ""]
    versions = frame["versions"].dropna()
    if not versions.empty:
        lines += ["## Environment", ""]
        lines.append(
            "Host(s): " + ", ".join(sorted(frame["host"].dropna().unique())) + "."
        )
        lines.append("")
        for name, version in json.loads(versions.iloc[-1]).items():
            lines.append(f"- {name} {version}")
        lines.append("")
    path = folder / "report.md"
    path.write_text("\n".join(lines))
    return path
