"""The complete-tree codec shared by the MILP, CP and memetic learners."""

import ast
from pathlib import Path

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from odtstudy import _complete_tree as codec
from odtstudy.cart import tree_from_sklearn

PACKAGE = Path(codec.__file__).parent


def _data(seed, n=60, p=4, k=3):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, p)).astype(float)
    y = rng.integers(0, k, size=n)
    return X, y, k


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_encode_then_decode_gives_back_the_tree(seed, depth):
    X, y, k = _data(seed)
    sk = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, y)
    tree = tree_from_sklearn(sk.tree_, X, y, k)
    layout = codec.encode(tree, depth + 1)
    assert layout.depth == depth + 1
    back = codec.decode(layout, X, y, k)
    np.testing.assert_array_equal(back.apply(X) >= 0, True)
    np.testing.assert_array_equal(back.predict(X), tree.predict(X))
    assert (back.node_count, back.depth, back.n_leaves) == (
        tree.node_count,
        tree.depth,
        tree.n_leaves,
    )
    again = codec.encode(back, depth + 1)
    for a, b in zip(layout, again):
        np.testing.assert_array_equal(a, b)


def test_splits_round_trip_and_pruning():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([0, 1, 1, 0])
    # node 2 sends every row left (x1 <= 5), node 3 does not split
    splits = {1: (0, 0.5), 2: (1, 5.0)}
    layout = codec.from_splits(2, splits)
    assert codec.to_splits(layout) == {**splits, 3: (0, -np.inf)}
    pruned = codec.decode(layout, X, y, 2, prune=True)
    assert pruned.node_count == 3
    np.testing.assert_array_equal(pruned.predict(X), y)
    full = codec.decode(layout, X, y, 2)
    assert full.node_count == 7 and full.n_leaves == 4
    # a dummy node sends its rows left
    left = codec.from_splits(1, {}, left={1: True})
    assert codec.decode(left, X, y, 2, prune=True).node_count == 1


def test_decode_keeps_layout_labels_and_fills_the_others():
    X = np.array([[0.0], [1.0], [1.0]])
    y = np.array([0, 1, 1])
    layout = codec.from_splits(1, {1: (0, 0.5)})
    layout.label[1] = 1  # the left leaf says class 1, against its row
    tree = codec.decode(layout, X, y, 2)
    assert list(tree.predict(X)) == [1, 1, 1]
    layout.label[1] = codec.UNSET
    assert list(codec.decode(layout, X, y, 2).predict(X)) == [0, 1, 1]


def test_a_tree_deeper_than_the_layout_is_refused():
    X, y, k = _data(0)
    sk = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="more than the allowed 1"):
        codec.encode(tree_from_sklearn(sk.tree_, X, y, k), 1)


def test_milp_cp_and_memetic_use_the_one_codec():
    """They import it, and none of their modules builds splits itself."""
    for rel in ("milp/_classes.py", "cp/_model.py", "memetic/_heap.py"):
        imports = [
            node
            for node in ast.walk(ast.parse((PACKAGE / rel).read_text()))
            if isinstance(node, ast.ImportFrom)
        ]
        assert any(
            node.module == "odtstudy._complete_tree"
            or (
                node.module == "odtstudy"
                and any(a.name == "_complete_tree" for a in node.names)
            )
            for node in imports
        ), rel
    for sub in ("milp", "cp", "memetic"):
        for path in (PACKAGE / sub).glob("*.py"):
            assert "add_split(" not in path.read_text(), path
