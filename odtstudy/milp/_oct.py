"""Axis-aligned OCT (Bertsimas & Dunn 2017) as a PuLP model.

Formulation: ``methods.md`` section 2, including the
``(1 + eps_max)(1 - d_m)`` term in the left-branch constraint (without it a
node that does not split may still partition the data for free) and the
variant without ``b`` for 0/1 features.
"""

from __future__ import annotations

import numpy as np
import pulp

from odtstudy.milp._common import (
    BuildClock,
    ModelSize,
    branch_nodes,
    leaf_nodes,
    variable_dicts,
)
from odtstudy.milp._pulp_api import add_constraint, affine

__all__ = ["OCTModel", "scale_features"]


def scale_features(X, how="minmax"):
    """Scale each column to [0, 1]; return ``(X_scaled, eps)``.

    ``how="minmax"`` uses the training min / max (the paper);
    ``how="rank"`` replaces each value by ``rank / (#distinct - 1)``, which
    admits the same partitions with well-separated values. ``eps[j]`` is the
    smallest positive gap between consecutive distinct scaled values of
    column ``j`` (1 when the column is constant).
    """
    X = np.asarray(X, dtype=float)
    Xs = np.zeros_like(X)
    eps = np.ones(X.shape[1])
    for j in range(X.shape[1]):
        col = X[:, j]
        values = np.unique(col)
        if len(values) < 2:
            continue
        if how == "rank":
            Xs[:, j] = np.searchsorted(values, col) / (len(values) - 1)
        else:
            lo, hi = values[0], values[-1]
            Xs[:, j] = (col - lo) / (hi - lo)
        gaps = np.diff(np.unique(Xs[:, j]))
        eps[j] = float(gaps[gaps > 0].min())
    return Xs, eps


