"""The built-in ``versus`` study: odtstudy's DL8.5 against the published solvers."""

import pytest

from odtstudy.study import get_method, load_config, run_study

ADAPTERS = ["pydl85", "pystreed", "gosdt", "pycontree", "licketysplit"]


def _installed():
    missing = [name for name in ADAPTERS if not get_method(name).available()]
    if missing:
        pytest.skip(f"not installed: {missing} (pip install 'odtstudy[external]')")


def test_versus_runs_every_adapter_at_every_scale(no_preflight):
    _installed()
    for scale in ("smoke", "default", "paper"):
        config = load_config("versus", scale=scale)
        assert [spec.method for spec in config.methods] == [
            "dl85", *ADAPTERS[:-1], "dl85-numeric", ADAPTERS[-1]
        ]  # fmt: skip
        assert config.folds == 1 and config.max_thresholds is None


@pytest.mark.ci_slow
def test_versus_smoke_proves_the_same_objectives(tmp_path):
    _installed()
    config = load_config("versus", scale="smoke")
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert (frame["status"] == "ok").all(), frame[frame["status"] != "ok"]
    assert set(frame["tool"]) == {
        "odtstudy",
        "pydl8.5",
        "pystreed",
        "gosdt",
        "pycontree",
        "licketysplit",
    }
    proven = frame[frame["optimal"]]
    agree = proven.groupby(["dataset", "depth", "objective_family"])["objective"]
    assert (agree.nunique() == 1).all()
    proven_runs = proven.groupby("method").size()
    assert proven_runs.get("dl85") == len(config.datasets) * 2
    # numeric DL8.5 proves every run, with ConTree's optimum on the same rows
    assert proven_runs.get("dl85-numeric") == len(config.datasets) * 2
    both = proven[proven["method"].isin(["dl85-numeric", "pycontree"])]
    pairs = both.pivot_table("objective", ["dataset", "depth"], "method")
    assert len(pairs) == len(config.datasets) * 2
    assert (pairs["dl85-numeric"] == pairs["pycontree"]).all(), pairs
