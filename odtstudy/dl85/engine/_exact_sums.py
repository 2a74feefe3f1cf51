"""Integer targets on which the squared error's sums are exact.

A target whose values are decimals with at most 6 digits after the point
(every ``y`` equal to the double nearest ``Z / 10**k``, ``Z`` integer), with
integer weights, is searched as ``z = Z - c`` (``c`` the integer nearest the
weighted mean of ``Z``). Every ``w z`` and ``w z**2`` is then an integer, and
so is every sum and difference of sums the searches form from them: they are
exact in doubles while their magnitudes stay below 2**53. A leaf's sums are
a combination of cover sums in which each row enters at most 27 times (see
:mod:`odtstudy.dl85.engine._rounding`), so the root's ``sum w z**2``,
``sum |w z|`` and ``sum w`` below ``2**53 / 32`` keep every intermediate
exact; the certificate then only bounds the leaves' evaluation (see
:func:`odtstudy.dl85.engine._rounding.sums_certify`).

Targets whose differences to one of them are exact doubles with few
significant bits (``y = c + z 2**e``, ``z`` integer) can be searched as
``z`` (:func:`binary_target`): then the search's target is ``y`` exactly,
which certifies decimals far from 0 whose rounding to doubles (``offset``)
is too large next to their spread. The squared errors scale back by
``10**(-2 k)`` (``4**e``). The search prices the decimals ``Z / 10**k``,
not ``y`` itself: ``y`` is off from them by at most a relative ``u``
(half an ulp, ``u = 2**-53``), which moves any tree's loss by a bounded
amount (``offset`` below, accounted for by the certificate).

With integer weights a set of rows that are not all equal has loss
``sum_{i<j} w_i w_j (z_i - z_j)**2 / W >= (W - 1) / W >= 1/2``; so a purity
tolerance of at most 1/4 leaves unsplit only sets that are truly pure, as
long as the evaluation error of a leaf (at most ``3.1 u sum w z**2``) stays
below 1/4, which the bound on the sums ensures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from odtstudy.dl85.engine._engine import PURITY_RTOL

__all__ = ["ExactTarget", "binary_target", "exact_target"]

_U = 2.0**-53
#: Largest k tried: y as the doubles of decimals with k digits.
_MAX_DECIMALS = 6
#: Root sums stay below this: 32 >= 27 uses of a row in a leaf's sums.
_SUMS_LIMIT = 2.0**48


@dataclass(frozen=True)
class ExactTarget:
    """The integer target searched in place of ``y``.

    Attributes
    ----------
    z : ndarray
        ``round(y * 10**k) - c``, integers stored as doubles.
    scale : float
        ``10**-k``: ``y`` is near ``(z + c) * scale``; squared errors scale
        by ``scale**2``.
    offset : float
        A bound on ``sum w (y / scale - c - z)**2``, in units of ``z``.
    purity_tol : float
        The purity tolerance for the search (``<= 1/4``).
    """

    z: np.ndarray
    scale: float
    offset: float
    purity_tol: float


def exact_target(y, weights=None) -> ExactTarget | None:
    """The exact-sums form of ``y``, or None when the data do not allow it
    (weights not integers, values not short decimals, or sums too large)."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) == 0:
        return None
    if weights is None:
        w, total = np.ones(len(y)), float(len(y))
    else:
        w = np.asarray(weights, np.float64)
        if np.any(w < 0) or not np.array_equal(w, np.rint(w)):
            return None
        total = float(w.sum())
    if not 0 < total < _SUMS_LIMIT:
        return None
    digits = _decimal_digits(y)
    if digits is None:
        return None
    power = 10.0**digits
    integers = np.rint(y * power)
    z = integers - np.rint(float(np.dot(w, integers)) / total)
    s1, s2 = float(np.dot(w, z)), float(np.dot(w, z * z))
    if max(s2, float(np.dot(w, np.abs(z)))) >= _SUMS_LIMIT:
        return None
    return ExactTarget(
        z=z,
        scale=1.0 / power,
        offset=(1.01 * _U) ** 2 * float(np.dot(w, integers * integers)),
        purity_tol=min(PURITY_RTOL * (s2 - s1 * s1 / total), 0.25),
    )


def binary_target(y, weights=None) -> ExactTarget | None:
    """The exact-sums form of ``y`` as binary integers (``offset`` 0), or
    None (weights not integers, differences not exact, or sums too large)."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
    if len(y) == 0 or np.any(w < 0) or not np.array_equal(w, np.rint(w)):
        return None
    total = float(w.sum())
    if not 0 < total < _SUMS_LIMIT:
        return None
    return _binary_target(y, w, total)


def _binary_target(y, w, total) -> ExactTarget | None:
    """``y`` searched as the integers ``(y - c) / 2**e`` (``c`` one of the
    ``y`` nearest their weighted mean), when every ``y - c`` is exact in
    doubles and the sums stay small: the target is ``y`` itself, so
    ``offset`` is 0 (decimals far from 0 are often this: a common exponent
    and few significant bits below it)."""
    c = float(y[np.argmin(np.abs(y - float(np.dot(w, y)) / total))])
    z = y - c
    back = z - y  # TwoSum: z is exact when its rounding error is 0
    if np.any((y - (z - back)) + (-c - back) != 0.0):
        return None
    nonzero = z[z != 0.0]
    if nonzero.size == 0:
        return None
    mantissa, exponent = np.frexp(nonzero)
    digits = (np.abs(mantissa) * 2.0**53).astype(np.int64)
    last_bit = np.frexp((digits & -digits).astype(np.float64))[1] - 1
    unit = int(np.min(exponent - 53 + last_bit))
    z = np.ldexp(z, -unit)
    s1, s2 = float(np.dot(w, z)), float(np.dot(w, z * z))
    if max(s2, float(np.dot(w, np.abs(z)))) >= _SUMS_LIMIT:
        return None
    return ExactTarget(
        z=z,
        scale=float(np.ldexp(1.0, unit)),
        offset=0.0,
        purity_tol=min(PURITY_RTOL * (s2 - s1 * s1 / total), 0.25),
    )


def _decimal_digits(y: np.ndarray) -> int | None:
    """The least k <= 6 with every ``y`` the double nearest an integer (of
    magnitude below 2**52) over ``10**k``, or None."""
    peak = float(np.max(np.abs(y)))
    first = float(y[0])
    for digits in range(_MAX_DECIMALS + 1):
        power = 10.0**digits
        if peak * power >= 2.0**52:
            return None
        # y[0] alone first: a target of measured noise fails here at every
        # k, for a few scalar operations instead of five array passes
        if (
            round(first * power) / power == first
            and (np.rint(y * power) / power == y).all()
        ):
            return digits
    return None
