"""Certified results of the regression searches.

A search prices trees in floating point, on a target shifted and scaled
from ``y``; its optimum is a float that can lie off the true one. The
regressor reports instead:

* ``objective``: the loss of the returned tree computed exactly (rational
  arithmetic over the rows of each leaf, the leaf value being the double
  the tree holds), rounded to the nearest double;
* ``lower_bound``: the search's optimum less a bound on how far its
  rounding can have moved it (never above the exact loss of the tree);
* ``optimal`` only when that bound is at most ``CERTIFY_RTOL`` of the
  optimum found (or the tree's exact loss is 0); otherwise the tree comes
  back with status "feasible" and a reason.

The absolute and pinball losses are searched on ``(y - c) / 2**k``, ``c``
a weighted median of ``y``: the losses do not change when the leaf values
shift with ``y``, and the search's sums then have the magnitude of the
spread of ``y``, not of ``y``. A sum over at most ``n`` rows of terms of
magnitude at most ``w |y|`` or ``w Y`` (``Y`` the largest ``|y|``), some
entering a leaf's loss as differences of cover sums, is off by at most
``32 n u (sum w |y| + Y sum w)`` (u = 2**-53; 32 bounds the times a row
enters a leaf's sums, and the choice of a neighbouring quantile row when
cumulative weights round, and the numeric search's own centring of the
target, off by at most ``u (sum w |y| + Y sum w)``); a leaf left
unsplit by the purity tolerance costs at most ``PURITY_RTOL`` of the root
leaf's loss; and ``y - c`` itself moves each row's loss by at most its
rounding error, which TwoSum computes exactly.

The squared error certifies its sums form as :mod:`._rounding` says, and
its stable form by :func:`._rounding.stable_lower_bound`; on small data
that neither certifies, a search whose leaves are priced in exact
arithmetic (:func:`exact_squared_leaf`) is off only by the rounding of the
sum of its leaves.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from odtstudy.base import FitResult
from odtstudy.dl85.engine._engine import PURITY_RTOL
from odtstudy.dl85.engine._losses import power_of_two_scale, weighted_quantile
from odtstudy.dl85.engine._rounding import CERTIFY_RTOL

__all__ = [
    "EXACT_LEAF_ROWS",
    "ExactRows",
    "PinballTarget",
    "certified_result",
    "exact_squared_leaf",
    "exact_tree_loss",
    "pinball_target",
]

_U = 2.0**-53
#: Most rows for a search whose leaves are priced in exact arithmetic.
EXACT_LEAF_ROWS = 100
#: Most times a row's terms enter a leaf's priced pinball loss.
_PINBALL_USES = 32


class PinballTarget:
    """The target the absolute and pinball searches run on.

    Attributes
    ----------
    y : ndarray
        ``(y - c) / scale``.
    scale : float
        A power of two: losses scale back by it.
    """

    def __init__(self, y, weights):
        y = np.asarray(y, dtype=np.float64)
        w = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
        c = weighted_quantile(y, w, 0.5) if len(y) else 0.0
        shifted = y - c
        back = shifted - y  # TwoSum: the rounding error of y - c, exactly
        rounding = (y - (shifted - back)) + (-c - back)
        self.scale = power_of_two_scale(shifted)
        self.y = shifted / self.scale
        self._w = w
        self._moved = _sum_up(w * np.abs(rounding)) / self.scale

    def error(self, max_depth: int, tau: float | None = None) -> float:
        """How far below a found optimum the true one can lie, in the
        units of the search (see the module docstring); ``tau`` None for
        the absolute error."""
        n, size = self._size
        if n == 0:
            return 0.0
        rounding = _PINBALL_USES * n * _U * size
        purity = 2.0**max_depth * PURITY_RTOL * self._root_loss(tau)
        return (rounding + purity + self._moved) * (1.0 + 1e-6)

    @functools.cached_property
    def _size(self) -> tuple[int, float]:
        """The rows of positive weight, and the magnitude their sums can
        reach (``sum w |y| + Y sum w``)."""
        positive = self._w > 0
        n = int(np.count_nonzero(positive))
        if n == 0:
            return 0, 0.0
        size = _sum_up(self._w * np.abs(self.y)) + float(
            np.max(np.abs(self.y[positive]))
        ) * _sum_up(self._w)
        return n, size

    def _root_loss(self, tau):
        """The loss of all rows as one leaf (a little above), whose
        ``PURITY_RTOL`` is the search's purity tolerance."""
        d = self.y - weighted_quantile(self.y, self._w, 0.5 if tau is None else tau)
        if tau is None:
            return _sum_up(self._w * np.abs(d)) * (1.0 + 1e-6)
        loss = np.where(d >= 0, tau * d, (tau - 1.0) * d)
        return _sum_up(self._w * loss) * (1.0 + 1e-6)


def pinball_target(y, weights) -> PinballTarget:
    """The :class:`PinballTarget` of ``y`` with row weights ``weights``."""
    return PinballTarget(y, weights)


def _sum_up(values) -> float:
    """A sum of non-negative ``values`` rounded up (not below the exact)."""
    return math.fsum(values) * (1.0 + 4 * _U)


