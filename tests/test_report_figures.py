"""The whole report of a synthetic study: every figure made, non-empty, legible."""

import re

import pytest
from report_doubles import METHODS, grid, protocol, write_study

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
        ("cactus", 2),  # one per depth
        ("performance_profile", 2),
        ("cost_vs_depth", 2),  # time and memory
        ("optimality_gap", 2),
        ("cd-test_acc-d2", 1),
        ("cd-time-d3", 1),
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
    assert "Friedman p =" in text and "primal integral" in text.lower()
    page = (folder / "report.html").read_text()
    assert page.count("data:image/png;base64,") == text.count("![")
    assert "table.sortable" in page and "<b>" in page
    assert (folder / "results.parquet").stat().st_size > 0
