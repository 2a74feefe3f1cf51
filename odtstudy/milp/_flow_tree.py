"""The tree part of the strong formulations: FlowOCT and BendersOCT.

Aghaei, Gómez and Vayanos ("Strong optimal classification trees",
Operations Research 2024) learn a tree of depth at most ``D`` on 0/1
features inside the complete tree of depth ``D`` (nodes numbered from 1, as
in :mod:`odtstudy.milp._common`). At every node ``n`` exactly one holds:

- ``b[n][f] = 1``: ``n`` branches on feature ``f`` (internal nodes only); a
  row with ``x_f = 0`` goes left (``2n``), ``x_f = 1`` right (``2n + 1``);
- ``p[n] = 1``: ``n`` predicts the class ``k`` with ``w[n][k] = 1``;
- an ancestor of ``n`` predicts (``n`` is unused):

``sum_f b[n][f] + p[n] + sum(p[m] for m ancestor of n) = 1`` and
``sum_k w[n][k] = p[n]``, so any node may be a leaf (the optimum is the
depth-limited one of DL8.5).

A row is correctly classified when one unit of flow goes from a source
through the root, along the arcs its features open, to a sink behind the
node that predicts its class. The capacity of arc ``n -> 2n + side`` for row
``x`` is ``sum(b[n][f] for f with x_f = side)``, that of ``n -> sink`` is
``w[n][y]``. :meth:`TreeVariables.capacity` writes the first with the fewer
terms, using ``sum_f b[n][f] = 1 - sum(p[m] for m in n and its ancestors)``.

Both models see the training data reduced by :func:`reduce_data`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

import numpy as np
import pulp

from odtstudy._deadline import Deadline
from odtstudy.milp._common import (
    BuildClock,
    ModelSize,
    branch_nodes,
    leaf_nodes,
    variable_dicts,
)
from odtstudy.milp._pulp_api import add_constraint, affine, variable_key

__all__ = [
    "FlowData",
    "FlowTree",
    "StrongModel",
    "TreeVariables",
    "errors",
    "from_splits",
    "reduce_data",
    "relabel",
    "terminals",
    "to_splits",
]


# --------------------------------------------------------------------- data
@dataclass(frozen=True)
class FlowData:
    """Training data as the strong formulations see it.

    Attributes
    ----------
    X : ndarray of shape (m, q), int8
        The distinct (row, class) pairs over the kept features.
    y : ndarray of shape (m,), int64
    weight : ndarray of shape (m,)
        Training rows merged into each distinct row.
    features : ndarray of shape (q,)
        Column of the original ``X`` behind each kept feature.
    alias : dict
        Original column -> ``(kept feature, flipped)``, ``flipped`` when the
        column is the kept one's complement; a constant column maps to
        ``(None, its value)``.
    n_classes : int
    n_rows : int
        Training rows in all.
    """

    X: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    features: np.ndarray
    alias: dict
    n_classes: int
    n_rows: int

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


def reduce_data(X, y, n_classes: int) -> FlowData:
    """Drop constant features, keep one of features that are equal or
    complementary, and merge identical rows of one class: neither changes
    the optimal number of errors (a split on ``1 - x_f`` is the split on
    ``x_f`` with its children swapped)."""
    X01 = (np.asarray(X) > 0.5).astype(np.int8)
    y = np.asarray(y, dtype=np.int64)
    alias, seen, kept = {}, {}, []
    for j in range(X01.shape[1]):
        col = X01[:, j]
        if col.min() == col.max():
            alias[j] = (None, bool(col[0]) if len(col) else False)
            continue
        key, flipped = col.tobytes(), (1 - col).tobytes()
        if key in seen:
            alias[j] = (seen[key], False)
        elif flipped in seen:
            alias[j] = (seen[flipped], True)
        else:
            seen[key] = len(kept)
            alias[j] = (len(kept), False)
            kept.append(j)
    pairs = np.column_stack([X01[:, kept], y])
    distinct, counts = np.unique(pairs, axis=0, return_counts=True)
    return FlowData(
        X=np.ascontiguousarray(distinct[:, :-1], dtype=np.int8),
        y=distinct[:, -1].astype(np.int64),
        weight=counts.astype(float),
        features=np.asarray(kept, dtype=np.int64),
        alias=alias,
        n_classes=int(n_classes),
        n_rows=len(y),
    )


# --------------------------------------------------------------------- trees
class FlowTree(NamedTuple):
    """A tree in the complete tree: ``splits`` maps a branching node to its
    kept feature, ``labels`` a predicting node to its class (``-1``: none)."""

    splits: dict
    labels: dict


def terminals(data: FlowData, tree: FlowTree) -> np.ndarray:
    """The predicting node each distinct row reaches."""
    node = np.ones(len(data.y), dtype=np.int64)
    moving = np.ones(len(node), dtype=bool)
    while moving.any():
        for n in np.unique(node[moving]).tolist():
            at = moving & (node == n)
            feature = tree.splits.get(n)
            if feature is None:
                moving[at] = False
            else:
                node[at] = 2 * n + data.X[at, feature].astype(np.int64)
    return node


def _labels_of(tree: FlowTree, reached: np.ndarray) -> np.ndarray:
    return np.array([tree.labels.get(int(n), -1) for n in reached], dtype=np.int64)


def errors(data: FlowData, tree: FlowTree) -> float:
    """Training rows ``tree`` misclassifies."""
    wrong = _labels_of(tree, terminals(data, tree)) != data.y
    return float(data.weight[wrong].sum())


def relabel(data: FlowData, tree: FlowTree) -> FlowTree:
    """``tree`` with each predicting node labelled by the majority of its rows
    (an unreached one keeps its label, or class 0)."""
    reached = terminals(data, tree)
    labels = {}
    for n, label in tree.labels.items():
        at = reached == n
        if at.any():
            counts = np.bincount(
                data.y[at], weights=data.weight[at], minlength=data.n_classes
            )
            labels[n] = int(np.argmax(counts))
        else:
            labels[n] = max(int(label), 0)
    return FlowTree(dict(tree.splits), labels)


def from_splits(data: FlowData, splits: dict) -> FlowTree:
    """The tree of splits ``{t: (original feature, threshold)}`` on 0/1 data
    (nodes numbered from 1, a node without a split is a leaf), majority
    labels. A split on a complement swaps its subtrees; one on a constant
    feature is replaced by the subtree its rows all take."""
    tree = FlowTree({}, {})

    def place(src, dst):
        while (split := splits.get(src)) is not None:
            kept, flag = data.alias[split[0]]
            if kept is None:
                src = 2 * src + int(flag)
                continue
            tree.splits[dst] = kept
            left, right = (2 * src + 1, 2 * src) if flag else (2 * src, 2 * src + 1)
            place(left, 2 * dst)
            place(right, 2 * dst + 1)
            return
        tree.labels[dst] = 0

    place(1, 1)
    return relabel(data, tree)


def to_splits(data: FlowData, tree: FlowTree) -> dict:
    """``{t: (original feature, 0.5)}`` of the branching nodes: a node without
    a split sends every row right, which :func:`odtstudy._complete_tree.decode`
    prunes into a leaf."""
    return {n: (int(data.features[f]), 0.5) for n, f in tree.splits.items()}


# ----------------------------------------------------------------- variables
def ancestry(n: int) -> list[int]:
    """``n`` and its ancestors, ``n`` first."""
    line = [n]
    while line[-1] > 1:
        line.append(line[-1] // 2)
    return line


def merge_terms(terms) -> list:
    """``(variable, coefficient)`` pairs with repeated variables summed."""
    merged = {}
    for var, coef in terms:
        key = variable_key(var)
        old = merged.get(key)
        merged[key] = (var, coef if old is None else old[1] + coef)
    return [pair for pair in merged.values() if pair[1] != 0]


class TreeVariables:
    """``b``, ``p``, ``w`` of the complete tree of depth ``depth`` and their
    constraints, added to ``prob``.

    Parameters
    ----------
    prob : pulp.LpProblem
    depth, n_features, n_classes : int
    clock : BuildClock
        Ticks as variables and constraints are made (and by :meth:`start`).
    """

    def __init__(self, prob, depth: int, n_features: int, n_classes: int, clock):
        self.depth = int(depth)
        self.branches = branch_nodes(self.depth)
        self.leaves = leaf_nodes(self.depth)
        self.nodes = [*self.branches, *self.leaves]
        self.n_features = int(n_features)
        self.n_classes = int(n_classes)
        self._clock = clock
        features, classes = range(self.n_features), range(self.n_classes)
        binary = pulp.LpBinary
        self.b = variable_dicts(prob, clock, "b", (self.branches, features), cat=binary)
        self.p = variable_dicts(prob, clock, "p", self.nodes, cat=binary)
        self.w = variable_dicts(prob, clock, "w", (self.nodes, classes), cat=binary)
        for n in self.nodes:
            terms = [(self.p[m], 1.0) for m in ancestry(n)]
            if n < 2**self.depth:
                terms += [(self.b[n][f], 1.0) for f in features]
            add_constraint(prob, terms, "==", 1)
            terms = [(self.w[n][k], 1.0) for k in classes]
            add_constraint(prob, [*terms, (self.p[n], -1.0)], "==", 0)
            clock.tick(self.n_features + self.n_classes + self.depth)

    def branching(self, n: int):
        """``sum_f b[n][f]`` as ``(terms, constant)``: ``1 - sum(p)`` over
        ``n`` and its ancestors."""
        return [(self.p[m], -1.0) for m in ancestry(n)], 1.0

    def capacity(self, n: int, row, side: int):
        """Capacity of arc ``n -> 2n + side`` for the 0/1 ``row``, as
        ``(terms, constant)``, in the form with fewer terms."""
        on_side = np.flatnonzero(row == side).tolist()
        if 2 * len(on_side) <= self.n_features:
            return [(self.b[n][f], 1.0) for f in on_side], 0.0
        terms, constant = self.branching(n)
        others = np.flatnonzero(row != side).tolist()
        return terms + [(self.b[n][f], -1.0) for f in others], constant

    def cut(self, row, label: int, terminal: int):
        """The min cut of the row's flow network when it stops at
        ``terminal``, as ``(terms, constant)``: the arcs leaving the path
        from the root to ``terminal`` (to the children it does not take, to
        both children of ``terminal``, and to the sink from every node on
        it). The row's flow, hence its correctness, is at most this."""
        path = ancestry(terminal)[::-1]
        terms, constant = [], 0.0
        for n, child in pairwise(path):
            more, extra = self.capacity(n, row, 1 - child % 2)
            terms += more
            constant += extra
        if terminal < 2**self.depth:
            more, extra = self.branching(terminal)
            terms += more
            constant += extra
        terms += [(self.w[n][label], 1.0) for n in path]
        return merge_terms(terms), constant

    def start(self, tree: FlowTree) -> None:
        """Set ``b``, ``p``, ``w`` to ``tree`` as the solver's start."""
        for n in self.branches:
            chosen = tree.splits.get(n)
            for f in range(self.n_features):
                self.b[n][f].setInitialValue(1 if f == chosen else 0)
            self._clock.tick(self.n_features)
        for n in self.nodes:
            self._clock.tick(self.n_classes + 1)
            label = tree.labels.get(n)
            self.p[n].setInitialValue(0 if label is None else 1)
            for k in range(self.n_classes):
                self.w[n][k].setInitialValue(
                    1 if label is not None and k == label else 0
                )

    def read(self) -> FlowTree:
        """The tree of the solver's values (``-1`` labels a node whose class
        the values leave open)."""
        tree = FlowTree({}, {})
        stack = [1]
        while stack:
            n = stack.pop()
            if n >= 2**self.depth or _value(self.p[n]) > 0.5:
                values = [_value(self.w[n][k]) for k in range(self.n_classes)]
                best = int(np.argmax(values))
                tree.labels[n] = best if values[best] > 0.5 else -1
                continue
            values = [_value(self.b[n][f]) for f in range(self.n_features)]
            tree.splits[n] = int(np.argmax(values))
            stack += [2 * n, 2 * n + 1]
        return tree


