"""The report's figures, each saved as PNG and SVG.

Every figure gives each method one colour and one marker (the same in all
figures of a report), puts its legend outside the axes, uses integer depth
ticks and log time axes with plain tick labels (0.01, 0.1, 1, 10).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "MethodStyle",
    "accuracy_figure",
    "anytime_figure",
    "cactus_figure",
    "cd_figure",
    "cost_figure",
    "gap_figure",
    "profile_figure",
]

# Okabe-Ito, then darker tab10-like colours: distinguishable, print-safe
_COLOURS = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
    "#000000", "#8C564B", "#7F7F7F", "#BCBD22", "#9467BD", "#F0E442",
]  # fmt: skip
_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h"]
DPI = 150


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.titlesize": 9,
            "axes.labelsize": 9,
            "legend.fontsize": 8,
            "xtick.labelsize": 8,
            "ytick.labelsize": 8,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.fonttype": "none",
        }
    )
    return plt


class MethodStyle:
    """A fixed colour and marker per method (unique pairs for up to 132)."""

    def __init__(self, methods):
        self.methods = list(methods)

    def __call__(self, method) -> dict:
        i = self.methods.index(method) if method in self.methods else len(self.methods)
        return {
            "color": _COLOURS[i % len(_COLOURS)],
            "marker": _MARKERS[i % len(_MARKERS)],
        }


def _save(fig, folder: Path, name: str) -> str:
    plt = _plt()
    for ext in ("png", "svg"):
        fig.savefig(folder / f"{name}.{ext}", dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return f"{name}.png"


def _legend(fig, axes, style: MethodStyle, methods, title="method"):
    """One legend for the figure, right of the axes."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], linestyle="-", markersize=6, **style(m)) for m in methods]
    fig.legend(
        handles,
        methods,
        title=title,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.95),
        frameon=False,
    )


def _log_time_axis(ax, axis="x"):
    from matplotlib.ticker import FuncFormatter, LogLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_major_locator(LogLocator(base=10, numticks=12))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
    target.set_minor_formatter(FuncFormatter(lambda v, _: _minor_label(target, v)))


def _minor_label(axis, value) -> str:
    """Label the 2 and 5 ticks only when the view shows fewer than two powers
    of ten (else the axis would have at most one labelled tick)."""
    low, high = sorted(axis.get_view_interval())
    if low <= 0:
        return ""
    powers = math.floor(math.log10(high)) - math.ceil(math.log10(low)) + 1
    return f"{value:g}" if powers < 2 else ""


def _depth_axis(ax, depths):
    ax.set_xticks(depths)
    ax.set_xticklabels([str(d) for d in depths])
    ax.set_xlim(min(depths) - 0.4, max(depths) + 0.4)
    ax.set_xlabel("max depth")


def _panels(plt, n, width=3.2, height=2.7, ncols=None, sharey=False):
    ncols = ncols or min(n, 4)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows),
        squeeze=False,
        sharey=sharey,
    )
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.remove()
    return fig, flat[:n]


def accuracy_figure(cells, methods, style, folder, name) -> str | None:
    """Mean test accuracy vs depth, one panel per dataset; complete cells only
    (error bars: std over folds and seeds, methods side by side)."""
    cells = cells[cells["complete"] & cells["method"].isin(methods)]
    if cells.empty:
        return None
    plt = _plt()
    datasets = sorted(cells["dataset"].unique())
    depths = sorted(int(d) for d in cells["depth"].unique())
    fig, axes = _panels(plt, len(datasets))
    width = 0.6 / max(1, len(methods))
    for ax, dataset in zip(axes, datasets):
        part = cells[cells["dataset"] == dataset]
        for i, method in enumerate(methods):
            run = part[part["method"] == method].sort_values("depth")
            if run.empty:
                continue
            x = (
                run["depth"].to_numpy(dtype=float)
                + (i - (len(methods) - 1) / 2) * width
            )
            ax.errorbar(
                x,
                run["test_acc"],
                yerr=run["test_std"].fillna(0),
                markersize=4,
                linewidth=0.8,
                elinewidth=0.6,
                capsize=0,
                **style(method),
            )
        ax.set_title(dataset)
        _depth_axis(ax, depths)
    axes[0].set_ylabel("test accuracy")
    _legend(fig, axes, style, [m for m in methods if m in set(cells["method"])])
    fig.tight_layout()
    return _save(fig, folder, name)


