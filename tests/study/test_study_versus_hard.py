"""The versus-hard study (published solvers on instances where they differ)
runs end to end at smoke scale: every tier's runs are recorded, exact tools
agree wherever both prove, and the README's tables come from its records."""

import sys
from pathlib import Path

import pytest
from tool_module import load_tool

import odtstudy.study
from odtstudy.study import load_config, make_report, run_study
from odtstudy.study._records import StudyRecords
from odtstudy.study.report import consistency_violations, heuristic_gaps
from odtstudy.study.runner import expand_runs

readme_figures = load_tool("readme_figures")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _smoke_config():
    try:
        return load_config("versus-hard", scale="smoke")
    except ValueError as exc:  # gosdt has no wheel for the newest Python
        if "is not installed" in str(exc) and "pip install" in str(exc):
            pytest.skip(str(exc))
        raise


def test_each_tier_runs_only_its_own_methods():
    path = Path(odtstudy.study.__file__).parent / "configs" / "versus-hard.toml"
    study = tomllib.loads(path.read_text())
    for scale in ("study", "smoke", "paper"):
        table = study["study"] if scale == "study" else study["scales"][scale]
        numeric = {
            m
            for tier in table["tiers"]
            if all(d.startswith("contree/") for d in tier["datasets"])
            for m in tier["methods"]
        }
        binary = {m for tier in table["tiers"] for m in tier["methods"]} - numeric
        assert {"dl85-numeric", "pycontree", "pytrees-contree"} <= numeric
        assert {"dl85", "pystreed", "pydl85", "pytrees-dl85"} <= binary
        assert ("gosdt" in binary) == (scale == "paper")
    assert study["study"]["time_limit"] == 300 and study["study"]["workers"] == 1


@pytest.mark.ci_slow
def test_versus_hard_smoke_run(tmp_path):
    config = _smoke_config()
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == len(expand_runs(config))
    assert consistency_violations(frame).empty
    assert (heuristic_gaps(frame)["gap"] >= -1e-9).all()
    bank = frame[frame["dataset"] == "contree/bank"]
    exact = bank[bank["method"].isin(["dl85-numeric", "pycontree", "pytrees-contree"])]
    assert exact["optimal"].all(), exact[["method", "status", "error"]]
    assert exact["objective"].nunique() == 1
    records = StudyRecords.from_frame(frame)
    tables = readme_figures._hard_tables(records)
    assert tables.count("| proven |") == 2 and "proven in" in tables
    assert "contree/bank d3" in tables and "ionosphere d5" in tables
    assert "`pycontree` 1 of 1" in readme_figures._hard_headline(records)
    report = make_report("versus-hard", output_dir=tmp_path, scale="smoke")
    assert "## Consistency of exact methods" in report.read_text()
