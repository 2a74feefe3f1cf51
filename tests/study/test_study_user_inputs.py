"""The user's own learners and data in a study TOML: checked before any run,
then run end to end."""

import importlib
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from odtstudy.cli import main
from odtstudy.datasets import _user, dataset_info, load_dataset
from odtstudy.study import load_config, registry
from odtstudy.study._worker import prepare_data
from odtstudy.study.results import COLUMNS

LEARNER = '''
from sklearn.tree import DecisionTreeClassifier


class MyTree(DecisionTreeClassifier):
    """A user's learner: any scikit-learn classifier."""
'''


@pytest.fixture(autouse=True)
def _isolated_registries(monkeypatch):
    """User datasets and methods registered by a test stay in that test."""
    monkeypatch.setattr(_user, "_USER", {})
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


@pytest.fixture
def study(tmp_path, monkeypatch):
    """A study folder with a user table, a user learner and its TOML."""
    monkeypatch.syspath_prepend(str(tmp_path))
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "size": rng.normal(size=60).round(2),
            "grade": rng.integers(0, 4, size=60),
            "colour": rng.choice(["red", "blue", "green"], size=60),
            "label": rng.choice(["yes", "no"], size=60),
        }
    )
    (tmp_path / "data").mkdir()
    frame.to_csv(tmp_path / "data" / "my.csv", index=False)
    (tmp_path / "usertrees_mod.py").write_text(LEARNER)
    toml = tmp_path / "mine.toml"
    toml.write_text(
        textwrap.dedent(
            """
            [study]
            name = "mine"
            datasets = ["mydata", "vote"]
            methods = ["mine", "dl85"]
            depths = [2]
            folds = 2
            time_limit = 5

            [datasets.mydata]
            path = "data/my.csv"
            target = "label"
            categorical = ["grade"]

            [methods.mine]
            target = "usertrees_mod:MyTree"
            data = "numeric"
            exact = false
            min_samples_leaf = 2
            """
        )
    )
    return toml


def _edit(toml, old, new):
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new))
    return toml


def test_user_method_and_csv_run_end_to_end(study, tmp_path):
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out / "mine" / "results.csv")
    assert list(frame.columns) == COLUMNS and len(frame) == 8
    assert (frame["status"] == "ok").all()
    mine = frame[frame["method"] == "mine"]
    assert set(mine["dataset"]) == {"mydata", "vote"}
    assert set(mine["tool"]) == {"usertrees_mod"}
    assert (mine["objective"] >= 0).all()
    assert set(frame.loc[frame["method"] == "dl85", "tool"]) == {"odtstudy"}
    assert set(frame["objective_family"]) == {"misclassification"}
    assert "usertrees_mod:MyTree" in frame["protocol"].iloc[0]


@pytest.mark.parametrize(
    "old, new, key",
    [
        ('path = "data/my.csv"', 'path = "data/nope.csv"', "[datasets.mydata] path"),
        ('target = "label"', 'target = "lable"', "[datasets.mydata] target"),
        (
            'categorical = ["grade"]',
            'categorical = ["hue"]',
            "[datasets.mydata] categorical",
        ),
        ('"usertrees_mod:MyTree"', '"no_such_module:MyTree"', "[methods.mine] target"),
        ('"usertrees_mod:MyTree"', '"usertrees_mod:Nope"', "[methods.mine] target"),
        ('"usertrees_mod:MyTree"', '"usertrees_mod"', "[methods.mine] target"),
        ('data = "numeric"', 'data = "float"', "[methods.mine] data"),
        ("exact = false", 'exact = "no"', "[methods.mine] exact"),
        ("min_samples_leaf = 2", "min_leaf = 2", "[methods.mine] min_leaf"),
        ('["mydata", "vote"]', '["vote"]', "[datasets.mydata]"),
        ("[datasets.mydata]", "[datasets.vote]", "[datasets.vote]"),
    ],
)
def test_bad_user_inputs_fail_before_any_run(study, tmp_path, capsys, old, new, key):
    _edit(study, old, new)
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{study}: {key}" in err
    assert not out.exists()


def test_user_dataset_is_listed_and_binarised_for_each_data_kind(study):
    config = load_config(study)
    assert config.datasets == ["mydata", "vote"]
    info = dataset_info("mydata")
    assert info["collection"] == "user" and (info["rows"], info["features"]) == (60, 3)
    assert "sha256" in info["source"] and "my.csv" in info["source"]
    data = load_dataset("mydata")
    assert data.kind == "categorical" and data.categorical == ("grade", "colour")
    rows = np.arange(60)
    for name, numeric_columns in (("dl85", 0), ("cart", 1)):
        X_train, _, names = prepare_data(
            data, registry.get_method(name), rows, rows, None
        )
        assert names.count("size") == numeric_columns
        assert "colour=red" in names and "grade=3" in names
        if name == "dl85":
            assert np.isin(X_train, (0, 1)).all()


def test_parquet_table(tmp_path):
    frame = pd.DataFrame({"a": [0, 1, 0, 1] * 5, "y": [0, 1, 1, 0] * 5})
    frame.to_parquet(tmp_path / "t.parquet")
    _user.register_dataset("tbl", "t.parquet", "y", base_dir=tmp_path)
    data = load_dataset("user/tbl")
    assert data.kind == "binary" and data.X.shape == (20, 1)


