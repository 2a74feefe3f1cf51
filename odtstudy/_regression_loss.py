"""Regression losses summed over rows, named by their objective family.

A regression learner's ``objective_`` is its family's loss summed over the
training rows: ``"squared-error"`` (sum of squared errors),
``"absolute-error"`` (sum of absolute errors) or ``"pinball@<tau>"`` (sum of
pinball losses at ``tau``); a ``"+leaf-penalty"`` suffix adds a penalty per
leaf that this module does not price.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PENALTY_SUFFIX", "pinball_family", "summed_loss"]

PENALTY_SUFFIX = "+leaf-penalty"


def pinball_family(tau: float) -> str:
    """The family name of the pinball loss at ``tau`` (``"pinball@0.5"``)."""
    return f"pinball@{tau:g}"


def summed_loss(family: str, y, predicted, sample_weight=None) -> float:
    """The loss of ``family`` (without its leaf penalty) summed over rows.

    Parameters
    ----------
    family : str
        ``"squared-error"``, ``"absolute-error"`` or ``"pinball@<tau>"``,
        optionally followed by ``"+leaf-penalty..."`` (ignored here).
    y, predicted : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    float
    """
    base = family.split(PENALTY_SUFFIX, 1)[0]
    residual = np.asarray(y, dtype=np.float64) - np.asarray(predicted, np.float64)
    if base == "squared-error":
        loss = residual * residual
    elif base == "absolute-error":
        loss = np.abs(residual)
    elif base.startswith("pinball@"):
        tau = float(base.split("@", 1)[1])
        loss = np.where(residual >= 0, tau * residual, (tau - 1.0) * residual)
    else:
        raise ValueError(
            f"unknown regression objective family {family!r}; use "
            "'squared-error', 'absolute-error' or 'pinball@<tau>'"
        )
    if sample_weight is None:
        return float(np.sum(loss))
    return float(np.dot(np.asarray(sample_weight, dtype=np.float64), loss))
