"""A report is written whatever the records hold, with the failures shown.

Every case builds the report from records alone (no learner runs), on the
pandas the environment has (3.x on Python >= 3.11): the crash these guard
against was pandas 3 refusing to add text to an all-empty float column.
"""

import math

import pytest
from report_doubles import grid, protocol, run, write_study

from odtstudy.study import make_report
from odtstudy.study.runner import study_folder


def _report(tmp_path, records):
    write_study(study_folder(tmp_path, "synthetic", "default"), records)
    path = make_report("synthetic", output_dir=tmp_path)
    text = path.read_text()
    assert (path.parent / "report.html").stat().st_size > 0
    assert (path.parent / "results.csv").stat().st_size > 0
    assert "could not be built" not in text, text
    return text


def _failed(record):
    """The same run without a tree (its error message: "boom")."""
    return run(
        record["dataset"],
        record["depth"],
        record["method"],
        fold=record["fold"],
        proto=record["protocol"],
        has_tree=False,
    )


def test_every_run_of_an_exact_method_failed(tmp_path):
    records = [_failed(r) if r["method"] == "dl85" else r for r in grid()]
    text = _report(tmp_path, records)
    assert "## Failed runs" in text
    assert "boom" in text
    depth2 = text.split("### Depth 2", 1)[1].split("###", 1)[0]
    objective_rows = [line for line in depth2.splitlines() if line.startswith("| a ")]
    # accuracy and objective rows of dataset "a": dl85 has no tree in either
    assert len(objective_rows) == 2 and all("—" in row for row in objective_rows)


def test_every_run_of_every_method_failed(tmp_path):
    text = _report(tmp_path, [_failed(r) for r in grid()])
    assert "boom" in text


def test_exact_method_without_any_objective(tmp_path):
    records = grid()
    for record in records:
        if record["method"] == "cpsat":
            record.update(objective=None, lower_bound=None, optimal=False)
    text = _report(tmp_path, records)
    assert "cpsat" in text


def test_nan_and_infinite_outcomes(tmp_path):
    records = grid()
    for i, record in enumerate(records):
        if record["method"] == "dl85":
            value = math.inf if i % 2 else math.nan
            record.update(objective=value, lower_bound=-math.inf, fit_time_s=value)
        if record["method"] == "cart":
            record.update(test_acc=math.nan, fit_mem_mb=math.inf)
    _report(tmp_path, records)


@pytest.mark.parametrize("methods", [{"dl85": "dl85"}, {"cart": "cart"}])
def test_one_dataset_one_method(tmp_path, methods):
    proto = protocol(methods=methods)
    text = _report(tmp_path, grid(datasets=("a",), depths=(3,), proto=proto))
    assert "| a " in text


def test_one_dataset_one_failed_method(tmp_path):
    proto = protocol(methods={"dl85": "dl85"})
    records = [_failed(r) for r in grid(datasets=("a",), depths=(2,), proto=proto)]
    text = _report(tmp_path, records)
    assert "boom" in text
