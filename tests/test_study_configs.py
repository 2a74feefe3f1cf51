"""The paper-reproduction study configs run end to end at smoke scale."""

import pytest

from odtstudy.study import list_studies, load_config, make_report, run_study
from odtstudy.study.report import consistency_violations, heuristic_gaps


@pytest.mark.parametrize("name", list_studies())
@pytest.mark.parametrize("scale", ["smoke", "default", "paper"])
def test_every_config_loads_at_every_scale(name, scale):
    config = load_config(name, scale=scale)
    assert config.datasets and config.methods and config.depths


def test_exact_binary_smoke(tmp_path):
    config = load_config("exact-binary", scale="smoke", workers=2)
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == len(config.datasets) * len(config.depths) * len(config.methods)
    assert (frame["status"] != "error").all(), frame[frame["status"] == "error"]
    assert consistency_violations(frame).empty
    assert (heuristic_gaps(frame)["gap"] >= -1e-9).all()
    proven = frame[frame["optimal"]].groupby("method").size()
    assert proven.get("dl85", 0) >= proven.get("binoct", 0)
    assert proven.get("dl85", 0) == len(config.datasets) * len(config.depths)
    # every DL8.5 ablation proves the same optimum as DL8.5 itself
    dl85 = frame[frame["method"].str.startswith("dl8")]
    assert (dl85.groupby(["dataset", "depth"])["objective"].nunique() == 1).all()
    text = make_report("exact-binary", output_dir=tmp_path, scale="smoke").read_text()
    assert "OK: every pair" in text
    assert (tmp_path / "exact-binary-smoke" / "cactus.png").exists()
