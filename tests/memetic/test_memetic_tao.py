"""TAO: reduced problems, monotonicity, oracles (methods.md §4)."""

import itertools

import bruteforce
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_iris

from odtstudy.cart import CARTClassifier
from odtstudy.memetic import TAOClassifier
from odtstudy.memetic._heap import LEAF, MISSING, HeapTree
from odtstudy.memetic._tao import (
    _update_level,
    best_split,
    collapse_pure_branches,
    prune_dead_branches,
    tao_refine,
)
from odtstudy.tree import TreeBuilder


def _stump(threshold, left_label, right_label, feature=0):
    b = TreeBuilder(n_outputs=2)
    root = b.add_split(feature=feature, threshold=threshold)
    b.set_children(root, b.add_leaf(label=left_label), b.add_leaf(label=right_label))
    return b.build()


def _random_heap(rng, depth, X, n_classes):
    """A random tree of depth <= depth with thresholds among X's values."""
    heap = HeapTree.single_leaf(depth, label=int(rng.integers(n_classes)))

    def grow(pos, level):
        if level < depth and rng.random() < 0.8:
            j = int(rng.integers(X.shape[1]))
            heap.make_branch(pos, j, float(rng.choice(X[:, j])))
            for child in (2 * pos + 1, 2 * pos + 2):
                heap.label[child] = int(rng.integers(n_classes))
                grow(child, level + 1)

    grow(0, 0)
    return heap


def _random_data(rng, n, p, n_classes, n_values=5):
    X = rng.integers(0, n_values, size=(n, p)).astype(float)
    y = rng.integers(0, n_classes, size=n)
    return X, y


# ----------------------------------------------------------------- oracles
def test_tao_oracle_one_dimension():
    X = np.arange(1, 7, dtype=float).reshape(-1, 1)
    y = np.array([0, 0, 1, 1, 1, 0])
    start = _stump(1.5, 0, 1)
    one = TAOClassifier(max_depth=1, initial=start, max_iter=1).fit(X, y)
    assert one.stats_["history"] == [2.0, 1.0]
    assert one.tree_.threshold[0] == 2.5
    assert one.objective_ == 1.0 == one.training_error(X, y)
    full = TAOClassifier(max_depth=1, initial=start).fit(X, y)
    # the next iteration changes nothing and TAO stops
    assert full.stats_["history"] == [2.0, 1.0, 1.0]
    assert full.stats_["n_iter"] == 2 and full.stats_["converged"]
    assert full.tree_.threshold[0] == 2.5
    assert full.objective_ == bruteforce.optimal_error(X, y, 1)


def test_tao_reaches_optimum_by_node_moves():
    # depth 2, x in 1..8: the optimum (0 errors) needs root 4.5 and the two
    # children at 2.5 and 6.5; the start has all three thresholds misplaced.
    X = np.arange(1, 9, dtype=float).reshape(-1, 1)
    y = np.array([0, 0, 1, 1, 1, 1, 0, 0])
    heap = HeapTree.single_leaf(2)
    heap.make_branch(0, 0, 3.5)
    heap.make_branch(1, 0, 1.5)
    heap.make_branch(2, 0, 7.5)
    heap.label[3:7] = [0, 1, 1, 0]
    result = tao_refine(heap, X, y, 2)
    assert result.history[0] == 2.0
    assert result.objective == 0.0 == bruteforce.optimal_error(X, y, 2)


# ------------------------------------------------------- the reduced problem
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 25), p=st.integers(1, 4))
def test_tao_best_split_matches_exhaustive_search(seed, m, p):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(m, p)).astype(float)
    to_left = rng.random(m) < 0.5
    w = rng.integers(1, 4, size=m).astype(float)
    j, t, cost, _ = best_split(X, to_left, w)
    assert cost == pytest.approx(np.sum(w[(X[:, j] <= t) != to_left]))
    best = None  # (cost, j, t) with ascending thresholds per feature
    for jj in range(p):
        values = np.unique(X[:, jj])
        cands = [-np.inf, *((values[:-1] + values[1:]) / 2), np.inf]
        for tt in cands:
            c = np.sum(w[(X[:, jj] <= tt) != to_left])
            if best is None or c < best[0]:
                best = (c, jj, tt)
    assert cost == best[0]
    assert (j, t) == (best[1], best[2])  # lowest feature, then lowest threshold


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_tao_node_update_solves_the_full_problem(seed):
    # Updating the root with the rest fixed reaches the minimum over all
    # (feature, threshold) of the *full* objective (reduced-problem theorem).
    rng = np.random.default_rng(seed)
    X, y = _random_data(rng, 30, 3, 3)
    w = rng.integers(1, 3, size=30).astype(float)
    heap = _random_heap(rng, 3, X, 3)
    if heap.feature[0] < 0:
        return
    before = float(np.sum(w[heap.predict(X) != y]))
    best = before
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for t in [-np.inf, *((values[:-1] + values[1:]) / 2), np.inf]:
            trial = heap.copy()
            trial.feature[0], trial.threshold[0] = j, t
            best = min(best, float(np.sum(w[trial.predict(X) != y])))
    updated = heap.copy()
    _update_level(updated, X, y, w, 3, 0, 1e-9)
    assert float(np.sum(w[updated.predict(X) != y])) == best


