"""How every figure of a report looks: method styles, axes, legend, saving.

One :class:`MethodStyle` per report gives each method the same colour and
marker in all its figures: 20 colours, pairwise far apart (CIELAB ΔE ≥ 27)
and dark enough for thin lines on white, and 10 markers.
"""

from __future__ import annotations

import math
from pathlib import Path

__all__ = ["COLOURS", "DPI", "MARKERS", "MethodStyle"]

#: tab10, then ten colours chosen to stay far from it and from each other.
COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#000000", "#000075", "#f032e6", "#a6761d", "#0b6e4f",
    "#f99379", "#e7298a", "#003f5c", "#b3446c", "#800000",
)  # fmt: skip
#: Ten markers; 10 is coprime with 21, which keeps pairs unique past 20.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", "p")
DPI = 150


def plt():
    """``matplotlib.pyplot`` on the Agg backend with the report's rcParams."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    pyplot.rcParams.update(
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
            "svg.hashsalt": "odtstudy",  # the same ids at every render
        }
    )
    return pyplot


class MethodStyle:
    """A fixed colour and marker per method, in the report's method order.

    The first 20 methods get 20 different colours (and markers cycling over
    10); method ``i`` gets colour ``i % 20`` and marker ``(i + i // 20) % 10``,
    so every (colour, marker) pair stays unique up to 200 methods.

    Parameters
    ----------
    methods : iterable of str
        The report's methods, in the order their styles are assigned.

    Examples
    --------
    >>> style = MethodStyle(["dl85", "cart"])
    >>> style("cart")
    {'color': '#ff7f0e', 'marker': 's'}
    """

    def __init__(self, methods):
        self.methods = list(methods)

    def __call__(self, method) -> dict:
        if method in self.methods:
            i = self.methods.index(method)
        else:
            i = len(self.methods)
        n = len(COLOURS)
        return {
            "color": COLOURS[i % n],
            "marker": MARKERS[(i + i // n) % len(MARKERS)],
        }


def save(fig, folder: Path, name: str) -> str:
    """Write ``fig`` as ``<name>.png`` and ``<name>.svg``; return the PNG's name."""
    for ext in ("png", "svg"):
        fig.savefig(
            Path(folder) / f"{name}.{ext}",
            dpi=DPI,
            bbox_inches="tight",
            metadata={"Date": None},  # a re-render writes the same file
        )
    plt().close(fig)
    return f"{name}.png"


def legend(fig, style: MethodStyle, methods, title="method", extra=()):
    """One legend for the figure, right of the axes (``extra``: more handles)."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], linestyle="-", markersize=6, **style(m)) for m in methods]
    handles += [handle for handle, _ in extra]
    fig.legend(
        handles,
        [*methods, *(label for _, label in extra)],
        title=title,
        loc="upper left",
        bbox_to_anchor=(1.0, 0.95),
        frameon=False,
    )


def footnote(fig, text: str) -> None:
    """A line of small text under the figure."""
    fig.text(0.0, -0.01, text, ha="left", va="top", fontsize=7, color="#444")


def log_axis(ax, axis="x"):
    """Log scale with plain tick labels (0.01, 0.1, 1, 10)."""
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


def symlog_axis(ax, axis="x", linthresh=1.0):
    """Symmetric log scale (linear within ``±linthresh``), for values that
    can be 0, with plain tick labels (0, 1, 10, 100)."""
    from matplotlib.ticker import FuncFormatter, SymmetricalLogLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)(
        "symlog", linthresh=linthresh, linscale=0.5
    )
    target.set_major_locator(SymmetricalLogLocator(base=10, linthresh=linthresh))
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def depth_axis(ax, depths):
    """Integer depth ticks with half a step of room on either side."""
    ax.set_xticks(depths)
    ax.set_xticklabels([str(d) for d in depths])
    ax.set_xlim(min(depths) - 0.4, max(depths) + 0.4)
    ax.set_xlabel("max depth")


def panels(n, width=3.2, height=2.7, ncols=None, sharex=False, sharey=False):
    """A figure with ``n`` panels, at most 4 a row; returns (fig, axes)."""
    ncols = ncols or min(n, 4)
    nrows = -(-n // ncols)
    fig, axes = plt().subplots(
        nrows,
        ncols,
        figsize=(width * ncols, height * nrows),
        squeeze=False,
        sharex=sharex,
        sharey=sharey,
    )
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.remove()
    return fig, flat[:n]
