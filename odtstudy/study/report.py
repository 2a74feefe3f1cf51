"""Reports built only from a study's stored records: tables + figures.

The same content is written as ``report.md`` and ``report.html`` next to the
figures (PNG and SVG) in ``<output>/<study>/``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import pandas as pd

from odtstudy.study.registry import get_method
from odtstudy.study.results import ResultsStore

__all__ = [
    "consistency_violations",
    "heuristic_gaps",
    "make_report",
    "markdown_table",
]

_RUN_KEYS = ["dataset", "depth", "fold", "seed"]


def _cell(value, floatfmt=".3f"):
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else format(value, floatfmt)
    return str(value)


def markdown_table(frame: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """Render a DataFrame as a GitHub Markdown table."""
    header = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in frame.itertuples(index=False):
        cells = (_cell(v, floatfmt).replace("|", "\\|") for v in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _html_table(frame: pd.DataFrame, floatfmt: str = ".3f") -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape(_cell(v, floatfmt))}</td>" for v in row)
        + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Document:
    """Blocks rendered to both Markdown and HTML."""

    def __init__(self, title):
        self.title = title
        self.blocks = []

    def heading(self, text):
        self.blocks.append(("h2", text))

    def text(self, text, alert=False):
        self.blocks.append(("alert" if alert else "p", text))

    def table(self, frame):
        self.blocks.append(("table", frame))

    def figure(self, filename, caption):
        self.blocks.append(("img", (filename, caption)))

    def markdown(self) -> str:
        out = [f"# {self.title}", ""]
        for kind, payload in self.blocks:
            if kind == "h2":
                out += [f"## {payload}", ""]
            elif kind == "p":
                out += [payload, ""]
            elif kind == "alert":
                out += [f'<span style="color:red">**{payload}**</span>', ""]
            elif kind == "table":
                out += [markdown_table(payload), ""]
            else:
                out += [f"![{payload[1]}]({payload[0]})", ""]
        return "\n".join(out)

    def html(self) -> str:
        out = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>{html.escape(self.title)}</title>",
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
            "collapse;font-size:0.85em}td,th{border:1px solid #ccc;padding:2px 6px}"
            ".alert{color:#c00;font-weight:bold}img{max-width:100%}</style>",
            f"</head><body><h1>{html.escape(self.title)}</h1>",
        ]
        for kind, payload in self.blocks:
            if kind == "h2":
                out.append(f"<h2>{html.escape(payload)}</h2>")
            elif kind == "p":
                out.append(f"<p>{html.escape(payload)}</p>")
            elif kind == "alert":
                out.append(f"<p class='alert'>{html.escape(payload)}</p>")
            elif kind == "table":
                out.append(_html_table(payload))
            else:
                src, caption = (html.escape(s) for s in payload)
                out.append(
                    f"<figure><img src='{src}' alt='{caption}'>"
                    f"<figcaption>{caption}</figcaption></figure>"
                )
        out.append("</body></html>")
        return "\n".join(out)


def _method_is_exact(label: str, params: str | None) -> bool:
    try:
        return get_method(label).exact
    except KeyError:
        return False


def _n_trees(stats) -> float:
    try:
        value = json.loads(stats or "{}").get("n_trees")
    except (TypeError, ValueError):
        return np.nan
    return np.nan if value is None else float(value)


def _single_tree_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs of single-tree learners (their objective is training errors);
    forests optimise other objectives and are left out of the checks."""
    stats = frame["stats"] if "stats" in frame else pd.Series(None, index=frame.index)
    return frame[stats.map(_n_trees).isna()]