# ------------------------------------------------------------- properties
@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    depth=st.integers(1, 3),
    n=st.integers(5, 60),
    n_classes=st.integers(2, 3),
)
def test_tao_never_increases_training_error(seed, depth, n, n_classes):
    rng = np.random.default_rng(seed)
    X, y = _random_data(rng, n, 3, n_classes)
    w = rng.integers(1, 4, size=n).astype(float)
    heap = _random_heap(rng, depth, X, n_classes)
    result = tao_refine(heap, X, y, n_classes, w, record_levels=True, collapse=True)
    levels = result.level_history
    assert all(b <= a + 1e-9 for a, b in itertools.pairwise(levels))
    assert result.objective <= result.initial_objective
    assert result.objective == float(np.sum(w[result.tree.predict(X) != y]))
    result.tree.check()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 2))
def test_tao_classifier_from_random_tree(seed, depth):
    rng = np.random.default_rng(seed)
    X, y = _random_data(rng, 14, 2, 2, n_values=4)
    y[:2] = [0, 1]
    heap = _random_heap(rng, depth, X, 2)
    start = heap.to_tree(X, y, 2)
    start_error = float(np.sum(start.predict(X) != y))
    tao = TAOClassifier(max_depth=depth, initial=start).fit(X, y)
    assert tao.objective_ <= start_error
    assert tao.objective_ == tao.training_error(X, y)
    # a heuristic never beats the optimum
    assert tao.objective_ >= bruteforce.optimal_error(X, y, depth)


def test_tao_weights_equal_repeated_rows():
    rng = np.random.default_rng(3)
    X, y = _random_data(rng, 40, 3, 2)
    counts = rng.integers(1, 4, size=40)
    heap = _random_heap(rng, 3, X, 2)
    weighted = tao_refine(heap, X, y, 2, counts.astype(float))
    repeated = tao_refine(heap, np.repeat(X, counts, 0), np.repeat(y, counts), 2)
    assert weighted.objective == repeated.objective
    assert weighted.tree == repeated.tree


@pytest.mark.parametrize("load", [load_iris, load_breast_cancer])
@pytest.mark.parametrize("depth", [2, 3, 4])
def test_tao_improves_on_cart(load, depth):
    X, y = load(return_X_y=True)
    cart = CARTClassifier(max_depth=depth, random_state=0).fit(X, y)
    tao = TAOClassifier(max_depth=depth, random_state=0).fit(X, y)
    assert tao.objective_ <= cart.objective_
    assert tao.stats_["initial_objective"] == cart.objective_
    assert tao.objective_ == tao.training_error(X, y)
    assert tao.tree_.depth <= depth
    assert tao.lower_bound_ is None and not tao.optimal_
    assert tao.status_ == "feasible"


def test_tao_on_dataset_and_sample_weight():
    from odtstudy.datasets import load_dataset

    data = load_dataset("heart")
    rng = np.random.default_rng(0)
    w = rng.integers(0, 3, size=len(data.y)).astype(float)
    cart = CARTClassifier(max_depth=3, random_state=0).fit(data.X, data.y, w)
    tao = TAOClassifier(max_depth=3, random_state=0).fit(data.X, data.y, w)
    assert tao.objective_ <= cart.objective_
    assert tao.objective_ == pytest.approx(tao.training_error(data.X, data.y, w))


def test_tao_same_seed_same_tree():
    X, y = load_breast_cancer(return_X_y=True)
    a = TAOClassifier(max_depth=3, random_state=7).fit(X, y)
    b = TAOClassifier(max_depth=3, random_state=7).fit(X, y)
    assert a.tree_ == b.tree_


def test_tao_time_limit():
    X, y = load_breast_cancer(return_X_y=True)
    tao = TAOClassifier(max_depth=4, time_limit=1e-9, random_state=0).fit(X, y)
    assert tao.status_ == "timeout"
    assert tao.fit_time_ < 5
    assert tao.stats_["n_updates"] == 0
    assert tao.objective_ == tao.training_error(X, y)


def test_tao_initial_tree_validation():
    X = np.arange(6, dtype=float).reshape(-1, 1)
    y = np.array([0, 0, 1, 1, 1, 0])
    deep = TAOClassifier(max_depth=2, random_state=0).fit(X, y).tree_
    assert deep.depth == 2
    with pytest.raises(ValueError, match="max_depth"):
        TAOClassifier(max_depth=1, initial=deep).fit(X, y)
    with pytest.raises(ValueError, match="feature"):
        TAOClassifier(max_depth=1, initial=_stump(0.5, 0, 1, feature=3)).fit(X, y)
    with pytest.raises(ValueError):
        TAOClassifier(initial="oct").fit(X, y)


# -------------------------------------------------------- pruning / labels
def test_tao_prunes_dead_branches():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    heap = HeapTree.single_leaf(2)
    heap.make_branch(0, 0, 1.5)
    heap.make_branch(1, 0, 10.0)  # its right child receives no row
    heap.label[3:7] = [0, 1, 1, 0]
    before = heap.predict(X)
    prune_dead_branches(heap, X)
    assert np.array_equal(heap.predict(X), before)
    assert heap.feature[1] == LEAF and heap.label[1] == 0
    assert heap.feature[3] == MISSING
    heap.check()


def test_tao_collapse_keeps_predictions():
    heap = HeapTree.single_leaf(2)
    heap.make_branch(0, 0, 1.5)
    heap.make_branch(1, 0, 0.5)
    heap.label[[2, 3, 4]] = [1, 1, 1]
    X = np.linspace(-1, 3, 20).reshape(-1, 1)
    before = heap.predict(X)
    collapse_pure_branches(heap)
    assert np.array_equal(heap.predict(X), before)
    assert heap.feature[0] == LEAF and heap.label[0] == 1


def test_tao_leaf_keeps_label_on_tie():
    X = np.array([[0.0], [1.0]])
    y = np.array([0, 1])
    for label in (0, 1):
        heap = HeapTree.single_leaf(0, label=label)
        assert tao_refine(heap, X, y, 2).tree.label[0] == label
