"""User and built-in leaf losses of DL8.5, checked before the search runs.

The engine's bounds need every leaf loss finite and non-negative: the
wrappers here turn a user loss that breaks this into a clear error, and the
checks turn inputs that would (a target whose losses overflow float64) into a
``ValueError`` naming the fix (a cost matrix is checked in
``odtstudy._cost_matrix``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "check_losses_fit",
    "checked_fast",
    "checked_rows",
    "power_of_two_scale",
    "weighted_quantile",
]


def _checked_loss(loss, name: str) -> float:
    """``loss`` as a float, or a clear error: the search's bounds need every
    leaf loss finite and non-negative."""
    try:
        value = float(loss)
    except (TypeError, ValueError):
        raise TypeError(
            f"{name} must return a number as the leaf loss, got {loss!r} "
            f"({type(loss).__name__})"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"{name} returned the leaf loss {value!r}; the search needs finite, "
            "non-negative losses (its bounds add them up): return e.g. a count "
            "or a cost, shifted by a constant if needed"
        )
    return value


def _checked_pair(out):
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(
            "fast_error_function must return a pair (loss, label), the "
            f"leaf's loss and the class index it predicts; got {out!r}"
        )
    return out


def _checked_label(label, n_classes):
    if n_classes is not None and not 0 <= label < n_classes:
        raise ValueError(
            f"fast_error_function returned label {label}; expected a "
            f"class index in [0, {n_classes})"
        )


def checked_fast(fn, n_classes=None):
    """Wrap ``fast_error_function``: it must return ``(loss, label)``, the
    label a class index in ``[0, n_classes)``.

    Parameters
    ----------
    fn : callable
        ``fn(class_weights) -> (loss, label)``. When ``fn.batched`` is true,
        ``fn`` also prices a 2-D array of class supports (one leaf per row)
        in one call, returning ``(losses, labels)``, two sequences with one
        entry per row.
    n_classes : int, optional

    Returns
    -------
    fast : callable
        ``fast(class_weights) -> (loss, label)``, checked. ``fast.losses``
        is the engine's callback: ``fast.losses(Q) -> losses`` for a 2-D
        float array ``Q`` (``batched = True``: the engine calls it once per
        batch of leaves); it calls ``fn`` once for the whole batch when
        ``fn.batched``, else once per row.
    """

    def fast(class_weights):
        out = _checked_pair(fn(class_weights))
        loss = _checked_loss(out[0], "fast_error_function")
        label = int(out[1])
        _checked_label(label, n_classes)
        return loss, label

    def losses(supports):
        # the engine checks that each loss is finite and non-negative (in C,
        # ``Objective._price``); the labels are checked where they are used,
        # on the leaves of the returned tree (``fast``)
        if not getattr(fn, "batched", False):
            return [fast(row)[0] for row in supports]
        out = _checked_pair(fn(supports))
        values = np.asarray(out[0], dtype=np.float64).reshape(-1)
        n_labels = np.shape(out[1])
        if values.shape[0] != len(supports) or n_labels[:1] != (len(supports),):
            raise ValueError(
                "a batched fast_error_function must return one loss and one "
                f"label per row of its 2-D input: {len(supports)} rows, got "
                f"{values.shape[0]} losses and {n_labels[0] if n_labels else 1} "
                "labels"
            )
        return values

    losses.batched = True
    fast.losses = losses
    return fast


def checked_rows(fn):
    """Wrap ``error_function``: it must return one loss."""

    def rows_loss(rows):
        return _checked_loss(fn(rows), "error_function")

    return rows_loss


#: Bound on the total loss a leaf can reach (``total weight * max(y**2)``
#: for the squared error, ``total weight * max|y|`` for the others): its sums
#: stay finite in float64 (whose largest value is about 1.8e308).
MAX_LOSS_TOTAL = 1e300
#: Smallest ``max|y|`` the squared error takes (squares above ~1e-280).
MIN_SQUARED_PEAK = 1e-140


def check_losses_fit(y, sample_weight, squared):
    """Raise a ``ValueError`` when a leaf loss of ``y`` could overflow."""
    if len(y) == 0:
        return
    total = max(float(len(y) if sample_weight is None else np.sum(sample_weight)), 1.0)
    peak = float(np.max(np.abs(y)))
    if squared and 0.0 < peak < MIN_SQUARED_PEAK:
        raise ValueError(
            f"y has values of at most |y| = {peak:.3g}: their squares underflow "
            "float64, so every squared error would be 0. Multiply y by a "
            f"constant, e.g. y * {10.0 ** -math.floor(math.log10(peak)):.0e} "
            "(the tree's splits do not change; its values scale)"
        )
    limit = math.sqrt(MAX_LOSS_TOTAL / total) if squared else MAX_LOSS_TOTAL / total
    if peak > limit:
        what = (
            "squared error (weight times y**2" if squared else "error (weight times |y|"
        )
        raise ValueError(
            f"y has values up to |y| = {peak:.3g}: the {what}, summed over "
            f"{total:.3g} in total weight) would overflow float64; at most "
            f"|y| = {limit:.3g} fits. Divide y by a constant, e.g. y / "
            f"{10.0 ** math.floor(math.log10(peak)):.0e} (the tree's splits do "
            "not change; its values scale)"
        )


def power_of_two_scale(y) -> float:
    """``2**k`` with ``max|y| / 2**k`` in [0.5, 1); 1 when ``max|y|`` is
    already within ``2**±64`` (or ``y`` is all zeros)."""
    peak = float(np.max(np.abs(y))) if len(y) else 0.0
    if peak == 0.0 or 2.0**-64 <= peak <= 2.0**64:
        return 1.0
    return math.ldexp(1.0, math.frexp(peak)[1])


def weighted_quantile(y, w, tau, midpoint=False):
    """Lower weighted ``tau``-quantile of ``y`` (minimiser of the pinball loss).

    With ``midpoint=True`` and a flat optimum, the middle of the interval of
    minimisers (the usual median for ``tau=0.5`` and unit weights).
    """
    order = np.argsort(y, kind="stable")
    ys, ws = np.asarray(y, float)[order], np.asarray(w, float)[order]
    keep = ws > 0
    ys, ws = ys[keep], ws[keep]
    if len(ys) == 0:
        return 0.0
    cum = np.cumsum(ws)
    total = cum[-1]
    k = int(np.searchsorted(cum, tau * total, side="left"))
    k = min(k, len(ys) - 1)
    lo = ys[k]
    if midpoint and k + 1 < len(ys) and math.isclose(cum[k], tau * total):
        return 0.5 * (lo + ys[k + 1])
    return float(lo)
