"""Adapters of published solvers: the common contract, time limits, and the
same proven objective as odtstudy's DL8.5.

Each adapter's tests skip when its solver's package is not installed
(``pip install "odtstudy[external]"``).
"""

import importlib
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.validation import has_fit_parameter

from odtstudy.datasets import Binarizer, load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.external import (
    ConTreeClassifier,
    GOSDTClassifier,
    LicketySplitClassifier,
    PyDL85Classifier,
    STreeDClassifier,
    STreeDCostClassifier,
)
from odtstudy.study import get_method
from odtstudy.tree import Tree

# STreeDCostClassifier without a cost matrix: unit costs, the misclassification
BINARY = [
    STreeDClassifier,
    STreeDCostClassifier,
    PyDL85Classifier,
    GOSDTClassifier,
    LicketySplitClassifier,
]
EXACT_BINARY = [
    STreeDClassifier,
    STreeDCostClassifier,
    PyDL85Classifier,
    GOSDTClassifier,
]
ALL = [*BINARY, ConTreeClassifier]
LIMIT = 2.0


def _needs(cls):
    pytest.importorskip(cls._module)
    return cls


def _random_binary(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(30, 61)), int(rng.integers(5, 9))
    X = rng.integers(0, 2, size=(n, m))
    y = rng.integers(0, 2, size=n)
    return X, y, int(rng.integers(2, 4))


def _random_numeric(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(30, 61))
    X = rng.normal(size=(n, 3)).round(1)
    y = rng.integers(0, 2, size=n)
    return X, y, int(rng.integers(2, 4))


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_fit_predict_export(cls):
    _needs(cls)
    X, y, _ = _random_binary(0)
    labels = np.array(["no", "yes"])[y]
    clf = cls(max_depth=2, time_limit=20).fit(X, labels)
    assert isinstance(clf.tree_, Tree) and clf.tree_.depth <= 2
    assert set(clf.predict(X)) <= {"no", "yes"}
    assert clf.objective_ == clf.training_error(X, labels)
    assert clf.predict_proba(X).shape == (len(y), 2)
    assert "class:" in clf.tree_.export_text()
    assert clf.tree_.export_graphviz().startswith("digraph")
    assert Tree.from_dict(clf.tree_.to_dict()) == clf.tree_
    assert clf.stats_["tool"] == cls._tool and clf.fit_time_ > 0
    assert clf.objective_family_ == "misclassification"
    assert clone(clf).get_params() == clf.get_params()
    if cls._exact:
        assert clf.optimal_ and clf.status_ == "optimal"
        assert clf.lower_bound_ == clf.objective_
    else:
        assert not clf.optimal_ and clf.lower_bound_ is None


@pytest.mark.parametrize("cls", BINARY, ids=lambda c: c.__name__)
def test_sample_weight_refused_unless_supported(cls):
    _needs(cls)
    X, y, _ = _random_binary(1)
    with pytest.raises(ValueError, match="sample_weight"):
        cls(max_depth=2).fit(X, y, sample_weight=np.ones(len(y)))


def test_contree_fit_takes_no_sample_weight():
    """ConTree has no row weights: its ``fit`` does not take them, so
    scikit-learn's ``has_fit_parameter`` tells meta-estimators (as BinOCT's
    and OCT's)."""
    assert not has_fit_parameter(ConTreeClassifier(), "sample_weight")
    _needs(ConTreeClassifier)
    X, y, _ = _random_binary(1)
    with pytest.raises(TypeError, match="sample_weight"):
        ConTreeClassifier(max_depth=2).fit(X, y, sample_weight=np.ones(len(y)))


@pytest.mark.ci_slow
@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_honours_a_two_second_limit_on_a_hard_instance(cls):
    _needs(cls)
    if cls is ConTreeClassifier:
        data, depth = load_dataset("uci/spambase"), 4
    else:
        data, depth = load_dataset("splice-1"), 6
    clf = cls(max_depth=depth, time_limit=LIMIT).fit(data.X, data.y)
    assert clf.fit_time_ <= LIMIT * 1.1 + 1
    assert clf.tree_ is not None and clf.predict(data.X[:5]).shape == (5,)
    if clf.status_ == "timeout":
        assert not clf.optimal_


