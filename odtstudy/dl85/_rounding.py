"""When the sums form of the squared error certifies its optimum.

Both DL8.5 searches price a set of rows from its sums ``W = sum w``,
``S1 = sum w y`` and ``S2 = sum w y^2`` as ``S2 - S1**2 / W``. In floating
point each sum over at most n rows is off by at most about ``n u`` times the
sum of its terms' magnitudes (u = 2**-53), and ``S1**2 / W <= S2``
(Cauchy-Schwarz), so a set's loss is off by at most ``(3 n + 6) u S2`` of
that set. The leaves of a tree partition the rows, so their ``S2`` add up
to the root's at most: any tree's priced loss is within ``(3 n + 6) u
S2_root`` of its true loss, and two trees compare right when they differ by
more than twice that. A node whose loss is at most the purity tolerance is
not split, which can cost that tolerance per leaf.

When these bounds stay below ``CERTIFY_RTOL`` of the optimum found, the
optimum is certified (to that relative tolerance, the one the searches'
own checks use); otherwise the search is re-run in the stable form
(:mod:`odtstudy.dl85._numeric`: weight, mean and sum of squared
deviations, which do not cancel).
"""

from __future__ import annotations

import numpy as np

from odtstudy.dl85._engine import PURITY_RTOL

__all__ = ["CERTIFY_RTOL", "sums_certify"]

#: Relative tolerance to which an optimum is certified.
CERTIFY_RTOL = 1e-9
_U = 2.0**-53


def sums_certify(loss: float, stats: np.ndarray, max_depth: int) -> bool:
    """True when the sums form's rounding cannot move an optimum of ``loss``
    by more than ``CERTIFY_RTOL`` of it.

    Parameters
    ----------
    loss : float
        The optimum the search proved, in the units of ``stats``.
    stats : ndarray of shape (n_rows, 3)
        Each row's ``(w, w y, w y^2)`` as searched.
    max_depth : int
    """
    n = int(np.count_nonzero(stats[:, 0]))
    s2 = float(stats[:, 2].sum())
    rounding = 2.0 * (3 * n + 6) * _U * s2 * 2.0  # compared twice, with margin
    purity = 2.0**max_depth * PURITY_RTOL * s2
    return rounding + purity <= CERTIFY_RTOL * loss
