"""Parquet export with typed columns, and the side-by-side comparison of two studies."""

import pandas as pd
import pytest
from report_doubles import grid, protocol, run, write_study

from odtstudy.study.report._compare import compare_studies
from odtstudy.study.results import COLUMNS


def test_parquet_round_trip_keeps_typed_columns(tmp_path):
    records = grid(datasets=("a",), depths=(2,))
    records.append(run("a", 2, "cpsat", fold=1, has_tree=False))
    store = write_study(tmp_path, records)
    frame = pd.read_parquet(store.export_parquet())
    assert list(frame.columns) == COLUMNS and len(frame) == len(store.load())
    assert str(frame["depth"].dtype) == "Int64" and str(frame["seed"].dtype) == "Int64"
    for column in ("optimal", "claimed_optimal", "has_tree"):
        assert frame[column].dtype == bool
    for column in ("fit_time_s", "test_acc", "objective", "fit_mem_mb", "time_limit"):
        assert frame[column].dtype == "float64"
    assert isinstance(frame["utc"].dtype, pd.DatetimeTZDtype)
    assert pd.api.types.is_string_dtype(frame["dataset"])
    assert frame["test_acc"].isna().sum() == 1 and not frame["has_tree"].all()
    assert frame["protocol"].str.startswith("{").all()


def _compared(tmp_path, old, new, **grid_args):
    """The side-by-side report of two grids, dl85 of the second faster and
    more accurate."""
    a, b = grid(datasets=old, **grid_args), grid(datasets=new, **grid_args)
    for record in b:
        if record["method"] == "dl85":
            record.update(test_acc=0.85, fit_time_s=0.25)
    write_study(tmp_path / "old", a)
    write_study(tmp_path / "new", b)
    return compare_studies(tmp_path / "old", tmp_path / "new", output_dir=tmp_path)


def test_compare_two_studies_side_by_side(tmp_path):
    path = _compared(tmp_path, ("a", "b", "c"), ("a", "b", "c", "d"))
    text = path.read_text()
    assert path.parent.name == "compare-old-vs-new"
    assert "dl85@A" in text and "dl85@B" in text and "3 datasets" in text
    row = next(line for line in text.splitlines() if line.startswith("| dl85 | 2 |"))
    assert "+0.0500" in row and "3/0/0" in row
    # 6 runs of 3 datasets: 3 independent units, no interval and no p-value
    assert "| 3/0/0 |  | 0.5× (n = 3: too few for a test) (6 runs, 3 datasets) |" in row
    assert (path.parent / "report.html").exists()


def test_compare_tests_over_datasets_from_six_on(tmp_path):
    names = tuple("abcdef")
    text = _compared(tmp_path, names, names, depths=(2,))
    row = next(
        line
        for line in text.read_text().splitlines()
        if line.startswith("| dl85 | 2 |")
    )
    assert "| 6/0/0 | 0.0312 | 0.5× [0.5, 0.5] (12 runs, 6 datasets) |" in row


def test_compare_refuses_different_protocols(tmp_path):
    write_study(tmp_path / "two", grid(datasets=("a",), folds=2))
    write_study(tmp_path / "three", grid(datasets=("a",), proto=protocol(folds=3)))
    with pytest.raises(ValueError, match="folds: 2 vs 3"):
        compare_studies(tmp_path / "two", tmp_path / "three", output_dir=tmp_path)