@pytest.mark.parametrize("seed", range(12))
def test_same_proven_objective_as_dl85(seed):
    X, y, depth = _random_binary(seed)
    reference = DL85Classifier(max_depth=depth).fit(X, y)
    assert reference.optimal_
    for cls in EXACT_BINARY:
        if importlib.util.find_spec(cls._module) is None:
            continue
        clf = cls(max_depth=depth, time_limit=30).fit(X, y)
        assert clf.optimal_, cls.__name__
        assert clf.objective_ == reference.objective_, cls.__name__
        assert clf.lower_bound_ == reference.objective_, cls.__name__


@pytest.mark.parametrize("seed", range(12))
def test_contree_equals_dl85_on_every_midpoint(seed):
    _needs(ConTreeClassifier)
    X, y, depth = _random_numeric(seed)
    Xb = Binarizer(max_thresholds=None).fit_transform(X)
    reference = DL85Classifier(max_depth=depth).fit(Xb, y)
    clf = ConTreeClassifier(max_depth=depth, time_limit=30).fit(X, y)
    assert clf.optimal_ and clf.objective_ == reference.objective_


@pytest.mark.parametrize("seed", range(8))
def test_contree_sees_values_that_merge_in_float32(seed):
    # values 2**24 + k, or Unix timestamps seconds apart: distinct in float64,
    # merged in ConTree's float32 unless the adapter passes ranks
    _needs(ConTreeClassifier)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 30))
    base = 2.0**24 if seed % 2 else 1.7e9
    X = base + rng.integers(0, 5, size=(n, 2)).astype(float) * (1 + seed % 3)
    y = rng.integers(0, 2, size=n)
    y[0], y[-1] = 0, 1
    depth = 1 + seed % 2
    expected = DL85Classifier(max_depth=depth, thresholds="all").fit(X, y)
    clf = ConTreeClassifier(max_depth=depth, time_limit=30).fit(X, y)
    assert clf.optimal_ and clf.objective_ == expected.objective_
    assert int(np.sum(clf.predict(X) != y)) == clf.objective_


def test_contree_splits_two_adjacent_float32_collisions():
    _needs(ConTreeClassifier)
    X = np.array([[16777216.0], [16777217.0]] * 2)
    clf = ConTreeClassifier(max_depth=1).fit(X, [0, 1, 0, 1])
    assert clf.objective_ == 0 and clf.optimal_
    assert 16777216.0 <= clf.tree_.threshold[0] < 16777217.0


@pytest.mark.parametrize("seed", range(40))
def test_pydl85_never_certifies_a_worse_tree(seed):
    # tiny inputs and depths above the number of features, where PyDL8.5
    # 0.1.8 returns worse trees and calls them optimal
    _needs(PyDL85Classifier)
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 9)), int(rng.integers(1, 4))
    X = rng.integers(0, 2, size=(n, m))
    y = rng.integers(0, 2, size=n)
    y[0], y[-1] = 0, 1
    depth = int(rng.integers(1, 5))
    best = DL85Classifier(max_depth=depth).fit(X, y).objective_
    clf = PyDL85Classifier(max_depth=depth).fit(X, y)
    assert clf.objective_ >= best
    if clf.optimal_:
        assert clf.objective_ == best
    else:
        assert "claim_refuted" in clf.stats_


def test_pydl85_known_false_optima_are_fixed_or_refuted():
    _needs(PyDL85Classifier)
    X = np.array([[1, 1], [0, 1], [0, 0], [1, 0], [1, 0], [1, 0]])
    deep = PyDL85Classifier(max_depth=3).fit(X, [0, 1, 0, 1, 1, 0])
    assert deep.optimal_ and deep.objective_ == 1 and deep.stats_["solved_depth"] == 2
    two = PyDL85Classifier(max_depth=2).fit(np.array([[1, 0], [0, 1]]), [0, 1])
    assert two.objective_ == 0 or (not two.optimal_ and two.status_ == "feasible")


def test_pydl85_holds_a_limit_under_one_second():
    _needs(PyDL85Classifier)
    data = load_dataset("german-credit")
    clf = PyDL85Classifier(max_depth=5, time_limit=0.3).fit(data.X, data.y)
    assert clf.fit_time_ <= 0.3 * 1.1 + 1
    assert clf.status_ == "timeout" and not clf.optimal_


