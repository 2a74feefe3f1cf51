"""Tasks in studies: a regression study is checked before any run (methods
and datasets of its task), runs end to end with regression records, takes a
user's CSV with a numeric target, and leaves classification records as they
were."""

import itertools
import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from odtstudy.datasets import _user
from odtstudy.dl85 import DL85Regressor
from odtstudy.study import load_config, registry, run_study
from odtstudy.study._regression_scores import REGRESSION_COLUMNS
from odtstudy.study._worker import _predictions, _TreeScorer, fold_indices
from odtstudy.study.report._checks import consistency_violations, heuristic_gaps
from odtstudy.study.report._records import with_defaults
from odtstudy.study.results import ResultsStore

REFERENCE = Path(__file__).parents[2] / "docs" / "reference-reports"


@pytest.fixture(autouse=True)
def _isolated_registries(monkeypatch):
    """User datasets and methods registered by a test stay in that test."""
    monkeypatch.setattr(_user, "_USER", {})
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def _study_file(folder, text) -> Path:
    path = folder / "study.toml"
    path.write_text(textwrap.dedent(text))
    return path


# ------------------------------------------------------------ refusals
def test_classification_method_refused_in_regression_study(tmp_path):
    path = _study_file(
        tmp_path,
        """
        [study]
        name = "reg"
        task = "regression"
        datasets = ["osrt/servo"]
        methods = ["dl85-reg", "dl85"]
        depths = [2]
        """,
    )
    with pytest.raises(ValueError) as info:
        load_config(path)
    message = str(info.value)
    assert "method 'dl85' supports classification only" in message
    assert "study 'reg' is a regression study" in message
    assert "remove it or use dl85-reg" in message
    assert not (tmp_path / "reports").exists()


def test_variant_of_a_classifier_refused_by_its_label(tmp_path):
    path = _study_file(
        tmp_path,
        """
        [study]
        task = "regression"
        datasets = ["osrt/servo"]
        methods = ["greedy"]
        depths = [2]

        [methods.greedy]
        method = "cart"
        """,
    )
    with pytest.raises(ValueError, match=r"\[methods.greedy\]: method 'cart' "):
        load_config(path)


def test_regression_method_refused_in_classification_study(tmp_path):
    path = _study_file(
        tmp_path,
        """
        [study]
        datasets = ["zoo-1"]
        methods = ["dl85-reg"]
        depths = [2]
        """,
    )
    with pytest.raises(ValueError, match=r"supports regression only.*use dl85"):
        load_config(path)


@pytest.mark.parametrize(
    "task, dataset, method, kind",
    [
        ("regression", "zoo-1", "dl85-reg", "classification"),
        ("classification", "osrt/servo", "dl85", "regression"),
    ],
)
def test_dataset_of_another_task_refused(tmp_path, task, dataset, method, kind):
    path = _study_file(
        tmp_path,
        f"""
        [study]
        task = "{task}"
        datasets = ["{dataset}"]
        methods = ["{method}"]
        depths = [2]
        """,
    )
    with pytest.raises(ValueError) as info:
        load_config(path)
    assert f"dataset {dataset!r} is a {kind} dataset" in str(info.value)
    assert f"is a {task} study" in str(info.value)


def test_bad_task_value_named(tmp_path):
    path = _study_file(
        tmp_path,
        """
        [study]
        task = "ranking"
        datasets = ["zoo-1"]
        methods = ["dl85"]
        """,
    )
    with pytest.raises(ValueError, match=r'\[study\] task: expected "classification"'):
        load_config(path)


def test_methods_all_runs_the_methods_of_the_task(tmp_path):
    path = _study_file(
        tmp_path,
        """
        [study]
        task = "regression"
        datasets = ["osrt/servo"]
        methods = "all"
        depths = [2]
        folds = 2
        """,
    )
    config = load_config(path)
    names = {spec.method for spec in config.methods}
    assert "dl85-reg" in names and "dl85" not in names and "cart" not in names
    assert all("regression" in registry.get_method(n).tasks for n in names)


