"""The report's figures, each saved as PNG and SVG.

Every figure gives each method one colour and one marker (the same in all
figures of a report, :class:`MethodStyle`), puts its legend outside the
axes, uses integer depth ticks, and log time axes shared by its panels.
Only runs that returned a tree of their own are drawn (:func:`own_tree_runs`):
a fallback leaf never stretches an axis.

Each ``*_figure`` function draws with a private ``_draw_*`` function that
returns the matplotlib figure (or ``None`` when there is nothing to draw),
then saves it and returns the PNG's file name.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from odtstudy.study._solver_tree import solver_tree_column
from odtstudy.study.report._checks import with_problem
from odtstudy.study.report._plotstyle import (
    MethodStyle,
    depth_axis,
    footnote,
    legend,
    log_axis,
    panels,
    plt,
    save,
    symlog_axis,
)
from odtstudy.study.report._speed import MIN_UNITS, bootstrap_mean

__all__ = [
    "MethodStyle",
    "accuracy_figure",
    "accuracy_over_datasets_figure",
    "anytime_figure",
    "cactus_figure",
    "cd_figure",
    "cost_figure",
    "gap_figure",
    "mse_figure",
    "own_tree_runs",
    "profile_figure",
    "timed_out",
]

_CELL = ["dataset", "depth", "method"]


def own_tree_runs(frame: pd.DataFrame) -> pd.Series:
    """Which runs returned a tree of their own (a boolean mask of ``frame``):
    ``has_tree`` and ``has_solver_tree`` as written, or derived for older
    records (:func:`odtstudy.study._solver_tree.solver_tree_column`)."""
    has_tree = frame["has_tree"].fillna(False).astype(bool)
    return has_tree & solver_tree_column(frame).astype(bool)


def _not_own_cells(cells: pd.DataFrame, runs: pd.DataFrame) -> pd.Series:
    """Cells (rows of ``cells``) with a run whose tree is not its own."""
    borrowed = runs[runs["has_tree"].fillna(False).astype(bool) & ~own_tree_runs(runs)]
    keys = pd.MultiIndex.from_frame(borrowed[_CELL].drop_duplicates())
    return pd.Series(
        pd.MultiIndex.from_frame(cells[_CELL]).isin(keys), index=cells.index
    )


def _dodge(i: int, n: int, width: float) -> float:
    """Offset of the ``i``-th of ``n`` methods drawn side by side."""
    return (i - (n - 1) / 2) * width


def _draw_accuracy(cells, methods, style, runs=None, measure=None, label=None):
    column, std, test_label, limits = measure or _ACCURACY
    label = label or test_label
    cells = cells[cells["method"].isin(methods)]
    complete = cells["complete"].fillna(False).astype(bool)
    if runs is not None:
        complete &= ~_not_own_cells(cells, runs)
    shown = cells[complete]
    if shown.empty:
        return None
    datasets = sorted(shown["dataset"].unique())
    depths = sorted(int(d) for d in cells["depth"].unique())
    fig, axes = panels(len(datasets))
    width = 0.6 / max(1, len(methods))
    for ax, dataset in zip(axes, datasets):
        part = shown[shown["dataset"] == dataset]
        for i, method in enumerate(methods):
            run = part[part["method"] == method].sort_values("depth")
            if run.empty:
                continue
            _, _, bars = ax.errorbar(
                run["depth"].to_numpy(dtype=float) + _dodge(i, len(methods), width),
                run[column],
                yerr=run[std].fillna(0),
                markersize=4,
                linewidth=0.8,
                elinewidth=0.6,
                capsize=0,
                **style(method),
            )
            for bar in bars:
                bar.set_alpha(0.5)
        ax.set_ylim(*limits(part))
        ax.set_title(dataset)
        depth_axis(ax, depths)
    axes[0].set_ylabel(label)
    legend(fig, style, [m for m in methods if m in set(shown["method"])])
    fig.tight_layout()
    hidden = int((~complete).sum())
    if hidden:
        footnote(
            fig,
            f"Not drawn: {hidden} incomplete cell{'s' * (hidden > 1)} "
            "(a run without a tree of its own).",
        )
    return fig


def _accuracy_limits(cells) -> tuple:
    """The cells' means ± std, within [0, 1], 5 points at least, with a margin."""
    std = cells["test_std"].fillna(0)
    high = min(1.0, float((cells["test_acc"] + std).max()))
    low = max(0.0, min(float((cells["test_acc"] - std).min()), high - 0.05))
    pad = 0.05 * (high - low)
    return low - pad, high + pad