def cd_figure(test, folder, name, title) -> str | None:
    """Critical-difference diagram (Demšar 2006): average ranks on an axis,
    methods whose ranks differ by less than the Nemenyi CD joined by a bar."""
    if not test.tested:
        return None
    plt = _plt()
    ranks = test.ranks
    k = len(ranks)
    lo, hi = 1, k
    half = (k + 1) // 2
    height = 0.8 + 0.28 * half
    fig, ax = plt.subplots(figsize=(7.0, height))
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
    # cliques: maximal runs of methods within CD of each other
    cliques = []
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
        f"{title}: Friedman p = {test.pvalue:.3g}, {test.n_datasets} datasets",
        fontsize=9,
    )
    return _save(fig, folder, name)


def cactus_figure(frame, methods, style, folder, name) -> str | None:
    """Runs proven optimal within t seconds, one panel per depth."""
    proven = frame[frame["optimal"] & frame["method"].isin(methods)]
    if proven.empty:
        return None
    plt = _plt()
    depths = sorted(int(d) for d in frame["depth"].unique())
    fig, axes = _panels(plt, len(depths), sharey=True)
    total = frame[frame["method"].isin(methods)].groupby("depth")["run_id"].count()
    for ax, depth in zip(axes, depths):
        part = proven[proven["depth"] == depth]
        for method in methods:
            times = np.sort(part.loc[part["method"] == method, "fit_time_s"].to_numpy())
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
        _log_time_axis(ax)
        ax.set_title(f"depth {depth}")
        ax.set_xlabel("fit time (s)")
        n_runs = int(total.get(depth, 0) // max(1, len(methods)))
        ax.axhline(n_runs, color="grey", linestyle=":", linewidth=0.8)
    axes[0].set_ylabel("runs proven optimal")
    _legend(fig, axes, style, [m for m in methods if m in set(proven["method"])])
    fig.tight_layout()
    return _save(fig, folder, name)


def profile_figure(frame, methods, style, folder, name, floor=0.01) -> str | None:
    """Dolan–Moré performance profile of the time to a proof, per depth.

    For each run, a method's ratio is its fit time (``floor`` seconds at
    least: shorter times are clock noise) over the fastest proof of that run
    (∞ without a proof); ρ(τ) is the share of runs with ratio <= τ.
    """
    runs = frame[frame["method"].isin(methods)]
    seconds = np.maximum(runs["fit_time_s"], floor)
    times = runs.assign(t=seconds.where(runs["optimal"], np.inf))
    table = times.pivot_table(
        index=["dataset", "depth", "fold", "seed"],
        columns="method",
        values="t",
        aggfunc="min",
    )
    table = table.reindex(columns=[m for m in methods if m in table.columns])
    best = table.min(axis=1)
    table = table[np.isfinite(best)]
    if table.empty:
        return None
    ratios = table.div(table.min(axis=1), axis=0)
    plt = _plt()
    depths = sorted(int(d) for d in table.index.get_level_values("depth").unique())
    fig, axes = _panels(plt, len(depths), sharey=True)
    finite = ratios.to_numpy()[np.isfinite(ratios.to_numpy())]
    tau_max = max(2.0, float(finite.max()) * 1.5)
    for ax, depth in zip(axes, depths):
        part = ratios.xs(depth, level="depth")
        for method in part.columns:
            r = np.sort(part[method].to_numpy())
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
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlim(1, tau_max)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"depth {depth} ({len(part)} runs)")
        ax.set_xlabel("τ (time / fastest proof)")
    axes[0].set_ylabel("share of runs proven within τ")
    _legend(fig, axes, style, list(ratios.columns))
    fig.tight_layout()
    return _save(fig, folder, name)


