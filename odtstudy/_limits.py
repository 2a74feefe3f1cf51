"""Upper bounds on what a learner can allocate, with errors that name the fix.

Learners that model the complete tree of depth ``max_depth`` (BinOCT, OCT,
CP-SAT, TAO, TMO) allocate something for each of its ``2**max_depth``
leaves: a variable per training row (the MILPs), per distinct row (CP-SAT)
or a node array per individual (TMO). Their ``max_depth`` is bounded once by
:data:`MAX_COMPLETE_DEPTH` (a parameter constraint) and again at ``fit``,
against the data, by :func:`check_complete_tree`.
"""

from __future__ import annotations

import math

__all__ = ["MAX_COMPLETE_DEPTH", "check_complete_tree"]

#: Deepest complete tree any learner builds: 2**20 leaves.
MAX_COMPLETE_DEPTH = 20


def check_complete_tree(
    learner: str, max_depth: int, per_leaf: float, budget: float, what: str
) -> None:
    """Raise a ``ValueError`` when ``per_leaf * 2**max_depth > budget``.

    Parameters
    ----------
    learner : str
        Name of the estimator, for the message.
    max_depth : int
    per_leaf : float
        Items the learner allocates per leaf of the complete tree.
    budget : float
        Most items it can hold.
    what : str
        What the items are, e.g. ``"one binary variable per training row"``.

    Examples
    --------
    >>> check_complete_tree("OCTClassifier", 4, 100, 2**22, "variables")
    >>> check_complete_tree("OCTClassifier", 30, 100, 2**22, "variables")
    Traceback (most recent call last):
    ...
    ValueError: max_depth=30 is too deep for OCTClassifier on this data: ...
    """
    per_leaf = max(float(per_leaf), 1.0)
    if per_leaf * 2.0**max_depth <= budget:
        return
    deepest = max(math.floor(math.log2(budget / per_leaf)), 0)
    fix = (
        f"use max_depth <= {deepest}"
        if deepest >= 1
        else "use fewer training rows (a subsample)"
    )
    raise ValueError(
        f"max_depth={max_depth} is too deep for {learner} on this data: its "
        f"model holds {what} for each of the 2**max_depth leaves "
        f"({per_leaf:.0f} x 2**{max_depth} = {per_leaf * 2.0**max_depth:.3g}), "
        f"more than the {budget:.3g} it can build in memory and time; {fix}"
    )