def _mse_limits(cells) -> tuple:
    """The cells' mean test MSE ± std, from 0 at the lowest, with a margin."""
    std = cells["test_mse_std"].fillna(0)
    high = float((cells["test_mse"] + std).max())
    low = max(0.0, float((cells["test_mse"] - std).min()))
    pad = 0.05 * (high - low) or 0.05 * max(high, 1e-12)
    return max(0.0, low - pad), high + pad


#: (cells column, its std column, axis label, y limits) of a measure figure
_ACCURACY = ("test_acc", "test_std", "test accuracy", _accuracy_limits)
_MSE = ("test_mse", "test_mse_std", "test MSE", _mse_limits)


def mse_figure(
    cells, methods, style, folder, name, runs=None, label=None
) -> str | None:
    """Mean test MSE vs depth, one panel per dataset: as
    :func:`accuracy_figure`, on the cells' ``test_mse`` (lower is better)."""
    fig = _draw_accuracy(cells, methods, style, runs, _MSE, label)
    return _saved(fig, folder, name)


def accuracy_figure(
    cells, methods, style, folder, name, runs=None, label=None
) -> str | None:
    """Mean test accuracy vs depth, one panel per dataset (own y scale).

    Only complete cells are drawn (error bars: std over folds and seeds,
    methods side by side); a footnote counts the cells left out. Given the
    ``runs`` of the cells, a cell with a run whose tree is not the solver's
    own (:func:`own_tree_runs`) is left out too. ``label`` names the y axis
    by what was measured (default "test accuracy"; a study that fits on all
    rows measures training accuracy).
    """
    fig = _draw_accuracy(cells, methods, style, runs, label=label)
    return _saved(fig, folder, name)


def paired_dataset_means(cells, methods, depth) -> pd.DataFrame:
    """Mean test accuracy per dataset (rows) and method (columns) at ``depth``,
    on the datasets where every method with a complete cell there has one.

    Parameters
    ----------
    cells : DataFrame
        :attr:`StudyRecords.cells`.
    methods : sequence of str
        The columns, in order; one without a complete cell at ``depth`` is
        left out.
    depth : int

    Returns
    -------
    DataFrame
        No NaN: a dataset missing any column's cell is dropped.
    """
    part = cells[(cells["depth"] == depth) & cells["method"].isin(methods)]
    part = part[part["complete"].fillna(False).astype(bool)]
    wide = part.pivot_table(
        index="dataset", columns="method", values="test_acc", aggfunc="first"
    )
    return wide.reindex(columns=[m for m in methods if m in wide]).dropna()


def _depth_estimates(cells, methods, depths) -> tuple:
    """Per method, (depth, mean, low, high) rows over the paired datasets of
    each depth; and the number of those datasets per depth."""
    estimates = {method: [] for method in methods}
    counts = {}
    for depth in depths:
        wide = paired_dataset_means(cells, methods, depth)
        counts[depth] = len(wide)
        for method in wide.columns if not wide.empty else []:
            estimates[method].append((depth, *bootstrap_mean(wide[method])))
    return {m: rows for m, rows in estimates.items() if rows}, counts


def _draw_over_datasets(cells, methods, style, label):
    depths = sorted(int(d) for d in cells["depth"].unique())
    estimates, counts = _depth_estimates(cells, methods, depths)
    if not estimates:
        return None
    fig, (ax,) = panels(1, width=4.8, height=3.4)
    width = 0.6 / max(1, len(methods))
    for i, method in enumerate(methods):
        if method not in estimates:
            continue
        depth, mean, low, high = np.array(estimates[method], dtype=float).T
        bars = np.nan_to_num(np.vstack([mean - low, high - mean]))
        ax.errorbar(
            depth + _dodge(i, len(methods), width), mean, yerr=bars,
            markersize=4, linewidth=0.8, elinewidth=0.8, capsize=2,
            **style(method),
        )  # fmt: skip
    depth_axis(ax, depths)
    ax.set_ylabel(f"mean {label} over datasets")
    legend(fig, style, [m for m in methods if m in estimates])
    fig.tight_layout()
    shown = ", ".join(f"d{d}: {n}" for d, n in counts.items())
    footnote(
        fig,
        f"Datasets where every method shown has a complete cell ({shown}); "
        f"bars: 95 % bootstrap interval over them (none below {MIN_UNITS}).",
    )
    return fig


