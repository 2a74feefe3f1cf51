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


#: How a cell (dataset x method x depth) is summarised; printed in the report.
CELL_RULE = (
    "Each cell (dataset × method × depth) expects one run per fold and seed. "
    "`runs ok` counts the runs whose fit returned (`k/n ok`); a run killed at "
    "its hard deadline counts as a tree only if the learner had reported its "
    "best tree before. Means are over the runs with a tree; a cell where some "
    "run has no tree (killed without a tree, out of memory, error) is "
    "**incomplete**: its values are shown in brackets, it is marked "
    "`incomplete` and it is never compared with complete cells. `proven` "
    "counts runs whose learner proved optimality within its allowed time "
    "(time limit × 1.1 + 1 s)."
)


def _expected_runs(frame: pd.DataFrame) -> int:
    """Runs per cell under the frame's protocol (folds × seeds)."""
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    return int(protocol["folds"]) * len(protocol["seeds"])


def _bracket(values: pd.Series, complete: pd.Series) -> pd.Series:
    return pd.Series(
        [
            v if ok or pd.isna(v) else f"({_cell(float(v))})"
            for v, ok in zip(values, complete)
        ],
        index=values.index,
        dtype=object,
    )


def _summary(frame: pd.DataFrame, expected: int) -> pd.DataFrame:
    keys = ["dataset", "depth", "method"]
    trees = frame[frame["has_tree"]]
    trees = trees.assign(n_trees=trees["stats"].map(_n_trees))
    grouped = trees.groupby(keys)
    everything = frame.groupby(keys)
    n_ok = frame[frame["status"] == "ok"].groupby(keys).size()
    n_trees = grouped.size().reindex(everything.size().index, fill_value=0)
    table = pd.DataFrame(index=everything.size().index)
    table["runs ok"] = [f"{int(n_ok.get(key, 0))}/{expected}" for key in table.index]
    complete = n_trees >= expected
    table["complete"] = complete.map({True: "yes", False: "incomplete"})
    columns = {
        "test acc": grouped["test_acc"].mean(),
        "± std": grouped["test_acc"].std(),
        "train acc": grouped["train_acc"].mean(),
        "objective": grouped["objective"].mean(),
        "proven": grouped["optimal"].sum(),
        "fit time (s)": grouped["fit_time_s"].mean(),
        "fit memory (MB)": grouped["fit_mem_mb"].max(),
    }
    for name, values in columns.items():
        values = values.reindex(table.index)
        if name in ("test acc", "± std", "train acc", "objective"):
            values = _bracket(values, complete)
        table[name] = values
    table["proven"] = table["proven"].fillna(0).astype(int)
    if trees["n_trees"].notna().any():
        table["trees"] = grouped["n_trees"].mean().reindex(table.index)
    return table.reset_index()


