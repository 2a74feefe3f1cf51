"""The built-in studies without a smoke test of their own run end to end."""

import pytest

import odtstudy.reproduce  # noqa: F401  (the reproductions' studies by name)
from odtstudy.study import load_config, make_report, run_study
from odtstudy.study.report import consistency_violations, heuristic_gaps


@pytest.mark.ci_slow
@pytest.mark.parametrize("name", ["exact-numeric", "tmo"])
def test_study_smoke_run(name, tmp_path):
    config = load_config(name, scale="smoke")
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    expected = len(config.datasets) * len(config.methods) * len(config.depths)
    assert len(frame) == expected * config.folds * len(config.seeds)
    assert frame["has_tree"].all(), frame[~frame["has_tree"]][["method", "error"]]
    assert consistency_violations(frame).empty
    assert (heuristic_gaps(frame)["gap"] >= -1e-9).all()
    if name == "exact-numeric":
        # DL8.5 on the raw numbers, DL8.5 on every midpoint and BinOCT on the
        # raw numbers prove one optimum per dataset (uci/iris d=2: 6 errors)
        exact = frame[frame["method"].isin(["dl85-numeric", "dl85", "binoct"])]
        assert exact["optimal"].all(), exact[["method", "dataset", "status"]]
        assert (exact.groupby("dataset")["objective"].nunique() == 1).all()
        numeric = exact[exact["method"] == "dl85-numeric"].set_index("dataset")
        assert numeric.loc["uci/iris", "objective"] == 6
        assert numeric.loc["uci/iris", "n_features"] == 4  # the raw columns
    report = make_report(name, output_dir=tmp_path, scale="smoke")
    assert "## Summary" in report.read_text()
