"""The whole report of a synthetic study: every figure made, non-empty, legible."""

import itertools
import json
import re
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest
from report_doubles import METHODS, grid, protocol, write_study

from odtstudy.study.report import _figures as figures
from odtstudy.study.report import make_report

TRACES = {
    "dl85": [[0.001, 40.0, 0.0], [0.01, 12.0, 0.0], [0.4, 10.0, 10.0]],
    "cpsat": [[0.05, 15.0], [0.3, 10.0]],
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports")
    records = []
    proto = protocol(methods={**METHODS, "dl8": "dl8"})  # 3 exact methods
    for i, record in enumerate(grid(datasets=("a", "b", "c"), proto=proto)):
        method = record["method"]
        record["test_acc"] = 0.7 + 0.01 * (i % 7)
        speed = {"dl85": 0.4, "dl8": 0.8, "cpsat": 1.5, "cart": 0.01}[method]
        record["fit_time_s"] = speed * (1 + i % 3)
        if method in TRACES:
            record["stats"] = {"anytime": TRACES[method]}
        else:
            record["objective"] = 12.0 + i % 2
        records.append(record)
    write_study(out / "synthetic", records)
    path = make_report("synthetic", output_dir=out)
    return path.parent, path.read_text()


def _axes(svg_text):
    return len(re.findall(r'<g id="axes_\d+"', svg_text))


@pytest.mark.parametrize(
    ("name", "n_axes"),
    [
        ("test_accuracy", 3),  # one panel per dataset
        ("test_accuracy_over_datasets", 1),  # the datasets pooled
        ("cactus", 2),  # one per depth
        ("performance_profile", 2),
        ("cost_vs_depth", 2),  # time and memory
        ("optimality_gap", 2),
        ("anytime-a-d2", 1),
        ("anytime-c-d3", 1),
    ],
)
def test_each_figure_is_written_non_empty_with_its_panels(report, name, n_axes):
    folder, text = report
    png, svg = folder / f"{name}.png", folder / f"{name}.svg"
    assert png.stat().st_size > 5000 and svg.stat().st_size > 5000
    content = svg.read_text()
    assert _axes(content) == n_axes
    assert "line2d_" in content or "patch_" in content
    assert f"]({name}.png)" in text


def test_anytime_figure_draws_every_traced_exact_method(report):
    folder, _ = report
    svg = (folder / "anytime-b-d2.svg").read_text()
    assert "dl85" in svg and "cpsat" in svg and "cart" not in svg


def test_report_sections_and_self_contained_html(report):
    folder, text = report
    for heading in (
        "## Summary",
        "## Consistency of exact methods",
        "## Test accuracy per depth",
        "## Statistics",
        "## Cost: time and memory",
        "## Anytime behaviour of exact methods",
        "## Heuristics vs the proven optimum",
        "## Run status",
        "## All cells",
    ):
        assert heading in text
    assert "primal integral" in text.lower()
    # 4 methods on 3 datasets: no rank test and no CD diagram, said in one line
    assert "no rank test: k = 4 methods on N = 3 datasets, Nemenyi CD = " in text
    assert "Friedman p =" not in text and not list(folder.glob("cd-*"))
    page = (folder / "report.html").read_text()
    # every figure embedded as SVG text, none as a link to a file beside it
    assert page.count("src='data:image/svg+xml,") == text.count("![")
    assert "src='" not in page.replace("src='data:image/svg+xml,", "")
    first = page.split("src='data:image/svg+xml,")[1].split("'")[0]
    assert "<svg" in unquote(first) and "</svg>" in unquote(first)
    assert "table.sortable" in page and "<b>" in page
    assert (folder / "results.parquet").stat().st_size > 0


# --- one figure at a time: styles, incomplete runs, scales, anytime axes ---


def _cells(outlier_complete=False):
    """Cells of two methods on one dataset; (b, depth 3) is an outlier."""
    rows = [
        ("a", 2, 0.90, True),
        ("a", 3, 0.92, True),
        ("b", 2, 0.91, True),
        ("b", 3, 0.10, outlier_complete),
    ]
    return pd.DataFrame(
        [
            {
                "dataset": "d",
                "depth": depth,
                "method": method,
                "test_acc": acc,
                "test_std": 0.01,
                "complete": complete,
            }
            for method, depth, acc, complete in rows
        ]
    )


def _runs(**columns):
    """Runs of methods a and b at depth 2 and 3 (b at depth 3: a slow outlier)."""
    rows = []
    for i, (method, depth) in enumerate(itertools.product("ab", (2, 3))):
        outlier = (method, depth) == ("b", 3)
        rows.append(
            {
                "run_id": f"r{i}",
                "dataset": "d",
                "method": method,
                "depth": depth,
                "fold": 0,
                "seed": 0,
                "optimal": True,
                "has_tree": True,
                "fit_time_s": 500.0 if outlier else 0.5 + depth,
                "fit_mem_mb": 5000.0 if outlier else 5.0,
                "stats": json.dumps({"no_solver_tree": True} if outlier else {}),
            }
        )
    frame = pd.DataFrame(rows)
    for name, values in columns.items():
        frame[name] = values
    return frame


def test_style_map_gives_twenty_distinct_colours_and_pairs():
    methods = [f"m{i}" for i in range(20)]
    style = figures.MethodStyle(methods)
    pairs = [(style(m)["color"], style(m)["marker"]) for m in methods]
    assert len({colour for colour, _ in pairs}) == 20
    assert len(set(pairs)) == 20
    assert style("m7") == figures.MethodStyle(methods)("m7")  # stable
    many = figures.MethodStyle([f"m{i}" for i in range(200)])
    assert len({tuple(many(f"m{i}").values()) for i in range(200)}) == 200


def test_own_tree_runs_prefers_has_solver_tree_and_falls_back_on_stats():
    from_stats = figures.own_tree_runs(_runs())
    assert from_stats.tolist() == [True, True, True, False]
    column = figures.own_tree_runs(_runs(has_solver_tree=[False, True, True, True]))
    assert column.tolist() == [False, True, True, True]
    empty = figures.own_tree_runs(_runs(has_solver_tree=[None, None, None, True]))
    assert empty.tolist() == [True, True, True, True]
    no_tree = figures.own_tree_runs(_runs(has_tree=[False, True, True, True]))
    assert no_tree.tolist() == [False, True, True, False]


def _ylims(fig):
    limits = [ax.get_ylim() for ax in fig.axes]
    figures.plt().close(fig)
    return limits


def test_incomplete_cell_with_an_outlier_leaves_the_accuracy_axis_alone():
    style = figures.MethodStyle("ab")
    cells = _cells()
    without = _ylims(figures._draw_accuracy(cells.iloc[:3], ["a", "b"], style))
    with_outlier = _ylims(figures._draw_accuracy(cells, ["a", "b"], style))
    assert with_outlier == without
    assert without[0][0] > 0.8
    # the same cell, complete by count, but one of its runs is a fallback leaf
    marked = _cells(outlier_complete=True)
    stretched = _ylims(figures._draw_accuracy(marked, ["a", "b"], style))
    assert stretched[0][0] < 0.1
    runs = _ylims(figures._draw_accuracy(marked, ["a", "b"], style, runs=_runs()))
    assert runs == without


def test_fallback_runs_leave_the_cost_axes_alone():
    style = figures.MethodStyle("ab")
    fig = figures._draw_cost(_runs(), ["a", "b"], style)
    (_, time_top), (_, mem_top) = _ylims(fig)
    assert time_top < 100 and mem_top < 100
    own = _runs(has_solver_tree=True)
    (_, time_top), (_, mem_top) = _ylims(figures._draw_cost(own, ["a", "b"], style))
    assert time_top > 500 and mem_top > 5000


def test_time_outs_count_at_their_limit_and_are_marked():
    # b times out at depth 3 (60 s limit) after 1.2 s of recorded fit time in
    # 3 of 3 runs: its median is the limit, not the 1.2 s of a dropped run
    runs = pd.concat([_runs(fold=f) for f in range(3)], ignore_index=True)
    late = (runs["method"] == "b") & (runs["depth"] == 3)
    runs["time_limit"] = 60.0
    runs["status"] = "ok"
    runs["learner_status"] = np.where(late, "timeout", "optimal")
    runs.loc[late, ["optimal", "fit_time_s", "stats"]] = [False, 1.2, "{}"]
    runs.loc[late, "has_tree"] = False  # a time-out without a tree of its own
    assert figures.timed_out(runs).tolist() == late.tolist()
    fig = figures._draw_cost(runs, ["a", "b"], figures.MethodStyle("ab"))
    time_ax = fig.axes[0]
    medians = [line.get_ydata() for line in time_ax.lines if line.get_marker() == "s"]
    crosses = [line for line in time_ax.lines if line.get_marker() == "x"]
    assert medians and medians[0][-1] == 60.0
    assert len(crosses) == 1 and crosses[0].get_ydata()[0] == 60.0
    assert "time-out" in time_ax.get_title()
    assert [t.get_text() for t in time_ax.texts] == ["3"]
    figures.plt().close(fig)


def test_cactus_draws_each_tiers_run_count():
    # a on 6 runs a depth, b on 2 (another tier): dotted lines at 6 and 2,
    # not at the study's 8 runs over 2 methods = 4
    runs = pd.concat([_runs(fold=f) for f in range(2)], ignore_index=True)
    extra = runs[runs["method"] == "a"].assign(fold=2)
    runs = pd.concat([runs, extra, extra.assign(fold=3)], ignore_index=True)
    runs["run_id"] = [f"r{i}" for i in range(len(runs))]
    runs["stats"] = "{}"
    fig = figures._draw_cactus(runs, ["a", "b"], figures.MethodStyle("ab"))
    dotted = {
        float(line.get_ydata()[0])
        for line in fig.axes[0].lines
        if line.get_linestyle() == ":"
    }
    assert dotted == {2.0, 6.0}
    figures.plt().close(fig)


def test_a_study_on_all_rows_labels_training_accuracy(tmp_path):
    records = grid(datasets=("a",), proto=protocol(folds=1))
    write_study(tmp_path / "all-rows", records)
    folder = make_report("all-rows", output_dir=tmp_path).parent
    svg = (folder / "test_accuracy.svg").read_text()
    assert "training accuracy (all rows)" in svg and "test accuracy" not in svg


def test_anytime_figure_shows_the_first_incumbent_and_labels_the_limit():
    curves = pd.DataFrame(
        {
            "method": ["dl85"] * 3 + ["cpsat"] * 2,
            "time": [0.0, 0.002, 3.0, 0.5, 40.0],
            "objective": [460.0, 320.0, 310.0, 330.0, 311.0],
            "bound": [0.0, 0.0, 310.0, np.nan, np.nan],
        }
    )
    style = figures.MethodStyle(["dl85", "cpsat"])
    fig = figures._draw_anytime(curves, ["dl85", "cpsat"], style, "t", 30.0)
    (ax,) = fig.axes
    left, right = ax.get_xlim()
    drawn = [line for line in ax.get_lines() if line.get_marker() not in ("None", "")]
    first_x = min(float(np.min(line.get_xdata())) for line in drawn)
    assert left < first_x and right > 40.0
    low, high = ax.get_ylim()
    assert low < 0.0 and high > 460.0  # the first incumbent, and the bound 0
    labels = [line.get_label() for line in ax.get_lines()]
    assert "time limit 30 s" in labels
    assert "time limit 30 s" in [text.get_text() for text in ax.texts]
    # dl85 proved at 3 s: its curve stops there; cpsat's runs on past the limit
    ends = {line.get_color(): float(np.max(line.get_xdata())) for line in drawn}
    assert ends[style("dl85")["color"]] == 3.0
    assert ends[style("cpsat")["color"]] >= 40.0
    figures.plt().close(fig)


def test_gap_panels_share_one_symlog_axis_that_shows_zero():
    gaps = pd.DataFrame(
        {
            "dataset": ["d", "e", "d", "e"],
            "depth": [2, 2, 3, 3],
            "method": ["cart"] * 4,
            "gap_points": [0.0, 0.5, 3.0, 40.0],
        }
    )
    fig = figures._draw_gap(gaps, ["cart"], figures.MethodStyle(["cart"]))
    limits = {ax.get_xlim() for ax in fig.axes}
    assert len(limits) == 1 and len(fig.axes) == 2
    ((low, high),) = limits
    assert low < 0.0 and high > 40.0
    assert {ax.get_xscale() for ax in fig.axes} == {"symlog"}
    figures.plt().close(fig)


def test_figure_functions_write_png_and_svg(tmp_path):
    style = figures.MethodStyle("ab")
    runs = _runs(has_solver_tree=True)
    made = [
        figures.accuracy_figure(_cells(), ["a", "b"], style, tmp_path, "acc"),
        figures.cost_figure(runs, ["a", "b"], style, tmp_path, "cost"),
        figures.cactus_figure(runs, ["a", "b"], style, tmp_path, "cactus"),
    ]
    assert made == ["acc.png", "cost.png", "cactus.png"]
    for name in ("acc", "cost", "cactus"):
        for ext in ("png", "svg"):
            assert (tmp_path / f"{name}.{ext}").stat().st_size > 5000
    assert "Not drawn: 1 incomplete cell" in (tmp_path / "acc.svg").read_text()


@pytest.mark.parametrize(
    ("pvalue", "bars"), [(0.2, [(1.0, 4.0)]), (0.01, [(1.0, 2.0), (3.5, 4.0)])]
)
def test_cd_diagram_joins_every_method_when_friedman_does_not_reject(
    monkeypatch, tmp_path, pvalue, bars
):
    from odtstudy.study.report._stats import RankTest

    ranks = pd.Series({"a": 1.0, "b": 2.0, "c": 3.5, "d": 4.0})
    test = RankTest("acc", pd.DataFrame(np.zeros((12, 4))), ranks, 9.0, pvalue, 1.2)
    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, folder, name: drawn.append(fig))
    figures.cd_figure(test, tmp_path, "cd", "acc")
    (ax,) = drawn[0].axes
    thick = [line.get_xdata() for line in ax.lines if line.get_linewidth() == 3]
    ends = [(round(x[0] + 0.03, 6), round(x[1] - 0.03, 6)) for x in thick]
    assert ends == bars
    title = ax.get_title()
    assert ("no significant difference" in title) == (pvalue >= 0.05)
    figures.plt().close(drawn[0])


def test_accuracy_over_datasets_pairs_the_datasets_and_bootstraps_them(tmp_path):
    datasets = [f"s{i}" for i in range(7)]
    rows = [
        {"dataset": d, "depth": 2, "method": m, "complete": True, "test_acc": acc}
        for i, d in enumerate(datasets)
        for m, acc in (("a", 0.8 + 0.01 * i), ("b", 0.7))
    ]
    rows[-1]["complete"] = False  # b incomplete on s6: s6 is not compared
    cells = pd.DataFrame(rows)
    wide = figures.paired_dataset_means(cells, ["a", "b"], 2)
    assert list(wide.index) == datasets[:6] and list(wide.columns) == ["a", "b"]
    style = figures.MethodStyle(["a", "b"])
    name = figures.accuracy_over_datasets_figure(
        cells, ["a", "b"], style, tmp_path, "acc"
    )
    svg = (tmp_path / "acc.svg").read_text()
    assert name == "acc.png" and _axes(svg) == 1
    assert "d2: 6" in unquote(svg) or "d2: 6" in svg
    empty = cells.assign(complete=False)
    assert (
        figures.accuracy_over_datasets_figure(empty, ["a"], style, tmp_path, "x")
        is None
    )