def accuracy_over_datasets_figure(
    cells, methods, style, folder, name, label="test accuracy"
) -> str | None:
    """Mean test accuracy vs depth over datasets, one point per method and
    depth, with its 95 % percentile bootstrap interval over datasets.

    At each depth only the datasets where every method drawn has a complete
    cell count (:func:`paired_dataset_means`), so the methods are compared
    on the same datasets; fewer than
    :data:`~odtstudy.study.report._speed.MIN_UNITS` of them: no interval.
    """
    fig = _draw_over_datasets(cells, methods, style, label)
    return _saved(fig, folder, name)


def _saved(fig, folder, name) -> str | None:
    return None if fig is None else save(fig, folder, name)


def cd_figure(test, folder, name, title) -> str | None:
    """Critical-difference diagram (Demšar 2006): average ranks on an axis,
    methods whose ranks differ by less than the Nemenyi CD joined by a bar."""
    if not test.tested:
        return None
    ranks = test.ranks
    k = len(ranks)
    lo, hi = 1, k
    half = (k + 1) // 2
    height = 0.8 + 0.28 * half
    fig, ax = plt().subplots(figsize=(7.0, height))
    ax.set_xlim(lo - 0.5, hi + 0.5)
    ax.set_ylim(0, height)
    ax.axis("off")
    axis_y = height - 0.55
    ax.plot([lo, hi], [axis_y, axis_y], color="black", linewidth=1)
    for r in range(lo, hi + 1):
        ax.plot([r, r], [axis_y, axis_y + 0.08], color="black", linewidth=1)
        ax.text(r, axis_y + 0.12, str(r), ha="center", va="bottom", fontsize=8)
    # CD bar above the axis, left aligned
    ax.plot([lo, lo + test.cd], [height - 0.12] * 2, color="black", linewidth=1.5)
    ax.text(
        lo + test.cd / 2,
        height - 0.1,
        f"CD = {test.cd:.2f}",
        ha="center",
        va="bottom",
        fontsize=8,
    )
    methods = list(ranks.index)
    for i, method in enumerate(methods):
        r = ranks[method]
        left = i < half
        row = i if left else k - 1 - i
        y = axis_y - 0.3 - 0.28 * row
        x_end = lo - 0.35 if left else hi + 0.35
        ax.plot([r, r, x_end], [axis_y, y, y], color="black", linewidth=0.8)
        ax.text(
            x_end + (-0.05 if left else 0.05),
            y,
            f"{method} ({r:.2f})",
            ha="right" if left else "left",
            va="center",
            fontsize=8,
        )
    # cliques: maximal runs of methods within CD of each other; when the
    # Friedman test does not reject, no post-hoc test runs and one bar joins all
    cliques = []
    if not test.rejects:
        cliques.append((0, k - 1))
    else:
        for i in range(k):
            j = i
            while j + 1 < k and ranks.iloc[j + 1] - ranks.iloc[i] <= test.cd:
                j += 1
            if j > i and not any(a <= i and j <= b for a, b in cliques):
                cliques.append((i, j))
    for n, (i, j) in enumerate(cliques):
        y = axis_y - 0.12 - 0.07 * n
        ax.plot(
            [ranks.iloc[i] - 0.03, ranks.iloc[j] + 0.03],
            [y, y],
            color="#444",
            linewidth=3,
            solid_capstyle="round",
        )
    ax.set_title(
        f"{title}: Friedman p = {test.pvalue:.3g}"
        + ("" if test.rejects else " (no significant difference)")
        + f", {test.n_datasets} datasets",
        fontsize=9,
    )
    return save(fig, folder, name)


def _draw_cactus(frame, methods, style, groups=None):
    runs = frame[frame["method"].isin(methods)]
    proven_mask = runs["optimal"].fillna(False).astype(bool) & own_tree_runs(runs)
    if not proven_mask.any():
        return None
    if not groups:
        depths = sorted(int(d) for d in frame["depth"].unique())
        groups = [(f"depth {d}", frame[frame["depth"] == d]) for d in depths]
    fig, axes = panels(len(groups), sharex=True, sharey=True)
    for ax, (title, group) in zip(axes, groups):
        part = runs.loc[runs.index.intersection(group.index)]
        proven = part[proven_mask.loc[part.index]]
        for method in methods:
            times = np.sort(
                proven.loc[proven["method"] == method, "fit_time_s"].to_numpy()
            )
            if len(times):
                ax.step(
                    times,
                    np.arange(1, len(times) + 1),
                    where="post",
                    linewidth=1.2,
                    markevery=max(1, len(times) // 6),
                    markersize=4,
                    **style(method),
                )
        log_axis(ax)
        ax.set_title(title)
        ax.set_xlabel("fit time (s)")
        # a tier's methods run the same runs: one dotted line per run count
        counts = part.groupby("method")["run_id"].count()
        for n_runs in sorted(set(counts.to_numpy().tolist())):
            ax.axhline(n_runs, color="grey", linestyle=":", linewidth=0.8)
    from matplotlib.ticker import MaxNLocator

    axes[0].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].set_ylabel("runs proven optimal")
    shown = set(runs.loc[proven_mask, "method"])
    legend(fig, style, [m for m in methods if m in shown])
    fig.tight_layout()
    return fig


