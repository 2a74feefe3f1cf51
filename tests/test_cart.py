import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from odtstudy.cart import CARTClassifier
from odtstudy.datasets import load_dataset


def test_matches_sklearn_and_reports_misclassifications():
    ds = load_dataset("sklearn/wine")
    ours = CARTClassifier(max_depth=3, random_state=0).fit(ds.X, ds.y)
    theirs = DecisionTreeClassifier(max_depth=3, random_state=0).fit(ds.X, ds.y)
    assert (ours.predict(ds.X) == theirs.predict(ds.X)).all()
    assert ours.objective_ == np.sum(theirs.predict(ds.X) != ds.y)
    assert ours.lower_bound_ is None and ours.optimal_ is False
    assert ours.fit_time_ > 0 and ours.stats_["n_leaves"] == ours.tree_.n_leaves
    assert ours.tree_.value[0].sum() == len(ds.y)


def test_string_and_non_contiguous_labels():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    for y in (np.array(["no", "no", "yes", "yes"]), np.array([10, 10, -3, -3])):
        clf = CARTClassifier(max_depth=1).fit(X, y)
        assert clf.predict(X).tolist() == y.tolist()
        assert clf.objective_ == 0


def test_sample_weight_gives_weighted_objective():
    X = np.array([[0.0], [1.0], [2.0]])
    y = np.array([0, 1, 0])
    clf = CARTClassifier(max_depth=1).fit(X, y, sample_weight=[1.0, 5.0, 1.0])
    assert clf.objective_ == pytest.approx(1.0)


@pytest.mark.parametrize(
    "X, y, message",
    [
        ([[1.0], [np.nan]], [0, 1], "NaN"),
        ([[1.0], [2.0]], [0, 0], "one class"),
        ([[1.0], [2.0], [3.0]], [0, 1], "different lengths"),
        ([["a"], ["b"]], [0, 1], "numeric"),
        (np.array([[1.0, 2.0], [3.0]], dtype=object), [0, 1], "ragged|sequence"),
    ],
)
def test_bad_input_errors_name_the_problem(X, y, message):
    with pytest.raises(ValueError, match=message):
        CARTClassifier(max_depth=2).fit(X, y)


def test_bad_depth():
    with pytest.raises(ValueError, match="max_depth"):
        CARTClassifier(max_depth=0).fit([[0.0], [1.0]], [0, 1])
