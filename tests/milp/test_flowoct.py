"""FlowOCT and BendersOCT: optima against brute force and DL8.5, the cuts,
the warm start, the time limit and the anytime trace."""

import time

import bruteforce
import numpy as np
import psutil
import pytest
from sklearn.base import clone
from sklearn.tree import DecisionTreeClassifier

from odtstudy.datasets import load_dataset
from odtstudy.dl85 import DL85Classifier
from odtstudy.milp import BendersOCTClassifier, FlowOCTClassifier
from odtstudy.milp._bendersoct import BendersMaster
from odtstudy.milp._flow_tree import (
    FlowTree,
    errors,
    from_splits,
    reduce_data,
    terminals,
)

LEARNERS = [FlowOCTClassifier, BendersOCTClassifier]
SOLVERS = ["cbc", "highs"]


def _random_case(seed):
    """Small 0/1 data; some seeds add a constant, a duplicate and a
    complementary column (the reduction must not change the optimum)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 15))
    p = int(rng.integers(2, 5))
    X = rng.integers(0, 2, size=(n, p))
    if seed % 3 == 0:
        X = np.column_stack([X, np.ones(n, dtype=int), X[:, 0], 1 - X[:, 1]])
    y = rng.integers(0, 2 + seed % 2, size=n)
    y[:2] = [0, 1]
    return X, y, 1 + seed % 2


def _check_exact(est, X, y, expected):
    assert est.optimal_ and est.status_ == "optimal"
    assert est.objective_ == expected == np.sum(est.predict(X) != y)
    assert est.lower_bound_ == expected
    assert est.tree_.depth <= est.max_depth


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("learner", LEARNERS)
def test_random_tiny_data_matches_brute_force(learner, seed):
    X, y, depth = _random_case(seed)
    expected = bruteforce.optimal_error(X, y, depth)
    solver = SOLVERS[seed % 2]
    est = learner(max_depth=depth, solver=solver, warm_start=seed % 4 != 1)
    _check_exact(est.fit(X, y), X, y, expected)


def _cp4im_subset(name, n_rows, n_features):
    data = load_dataset(name)
    return data.X[:n_rows, :n_features], data.y[:n_rows]


@pytest.mark.parametrize("name", ["vote", "anneal", "hepatitis"])
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("learner", LEARNERS)
def test_cp4im_subsets_equal_dl85(learner, solver, name):
    X, y = _cp4im_subset(name, 50, 10)
    ref = DL85Classifier(max_depth=2).fit(X, y)
    assert ref.optimal_
    _check_exact(learner(max_depth=2, solver=solver).fit(X, y), X, y, ref.objective_)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("learner", LEARNERS)
def test_zoo_depth_2_equals_dl85(learner, solver):
    data = load_dataset("zoo-1")  # pydl8.5's proven depth-2 optimum: 0
    est = learner(max_depth=2, solver=solver).fit(data.X, data.y)
    _check_exact(est, data.X, data.y, 0)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "shape"), [("primary-tumor", (336, 16)), ("hepatitis", (137, 24))]
)
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("learner", LEARNERS)
def test_larger_cp4im_sets_equal_dl85(learner, solver, name, shape):
    X, y = _cp4im_subset(name, *shape)
    ref = DL85Classifier(max_depth=2).fit(X, y)
    est = learner(max_depth=2, solver=solver, time_limit=600).fit(X, y)
    _check_exact(est, X, y, ref.objective_)


# ----------------------------------------------------------------- the cuts
def _random_flow_tree(rng, depth, n_features, n_classes, node=1):
    tree = FlowTree({}, {})

    def grow(n, level):
        if level == depth or rng.random() < 0.3:
            tree.labels[n] = int(rng.integers(n_classes))
            return
        tree.splits[n] = int(rng.integers(n_features))
        grow(2 * n, level + 1)
        grow(2 * n + 1, level + 1)

    grow(node, 0)
    return tree


def _cut_value(master, i, terminal):
    terms, constant = master.tree.cut(master.data.X[i], master.data.y[i], terminal)
    return constant + sum(coef * var.varValue for var, coef in terms)


@pytest.mark.parametrize("seed", range(5))
def test_path_cut_is_the_flow_at_integral_points_and_valid_elsewhere(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(30, 5))
    y = rng.integers(0, 3, size=30)
    master = BendersMaster(X, y, 3, 3)
    data = master.data
    for _ in range(10):
        tree = _random_flow_tree(rng, 3, data.n_features, 3)
        master.start(tree)  # sets the variables' values to the tree
        reached = terminals(data, tree)
        for i, stop in enumerate(reached.tolist()):
            correct = float(tree.labels[stop] == data.y[i])
            # the cut along the row's own path is its max flow: correctness
            assert _cut_value(master, i, stop) == pytest.approx(correct)
            # any other path's cut is a valid upper bound
            for node in master.tree.nodes:
                assert _cut_value(master, i, node) >= correct - 1e-9


# -------------------------------------------------------- data and warm start
def test_reduction_keeps_one_of_equal_and_complementary_features():
    X = np.array([[0, 1, 0, 1, 1], [1, 0, 1, 1, 0], [1, 1, 1, 1, 0], [0, 0, 0, 1, 1]])
    y = np.array([0, 1, 1, 0])
    data = reduce_data(np.vstack([X, X[:1]]), np.append(y, 0), 2)
    # column 2 equals 0, column 3 is constant, column 4 is 0's complement
    assert data.features.tolist() == [0, 1]
    assert data.alias[2] == (0, False) and data.alias[4] == (0, True)
    assert data.alias[3] == (None, True)
    assert data.weight.sum() == 5 and len(data.y) == 4  # the repeated row merged


@pytest.mark.parametrize("seed", range(4))
def test_cart_splits_keep_their_errors_through_the_reduction(seed):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2, size=(60, 4))
    # the complements come first, so CART may split on features that the
    # reduction replaces by a mirrored split
    X = np.column_stack([1 - base, base, np.zeros(60, dtype=int)])
    y = (base[:, 0] ^ base[:, 1] | (rng.random(60) < 0.2)).astype(int)
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    splits = {}
    stack = [(0, 1)]
    while stack:
        node, t = stack.pop()
        if cart.tree_.feature[node] >= 0:
            splits[t] = (int(cart.tree_.feature[node]), cart.tree_.threshold[node])
            stack += [(cart.tree_.children_left[node], 2 * t)]
            stack += [(cart.tree_.children_right[node], 2 * t + 1)]
    data = reduce_data(X, y, 2)
    assert errors(data, from_splits(data, splits)) == np.sum(cart.predict(X) != y)


@pytest.mark.parametrize("learner", LEARNERS)
def test_warm_start_is_cart_on_data_with_complements(learner):
    X, y = _cp4im_subset("anneal", 80, 20)
    est = learner(max_depth=2, time_limit=30).fit(X, y)
    assert est.stats_["warm_start_objective"] == est.stats_["cart_objective"]
    assert est.objective_ <= est.stats_["cart_objective"]


# ------------------------------------------------------------ the contract
LIMIT = 2.0


def _children():
    return {p.pid for p in psutil.Process().children(recursive=True)}


@pytest.mark.ci_slow
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("learner", LEARNERS)
def test_time_limit_held_with_a_valid_tree_and_bound(learner, solver):
    data = load_dataset("anneal")
    X, y = data.X, data.y
    before = _children()
    start = time.perf_counter()
    est = learner(max_depth=3, time_limit=LIMIT, solver=solver, random_state=0)
    est.fit(X, y)
    wall = time.perf_counter() - start
    assert wall <= LIMIT * 1.1 + 1.0, f"fit took {wall:.2f} s on a {LIMIT:g} s limit"
    assert est.objective_ == np.sum(est.predict(X) != y)
    cart = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert est.objective_ <= np.sum(cart.predict(X) != y)
    optimum = DL85Classifier(max_depth=3).fit(X, y).objective_
    assert est.lower_bound_ is None or est.lower_bound_ <= optimum
    if est.objective_ > optimum:
        assert not est.optimal_ and est.status_ == "timeout"
    deadline = time.perf_counter() + 5
    while _children() - before and time.perf_counter() < deadline:
        time.sleep(0.05)
    assert not _children() - before, "a solver process outlived the fit"


@pytest.mark.parametrize("learner", LEARNERS)
def test_anytime_trace_runs_from_cart_to_the_proven_optimum(learner):
    X, y = _cp4im_subset("vote", 50, 10)
    est = learner(max_depth=2, solver="highs").fit(X, y)
    trace = est.stats_["anytime"]
    assert trace, "the trace is empty"
    assert trace[0][1] == est.stats_["cart_objective"]
    assert trace[-1][1:] == [est.objective_, est.lower_bound_]
    times = [point[0] for point in trace]
    values = [point[1] for point in trace]
    assert times == sorted(times) and values == sorted(values, reverse=True)
    for point in trace[1:]:
        assert len(point) == 2 or point[2] <= point[1]


def test_benders_reports_its_loop():
    X, y = _cp4im_subset("hepatitis", 50, 10)
    est = BendersOCTClassifier(max_depth=2, solver="highs").fit(X, y)
    stats = est.stats_
    assert stats["benders_iterations"] >= 1
    assert stats["benders_cuts"] >= len(np.unique(np.column_stack([X, y]), axis=0))
    assert stats["benders_stopped"] == "proven"
    assert stats["milp_bound"] == pytest.approx(est.objective_, abs=0.5)


# -------------------------------------------------------------- the estimator
@pytest.mark.parametrize("learner", LEARNERS)
def test_numeric_features_are_refused_naming_the_binarizer(learner):
    X = np.array([[0.0, 1.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="Binarizer"):
        learner().fit(X, [0, 1])


@pytest.mark.parametrize("learner", LEARNERS)
def test_parameters_and_clone(learner):
    est = learner(max_depth=3, time_limit=5, solver="highs")
    assert clone(est).get_params() == est.get_params()
    assert "min_samples_leaf" not in est.get_params()
    with pytest.raises(ValueError, match="solver"):
        learner(solver="gurobi").fit([[0], [1]], [0, 1])


@pytest.mark.parametrize("learner", LEARNERS)
def test_one_feature_that_cannot_split_gives_one_leaf(learner):
    X = np.ones((5, 2), dtype=int)
    y = np.array([0, 1, 1, 0, 1])
    est = learner(max_depth=2).fit(X, y)
    assert est.optimal_ and est.objective_ == 2 and est.tree_.n_leaves == 1