def test_optional_method_not_installed_is_skipped_with_a_note(tmp_path):
    registry.register_method(
        "missing-reg", "no_such_module:Tree", tasks=["regression"], replace=True
    )
    path = _study_file(
        tmp_path,
        """
        [study]
        task = "regression"
        datasets = ["osrt/servo"]
        methods = ["dl85-reg", "missing-reg"]
        optional_methods = ["missing-reg"]
        depths = [2]
        """,
    )
    with pytest.warns(UserWarning, match="optional method 'missing-reg' skipped"):
        config = load_config(path)
    assert [spec.label for spec in config.methods] == ["dl85-reg"]
    assert "not installed" in config.skipped_methods["missing-reg"]
    config.validate()  # the checks hold again on the reduced study
    path.write_text(path.read_text().replace('optional_methods = ["missing-reg"]', ""))
    with pytest.raises(ValueError, match="'missing-reg' is not installed"):
        load_config(path)


# ------------------------------------------------------------ worker pieces
def test_regression_folds_are_plain_shuffled_kfold():
    y = np.linspace(0.0, 1.0, 23)  # every value once: no class to stratify on
    tests = [fold_indices(y, 5, k, seed=0, task="regression")[1] for k in range(5)]
    rows = np.sort(np.concatenate(tests))
    assert (rows == np.arange(23)).all()
    assert not (np.sort(tests[0]) == np.arange(len(tests[0]))).all()  # shuffled
    again = fold_indices(y, 5, 0, seed=0, task="regression")[1]
    assert (again == tests[0]).all()


def test_regression_predictions_are_one_number_per_row():
    class TwoColumns:
        def predict(self, X):
            return np.zeros((len(X), 2))

    class Words:
        def predict(self, X):
            return np.array(["a"] * len(X))

    X = np.zeros((4, 1))
    with pytest.raises(ValueError, match="a regressor's predict must return one value"):
        _predictions(TwoColumns(), X, "training", "regression")
    with pytest.raises(ValueError, match="not a finite number"):
        _predictions(Words(), X, "training", "regression")


def test_incumbent_scorer_reads_a_regression_tree_as_values():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 3, dtype=np.uint8)
    y = np.array([1.0, 2.0, 10.0, 12.0] * 3)
    reg = DL85Regressor(max_depth=1).fit(X, y)
    labels = {"tool": "odtstudy", "objective_family": "squared-error"}
    scorer = _TreeScorer(X, y, X[:4], y[:4], labels, "regression")
    fields = scorer(reg.tree_, reg.objective_, reg.lower_bound_)
    assert fields["task"] == "regression" and fields["train_acc"] is None
    assert fields["train_mse"] == pytest.approx(reg.objective_ / len(y))
    assert fields["test_mse"] == pytest.approx(
        np.mean((reg.predict(X[:4]) - y[:4]) ** 2)
    )
    assert fields["train_pinball"] is None


# ------------------------------------------------------------ the built-in study
@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """The built-in regression study at its smoke scale, run once (without
    its report: the runner's records are what is checked here)."""
    config = load_config("regression", scale="smoke")
    out = tmp_path_factory.mktemp("regression")
    return config, run_study(config, output_dir=out, quiet=True).load()


