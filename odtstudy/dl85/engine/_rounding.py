"""When the sums form of the squared error certifies its optimum.

Both DL8.5 searches price a set of rows from its sums ``W = sum w``,
``S1 = sum w y`` and ``S2 = sum w y^2`` as ``S2 - S1**2 / W``. In floating
point a sum over at most n rows is off by at most ``n u`` times the sum of
its terms' magnitudes (u = 2**-53). A set's sums are not always summed over
its own rows: the search takes a side of a split as its node's sums minus
the other side's (the 0/1 search's depth-2 solver takes a quadrant as
``T - F_a - F_b + P_ab``, and a sibling as its parent minus the child
accumulated), so their errors scale with the node's magnitudes, not the
set's. To first order a set of mean ``m`` is priced off by

    dS2 + 2 |m| dS1 + m**2 dW,

and ``|m| <= Y``, the largest ``|y|``. Counting how often a row's terms
enter the sums of one tree's leaves (at most ``K`` times: 5 in the numeric
search's depth-2 subtrees; 9 in a depth-2 subtree of the 0/1 search, from
its quadrants, and 27 for the rows of a child whose sibling is priced as
the parent minus that child), any tree's priced loss is within

    K n u (S2 + 2 Y A + Y**2 W) + 6 u S2

of its true loss, the sums being the root's (``A = sum |w y|``). The term in
``W`` drops when the weights' sums are exact (integer multiples of one power
of two, their total below 2**52, as unit weights are); otherwise it is what
weights spanning many orders of magnitude make large: a light side's weight
taken as a heavy node's minus its heavy side loses its digits, and a factor
2 covers the second-order terms then. Two trees compare right when they
differ by more than twice the bound. A node whose loss is at most the purity
tolerance is not split, which can cost that tolerance per leaf.

When these bounds stay below ``CERTIFY_RTOL`` of the optimum found, the
optimum is certified (to that relative tolerance, the one the searches'
own checks use); otherwise the search is re-run in the stable form
(:mod:`odtstudy.dl85.engine._numeric`: weight, mean and sum of squared
deviations, which do not cancel).

When the sums are exact (integer targets and weights,
:mod:`odtstudy.dl85.engine._exact_sums`), the counted-uses term vanishes: each
leaf's ``W``, ``S1``, ``S2`` are exact, and ``S2 - S1 * S1 / W`` rounds
twice in ``S1 * S1 / W`` (at most ``2 u S1**2 / W <= 2 u S2``) and once in
the difference (``u`` times the result, at most ``u S2``): a leaf is off by
at most ``3.1 u`` of its ``S2``, a tree, whose leaves partition the rows,
by ``3.1 u S2`` of the root's, plus the rounding of the sum of its at most
``2**depth`` leaf losses, ``2**depth u`` of its loss. The purity tolerance
is then below the least positive loss less that error (see
:mod:`odtstudy.dl85.engine._exact_sums`), so unsplit leaves are pure and cost
nothing. What remains is that the search prices the decimals near ``y``,
not ``y``: with ``D = sum w d**2`` for the differences ``d`` between the
two, a tree of loss ``L`` moves by at most ``2 sqrt(L D) + D``, counted
once for each of the two trees compared.
"""

from __future__ import annotations

import numpy as np

from odtstudy.dl85.engine._engine import PURITY_RTOL

__all__ = ["CERTIFY_RTOL", "sums_certify", "sums_error"]

#: Relative tolerance to which an optimum is certified.
CERTIFY_RTOL = 1e-9
_U = 2.0**-53
#: Most times one row's terms enter the sums of one tree's leaves.
_ROW_USES = {"numeric": 5, "bitset": 27}


def sums_certify(
    loss: float,
    stats: np.ndarray,
    max_depth: int,
    engine: str,
    exact_offset: float | None = None,
) -> bool:
    """True when the sums form's rounding cannot move an optimum of ``loss``
    by more than ``CERTIFY_RTOL`` of it (see :func:`sums_error`)."""
    return sums_error(loss, stats, max_depth, engine, exact_offset) <= (
        CERTIFY_RTOL * loss
    )


