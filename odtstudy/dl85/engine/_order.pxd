# cython: language_level=3
"""Order statistics of the absolute and pinball (quantile) losses, for the
numeric search's sweeps (C inline helpers).

A set of rows is priced from its rows ranked by target: the loss around the
lower weighted ``tau``-quantile ``q`` is ``below * sum_{y < q} w (q - y) +
above * sum_{y >= q} w (y - q)`` (``below = above = 1`` for the absolute
error; ``1 - tau`` and ``tau`` for the pinball loss). A sweep that moves
rows from one side of a split to the other keeps each side as a Fenwick tree
of weights and weighted targets over the ranks: adding a row and finding
``q`` with the sums below it cost O(log n) each.
"""


cdef inline void fw_add(double* fw, double* fy, int m, int rank, double w,
                        double wy) noexcept nogil:
    """Add ``(w, w y)`` at 0-based ``rank`` of Fenwick trees of size m
    (arrays of m + 1 doubles, index 0 unused)."""
    cdef int i = rank + 1
    while i <= m:
        fw[i] += w
        fy[i] += wy
        i += i & (-i)


cdef inline int fw_top(int m) noexcept nogil:
    """The largest power of two <= m (1 for m <= 1)."""
    cdef int t = 1
    while 2 * t <= m:
        t *= 2
    return t


cdef inline double fw_loss(const double* fw, const double* fy, int m, int top,
                           double W, double WY, double tau, double below,
                           double above, const double* yr) noexcept nogil:
    """Loss of the rows held by the Fenwick trees (total weight W, weighted
    target WY); ``yr[k]``: the target of rank k."""
    cdef int pos = 0, step = top, nxt
    cdef double target = tau * W, a = 0.0, ay = 0.0, q, lo, hi
    if W <= 0.0:
        return 0.0
    while step:
        nxt = pos + step
        if nxt <= m and a + fw[nxt] < target:
            pos = nxt
            a += fw[nxt]
            ay += fy[nxt]
        step >>= 1
    if pos >= m:
        pos = m - 1
    q = yr[pos]
    lo = q * a - ay
    hi = (WY - ay) - q * (W - a)
    return below * (lo if lo > 0.0 else 0.0) + above * (hi if hi > 0.0 else 0.0)


cdef inline double sorted_loss(const double* y, const double* w, int m, double tau,
                               double below, double above) noexcept nogil:
    """Loss of rows given in ascending target order (``y``, ``w``): each
    deviation summed directly, exact to the roundings of the sums."""
    cdef int i, k = 0
    cdef double total = 0.0, cum = 0.0, q, diff, loss = 0.0
    for i in range(m):
        total += w[i]
    if total <= 0.0:
        return 0.0
    for k in range(m):
        cum += w[k]
        if cum >= tau * total and w[k] > 0.0:
            break
    q = y[k]
    for i in range(m):
        diff = y[i] - q
        if diff >= 0.0:
            loss += above * w[i] * diff
        else:
            loss -= below * w[i] * diff
    return loss