def test_regression_smoke_study_records(smoke):
    config, frame = smoke
    assert config.task == "regression"
    runs = len(config.seeds) * config.folds
    assert len(frame) == runs * sum(
        len(datasets) * len(labels) * len(depths)
        for datasets, labels, depths in config.grids()
    )
    assert (frame["status"] == "ok").all(), frame[["method", "error"]]
    assert (frame["task"] == "regression").all()
    assert frame["train_acc"].isna().all() and frame["test_acc"].isna().all()
    for column in ("train_mse", "test_mse", "train_mae", "test_mae"):
        assert (frame[column] >= 0).all(), column
    assert (frame[["train_r2", "test_r2"]] <= 1).all().all()
    quantile = frame["objective_family"].str.startswith("pinball@")
    assert frame.loc[quantile, "test_pinball"].notna().all()
    assert frame.loc[~quantile, ["train_pinball", "test_pinball"]].isna().all().all()
    # the objective of every DL8.5 run is its training loss, summed
    dl85 = frame[frame["method"].str.startswith("dl85-reg")]
    assert dl85["optimal"].all()
    sums = {
        "squared-error": dl85["train_mse"],
        "absolute-error": dl85["train_mae"],
        "pinball@0.5": dl85["train_pinball"],
    }
    for family, mean in sums.items():
        rows = dl85["objective_family"] == family
        recount = (mean * dl85["n_train"])[rows]
        assert np.allclose(recount, dl85.loc[rows, "objective"], rtol=1e-9)
    assert consistency_violations(frame).empty
    gaps = heuristic_gaps(frame)  # CART's SSE is never below the optimum
    assert (gaps["gap"] >= -1e-9 * gaps["optimum"].abs().clip(lower=1)).all()


def test_dl85_reg_is_never_worse_than_cart_and_agrees_with_streed(smoke):
    config, frame = smoke
    keys = ["dataset", "depth", "fold", "seed"]
    sse = frame.assign(sse=frame["train_mse"] * frame["n_train"])
    table = sse.pivot_table(index=keys, columns="method", values="sse")
    pairs = table[["dl85-reg", "cart-reg"]].dropna()
    assert len(pairs) == 4  # 2 datasets x 2 folds at depth 2
    assert (pairs["dl85-reg"] <= pairs["cart-reg"] * (1 + 1e-9)).all()
    if "pystreed-reg" not in table.columns:
        pytest.skip(f"pystreed-reg not installed: {config.skipped_methods}")
    proven = frame[frame["optimal"]].pivot_table(
        index=keys, columns="method", values="objective"
    )
    both = proven[["dl85-reg", "pystreed-reg"]].dropna()
    assert len(both) > 0
    assert np.allclose(both["dl85-reg"], both["pystreed-reg"], rtol=1e-6)


# ------------------------------------------------------------ user data
def _best_sse(X, y, depth) -> float:
    """Brute force: the least SSE of a tree of depth <= ``depth`` splitting
    the numeric columns of ``X`` at midpoints."""
    best = float(np.sum((y - y.mean()) ** 2)) if len(y) else 0.0
    if depth == 0 or len(y) < 2:
        return best
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for t in (values[1:] + values[:-1]) / 2:
            left = X[:, j] <= t
            sse = _best_sse(X[left], y[left], depth - 1) + _best_sse(
                X[~left], y[~left], depth - 1
            )
            best = min(best, sse)
    return best


def _user_table(folder, target):
    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(40, 2)).astype(float) + 0.5
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["y"] = target(X, rng)
    frame.to_csv(folder / "mine.csv", index=False)
    return frame


REGRESSOR = """
from sklearn.tree import DecisionTreeRegressor


class MyRegressor(DecisionTreeRegressor):
    \"\"\"A user's learner: any scikit-learn regressor.\"\"\"
"""


