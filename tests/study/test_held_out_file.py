"""A user table with a held-out test file (``test_path``): fitted on every
row of the training file, scored on the test file's rows, checked when the
study loads, hashed into the protocol and reported as held out."""

import json
import textwrap

import numpy as np
import pandas as pd
import pytest

from odtstudy.cart import CARTClassifier
from odtstudy.datasets import Binarizer, _user, load_dataset
from odtstudy.study import expand_runs, load_config, make_report, run_study
from odtstudy.study._tuning import select
from odtstudy.study.registry import get_method

FEATURES = ["a", "b", "c"]
TUNE = {"max_depth": "up-to-depth"}
TUNED = """
[methods.cart-t]
method = "cart"

[methods.cart-t.tune]
max_depth = "up-to-depth"
"""


@pytest.fixture(autouse=True)
def _isolated_user_tables(monkeypatch):
    """User tables registered by a test stay in that test."""
    monkeypatch.setattr(_user, "_USER", {})


def _table(rows, seed):
    """Numeric features and a noisy yes/no label of a threshold rule."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(rows, 3)).round(2), columns=FEATURES)
    label = (frame["a"] + 0.5 * frame["b"] > 0) ^ (rng.random(rows) < 0.15)
    frame["label"] = np.where(label, "yes", "no")
    return frame


def _study(tmp_path, datasets='["credit"]', folds=2, methods='["cart", "dl85"]'):
    _table(80, 0).to_csv(tmp_path / "credit-train.csv", index=False)
    _table(40, 1).to_csv(tmp_path / "credit-test.csv", index=False)
    toml = tmp_path / "held.toml"
    toml.write_text(
        textwrap.dedent(
            f"""
            [study]
            name = "held"
            datasets = {datasets}
            methods = {methods}
            depths = [2]
            folds = {folds}
            seeds = [0]
            time_limit = 5
            workers = 1

            [datasets.credit]
            path = "credit-train.csv"
            test_path = "credit-test.csv"
            target = "label"
            """
        )
        + (TUNED if "cart-t" in methods else "")
    )
    return toml


def _run(tmp_path, toml=None, **study):
    config = load_config(str(toml or _study(tmp_path, **study)))
    store = run_study(config, output_dir=tmp_path / "out", quiet=True)
    make_report(tmp_path / "out" / "held")
    report = (tmp_path / "out" / "held" / "report.md").read_text()
    return store.load(), report


def _split(tmp_path):
    train = pd.read_csv(tmp_path / "credit-train.csv")
    test = pd.read_csv(tmp_path / "credit-test.csv")
    return train[FEATURES], train["label"].to_numpy(), test[FEATURES], test["label"]


def _accuracy(estimator, X_train, y_train, X_test, y_test) -> float:
    estimator.fit(X_train, y_train)
    predicted = estimator.predict(np.asarray(X_test))
    return float(np.mean(predicted == y_test.to_numpy()))


def _make(name, depth=2):
    return get_method(name).make(max_depth=depth, time_limit=5, random_state=0)


def test_runs_fit_the_training_file_and_score_the_test_file(tmp_path):
    frame, _ = _run(tmp_path, methods='["cart", "dl85", "cart-t"]')
    assert (frame["status"] == "ok").all(), frame["error"].tolist()
    assert len(frame) == 3  # one run per method: no folds
    assert (frame["n_folds"] == 1).all() and (frame["split"] == "test-file").all()
    assert (frame["n_train"] == 80).all() and (frame["n_test"] == 40).all()
    X_train, y_train, X_test, y_test = _split(tmp_path)
    acc = frame.set_index("method")["test_acc"]
    cart = _accuracy(_make("cart"), X_train.to_numpy(), y_train, X_test, y_test)
    assert acc["cart"] == cart
    binarizer = Binarizer(max_thresholds=8).fit(X_train.astype(float))
    binary_train = binarizer.transform(X_train.astype(float))
    binary_test = binarizer.transform(X_test.astype(float))
    dl85 = _accuracy(_make("dl85"), binary_train, y_train, binary_test, y_test)
    assert acc["dl85"] == dl85


def test_a_tuned_method_tunes_on_the_training_file_only(tmp_path):
    frame, _ = _run(tmp_path, methods='["cart-t"]')
    (stats,) = [json.loads(text) for text in frame["stats"]]
    X_train, y_train, X_test, y_test = _split(tmp_path)

    def make(max_depth):
        return CARTClassifier(max_depth=max_depth, time_limit=5, random_state=0)

    best, expected = select(
        make, X_train.to_numpy(), y_train, TUNE, 2, 0, "classification"
    )
    # inner scores of the training rows alone: a test row in an inner fold
    # would change them
    assert stats["tune_scores"] == expected["tune_scores"]
    assert stats["tuned"] == best
    tuned = _accuracy(make(**best), X_train.to_numpy(), y_train, X_test, y_test)
    assert frame["test_acc"].iloc[0] == tuned


def test_the_report_names_the_test_file_and_never_says_all_rows(tmp_path):
    frame, report = _run(tmp_path, datasets='["credit", "vote"]')
    assert set(frame.loc[frame["dataset"] == "vote", "split"]) == {"cross-validation"}
    assert "fitted on all rows" not in report
    assert "## Test accuracy per depth" in report
    assert (
        "credit: fitted on the 80 rows of credit-train.csv, tested on the 40 "
        "rows of credit-test.csv" in report
    )
    # credit's cells expect one run (one seed), vote's two (2 folds)
    assert "| credit | 2 | cart | 1/1 | yes |" in report
    assert "| vote | 2 | cart | 2/2 | yes |" in report
    assert "its cells expect one run per seed" in report


def test_all_row_fits_beside_a_test_file_say_which_is_which(tmp_path):
    _, report = _run(tmp_path, datasets='["credit", "vote"]', folds=1)
    assert "## Training accuracy per depth (fitted on all rows)" not in report
    assert (
        "## Accuracy per depth (training accuracy, fitted on all rows; test "
        "accuracy for credit, on the held-out test file)" in report
    )
    assert (
        "fitted on all rows (test accuracy = training accuracy) for the datasets "
        "without a test file" in report
    )
    assert "Held-out test files, no folds: credit: fitted on the 80 rows" in report


def _rewrite(path, edit):
    frame = pd.read_csv(path)
    edit(frame).to_csv(path, index=False)


def _set(column, row, value):
    def edit(frame):
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
        return frame

    return edit


@pytest.mark.parametrize(
    "edit, fragments",
    [
        (None, ["nope.csv does not exist", "fix the path"]),
        (lambda f: f.drop(columns=["c"]), ["missing 'c'", "same header"]),
        (lambda f: f.assign(d=1.0), ["extra 'd'", "same header"]),
        (lambda f: f.drop(columns=["label"]), ["no target column 'label'"]),
        (lambda f: f.iloc[:0], ["no rows", "drop test_path"]),
        (_set("label", 3, "maybe"), ["'maybe'", "drop those rows"]),
        (_set("a", 5, "abc"), ["column 'a' holds 'abc'", "categorical = ['a']"]),
        (_set("b", 2, None), ["column 'b' has missing values", "impute"]),
    ],
)
def test_a_bad_test_file_fails_at_load_naming_the_key_and_the_fix(
    tmp_path, edit, fragments
):
    toml = _study(tmp_path)
    if edit is None:
        toml.write_text(toml.read_text().replace("credit-test.csv", "nope.csv"))
    else:
        _rewrite(tmp_path / "credit-test.csv", edit)
    with pytest.raises(ValueError) as error:
        load_config(str(toml))
    message = str(error.value)
    assert "[datasets.credit] test_path: test file" in message
    for fragment in fragments:
        assert fragment in message


def test_an_unreadable_test_file_is_named(tmp_path):
    toml = _study(tmp_path)
    (tmp_path / "credit-test.csv").write_text('a,b,c,label\n"1,2,3,yes\n')
    with pytest.raises(ValueError, match=r"test_path: test file .*cannot read"):
        load_config(str(toml))


def test_a_category_seen_only_in_the_test_file_is_encoded_as_unseen(tmp_path):
    toml = _study(tmp_path)
    for name, colours in (
        ("credit-train", ["red", "blue"]),
        ("credit-test", ["green"]),
    ):
        path = tmp_path / f"{name}.csv"
        _rewrite(path, lambda f, c=colours: f.assign(colour=np.resize(c, len(f))))
    config = load_config(str(toml))
    frame = run_study(config, output_dir=tmp_path / "out", quiet=True).load()
    assert (frame["status"] == "ok").all(), frame["error"].tolist()
    assert (frame["n_test"] == 40).all()
    assert load_dataset("credit", test_file=True).n_train == 80


def _flip_labels(frame):
    return frame.assign(label=np.where(frame["label"] == "yes", "no", "yes"))


def test_a_changed_test_file_is_another_protocol(tmp_path):
    toml = _study(tmp_path)
    before = expand_runs(load_config(str(toml)))[0]
    assert "credit-test.csv (sha256 " in before["protocol"]["user_datasets"]["credit"]
    _rewrite(tmp_path / "credit-test.csv", _flip_labels)
    after = expand_runs(load_config(str(toml)))[0]
    assert after["protocol_id"] != before["protocol_id"]
    assert after["run_id"] != before["run_id"]  # a resumed study runs it again


def test_a_regression_table_reports_test_mse_on_its_test_file(tmp_path):
    toml = _study(tmp_path, methods='["cart-reg"]')
    for path in (tmp_path / "credit-train.csv", tmp_path / "credit-test.csv"):
        _rewrite(path, lambda f: f.assign(label=2 * f["a"] - f["c"]))
    regression = 'name = "held"\ntask = "regression"'
    toml.write_text(toml.read_text().replace('name = "held"', regression))
    frame, report = _run(tmp_path, toml)
    train = pd.read_csv(tmp_path / "credit-train.csv")
    test = pd.read_csv(tmp_path / "credit-test.csv")
    regressor = _make("cart-reg").fit(train[FEATURES].to_numpy(), train["label"])
    error = test["label"] - regressor.predict(test[FEATURES].to_numpy())
    assert frame["test_mse"].iloc[0] == pytest.approx(float(np.mean(error**2)))
    assert "## Test MSE per depth" in report and "fitted on all rows" not in report
    assert "credit: fitted on the 80 rows of credit-train.csv" in report
