"""Helpers shared by the MILP models.

Positions of the complete tree of depth ``D`` are numbered in BFS order from
1: branch nodes ``1 .. 2**D - 1``, leaves ``2**D .. 2**(D+1) - 1``, children
``2t`` (left) and ``2t + 1`` (right): the numbering of
:mod:`odtstudy._complete_tree`, which turns a solution into a ``Tree``.
"""

from __future__ import annotations

import numpy as np
import pulp
from sklearn.tree import DecisionTreeClassifier

from odtstudy._complete_tree import decode, from_splits
from odtstudy._deadline import Deadline
from odtstudy.milp._pulp_api import constraint_list
from odtstudy.tree import Tree

__all__ = [
    "BuildClock",
    "branch_nodes",
    "fit_cart",
    "leaf_nodes",
    "leaves_under",
    "misclassifications",
    "tree_of_splits",
    "variable_dicts",
]

#: Steps (variables or constraint terms) between two looks at the clock
#: while a model is built: a few milliseconds of PuLP work, against a
#: fraction of a microsecond per look.
STEPS_PER_CHECK = 4096


class BuildClock:
    """The fit's deadline, looked at every :data:`STEPS_PER_CHECK` steps of
    a model's building (or warm start).

    Parameters
    ----------
    deadline : Deadline, float or None
    what : str
        Where the time ran out, for :class:`~odtstudy._deadline.DeadlineReached`
        (e.g. ``"while building the FlowOCT model"``).
    """

    __slots__ = ("_count", "deadline", "what")

    def __init__(self, deadline, what: str):
        self.deadline = Deadline.of(deadline)
        self.what = what
        self._count = 0

    def tick(self, steps: int = 1) -> None:
        """Count ``steps`` units of work; raise
        :class:`~odtstudy._deadline.DeadlineReached` past the deadline."""
        self._count += steps
        if self._count >= STEPS_PER_CHECK:
            self._count = 0
            self.deadline.check(self.what)


def variable_dicts(
    prob, clock: BuildClock, name, indices, low=None, up=None, cat=pulp.LpContinuous
) -> dict:
    """``prob.add_variable_dicts(name, indices, low, up, cat)`` (same names,
    same nested dicts), made a chunk at a time with ``clock`` ticking in
    between: PuLP makes a dict of a million variables in one call."""
    if not isinstance(indices, tuple):
        indices = (indices,)
    first, rest = list(indices[0]), indices[1:]
    if rest:
        return {
            i: variable_dicts(prob, clock, f"{name}_{i}", rest, low, up, cat)
            for i in first
        }
    made = {}
    for start in range(0, len(first), STEPS_PER_CHECK):
        chunk = first[start : start + STEPS_PER_CHECK]
        made.update(prob.add_variable_dicts(name, chunk, low, up, cat=cat))
        clock.tick(len(chunk))
    return made


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
        return sum(map(len, constraint_list(self.prob)))


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


def misclassifications(tree: Tree, X, y) -> int:
    return int(np.sum(tree.predict(X) != y))


def fit_cart(X, y, depth, min_samples_leaf, random_state):
    """scikit-learn CART of the given depth (the warm start of both models)."""
    return DecisionTreeClassifier(
        max_depth=depth,
        min_samples_leaf=min_samples_leaf,
        random_state=random_state,
    ).fit(X, y)


def tree_of_splits(depth, splits, X, y, n_classes) -> Tree:
    """The pruned :class:`~odtstudy.tree.Tree` of a model's splits
    ``{t: (feature, threshold)}`` (nodes numbered from 1; a node without a
    split sends its rows right), leaves labelled by their training rows."""
    return decode(from_splits(depth, splits), X, y, n_classes, prune=True)