def test_user_csv_with_a_numeric_target_runs_as_a_regression_study(
    tmp_path, monkeypatch
):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "myreg_mod.py").write_text(REGRESSOR)
    table = _user_table(
        tmp_path, lambda X, rng: 3 * (X[:, 0] > 2) + X[:, 1] + rng.normal(size=40)
    )
    path = _study_file(
        tmp_path,
        """
        [study]
        name = "mine"
        task = "regression"
        datasets = ["mine"]
        methods = ["dl85-reg-numeric", "dl85-reg", "greedy"]
        depths = [2]
        folds = 1
        time_limit = 10

        [datasets.mine]
        path = "mine.csv"
        target = "y"

        [methods.greedy]
        target = "myreg_mod:MyRegressor"
        tasks = ["regression"]
        """,
    )
    config = load_config(path)
    frame = run_study(config, output_dir=tmp_path / "out", quiet=True).load()
    assert (frame["status"] == "ok").all(), frame["error"].tolist()
    assert (frame["task"] == "regression").all()
    assert frame["train_mse"].notna().all() and frame["test_r2"].notna().all()
    X, y = table[["a", "b"]].to_numpy(), table["y"].to_numpy()
    runs = frame.set_index("method")
    numeric = runs.loc["dl85-reg-numeric"]
    assert numeric["optimal"]
    assert numeric["objective"] == pytest.approx(_best_sse(X, y, 2), rel=1e-9)
    assert numeric["train_mse"] * len(y) == pytest.approx(numeric["objective"])
    # a plain regressor's objective is its training SSE, recounted; no proof
    greedy = runs.loc["greedy"]
    assert greedy["objective_family"] == "squared-error"
    assert not greedy["optimal"]
    assert greedy["objective"] == pytest.approx(greedy["train_mse"] * len(y))
    assert greedy["objective"] >= numeric["objective"] * (1 - 1e-9)


def test_user_learner_without_tasks_is_refused_in_a_regression_study(
    tmp_path, monkeypatch
):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "myreg_mod2.py").write_text(REGRESSOR)
    path = _study_file(
        tmp_path,
        """
        [study]
        task = "regression"
        datasets = ["osrt/servo"]
        methods = ["greedy"]

        [methods.greedy]
        target = "myreg_mod2:MyRegressor"
        """,
    )
    with pytest.raises(ValueError, match="supports classification only"):
        load_config(path)
    path.write_text(path.read_text() + 'tasks = ["ranking"]\n')
    with pytest.raises(ValueError, match=r"\[methods.greedy\] tasks: expected"):
        load_config(path)


@pytest.mark.parametrize(
    "task, target, message",
    [
        (
            "regression",
            lambda X, rng: rng.choice(["low", "high"], size=40),
            "holds 'low', not a number: a regression table needs a numeric target",
        ),
        (
            "classification",
            lambda X, rng: rng.normal(size=40),
            "40 distinct non-integer numbers, a regression target",
        ),
    ],
)
def test_user_target_that_does_not_fit_the_task_refused(
    tmp_path, task, target, message
):
    _user_table(tmp_path, target)
    method = "dl85-reg" if task == "regression" else "dl85"
    path = _study_file(
        tmp_path,
        f"""
        [study]
        task = "{task}"
        datasets = ["mine"]
        methods = ["{method}"]

        [datasets.mine]
        path = "mine.csv"
        target = "y"
        """,
    )
    with pytest.raises(ValueError) as info:
        load_config(path)
    assert "[datasets.mine] target" in str(info.value)
    assert message in str(info.value)


# ------------------------------------------------------------ older records
def test_classification_records_without_task_read_as_before(tmp_path):
    # the overview reference records, as written before studies had a task
    records = REFERENCE / "overview" / "results.jsonl"
    header, *lines = records.read_text().splitlines()
    raw = [json.loads(line) for line in lines]
    for record in raw:
        record.pop("task", None)
    text = "\n".join([header, *(json.dumps(record) for record in raw)]) + "\n"
    (tmp_path / "results.jsonl").write_text(text)
    frame = ResultsStore(tmp_path).load()
    assert (frame["task"] == "classification").all()
    assert (with_defaults(frame)["task"] == "classification").all()
    assert frame[REGRESSION_COLUMNS].isna().all().all()
    latest = {record["run_id"]: record for record in raw}
    by_id = frame.set_index("run_id")
    for run_id, record in itertools.islice(latest.items(), 50):
        for column in ("test_acc", "train_acc", "objective"):
            value = by_id.loc[run_id, column]
            if record.get(column) is None:
                assert np.isnan(value)
            else:
                assert value == record[column]
