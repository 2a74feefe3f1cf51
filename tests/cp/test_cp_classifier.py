"""Tests of the exact CP-SAT learner against the oracles of methods.md §3."""

import time

import bruteforce
import numpy as np
import pytest
from ortools.sat.python import cp_model
from sklearn.base import clone

from odtstudy.cart import CARTClassifier
from odtstudy.cp import CPSATClassifier
from odtstudy.cp._model import (
    add_hint,
    build_model,
    complete_hint,
    hint_values,
    integer_weights,
    make_instance,
)

# T11 (thesis Table 4.1): features A, B, C -> class
T11_X = np.array(
    [
        [0, 1, 1],
        [1, 0, 1],
        [0, 0, 1],
        [0, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
        [0, 0, 1],
        [1, 1, 0],
        [0, 0, 0],
        [0, 0, 1],
        [0, 0, 0],
    ]
)
T11_Y = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1])


def _check_fitted(clf, X, y, min_sup=1, weights=None):
    """The decoded tree reproduces the objective and respects min_sup."""
    tree = clf.tree_
    assert tree.depth <= clf.max_depth
    w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    assert clf.objective_ == pytest.approx(np.sum(w[clf.predict(X) != y]))
    leaves = tree.feature == -1
    assert np.all(tree.n_samples[leaves] >= max(min_sup, 1))
    assert tree.n_samples[leaves].sum() == len(y)
    assert clf.lower_bound_ <= clf.objective_ + 1e-9


def _random_instance(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 14))
    p = int(rng.integers(1, 5))
    k = int(rng.integers(2, 4))
    X = rng.integers(0, 2, size=(n, p))
    y = rng.integers(0, k, size=n)
    y[:2] = [0, 1]  # at least two classes
    depth = int(rng.integers(1, 4))
    min_sup = int(rng.choice([1, 1, 2, 3]))
    return X, y, depth, min_sup


@pytest.mark.parametrize("depth, expected", [(1, 3), (2, 3), (3, 2)])
def test_cp_t11(depth, expected):
    clf = CPSATClassifier(max_depth=depth, random_state=0).fit(T11_X, T11_Y)
    assert clf.objective_ == expected
    assert clf.lower_bound_ == expected
    assert clf.optimal_ and clf.status_ == "optimal"
    assert clf.stats_["gap"] == 0.0
    _check_fitted(clf, T11_X, T11_Y)


