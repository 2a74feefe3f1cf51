import os
import signal
import time

import pandas as pd
import pytest
from no_preflight import preflight_off
from study_doubles import unit_config

from odtstudy.cart import CARTClassifier
from odtstudy.cli import main
from odtstudy.datasets import load_dataset
from odtstudy.study import (
    expand_runs,
    list_studies,
    load_config,
    make_report,
    register_method,
    run_study,
)
from odtstudy.study.results import COLUMNS, ResultsStore


class CrashingClassifier(CARTClassifier):
    """Test double: the worker process dies of a segmentation fault in fit."""

    def _fit(self, X, y, sample_weight):
        os.kill(os.getpid(), signal.SIGSEGV)


class OverrunningClassifier(CARTClassifier):
    """Test double: ignores its time limit."""

    def _fit(self, X, y, sample_weight):
        time.sleep(120)


class RaisingClassifier(CARTClassifier):
    def _fit(self, X, y, sample_weight):
        raise RuntimeError("boom in fit")


register_method("test-crash", CrashingClassifier, replace=True)
register_method("test-overrun", OverrunningClassifier, replace=True)
register_method("test-raise", RaisingClassifier, replace=True)


_config = unit_config


def test_crash_and_overrun_are_recorded_and_the_study_goes_on(tmp_path):
    config = _config(
        ["cart", "test-crash", "test-overrun", "test-raise"],
        datasets=["zoo-1"],
        depths=[2],
    )
    store = run_study(config, output_dir=tmp_path, workers=2, quiet=True)
    frame = store.load()
    assert len(frame) == 8
    by_method = frame.groupby("method")["status"].apply(set).to_dict()
    assert by_method == {
        "cart": {"ok"},
        "test-crash": {"error"},
        "test-overrun": {"timeout"},
        "test-raise": {"error"},
    }
    crash = frame[frame["method"] == "test-crash"]["error"].iloc[0]
    assert "SIGSEGV" in crash
    assert "boom in fit" in frame[frame["method"] == "test-raise"]["error"].iloc[0]
    overrun = frame[frame["method"] == "test-overrun"]
    assert (overrun["wall_time_s"] < 10).all()
    ok = frame[frame["method"] == "cart"]
    assert ok["test_acc"].between(0, 1).all() and (ok["peak_rss_mb"] > 0).all()
    assert ok["versions"].str.contains("scikit-learn").all()


def test_resumed_study_adds_no_duplicates(tmp_path):
    config = _config(["cart"])
    runs = expand_runs(config)
    assert len(runs) == 2 * 2 * 2
    assert len({r["run_id"] for r in runs}) == len(runs)
    run_study(config, output_dir=tmp_path, quiet=True)
    store = ResultsStore(tmp_path / "unit")
    first = store.path.read_text()
    run_study(config, output_dir=tmp_path, quiet=True)
    assert store.path.read_text() == first
    bigger = _config(["cart"], depths=[1, 2, 3])
    run_study(bigger, output_dir=tmp_path, quiet=True)
    frame = store.load()
    assert len(frame) == 12 and frame["run_id"].is_unique


def test_torn_last_record_is_ignored_and_rerun(tmp_path):
    config = _config(["cart"], datasets=["zoo-1"], depths=[1])
    store = run_study(config, output_dir=tmp_path, quiet=True)
    text = store.path.read_text()
    store.path.write_text(text[: len(text) - 20])  # a kill mid-write
    assert len(store.load()) == 1
    run_study(config, output_dir=tmp_path, quiet=True)
    assert len(store.load()) == 2


def test_binary_only_methods_get_binarized_folds(tmp_path):
    from odtstudy.base import check_binary_features

    class BinaryOnly(CARTClassifier):
        def _fit(self, X, y, sample_weight):
            check_binary_features(X, "BinaryOnly")
            return super()._fit(X, y, sample_weight)

    register_method("test-binary", BinaryOnly, data="binary", replace=True)
    config = _config(["test-binary"], datasets=["uci/iris"], depths=[2])
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert (frame["status"] == "ok").all()
    assert (frame["n_features"] <= 4 * 8).all()


