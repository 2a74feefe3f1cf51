"""The headline study (the field's suites whole against the published
solvers) runs end to end at smoke scale: every tier's runs are recorded,
exact tools agree wherever both prove, and the README's tables of its
records (``tools/readme_figures.py``) come out of them, tier by tier."""

import sys
from pathlib import Path

import pytest
from tool_module import load_tool

import odtstudy.study
from odtstudy.study import load_config, make_report, run_study
from odtstudy.study.report import consistency_violations, heuristic_gaps
from odtstudy.study.report._records import StudyRecords
from odtstudy.study.runner import expand_runs

readme_figures = load_tool("readme_figures")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

NUMERIC = {"dl85-numeric", "pycontree", "pytrees-contree-lds"}
BINARY = {"dl85", "pystreed", "pytrees-dl85-lds", "pydl85"}


def _smoke_config():
    try:
        return load_config("headline", scale="smoke")
    except ValueError as exc:  # a published solver without a wheel here
        if "is not installed" in str(exc) and "pip install" in str(exc):
            pytest.skip(str(exc))
        raise


def test_each_tier_runs_only_its_own_methods():
    path = Path(odtstudy.study.__file__).parent / "configs" / "headline.toml"
    study = tomllib.loads(path.read_text())
    for table in (study["study"], study["scales"]["smoke"]):
        for tier in table["tiers"]:
            numeric = all(d.startswith("contree") for d in tier["datasets"])
            assert set(tier["methods"]) == (NUMERIC if numeric else BINARY)
    assert study["study"]["time_limit"] == 60 and study["study"]["workers"] == 1


@pytest.mark.ci_slow
def test_headline_smoke_run(tmp_path):
    config = _smoke_config()
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == len(expand_runs(config))
    assert consistency_violations(frame).empty
    assert (heuristic_gaps(frame)["gap"] >= -1e-9).all()
    bank = frame[frame["dataset"] == "contree-train/bank"]
    exact = bank[bank["method"].isin(["dl85-numeric", "pycontree"])]
    assert exact["optimal"].all(), exact[["method", "status", "error"]]
    assert exact["objective"].nunique() == 1
    records = StudyRecords.from_frame(frame)
    rows = readme_figures._tier_rows(records)
    assert [row[0] for row in rows] == ["binary, depth 5", "published-d3, depth 3"]
    table = readme_figures._headline_table(rows)
    assert "| published-d3, depth 3 (1) | `dl85-numeric` 1/1," in table
    assert "ConTree (`pycontree`) 1/1" in table
    report = make_report("headline", output_dir=tmp_path, scale="smoke")
    text = report.read_text()
    assert "## Consistency of exact methods" in text
    assert "### Published optima" in text
    assert "| tier | depth | method | proven |" in text
    assert "### Speed against dl85-numeric: published-d3, depth 3" in text