def cost_figure(frame, methods, style, folder, name) -> str | None:
    """Median fit time and median fit memory per method vs depth
    (bars: interquartile range over the runs with a tree)."""
    runs = frame[frame["has_tree"] & frame["method"].isin(methods)]
    if runs.empty:
        return None
    plt = _plt()
    depths = sorted(int(d) for d in runs["depth"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.0))
    width = 0.5 / max(1, len(methods))
    for ax, column, label in (
        (axes[0], "fit_time_s", "fit time (s)"),
        (axes[1], "fit_mem_mb", "fit memory (MB)"),
    ):
        for i, method in enumerate(methods):
            part = runs[runs["method"] == method].groupby("depth")[column]
            q = part.quantile([0.25, 0.5, 0.75]).unstack()
            if q.empty or q[0.5].isna().all():
                continue
            x = q.index.to_numpy(dtype=float) + (i - (len(methods) - 1) / 2) * width
            ax.errorbar(
                x,
                q[0.5],
                yerr=[q[0.5] - q[0.25], q[0.75] - q[0.5]],
                markersize=4,
                linewidth=0.8,
                elinewidth=0.6,
                **style(method),
            )
        _log_time_axis(ax, "y")
        ax.set_ylabel(label)
        _depth_axis(ax, depths)
    axes[0].set_title("median fit time")
    axes[1].set_title("median fit memory")
    _legend(fig, axes, style, [m for m in methods if m in set(runs["method"])])
    fig.tight_layout()
    return _save(fig, folder, name)


def anytime_figure(curves, methods, style, folder, name, title, horizon):
    """Incumbent (solid) and lower bound (dashed) over time of every exact
    method on one dataset and depth (first fold and seed)."""
    if curves.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    t0 = max(1e-4, float(curves["time"][curves["time"] > 0].min()) / 2)
    end = max(horizon, float(curves["time"].max()))
    shown, finals = [], []
    for method in methods:
        run = curves[curves["method"] == method].sort_values("time")
        if run.empty:
            continue
        shown.append(method)
        finals.append(run["objective"].min())
        t = np.append(np.maximum(run["time"].to_numpy(), t0), end)
        obj = np.minimum.accumulate(run["objective"].to_numpy())
        ax.step(
            t,
            np.append(obj, obj[-1]),
            where="post",
            linewidth=1.4,
            markevery=list(range(len(obj))),
            markersize=4,
            **style(method),
        )
        bound = run["bound"].to_numpy(dtype=float)
        if np.isfinite(bound).any():
            b = pd.Series(bound).ffill().cummax().to_numpy()
            ax.step(
                t,
                np.append(b, b[-1]),
                where="post",
                linewidth=1.0,
                linestyle="--",
                color=style(method)["color"],
            )
    _log_time_axis(ax)
    ax.set_xlim(t0, end * 1.05)
    # early trivial incumbents (a single leaf) would flatten the rest
    top = min(float(curves["objective"].max()), 2.0 * max(finals) + 5.0)
    low = (
        min(0.0, float(np.nanmin(curves["bound"])))
        if curves["bound"].notna().any()
        else 0.0
    )
    ax.set_ylim(low - 0.03 * (top - low + 1), top + 0.05 * (top - low + 1))
    ax.set_xlabel("time since fit started (s)")
    ax.set_ylabel("training objective")
    ax.set_title(title)
    ax.axvline(horizon, color="grey", linestyle=":", linewidth=0.8)
    _legend(fig, [ax], style, shown, title="incumbent — / bound - -")
    fig.tight_layout()
    return _save(fig, folder, name)


def gap_figure(gaps, methods, style, folder, name) -> str | None:
    """Mean gap to the proven optimum (training-accuracy points) per dataset,
    one panel per depth."""
    gaps = gaps[gaps["method"].isin(methods)]
    if gaps.empty:
        return None
    plt = _plt()
    mean = gaps.groupby(["depth", "dataset", "method"])["gap_points"].mean()
    depths = sorted(int(d) for d in gaps["depth"].unique())
    datasets = sorted(gaps["dataset"].unique())
    fig, axes = _panels(
        plt, len(depths), width=3.0, height=1.2 + 0.32 * len(datasets), sharey=True
    )
    shown = [m for m in methods if m in set(gaps["method"])]
    step = 0.6 / max(1, len(shown))
    for ax, depth in zip(axes, depths):
        for i, method in enumerate(shown):
            values = [mean.get((depth, d, method), np.nan) for d in datasets]
            y = np.arange(len(datasets)) + (i - (len(shown) - 1) / 2) * step
            ax.plot(values, y, linestyle="none", markersize=5, **style(method))
        ax.set_yticks(range(len(datasets)))
        ax.set_yticklabels(datasets)
        ax.set_ylim(len(datasets) - 0.5, -0.5)
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_title(f"depth {depth}")
        ax.set_xlabel("gap (training accuracy points)")
    _legend(fig, axes, style, shown)
    fig.tight_layout()
    return _save(fig, folder, name)
