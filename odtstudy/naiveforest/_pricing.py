"""Pricing oracles: the tree maximising ``sum_i u_i a_i(h)`` for given ``u``.

Since ``sum_i u_i a_i(h) = 2 sum_i u_i [h(x_i) = y_i] - sum_i u_i``, pricing is
an optimal *weighted* decision tree problem (Aglin's thesis §6.4.2). The
weights ``u`` may be negative (MDBoost): a row with ``u_i < 0`` gains
``|u_i|`` when it is *mis*classified, i.e. it supports every other class with
weight ``|u_i|``. For the oracles that only take non-negative weights, such a
row is replaced by ``K - 1`` copies, one per other class, each with weight
``|u_i|`` (for binary labels: the row with its label flipped, methods.md §6).
The argmax tree is unchanged and its objective only shifts by a constant.

Oracles:

- :func:`price_dl85` — exact, weighted DL8.5 (the ``odtstudy.dl85`` engine,
  called at class-index level);
- :func:`price_cart` — heuristic, weighted CART (classic LPBoost / MDBoost);
- :func:`price_exhaustive` — exact dynamic programming over every 0/1 split,
  vectorised over all feature pairs for the last two levels; for
  ``max_depth <= 3`` (tests, and a fallback when DL8.5 fails).
"""

from __future__ import annotations

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from odtstudy._deadline import Deadline
from odtstudy.cart import tree_from_sklearn
from odtstudy.tree import Tree, TreeBuilder

__all__ = [
    "PricingResult",
    "column_of",
    "nonnegative_problem",
    "price_cart",
    "price_dl85",
    "price_exhaustive",
]


class PricingResult:
    """A priced tree with its score ``u . a(h)`` and whether it is proven best."""

    def __init__(self, tree: Tree, score: float, exact: bool, stats=None):
        self.tree = tree
        self.score = float(score)
        self.exact = bool(exact)
        self.stats = {} if stats is None else dict(stats)


def column_of(tree: Tree, X, y) -> np.ndarray:
    """``a_i = +1`` where ``tree`` predicts ``y_i`` (class indices), else ``-1``."""
    return np.where(tree.predict(X) == y, 1.0, -1.0)


