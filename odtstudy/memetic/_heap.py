"""Fixed-shape trees stored in heap (breadth-first) order.

TAO and TMO both work on trees of a bounded depth ``D``. Such a tree fits in
the complete binary tree of depth ``D``: position 0 is the root and the
children of position ``z`` are ``2z + 1`` (left) and ``2z + 2`` (right). Each
position is a branch (``feature >= 0``), a leaf (``feature == LEAF``) or is
missing (``feature == MISSING``). This layout gives vectorised routing (one
numpy step per depth level), cheap copies for the memetic search, and the
fixed-length encoding of TMO for free (see :mod:`odtstudy.memetic._encoding`).
The layout and its conversions to and from :class:`~odtstudy.tree.Tree` are
the codec shared with the MILP and CP models (:mod:`odtstudy._complete_tree`).
"""

from __future__ import annotations

import numpy as np

from odtstudy import _complete_tree as codec
from odtstudy._complete_tree import (
    LEAF,
    MISSING,
    UNSET,
    level_positions,
)
from odtstudy.tree import Tree

__all__ = [
    "LEAF",
    "MISSING",
    "UNSET",
    "HeapTree",
    "level_positions",
]


class HeapTree:
    """A binary tree of depth at most ``depth`` in heap order.

    Parameters
    ----------
    depth : int
        Depth of the complete tree whose positions are stored.
    feature : ndarray of int, shape (2**(depth + 1) - 1,)
        Feature tested at a branch; ``LEAF`` (-1) or ``MISSING`` (-2).
    threshold : ndarray of float, shape (2**(depth + 1) - 1,)
        A row goes left when ``x[feature] <= threshold``.
    label : ndarray of int, shape (2**(depth + 1) - 1,)
        Class index predicted at a leaf (``UNSET`` when not chosen yet);
        ignored elsewhere.
    """

    __slots__ = ("depth", "feature", "label", "threshold")

    def __init__(self, depth, feature, threshold, label):
        self.depth = int(depth)
        self.feature = np.asarray(feature, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.label = np.asarray(label, dtype=np.int64)

    # ---------------------------------------------------------- construction
    @classmethod
    def single_leaf(cls, depth: int, label: int = UNSET) -> HeapTree:
        """A tree made of one leaf at the root."""
        return cls(depth, *codec.single_leaf(depth, label))

    @classmethod
    def from_tree(cls, tree: Tree, depth: int | None = None) -> HeapTree:
        """Lay a :class:`~odtstudy.tree.Tree` out in heap order.

        Parameters
        ----------
        tree : Tree
        depth : int, default=None
            Depth of the heap; defaults to ``tree.depth``. Must be at least
            the tree's depth.
        """
        layout = codec.encode(tree, depth)
        return cls(layout.depth, *layout)

    def copy(self) -> HeapTree:
        return HeapTree(
            self.depth, self.feature.copy(), self.threshold.copy(), self.label.copy()
        )

    def __eq__(self, other) -> bool:
        if not isinstance(other, HeapTree):
            return NotImplemented
        present = self.feature != MISSING
        leaves = self.feature == LEAF
        branches = self.feature >= 0
        return (
            self.depth == other.depth
            and np.array_equal(self.feature, other.feature)
            and np.array_equal(self.threshold[branches], other.threshold[branches])
            and np.array_equal(self.label[leaves], other.label[leaves])
            and bool(np.all(present == (other.feature != MISSING)))
        )

    __hash__ = None

    def __repr__(self) -> str:
        return (
            f"HeapTree(depth={self.depth}, branches={int(np.sum(self.feature >= 0))}, "
            f"leaves={int(np.sum(self.feature == LEAF))})"
        )

    # ------------------------------------------------------------- structure
    @property
    def n_positions(self) -> int:
        return int(self.feature.shape[0])

    def subtree_positions(self, pos: int) -> np.ndarray:
        """All heap positions below and including ``pos`` (present or not)."""
        out = []
        first, width = pos, 1
        while first < self.n_positions:
            out.append(np.arange(first, first + width))
            first, width = 2 * first + 1, 2 * width
        return np.concatenate(out)

    def make_leaf(self, pos: int, label: int = UNSET) -> None:
        """Turn ``pos`` into a leaf; its descendants become missing."""
        below = self.subtree_positions(pos)[1:]
        self.feature[below] = MISSING
        self.label[below] = UNSET
        self.feature[pos] = LEAF
        self.label[pos] = label

    def make_branch(self, pos: int, feature: int, threshold: float) -> None:
        """Turn the leaf (or missing node) ``pos`` into a branch with leaf children.

        Both children must fit in the heap.
        """
        self.feature[pos] = int(feature)
        self.threshold[pos] = float(threshold)
        self.label[pos] = UNSET
        for child in (2 * pos + 1, 2 * pos + 2):
            self.make_leaf(child)

    def move_subtree(self, src: int, dst: int) -> None:
        """Replace the subtree at ``dst`` by the one at ``src`` (a descendant)."""
        items = []
        stack = [(src, dst)]
        while stack:
            p, q = stack.pop()
            items.append((q, self.feature[p], self.threshold[p], self.label[p]))
            if self.feature[p] >= 0:
                stack.append((2 * p + 1, 2 * q + 1))
                stack.append((2 * p + 2, 2 * q + 2))
        cleared = self.subtree_positions(dst)
        self.feature[cleared] = MISSING
        self.label[cleared] = UNSET
        for q, f, t, lab in items:
            self.feature[q] = f
            self.threshold[q] = t
            self.label[q] = lab

    def fix_last_level(self) -> None:
        """Make the deepest level consistent: a leaf iff its parent is a branch.

        Nodes at depth ``depth`` are always leaves when present (TMO's
        encoding leaves them implicit).
        """
        if self.depth == 0:
            return
        pos = np.arange(2**self.depth - 1, self.n_positions)
        parent_branch = self.feature[(pos - 1) // 2] >= 0
        was_leaf = self.feature[pos] == LEAF
        self.feature[pos] = np.where(parent_branch, LEAF, MISSING)
        self.label[pos] = np.where(parent_branch & was_leaf, self.label[pos], UNSET)

    def check(self) -> None:
        """Raise ``ValueError`` when the arrays do not form a tree."""
        f = self.feature
        if f[0] == MISSING:
            raise ValueError("the root is missing")
        for pos in range(1, self.n_positions):
            parent_branch = f[(pos - 1) // 2] >= 0
            if parent_branch != (f[pos] != MISSING):
                raise ValueError(f"position {pos} is inconsistent with its parent")
        last = np.arange(2**self.depth - 1, self.n_positions)
        if np.any(f[last] >= 0):
            raise ValueError("a node at the maximum depth is a branch")

    # --------------------------------------------------------------- routing
    def route(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Route every row of ``X`` from the root.

        Returns
        -------
        path : ndarray of int, shape (depth + 1, n_rows)
            ``path[level, i]`` is the position row ``i`` visits at ``level``,
            or -1 when it stopped at a leaf higher up.
        leaf : ndarray of int, shape (n_rows,)
            The leaf position each row reaches.
        """
        n = X.shape[0]
        path = np.full((self.depth + 1, n), -1, dtype=np.int64)
        pos = np.zeros(n, dtype=np.int64)
        alive = np.arange(n)
        for level in range(self.depth + 1):
            path[level, alive] = pos[alive]
            cur = pos[alive]
            branch = self.feature[cur] >= 0
            alive = alive[branch]
            if alive.size == 0:
                break
            cur = cur[branch]
            right = X[alive, self.feature[cur]] > self.threshold[cur]
            pos[alive] = 2 * cur + 1 + right
        return path, pos

    def descend(self, X: np.ndarray, start: np.ndarray) -> np.ndarray:
        """Leaf positions reached when row ``i`` starts at position ``start[i]``."""
        pos = np.array(start, dtype=np.int64, copy=True)
        active = np.flatnonzero(self.feature[pos] >= 0)
        while active.size:
            cur = pos[active]
            right = X[active, self.feature[cur]] > self.threshold[cur]
            pos[active] = 2 * cur + 1 + right
            active = active[self.feature[pos[active]] >= 0]
        return pos

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf position of each row."""
        return self.descend(X, np.zeros(X.shape[0], dtype=np.int64))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class index predicted for each row."""
        return self.label[self.apply(X)]

    # ------------------------------------------------------------- to a Tree
    def to_tree(self, X, y, n_classes, sample_weight=None) -> Tree:
        """Build the common :class:`~odtstudy.tree.Tree`.

        ``value`` and ``n_samples`` come from routing ``(X, y)``; leaves keep
        this heap's labels (internal nodes get the weighted majority).
        """
        layout = codec.Layout(self.feature, self.threshold, self.label)
        return codec.decode(layout, X, y, n_classes, sample_weight)
