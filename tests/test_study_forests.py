"""The forests study runs at smoke scale and reports the number of trees."""

from odtstudy.study import load_config, make_report, run_study


def test_forests_smoke(tmp_path):
    config = load_config("forests", scale="smoke", workers=2)
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == len(config.datasets) * len(config.methods) * config.folds
    assert (frame["status"] == "ok").all(), frame[frame["status"] != "ok"]["error"]
    assert frame["test_acc"].between(0, 1).all()
    text = make_report("forests", output_dir=tmp_path, scale="smoke").read_text()
    assert "| trees |" in text