def _value(var) -> float:
    return var.varValue or 0.0


# --------------------------------------------------------------------- model
class StrongModel(ModelSize):
    """A strong formulation's PuLP model (``prob``) on the reduced data,
    its tree variables built; subclasses add the rest in ``_build``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        0/1 features.
    y : ndarray of int, classes ``0..n_classes-1``
    n_classes, depth : int
    deadline : Deadline or None
        Building (and a warm start) raises
        :class:`~odtstudy._deadline.DeadlineReached` once it passes.

    Attributes
    ----------
    usable : bool
        False when no feature splits the data (then there is no model).
    data : FlowData
        The reduced training data.
    tree : TreeVariables
    """

    name = "strong"

    def __init__(self, X, y, n_classes, depth, deadline=None):
        self.data = reduce_data(X, y, n_classes)
        self.depth = int(depth)
        self.usable = self.data.n_features > 0
        self._deadline = Deadline.of(deadline)
        self._clock = BuildClock(
            self._deadline, f"while building the {self.name} model"
        )
        if self.usable:
            self.prob = pulp.LpProblem(self.name, pulp.LpMinimize)
            self.tree = TreeVariables(
                self.prob,
                self.depth,
                self.data.n_features,
                self.data.n_classes,
                self._clock,
            )
            self._build()

    def _build(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _minimise_errors(self, correct) -> None:
        """Objective: training rows minus those ``correct[i]`` counts (each
        distinct row weighted by the rows it merges)."""
        weights = self.data.weight.tolist()
        objective = affine([(correct[i], -w) for i, w in enumerate(weights)])
        objective.constant = float(self.data.n_rows)
        self.prob.setObjective(objective)