def sums_error(
    loss: float,
    stats: np.ndarray,
    max_depth: int,
    engine: str,
    exact_offset: float | None = None,
) -> float:
    """How far below an optimum of ``loss`` found by the sums form the true
    optimum can lie (``inf`` when nothing bounds it).

    Parameters
    ----------
    loss : float
        The optimum the search proved, in the units of ``stats``.
    stats : ndarray of shape (n_rows, 3)
        Each row's ``(w, w y, w y^2)`` as searched.
    max_depth : int
    engine : {"numeric", "bitset"}
        The search that priced the trees (the numeric search, or the 0/1
        search with its depth-2 solver).
    exact_offset : float, default=None
        None: the sums round (first bound above). Otherwise the sums are
        exact integers and this is the ``D`` of the target searched against
        ``y``, in the units of ``stats``.
    """
    if exact_offset is not None:
        return _exact_sums_error(loss, stats, max_depth, exact_offset)
    w = stats[:, 0]
    positive = w > 0
    if not positive.any():
        return float("inf")
    n = int(np.count_nonzero(positive))
    s2 = float(stats[:, 2].sum())
    y2 = float(np.max(stats[positive, 2] / w[positive]))  # Y**2
    magnitude = s2 + 2.0 * np.sqrt(y2) * float(np.abs(stats[:, 1]).sum())
    margin = 2.0  # two trees compared
    if not _sums_exact(w[positive]):
        magnitude += y2 * float(w.sum())
        margin *= 2.0
    bound = _ROW_USES[engine] * n * _U * magnitude + 6 * _U * s2
    purity = 2.0**max_depth * PURITY_RTOL * s2
    return margin * bound + purity


def _exact_sums_error(loss, stats, max_depth, offset) -> float:
    """:func:`sums_error` for exact sums (second bound above)."""
    if loss == 0.0:  # every leaf pure: the decimals' and y's optimum
        return 0.0
    s2 = float(stats[:, 2].sum())
    near = 2.0 * loss  # trees that can compare with the optimum
    evaluation = 3.1 * _U * s2 + 2.0**max_depth * _U * near
    moved = 2.0 * np.sqrt(near * offset) + offset
    return 2.0 * (evaluation + moved)


def _sums_exact(w: np.ndarray) -> bool:
    """Whether every sum and difference of sums of the (positive) weights
    ``w`` is exact: all are integer multiples of the smallest power of two
    among their last bits, with a total below 2**52 such units."""
    mantissa, exponent = np.frexp(w)
    digits = (mantissa * 2.0**53).astype(np.int64)
    last_bit = np.frexp((digits & -digits).astype(np.float64))[1] - 1
    unit = int(np.min(exponent - 53 + last_bit))
    return float(np.ldexp(w.sum(), -unit)) < 2.0**52


def stable_lower_bound(loss: float, w: np.ndarray, y: np.ndarray, max_depth: int):
    """A lower bound on the optimum when the stable form found ``loss``
    (weights ``w``, target ``y`` as searched).

    Welford's update keeps the mean as two doubles: it is off only by the
    rounding of the increments ``dev w / W`` (each within ``(n + 3) u`` of
    its value, the weights' running sums rounding too), at most
    ``dm = (n + 3) n u R`` (``R`` the range of ``y``, a bound on every
    ``|dev|``). A leaf's M2, a sum of non-negative increments
    ``dev**2 w W_before / W`` each within ``(2 n + 6) u``, is then within
    ``(3 n + 8) u`` of its value plus ``sum w (2 |dev| dm + dm**2)``, where
    ``sum w |dev| <= sqrt(W M2)``; over a tree's leaves (Cauchy-Schwarz)
    the found ``loss`` is at most ``a L + b sqrt(L) + c`` for the optimum
    ``L``: ``a = 1 + (3 n + 8) u``, ``b = 2 dm sqrt(W)``, ``c = W dm**2``
    (each doubled for the terms of higher order), plus the rounding of the
    sum of the leaves (the stable form's purity tolerance is 0: a pure
    set's M2 is exactly 0).
    """
    positive = w > 0
    n = int(np.count_nonzero(positive))
    if n == 0 or loss <= 0.0:
        return 0.0
    spread = float(np.max(y[positive]) - np.min(y[positive]))
    total = float(w.sum()) * (1.0 + 2 * n * _U)
    mean_error = 2.0 * (n + 3) * n * _U * spread
    a = 1.0 + 2.0 * (3 * n + 8 + 2.0**max_depth) * _U
    b = 2.0 * 2.0 * mean_error * np.sqrt(total)
    c = 2.0 * total * mean_error**2
    found = loss - c
    if found <= 0.0:
        return 0.0
    s = (-b + np.sqrt(b * b + 4.0 * a * found)) / (2.0 * a)
    return float(s * s) * (1.0 - 4 * _U)
