"""Best-tree-so-far reports from a learner to whoever runs it.

A learner calls :func:`report_incumbent` each time it holds a better tree.
Outside a study nothing listens and the call costs nothing; the study worker
listens for the estimator it fits, so a run killed at its hard deadline still
records the best tree the learner had. Reports from estimators fitted inside
another one (the trees of a forest) are ignored.
"""

from __future__ import annotations

from contextlib import contextmanager

_listener = None


def report_incumbent(estimator, tree, objective=None, lower_bound=None) -> None:
    """Tell the listener (if any) that ``estimator`` holds ``tree``.

    Parameters
    ----------
    estimator : object
        The estimator being fitted (only its own listener hears it).
    tree : Tree
        The incumbent; ``tree.predict`` returns class indices into the
        sorted unique training labels.
    objective, lower_bound : float, optional
        Training objective of ``tree`` and the best proven bound.
    """
    if _listener is not None and _listener[0] is estimator:
        _listener[1](tree, objective, lower_bound)


@contextmanager
def listening(estimator, callback):
    """Call ``callback(tree, objective, lower_bound)`` on ``estimator``'s reports."""
    global _listener
    previous, _listener = _listener, (estimator, callback)
    try:
        yield
    finally:
        _listener = previous
