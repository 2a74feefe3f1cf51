"""The fits of DL8.5's objectives that ``dl85_instructions.py`` counts.

Per dataset, at a depth: ``cls``: ``DL85Classifier`` (misclassification,
the reference); ``sq``: ``DL85Regressor`` squared error; ``abs``: absolute
error; ``q``: pinball loss, tau 0.3 (target ``y = sum of the first 5
features + N(0, 1)``, seed 0); ``cost``: ``DL85Classifier(cost_matrix=C)``,
``C = [[0, 5], [1, 0]]`` (``C[predicted, true]``); ``py``: the same loss as
a Python ``fast_error_function``; ``pyb``: the same function through
``DL85Predictor``, which prices a whole batch of leaves in one call (the
function declares ``cost_error.batched``); ``pyu``: the same loss with
PyDL8.5's one-leaf signature only, called once per new leaf.
"""

from __future__ import annotations

import math

import numpy as np

from odtstudy.datasets import load_dataset

OBJECTIVES = ["cls", "sq", "abs", "q", "cost", "py", "pyb", "pyu"]
COST = np.array([[0.0, 5.0], [1.0, 0.0]])


def cost_error(weights):
    """``C[predicted, true]`` as a Python ``fast_error_function``; also
    prices a 2-D batch of class supports (one leaf per row) in one call,
    which it declares with ``batched``."""
    losses = np.asarray(weights, dtype=np.float64) @ COST.T
    if losses.ndim == 1:
        label = int(np.argmin(losses))
        return float(losses[label]), label
    return losses.min(axis=1), losses.argmin(axis=1)


cost_error.batched = True


def cost_error_one(weights):
    """The same loss with PyDL8.5's signature only (one leaf per call)."""
    losses = COST @ np.asarray(weights, dtype=np.float64)
    label = int(np.argmin(losses))
    return float(losses[label]), label


def fitters(pkg, X, y, yr, depth, limit, **extra):
    """Objective name -> zero-argument fit, for the package ``pkg``
    (``odtstudy``, or an older engine built as ``odtstudy_old``)."""
    dl85 = __import__(f"{pkg}.dl85", fromlist=["DL85Classifier"])
    clf, reg, pred = dl85.DL85Classifier, dl85.DL85Regressor, dl85.DL85Predictor
    common = dict(max_depth=depth, time_limit=limit, **extra)
    fits = {
        "cls": lambda: clf(**common).fit(X, y),
        "sq": lambda: reg(**common).fit(X, yr),
        "abs": lambda: reg(criterion="absolute_error", **common).fit(X, yr),
        "q": lambda: reg(criterion="quantile", quantile=0.3, **common).fit(X, yr),
        "py": lambda: clf(fast_error_function=cost_error, **common).fit(X, y),
        "pyb": lambda: pred(fast_error_function=cost_error, **common).fit(X, y),
        "pyu": lambda: clf(fast_error_function=cost_error_one, **common).fit(X, y),
    }
    if "cost_matrix" in clf().get_params():
        fits["cost"] = lambda: clf(cost_matrix=COST, **common).fit(X, y)
    else:
        fits["cost"] = fits["py"]
    return fits


def gmean(values):
    """Geometric mean of the positive finite ``values`` (NaN if none)."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if not values:
        return math.nan
    return math.exp(sum(math.log(v) for v in values) / len(values))


def data(name):
    """``(X, y, yr)``: a CP4IM set's 0/1 matrix, its class codes and the
    regression target of ``sq`` / ``abs`` / ``q``."""
    dataset = load_dataset(name)
    X = np.ascontiguousarray(dataset.X, dtype=np.uint8)
    y = np.unique(dataset.y, return_inverse=True)[1]
    rng = np.random.default_rng(0)
    yr = X[:, :5].sum(axis=1) + rng.normal(size=len(X))
    return X, y, yr
