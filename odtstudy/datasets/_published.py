"""Optima that a solver's authors published for vendored datasets.

One place for these values: the tests check that DL8.5 proves each of them,
and a study report prints the published value beside every proof of the
same instance.

CONTREE_OPTIMA
    ConSol-Lab/contree@61ebd49f3b2aa607bba84c2bd3e218b9a793a40c
    ``examples/contree_test.py`` (pycontree 1.0.8 at that commit), lines
    9-20 (``correct``): the training misclassifications of
    ``ConTree(max_depth=depth, time_limit=14400)`` on
    ``train-datasets/<name>.txt``, asserted equal to ``sum(predict(X) != y)``
    at line 38. The splits are vendored unchanged as ``contree-train/<name>``;
    ``skin`` (lines 14 and 18) is not vendored. ConTree searches every
    threshold of the numeric features, as ``DL85Classifier(thresholds="all")``
    does.
"""

from __future__ import annotations

__all__ = ["CONTREE_OPTIMA", "CONTREE_SOURCE", "published_optimum"]

#: Depth -> dataset -> training misclassifications of ConTree's optimal tree.
CONTREE_OPTIMA = {
    3: {
        "avila": 4329,
        "bank": 19,
        "bean": 1406,
        "bidding": 37,
        "eeg": 3495,
        "fault": 494,
        "htru": 275,
        "magic": 2567,
        "occupancy": 47,
        "page": 125,
        "raisin": 76,
        "rice": 189,
        "room": 62,
        "segment": 208,
        "wilt": 18,
    },
    4: {
        "bank": 0,
        "bidding": 16,
        "occupancy": 26,
        "page": 91,
        "room": 11,
        "segment": 76,
        "wilt": 2,
    },
}
CONTREE_SOURCE = "ConTree's examples/contree_test.py (ConSol-Lab/contree@61ebd49)"


def published_optimum(dataset: str, depth: int):
    """The published optimal objective of a dataset at a depth, if any.

    Parameters
    ----------
    dataset : str
        A dataset name as studies record it (``"contree-train/avila"``).
    depth : int

    Returns
    -------
    tuple of (float, str) or None
        The value (training misclassifications) and its source; None when
        no optimum was published for this instance.
    """
    collection, _, name = dataset.partition("/")
    if collection != "contree-train":
        return None
    value = CONTREE_OPTIMA.get(int(depth), {}).get(name)
    return None if value is None else (float(value), CONTREE_SOURCE)
