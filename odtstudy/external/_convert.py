"""Turn a published solver's tree into the common :class:`~odtstudy.tree.Tree`."""

from __future__ import annotations

import numpy as np

from odtstudy.tree import Tree, TreeBuilder

__all__ = ["LEAF", "build_regression_tree", "build_tree", "misclassifications"]

LEAF = None
"""What a ``describe`` function returns as the split of a leaf."""


def build_tree(root, describe, X, y, n_classes, sample_weight=None) -> Tree:
    """Build a :class:`Tree` from any nested tree representation.

    Parameters
    ----------
    root : object
        The solver's root node.
    describe : callable
        ``describe(node)`` returns ``(LEAF, label)`` for a leaf (``label``
        a class index, or ``None`` to take the majority of its training rows)
        and ``((feature, threshold), (left, right))`` for a split, where
        ``left`` is the child of the rows with ``x[feature] <= threshold``.
    X, y : ndarray
        Training rows and their class indices: node counts come from routing
        them through the tree.
    n_classes : int
    sample_weight : ndarray, default=None

    Returns
    -------
    Tree
        Leaf labels as the solver set them (its tie-breaking kept), counts
        and ``n_samples`` from the training rows.
    """
    builder = TreeBuilder(n_outputs=n_classes)
    labels = _grow(root, describe, builder)
    tree = builder.build().with_training_values(X, y, n_classes, sample_weight)
    own = np.array(
        [tree.label[i] if lab is None else lab for i, lab in enumerate(labels)]
    )
    return Tree(**{**tree.to_arrays(), "label": own})


def _grow(root, describe, builder) -> list:
    """Add the nodes of the solver's tree under ``root`` to ``builder``
    (values left at zero): what ``describe`` gave each leaf, ``None`` for a
    split, in node id order."""
    payloads = []
    children = {}  # split id -> [left id, right id]
    stack = [(root, None, None)]  # (node, parent id, is left child)
    while stack:
        node, parent, is_left = stack.pop()
        split, rest = describe(node)
        if split is LEAF:
            node_id = builder.add_leaf()
            payloads.append(rest)
        else:
            feature, threshold = split
            node_id = builder.add_split(int(feature), float(threshold))
            payloads.append(None)
            left, right = rest
            stack.append((right, node_id, False))
            stack.append((left, node_id, True))
        if parent is not None:
            children.setdefault(parent, [-1, -1])[0 if is_left else 1] = node_id
    for parent, (left, right) in children.items():
        builder.set_children(parent, left, right)
    return payloads


def build_regression_tree(root, describe, X, y, sample_weight=None) -> Tree:
    """Build a ``kind="regressor"`` :class:`Tree` from a solver's tree.

    Parameters
    ----------
    root, describe
        As for :func:`build_tree`; ``describe`` gives a leaf's predicted
        value (``None``: the (weighted) mean of its training rows).
    X, y : ndarray
        Training rows and their real targets.
    sample_weight : ndarray, default=None

    Returns
    -------
    Tree
        Leaves predict the solver's values; a split holds the mean of its
        training rows (shown by the exporters); ``n_samples`` counts rows.
    """
    builder = TreeBuilder(n_outputs=1)
    values = _grow(root, describe, builder)
    tree = builder.build(kind="regressor")
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight)
    leaves = tree.apply(X)
    weight = tree.node_totals(leaves, w)
    mean = np.divide(
        tree.node_totals(leaves, w * y),
        weight,
        out=np.zeros_like(weight),
        where=weight > 0,
    )
    own = np.array([m if v is None else float(v) for m, v in zip(mean, values)])
    fields = tree.with_training_values(X, y).to_arrays()
    return Tree(**{**fields, "value": own[:, None]})


def misclassifications(tree: Tree, X, y, sample_weight=None) -> float:
    """(Weighted) number of training rows ``tree`` misclassifies."""
    wrong = tree.predict(X) != y
    if sample_weight is None:
        return float(np.sum(wrong))
    return float(np.sum(np.asarray(sample_weight, dtype=float)[wrong]))