def cactus_figure(frame, methods, style, folder, name, groups=None) -> str | None:
    """Runs proven optimal within t seconds, one panel per depth, or per
    ``groups`` entry ``(title, records)`` (a tier and depth) when given
    (shared log time axis; dotted: the number of runs of a method in the
    panel, one line per distinct count: a run not proven in its limit never
    reaches it)."""
    return _saved(_draw_cactus(frame, methods, style, groups), folder, name)


def _draw_profile(frame, methods, style, floor):
    runs = with_problem(frame[frame["method"].isin(methods)])
    seconds = np.maximum(runs["fit_time_s"], floor)
    proved = runs["optimal"].fillna(False).astype(bool) & own_tree_runs(runs)
    times = runs.assign(t=seconds.where(proved, np.inf))
    table = times.pivot_table(
        index=["dataset", "depth", "fold", "seed", "problem", "objective_family"],
        columns="method",
        values="t",
        aggfunc="min",
    )
    table = table.reindex(columns=[m for m in methods if m in table.columns])
    best = table.min(axis=1)
    # a run solved as one problem by one method alone compares it with none
    table = table[np.isfinite(best) & (table.notna().sum(axis=1) >= 2)]
    table = table.dropna(axis=1, how="all")
    if table.empty:
        return None
    ratios = table.div(table.min(axis=1), axis=0)
    depths = sorted(int(d) for d in table.index.get_level_values("depth").unique())
    fig, axes = panels(len(depths), sharex=True, sharey=True)
    finite = ratios.to_numpy()[np.isfinite(ratios.to_numpy())]
    tau_max = max(2.0, float(finite.max()) * 1.5)
    from matplotlib.ticker import FuncFormatter

    for ax, depth in zip(axes, depths):
        part = ratios.xs(depth, level="depth")
        for method in part.columns:
            r = np.sort(part[method].dropna().to_numpy())  # runs it took part in
            if len(r) == 0:
                continue
            tau = np.concatenate([[1.0], r[np.isfinite(r)], [tau_max]])
            rho = np.searchsorted(r, tau, side="right") / len(r)
            ax.step(
                tau,
                rho,
                where="post",
                linewidth=1.2,
                markersize=4,
                markevery=max(1, len(tau) // 6),
                **style(method),
            )
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlim(1, tau_max)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"depth {depth} ({len(part)} runs)")
        ax.set_xlabel("τ (time / fastest proof)")
    axes[0].set_ylabel("share of runs proven within τ")
    legend(fig, style, list(ratios.columns))
    fig.tight_layout()
    return fig


def profile_figure(frame, methods, style, folder, name, floor=0.01) -> str | None:
    """Dolan–Moré performance profile of the time to a proof, per depth.

    For each run that two or more methods solved as the same problem (data
    encoding and thresholds, objective family: a numeric learner and a
    binarised one are not pooled), a method's ratio is its fit time
    (``floor`` seconds at least: shorter times are clock noise) over the
    fastest proof of that run (∞ without a proof of its own); ρ(τ) is the
    share of runs with ratio <= τ.
    """
    return _saved(_draw_profile(frame, methods, style, floor), folder, name)


def timed_out(runs: pd.DataFrame) -> pd.Series:
    """Which runs stopped at their limit without a tree of their own proven
    optimal: killed by the runner, or a learner time-out."""

    def column(name):
        return runs.get(name, pd.Series(None, index=runs.index, dtype=object))

    proven = runs["optimal"].fillna(False).astype(bool)
    stopped = (column("status") == "timeout") | (column("learner_status") == "timeout")
    return stopped & ~proven


