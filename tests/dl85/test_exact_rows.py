"""``ExactRows.tree_loss`` prices a tree exactly: it equals the loss summed in
rational arithmetic row by row, for targets of very different magnitudes,
row weights and every regression loss, and one ``ExactRows`` serves several
trees (the quantiles of one fit)."""

from fractions import Fraction

import numpy as np
import pytest

from odtstudy.dl85.engine._certify import ExactRows, exact_tree_loss
from odtstudy.tree import TreeBuilder


def _stump(value_left, value_right):
    builder = TreeBuilder(n_outputs=1)
    root = builder.add_split(0, 0.5, value=[0.0], n_samples=2)
    left = builder.add_leaf([value_left], n_samples=1)
    right = builder.add_leaf([value_right], n_samples=1)
    builder.set_children(root, left, right)
    return builder.build(kind="regressor")


def _by_rows(tree, X, y, w, kind, tau):
    leaves = tree.apply(X)
    values = np.asarray(tree.value)[:, 0]
    total = Fraction(0)
    for row, leaf in enumerate(leaves):
        d = Fraction(float(y[row])) - Fraction(float(values[leaf]))
        weight = Fraction(1) if w is None else Fraction(float(w[row]))
        if kind == "squared":
            total += weight * d * d
        elif kind == "absolute":
            total += weight * abs(d)
        else:
            t = Fraction(tau)
            total += weight * (t * d if d >= 0 else (t - 1) * d)
    return total


@pytest.mark.parametrize("kind", ["squared", "absolute", "quantile"])
@pytest.mark.parametrize("weighted", [False, True])
def test_tree_loss_is_the_rational_sum(kind, weighted):
    rng = np.random.default_rng(7)
    n = 60
    X = rng.integers(0, 2, size=(n, 1)).astype(np.uint8)
    y = rng.normal(size=n) * 10.0 ** rng.integers(-200, 200, size=n)
    y[:3] = [0.0, -0.0, 1.5]
    w = rng.uniform(0.1, 3.0, size=n) if weighted else None
    rows = ExactRows(y, w)
    for left, right, tau in [
        (0.0, 1.0, 0.1),
        (y[5], -y[9], 0.5),
        (1e150, -2.5, 0.9),
        (5e-324, 2.0**-1000, 0.3),
    ]:
        tree = _stump(left, right)
        expected = _by_rows(tree, X, y, w, kind, tau)
        assert rows.tree_loss(tree, X, kind, tau) == expected
        assert exact_tree_loss(tree, X, y, w, kind, tau) == expected