def test_methods_and_datasets_commands(study, capsys):
    assert main(["methods", "--study", str(study)]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = {line.split()[0]: line for line in lines}
    for name in ("dl85", "cart", "pystreed", "pydl85", "gosdt", "pycontree"):
        assert name in first
    assert first["dl85"].split()[1:5] == [
        "classification", "binary", "exact", "misclassification",
    ]  # fmt: skip
    assert first["dl85-reg"].split()[1:5] == [
        "regression", "binary", "exact", "squared-error",
    ]  # fmt: skip
    assert "usertrees_mod:MyTree" in first
    assert main(["datasets", "--study", str(study)]) == 0
    out = capsys.readouterr().out
    assert "user/mydata" in out and "cp4im/vote" in out and "sha256" in out


def test_dask_scheduler_refuses_user_inputs(study, tmp_path, capsys):
    args = ["study", str(study), "--output", str(tmp_path / "o")]
    assert main([*args, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "without --scheduler" in capsys.readouterr().err


def test_every_midpoint_setting(study):
    _edit(study, "time_limit = 5", 'time_limit = 5\nmax_thresholds = "all"')
    assert load_config(study).max_thresholds is None


BROKEN = '''
from sklearn.tree import DecisionTreeClassifier


class Broken(DecisionTreeClassifier):
    """A user's exact learner whose fit fails on the study's data."""

    def fit(self, X, y, sample_weight=None):
        raise RuntimeError("broken on purpose")
'''


def _check_failures_reported(study, tmp_path, shown):
    """Run the study: it ends normally and its whole report lists the failed
    runs with ``shown`` in their errors."""
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 0
    report = (out / "mine" / "report.md").read_text()
    assert "## Failed runs" in report and shown in report
    assert "could not be built" not in report


def test_report_of_a_user_exact_learner_whose_every_fit_raises(study, tmp_path):
    (tmp_path / "broken_mod.py").write_text(BROKEN)
    _edit(study, 'datasets = ["mydata", "vote"]', 'datasets = ["mydata"]')
    _edit(study, '"usertrees_mod:MyTree"', '"broken_mod:Broken"')
    _edit(study, "exact = false", "exact = true")
    _check_failures_reported(study, tmp_path, "broken on purpose")


def test_report_of_dl85_on_a_user_table_holding_inf(study, tmp_path):
    frame = pd.read_csv(tmp_path / "data" / "my.csv")
    frame.loc[3, "size"] = np.inf
    frame.to_csv(tmp_path / "data" / "my.csv", index=False)
    _edit(study, 'datasets = ["mydata", "vote"]', 'datasets = ["mydata"]')
    # every run fails on the infinite value; the report shows why
    _check_failures_reported(study, tmp_path, "infinity")


@pytest.mark.parametrize(
    "source, shown",
    [
        (
            "raise RuntimeError('no licence server')\n",
            "RuntimeError: no licence server",
        ),
        ("1 / 0\n", "ZeroDivisionError"),
        ("def broken(:\n", "SyntaxError"),
    ],
    ids=["runtime-error", "zero-division", "syntax-error"],
)
def test_user_module_failing_at_import_is_a_config_error(
    study, tmp_path, capsys, source, shown
):
    (tmp_path / "failing_mod.py").write_text(source)
    _edit(study, '"usertrees_mod:MyTree"', '"failing_mod:MyTree"')
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{study}: [methods.mine] target" in err
    assert shown in err and "fix the module" in err
    assert not out.exists()


BAD_PREDICT = '''
import numpy as np
from sklearn.tree import DecisionTreeClassifier


class BadPredict(DecisionTreeClassifier):
    """Predicts in a shape NumPy would broadcast or reject."""

    def predict(self, X):
        labels = super().predict(X)
        return {shape!r}
'''


@pytest.mark.parametrize(
    "shape, shown",
    [
        ("labels[:, None]", "shape (30, 1)"),
        ("None", "NoneType of shape ()"),
        ("labels[0]", "of shape ()"),
        ("labels[:-1]", "shape (29,)"),
    ],
    ids=["column", "none", "scalar", "one-short"],
)
def test_user_learner_predicting_the_wrong_shape_is_an_error_run(
    study, tmp_path, shape, shown
):
    # a module name of its own per case: an imported module stays imported
    module = f"badpredict_{abs(hash(shape))}_mod"
    (tmp_path / f"{module}.py").write_text(BAD_PREDICT.replace("{shape!r}", shape))
    _edit(study, 'datasets = ["mydata", "vote"]', 'datasets = ["mydata"]')
    _edit(study, '"usertrees_mod:MyTree"', f'"{module}:BadPredict"')
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out / "mine" / "results.csv")
    mine = frame[frame["method"] == "mine"]
    assert (mine["status"] == "error").all() and mine["test_acc"].isna().all()
    assert mine["error"].str.contains("predict returned").all()
    assert mine["error"].str.contains(shown, regex=False).all()


def test_a_changed_user_learner_is_another_protocol(study, tmp_path):
    # the user learner on the user table is all the protocol change needs
    text = study.read_text().replace('["mydata", "vote"]', '["mydata"]')
    study.write_text(text.replace('["mine", "dl85"]', '["mine"]'))
    out = tmp_path / "out"
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 0
    module = tmp_path / "usertrees_mod.py"
    module.write_text(module.read_text() + "\n# the same path, another learner\n")
    importlib.invalidate_caches()
    sys.modules.pop("usertrees_mod", None)
    assert main(["study", str(study), "--output", str(out), "--quiet"]) == 0
    frame = pd.read_csv(out / "mine" / "results.csv")
    assert frame["protocol_id"].nunique() == 2
    assert "source_sha256" in frame["protocol"].iloc[0]
