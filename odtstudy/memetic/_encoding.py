"""TMO's fixed-length tree encoding and stochastic crossover (methods.md §5).

A tree of maximum depth ``d`` is encoded as the ``2**d - 1`` nodes of the
complete tree of depth ``d - 1`` in breadth-first order (position 0 the root,
children ``2z + 1`` and ``2z + 2``): a branch is ``(feature, threshold)``, a
leaf ``(-1, -1)`` and a missing node ``(None, None)``. The depth-``d`` nodes
are always leaves and stay implicit; leaf classes are not encoded.
"""

from __future__ import annotations

import numpy as np

from odtstudy.memetic._heap import LEAF, MISSING, UNSET, HeapTree

__all__ = [
    "LEAF_GENE",
    "MISSING_GENE",
    "crossover",
    "decode",
    "encode",
    "feature_midpoints",
]

LEAF_GENE = (-1, -1)
MISSING_GENE = (None, None)


def encode(heap: HeapTree) -> list:
    """The ``2**depth - 1`` tuples encoding a heap tree (``depth >= 1``)."""
    genes = []
    for pos in range(2**heap.depth - 1):
        f = int(heap.feature[pos])
        if f >= 0:
            genes.append((f, float(heap.threshold[pos])))
        elif f == LEAF:
            genes.append(LEAF_GENE)
        else:
            genes.append(MISSING_GENE)
    return genes


def decode(genes, labels=None) -> HeapTree:
    """Inverse of :func:`encode`.

    Parameters
    ----------
    genes : sequence of tuple
        Length ``2**d - 1``.
    labels : dict, default=None
        Leaf position -> class index (positions absent stay ``UNSET``).

    Returns
    -------
    HeapTree
        Of depth ``d``; depth-``d`` nodes are leaves under branches.
    """
    n = len(genes)
    depth = int(n + 1).bit_length() - 1
    if 2**depth - 1 != n:
        raise ValueError(f"an encoding has 2**d - 1 entries, got {n}")
    heap = HeapTree.single_leaf(depth)
    for pos, (f, t) in enumerate(genes):
        if f is None:
            heap.feature[pos] = MISSING
        elif f < 0:
            heap.feature[pos] = LEAF
        else:
            heap.feature[pos] = int(f)
            heap.threshold[pos] = float(t)
    heap.fix_last_level()
    if labels:
        for pos, lab in labels.items():
            if heap.feature[pos] == LEAF:
                heap.label[pos] = lab
    heap.check()
    return heap


def leaf_labels(heap: HeapTree) -> dict:
    """Leaf position -> class index, for the leaves with a class."""
    leaves = np.flatnonzero((heap.feature == LEAF) & (heap.label != UNSET))
    return {int(p): int(heap.label[p]) for p in leaves}


def feature_midpoints(X) -> list:
    """Per feature, the midpoints between consecutive distinct values of ``X``.

    A constant feature gets its only value (a test that sends everything
    left).
    """
    out = []
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        mids = (values[:-1] + values[1:]) / 2.0 if values.size > 1 else values
        out.append(mids)
    return out


def random_branch_parameters(rng, midpoints):
    """A uniform feature and a uniform threshold among its midpoints."""
    j = rng.randrange(len(midpoints))
    mids = midpoints[j]
    return j, float(mids[rng.randrange(len(mids))])


def _parent(pos: int) -> int:
    return (pos - 1) // 2


def crossover(first: HeapTree, second: HeapTree, take, random_branch) -> HeapTree:
    """One child of the node-wise stochastic crossover.

    Starting from a copy of ``first``, each encoded position ``z`` (in
    breadth-first order) where ``take[z]`` is true gets ``second``'s state,
    with the minimal structural edit:

    - branch → branch: the feature and threshold are replaced;
    - leaf → branch: ``z`` takes ``second``'s test and gets two leaf children;
    - branch → leaf: the subtree of ``z`` is pruned to a leaf;
    - present → missing: the parent of ``z`` becomes a leaf (``z``, its sibling
      and their subtrees disappear);
    - missing → branch or leaf: the nearest present ancestor (a leaf) and the
      missing nodes on the path down to ``z`` become branches with random
      parameters (off-path children are leaves), then ``z`` takes
      ``second``'s state;
    - same state otherwise: no change.

    Parameters
    ----------
    first, second : HeapTree
        Parents of equal depth ``d``.
    take : sequence of bool, length ``2**d - 1``
        Where the child takes ``second``'s node.
    random_branch : callable
        ``random_branch() -> (feature, threshold)`` for the nil/branch case.

    Returns
    -------
    HeapTree
        The child; leaves whose class must be recomputed are ``UNSET``.
    """
    if first.depth != second.depth:
        raise ValueError("both parents must have the same depth")
    child = first.copy()
    for z in range(2**first.depth - 1):
        if not take[z]:
            continue
        target = int(second.feature[z])
        state = int(child.feature[z])
        if target >= 0:
            if state >= 0:
                child.feature[z] = target
                child.threshold[z] = second.threshold[z]
            elif state == LEAF:
                child.make_branch(z, target, second.threshold[z])
            else:
                _grow_path_to(child, z, random_branch)
                child.make_branch(z, target, second.threshold[z])
        elif target == LEAF:
            if state >= 0:
                child.make_leaf(z)
            elif state == MISSING:
                _grow_path_to(child, z, random_branch)
        elif state != MISSING:  # target missing: z is not the root
            child.make_leaf(_parent(z))
    child.fix_last_level()
    return child


def _grow_path_to(heap: HeapTree, z: int, random_branch) -> None:
    """Make the missing node ``z`` a (leaf) node by growing from its ancestor."""
    path = []
    pos = _parent(z)
    while heap.feature[pos] == MISSING:
        path.append(pos)
        pos = _parent(pos)
    path.append(pos)  # the nearest present ancestor, a leaf
    for node in reversed(path):  # top-down
        feature, threshold = random_branch()
        heap.make_branch(node, feature, threshold)
