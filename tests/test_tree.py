import pickle

import numpy as np
import pytest

from odtstudy.tree import Tree, TreeBuilder


def _hand_tree():
    # root: x0 <= 0.5 ; left leaf class 0 ; right: x1 <= 2.5 -> class 1 / class 2
    b = TreeBuilder(n_outputs=3)
    root = b.add_split(0, 0.5, value=[4, 3, 3], n_samples=10)
    left = b.add_leaf([4, 0, 0])
    right = b.add_split(1, 2.5, value=[0, 3, 3], n_samples=6)
    b.set_children(root, left, right)
    b.set_children(right, b.add_leaf([0, 3, 1]), b.add_leaf([0, 0, 2]))
    return b.build(classes=["a", "b", "c"], feature_names=["f0", "f1"])


def test_predict_apply_proba_on_hand_built_tree():
    tree = _hand_tree()
    X = np.array([[0, 9], [1, 1], [1, 3], [0.5, 0]])
    assert tree.predict(X).tolist() == ["a", "b", "c", "a"]
    assert tree.apply(X).tolist() == [1, 3, 4, 1]
    assert np.allclose(tree.predict_proba(X)[1], [0, 0.75, 0.25])
    assert tree.depth == 2 and tree.n_leaves == 3 and tree.node_count == 5


def test_json_round_trip_is_exact():
    tree = _hand_tree()
    again = Tree.from_json(tree.to_json())
    assert again == tree
    X = np.random.default_rng(0).uniform(-1, 4, size=(50, 2))
    assert (again.predict(X) == tree.predict(X)).all()
    assert pickle.loads(pickle.dumps(tree)) == tree


def test_regressor_tree_and_exports():
    b = TreeBuilder(n_outputs=1)
    root = b.add_split(0, 0.5)
    b.set_children(
        root, b.add_leaf([1.5], n_samples=2), b.add_leaf([-2.0], n_samples=3)
    )
    tree = b.build(kind="regressor", feature_names=["age"])
    assert tree.predict([[0], [1]]).tolist() == [1.5, -2.0]
    text = tree.export_text()
    assert "age <= 0.50" in text and "value: -2.00" in text
    dot = _hand_tree().export_graphviz()
    assert dot.startswith("digraph Tree {") and "f1 <= 2.50" in dot
    assert "0 -> 1" in dot and "class: c" in dot
    assert Tree.from_dict(tree.to_dict()).predict([[1]]).tolist() == [-2.0]


def test_with_training_values_recounts_and_relabels():
    tree = _hand_tree()
    X = np.array([[0, 0], [0, 0], [1, 1], [1, 5]])
    y = np.array([2, 2, 1, 0])
    refreshed = tree.with_training_values(X, y, n_classes=3)
    assert refreshed.n_samples.tolist() == [4, 2, 2, 1, 1]
    assert refreshed.label.tolist()[1] == 2  # majority of the rows reaching it


def test_malformed_trees_are_rejected():
    with pytest.raises(ValueError, match="leaf"):
        Tree([0], [0.5], [-1], [-1], [[1, 0]], [1])
    with pytest.raises(ValueError, match="child"):
        Tree([0, -1], [0.5, -2], [1, -1], [5, -1], [[1, 0], [1, 0]], [1, 1])
    with pytest.raises(ValueError, match="features"):
        _hand_tree().apply(np.zeros((2, 1)))


def test_binarized_conditions_read_as_conditions():
    b = TreeBuilder(n_outputs=2)
    root = b.add_split(0, 0.5)
    b.set_children(root, b.add_leaf([2, 0]), b.add_leaf([0, 3]))
    tree = b.build(feature_names=["age<=42.5"])
    text = tree.export_text()
    assert "|--- not (age<=42.5)\n" in text and "|--- age<=42.5\n" in text
    assert "not (age<=42.5)" in tree.export_graphviz()