@pytest.mark.parametrize("seed", range(40))
def test_cp_matches_bruteforce(seed):
    X, y, depth, min_sup = _random_instance(seed)
    expected = bruteforce.optimal_error(X, y, depth, min_sup=min_sup)
    hint = ["cart", None][seed % 2]
    formulation = ["errors", "counts"][(seed // 2) % 2]
    clf = CPSATClassifier(
        max_depth=depth,
        min_sup=min_sup,
        hint=hint,
        formulation=formulation,
        random_state=seed,
    ).fit(X, y)
    assert clf.optimal_
    assert clf.objective_ == expected
    assert clf.lower_bound_ == expected
    _check_fitted(clf, X, y, min_sup)


def test_cp_min_support_oracle():
    X = np.array([[0], [1], [1]])
    y = np.array([0, 1, 1])
    clf = CPSATClassifier(max_depth=1, min_sup=2).fit(X, y)
    assert clf.optimal_ and clf.objective_ == 1
    assert clf.tree_.n_leaves == 1  # only a leaf holds >= 2 rows
    assert CPSATClassifier(max_depth=1).fit(X, y).objective_ == 0


def test_cp_min_support_above_rows_gives_a_leaf():
    # as DL8.5 and the brute force: the single leaf is always allowed
    X, y = T11_X[:4], T11_Y[:4]
    clf = CPSATClassifier(max_depth=2, min_sup=5).fit(X, y)
    assert clf.status_ == "optimal" and clf.tree_.n_leaves == 1
    assert clf.objective_ == bruteforce.optimal_error(X, y, 2, min_sup=5) == 2


@pytest.mark.parametrize("formulation", ["errors", "counts"])
def test_cp_dummy_feature_needed_for_min_support(formulation):
    # without the dummy feature the min-support oracle has no solution
    X = np.array([[0], [1], [1]])
    y = np.array([0, 1, 1])
    weights, scale, _ = integer_weights(None, 3)
    inst = make_instance(X, y, 2, weights, scale)
    tm = build_model(inst, 1, min_sup=2, formulation=formulation)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(tm.model) == cp_model.OPTIMAL
    assert solver.objective_value == 1
    tm.model.add_bool_and([~tm.x[1][0]])
    assert solver.solve(tm.model) == cp_model.INFEASIBLE


@pytest.mark.parametrize("formulation", ["errors", "counts"])
@pytest.mark.parametrize("seed", range(8))
def test_cp_complete_hint_is_feasible(seed, formulation):
    """Fixing every variable to the CART hint leaves a feasible model."""
    X, y, depth, min_sup = _random_instance(100 + seed)
    cart = CARTClassifier(max_depth=depth, min_samples_leaf=min_sup).fit(X, y)
    weights, scale, _ = integer_weights(None, len(y))
    inst = make_instance(X, np.unique(y, return_inverse=True)[1], 3, weights, scale)
    feat = complete_hint(cart.tree_, inst, depth)
    values = hint_values(feat, inst, depth, min_sup)
    assert values is not None
    assert values["objective"] <= cart.objective_
    tm = build_model(inst, depth, min_sup, formulation)
    add_hint(tm, feat, values)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.fix_variables_to_their_hinted_value = True
    assert solver.solve(tm.model) == cp_model.OPTIMAL
    assert solver.objective_value == values["objective"]


def test_cp_integer_weights_equal_duplicated_rows():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(10, 3))
    y = rng.integers(0, 3, size=10)
    w = rng.integers(0, 4, size=10)
    expected = bruteforce.optimal_error(X, y, 2, weights=w, n_classes=3)
    clf = CPSATClassifier(max_depth=2).fit(X, y, sample_weight=w)
    assert clf.optimal_ and clf.objective_ == expected
    half = CPSATClassifier(max_depth=2).fit(X, y, sample_weight=w / 2)
    assert half.optimal_ and half.objective_ == pytest.approx(expected / 2)


def test_cp_multiclass_string_labels():
    rng = np.random.default_rng(7)
    X = rng.integers(0, 2, size=(12, 4))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, size=12)]
    clf = CPSATClassifier(max_depth=2).fit(X, y)
    codes = np.unique(y, return_inverse=True)[1]
    assert clf.objective_ == bruteforce.optimal_error(X, codes, 2)
    assert set(clf.predict(X)) <= set(y)
    assert clf.score(X, y) == pytest.approx(1 - clf.objective_ / len(y))


def test_cp_redundant_columns_keep_optimum():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(13, 3))
    X = np.hstack([X, 1 - X[:, :2], X[:, :1], np.ones((13, 1), int)])
    y = rng.integers(0, 2, size=13)
    clf = CPSATClassifier(max_depth=2).fit(X, y)
    assert clf.stats_["n_model_features"] == 3
    assert clf.stats_["n_groups"] == len(np.unique(X, axis=0))
    assert clf.objective_ == bruteforce.optimal_error(X, y, 2)
    _check_fitted(clf, X, y)


