"""Tuning by inner cross-validation: the grid, the choice, the config's
checks and a tuned learner run by the study runner."""

import json
import textwrap

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier
from study_doubles import unit_config  # also registers test-sleepy

from odtstudy.cart import CARTClassifier
from odtstudy.study import (
    MethodSpec,
    expand_runs,
    load_config,
    make_report,
    run_study,
)
from odtstudy.study._tuning import candidates, inner_splits, select


def test_candidates_go_simplest_first_and_never_above_the_run_depth():
    tune = {"max_depth": "up-to-depth", "ccp_alpha": [0.0, 0.1], "folds": 4}
    grid = candidates(tune, 3)
    assert [c["max_depth"] for c in grid] == [1, 1, 2, 2, 3, 3]
    assert [c["ccp_alpha"] for c in grid] == [0.0, 0.1] * 3
    assert candidates({"max_depth": [2, 5, 1]}, 3) == [
        {"max_depth": 1},
        {"max_depth": 2},
    ]
    # without a depth grid every candidate has the run's depth
    assert candidates({"ccp_alpha": [0.0]}, 4) == [{"max_depth": 4, "ccp_alpha": 0.0}]


def _data(seed, n=90):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = ((X[:, 0] > 0) ^ (X[:, 1] > 0.5 * X[:, 2])).astype(int)
    flip = rng.random(n) < 0.15
    return X, np.where(flip, 1 - y, y)


@pytest.mark.parametrize("seed", range(4))
def test_the_choice_is_the_best_mean_inner_accuracy_simplest_on_ties(seed):
    X, y = _data(seed)
    tune = {"max_depth": "up-to-depth", "ccp_alpha": [0.0, 0.02], "folds": 3}

    def make(max_depth, ccp_alpha):
        return CARTClassifier(max_depth=max_depth, ccp_alpha=ccp_alpha, random_state=0)

    best, record = select(make, X, y, tune, 3, seed, "classification")
    # the same choice recomputed with scikit-learn's own tree
    scores = []
    for cand in candidates(tune, 3):
        accs = [
            np.mean(
                DecisionTreeClassifier(random_state=0, **cand)
                .fit(X[tr], y[tr])
                .predict(X[te])
                == y[te]
            )
            for tr, te in inner_splits(y, 3, seed, "classification")
        ]
        scores.append((cand, np.mean(accs)))
    top = max(s for _, s in scores)
    assert best == next(c for c, s in scores if s == top)
    assert record["tuned"] == best and record["tune_fits"] == 6 * 3
    assert [s["score"] for s in record["tune_scores"]] == pytest.approx(
        [s for _, s in scores], abs=1e-6
    )


def test_a_tie_goes_to_the_smallest_depth():
    X = np.array([[0.0], [1.0]] * 20)
    y = X[:, 0].astype(int)  # one split is perfect: every depth ties at 1.0
    best, _ = select(
        lambda max_depth: CARTClassifier(max_depth=max_depth),
        X, y, {"max_depth": "up-to-depth"}, 4, 0, "classification",
    )  # fmt: skip
    assert best == {"max_depth": 1}


def _study(tmp_path, tune):
    path = tmp_path / "study.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            [study]
            name = "tuned"
            datasets = ["zoo-1"]
            methods = ["cart-tuned"]
            depths = [3]
            folds = 2

            [methods.cart-tuned]
            method = "cart"
            tune = {tune}
            """
        )
    )
    return path


@pytest.mark.parametrize(
    "tune, fragment",
    [
        ("{max_depth = 'up-to-depth', alpha = [0.1]}", "tune alpha: not a parameter"),
        ("{max_depth = 'deep'}", 'tune max_depth: expected "up-to-depth"'),
        ("{max_depth = 'up-to-depth', folds = 1}", "tune folds: expected an integer"),
        ("{ccp_alpha = []}", "tune ccp_alpha: expected a non-empty list"),
        ("{random_state = [0, 1]}", "tune random_state: is set by the runner"),
        ("{folds = 3}", "names no parameter to tune"),
        ("[1, 2]", "expected a table of parameter grids"),
    ],
)
def test_a_bad_tune_table_is_named_with_its_fix(tmp_path, tune, fragment):
    with pytest.raises(ValueError, match="cart-tuned") as info:
        load_config(_study(tmp_path, tune))
    assert fragment in str(info.value)


def test_a_tuned_learner_is_its_own_protocol(tmp_path):
    tuned = load_config(_study(tmp_path, "{max_depth = 'up-to-depth'}"))
    runs = expand_runs(tuned)
    assert runs[0]["tune"] == {"max_depth": "up-to-depth"}
    assert runs[0]["protocol"]["methods"]["cart-tuned"]["tune"] == runs[0]["tune"]
    other = load_config(_study(tmp_path, "{max_depth = [1, 2]}"))
    assert expand_runs(other)[0]["protocol_id"] != runs[0]["protocol_id"]


def test_a_tuned_run_records_its_choice_and_each_inner_fit_gets_its_time(tmp_path):
    """12 inner fits of 0.4 s each take longer than one fit's deadline (time
    limit 0.5 s: 1.55 s allowed + 2 x 1.5 s grace): the run ends only if
    every inner fit moves the deadline."""
    spec = MethodSpec(
        "sleepy-tuned",
        "test-sleepy",
        tune={"max_depth": "up-to-depth", "ccp_alpha": [0.0, 0.05], "folds": 3},
    )
    config = unit_config([], datasets=["zoo-1"], depths=[2], folds=2, seeds=[0])
    config.methods = [spec]
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == 2
    assert (frame["status"] == "ok").all(), frame["error"].tolist()
    for text in frame["stats"]:
        stats = json.loads(text)
        assert stats["tuned"]["max_depth"] in (1, 2)
        assert stats["tune_fits"] == 4 * 3 and stats["tuning_time_s"] >= 12 * 0.4
        assert len(stats["tune_scores"]) == 4


def test_the_report_says_how_a_learner_was_tuned(tmp_path):
    spec = MethodSpec(
        "cart-tuned", "cart", tune={"max_depth": "up-to-depth", "ccp_alpha": [0.0]}
    )
    config = unit_config([], datasets=["zoo-1"], depths=[2], folds=2, seeds=[0])
    config.methods = [spec, MethodSpec("cart", "cart")]
    run_study(config, output_dir=tmp_path, quiet=True)
    make_report(tmp_path / "unit")
    text = (tmp_path / "unit" / "report.md").read_text()
    assert (
        "| cart-tuned | cart | no | 0.5 | defaults; tuned by 3-fold inner "
        "cross-validation on each training fold: max_depth from 1 to the depth, "
        "ccp_alpha in {0.0} |" in text
    )
