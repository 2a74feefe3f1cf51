"""STreeD's cost-sensitive classifier against DL8.5's cost matrix: the same
problem, the same proven cost, one objective family.

Skips when ``pystreed`` is not installed (``pip install "odtstudy[external]"``).
"""

import numpy as np
import pytest

from odtstudy._cost_matrix import cost_family, summed_cost
from odtstudy.dl85 import DL85Classifier
from odtstudy.external import STreeDCostClassifier
from odtstudy.study import get_method

ASYMMETRIC = {
    2: [[0, 5], [1, 0]],
    3: [[0, 4, 1], [2, 0, 7], [3, 1, 0]],
}


def _random(seed, n_classes):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(30, 71)), int(rng.integers(4, 8))
    X = rng.integers(0, 2, size=(n, m))
    # classes leaning on the first feature, so that splits pay
    y = (rng.integers(0, n_classes, size=n) + X[:, 0]) % n_classes
    return X, y, int(rng.integers(1, 4))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_same_proven_cost_as_dl85(seed, n_classes):
    pytest.importorskip("pystreed")
    X, y, depth = _random(seed, n_classes)
    cost = ASYMMETRIC[n_classes]
    reference = DL85Classifier(max_depth=depth, cost_matrix=cost).fit(X, y)
    clf = STreeDCostClassifier(max_depth=depth, cost_matrix=cost, time_limit=30)
    clf.fit(X, y)
    assert reference.optimal_ and clf.optimal_
    assert clf.objective_ == reference.objective_
    assert clf.objective_ == summed_cost(np.array(cost), clf.predict(X), y)
    assert clf.lower_bound_ == clf.objective_
    assert (
        clf.objective_family_
        == cost_family(cost)
        == "cost@" + ";".join(",".join(str(v) for v in row) for row in cost)
    )


def test_the_matrix_is_not_read_transposed():
    """With C[predicted, true] = [[0, 5], [1, 0]], a leaf of 10 rows of class
    1 and 3 of class 0 predicts 1 (cost 3), never 0 (cost 50): a transposed
    matrix would cost 15 against 10."""
    pytest.importorskip("pystreed")
    X = np.zeros((13, 2), dtype=int)
    y = np.array([1] * 10 + [0] * 3)
    clf = STreeDCostClassifier(max_depth=1, cost_matrix=[[0, 5], [1, 0]]).fit(X, y)
    assert clf.objective_ == 3.0
    assert clf.predict(X[:1]).tolist() == [1]


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ([[0, 1, 1], [1, 0, 1], [1, 1, 0]], "shape (3, 3)"),
        ([[0, -1], [1, 0]], "negative"),
        ([[0, np.inf], [1, 0]], "NaN or infinity"),
    ],
)
def test_a_bad_matrix_is_named_before_the_solver_runs(bad, fragment):
    X = np.array([[0, 1], [1, 0]] * 4)
    with pytest.raises(ValueError, match="cost_matrix") as info:
        STreeDCostClassifier(max_depth=1, cost_matrix=bad).fit(X, X[:, 0])
    assert fragment in str(info.value)


def test_a_claim_a_single_leaf_beats_is_refuted():
    clf = STreeDCostClassifier(max_depth=2, cost_matrix=[[0, 5], [1, 0]])
    clf.classes_ = np.array([0, 1])
    X = np.zeros((4, 1), dtype=int)
    y = np.array([1, 1, 1, 0])
    # a leaf predicting 1 costs 1 (the one row of class 0)
    assert clf._refuted_claim(1.0, X, y, None, 1) == ""
    assert "a single leaf costs 1" in clf._refuted_claim(2.0, X, y, None, 1)


def test_dl85_and_the_adapter_share_the_cost_family():
    params = {"cost_matrix": [[0, 5], [1, 0]]}
    dl85 = get_method("dl85")
    assert DL85Classifier.objective_family(params) == "cost@0,5;1,0"
    assert STreeDCostClassifier.objective_family(params) == "cost@0,5;1,0"
    assert get_method("pystreed-cost").objective_family(params) == "cost@0,5;1,0"
    assert dl85.objective_family(params) == "cost@0,5;1,0"
    assert get_method("pystreed-cost").objective_family() == "misclassification"
    assert DL85Classifier.objective_family({"fast_error_function": len}) == "custom"


def test_with_unit_costs_the_classifiers_depth_one_check_refutes():
    clf = STreeDCostClassifier(max_depth=2)
    clf.classes_ = np.array([0, 1])
    clf.objective_family_ = "misclassification"
    X = np.array([[0], [0], [1], [1], [1]])
    y = np.array([0, 0, 1, 1, 0])  # one split errs once, a leaf twice
    assert clf._refuted_claim(1.0, X, y, None, 1) == ""
    assert "a tree of depth 1 makes 1" in clf._refuted_claim(2.0, X, y, None, 1)
