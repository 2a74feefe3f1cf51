"""DL8ForestClassifier: every variant of Bosch ch. 3, diagnostics, errors."""

import numpy as np
import pytest
from sklearn.base import clone

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.naiveforest import DL8ForestClassifier

SAMPLES = ["random", "all", "progressive"]
ATTRIBUTES = ["all", "progressive", "progressive_random", "random"]


@pytest.fixture(scope="module")
def vote():
    data = load_dataset("vote")
    return data.X, data.y


@pytest.mark.parametrize("samples", SAMPLES)
@pytest.mark.parametrize("attributes", ATTRIBUTES)
def test_every_variant_runs_and_diagnostics_are_sane(vote, samples, attributes):
    X, y = vote
    forest = DL8ForestClassifier(
        n_estimators=4,
        max_depth=2,
        sample_selection=samples,
        attribute_selection=attributes,
        random_state=0,
    ).fit(X, y)
    assert len(forest.estimators_) == 4
    assert all(t.depth <= 2 for t in forest.estimators_)
    assert forest.score(X, y) > 0.85
    assert 0.0 <= forest.unanimity_ <= 1.0
    agreement = forest.agreement_
    assert agreement.shape == (5,)
    assert agreement.sum() == pytest.approx(1.0)
    # with all 4 trees the forest agrees with at least half of them
    assert agreement[:2].sum() == pytest.approx(0.0)
    assert agreement[-1] == pytest.approx(forest.unanimity_)
    usage = forest.feature_usage_
    assert usage["root"].shape == usage["overall"].shape == (X.shape[1],)
    assert usage["root"].sum() == pytest.approx(1.0)  # one root per tree
    assert np.all(usage["overall"] >= usage["root"])
    assert np.all(usage["overall"] <= 1.0)
    assert forest.objective_ == np.sum(forest.predict(X) != y)
    assert not forest.optimal_ and forest.lower_bound_ is None
    assert forest.status_ == "feasible"


def test_all_samples_all_attributes_is_n_copies_of_dl85(vote):
    X, y = vote
    forest = DL8ForestClassifier(
        n_estimators=3, max_depth=2, sample_selection="all", attribute_selection="all"
    ).fit(X, y)
    single = DL85Classifier(max_depth=2).fit(X, y)
    assert forest.unanimity_ == 1.0
    for tree in forest.estimators_:
        assert np.array_equal(tree.predict(X), single.predict(X))


def test_progressive_attributes_remove_each_root(vote):
    X, y = vote
    forest = DL8ForestClassifier(
        n_estimators=4,
        max_depth=2,
        sample_selection="all",
        attribute_selection="progressive",
    ).fit(X, y)
    roots = [int(t.feature[0]) for t in forest.estimators_]
    assert len(set(roots)) == 4
    assert forest.stats_["removed_features"] == roots
    for i, tree in enumerate(forest.estimators_):
        used = set(tree.feature[tree.feature >= 0].tolist())
        assert not used & set(roots[:i])


def test_progressive_random_removes_features_used_by_the_tree(vote):
    X, y = vote
    forest = DL8ForestClassifier(
        n_estimators=5,
        max_depth=3,
        sample_selection="all",
        attribute_selection="progressive_random",
        random_state=1,
    ).fit(X, y)
    removed = forest.stats_["removed_features"]
    assert len(removed) == 5 and len(set(removed)) == 5
    for tree, f in zip(forest.estimators_, removed):
        assert f in tree.feature
    for i, tree in enumerate(forest.estimators_):
        assert not set(tree.feature.tolist()) & set(removed[:i])


def test_random_attributes_use_a_subset(vote):
    X, y = vote
    forest = DL8ForestClassifier(
        n_estimators=3,
        max_depth=2,
        sample_selection="all",
        attribute_selection="random",
        attribute_fraction=0.1,
        random_state=0,
    ).fit(X, y)
    assert forest.unanimity_ < 1.0 or len(forest.estimators_) == 3


def test_predictions_are_the_majority_vote(vote):
    X, y = vote
    labels = np.where(y == 1, "rep", "dem")
    forest = DL8ForestClassifier(n_estimators=5, max_depth=2, random_state=3).fit(
        X, labels
    )
    preds = np.array([t.predict(X) for t in forest.estimators_])
    n_rep = np.sum(preds == "rep", axis=0)
    expected = np.where(n_rep > 5 - n_rep, "rep", "dem")
    assert np.array_equal(forest.predict(X), expected)
    assert np.allclose(forest.predict_proba(X)[:, 1], n_rep / 5)
    assert np.allclose(forest.agreement(X), forest.agreement_)


def test_seed_reproducible_and_parallel_equals_sequential(vote):
    X, y = vote
    a = DL8ForestClassifier(n_estimators=4, max_depth=2, random_state=5).fit(X, y)
    b = DL8ForestClassifier(n_estimators=4, max_depth=2, random_state=5, n_jobs=2).fit(
        X, y
    )
    for ta, tb in zip(a.estimators_, b.estimators_):
        assert ta == tb
    assert clone(a).get_params() == a.get_params()


def test_multiclass_and_time_limit():
    data = load_dataset("zoo-1")
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=len(data.y))
    forest = DL8ForestClassifier(
        n_estimators=3, max_depth=2, time_limit=30, random_state=0
    ).fit(data.X, y)
    assert set(forest.predict(data.X)) <= {0, 1, 2}
    assert forest.fit_time_ < 30


@pytest.mark.parametrize(
    ("params", "X", "y", "match"),
    [
        ({}, [[0, 1], [1, np.nan]], [0, 1], "NaN"),
        ({}, [[0, 1], [1, 0]], [1, 1], "one class"),
        ({}, [[0, 0.5], [1, 0]], [0, 1], "Binarizer"),
        ({"sample_selection": "bagging"}, [[0, 1], [1, 0]], [0, 1], "sample_selection"),
        (
            {"attribute_selection": "best"},
            [[0, 1], [1, 0]],
            [0, 1],
            "attribute_selection",
        ),
        ({"sample_fraction": 0.0}, [[0, 1], [1, 0]], [0, 1], "sample_fraction"),
        ({"n_estimators": 0}, [[0, 1], [1, 0]], [0, 1], "n_estimators"),
    ],
)
def test_bad_input_is_rejected(params, X, y, match):
    with pytest.raises(ValueError, match=match):
        DL8ForestClassifier(**params).fit(np.array(X, dtype=float), y)