class ExactRows:
    """The rows of a fit as exact integers, to price trees on them exactly
    (:meth:`tree_loss`); made once for the several trees of one fit.

    Parameters
    ----------
    y : ndarray
        The targets of the rows the trees were fitted on.
    weights : ndarray or None
    """

    def __init__(self, y, weights):
        self.y = np.asarray(y, dtype=np.float64)
        self.y_int, self.y_exp = _integers(self.y)
        if weights is None:
            self.w_int, self.w_exp = None, 0
        else:
            self.w_int, self.w_exp = _integers(np.asarray(weights, np.float64))

    def tree_loss(self, tree, X, kind: str, tau: float = 0.5) -> Fraction:
        """The loss of ``tree`` on the rows ``X``, exactly: each leaf's rows
        against the double the leaf holds, in rational arithmetic (see
        :func:`exact_tree_loss`)."""
        leaves = tree.apply(X)
        values = np.asarray(tree.value, dtype=np.float64)[:, 0]
        leaf_int, leaf_exp = _integers(values)
        low = min(self.y_exp, leaf_exp)
        row_y = self.y_int << (self.y_exp - low) if self.y_exp > low else self.y_int
        leaf_y = leaf_int << (leaf_exp - low) if leaf_exp > low else leaf_int
        d = row_y - leaf_y[leaves]
        if kind == "squared":
            terms = d * d
            total = terms.sum() if self.w_int is None else (self.w_int * terms).sum()
            return Fraction(int(total)) * _power(self.w_exp + 2 * low)
        up = self.y >= values[leaves]  # d >= 0, compared exactly as doubles
        if self.w_int is not None:
            d = self.w_int * d
        above = int(d[up].sum())
        below = -int(d[~up].sum())
        tau = Fraction(0.5 if kind == "absolute" else tau)
        loss = tau * above + (1 - tau) * below
        if kind == "absolute":
            loss *= 2
        return loss * _power(self.w_exp + low)


def exact_tree_loss(tree, X, y, weights, kind: str, tau: float = 0.5) -> Fraction:
    """The loss of ``tree`` on ``(X, y)``, exactly: each leaf's rows
    against the double the leaf holds, in rational arithmetic.

    Parameters
    ----------
    tree : Tree
    X, y : ndarray
        The rows the tree was fitted on.
    weights : ndarray or None
    kind : {"squared", "absolute", "quantile"}
    tau : float, default=0.5
        The pinball loss's quantile (``kind="quantile"``).
    """
    return ExactRows(y, weights).tree_loss(tree, X, kind, tau)


def exact_squared_leaf(y, weights):
    """``loss(rows)`` of a ``py_rows`` search: the exact squared error of
    the rows around their exact weighted mean, rounded down to a double.
    A search of these prices each tree within ``2**depth u`` of its exact
    optimal loss (the leaves' sum rounds), and never above it by more."""
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(len(y)) if weights is None else np.asarray(weights, np.float64)
    y_int, y_exp = _integers(y)
    w_int, w_exp = _integers(w)
    unit = _power(w_exp + 2 * y_exp)

    def loss(rows):
        total = s1 = s2 = 0
        for i in np.asarray(rows).tolist():
            total += w_int[i]
            s1 += w_int[i] * y_int[i]
            s2 += w_int[i] * y_int[i] * y_int[i]
        if total == 0:
            return 0.0
        exact = Fraction(s2 * total - s1 * s1, total) * unit
        value = float(exact)
        return math.nextafter(value, 0.0) if Fraction(value) > exact else value

    return loss


def _integers(values: np.ndarray):
    """``values`` as Python integers (an object array) times
    ``2**exponent`` (one exponent)."""
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    digits = (mantissa * 2.0**53).astype(np.int64).astype(object)
    shifts = exponent.astype(np.int64) - 53
    low = int(shifts.min()) if shifts.size else 0
    return digits << (shifts - low).astype(object), low


def _power(exponent: int) -> Fraction:
    return Fraction(2) ** exponent


def certified_result(out, tree, exact, *, error, reason="") -> FitResult:
    """The :class:`FitResult` of a search that found ``tree``.

    Parameters
    ----------
    out : SearchOutput
        The search, its losses already in the units of ``y``.
    tree : Tree
    exact : Fraction
        The exact loss of ``tree`` (:func:`exact_tree_loss`).
    error : float
        How far below ``out.loss`` (and ``out.lower_bound``) the true
        optimum can lie, in the units of ``y`` (``inf``: unbounded).
    reason : str, default=""
        Why the search's optimum is not certified, when ``error`` is too
        large (a default sentence otherwise).
    """
    objective = float(exact)
    if out.timed_out:
        status, found = "timeout", out.lower_bound
    else:
        status, found = "optimal", out.loss
    lower = found - error if math.isfinite(error) else 0.0
    lower = min(max(lower, 0.0), objective)
    if lower > 0.0 and Fraction(lower) > exact:  # rounding of objective
        lower = math.nextafter(objective, 0.0)
    certified = objective == 0.0 or error <= CERTIFY_RTOL * found
    stats = dict(out.stats)
    stats["certified_error"] = float(error)
    if status == "optimal" and not certified:
        status = "feasible"
        reason = reason or (
            "the search's floating-point optimum could not be certified: "
            f"its rounding can reach {error:.3g}, more than {CERTIFY_RTOL:g} of "
            f"the loss {found:.6g}; lower_bound_ is the certified bound"
        )
    if status == "feasible":
        stats["reason"] = reason
    return FitResult(
        tree=tree,
        objective=objective,
        lower_bound=float(lower),
        optimal=status == "optimal",
        status=status,
        stats=stats,
        reason=reason if status == "feasible" else "",
    )
