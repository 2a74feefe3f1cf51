"""TMO encoding and crossover: the paper's example and figures (methods.md §5)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from odtstudy.cart import tree_from_sklearn
from odtstudy.memetic._encoding import (
    LEAF_GENE,
    MISSING_GENE,
    crossover,
    decode,
    encode,
    feature_midpoints,
    random_branch_parameters,
)
from odtstudy.memetic._heap import LEAF, MISSING, UNSET, HeapTree
from odtstudy.memetic._tmo import _mate, heap_from_individual, individual_from_heap

# Figure 1 of the paper: depth 3, branches 0, 2, 5; leaves 1, 6 (and 11, 12);
# 3 and 4 missing. f0 = 0, f2 = 1, f5 = 2 with thresholds t0, t2, t5.
EXAMPLE = [
    (0, 0.5),
    LEAF_GENE,
    (1, 1.5),
    MISSING_GENE,
    MISSING_GENE,
    (2, 2.5),
    LEAF_GENE,
]


def _example():
    heap = HeapTree.single_leaf(3)
    heap.make_branch(0, 0, 0.5)
    heap.make_branch(2, 1, 1.5)
    heap.make_branch(5, 2, 2.5)
    return heap


def _states(heap):
    return {
        pos: ("branch" if f >= 0 else "leaf" if f == LEAF else "nil")
        for pos, f in enumerate(heap.feature)
    }


def _only(z, n=7):
    return [i == z for i in range(n)]


def _no_random():
    raise AssertionError("no random parameters expected")


def test_encoding_paper_example_round_trip():
    heap = _example()
    assert encode(heap) == EXAMPLE
    decoded = decode(EXAMPLE)
    assert np.array_equal(decoded.feature, heap.feature)
    assert encode(decoded) == EXAMPLE
    leaves = np.flatnonzero(decoded.feature == LEAF).tolist()
    assert leaves == [1, 6, 11, 12]  # depth-3 leaves are implicit
    # through the common Tree and back, with labels
    X = np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1.0, 2.0, 2.0], [1, 2, 3.0]])
    y = np.array([0, 1, 0, 1])
    labelled = heap.copy()
    labelled.label[[1, 6, 11, 12]] = [0, 1, 0, 1]
    tree = labelled.to_tree(X, y, 2)
    assert tree.node_count == 7 and tree.depth == 3
    back = HeapTree.from_tree(tree, 3)
    assert back == labelled
    ind = individual_from_heap(labelled)
    assert list(ind) == EXAMPLE and ind.labels == {1: 0, 6: 1, 11: 0, 12: 1}
    assert heap_from_individual(ind) == labelled


def test_encoding_rejects_bad_length():
    with pytest.raises(ValueError):
        decode([LEAF_GENE] * 4)


def test_crossover_branch_leaf():
    second = _example()
    second.make_leaf(5)
    child = crossover(_example(), second, _only(5), _no_random)
    states = _states(child)
    assert states[5] == "leaf" and states[11] == states[12] == "nil"
    assert encode(child) == [*EXAMPLE[:5], LEAF_GENE, LEAF_GENE]
    child.check()


def test_crossover_leaf_branch():
    second = _example()
    second.make_branch(1, 3, 3.5)
    child = crossover(_example(), second, _only(1), _no_random)
    assert encode(child)[1] == (3, 3.5)
    states = _states(child)
    assert states[3] == states[4] == "leaf"
    assert all(states[p] == "nil" for p in (7, 8, 9, 10))
    child.check()


def test_crossover_branch_nil():
    second = _example()
    second.make_leaf(2)
    child = crossover(_example(), second, _only(5), _no_random)
    states = _states(child)
    assert states[2] == "leaf"
    assert states[5] == states[6] == "nil"
    assert states[11] == states[12] == "nil"
    assert encode(child) == [EXAMPLE[0], LEAF_GENE, LEAF_GENE, *[MISSING_GENE] * 4]
    child.check()


def test_crossover_nil_branch():
    second = _example()
    second.make_branch(1, 0, 9.0)
    second.make_branch(3, 4, 4.5)
    calls = []

    def random_branch():
        calls.append(1)
        return 1, 7.5

    child = crossover(_example(), second, _only(3), random_branch)
    assert len(calls) == 1
    genes = encode(child)
    assert genes[1] == (1, 7.5)  # random parameters, not second's (0, 9.0)
    assert genes[3] == (4, 4.5)
    assert genes[4] == LEAF_GENE
    states = _states(child)
    assert states[7] == states[8] == "leaf"  # implicit children of 3
    assert states[9] == states[10] == "nil"
    assert genes[0] == EXAMPLE[0] and genes[2] == EXAMPLE[2]
    child.check()


def test_crossover_nil_leaf_grows_the_path():
    second = _example()
    second.make_branch(1, 0, 9.0)
    child = crossover(_example(), second, _only(4), lambda: (2, 0.25))
    genes = encode(child)
    assert genes[1] == (2, 0.25)
    assert genes[3] == genes[4] == LEAF_GENE


def test_crossover_leaf_nil():
    first = _example()
    first.make_branch(1, 0, 9.0)
    second = _example()
    child = crossover(first, second, _only(4), _no_random)
    assert encode(child) == EXAMPLE


def test_crossover_labels_of_new_leaves_are_unset():
    first = _example()
    first.label[[1, 6, 11, 12]] = [1, 1, 0, 1]
    second = _example()
    second.make_leaf(5)
    child = crossover(first, second, _only(5), _no_random)
    assert child.label[5] == UNSET
    assert child.label[1] == 1 and child.label[6] == 1


def _forest_population(depth, n=12, seed=0):
    X, y = load_iris(return_X_y=True)
    forest = RandomForestClassifier(
        n_estimators=n, max_depth=depth, max_features=1, random_state=seed
    ).fit(X, y)
    heaps = [
        HeapTree.from_tree(tree_from_sklearn(e.tree_, X, y, 3), depth)
        for e in forest.estimators_
    ]
    return X, [individual_from_heap(h) for h in heaps]


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_crossover_rate_zero_and_one(depth):
    X, pop = _forest_population(depth)
    rng = random.Random(0)
    mids = feature_midpoints(X)
    for a in pop:
        for b in pop:
            same = _mate(a, b, rng, 0.0, mids)
            assert list(same) == list(a) and same.labels == a.labels
            other = _mate(a, b, rng, 1.0, mids)
            assert list(other) == list(b)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), depth=st.integers(1, 4))
def test_crossover_always_yields_a_tree(seed, depth):
    X, pop = _forest_population(depth, n=6, seed=seed % 1000)
    rng = random.Random(seed)
    mids = feature_midpoints(X)
    for _ in range(10):
        a, b = rng.sample(range(len(pop)), 2)
        child = _mate(pop[a], pop[b], rng, rng.random(), mids)
        heap = heap_from_individual(child)
        heap.check()
        assert heap.depth == depth
        assert len(child) == 2**depth - 1
        assert all(lab >= 0 for lab in child.labels.values())
        assert (heap.feature != MISSING).sum() % 2 == 1  # a full binary tree


def test_random_branch_parameters_are_midpoints():
    X = np.array([[0.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    mids = feature_midpoints(X)
    assert np.array_equal(mids[0], [0.5, 2.0]) and np.array_equal(mids[1], [5.0])
    rng = random.Random(1)
    for _ in range(20):
        j, t = random_branch_parameters(rng, mids)
        assert t in mids[j]
