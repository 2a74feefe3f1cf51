"""The CP-SAT model of a depth-limited optimal decision tree on 0/1 data.

Private module: :class:`odtstudy.cp.CPSATClassifier` is the public entry point.

Positions of the complete tree are numbered breadth-first from 1: branch
positions ``1 .. 2**d - 1``, leaf positions ``2**d .. 2**(d+1) - 1``, children
``2t`` (left) and ``2t + 1`` (right). Model feature ``0`` is the dummy feature
("no split": every row goes left); model feature ``m >= 1`` is column
``m - 1`` of the reduced group matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from odtstudy._complete_tree import decode, from_splits
from odtstudy._deadline import Deadline, DeadlineReached
from odtstudy.tree import Tree

__all__ = [
    "BuildTimeout",
    "Instance",
    "TreeModel",
    "build_model",
    "complete_hint",
    "decode_tree",
    "make_instance",
]


# --------------------------------------------------------------------------
# preprocessing
@dataclass
class Instance:
    """Training data reduced for the model.

    Attributes
    ----------
    Xg : ndarray of shape (n_groups, n_model_features)
        Distinct rows restricted to the kept columns; model feature ``m``
        reads column ``m - 1``.
    counts : ndarray of int64, shape (n_groups, n_classes)
        Integer (scaled) weight of each class in each group.
    support : ndarray of int64, shape (n_groups,)
        Number of training rows in each group (for the minimum support).
    kept : ndarray of int64, shape (n_model_features,)
        Original column of each model feature.
    feature_map : ndarray of int64, shape (n_features,)
        Model feature standing for each original column (``0`` for a constant
        column).
    flip : ndarray of bool, shape (n_features,)
        True when the original column is the complement of its model feature
        (a split on it equals the model split with children swapped).
    group_of_row : ndarray of int64, shape (n_samples,)
    scale : float
        Integer weights are ``round(weight * scale)``.
    """

    Xg: np.ndarray
    counts: np.ndarray
    support: np.ndarray
    kept: np.ndarray
    feature_map: np.ndarray
    flip: np.ndarray
    group_of_row: np.ndarray
    scale: float

    @property
    def n_groups(self) -> int:
        return int(self.Xg.shape[0])

    @property
    def n_model_features(self) -> int:
        return int(self.Xg.shape[1])

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[1])

    @property
    def total(self) -> int:
        return int(self.counts.sum())


def integer_weights(sample_weight, n_rows):
    """Return ``(int_weights, scale, exact)`` for the per-row weights.

    Unit weights when ``sample_weight`` is None. Otherwise the smallest power
    of ten ``scale <= 1e6`` making every ``weight * scale`` an integer; when
    none does, weights are rounded at ``scale = 1e6`` and ``exact`` is False.
    """
    if sample_weight is None:
        return np.ones(n_rows, dtype=np.int64), 1.0, True
    w = np.asarray(sample_weight, dtype=np.float64)
    for k in range(7):
        scale = 10.0**k
        scaled = w * scale
        rounded = np.round(scaled)
        if np.all(np.abs(scaled - rounded) <= 1e-9 * np.maximum(1.0, scaled)):
            return rounded.astype(np.int64), scale, True
    return np.round(w * 1e6).astype(np.int64), 1e6, False


def make_instance(X, y, n_classes, int_weights, scale) -> Instance:
    """Merge identical rows and drop redundant columns.

    Columns that are constant on the training rows act like the dummy
    feature; a column equal to (or the complement of) an earlier one is
    represented by that earlier column. Both reductions keep the optimal
    objective: the complete tree lets the two subtrees of a node be swapped.
    """
    X = np.asarray(X)
    Xb = (X > 0.5).astype(np.int8)
    rows, group_of_row = np.unique(Xb, axis=0, return_inverse=True)
    group_of_row = np.asarray(group_of_row).reshape(-1)
    n_groups = rows.shape[0]
    counts = np.zeros((n_groups, n_classes), dtype=np.int64)
    np.add.at(counts, (group_of_row, np.asarray(y, dtype=np.int64)), int_weights)
    support = np.bincount(group_of_row, minlength=n_groups).astype(np.int64)

    n_features = rows.shape[1]
    feature_map = np.zeros(n_features, dtype=np.int64)
    flip = np.zeros(n_features, dtype=bool)
    seen = {}  # canonical column bytes -> (model feature, representative flip)
    kept = []
    for j in range(n_features):
        col = rows[:, j]
        if col.min() == col.max():
            feature_map[j] = 0
            flip[j] = bool(col[0] == 1)  # constant 1: everyone goes right
            continue
        own_flip = bool(col[0] == 1)
        key = (1 - col if own_flip else col).tobytes()
        if key not in seen:
            kept.append(j)
            seen[key] = (len(kept), own_flip)
        m, rep_flip = seen[key]
        feature_map[j] = m
        flip[j] = own_flip != rep_flip
    kept = np.asarray(kept, dtype=np.int64)
    Xg = rows[:, kept] if len(kept) else np.zeros((n_groups, 0), dtype=np.int8)
    return Instance(
        Xg=Xg,
        counts=counts,
        support=support,
        kept=kept,
        feature_map=feature_map,
        flip=flip,
        group_of_row=group_of_row,
        scale=float(scale),
    )


# --------------------------------------------------------------------------
# model
@dataclass
class TreeModel:
    """A built CP-SAT model and handles on its variables."""

    model: cp_model.CpModel
    depth: int
    x: list  # x[t][f], t in 1..B (index 0 unused)
    r: list  # r[g][t], t in 1..2B+1 (index 0 unused)
    n: list | None  # n[i][k] for leaf position 2**depth + i ("counts")
    c: list | None  # c[i] = max_k n[i][k] ("counts")
    z: list | None  # z[i][k]: leaf 2**depth + i predicts class k ("errors")
    e: dict | None  # e[g, k]: the class-k rows of group g are misclassified
    u: list | None  # u[l], leaf l non-empty (only with a minimum support)
    objective: cp_model.LinearExpr
    n_booleans: int

    @property
    def n_branch(self) -> int:
        return 2**self.depth - 1

    @property
    def n_constraints(self) -> int:
        return len(self.model.proto.constraints)


def _descendant_branches(t, n_branch):
    out = []
    frontier = [2 * t, 2 * t + 1]
    while frontier:
        nxt = []
        for s in frontier:
            if s <= n_branch:
                out.append(s)
                nxt.extend((2 * s, 2 * s + 1))
        frontier = nxt
    return out


class BuildTimeout(DeadlineReached, TimeoutError):
    """The deadline passed while the model was being built."""


#: Variables created between two looks at the clock while building.
_VARS_PER_CHECK = 8192
#: Share of the building time kept to free a model abandoned at the limit
#: (freeing takes a few per cent of the building time; more on big models).
_FREE_SHARE = 0.2


class _BuildClock:
    """The deadline as the builder sees it: it leaves time to free what was
    built, and gives up as soon as one phase alone cannot end in time."""

    def __init__(self, deadline: Deadline | None):
        self.deadline = deadline
        self.built = Deadline(None)  # a stopwatch on the fit's clock

    def check(self) -> None:
        if self.deadline is None or not self.deadline.limited:
            return
        if self.deadline.expired(reserve=_FREE_SHARE * self.built.elapsed()):
            raise BuildTimeout("time limit reached while building the CP-SAT model")

    def check_phase(self, done: int, total: int, phase: Deadline) -> None:
        """:meth:`check`, and give up when the phase's pace, ``done`` of
        ``total`` items since ``phase`` started, cannot finish in time."""
        self.check()
        if self.deadline is None or not self.deadline.limited or done == 0:
            return
        spent = phase.elapsed()
        if spent * (total - done) / done > self.deadline.remaining():
            raise BuildTimeout(
                "the CP-SAT model cannot be built within the time limit "
                f"({done} of {total} items of a phase after {spent:.2f} s)"
            )


def build_model(
    inst: Instance,
    depth: int,
    min_sup: int = 1,
    formulation: str = "errors",
    deadline: Deadline | None = None,
) -> TreeModel:
    """Build the model of methods.md §3 for ``inst`` at ``depth``.

    Parameters
    ----------
    inst : Instance
    depth : int
        Depth of the complete tree (>= 1).
    min_sup : int, default=1
        Every leaf holds 0 or at least ``min_sup`` training rows; an empty
        leaf is a position the decoded tree does not use.
    formulation : {"errors", "counts"}, default="errors"
        How the objective is counted. ``"counts"`` is methods.md §3 verbatim:
        integer class counts ``n[l, k]`` per leaf, ``c[l] = max_k n[l, k]``
        (``add_max_equality``), minimise ``total - sum(c)``. ``"errors"``
        keeps the same tree, routing, support and symmetry constraints but
        gives each leaf a class literal ``z[l, k]`` (exactly one) and each
        (group, class) a literal ``e[g, k]`` with the clauses
        ``r[g, l] => z[l, k] or e[g, k]``, and minimises
        ``sum w[g, k] e[g, k]``. Both have the same optimum; the clausal one
        lets CP-SAT learn much stronger conflicts.
    deadline : Deadline, default=None
        Building stops with :class:`BuildTimeout` once it has passed (less
        a fifth of the building time, kept to free the partial model), or
        as soon as the pace of a phase shows it cannot end before it.

    Returns
    -------
    TreeModel
    """
    clock = _BuildClock(deadline)
    model = cp_model.CpModel()
    n_branch = 2**depth - 1
    n_nodes = 2 * n_branch + 1
    first_leaf = n_branch + 1
    n_feat = inst.n_model_features + 1  # with the dummy feature 0
    n_groups, n_classes = inst.n_groups, inst.n_classes
    n_bool = 0

    # one feature per branch position
    x = [None]
    for t in range(1, n_branch + 1):
        clock.check()
        xt = [model.new_bool_var(f"x[{t},{f}]") for f in range(n_feat)]
        model.add_exactly_one(xt)
        x.append(xt)
        n_bool += n_feat

    # reach of every group at every position
    per_check = max(1, _VARS_PER_CHECK // n_nodes)
    r = []
    phase = Deadline(None)
    for g in range(n_groups):
        if g % per_check == 0:
            clock.check_phase(g, n_groups, phase)
        rg = [None] + [model.new_bool_var(f"r[{g},{t}]") for t in range(1, n_nodes + 1)]
        r.append(rg)
        n_bool += n_nodes
        model.add_bool_and([rg[1]])
    ones = [[f + 1 for f in np.flatnonzero(inst.Xg[g] == 1)] for g in range(n_groups)]
    zeros = [
        [0] + [f + 1 for f in np.flatnonzero(inst.Xg[g] == 0)] for g in range(n_groups)
    ]
    phase = Deadline(None)
    for t in range(1, n_branch + 1):
        clock.check_phase((t - 1) * n_groups, n_branch * n_groups, phase)
        left, right = 2 * t, 2 * t + 1
        xt = x[t]
        for g in range(n_groups):
            if g % per_check == 0:
                clock.check()
            rg = r[g]
            # r[t] = r[left] + r[right]
            model.add_implication(rg[left], rg[t])
            model.add_implication(rg[right], rg[t])
            model.add_bool_or([~rg[t], rg[left], rg[right]])
            model.add_bool_or([~rg[left], ~rg[right]])
            # right only if the chosen feature is 1 for g, left only if 0
            model.add_bool_or([~rg[right]] + [xt[f] for f in ones[g]])
            model.add_bool_or([~rg[left]] + [xt[f] for f in zeros[g]])

    # leaf predictions and the objective
    leaves = range(first_leaf, n_nodes + 1)
    total = inst.total
    n_vars = c_vars = z_vars = e_vars = None
    if formulation == "counts":
        # per-leaf class counts and correct counts (methods.md §3)
        n_vars, c_vars = [], []
        class_totals = inst.counts.sum(axis=0)
        for leaf in leaves:
            clock.check()
            nl = []
            for k in range(n_classes):
                nk = model.new_int_var(0, int(class_totals[k]), f"n[{leaf},{k}]")
                groups = np.flatnonzero(inst.counts[:, k] > 0)
                model.add(
                    nk
                    == cp_model.LinearExpr.weighted_sum(
                        [r[g][leaf] for g in groups],
                        [int(inst.counts[g, k]) for g in groups],
                    )
                )
                nl.append(nk)
            cl = model.new_int_var(0, int(class_totals.max()), f"c[{leaf}]")
            model.add_max_equality(cl, nl)
            n_vars.append(nl)
            c_vars.append(cl)
        model.add(cp_model.LinearExpr.sum(c_vars) <= total)
        objective = total - cp_model.LinearExpr.sum(c_vars)
    elif formulation == "errors":
        # a class per leaf and one "misclassified" literal per (group, class)
        z_vars = []
        for leaf in leaves:
            zl = [model.new_bool_var(f"z[{leaf},{k}]") for k in range(n_classes)]
            model.add_exactly_one(zl)
            z_vars.append(zl)
            n_bool += n_classes
        e_vars = {}
        for g in range(n_groups):
            clock.check()  # a group has a clause per leaf and class
            for k in np.flatnonzero(inst.counts[g] > 0):
                e = model.new_bool_var(f"e[{g},{k}]")
                n_bool += 1
                for i, leaf in enumerate(leaves):
                    model.add_bool_or([~r[g][leaf], z_vars[i][k], e])
                e_vars[g, int(k)] = e
        objective = cp_model.LinearExpr.weighted_sum(
            list(e_vars.values()), [int(inst.counts[g, k]) for g, k in e_vars]
        )
    else:
        raise ValueError(f"unknown formulation {formulation!r}")

    # minimum support: a leaf is empty or holds at least min_sup rows
    u_vars = None
    if min_sup > 1:
        u_vars = []
        for leaf in leaves:
            clock.check()
            ul = model.new_bool_var(f"u[{leaf}]")
            n_bool += 1
            size = cp_model.LinearExpr.weighted_sum(
                [r[g][leaf] for g in range(n_groups)],
                [int(v) for v in inst.support],
            )
            model.add(size >= min_sup).only_enforce_if(ul)
            model.add(size == 0).only_enforce_if(~ul)
            for g in range(n_groups):
                model.add_implication(r[g][leaf], ul)
            u_vars.append(ul)

    # symmetry breaking (i): an unreachable branch position uses the dummy
    for t in range(2, n_branch + 1):
        clock.check()
        model.add_bool_or([x[t][0]] + [r[g][t] for g in range(n_groups)])
    # symmetry breaking (ii): no real feature twice on a root-to-leaf path
    for t in range(1, n_branch + 1):
        for s in _descendant_branches(t, n_branch):
            clock.check()  # the root alone has 2**depth - 2 descendants
            for f in range(1, n_feat):
                model.add_bool_or([~x[t][f], ~x[s][f]])
    # symmetry breaking (iii): a real split sends rows both ways (a split
    # sending every row one way is the dummy, live subtree moved left); it
    # implies (i) and (ii) but those stay as cheap, early propagators
    for t in range(1, n_branch + 1):
        clock.check()
        for f in range(1, n_feat):
            if f % 16 == 0:
                clock.check()
            col = inst.Xg[:, f - 1]
            ones_f = np.flatnonzero(col == 1)
            zeros_f = np.flatnonzero(col == 0)
            model.add_bool_or([~x[t][f]] + [r[g][2 * t + 1] for g in ones_f])
            model.add_bool_or([~x[t][f]] + [r[g][2 * t] for g in zeros_f])

    model.minimize(objective)
    return TreeModel(
        model=model,
        depth=depth,
        x=x,
        r=r,
        n=n_vars,
        c=c_vars,
        z=z_vars,
        e=e_vars,
        u=u_vars,
        objective=objective,
        n_booleans=n_bool,
    )


# --------------------------------------------------------------------------
# hints
_LEAF = ("leaf",)


def _nested_from_tree(tree: Tree, inst: Instance):
    """Nested ``("split", m, left, right)`` / ``("leaf",)`` over model features.

    A node on a column the reduction represents by its complement gets its
    children swapped; a constant column becomes the dummy feature.
    """

    def rec(node):
        f = int(tree.feature[node])
        if f < 0:
            return _LEAF
        left = rec(int(tree.left[node]))
        right = rec(int(tree.right[node]))
        thr = float(tree.threshold[node])
        if thr >= 1.0:  # everyone goes left
            return ("split", 0, left, right)
        if thr < 0.0:  # everyone goes right
            return ("split", 0, right, left)
        m = int(inst.feature_map[f])
        if inst.flip[f]:
            left, right = right, left
        return ("split", m, left, right)

    return rec(0)


def complete_hint(tree: Tree, inst: Instance, depth: int) -> np.ndarray | None:
    """Embed ``tree`` into the complete tree as a model-feature assignment.

    The embedding satisfies both symmetry-breaking rules: positions below a
    leaf and unreachable positions use the dummy feature, and a split that
    repeats an ancestor's feature is replaced by the dummy with its live
    subtree moved left.

    Returns
    -------
    feat : ndarray of int64, shape (2**depth,)
        ``feat[t]`` for branch positions ``t = 1 .. 2**depth - 1`` (entry 0
        unused), or None when ``tree`` is deeper than ``depth``.
    """
    n_branch = 2**depth - 1
    feat = np.zeros(n_branch + 1, dtype=np.int64)
    if tree.depth > depth:
        return None

    def embed(node, t, groups, ancestors):
        if t > n_branch:
            return
        if node[0] == "leaf" or len(groups) == 0:
            feat[t] = 0
            embed(node, 2 * t, groups, ancestors)
            embed(_LEAF, 2 * t + 1, groups[:0], ancestors)
            return
        _, m, left, right = node
        if m == 0:  # everyone goes left
            gl, gr = groups, groups[:0]
        else:
            goes_right = inst.Xg[groups, m - 1] == 1
            gl, gr = groups[~goes_right], groups[goes_right]
        if m == 0 or m in ancestors or len(gl) == 0 or len(gr) == 0:
            # a degenerate split: the dummy, with the live subtree on the left
            live = left if len(gr) == 0 else right
            feat[t] = 0
            embed(live, 2 * t, groups, ancestors)
            embed(_LEAF, 2 * t + 1, groups[:0], ancestors)
            return
        feat[t] = m
        embed(left, 2 * t, gl, ancestors | {m})
        embed(right, 2 * t + 1, gr, ancestors | {m})

    embed(_nested_from_tree(tree, inst), 1, np.arange(inst.n_groups), frozenset())
    return feat


def route_groups(feat: np.ndarray, inst: Instance, depth: int) -> np.ndarray:
    """Boolean reach matrix ``(n_groups, 2**(depth+1))`` of an assignment."""
    n_branch = 2**depth - 1
    reach = np.zeros((inst.n_groups, 2 * n_branch + 2), dtype=bool)
    reach[:, 1] = True
    for t in range(1, n_branch + 1):
        m = int(feat[t])
        right = inst.Xg[:, m - 1] == 1 if m > 0 else np.zeros(inst.n_groups, bool)
        reach[:, 2 * t + 1] = reach[:, t] & right
        reach[:, 2 * t] = reach[:, t] & ~right
    return reach


def hint_values(feat, inst: Instance, depth: int, min_sup: int):
    """Values of every model variable for the assignment ``feat``.

    Returns
    -------
    values : dict or None
        Keys ``reach``, ``n``, ``c``, ``u``, ``objective``; None when a
        non-empty leaf holds fewer than ``min_sup`` rows.
    """
    n_branch = 2**depth - 1
    reach = route_groups(feat, inst, depth)
    leaf_reach = reach[:, n_branch + 1 :].astype(np.int64)
    n = leaf_reach.T @ inst.counts  # (n_leaves, n_classes)
    size = leaf_reach.T @ inst.support
    if np.any((size > 0) & (size < min_sup)):
        return None
    c = n.max(axis=1)
    return {
        "reach": reach,
        "n": n,
        "c": c,
        "u": size > 0,
        "objective": int(inst.total - c.sum()),
    }


def add_hint(tm: TreeModel, feat, values, deadline: Deadline | None = None) -> bool:
    """Hint every model variable (a complete hint) and cap the objective;
    False when ``deadline`` passed first (the hint is then partial and the
    objective not capped: there is no time left to solve anyway)."""
    deadline = Deadline.of(deadline)
    model = tm.model
    for t in range(1, tm.n_branch + 1):
        if deadline.expired():
            return False
        for f, var in enumerate(tm.x[t]):
            model.add_hint(var, int(feat[t]) == f)
    reach = values["reach"]
    for g, rg in enumerate(tm.r):
        if deadline.expired():
            return False
        for t in range(1, len(rg)):
            model.add_hint(rg[t], bool(reach[g, t]))
    if tm.n is not None:
        for i, nl in enumerate(tm.n):
            for k, var in enumerate(nl):
                model.add_hint(var, int(values["n"][i, k]))
            model.add_hint(tm.c[i], int(values["c"][i]))
    if tm.z is not None:
        label = np.argmax(values["n"], axis=1)  # ties: smallest class index
        for i, zl in enumerate(tm.z):
            for k, var in enumerate(zl):
                model.add_hint(var, int(label[i]) == k)
        leaf_of_group = np.argmax(reach[:, tm.n_branch + 1 :], axis=1)
        for (g, k), var in tm.e.items():
            model.add_hint(var, int(label[leaf_of_group[g]]) != k)
    if tm.u is not None:
        for i, var in enumerate(tm.u):
            model.add_hint(var, bool(values["u"][i]))
    model.add(tm.objective <= values["objective"])
    return True


# --------------------------------------------------------------------------
# decoding
def decode_tree(feat, inst: Instance, depth: int, X, y, n_classes, sample_weight=None):
    """Compact :class:`Tree` of a complete-tree assignment, fitted on ``(X, y)``.

    Dummy ("no split") positions and splits that send every training row the
    same way collapse into their live child, so every leaf of the result
    holds training rows. Features are original column indices (the test
    ``x <= 0.5``); see :func:`odtstudy._complete_tree.decode`.
    """
    n_branch = 2**depth - 1
    splits, dummy = {}, {}
    for t in range(1, n_branch + 1):
        m = int(feat[t])
        if m == 0:
            dummy[t] = True  # every row goes left
        else:
            splits[t] = (int(inst.kept[m - 1]), 0.5)
    layout = from_splits(depth, splits, left=dummy)
    return decode(layout, X, y, n_classes, sample_weight, prune=True)