def _times_at_limit(runs: pd.DataFrame) -> pd.Series:
    """Fit times, a time-out's counted at its limit (at least)."""
    limit = runs.get("time_limit", pd.Series(np.nan, index=runs.index)).astype(float)
    seconds = runs["fit_time_s"].astype(float)
    late = timed_out(runs) & limit.notna()
    return seconds.where(~late, np.fmax(seconds, limit))


def _draw_cost(frame, methods, style):
    runs = frame[frame["method"].isin(methods)]
    runs = runs.assign(fit_time_s=_times_at_limit(runs), _late=timed_out(runs))
    # a time-out is a cost: drawn at its limit; memory only where measured
    runs = runs[own_tree_runs(runs) | runs["_late"]]
    if runs.empty:
        return None
    depths = sorted(int(d) for d in runs["depth"].unique())
    fig, axes = plt().subplots(1, 2, figsize=(8.0, 3.0))
    width = 0.5 / max(1, len(methods))
    late_drawn = False
    for ax, column, label in (
        (axes[0], "fit_time_s", "fit time (s)"),
        (axes[1], "fit_mem_mb", "fit memory (MB)"),
    ):
        for i, method in enumerate(methods):
            mine = runs[runs["method"] == method]
            q = mine.groupby("depth")[column].quantile([0.25, 0.5, 0.75]).unstack()
            if q.empty or q[0.5].isna().all():
                continue
            x = q.index.to_numpy(dtype=float) + _dodge(i, len(methods), width)
            ax.errorbar(
                x,
                q[0.5],
                yerr=[q[0.5] - q[0.25], q[0.75] - q[0.5]],
                markersize=4,
                linewidth=0.8,
                elinewidth=0.6,
                **style(method),
            )
            if column == "fit_time_s":
                late_drawn |= _mark_time_outs(
                    ax, mine, dict(zip(q.index, x)), style(method)
                )
        log_axis(ax, "y")
        ax.set_ylabel(label)
        depth_axis(ax, depths)
    if late_drawn:  # room above the × and their counts
        low, high = axes[0].get_ylim()
        axes[0].set_ylim(low, high * 3)
    axes[0].set_title("median fit time (time-outs at their limit)")
    axes[1].set_title("median fit memory")
    extra = []
    if late_drawn:
        from matplotlib.lines import Line2D

        marker = Line2D([], [], linestyle="none", marker="x", color="black")
        extra.append((marker, "time-outs (× at the limit)"))
    legend(fig, style, [m for m in methods if m in set(runs["method"])], extra=extra)
    fig.tight_layout()
    return fig


def _mark_time_outs(ax, runs, x_of, method_style) -> bool:
    """An × at the limit of each depth where the method timed out, with the
    count; True when any was drawn."""
    late = runs[runs["_late"]]
    for depth, part in late.groupby("depth"):
        x = x_of.get(depth)
        if x is None:
            continue
        y = float(part["fit_time_s"].max())
        ax.plot(
            [x],
            [y],
            linestyle="none",
            marker="x",
            markersize=6,
            color=method_style["color"],
        )
        ax.annotate(
            str(len(part)),
            (x, y),
            textcoords="offset points",
            xytext=(3, 3),
            fontsize=6,
            color=method_style["color"],
        )
    return not late.empty


def cost_figure(frame, methods, style, folder, name) -> str | None:
    """Median fit time and median fit memory per method vs depth, log scales
    (bars: interquartile range). A run that timed out counts at its limit
    in the time panel and is marked there with an × and the count of
    time-outs; memory is drawn where it was measured."""
    return _saved(_draw_cost(frame, methods, style), folder, name)