def consistency_violations(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs where two methods both proved optimality but disagree on the objective.

    Runs are matched on dataset, depth, fold and seed, and on the number of
    features the learner saw (a numeric learner and a 0/1 learner on the
    binarised data solve different problems). Forests are not compared.
    """
    keys = [*_RUN_KEYS, "n_features"]
    frame = _single_tree_runs(frame)
    proven = frame[(frame["status"] == "ok") & frame["optimal"]]
    rows = []
    for key, group in proven.groupby(keys):
        values = group.set_index("method")["objective"].round(6)
        if values.nunique() > 1:
            rows.append(dict(zip(keys, key), objectives=values.to_dict()))
    return pd.DataFrame(rows, columns=[*keys, "objectives"])


def heuristic_gaps(frame: pd.DataFrame) -> pd.DataFrame:
    """Training-objective gap of every non-proven run to the proven optimum.

    For each run that did not prove optimality, the gap is its objective minus
    the optimum another method proved on the same fold and data (same
    features). A negative gap means a method reports a better tree than a
    proven optimum: a bug.
    """
    keys = [*_RUN_KEYS, "n_features"]
    frame = _single_tree_runs(frame)
    ok = frame[(frame["status"] == "ok") & frame["objective"].notna()]
    optimum = ok[ok["optimal"]].groupby(keys)["objective"].min().rename("optimum")
    others = ok[~ok["optimal"]].join(optimum, on=keys, how="inner")
    others = others.assign(gap=others["objective"] - others["optimum"])
    return others[[*keys, "method", "objective", "optimum", "gap"]]


def _summary(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame["status"] == "ok"]
    ok = ok.assign(n_trees=ok["stats"].map(_n_trees))
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
    if ok["n_trees"].notna().any():
        table["trees"] = grouped["n_trees"].mean()
    return table.reset_index()


def _proven_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method: runs proven optimal / runs, and median fit time, per depth."""
    ok = frame[frame["status"] == "ok"]
    rows = []
    for method, group in frame.groupby("method"):
        row = {"method": method}
        for depth, runs in group.groupby("depth"):
            times = ok[(ok["method"] == method) & (ok["depth"] == depth)]
            median = times["fit_time_s"].median()
            row[f"depth {int(depth)}"] = (
                f"{int(runs['optimal'].sum())}/{len(runs)}, {median:.3g}s"
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _status_counts(frame: pd.DataFrame) -> pd.DataFrame:
    counts = frame.pivot_table(
        index="method",
        columns="status",
        values="run_id",
        aggfunc="count",
        fill_value=0,
    )
    for status in ("ok", "timeout", "error", "memout"):
        if status not in counts.columns:
            counts[status] = 0
    counts = counts[["ok", "timeout", "error", "memout"]]
    proven = frame[frame["optimal"] & (frame["status"] == "ok")]
    counts["proven optimal"] = proven.groupby("method").size()
    return counts.fillna(0).astype(int).reset_index()


def _plotting():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    return plt, sns


def _save(fig, folder: Path, name: str) -> str:
    for ext in ("png", "svg"):
        fig.savefig(folder / f"{name}.{ext}", dpi=110, bbox_inches="tight")
    return f"{name}.png"


def _accuracy_figure(ok, folder):
    plt, sns = _plotting()
    grid = sns.relplot(
        data=ok,
        x="depth",
        y="test_acc",
        hue="method",
        col="dataset",
        col_wrap=min(4, ok["dataset"].nunique()),
        kind="line",
        marker="o",
        errorbar="sd",
        height=2.8,
        facet_kws={"sharey": False},
    )
    grid.set_axis_labels("max depth", "test accuracy")
    name = _save(grid.figure, folder, "test_accuracy_vs_depth")
    plt.close(grid.figure)
    return name


def _cactus_figure(frame, folder):
    """Instances solved to proven optimality within t seconds (paper Fig. 4)."""
    proven = frame[(frame["status"] == "ok") & frame["optimal"]]
    if proven.empty:
        return None
    plt, _ = _plotting()
    depths = sorted(frame["depth"].unique())
    fig, axes = plt.subplots(
        1, len(depths), figsize=(3.6 * len(depths), 3), squeeze=False, sharey=True
    )
    for ax, depth in zip(axes[0], depths):
        for method, group in proven[proven["depth"] == depth].groupby("method"):
            times = np.sort(group["fit_time_s"].to_numpy())
            ax.step(times, np.arange(1, len(times) + 1), where="post", label=method)
        ax.set_xscale("log")
        ax.set_title(f"depth {int(depth)}")
        ax.set_xlabel("time (s)")
    axes[0][0].set_ylabel("instances proven optimal")
    axes[0][-1].legend(fontsize=7)
    name = _save(fig, folder, "cactus")
    plt.close(fig)
    return name


def _cost_figure(ok, folder):
    plt, sns = _plotting()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    sns.boxplot(data=ok, x="method", y="fit_time_s", ax=axes[0])
    axes[0].set_yscale("log")
    axes[0].set_ylabel("fit time (s)")
    sns.boxplot(data=ok, x="method", y="peak_rss_mb", ax=axes[1])
    axes[1].set_ylabel("peak RSS (MB)")
    for ax in axes:
        ax.tick_params(axis="x", rotation=45)
    name = _save(fig, folder, "runtime_memory")
    plt.close(fig)
    return name


def _anytime_curves(ok) -> pd.DataFrame:
    rows = []
    for record in ok.itertuples(index=False):
        try:
            curve = json.loads(record.stats or "{}").get("anytime")
        except (TypeError, ValueError):
            curve = None
        if not curve:
            continue
        for point in curve:
            rows.append(
                dict(
                    dataset=record.dataset,
                    depth=record.depth,
                    fold=record.fold,
                    method=record.method,
                    time=float(point[0]),
                    objective=float(point[1]),
                )
            )
    return pd.DataFrame(rows)


def _anytime_figure(ok, folder):
    curves = _anytime_curves(ok)
    if curves.empty:
        return None
    curves = curves[curves["fold"] == curves["fold"].min()]
    plt, sns = _plotting()
    grid = sns.relplot(
        data=curves,
        x="time",
        y="objective",
        hue="method",
        style="depth",
        col="dataset",
        col_wrap=min(4, curves["dataset"].nunique()),
        kind="line",
        drawstyle="steps-post",
        height=2.8,
        facet_kws={"sharey": False, "sharex": False},
    )
    grid.set(xscale="symlog")
    grid.set_axis_labels("time (s)", "training objective")
    name = _save(grid.figure, folder, "anytime")
    plt.close(grid.figure)
    return name


def make_report(study: str, output_dir="reports") -> Path:
    """Write ``report.md`` and ``report.html`` for a study from its records.

    Contents: the consistency check of exact methods (any pair that proves
    optimality with different objectives is listed first, in red), run status
    and proven-optimal counts per method, the per dataset / depth / method
    table (mean ± std test accuracy, train accuracy, objective, proven optimal
    runs, fit time, peak RSS), the training-objective gap of non-proven runs
    to the proven optimum, failed runs with their errors, figures (test
    accuracy vs depth, cactus plot, runtime and memory per method, anytime
    curves where recorded) and the environment.

    Returns
    -------
    Path
        The Markdown report.
    """
    folder = Path(output_dir) / study
    frame = ResultsStore(folder).load()
    if frame.empty:
        raise ValueError(f"no results recorded for study {study!r} in {folder}")
    doc = _Document(f"Study {study}")
    folds = int(frame["n_folds"].max())
    protocol = (
        f"{folds}-fold stratified CV"
        if folds > 1
        else "fitted on all rows (test accuracy = training accuracy)"
    )
    doc.text(
        f"{len(frame)} runs recorded; {frame['dataset'].nunique()} datasets, "
        f"{frame['method'].nunique()} methods, depths "
        f"{sorted(int(d) for d in frame['depth'].unique())}, {protocol}. "
        f"Config hash(es): "
        f"{', '.join(sorted(frame['config_hash'].dropna().unique()))}."
    )
    doc.heading("Proven optimal / median fit time (s) per method and depth")
    doc.table(_proven_table(frame))
    doc.heading("Consistency of exact methods")
    violations = consistency_violations(frame)
    gaps = heuristic_gaps(frame)
    below = gaps[gaps["gap"] < -1e-6]
    if violations.empty and below.empty:
        doc.text(
            "OK: every pair of methods that proved optimality on the same fold "
            "and data reports the same objective, and no method reports a "
            "better training objective than a proven optimum."
        )
    if not violations.empty:
        doc.text(
            "DISAGREEMENT: exact methods proved different optima on these runs.",
            alert=True,
        )
        doc.table(violations)
    if not below.empty:
        doc.text(
            "BELOW THE PROVEN OPTIMUM: these runs report a training "
            "objective better than a proven optimum.",
            alert=True,
        )
        doc.table(below)
    doc.heading("Run status")
    doc.table(_status_counts(frame))
    doc.heading("Results (mean over folds and seeds)")
    doc.table(_summary(frame))
    if not gaps.empty:
        doc.heading("Gap to the proven optimum (training objective)")
        doc.text(
            "Mean objective minus the optimum proven by an exact method on "
            "the same fold and data, for runs that did not prove optimality."
        )
        table = gaps.groupby(["method", "depth"])["gap"].agg(["count", "mean", "max"])
        doc.table(table.reset_index())
    failed = frame[frame["status"] != "ok"]
    if not failed.empty:
        doc.heading("Failed runs")
        shown = failed[["dataset", "method", "depth", "fold", "status", "error"]]
        doc.table(shown.head(50))
    ok = frame[frame["status"] == "ok"]
    if not ok.empty:
        doc.heading("Figures")
        figures = [
            (_accuracy_figure(ok, folder), "Test accuracy vs depth (mean ± sd)"),
            (
                _cactus_figure(frame, folder),
                "Cactus plot: instances proven optimal within a time",
            ),
            (_cost_figure(ok, folder), "Fit time and peak RSS per method"),
            (_anytime_figure(ok, folder), "Anytime curves (first fold)"),
        ]
        for name, caption in figures:
            if name:
                doc.figure(name, caption)
    versions = frame["versions"].dropna()
    if not versions.empty:
        doc.heading("Environment")
        hosts = ", ".join(sorted(frame["host"].dropna().unique()))
        pairs = json.loads(versions.iloc[-1]).items()
        doc.text(f"Host(s): {hosts}. " + ", ".join(f"{k} {v}" for k, v in pairs))
    path = folder / "report.md"
    path.write_text(doc.markdown())
    (folder / "report.html").write_text(doc.html())
    return path