def test_cp_non_binary_input_names_binarizer():
    X = np.array([[0.0, 2.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="Binarizer"):
        CPSATClassifier().fit(X, [0, 1])


def test_cp_bad_parameters():
    with pytest.raises(ValueError):
        CPSATClassifier(hint="greedy").fit(T11_X, T11_Y)
    with pytest.raises(ValueError):
        CPSATClassifier(min_sup=0).fit(T11_X, T11_Y)
    with pytest.raises(ValueError):
        CPSATClassifier(formulation="maxsat").fit(T11_X, T11_Y)


def test_cp_clone_and_params():
    clf = CPSATClassifier(max_depth=3, min_sup=2, num_workers=2, hint=None)
    params = clone(clf).get_params()
    assert params["max_depth"] == 3 and params["hint"] is None
    assert params["num_workers"] == 2 and params["min_sup"] == 2


def test_cp_stats_and_anytime():
    clf = CPSATClassifier(max_depth=2, hint=None, random_state=0).fit(T11_X, T11_Y)
    stats = clf.stats_
    for key in (
        "n_booleans",
        "n_constraints",
        "branches",
        "conflicts",
        "wall_time",
        "gap",
        "status",
    ):
        assert key in stats
    assert stats["status"] == "OPTIMAL"
    curve = stats["anytime"]
    assert curve, "the solution callback recorded no incumbent"
    times = [t for t, _ in curve]
    objs = [o for _, o in curve]
    assert times == sorted(times) and objs == sorted(objs, reverse=True)
    assert objs[-1] == clf.objective_


def test_cp_zoo1_depth2_oracle():
    from odtstudy.datasets import load_dataset

    data = load_dataset("zoo-1")
    clf = CPSATClassifier(max_depth=2, time_limit=20, random_state=0)
    clf.fit(data.X, data.y)
    assert clf.optimal_ and clf.objective_ == 0
    _check_fitted(clf, data.X, np.asarray(data.y))


@pytest.mark.parametrize(
    "name, depth, limit, hint",
    [
        ("vote", 3, 1.0, "cart"),
        ("tic-tac-toe", 4, 0.5, "cart"),
        ("anneal", 4, 0.3, None),
    ],
)
def test_cp_time_limit_is_honoured(name, depth, limit, hint):
    """Anytime: at the limit the best tree so far comes back, not optimal."""
    from odtstudy.datasets import load_dataset

    data = load_dataset(name)
    start = time.perf_counter()
    clf = CPSATClassifier(max_depth=depth, time_limit=limit, hint=hint)
    clf.fit(data.X, data.y)
    assert time.perf_counter() - start < limit + 2.0
    assert clf.status_ == "timeout" and not clf.optimal_
    assert clf.tree_ is not None
    _check_fitted(clf, data.X, np.asarray(data.y))
    if hint is not None:
        assert clf.objective_ <= clf.stats_["hint_objective"]
        assert clf.stats_["anytime"][-1][1] == clf.objective_


def _dl85():
    try:
        from odtstudy.dl85 import DL85Classifier
    except ImportError:
        return None
    return DL85Classifier


@pytest.mark.parametrize("seed", range(6))
def test_cp_agrees_with_dl85(seed):
    DL85Classifier = _dl85()
    if DL85Classifier is None:
        pytest.skip("odtstudy.dl85.DL85Classifier is not available")
    rng = np.random.default_rng(1000 + seed)
    X = rng.integers(0, 2, size=(40, 6))
    y = rng.integers(0, 2, size=40)
    depth, min_sup = 1 + seed % 3, 1 + seed % 2
    dl = DL85Classifier(max_depth=depth, min_sup=min_sup).fit(X, y)
    cp = CPSATClassifier(max_depth=depth, min_sup=min_sup, random_state=0).fit(X, y)
    assert cp.optimal_
    assert cp.objective_ == dl.objective_


def test_cp_dl85_hint():
    DL85Classifier = _dl85()
    if DL85Classifier is None:
        with pytest.raises(ImportError, match="dl85"):
            CPSATClassifier(max_depth=2, hint="dl85").fit(T11_X, T11_Y)
        return
    clf = CPSATClassifier(max_depth=2, hint="dl85").fit(T11_X, T11_Y)
    assert clf.objective_ == 3 and clf.stats_["hint_objective"] == 3


def test_cp_registry_builds_the_estimator():
    from odtstudy.study.registry import get_method

    method = get_method("cpsat")
    assert method.exact and method.data == "binary"
    est = method.make(max_depth=2, time_limit=5.0, random_state=0)
    assert isinstance(est, CPSATClassifier) and est.time_limit == 5.0
    assert est.fit(T11_X, T11_Y).objective_ == 3
