"""The complete binary tree of depth ``D`` as arrays: one codec for every model
that learns a tree of fixed shape (BinOCT / OCT, CP-SAT, TAO / TMO).

A tree of depth at most ``D`` fits in the complete tree of depth ``D``,
stored in breadth-first (heap) order: position 0 is the root and the
children of position ``p`` are ``2p + 1`` (left: ``x[feature] <= threshold``)
and ``2p + 2`` (right), ``2**(D + 1) - 1`` positions in all. Each position is
a split (``feature >= 0`` with its ``threshold``), a leaf (:data:`LEAF`) or
missing (:data:`MISSING`: below a leaf); ``label`` holds a leaf's class
index, or :data:`UNSET` when the data should decide it.

The MILP and CP models number the same positions from 1 (root ``t = 1``,
children ``2t`` and ``2t + 1``): position ``p`` is their node ``t = p + 1``.
:func:`from_splits` and :func:`to_splits` convert.

:func:`decode` builds the common :class:`~odtstudy.tree.Tree`; with
``prune=True`` a split that sends every training row to one side is replaced
by that side's subtree (it changes no training prediction), so every leaf
holds training rows.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from odtstudy.tree import Tree, TreeBuilder

__all__ = [
    "LEAF",
    "MISSING",
    "UNSET",
    "Layout",
    "decode",
    "encode",
    "from_splits",
    "level_positions",
    "position_level",
    "single_leaf",
    "to_splits",
]

LEAF = -1
MISSING = -2
UNSET = -1  # label of a leaf whose class is left to the training data


class Layout(NamedTuple):
    """A tree laid out in the complete tree: three arrays of length
    ``2**(depth + 1) - 1`` in heap order."""

    feature: np.ndarray
    threshold: np.ndarray
    label: np.ndarray

    @property
    def depth(self) -> int:
        """Depth of the complete tree the arrays describe."""
        return position_level(len(self.feature) - 1)


def level_positions(level: int) -> range:
    """Heap positions of the nodes at ``level`` (the root is level 0)."""
    return range(2**level - 1, 2 ** (level + 1) - 1)


def position_level(pos: int) -> int:
    """Depth of heap position ``pos``."""
    return int(pos + 1).bit_length() - 1


def single_leaf(depth: int, label: int = UNSET) -> Layout:
    """The layout of a tree made of one leaf (the root)."""
    n = 2 ** (depth + 1) - 1
    feature = np.full(n, MISSING, dtype=np.int64)
    feature[0] = LEAF
    labels = np.full(n, UNSET, dtype=np.int64)
    labels[0] = label
    return Layout(feature, np.zeros(n), labels)


def encode(tree: Tree, depth: int | None = None) -> Layout:
    """Lay a :class:`~odtstudy.tree.Tree` out in the complete tree.

    Parameters
    ----------
    tree : Tree
    depth : int, default=None
        Depth of the complete tree; defaults to ``tree.depth``, and must be
        at least that.

    Returns
    -------
    Layout
        Leaves keep the tree's labels.
    """
    depth = tree.depth if depth is None else int(depth)
    if tree.depth > depth:
        raise ValueError(
            f"the tree has depth {tree.depth}, more than the allowed {depth}"
        )
    layout = single_leaf(depth)
    layout.feature[0] = MISSING
    labels = tree.label if tree.label is not None else np.zeros(tree.node_count)
    stack = [(0, 0)]
    while stack:
        node, pos = stack.pop()
        if tree.feature[node] < 0:
            layout.feature[pos] = LEAF
            layout.label[pos] = int(labels[node])
        else:
            layout.feature[pos] = int(tree.feature[node])
            layout.threshold[pos] = float(tree.threshold[node])
            stack.append((int(tree.left[node]), 2 * pos + 1))
            stack.append((int(tree.right[node]), 2 * pos + 2))
    return layout


def from_splits(depth: int, splits: dict, left: dict | None = None) -> Layout:
    """The layout of a complete tree given by its splits, numbered from 1.

    Parameters
    ----------
    depth : int
    splits : dict
        Node ``t`` in ``1 .. 2**depth - 1`` -> ``(feature, threshold)``; a
        node absent or mapped to ``None`` does not split and sends every row
        right (as in OCT), or left when ``left[t]`` is true.
    left : dict, default=None

    Returns
    -------
    Layout
        All ``2**depth - 1`` internal positions split (a node that does not
        split holds ``x[0] <= -inf`` or ``x[0] <= +inf``); the ``2**depth``
        leaves are unlabelled.
    """
    n_branch = 2**depth - 1
    layout = single_leaf(depth)
    layout.feature[:n_branch] = 0
    layout.feature[n_branch:] = LEAF
    for t in range(1, n_branch + 1):
        split = splits.get(t)
        if split is None:
            layout.threshold[t - 1] = np.inf if (left or {}).get(t) else -np.inf
        else:
            layout.feature[t - 1] = int(split[0])
            layout.threshold[t - 1] = float(split[1])
    return layout


def to_splits(layout: Layout) -> dict:
    """Node ``t`` (numbered from 1) -> ``(feature, threshold)`` for every
    split of ``layout``."""
    return {
        pos + 1: (int(f), float(layout.threshold[pos]))
        for pos, f in enumerate(layout.feature)
        if f >= 0
    }


def decode(
    layout: Layout, X, y, n_classes: int, sample_weight=None, *, prune: bool = False
) -> Tree:
    """Build the :class:`~odtstudy.tree.Tree` of ``layout``, fitted on ``(X, y)``.

    Parameters
    ----------
    layout : Layout
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Class indices in ``[0, n_classes)``.
    n_classes : int
    sample_weight : ndarray of shape (n_samples,), default=None
    prune : bool, default=False
        Replace a split that sends every training row to one side (a row-less
        node: to the right) by that side's subtree.

    Returns
    -------
    Tree
        Nodes in depth-first order; ``value`` and ``n_samples`` from routing
        ``(X, y)``. A leaf keeps its layout label when set, else takes the
        (weighted) majority of its rows.
    """
    feature, threshold, label = layout
    X = np.asarray(X)
    builder = TreeBuilder(n_outputs=n_classes)
    kept = {}  # node -> layout label

    def goes_left(pos, rows):
        if np.isposinf(threshold[pos]):
            return np.ones(len(rows), dtype=bool)
        if np.isneginf(threshold[pos]):
            return np.zeros(len(rows), dtype=bool)
        return X[rows, feature[pos]] <= threshold[pos]

    def rec(pos, rows):
        while feature[pos] >= 0:
            left = goes_left(pos, rows)
            if prune and (len(rows) == 0 or not left.any()):
                pos = 2 * pos + 2
            elif prune and left.all():
                pos = 2 * pos + 1
            else:
                node = builder.add_split(int(feature[pos]), float(threshold[pos]))
                builder.set_children(
                    node, rec(2 * pos + 1, rows[left]), rec(2 * pos + 2, rows[~left])
                )
                return node
        if feature[pos] == MISSING:
            raise ValueError(f"position {pos} is missing below a split")
        node = builder.add_leaf()
        kept[node] = int(label[pos])
        return node

    rec(0, np.arange(X.shape[0]))
    tree = builder.build().with_training_values(X, y, n_classes, sample_weight)
    labels = tree.label.copy()
    for node, lab in kept.items():
        if lab >= 0:
            labels[node] = lab
    fields = tree.to_arrays()
    fields["label"] = labels
    return Tree(**fields)
