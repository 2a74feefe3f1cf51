"""BinOCT (Verwer & Zhang, AAAI 2019) as a PuLP model.

Formulation: ``methods.md`` section 1. Each branch node picks a feature with
binaries ``f[t][j]`` and a threshold index ``tau`` encoded in ``B`` bits
``q[t][k]`` through a binary search tree (BST) over the feature's candidate
cuts; routing variables ``z[i][l]`` are continuous (integral at every
feasible point), errors ``e[l][c]`` are continuous.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pulp

from odtstudy.milp._common import (
    BuildClock,
    ModelSize,
    branch_nodes,
    leaf_nodes,
    leaves_under,
    variable_dicts,
)
from odtstudy.milp._pulp_api import add_constraint, affine

__all__ = [
    "BinOCTModel",
    "RoutingRule",
    "bst_decode",
    "bst_encode",
    "routing_rules",
    "threshold_candidates",
]


# ---------------------------------------------------------------- thresholds
def threshold_candidates(X, y) -> list[np.ndarray]:
    """BinOCT's candidate cuts per feature (sorted, never equal to a value).

    A midpoint between consecutive distinct values ``v_k < v_{k+1}`` is kept
    unless every row with value ``v_k`` or ``v_{k+1}`` has one and the same
    class.
    """
    cuts = []
    for j in range(X.shape[1]):
        col = X[:, j]
        values = np.unique(col)
        if len(values) < 2:
            cuts.append(np.empty(0))
            continue
        pos = np.searchsorted(values, col)
        # classes seen at each distinct value: pure value -> its class, else -1
        first = np.full(len(values), -2, dtype=np.int64)
        for v_idx, label in zip(pos, y):
            if first[v_idx] == -2:
                first[v_idx] = label
            elif first[v_idx] != label:
                first[v_idx] = -1
        keep = ~((first[:-1] >= 0) & (first[:-1] == first[1:]))
        mids = (values[:-1] + values[1:]) / 2.0
        cuts.append(mids[keep])
    return cuts


# ----------------------------------------------------------------- BST code
@dataclass(frozen=True)
class RoutingRule:
    """One routing constraint family of BinOCT for a feature with ``K`` cuts.

    Rows whose value lies strictly between cut ``lo`` and cut ``hi`` (cut
    ``-1`` is -inf, cut ``K`` is +inf) may not go to side ``forbidden``
    ("left" or "right") when the node tests the feature, every bit in
    ``ones`` is 1 and every bit in ``zeros`` is 0.
    """

    forbidden: str
    lo: int
    hi: int
    ones: tuple[int, ...]
    zeros: tuple[int, ...]


def _bst(lo, hi, level, up, low, out):
    if hi <= lo:
        return
    s = lo if hi - lo == 1 else lo + (hi - lo) // 2
    out.append((lo, hi, s, level, tuple(up), tuple(low)))
    _bst(lo, s, level + 1, up, [*low, level], out)
    _bst(s + 1, hi, level + 1, [*up, level], low, out)


def bst_nodes(K: int):
    """Internal BST nodes over ``0..K-1``: ``(lo, hi, s, level, A_U, A_L)``.

    ``A_U`` / ``A_L`` are the levels (= bit indices) of the ancestors whose
    upper / lower part contains the node.
    """
    out = []
    _bst(0, K - 1, 0, [], [], out)
    return out


def n_bits(K: int) -> int:
    return 0 if K <= 1 else math.ceil(math.log2(K))


def routing_rules(K: int) -> list[RoutingRule]:
    """Constraints (4)-(6) of BinOCT for one feature with ``K >= 1`` cuts."""
    rules = [
        RoutingRule("right", -1, 0, (), ()),  # x < c_0 goes left
        RoutingRule("left", K - 1, K, (), ()),  # x > c_{K-1} goes right
    ]
    for lo, hi, s, level, up, low in bst_nodes(K):
        rules.append(RoutingRule("right", lo, s + 1, (level, *up), ()))
        rules.append(RoutingRule("left", s, hi, (), (level, *low)))
    return rules


def bst_decode(K: int, bits) -> int:
    """Threshold index ``tau`` encoded by ``bits`` (1 -> upper part)."""
    lo, hi, level = 0, K - 1, 0
    while hi > lo:
        s = lo if hi - lo == 1 else lo + (hi - lo) // 2
        if level < len(bits) and bits[level]:
            lo = s + 1
        else:
            hi = s
        level += 1
    return lo


def bst_encode(K: int, tau: int, n_bits_total: int) -> list[int]:
    """Bits (length ``n_bits_total``, unused bits 0) that decode to ``tau``."""
    bits = [0] * n_bits_total
    lo, hi, level = 0, K - 1, 0
    while hi > lo:
        s = lo if hi - lo == 1 else lo + (hi - lo) // 2
        if tau > s:
            bits[level] = 1
            lo = s + 1
        else:
            hi = s
        level += 1
    return bits


# -------------------------------------------------------------------- model
class BinOCTModel(ModelSize):
    """The BinOCT MILP for one training set.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    y : ndarray of int, classes ``0..n_classes-1``
    n_classes : int
    depth : int
    min_samples_leaf : int
        ``N_min``: a leaf reached by any row holds at least that many rows.
    deadline : Deadline or None
        Building (and the warm start) raises
        :class:`~odtstudy._deadline.DeadlineReached` once it passes.
    """

    def __init__(self, X, y, n_classes, depth, min_samples_leaf=1, deadline=None):
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.depth = int(depth)
        self.min_samples_leaf = int(min_samples_leaf)
        self.cuts = threshold_candidates(self.X, self.y)
        self.usable = [j for j, c in enumerate(self.cuts) if len(c) >= 1]
        self.B = max((n_bits(len(c)) for c in self.cuts), default=0)
        self.branches = branch_nodes(self.depth)
        self.leaves = leaf_nodes(self.depth)
        # position of each row among the feature's cuts: # cuts below x
        self.cut_pos = {
            j: np.searchsorted(self.cuts[j], self.X[:, j]) for j in self.usable
        }
        self._clock = BuildClock(deadline, "while building the BinOCT model")
        self._build()

    # ------------------------------------------------------------ building
    def _build(self):
        n = len(self.y)
        rows = range(n)
        classes = range(self.n_classes)
        prob = pulp.LpProblem("BinOCT", pulp.LpMinimize)
        clock, binary = self._clock, pulp.LpBinary
        self.f = variable_dicts(
            prob, clock, "f", (self.branches, self.usable), cat=binary
        )
        self.q = (
            variable_dicts(prob, clock, "q", (self.branches, range(self.B)), cat=binary)
            if self.B
            else {t: {} for t in self.branches}
        )
        self.p = variable_dicts(prob, clock, "p", (self.leaves, classes), cat=binary)
        self.z = variable_dicts(prob, clock, "z", (rows, self.leaves), 0, 1)
        self.e = variable_dicts(prob, clock, "e", (self.leaves, classes), 0)
        z, f, q = self.z, self.f, self.q

        prob.setObjective(
            affine({self.e[leaf][c]: 1 for leaf in self.leaves for c in classes})
        )
        for t in self.branches:  # (1)
            clock.tick(len(self.usable))
            add_constraint(prob, {f[t][j]: 1 for j in self.usable}, "==", 1)
        for i in rows:  # (2)
            clock.tick(len(self.leaves))
            add_constraint(prob, {z[i][leaf]: 1 for leaf in self.leaves}, "==", 1)
        for leaf in self.leaves:  # (3)
            clock.tick(self.n_classes)
            add_constraint(prob, {self.p[leaf][c]: 1 for c in classes}, "==", 1)

        rules = {j: routing_rules(len(self.cuts[j])) for j in self.usable}
        for t in self.branches:  # (4)-(6)
            side_leaves = {
                "left": leaves_under(2 * t, self.depth),
                "right": leaves_under(2 * t + 1, self.depth),
            }
            for j in self.usable:
                pos = self.cut_pos[j]
                for rule in rules[j]:
                    members = np.flatnonzero((pos >= rule.lo + 1) & (pos <= rule.hi))
                    clock.tick(1 + len(members) * len(side_leaves[rule.forbidden]))
                    if len(members) == 0:
                        continue
                    big_m = float(len(members))
                    terms = [
                        (z[i][leaf], 1.0)
                        for i in members.tolist()
                        for leaf in side_leaves[rule.forbidden]
                    ]
                    terms.append((f[t][j], big_m))
                    terms.extend((q[t][k], big_m) for k in rule.ones)
                    terms.extend((q[t][k], -big_m) for k in rule.zeros)
                    add_constraint(prob, terms, "<=", big_m * (1 + len(rule.ones)))

        n_c = np.bincount(self.y, minlength=self.n_classes)
        for leaf in self.leaves:  # (7)
            clock.tick(n + 2 * self.n_classes)
            for c in classes:
                terms = [
                    (z[i][leaf], 1.0) for i in np.flatnonzero(self.y == c).tolist()
                ]
                terms.append((self.p[leaf][c], -float(n_c[c])))
                terms.append((self.e[leaf][c], -1.0))
                add_constraint(prob, terms, "<=", 0)

        self.a = None
        if self.min_samples_leaf > 1:
            self.a = variable_dicts(prob, clock, "a", self.leaves, cat=binary)
            for leaf in self.leaves:
                for i in rows:
                    clock.tick(2)
                    add_constraint(prob, {z[i][leaf]: 1, self.a[leaf]: -1}, "<=", 0)
                clock.tick(n)
                terms = {z[i][leaf]: 1.0 for i in rows}
                terms[self.a[leaf]] = -float(self.min_samples_leaf)
                add_constraint(prob, terms, ">=", 0)
        self.prob = prob

    # ---------------------------------------------------------- warm start
    def route(self, assignment):
        """Leaf reached by each row for ``{t: (j, tau)}`` (``x < c_tau`` left)."""
        node = np.ones(len(self.y), dtype=np.int64)
        for _ in range(self.depth):
            nxt = np.empty_like(node)
            for t in np.unique(node):
                mask = node == t
                j, tau = assignment[int(t)]
                go_left = self.X[mask, j] < self.cuts[j][tau]
                nxt[mask] = np.where(go_left, 2 * t, 2 * t + 1)
            node = nxt
        return node

    def assignment_from_splits(self, splits):
        """``{t: (j, tau)}`` for every branch position from CART-like splits.

        Positions with a split ``(j, threshold)`` take the cut of ``j`` nearest
        to the threshold; the other positions (below a shallow leaf) take a
        cut that sends all their rows one way when one exists.
        """
        assignment = {}
        default_j = self.usable[0]
        node = np.ones(len(self.y), dtype=np.int64)
        for level in range(self.depth):
            nxt = np.empty_like(node)
            for t in range(2**level, 2 ** (level + 1)):
                self._clock.tick(1 + len(node) // 64)
                mask = node == t
                split = splits.get(t)
                if split is not None and len(self.cuts[split[0]]):
                    j, thr = split
                    tau = int(np.argmin(np.abs(self.cuts[j] - thr)))
                else:
                    j, tau = default_j, len(self.cuts[default_j]) - 1
                    vals = self.X[mask]
                    if mask.any():
                        for jj in self.usable:
                            if vals[:, jj].max() < self.cuts[jj][-1]:
                                j, tau = jj, len(self.cuts[jj]) - 1
                                break
                            if vals[:, jj].min() > self.cuts[jj][0]:
                                j, tau = jj, 0
                                break
                assignment[t] = (j, tau)
                go_left = self.X[:, j] < self.cuts[j][tau]
                nxt[mask] = np.where(go_left[mask], 2 * t, 2 * t + 1)
            node = nxt
        return assignment

    def set_warm_start(self, assignment) -> float | None:
        """Give the solver the solution of ``{t: (j, tau)}``.

        Returns its objective, or ``None`` when it violates ``N_min`` (then no
        warm start is set).
        """
        leaf_of = self.route(assignment)
        counts = {
            leaf: np.bincount(self.y[leaf_of == leaf], minlength=self.n_classes)
            for leaf in self.leaves
        }
        self._clock.tick(len(self.leaves) * (1 + len(leaf_of) // 64))
        sizes = {leaf: int(c.sum()) for leaf, c in counts.items()}
        if any(0 < s < self.min_samples_leaf for s in sizes.values()):
            return None
        for t in self.branches:
            self._clock.tick(len(self.usable) + self.B)
            j, tau = assignment[t]
            for jj in self.usable:
                self.f[t][jj].setInitialValue(1 if jj == j else 0)
            bits = bst_encode(len(self.cuts[j]), tau, self.B)
            for k in range(self.B):
                self.q[t][k].setInitialValue(bits[k])
        objective = 0
        for leaf in self.leaves:
            self._clock.tick(2 * self.n_classes)
            label = int(np.argmax(counts[leaf]))
            for c in range(self.n_classes):
                self.p[leaf][c].setInitialValue(1 if c == label else 0)
                err = 0 if c == label else int(counts[leaf][c])
                self.e[leaf][c].setInitialValue(err)
                objective += err
            if self.a is not None:
                self.a[leaf].setInitialValue(1 if sizes[leaf] else 0)
        for i, li in enumerate(leaf_of):
            self._clock.tick(len(self.leaves))
            for leaf in self.leaves:
                self.z[i][leaf].setInitialValue(1 if leaf == li else 0)
        return float(objective)

    # -------------------------------------------------------------- decode
    def decode(self):
        """Splits ``{t: (j, cut)}`` and leaf labels from the solver's values."""
        splits = {}
        for t in self.branches:
            j = max(self.usable, key=lambda jj: self.f[t][jj].varValue or 0.0)
            bits = [(self.q[t][k].varValue or 0.0) > 0.5 for k in range(self.B)]
            tau = bst_decode(len(self.cuts[j]), bits)
            # x < cut  <=>  x <= cut, since cuts never equal a data value
            splits[t] = (j, float(self.cuts[j][tau]))
        labels = {
            leaf: max(
                range(self.n_classes), key=lambda c: self.p[leaf][c].varValue or 0.0
            )
            for leaf in self.leaves
        }
        return splits, labels