def test_report_lists_tables_and_figures(tmp_path):
    config = _config(["cart", "test-raise"], datasets=["zoo-1"], depths=[1, 2])
    run_study(config, output_dir=tmp_path, quiet=True)
    path = make_report("unit", output_dir=tmp_path)
    text = path.read_text()
    assert "## Summary" in text and "| zoo-1 | 2 | cart |" in text
    assert "Consistency of exact methods" in text and "OK:" in text
    assert "boom in fit" in text
    folder = tmp_path / "unit"
    for name in ("test_accuracy", "cost_vs_depth"):
        assert (folder / f"{name}.png").exists() and (folder / f"{name}.svg").exists()
    page = (folder / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<table class='sortable'>" in page


def _frame(rows):
    base = dict(
        status="ok", fold=0, seed=0, n_features=4, depth=2, dataset="d", stats="{}"
    )
    return pd.DataFrame([{**base, **row} for row in rows])


def test_consistency_check_flags_disagreeing_exact_methods():
    from odtstudy.study.report import consistency_violations, heuristic_gaps

    agree = _frame(
        [
            dict(method="a", objective=3.0, optimal=True),
            dict(method="b", objective=3.0, optimal=True),
            dict(method="h", objective=5.0, optimal=False),
        ]
    )
    assert consistency_violations(agree).empty
    assert heuristic_gaps(agree)["gap"].tolist() == [2.0]
    disagree = _frame(
        [
            dict(method="a", objective=3.0, optimal=True),
            dict(method="b", objective=4.0, optimal=True),
            dict(method="h", objective=2.0, optimal=False),
        ]
    )
    assert len(consistency_violations(disagree)) == 1
    assert heuristic_gaps(disagree)["gap"].tolist() == [-1.0]
    forest = _frame(
        [
            dict(method="a", objective=3.0, optimal=True),
            dict(method="f", objective=0.25, optimal=True, stats='{"n_trees": 5}'),
            dict(method="g", objective=1.0, optimal=False, stats='{"n_trees": 9}'),
        ]
    )
    assert consistency_violations(forest).empty and heuristic_gaps(forest).empty
    other_data = _frame(
        [
            dict(method="a", objective=3.0, optimal=True),
            dict(method="b", objective=4.0, optimal=True, n_features=9),
        ]
    )
    assert consistency_violations(other_data).empty


def test_config_errors_come_before_any_run(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset"):
        run_study(_config(["cart"], datasets=["nope"]), output_dir=tmp_path)
    with pytest.raises(ValueError, match="unknown method"):
        run_study(_config(["nope"]), output_dir=tmp_path)
    with pytest.raises(ValueError, match="depths"):
        run_study(_config(["cart"], depths=[0]), output_dir=tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("[study\nname=")
    with pytest.raises(ValueError, match="malformed"):
        load_config(str(bad))
    with pytest.raises(KeyError, match="unknown study"):
        load_config("no-such-study")
    assert not any(tmp_path.glob("*/results.csv"))


def test_quick_config_and_cli_smoke(tmp_path, capsys):
    assert "quick" in list_studies()
    # quick's grid only: its preflight fits (~5 s) run in test_study_configs.py;
    # the tiny study below has its own
    with preflight_off():
        config = load_config("quick", scale="smoke")
    assert config.folds == 2 and config.depths == [2]
    assert "cart" in [m.label for m in config.methods]
    toml = tmp_path / "tiny.toml"
    toml.write_text(
        '[study]\nname = "tiny"\ndatasets = ["zoo-1"]\nmethods = ["cart"]\n'
        "depths = [1]\nfolds = 2\ntime_limit = 5\n"
    )
    assert main(["study", str(toml), "--output", str(tmp_path), "--quiet"]) == 0
    assert (tmp_path / "tiny" / "report.md").exists()
    frame = pd.read_csv(tmp_path / "tiny" / "results.csv")
    assert list(frame.columns) == COLUMNS and len(frame) == 2
    assert (frame["fit_mem_mb"] >= 0).all() and frame["protocol_id"].nunique() == 1
    assert main(["study", "no-such-study"]) == 2
    assert "unknown study" in capsys.readouterr().err


def test_quick_is_the_overview_cut_by_the_rule_its_description_states(no_preflight):
    # the grids only: no preflight fit (seconds a study)
    quick, overview = load_config("quick"), load_config("overview")
    # the overview's methods, parameters and limits, and dl85-numeric
    extra = [m for m in quick.methods if m not in overview.methods]
    assert [m.label for m in extra] == ["dl85-numeric"]
    assert [m for m in quick.methods if m not in extra] == overview.methods
    for key in ("time_limit", "grace_s", "max_thresholds", "memory_limit_mb", "seeds"):
        assert getattr(quick, key) == getattr(overview, key), key
    # the largest set of each kind, the two shallowest depths, 3 folds
    by_kind = {}
    for name in overview.datasets:
        data = load_dataset(name)
        by_kind.setdefault(data.kind, []).append((data.X.shape[0], name))
    assert sorted(quick.datasets) == sorted(max(s)[1] for s in by_kind.values())
    assert quick.depths == sorted(overview.depths)[:2]
    assert (quick.folds, overview.folds) == (3, 5)


@pytest.mark.parametrize("where", ["dev-null", "under-a-file", "read-only"])
def test_unwritable_output_is_one_clear_error_before_any_run(
    tmp_path, capsys, where, no_preflight
):
    # the output's check, not quick's learners (their preflight fits: in
    # test_study_configs.py)
    if where == "dev-null":
        output = "/dev/null"
    elif where == "under-a-file":
        (tmp_path / "file").write_text("")
        output = str(tmp_path / "file" / "reports")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        output = str(tmp_path / "ro")
        os.mkdir(output, 0o555)
    code = main(["study", "quick", "--scale", "smoke", "--output", output, "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"--output {output}: cannot write the study folder" in err
    assert "pass a writable folder with --output" in err