def _draw_anytime(curves, methods, style, title, horizon):
    if curves.empty:
        return None
    times = curves["time"].to_numpy(dtype=float)
    limit = float(horizon) if horizon and np.isfinite(horizon) else None
    end = max(limit or 0.0, float(times.max()))
    positive = times[times > 0]
    first = float(positive.min()) if len(positive) else max(end, 1.0) / 1000
    t0 = max(1e-4, first / 2)  # where a point at time 0 is drawn
    fig, ax = plt().subplots(figsize=(5.2, 3.0))
    shown = []
    for method in methods:
        run = curves[curves["method"] == method].sort_values("time")
        if run.empty:
            continue
        shown.append(method)
        t = np.maximum(run["time"].to_numpy(dtype=float), t0)
        obj = np.minimum.accumulate(run["objective"].to_numpy(dtype=float))
        bound = pd.Series(run["bound"].to_numpy(dtype=float)).ffill().cummax()
        if not bound.iloc[-1] >= obj[-1] - 1e-9:  # not proven: on to the end
            t, obj = np.append(t, end), np.append(obj, obj[-1])
            bound = pd.concat([bound, bound.iloc[-1:]], ignore_index=True)
        ax.step(
            t,
            obj,
            where="post",
            linewidth=1.4,
            markevery=list(range(len(run))),
            markersize=4,
            **style(method),
        )
        if bound.notna().any():
            ax.step(
                t,
                bound.to_numpy(),
                where="post",
                linewidth=1.0,
                linestyle="--",
                color=style(method)["color"],
            )
    log_axis(ax)
    ax.set_xlim(t0 / 2, end * 2)  # room for the first marker and the limit
    top = float(curves["objective"].max())
    low = min(0.0, float(np.nanmin(curves["bound"].to_numpy(dtype=float), initial=0)))
    pad = 0.05 * (top - low + 1)
    ax.set_ylim(low - pad, top + pad)
    ax.set_xlabel("time since fit started (s)")
    ax.set_ylabel("training objective")
    ax.set_title(title)
    if limit is not None:
        label = f"time limit {limit:g} s"
        ax.axvline(limit, color="grey", linestyle=":", linewidth=1.0, label=label)
        ax.text(  # right of the line, where no curve runs
            limit * 1.08,
            0.97,
            label,
            transform=ax.get_xaxis_transform(),
            rotation=90,
            ha="left",
            va="top",
            fontsize=7,
            color="#444",
        )
    legend(fig, style, shown, title="incumbent — / bound - -")
    fig.tight_layout()
    return fig


def anytime_figure(curves, methods, style, folder, name, title, horizon):
    """Incumbent (solid) and lower bound (dashed) over time of every exact
    method on one dataset and depth (first fold and seed).

    The log time axis starts below the first incumbent (a point at time 0
    is drawn at half the first positive time); the y axis shows every
    incumbent; a curve ends where its bound meets its incumbent (the proof)
    or else runs on to the limit, a dotted line labelled "time limit
    ``horizon`` s".
    """
    return _saved(_draw_anytime(curves, methods, style, title, horizon), folder, name)


def _draw_gap(gaps, methods, style):
    relative = "relative_gap" in gaps
    unit = "relative_gap" if relative else "gap_points"
    gaps = gaps[gaps["method"].isin(methods)]
    if "has_solver_tree" in gaps:
        gaps = gaps[gaps["has_solver_tree"].fillna(True).astype(bool)]
    if gaps.empty:
        return None
    mean = gaps.groupby(["depth", "dataset", "method"])[unit].mean()
    depths = sorted(int(d) for d in gaps["depth"].unique())
    datasets = sorted(gaps["dataset"].unique())
    fig, axes = panels(
        len(depths),
        width=3.0,
        height=1.2 + 0.32 * len(datasets),
        sharex=True,
        sharey=True,
    )
    shown = [m for m in methods if m in set(gaps["method"])]
    step = 0.6 / max(1, len(shown))
    for ax, depth in zip(axes, depths):
        for i, method in enumerate(shown):
            values = [mean.get((depth, d, method), np.nan) for d in datasets]
            y = np.arange(len(datasets)) + _dodge(i, len(shown), step)
            ax.plot(values, y, linestyle="none", markersize=5, **style(method))
        ax.set_yticks(range(len(datasets)))
        ax.set_yticklabels(datasets)
        ax.set_ylim(len(datasets) - 0.5, -0.5)
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_title(f"depth {depth}")
        ax.set_xlabel(
            "gap (% of the proven optimum)"
            if relative
            else "gap (training accuracy points)"
        )
    symlog_axis(axes[0], "x")
    high = max(1.0, float(np.nanmax(mean.to_numpy(), initial=0)))
    low = min(0.0, float(np.nanmin(mean.to_numpy(), initial=0)))
    axes[0].set_xlim(low - 0.3 if low == 0 else low * 1.5, high * 1.5)
    legend(fig, style, shown)
    fig.tight_layout()
    return fig


def gap_figure(gaps, methods, style, folder, name) -> str | None:
    """Mean gap to the proven optimum (training-accuracy points, or on
    regression records percent of the optimum: ``relative_gap``) per dataset,
    one panel per depth, on one shared symmetric-log x axis (linear within
    ±1 point, so a gap of 0 shows)."""
    return _saved(_draw_gap(gaps, methods, style), folder, name)