def nonnegative_problem(X, y, u, n_classes):
    """Rewrite weights ``u`` (any sign) as non-negative weights on copied rows.

    Returns ``(X2, y2, w2, origin)`` where ``origin[k]`` is the original row
    of copy ``k``. Rows with ``u_i >= 0`` are kept; rows with ``u_i < 0``
    become ``n_classes - 1`` rows labelled with every other class, each
    weighted ``|u_i|``. For every tree ``h``,
    ``sum_k w2_k [h(x2_k) = y2_k] = sum_i u_i [h(x_i) = y_i] + sum_{u_i<0} |u_i|``.
    """
    u = np.asarray(u, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    pos = np.flatnonzero(u >= 0)
    neg = np.flatnonzero(u < 0)
    if neg.size == 0:
        return X, y, u, np.arange(len(y))
    rows = [pos]
    labels = [y[pos]]
    weights = [u[pos]]
    for shift in range(1, n_classes):
        rows.append(neg)
        labels.append((y[neg] + shift) % n_classes)
        weights.append(-u[neg])
    origin = np.concatenate(rows)
    return X[origin], np.concatenate(labels), np.concatenate(weights), origin


def _relabel(tree: Tree, X, y, n_classes) -> Tree:
    """Keep ``tree``'s structure and labels, store plain class counts in ``value``."""
    leaves = tree.apply(np.asarray(X))
    fields = tree.to_arrays()
    fields["value"] = tree.node_totals(leaves, None, y, n_classes)
    fields["n_samples"] = tree.node_totals(leaves).astype(np.int64)
    return Tree(**fields)


def price_dl85(X, y, u, n_classes, max_depth, min_sup=1, time_limit=None):
    """Exact pricing by weighted DL8.5.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), 0/1
    y : ndarray of shape (n_samples,), class indices
    u : ndarray of shape (n_samples,), any sign
    n_classes : int
    max_depth, min_sup : int
    time_limit : float or None
        Seconds for DL8.5; at the limit its best tree is returned with
        ``exact=False``.

    Returns
    -------
    PricingResult
    """
    from odtstudy.dl85.engine._door import fit_search

    X2, y2, w2, _ = nonnegative_problem(X, y, u, n_classes)
    keep = w2 > 0
    if not np.any(keep):
        keep = np.ones_like(keep)
        w2 = np.ones_like(w2)
    rows = np.flatnonzero(keep)
    # the engine at class-index level: weighted misclassification of the
    # rewritten rows, each leaf labelled with its heaviest class
    out = fit_search(
        X2,
        None,
        {
            "kind": "weighted",
            "y_class": y2[rows],
            "n_classes": n_classes,
            "weights": w2[rows],
        },
        {
            "max_depth": int(max_depth),
            "min_sup": int(min_sup),
            "time_limit": time_limit,
        },
        rows=rows,
    ).out
    if not out.found:  # pragma: no cover - no max_error is set
        raise RuntimeError("DL8.5 found no tree while pricing")
    builder = TreeBuilder(n_outputs=n_classes)
    ids = []
    for node, f in enumerate(out.feature):
        label = int(np.argmax(out.value[node]))
        if f < 0:
            ids.append(builder.add_leaf(np.zeros(n_classes), label=label))
        else:
            ids.append(builder.add_split(int(f), 0.5, label=label))
    for node, f in enumerate(out.feature):
        if f >= 0:
            builder.set_children(ids[node], ids[out.left[node]], ids[out.right[node]])
    tree = _relabel(builder.build(), X, y, n_classes)
    score = float(u @ column_of(tree, X, y))
    return PricingResult(tree, score, exact=not out.timed_out, stats=out.stats)


def price_cart(X, y, u, n_classes, max_depth, min_sup=1, random_state=None):
    """Heuristic pricing by weighted CART (the classic LPBoost / MDBoost oracle)."""
    X2, y2, w2, _ = nonnegative_problem(X, y, u, n_classes)
    if not np.any(w2 > 0):
        w2 = np.ones_like(w2)
    sk = DecisionTreeClassifier(
        max_depth=int(max_depth),
        min_samples_leaf=int(min_sup),
        random_state=random_state,
    ).fit(X2, y2, sample_weight=w2)
    # labels: weighted majority of the (rewritten) rows, as sklearn's leaves
    tree = tree_from_sklearn(sk.tree_, X2, y2, n_classes, w2)
    tree = _relabel(tree, X, y, n_classes)
    score = float(u @ column_of(tree, X, y))
    return PricingResult(tree, score, exact=False)


def price_exhaustive(X, y, u, n_classes, max_depth, min_sup=1, time_limit=None):
    """Exact pricing by dynamic programming over every 0/1 split.

    The best tree of depth ``d`` on a set of rows is the best leaf or, for
    each feature, the best trees of depth ``d - 1`` on both sides (the
    objective adds up over leaves). Subtrees of depth 2 are solved at once
    for all feature pairs from the weighted co-occurrence matrices
    ``X^T diag(u [y = c]) X``. Cost ``O(p^(d-2) n p^2 K)``: meant for
    ``max_depth <= 3`` on CP4IM-sized data, and for tests.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), 0/1
    y, u, n_classes, max_depth, min_sup : as in :func:`price_dl85`
    time_limit : float or None
        Seconds; at the limit the best tree found so far is returned with
        ``exact=False``.

    Returns
    -------
    PricingResult
    """
    X = np.asarray(X)
    y = np.asarray(y, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    n, p = X.shape
    gain = np.zeros((n, n_classes))
    gain[np.arange(n), y] = u
    Xf = X.astype(np.float64)
    deadline = Deadline(time_limit)
    state = {"timeout": False}

    def leaf(rows):
        g = gain[rows].sum(axis=0)
        c = int(np.argmax(g))
        return float(g[c]), ("leaf", c)

    def best2(rows, score, tree):
        """Best tree of depth <= 2 on ``rows``, vectorised over all feature pairs.

        ``G[c, f, g]`` is the gain of class ``c`` on the rows with
        ``x_f = x_g = 1``; the four cells of root ``f`` and child split ``g``
        follow by inclusion-exclusion.
        """
        Xr = Xf[rows]
        gr = gain[rows]
        total = gr.sum(axis=0)  # (K,)
        single = Xr.T @ gr  # (p, K)
        G = np.stack([(Xr * gr[:, c, None]).T @ Xr for c in range(n_classes)])
        N = Xr.T @ Xr  # (p, p) row counts with x_f = x_g = 1
        nf = np.diag(N)
        m = rows.size
        Gt = np.moveaxis(G, 0, -1)  # (p, p, K): [f, g, c]
        # right side of f (x_f = 1), child split g: cells (1,1) and (1,0)
        r11, r10 = Gt, single[:, None, :] - Gt
        n11, n10 = N, nf[:, None] - N
        # left side of f (x_f = 0): cells (0,1) and (0,0)
        l01 = single[None, :, :] - Gt
        l00 = total[None, None, :] - single[:, None, :] - single[None, :, :] + Gt
        n01 = nf[None, :] - N
        n00 = m - nf[:, None] - nf[None, :] + N

        def side(c1, c0, k1, k0, leaf_gain):
            split = c1.max(axis=2) + c0.max(axis=2)
            split = np.where((k1 >= min_sup) & (k0 >= min_sup), split, -np.inf)
            g = np.argmax(split, axis=1)
            val = split[np.arange(p), g]
            leaf_val = leaf_gain.max(axis=1)
            use_split = val > leaf_val + 1e-12
            return np.where(use_split, val, leaf_val), g, use_split

        right_leaf = single
        left_leaf = total[None, :] - single
        vr, gr_, sr = side(r11, r10, n11, n10, right_leaf)
        vl, gl, sl = side(l01, l00, n01, n00, left_leaf)
        ok = (nf >= min_sup) & (m - nf >= min_sup)
        val = np.where(ok, vl + vr, -np.inf)
        f = int(np.argmax(val))
        if not (ok[f] and val[f] > score + 1e-12):
            return score, tree

        def subtree(use, g, c1, c0, leaf_gain):
            if not use:
                return ("leaf", int(np.argmax(leaf_gain)))
            return (
                "split",
                int(g),
                ("leaf", int(np.argmax(c0))),
                ("leaf", int(np.argmax(c1))),
            )

        left = subtree(sl[f], gl[f], l01[f, gl[f]], l00[f, gl[f]], left_leaf[f])
        right = subtree(sr[f], gr_[f], r11[f, gr_[f]], r10[f, gr_[f]], right_leaf[f])
        return float(val[f]), ("split", f, left, right)

    def best(rows, depth):
        score, tree = leaf(rows)
        if depth == 0 or rows.size < 2 * min_sup:
            return score, tree
        if depth == 1:
            g1 = Xf[rows].T @ gain[rows]  # (p, K): gain of rows with x_f = 1
            g0 = gain[rows].sum(axis=0)[None, :] - g1
            n1 = Xf[rows].sum(axis=0)
            n0 = rows.size - n1
            s = g0.max(axis=1) + g1.max(axis=1)
            ok = (n0 >= min_sup) & (n1 >= min_sup)
            s = np.where(ok, s, -np.inf)
            f = int(np.argmax(s))
            if ok[f] and s[f] > score + 1e-12:
                return float(s[f]), (
                    "split",
                    f,
                    ("leaf", int(np.argmax(g0[f]))),
                    ("leaf", int(np.argmax(g1[f]))),
                )
            return score, tree
        if depth == 2:
            return best2(rows, score, tree)
        for f in range(p):
            if deadline.expired():
                state["timeout"] = True
                break
            col = X[rows, f]
            left, right = rows[col == 0], rows[col == 1]
            if left.size < min_sup or right.size < min_sup:
                continue
            sl, tl = best(left, depth - 1)
            sr, tr = best(right, depth - 1)
            if sl + sr > score + 1e-12:
                score, tree = sl + sr, ("split", f, tl, tr)
        return score, tree

    # small matrix products: BLAS threads only contend with each other here
    with threadpool_limits(limits=1, user_api="blas"):
        _, spec = best(np.arange(n), int(max_depth))
    builder = TreeBuilder(n_outputs=n_classes)

    def build(node):
        if node[0] == "leaf":
            return builder.add_leaf(np.zeros(n_classes), n_samples=0, label=node[1])
        nid = builder.add_split(node[1], 0.5)
        builder.set_children(nid, build(node[2]), build(node[3]))
        return nid

    build(spec)
    tree = _relabel(builder.build(), X, y, n_classes)
    score = float(u @ column_of(tree, X, y))
    return PricingResult(tree, score, exact=not state["timeout"])