class OCTModel(ModelSize):
    """The OCT MILP for one training set.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Original features (scaled inside).
    y : ndarray of int, classes ``0..n_classes-1``
    n_classes, depth : int
    alpha : float
        Complexity penalty per split.
    min_samples_leaf : int
        ``N_min``.
    scaling : {"minmax", "rank"}
    deadline : Deadline or None
        Building (and the warm start) raises
        :class:`~odtstudy._deadline.DeadlineReached` once it passes.
    """

    def __init__(
        self,
        X,
        y,
        n_classes,
        depth,
        alpha=0.0,
        min_samples_leaf=1,
        scaling="minmax",
        deadline=None,
    ):
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=np.int64)
        self.n_classes = int(n_classes)
        self.depth = int(depth)
        self.alpha = float(alpha)
        self.min_samples_leaf = int(min_samples_leaf)
        self.binary = bool(np.isin(self.X, (0.0, 1.0)).all())
        if self.binary:
            self.Xs, self.eps = self.X.copy(), np.ones(self.X.shape[1])
        else:
            self.Xs, self.eps = scale_features(self.X, scaling)
        self.eps_max = float(self.eps.max()) if len(self.eps) else 1.0
        n_c = np.bincount(self.y, minlength=self.n_classes)
        self.baseline = float(len(self.y) - n_c.max())  # L-hat
        self.branches = branch_nodes(self.depth)
        self.leaves = leaf_nodes(self.depth)
        self._clock = BuildClock(deadline, "while building the OCT model")
        self._build()

    def _ancestors(self, leaf):
        """``(A_L, A_R)``: ancestors whose left / right branch leads to ``leaf``."""
        left, right = [], []
        t = leaf
        while t > 1:
            parent = t // 2
            (left if t % 2 == 0 else right).append(parent)
            t = parent
        return left, right

    def _build(self):
        n, p = self.Xs.shape
        rows, feats = range(n), range(p)
        classes = range(self.n_classes)
        prob = pulp.LpProblem("OCT", pulp.LpMinimize)
        clock, binary = self._clock, pulp.LpBinary

        def variables(name, indices, low=None, up=None, cat=pulp.LpContinuous):
            return variable_dicts(prob, clock, name, indices, low, up, cat)

        self.a = variables("a", (self.branches, feats), cat=binary)
        self.d = variables("d", self.branches, cat=binary)
        self.b = None if self.binary else variables("b", self.branches, 0, 1)
        self.z = variables("z", (rows, self.leaves), cat=binary)
        self.l = variables("l", self.leaves, cat=binary)
        self.c = variables("c", (classes, self.leaves), cat=binary)
        self.Nk = variables("Nk", (classes, self.leaves), 0)
        self.N = variables("N", self.leaves, 0)
        self.L = variables("L", self.leaves, 0)
        a, b, d, z = self.a, self.b, self.d, self.z

        objective = {self.L[t]: 1.0 / self.baseline for t in self.leaves}
        if self.alpha:
            objective.update({d[t]: self.alpha for t in self.branches})
        prob.setObjective(affine(objective))

        for t in self.branches:  # (1)
            clock.tick(p + 5)
            terms = {a[t][j]: 1 for j in feats}
            terms[d[t]] = -1
            add_constraint(prob, terms, "==", 0)
            if b is not None:
                add_constraint(prob, {b[t]: 1, d[t]: -1}, "<=", 0)
            if t != 1:
                add_constraint(prob, {d[t]: 1, d[t // 2]: -1}, "<=", 0)

        for t in self.leaves:  # (2)
            for i in rows:
                clock.tick(2)
                add_constraint(prob, {z[i][t]: 1, self.l[t]: -1}, "<=", 0)
            clock.tick(n)
            terms = {z[i][t]: 1 for i in rows}
            terms[self.l[t]] = -float(self.min_samples_leaf)
            add_constraint(prob, terms, ">=", 0)
        for i in rows:
            clock.tick(len(self.leaves))
            add_constraint(prob, {z[i][t]: 1 for t in self.leaves}, "==", 1)

        big = 1.0 + self.eps_max
        for t in self.leaves:  # (3), (4)
            anc_left, anc_right = self._ancestors(t)
            for i in rows:
                clock.tick(self.depth * (p + 3))
                x = self.Xs[i]
                for m in anc_right:
                    terms = {a[m][j]: float(x[j]) for j in feats if x[j] != 0}
                    if b is None:  # a x >= d - (1 - z)
                        terms[d[m]] = -1.0
                    else:  # a x >= b - (1 - z)
                        terms[b[m]] = -1.0
                    terms[z[i][t]] = -1.0
                    add_constraint(prob, terms, ">=", -1)
                for m in anc_left:
                    if b is None:  # a x + (1 - d) <= 1 - z
                        terms = {a[m][j]: float(x[j]) for j in feats if x[j] != 0}
                        terms[d[m]] = -1.0
                        terms[z[i][t]] = 1.0
                        add_constraint(prob, terms, "<=", 0)
                    else:
                        # a (x + eps) + big (1 - d) <= b + big (1 - z)
                        terms = {a[m][j]: float(x[j] + self.eps[j]) for j in feats}
                        terms[d[m]] = -big
                        terms[b[m]] = -1.0
                        terms[z[i][t]] = big
                        add_constraint(prob, terms, "<=", 0)

        for t in self.leaves:  # (5), (6)
            clock.tick(2 * n + 6 * self.n_classes)
            for k in classes:
                terms = {z[int(i)][t]: 1 for i in np.flatnonzero(self.y == k)}
                terms[self.Nk[k][t]] = -1
                add_constraint(prob, terms, "==", 0)
            terms = {z[i][t]: 1 for i in rows}
            terms[self.N[t]] = -1
            add_constraint(prob, terms, "==", 0)
            terms = {self.c[k][t]: 1 for k in classes}
            terms[self.l[t]] = -1
            add_constraint(prob, terms, "==", 0)
            for k in classes:
                # L >= N - Nk - n (1 - c)
                add_constraint(
                    prob,
                    {self.L[t]: 1, self.N[t]: -1, self.Nk[k][t]: 1, self.c[k][t]: -n},
                    ">=",
                    -n,
                )
                # L <= N - Nk + n c
                add_constraint(
                    prob,
                    {self.L[t]: 1, self.N[t]: -1, self.Nk[k][t]: 1, self.c[k][t]: -n},
                    "<=",
                    0,
                )
        self.prob = prob

    # ---------------------------------------------------------- warm start
    def set_warm_start(self, splits) -> float | None:
        """Warm start from CART's layout ``{position: (feature, threshold)}``.

        Returns the warm start's objective, or ``None`` when it breaks
        ``N_min`` (then no warm start is set).
        """
        n = len(self.y)
        leaf_of = np.empty(n, dtype=np.int64)
        active = {}
        node = np.ones(n, dtype=np.int64)
        for _ in range(self.depth):
            nxt = np.empty_like(node)
            for t in np.unique(node):
                t = int(t)
                self._clock.tick(1 + n // 64)
                mask = node == t
                split = splits.get(t)
                if split is None:
                    active[t] = None
                    nxt[mask] = 2 * t + 1
                    continue
                j, thr = split
                active[t] = (j, thr)
                nxt[mask] = np.where(self.X[mask, j] <= thr, 2 * t, 2 * t + 1)
            node = nxt
        leaf_of[:] = node
        sizes = {t: int(np.sum(leaf_of == t)) for t in self.leaves}
        if any(0 < s < self.min_samples_leaf for s in sizes.values()):
            return None
        for t in self.branches:
            self._clock.tick(self.X.shape[1] + 2)
            split = active.get(t)
            self.d[t].setInitialValue(0 if split is None else 1)
            for j in range(self.X.shape[1]):
                on = split is not None and split[0] == j
                self.a[t][j].setInitialValue(1 if on else 0)
            if self.b is not None:
                value = 0.0
                if split is not None:
                    j, thr = split
                    above = self.Xs[self.X[:, j] > thr, j]
                    value = float(above.min()) if len(above) else 1.0
                self.b[t].setInitialValue(value)
        loss = 0.0
        for t in self.leaves:
            self._clock.tick(n + 3 * self.n_classes)
            members = leaf_of == t
            counts = np.bincount(self.y[members], minlength=self.n_classes)
            label = int(np.argmax(counts))
            used = sizes[t] > 0
            self.l[t].setInitialValue(1 if used else 0)
            self.N[t].setInitialValue(sizes[t])
            err = float(sizes[t] - counts[label]) if used else 0.0
            self.L[t].setInitialValue(err)
            loss += err
            for k in range(self.n_classes):
                self.Nk[k][t].setInitialValue(int(counts[k]))
                self.c[k][t].setInitialValue(1 if used and k == label else 0)
            for i in range(n):
                self.z[i][t].setInitialValue(1 if members[i] else 0)
        n_splits = sum(1 for s in active.values() if s is not None)
        return loss / self.baseline + self.alpha * n_splits

    # -------------------------------------------------------------- decode
    def decode(self):
        """Splits ``{t: (j, threshold in original units) or None}`` and labels."""
        splits = {}
        for t in self.branches:
            if (self.d[t].varValue or 0.0) < 0.5:
                splits[t] = None
                continue
            j = max(range(self.X.shape[1]), key=lambda jj: self.a[t][jj].varValue or 0)
            if self.b is None:
                cut = 0.5  # binary variant: b = 1, x = 0 left, x = 1 right
            else:
                cut = float(self.b[t].varValue or 0.0) - self.eps[j] / 2.0
            left = self.Xs[:, j] < cut
            if not left.any():
                splits[t] = None  # everything goes right
                continue
            if left.all():
                splits[t] = (j, float(self.X[:, j].max()))
                continue
            hi_left = float(self.X[left, j].max())
            lo_right = float(self.X[~left, j].min())
            splits[t] = (j, (hi_left + lo_right) / 2.0)
        labels = {
            t: max(range(self.n_classes), key=lambda k: self.c[k][t].varValue or 0)
            for t in self.leaves
        }
        return splits, labels