def test_streed_min_samples_leaf_above_the_rows_is_infeasible_not_a_timeout():
    _needs(STreeDClassifier)
    X = np.random.default_rng(0).integers(0, 2, size=(10, 3))
    y = np.arange(10) % 2
    clf = STreeDClassifier(max_depth=2, min_samples_leaf=11).fit(X, y)
    assert clf.status_ == "infeasible" and not clf.optimal_ and clf.tree_ is None
    with pytest.raises(ValueError, match="min_samples_leaf=11 exceeds"):
        clf.predict(X)
    # one row fewer than the bound is feasible: a single leaf
    assert STreeDClassifier(max_depth=2, min_samples_leaf=10).fit(X, y).optimal_


def test_licketysplit_never_beats_dl85():
    _needs(LicketySplitClassifier)
    for seed in range(4):
        X, y, depth = _random_binary(seed)
        best = DL85Classifier(max_depth=depth).fit(X, y).objective_
        assert LicketySplitClassifier(max_depth=depth).fit(X, y).objective_ >= best


@pytest.mark.parametrize("lookahead", [0, 128])
def test_licketysplit_lookahead_outside_the_solvers_range_is_refused(lookahead):
    # the solver stores it in an int8 and refuses 0 from inside its own code
    X, y, depth = _random_binary(0)
    with pytest.raises(ValueError, match=r"'lookahead'.*\[1, 127\]"):
        LicketySplitClassifier(max_depth=depth, lookahead=lookahead).fit(X, y)


@pytest.mark.parametrize("regularization", [1.0, 0.999, 0.5])
def test_gosdt_penalty_no_split_can_pay_is_refused(regularization):
    # GOSDT aborts with "false convergence" when no split can pay for a leaf
    X, y, depth = _random_binary(0)
    rate = 1 - np.bincount(y).max() / len(y)
    assert regularization >= rate
    with pytest.raises(ValueError, match=f"regularization={regularization} is at"):
        GOSDTClassifier(max_depth=depth, regularization=regularization).fit(X, y)


def test_gosdt_abort_names_the_regularization():
    _needs(GOSDTClassifier)
    rng = np.random.RandomState(1)
    X, y = rng.randint(0, 2, (60, 4)), rng.randint(0, 3, 60)
    with pytest.raises(RuntimeError, match=r"regularization=0\.45.*smaller"):
        GOSDTClassifier(max_depth=3, regularization=0.45).fit(X, y)


def test_gosdt_with_a_large_penalty_is_another_family():
    _needs(GOSDTClassifier)
    X, y, depth = _random_binary(3)
    clf = GOSDTClassifier(max_depth=depth, regularization=0.1).fit(X, y)
    assert clf.objective_family_ == "misclassification+leaf-penalty"
    errors = clf.training_error(X, y)
    assert clf.objective_ == pytest.approx(errors + 0.1 * len(y) * clf.tree_.n_leaves)
    assert GOSDTClassifier.objective_family({"regularization": 0.1}) == (
        "misclassification+leaf-penalty"
    )


@pytest.mark.parametrize(
    "name, cls",
    [
        ("pystreed", STreeDClassifier),
        ("pystreed-cost", STreeDCostClassifier),
        ("pydl85", PyDL85Classifier),
        ("gosdt", GOSDTClassifier),
        ("pycontree", ConTreeClassifier),
        ("licketysplit", LicketySplitClassifier),
    ],
)
def test_registered_with_what_the_class_declares(name, cls):
    method = get_method(name)
    assert method.exact == cls._exact
    assert method.data == ("binary" if cls._requires_binary else "numeric")
    assert method.objective_family() == "misclassification"
    assert method.tool() == cls._tool
    assert method.available() == cls.installed()


def test_gosdt_survives_a_process_that_imported_pulp():
    pytest.importorskip("gosdt")
    code = (
        "import pulp, numpy as np\n"
        "from odtstudy.external import GOSDTClassifier\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.integers(0, 2, (40, 5)); y = rng.integers(0, 2, 40)\n"
        "clf = GOSDTClassifier(max_depth=2, time_limit=20).fit(X, y)\n"
        "print(clf.objective_, clf.optimal_)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[1] == "True"
