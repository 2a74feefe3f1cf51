"""Helpers shared by the BinOCT and OCT models.

Positions of the complete tree of depth ``D`` are numbered in BFS order from
1: branch nodes ``1 .. 2**D - 1``, leaves ``2**D .. 2**(D+1) - 1``, children
``2t`` (left) and ``2t + 1`` (right).
"""

from __future__ import annotations

import numpy as np
import pulp
from sklearn.tree import DecisionTreeClassifier

from odtstudy.milp._export import constraint_list
from odtstudy.tree import Tree, TreeBuilder

__all__ = [
    "add_constraint",
    "branch_nodes",
    "build_tree",
    "cart_layout",
    "fit_cart",
    "leaf_nodes",
    "leaves_under",
    "misclassifications",
]


class ModelSize:
    """Size of a PuLP model held as ``self.prob``."""

    @property
    def n_variables(self) -> int:
        return self.prob.numVariables()

    @property
    def n_constraints(self) -> int:
        return self.prob.numConstraints()

    @property
    def n_nonzeros(self) -> int:
        """Non-zero coefficients of the constraint matrix."""
        return sum(len(con.expr) for con in constraint_list(self.prob))


def branch_nodes(depth: int) -> list[int]:
    return list(range(1, 2**depth))


def leaf_nodes(depth: int) -> list[int]:
    return list(range(2**depth, 2 ** (depth + 1)))


def leaves_under(t: int, depth: int) -> list[int]:
    """Leaves of the complete tree of depth ``depth`` below position ``t``."""
    level = int(np.floor(np.log2(t)))
    span = 2 ** (depth - level)
    first = t * span
    return list(range(first, first + span))


def add_constraint(prob, terms, sense, rhs, name=None):
    """Add ``sum(coef * var) <sense> rhs`` from a ``{var: coef}`` dict, fast.

    ``sense`` is ``"<="``, ``">="`` or ``"=="``. Building the expression from
    a dict avoids PuLP's operator overloading, which is slow on large sums.
    """
    senses = {
        "<=": pulp.LpConstraintLE,
        ">=": pulp.LpConstraintGE,
        "==": pulp.LpConstraintEQ,
    }
    expr = pulp.LpAffineExpression(terms)
    prob.addConstraint(pulp.LpConstraint(expr, senses[sense], name, float(rhs)))


def build_tree(depth, splits, leaf_labels, X, y, n_classes) -> Tree:
    """Turn a complete-tree assignment into a :class:`Tree` fitted on ``(X, y)``.

    Parameters
    ----------
    depth : int
    splits : dict
        Branch position -> ``(feature, threshold)`` (test ``x <= threshold``
        goes left) or ``None`` for a node that does not split (every row goes
        right, as in OCT).
    leaf_labels : dict
        Leaf position -> class index (used only for leaves no row reaches).
    X, y : training data (``y`` encoded ``0..n_classes-1``).

    Notes
    -----
    A split that sends every training row to the same side is replaced by
    that side's subtree: it does not change any training prediction.
    """
    builder = TreeBuilder(n_outputs=n_classes)
    first_leaf = 2**depth

    def rec(t, rows):
        if t >= first_leaf:
            return builder.add_leaf(label=int(leaf_labels.get(t, 0)))
        split = splits.get(t)
        if split is None:
            return rec(2 * t + 1, rows)
        j, thr = split
        go_left = X[rows, j] <= thr
        left, right = rows[go_left], rows[~go_left]
        if len(left) == 0:
            return rec(2 * t + 1, right)
        if len(right) == 0:
            return rec(2 * t, left)
        node = builder.add_split(int(j), float(thr))
        lchild = rec(2 * t, left)
        rchild = rec(2 * t + 1, right)
        builder.set_children(node, lchild, rchild)
        return node

    rec(1, np.arange(X.shape[0]))
    return builder.build().with_training_values(X, y, n_classes)


def misclassifications(tree: Tree, X, y) -> int:
    return int(np.sum(tree.predict(X) != y))


def fit_cart(X, y, depth, min_samples_leaf, random_state):
    """scikit-learn CART of the given depth (the warm start of both models)."""
    return DecisionTreeClassifier(
        max_depth=depth,
        min_samples_leaf=min_samples_leaf,
        random_state=random_state,
    ).fit(X, y)


def cart_layout(sk_tree):
    """Map a scikit-learn tree onto BFS positions of the complete tree.

    Returns
    -------
    splits : dict
        Position -> ``(feature, threshold)`` for CART's internal nodes.
    leaves : dict
        Position -> class index for CART's leaves (at any depth).
    """
    splits, leaves = {}, {}
    stack = [(0, 1)]
    while stack:
        node, pos = stack.pop()
        left = sk_tree.children_left[node]
        if left == -1:
            leaves[pos] = int(np.argmax(sk_tree.value[node, 0]))
            continue
        splits[pos] = (int(sk_tree.feature[node]), float(sk_tree.threshold[node]))
        stack.append((left, 2 * pos))
        stack.append((sk_tree.children_right[node], 2 * pos + 1))
    return splits, leaves