def complete_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Runs with a tree, restricted to cells where every expected run has one."""
    keys = ["dataset", "depth", "method"]
    expected = _expected_runs(frame)
    trees = frame[frame["has_tree"]]
    size = trees.groupby(keys)["run_id"].transform("size")
    return trees[size >= expected]


def _proven_table(frame: pd.DataFrame, expected: int) -> pd.DataFrame:
    """Per method: runs proven optimal / runs, and median fit time, per depth."""
    ok = frame[frame["status"] == "ok"]
    n_datasets = frame["dataset"].nunique()
    rows = []
    for method, group in frame.groupby("method"):
        row = {"method": method}
        for depth, runs in group.groupby("depth"):
            times = ok[(ok["method"] == method) & (ok["depth"] == depth)]
            median = times["fit_time_s"].median()
            total = expected * n_datasets
            row[f"depth {int(depth)}"] = (
                f"{int(runs['optimal'].sum())}/{total}, {median:.3g}s"
            )
        memory = group["fit_mem_mb"].median()
        row["median fit memory (MB)"] = memory
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
    killed = frame[(frame["status"] == "timeout") & frame["has_tree"]]
    counts["killed, tree kept"] = killed.groupby("method").size()
    proven = frame[frame["optimal"] & (frame["status"] == "ok")]
    counts["proven optimal"] = proven.groupby("method").size()
    claimed = frame[frame["claimed_optimal"] & ~frame["optimal"]]
    counts["optimal after the limit"] = claimed.groupby("method").size()
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


def _accuracy_figure(ok, folder, prefix=""):
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
    name = _save(grid.figure, folder, prefix + "test_accuracy_vs_depth")
    plt.close(grid.figure)
    return name


def _cactus_figure(frame, folder, prefix=""):
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
    name = _save(fig, folder, prefix + "cactus")
    plt.close(fig)
    return name


def _cost_figure(ok, folder, prefix=""):
    plt, sns = _plotting()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    sns.boxplot(data=ok, x="method", y="fit_time_s", ax=axes[0])
    axes[0].set_yscale("log")
    axes[0].set_ylabel("fit time (s)")
    sns.boxplot(data=ok, x="method", y="fit_mem_mb", ax=axes[1])
    axes[1].set_ylabel("fit memory (MB)")
    for ax in axes:
        ax.tick_params(axis="x", rotation=45)
    name = _save(fig, folder, prefix + "runtime_memory")
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


def _anytime_figure(ok, folder, prefix=""):
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
    name = _save(grid.figure, folder, prefix + "anytime")
    plt.close(grid.figure)
    return name


def _protocol_text(frame: pd.DataFrame) -> str:
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    folds = protocol["folds"]
    split = (
        f"{folds}-fold stratified CV"
        if folds > 1
        else "fitted on all rows (test accuracy = training accuracy)"
    )
    memory = protocol["memory_limit_mb"]
    limits = sorted({m["time_limit"] for m in protocol["methods"].values()})
    versions = protocol["versions"]
    return (
        f"Protocol `{frame['protocol_id'].iloc[0]}`: {protocol['scale']} scale, "
        f"{split}, seeds {protocol['seeds']}, time limit "
        f"{', '.join(f'{t:g}' for t in limits)} s per fit (+ grace "
        f"{protocol['grace_s']:g} s before the hard kill), memory limit "
        f"{f'{memory:g} MB' if memory else 'none'}, numeric data binarised with "
        f"at most {protocol['max_thresholds']} thresholds per feature for 0/1 "
        f"learners; odtstudy {versions.get('odtstudy')}, Python "
        f"{versions.get('python')}. {len(frame)} runs recorded; "
        f"{frame['dataset'].nunique()} datasets, {frame['method'].nunique()} "
        f"methods, depths {sorted(int(d) for d in frame['depth'].unique())}."
    )


def _method_parameters(frame: pd.DataFrame) -> pd.DataFrame:
    protocol = json.loads(frame["protocol"].dropna().iloc[0])
    rows = [
        {
            "method": label,
            "learner": spec["method"],
            "time limit (s)": spec["time_limit"],
            "parameters": ", ".join(f"{k}={v!r}" for k, v in spec["params"].items())
            or "defaults",
        }
        for label, spec in protocol["methods"].items()
        if label in set(frame["method"])
    ]
    return pd.DataFrame(rows)


def _consistency(doc: _Document, frame: pd.DataFrame, gaps: pd.DataFrame) -> None:
    doc.heading("Consistency of exact methods")
    violations = consistency_violations(frame)
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


def _protocol_section(doc, frame, folder, prefix="") -> None:
    """The whole report of one protocol's records."""
    expected = _expected_runs(frame)
    doc.text(_protocol_text(frame))
    doc.table(_method_parameters(frame))
    doc.heading("Proven optimal / median fit time (s) per method and depth")
    doc.table(_proven_table(frame, expected))
    gaps = heuristic_gaps(frame)
    _consistency(doc, frame, gaps)
    doc.heading("Run status")
    doc.table(_status_counts(frame))
    doc.heading("Results (mean over folds and seeds)")
    doc.text(CELL_RULE)
    doc.table(_summary(frame, expected))
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
    trees = complete_cells(frame)
    ok = frame[frame["status"] == "ok"]
    if not ok.empty:
        doc.heading("Figures")
        figures = [
            (
                _accuracy_figure(trees, folder, prefix) if not trees.empty else None,
                "Test accuracy vs depth (mean ± sd; complete cells only)",
            ),
            (
                _cactus_figure(frame, folder, prefix),
                "Cactus plot: instances proven optimal within a time",
            ),
            (_cost_figure(ok, folder, prefix), "Fit time and fit memory per method"),
            (_anytime_figure(ok, folder, prefix), "Anytime curves (first fold)"),
        ]
        for name, caption in figures:
            if name:
                doc.figure(name, caption)


def _protocols_newest_first(frame: pd.DataFrame) -> list:
    newest = frame.groupby("protocol_id")["utc"].max().sort_values(ascending=False)
    return list(newest.index)


def make_report(study: str, output_dir="reports", scale: str = "default") -> Path:
    """Write ``report.md`` and ``report.html`` for a study from its records.

    Runs of different protocols (see :func:`odtstudy.study.protocol_of`) are
    never pooled: each protocol gets its own section, newest first, and the
    top of the report says how many there are. Per protocol: the protocol and
    each method's parameters; proven-optimal counts, median fit time and fit
    memory per method and depth; the consistency check of exact methods (any
    pair that proves optimality with different objectives is listed first, in
    red); run status counts; the per dataset / depth / method table (``k/n
    ok``, mean ± std test accuracy, train accuracy, objective, proven runs,
    fit time, fit memory; incomplete cells in brackets); the training-objective
    gap of non-proven runs to the proven optimum; failed runs with their
    errors; figures (test accuracy vs depth, cactus plot, fit time and fit
    memory per method, anytime curves where recorded) and the environment.
    ``results.csv`` (every record, flat) is written beside it.

    Returns
    -------
    Path
        The Markdown report.
    """
    from odtstudy.study.runner import study_folder

    folder = study_folder(output_dir, study, scale)
    store = ResultsStore(folder)
    frame = store.load()
    if frame.empty:
        raise ValueError(f"no results recorded for study {study!r} in {folder}")
    store.export_csv()
    doc = _Document(f"Study {study}" + ("" if scale == "default" else f" ({scale})"))
    if store.damaged_lines:
        doc.text(
            f"{len(store.damaged_lines)} damaged record(s) in {store.path.name} "
            f"(lines {store.damaged_lines[:10]}) were skipped; running the study "
            "again re-runs them.",
            alert=True,
        )
    protocols = _protocols_newest_first(frame)
    if len(protocols) > 1:
        doc.text(
            f"This folder holds runs of {len(protocols)} different protocols "
            f"({', '.join(protocols)}). Their numbers are never pooled: each "
            "protocol is reported in its own section below, newest first.",
            alert=True,
        )
    for protocol_id in protocols:
        part = frame[frame["protocol_id"] == protocol_id]
        if len(protocols) > 1:
            doc.heading(f"Protocol {protocol_id}")
        _protocol_section(
            doc, part, folder, f"{protocol_id}-" if len(protocols) > 1 else ""
        )
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
