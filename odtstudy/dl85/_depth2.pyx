# cython: language_level=3
"""Depth-2 solvers of the DL8.5 search (C-level Cython).

Responsibility: the exact best subtree of depth at most 2 of one cover
(``Depth2.solve``), with no cache entry, child cover or recursion of its
own. Over class counts: the items' and item pairs' class counts of the
cover (``_d2_counts``, ``_mask_root``, ``_pair_classes``), then one pass
over the feature pairs keeping the best left / right branch of each root
(``_d2_pairs``; two classes: ``_d2_pairs_binary`` with the ISA kernels of
``_kernels.h``, ``_d2_cost_binary`` for a cost matrix; a cost matrix or a
Python loss of class supports: ``_d2_objective``, which prices every
candidate leaf in one batch; two classes with a dense table of priced
count vectors: ``_d2_table_binary``, the missing ones in one batch, then a
table-lookup kernel). A feature that splits the cover as an earlier one,
or mirrors it, is left out (``_split_seen``). Below a depth-3 node (two
classes, misclassification), a child's counts are its parent's minus its
sibling's, the smaller child counted (``_d2_sibling``). Weights, cost
matrices on weights and squared error go to the objective's
``_weighted.WeightedCore``. Absolute and pinball losses with unit
weights: ``_d2_ranks``, over the cover's rows packed in target order,
where a quadrant's quantile is its k-th row (pair counts, prefix counts and
sums of y per word, ``odt_and_prefix``), and ``_depth1_ranks`` for depth 1
(popcounts and the objective's byte tables of y); with weights, a depth-1
solver over the rows in target order (``_depth1_order``). The covers are
``_covers.Covers``; which solver serves an objective is what the objective
declares (``_objective.pyx``).

The two-class kernels are compiled for several instruction sets and chosen
at import (``kernel_isa()``; ``set_kernel_isa`` for tests): ``_kernels.h``
is static, so this module is the one that includes it for them.
"""

from libc.math cimport INFINITY, NAN, ceil, isnan
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from odtstudy.dl85._cache cimport FEATURE_LEAF
from odtstudy.dl85._covers cimport Covers
from odtstudy.dl85._kernels cimport (
    odt_and_prefix,
    odt_compact,
    odt_cost_quadrants_d,
    odt_cost_quadrants_i,
    odt_ctz,
    odt_kernel_isa,
    odt_kernels_init,
    odt_kernels_set,
    odt_pair_counts,
    odt_popcount,
    odt_quadrants,
    odt_select,
    odt_table_quadrants,
)
from odtstudy.dl85._objective cimport (
    OBJ_ABSOLUTE,
    OBJ_COST,
    OBJ_ERROR,
    OBJ_PY_CLASS,
    OBJ_QUANTILE,
    Objective,
    ysum,
)
from odtstudy.dl85._util cimport _alloc

odt_kernels_init()

KERNEL_LEVELS = {"baseline": 0, "popcnt": 1, "avx2": 2, "avx512": 3}


def kernel_isa():
    """Instruction set of the depth-2 kernels in use."""
    return odt_kernel_isa.decode()


def set_kernel_isa(name):
    """Use the depth-2 kernels compiled for ``name`` (tests, benchmarks).

    ``name`` is one of "baseline", "popcnt", "avx2", "avx512" or "auto".
    Returns False (and changes nothing) when the CPU lacks that instruction set.
    """
    if name == "auto":
        odt_kernels_init()
        return True
    return bool(odt_kernels_set(KERNEL_LEVELS[name]))


cdef inline int _imin(int a, int b) noexcept nogil:
    return a if a < b else b


cdef inline double _cost2(double a00, double a01, double a10, double a11,
                         double q0, double q1) noexcept nogil:
    """Cost of a two-class leaf with class supports (q0, q1): the cheaper
    prediction under the cost matrix ``[[a00, a01], [a10, a11]]``."""
    cdef double c0 = a00 * q0 + a01 * q1, c1 = a10 * q0 + a11 * q1
    return c0 if c0 < c1 else c1


#: Most features of a depth-3 node for which its pair counts are kept to
#: count its children by difference (``Depth2._d2_sibling``): two tables of
#: int32 per class, parent and child, SIBLING_MAX_FEATURES ** 2 entries each.
SIBLING_MAX_FEATURES = 1024

#: Most features for which a Python loss of two-class counts keeps the pair
#: counts of a depth-2 subproblem (two int32 per pair) to price it in one batch.
TABLE_PAIRS_MAX_FEATURES = 2048


cdef inline Py_ssize_t _want(double* T, Py_ssize_t s0, int q0, int q1, double* q,
                             Py_ssize_t L) noexcept nogil:
    """Queue count vector (q0, q1) in ``q`` (at L) if table T has no loss for
    it yet (marked -3 while queued, so that it is queued once); the new L."""
    cdef Py_ssize_t t = q0 * s0 + q1
    if not isnan(T[t]):
        return L
    T[t] = -3.0
    q[2 * L] = q0
    q[2 * L + 1] = q1
    return L + 1


cdef inline double _quantile_row(const double* yb, const double* y, int j,
                                 uint64_t x, int r, double* below) noexcept nogil:
    """y of the row of the r-th (from 0) set bit of word j's bits x; adds
    the sum of y over the bits of x below it to ``below``."""
    cdef int pos = odt_select(x, r)
    cdef uint64_t low = x & (((<uint64_t>1) << pos) - 1)
    if low:
        below[0] += ysum(yb, j, low)
    return y[(j << 6) + pos]


cdef inline int _rank(double tau, int cnt) noexcept nogil:
    """Rank (from 1) of the tau-quantile row among ``cnt`` rows in target order."""
    cdef int k = <int>ceil(tau * cnt)
    return k if k >= 1 else 1


cdef inline double _side_loss(int cnt, int k, double S, double q, double Sb,
                              double a, double c) noexcept nogil:
    """Pinball loss (slopes a above, c below) of ``cnt`` rows summing to S
    around their k-th row's y, q; the k - 1 rows below it sum to Sb."""
    if cnt <= 0:
        return 0.0
    return a * ((S - Sb) - q * (cnt - (k - 1))) + c * (q * (k - 1) - Sb)


cdef inline uint64_t _last_mask(int N, int j, int nw) noexcept nogil:
    """Packed word j of a cover of N rows: its valid bits."""
    if j < nw - 1 or (N & 63) == 0:
        return ~(<uint64_t>0)
    return ((<uint64_t>1) << (N & 63)) - 1


ctypedef fused _stat:
    int32_t
    double


cdef inline _stat _quadrant(int q, _stat both, _stat fi, _stat fk,
                            _stat cover) noexcept nogil:
    """A statistic that adds up over rows (rows, sum of y) of quadrant q of
    a pair (i, k), 0 = i and k, 1 = i only, 2 = k only, 3 = neither, from
    its value on i AND k, on i, on k and on the cover."""
    if q == 0:
        return both
    if q == 1:
        return fi - both
    if q == 2:
        return fk - both
    return cover - fi - fk + both


cdef inline uint64_t _quadrant_bits(int q, uint64_t gi, uint64_t gk,
                                    uint64_t valid) noexcept nogil:
    if q == 0:
        return gi & gk
    if q == 1:
        return gi & ~gk
    if q == 2:
        return gk & ~gi
    return ~(gi | gk) & valid


cdef int _compact_soft(const uint64_t* src, const int32_t* idx, const uint64_t* cover,
                       int nnz, uint64_t* out) noexcept nogil:
    """``odt_compact`` without BMI2: the bits of ``src`` on the cover's rows,
    packed densely in row order; returns the words written."""
    cdef int j, b, t = 0
    cdef uint64_t c, v, cur = 0
    for j in range(nnz):
        c = cover[j]
        v = src[idx[j]]
        while c:
            b = odt_ctz(c)
            if (v >> b) & 1:
                cur |= (<uint64_t>1) << (t & 63)
            t += 1
            if (t & 63) == 0:
                out[(t >> 6) - 1] = cur
                cur = 0
            c &= c - 1
    if t & 63:
        out[t >> 6] = cur
    return (t + 63) >> 6


cdef double _set_loss(const uint64_t* g, const int32_t* cp, const double* sp,
                      const double* cs, bint neg, int N, int nw, double tau,
                      double a, double c, const double* tab,
                      const double* oy) noexcept nogil:
    """Pinball loss of a packed set of rows as one leaf: the rows of words
    ``g`` (prefix counts ``cp``, prefix sums ``sp``), or with ``neg`` the
    cover's other rows (the cover's prefix sums ``cs``)."""
    cdef int cnt = (N - cp[nw]) if neg else cp[nw]
    cdef int k, j, before
    cdef double below, S, q
    cdef uint64_t x
    if cnt <= 0:
        return 0.0
    k = _rank(tau, cnt)
    S = (cs[nw] - sp[nw]) if neg else sp[nw]
    for j in range(nw):
        before = ((j << 6) - cp[j]) if neg else cp[j]
        if ((_imin((j + 1) << 6, N) - cp[j + 1]) if neg else cp[j + 1]) >= k:
            below = (cs[j] - sp[j]) if neg else sp[j]
            x = (~g[j] & _last_mask(N, j, nw)) if neg else g[j]
            q = _quantile_row(tab, oy, j, x, k - before - 1, &below)
            return _side_loss(cnt, k, S, q, below, a, c)
    return 0.0


cdef class Depth2:
    """Scratch and dispatch of the depth-2 solvers for one search.

    Parameters
    ----------
    covers : Covers
        The search's covers (``solve(d, ...)`` reads the depth-d one).
    objective : Objective
    min_sup : int
    pairs : bool
        The search uses the pair solvers (else only weights / order
        statistics may come here).
    """

    def __cinit__(self, Covers covers, Objective objective, int min_sup, bint pairs):
        cdef Py_ssize_t m = covers.m, K = covers.K, W = covers.W
        self.cv = covers
        self.m = covers.m
        self.K = covers.K
        self.W = covers.W
        self.min_sup = min_sup
        self.objective = objective
        self.okind = objective.kind
        self.wcore = objective.core
        self.weighted = not objective.counts
        self.eps = 0.0
        self.table_missed = True    # the table of priced leaves starts empty
        # order statistics: absolute error is twice the pinball loss at 1/2
        self.tau = 0.5 if self.okind == OBJ_ABSOLUTE else objective.tau
        self.above = 1.0 if self.okind == OBJ_ABSOLUTE else self.tau
        self.below = 1.0 if self.okind == OBJ_ABSOLUTE else 1.0 - self.tau
        self.cost_int = False
        if self.okind == OBJ_COST and K == 2 and not self.weighted:
            self._cost_integers(covers.n)
        if pairs and self.okind != OBJ_ERROR and not self.weighted:
            # depth-2 solver of a cost / Python objective over class counts
            self.node_q = <double*>_alloc(2 * (m + 1) * (m + 1) * K * sizeof(double))
            self.node_l = <double*>_alloc(2 * (m + 1) * (m + 1) * sizeof(double))
            if (self.okind == OBJ_PY_CLASS and K == 2 and objective.dense != NULL
                    and m <= TABLE_PAIRS_MAX_FEATURES):
                self.pc0 = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
                self.pc1 = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
        if ((self.okind == OBJ_ABSOLUTE or self.okind == OBJ_QUANTILE)
                and objective.ybytes != NULL):
            # depth-2 order-statistics solver (``_d2_ranks``)
            self.oy = <double*>_alloc((W * 64 + 64) * sizeof(double))
            self.otab = <double*>_alloc(W * 8 * 256 * sizeof(double))
            self.opre = <double*>_alloc(m * (W + 1) * sizeof(double))
            self.ocnt = <int32_t*>_alloc(m * (W + 1) * sizeof(int32_t))
            self.ocov = <double*>_alloc((W + 1) * sizeof(double))
            self.opc = <int32_t*>_alloc((W + 1) * sizeof(int32_t))
            self.ops = <double*>_alloc((W + 1) * sizeof(double))
        self.gw = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.wsum = <double*>_alloc(W * sizeof(double))
        self.ccw = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        self.tmp = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        self.fq1 = <int32_t*>_alloc(m * K * sizeof(int32_t))
        self.pairbuf = <int32_t*>_alloc(K * sizeof(int32_t))
        self.bl = <double*>_alloc((m + 1) * sizeof(double))
        self.br = <double*>_alloc((m + 1) * sizeof(double))
        self.gT = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.cnt0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.cnt1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.f0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.f1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.bli = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.bri = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.fid = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.split_mask = 1
        while self.split_mask < 2 * m:
            self.split_mask = 2 * self.split_mask + 1
        self.split_key = <uint64_t*>_alloc((self.split_mask + 1) * sizeof(uint64_t))
        self.split_at = <int32_t*>_alloc((self.split_mask + 1) * sizeof(int32_t))
        if (pairs and self.okind == OBJ_ERROR and K == 2 and not self.weighted
                and min_sup == 1):
            self._sibling_buffers()

    cdef void _sibling_buffers(self) except *:
        """Allocate the parent / child tables of ``_d2_sibling`` (pages
        are touched only by the features a node has)."""
        cdef Py_ssize_t m = self.m, W = self.W, j
        cdef Py_ssize_t cap = m if m < SIBLING_MAX_FEATURES else SIBLING_MAX_FEATURES
        self.sp_cap = <int>cap
        self.sp_version = -1
        self.sp_fid = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.sp_g = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.sp_cw = <uint64_t*>_alloc(2 * W * sizeof(uint64_t))
        self.sp_f0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.sp_f1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.sp_p0 = <int32_t*>_alloc(cap * cap * sizeof(int32_t))
        self.sp_p1 = <int32_t*>_alloc(cap * cap * sizeof(int32_t))
        self.ss_g = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.ss_cw = <uint64_t*>_alloc(2 * W * sizeof(uint64_t))
        self.ss_rows = <uint64_t*>_alloc(W * sizeof(uint64_t))
        self.ss_f0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.ss_f1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.ss_p0 = <int32_t*>_alloc(cap * cap * sizeof(int32_t))
        self.ss_p1 = <int32_t*>_alloc(cap * cap * sizeof(int32_t))
        self.sp_ident = <int32_t*>_alloc(W * sizeof(int32_t))
        for j in range(W):
            self.sp_ident[j] = <int32_t>j

    cdef void _cost_integers(self, int n):
        """Use the int32 cost kernel when the 2 x 2 cost matrix holds
        integers small enough that no sum over ``n`` rows overflows."""
        cdef int p
        cdef double v
        for p in range(4):
            v = self.objective.cost[p]
            if v != <double>(<int32_t>v) or v * n >= 1e9:
                return
            self.cost_i[p] = <int32_t>v
        self.cost_int = True

    def __dealloc__(self):
        free(self.oy)
        free(self.otab)
        free(self.opre)
        free(self.ocnt)
        free(self.ocov)
        free(self.opc)
        free(self.ops)
        free(self.pc0)
        free(self.pc1)
        free(self.node_q)
        free(self.node_l)
        free(self.gw)
        free(self.wsum)
        free(self.ccw)
        free(self.tmp)
        free(self.fq1)
        free(self.pairbuf)
        free(self.bl)
        free(self.br)
        free(self.gT)
        free(self.cnt0)
        free(self.cnt1)
        free(self.f0)
        free(self.f1)
        free(self.bli)
        free(self.bri)
        free(self.fid)
        free(self.mtau)
        free(self.ma)
        free(self.mc)
        free(self.mbl)
        free(self.mbr)
        free(self.sp_fid)
        free(self.split_key)
        free(self.split_at)
        free(self.sp_g)
        free(self.sp_cw)
        free(self.sp_f0)
        free(self.sp_f1)
        free(self.sp_p0)
        free(self.sp_p1)
        free(self.ss_g)
        free(self.ss_cw)
        free(self.ss_rows)
        free(self.ss_f0)
        free(self.ss_f1)
        free(self.ss_p0)
        free(self.ss_p1)
        free(self.sp_ident)

    cdef void _splits_reset(self) noexcept nogil:
        """Forget the splits met (``_split_seen``)."""
        cdef int s
        for s in range(self.split_mask + 1):
            self.split_at[s] = -1

    cdef bint _split_seen(self, const uint64_t* base, int i, int nw,
                          const uint64_t* rows) noexcept nogil:
        """Whether feature i (words ``base + i * nw``) splits the rows as an
        earlier one met since ``_splits_reset`` (the same split or its
        mirror); records it if not. ``rows``: the valid bits of each word,
        or NULL for words packed densely over ``split_rows`` rows (the last
        word's high bits unused)."""
        cdef const uint64_t* g = base + i * nw
        cdef const uint64_t* o
        cdef uint64_t h = 0, flip, first, valid, x
        cdef int j, s, k
        # the canonical side of the split: the one without the first row
        first = rows[0] & (~rows[0] + 1) if rows != NULL else 1
        flip = ~(<uint64_t>0) if g[0] & first else 0
        for j in range(nw):
            valid = rows[j] if rows != NULL else _last_mask(self.split_rows, j, nw)
            h = (h ^ ((g[j] ^ flip) & valid)) * 0x9E3779B97F4A7C15ULL
        h ^= h >> 29
        s = <int>(h & self.split_mask)
        while self.split_at[s] >= 0:
            if self.split_key[s] == h:
                k = self.split_at[s]
                o = base + k * nw
                x = 0
                flip = ~(<uint64_t>0) if (g[0] ^ o[0]) & first else 0
                for j in range(nw):
                    valid = rows[j] if rows != NULL else _last_mask(self.split_rows, j, nw)
                    x |= (g[j] ^ o[j] ^ flip) & valid
                if x == 0:
                    return True
            s = (s + 1) & self.split_mask
        self.split_key[s] = h
        self.split_at[s] = i
        return False

    cdef int _d2_counts(self, int d, double total) noexcept nogil:
        """Gather the useful features' words and item / pair class counts.

        Returns the number ``nf`` of useful features (both branches hold at
        least ``min_sup`` rows); their ids are ``fid[:nf]``.
        """
        cdef int W = self.W, K = self.K, nnz = self.cv.cnnz[d], j, c, f, nf = 0
        cdef uint64_t* w = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef uint64_t* col
        cdef uint64_t* g
        cdef uint64_t* cm
        cdef int tot
        cdef int ntot = <int>total
        cdef int nw = (ntot + 63) // 64
        cdef bint compact = odt_compact != NULL and nw < nnz
        # a feature that splits the cover as an earlier one, or mirrors it,
        # has the same subtrees: left out (the first of equal roots wins)
        self._splits_reset()
        self.split_rows = ntot
        if compact:
            # pack the cover's rows densely: nw words instead of nnz
            for c in range(K):
                odt_compact(self.cv.cmask + c * W, ix, w, nnz, self.ccw + c * nw)
            for f in range(self.m):
                g = self.gw + nf * nw
                odt_compact(self.cv.cols + f * W, ix, w, nnz, g)
                tot = 0
                for j in range(nw):
                    tot += odt_popcount(g[j])
                if tot < self.min_sup or ntot - tot < self.min_sup:
                    continue
                if self._split_seen(self.gw, nf, nw, NULL):
                    continue
                self._item_classes(nf, g, nw)
                self.fid[nf] = f
                nf += 1
            self.d2_nnz = nw
            return nf
        self.d2_nnz = nnz
        for c in range(K):
            cm = self.cv.cmask + c * W
            for j in range(nnz):
                self.ccw[c * nnz + j] = w[j] & cm[ix[j]]
        for f in range(self.m):
            col = self.cv.cols + f * W
            g = self.gw + nf * nnz
            tot = 0
            for j in range(nnz):
                g[j] = w[j] & col[ix[j]]
                tot += odt_popcount(g[j])
            if tot < self.min_sup or ntot - tot < self.min_sup:
                continue
            if self._split_seen(self.gw, nf, nnz, w):
                continue
            self._item_classes(nf, g, nnz)
            self.fid[nf] = f
            nf += 1
        return nf

    cdef inline void _item_classes(self, int i, const uint64_t* g, int nw) noexcept nogil:
        """``fq1[i]``: the class counts of the words ``g`` (``nw`` words, laid
        out as ``ccw``) of useful feature i."""
        cdef int c, j
        cdef uint64_t* t
        cdef long long cnt
        for c in range(self.K):
            t = self.ccw + c * nw
            cnt = 0
            for j in range(nw):
                cnt += odt_popcount(g[j] & t[j])
            self.fq1[i * self.K + c] = <int32_t>cnt

    cdef void _mask_root(self, int i) noexcept nogil:
        """``tmp[c]``: the words of useful feature i on the rows of class c."""
        cdef int nnz = self.d2_nnz, c, j
        cdef uint64_t* g = self.gw + i * nnz
        cdef uint64_t* t
        for c in range(self.K):
            t = self.tmp + c * nnz
            for j in range(nnz):
                t[j] = g[j] & self.ccw[c * nnz + j]

    cdef void _pair_classes(self, int k, int32_t* p) noexcept nogil:
        """Class counts ``p[c]`` of the rows with both the root of
        ``_mask_root`` and useful feature k."""
        cdef int nnz = self.d2_nnz, c, j
        cdef uint64_t* gk = self.gw + k * nnz
        cdef uint64_t* t0
        cdef uint64_t* t1
        cdef long long c0, c1
        if self.K == 2:
            t0 = self.tmp
            t1 = self.tmp + nnz
            c0 = 0
            c1 = 0
            for j in range(nnz):
                c0 += odt_popcount(t0[j] & gk[j])
                c1 += odt_popcount(t1[j] & gk[j])
            p[0] = <int32_t>c0
            p[1] = <int32_t>c1
            return
        for c in range(self.K):
            t0 = self.tmp + c * nnz
            c0 = 0
            for j in range(nnz):
                c0 += odt_popcount(t0[j] & gk[j])
            p[c] = <int32_t>c0

    cdef double _d2_pairs(self, int d, int nf, int* out_f) noexcept nogil:
        """Depth-2 optimum from the pair counts, one pass over feature pairs.

        For each pair (i, k) the four quadrant class counts give a candidate
        split for both branches of i (child k) and of k (child i); ``bl`` /
        ``br`` keep the best error of the left / right branch of each root.
        """
        cdef int K = self.K, c, i, k, ms = self.min_sup
        cdef int32_t* fi
        cdef int32_t* fk
        cdef int32_t* p = self.pairbuf
        cdef double* nc = self._d2_nc
        cdef double* bl = self.bl
        cdef double* br = self.br
        cdef int s11, s10, s01, s00, m11, m10, m01, m00, v, e11, e10, e01, e00
        cdef int ntot = 0
        cdef double best, left, right, leaf
        for c in range(K):
            ntot += <int>nc[c]
        # leaves of each branch as the starting point
        for i in range(nf):
            fi = self.fq1 + i * K
            s11 = 0
            m11 = 0
            m00 = 0
            for c in range(K):
                s11 += fi[c]
                if fi[c] > m11:
                    m11 = fi[c]
                v = <int>nc[c] - fi[c]
                if v > m00:
                    m00 = v
            br[i] = s11 - m11
            bl[i] = (ntot - s11) - m00
        for i in range(nf):
            fi = self.fq1 + i * K
            self._mask_root(i)
            for k in range(i + 1, nf):
                fk = self.fq1 + k * K
                self._pair_classes(k, p)
                s11 = 0
                s10 = 0
                s01 = 0
                s00 = 0
                m11 = 0
                m10 = 0
                m01 = 0
                m00 = 0
                for c in range(K):
                    v = p[c]
                    s11 += v
                    if v > m11:
                        m11 = v
                    v = fi[c] - p[c]
                    s10 += v
                    if v > m10:
                        m10 = v
                    v = fk[c] - p[c]
                    s01 += v
                    if v > m01:
                        m01 = v
                    v = <int>nc[c] - fi[c] - fk[c] + p[c]
                    s00 += v
                    if v > m00:
                        m00 = v
                e11 = s11 - m11
                e10 = s10 - m10
                e01 = s01 - m01
                e00 = s00 - m00
                if s11 >= ms and s10 >= ms and e11 + e10 < br[i]:
                    br[i] = e11 + e10
                if s01 >= ms and s00 >= ms and e01 + e00 < bl[i]:
                    bl[i] = e01 + e00
                if s11 >= ms and s01 >= ms and e11 + e01 < br[k]:
                    br[k] = e11 + e01
                if s10 >= ms and s00 >= ms and e10 + e00 < bl[k]:
                    bl[k] = e10 + e00
        best = INFINITY
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return best

    cdef double _d2_pairs_binary(self, int d, int nf, int* out_f) noexcept nogil:
        """Two-class version of ``_d2_pairs``: counts for all partners k of a
        root i in one sweep over a word-major copy of the feature words, then
        a branch-free pass (vectorisable) over k for the four quadrants."""
        cdef int nnz = self.d2_nnz, i, j, k, ms = self.min_sup
        cdef uint64_t* gT = self.gT
        cdef uint64_t* row
        cdef int32_t* c0 = self.cnt0
        cdef int32_t* c1 = self.cnt1
        cdef int32_t* f0 = self.f0
        cdef int32_t* f1 = self.f1
        cdef int32_t* bl = self.bli
        cdef int32_t* br = self.bri
        cdef int n0 = <int>self._d2_nc[0], n1 = <int>self._d2_nc[1]
        cdef int p0, p1, e11, e10, e01, e00, fi0, fi1, best
        cdef int32_t bri, bli
        cdef int s11, s10, s01, s00, big = n0 + n1 + 1
        for i in range(nf):
            f0[i] = self.fq1[2 * i]
            f1[i] = self.fq1[2 * i + 1]
            br[i] = _imin(f0[i], f1[i])
            bl[i] = _imin(n0 - f0[i], n1 - f1[i])
        self._pairs_transpose(self.gw, self.d2_nnz, nf)
        for i in range(nf - 1):
            self._pairs_of(self.ccw, self.d2_nnz, i, nf, self.cnt0, self.cnt1)
            bri = br[i]
            bli = bl[i]
            fi0 = f0[i]
            fi1 = f1[i]
            if ms <= 1:
                # an empty quadrant gives the branch's leaf error: harmless
                odt_quadrants(c0, c1, NULL, NULL, f0, f1, bl, br, fi0, fi1, n0, n1,
                              i + 1, nf, &bli, &bri)
            else:
                for k in range(i + 1, nf):
                    p0 = c0[k]
                    p1 = c1[k]
                    s11 = p0 + p1
                    s10 = fi0 + fi1 - s11
                    s01 = f0[k] + f1[k] - s11
                    s00 = n0 + n1 - s11 - s10 - s01
                    e11 = _imin(p0, p1)
                    e10 = _imin(fi0 - p0, fi1 - p1)
                    e01 = _imin(f0[k] - p0, f1[k] - p1)
                    e00 = _imin(n0 - fi0 - f0[k] + p0, n1 - fi1 - f1[k] + p1)
                    bri = _imin(bri, e11 + e10 if (s11 >= ms and s10 >= ms) else big)
                    bli = _imin(bli, e01 + e00 if (s01 >= ms and s00 >= ms) else big)
                    br[k] = _imin(br[k], e11 + e01 if (s11 >= ms and s01 >= ms) else big)
                    bl[k] = _imin(bl[k], e10 + e00 if (s10 >= ms and s00 >= ms) else big)
            br[i] = bri
            bl[i] = bli
        best = big
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return <double>best

    cdef double _depth1_order(self, int d, double leaf, int* out_f) noexcept nogil:
        """Best split of depth 1 for the absolute / pinball loss.

        The cover's rows are in target order (the caller sorts the rows by
        y), so for each feature two passes over them give both children's
        weights, their lower weighted tau-quantiles and the sums before
        them, hence both leaf losses, with no child cover, cache entry or
        leaf evaluation of its own.
        """
        cdef int n = self.objective.gather(self.cv.cov + d * self.W,
                                           self.cv.cidx + d * self.W, self.cv.cnnz[d])
        cdef int32_t* rows = self.objective.rows
        cdef double* w = self.objective.w
        cdef double* yv = self.objective.y
        cdef int f, i, r, b, ms = self.min_sup
        cdef int cnt[2]
        cdef double T[2]
        cdef double S[2]
        cdef double cw[2]
        cdef double cs[2]
        cdef double q[2]
        cdef double Wb[2]
        cdef double Sb[2]
        cdef bint found[2]
        cdef double tau = self.tau, a = self.above, c = self.below
        cdef double best = leaf, wr, yr, loss
        cdef uint64_t* col
        out_f[0] = FEATURE_LEAF
        for f in range(self.m):
            col = self.cv.cols + f * self.W
            cnt[0] = 0
            cnt[1] = 0
            T[0] = 0.0
            T[1] = 0.0
            S[0] = 0.0
            S[1] = 0.0
            for i in range(n):
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                wr = w[r] if w != NULL else 1.0
                cnt[b] += 1
                T[b] += wr
                S[b] += wr * yv[r]
            if cnt[0] < ms or cnt[1] < ms:
                continue
            for b in range(2):
                cw[b] = 0.0
                cs[b] = 0.0
                found[b] = T[b] <= 0.0
                q[b] = 0.0
                Wb[b] = 0.0
                Sb[b] = 0.0
            for i in range(n):
                if found[0] and found[1]:
                    break
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                if found[b]:
                    continue
                wr = w[r] if w != NULL else 1.0
                yr = yv[r]
                if cw[b] + wr >= tau * T[b] and wr > 0:
                    q[b] = yr
                    Wb[b] = cw[b]
                    Sb[b] = cs[b]
                    found[b] = True
                else:
                    cw[b] += wr
                    cs[b] += wr * yr
            loss = 0.0
            for b in range(2):
                if T[b] > 0.0:
                    # rows before the quantile row lie at or below it, the
                    # others at or above it (ties cost nothing either way)
                    loss += (a * ((S[b] - Sb[b]) - q[b] * (T[b] - Wb[b]))
                             + c * (q[b] * Wb[b] - Sb[b]))
            if loss < best:
                best = loss
                out_f[0] = f
        return best if best > self.eps else 0.0

    cdef double _depth1_ranks(self, int d, double leaf, int* out_f) noexcept nogil:
        """``_depth1_order`` for unit weights, over the cover's words.

        A side of a split holds ``cnt`` rows and its tau-quantile is its
        ``ceil(tau * cnt)``-th row in target order, which is row order: the
        counts are popcounts (a feature splitting the cover as one met before
        is skipped), and one pass over the words finds both sides'
        quantile rows and sums y (the side's, and below its quantile row)
        from the objective's byte tables (``_objective.ysum``), 8 lookups per
        word instead of one step per row.
        """
        cdef int W = self.W, nnz = self.cv.cnnz[d], j, f, b, ms = self.min_sup
        cdef uint64_t* cov = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef const double* yb = self.objective.ybytes
        cdef uint64_t* col
        cdef uint64_t* g = self.gw
        cdef double* sc = self.wsum
        cdef uint64_t x[2]
        cdef int cnt[2]
        cdef int k[2]
        cdef int acc[2]
        cdef double Sb[2]
        cdef double q[2]
        cdef double sx[2]
        cdef int N = 0, pc
        cdef uint64_t h
        cdef double S = 0.0, S1, loss, best = leaf
        cdef double tau = self.tau, a = self.above, c = self.below
        out_f[0] = FEATURE_LEAF
        for j in range(nnz):
            N += odt_popcount(cov[j])
            sc[j] = ysum(yb, ix[j], cov[j])
            S += sc[j]
        self.cv.new_splits()
        for f in range(self.m):
            col = self.cv.cols + f * W
            h = self.cv.split_hash(d, f, &cnt[1])
            cnt[0] = N - cnt[1]
            if cnt[1] < ms or cnt[0] < ms or cnt[1] == 0 or cnt[0] == 0:
                continue
            if self.cv.seen_split(d, f, h):
                continue    # the same split as a feature evaluated before
            for j in range(nnz):
                g[j] = cov[j] & col[ix[j]]
            for b in range(2):
                k[b] = <int>ceil(tau * cnt[b])
                if k[b] < 1:
                    k[b] = 1
                acc[b] = 0
                Sb[b] = 0.0
                q[b] = 0.0
            S1 = 0.0
            for j in range(nnz):
                x[1] = g[j]
                x[0] = cov[j] & ~g[j]
                sx[1] = ysum(yb, ix[j], x[1]) if x[1] else 0.0
                sx[0] = sc[j] - sx[1]
                S1 += sx[1]
                for b in range(2):
                    if acc[b] >= k[b]:
                        continue    # quantile row found
                    pc = odt_popcount(x[b])
                    if acc[b] + pc < k[b]:
                        acc[b] += pc
                        Sb[b] += sx[b]
                    else:
                        q[b] = _quantile_row(yb, self.objective.y, ix[j], x[b],
                                             k[b] - acc[b] - 1, &Sb[b])
                        acc[b] = k[b]
            # rows below a side's quantile row lie at or below it, the others
            # at or above it (k - 1 rows below, summing to Sb)
            loss = (a * ((S1 - Sb[1]) - q[1] * (cnt[1] - (k[1] - 1)))
                    + c * (q[1] * (k[1] - 1) - Sb[1])
                    + a * (((S - S1) - Sb[0]) - q[0] * (cnt[0] - (k[0] - 1)))
                    + c * (q[0] * (k[0] - 1) - Sb[0]))
            if loss < best:
                best = loss
                out_f[0] = f
        return best if best > self.eps else 0.0

    cdef int _ranks_features(self, int d, int N, int nw) noexcept nogil:
        """``_d2_ranks``' set-up: the depth-d cover's N rows packed in target
        order (``oy``, its byte tables ``otab``, prefix sums ``ocov``), and
        the useful features (both sides >= min_sup, one of each split):
        their packed words ``gw``, prefix counts ``ocnt`` and sums ``opre``,
        row counts ``f0`` and the losses of their sides as leaves (``br`` /
        ``bl``). Returns how many (ids in ``fid``)."""
        cdef int W = self.W, nnz = self.cv.cnnz[d], j, b, f, t, nf = 0, ones
        cdef int ms = self.min_sup
        cdef uint64_t* w = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef int32_t* rows = self.objective.rows
        cdef double* y = self.objective.y
        cdef double* oy = self.oy
        cdef double* tab
        cdef uint64_t* g
        cdef int32_t* cp
        cdef double* sp
        cdef double tau = self.tau, a = self.above, c = self.below
        cdef uint64_t h
        self.objective.gather(w, ix, nnz)
        for t in range(N):
            oy[t] = y[rows[t]]
        for t in range(N, nw << 6):
            oy[t] = 0.0
        for j in range(nw << 3):
            tab = self.otab + (j << 8)
            tab[0] = 0.0
            for b in range(1, 256):
                tab[b] = tab[b & (b - 1)] + oy[(j << 3) + odt_ctz(b)]
        self.ocov[0] = 0.0
        for j in range(nw):
            self.ocov[j + 1] = self.ocov[j] + ysum(self.otab, j, _last_mask(N, j, nw))
        self.cv.new_splits()
        for f in range(self.m):
            h = self.cv.split_hash(d, f, &ones)
            if ones < ms or N - ones < ms or self.cv.seen_split(d, f, h):
                continue
            g = self.gw + nf * nw
            if odt_compact != NULL:
                odt_compact(self.cv.cols + f * W, ix, w, nnz, g)
            else:
                _compact_soft(self.cv.cols + f * W, ix, w, nnz, g)
            cp = self.ocnt + nf * (nw + 1)
            sp = self.opre + nf * (nw + 1)
            cp[0] = 0
            sp[0] = 0.0
            for j in range(nw):
                cp[j + 1] = cp[j] + odt_popcount(g[j])
                sp[j + 1] = sp[j] + (ysum(self.otab, j, g[j]) if g[j] else 0.0)
            self.f0[nf] = ones
            self.br[nf] = _set_loss(g, cp, sp, self.ocov, False, N, nw, tau, a, c,
                                    self.otab, oy)
            self.bl[nf] = _set_loss(g, cp, sp, self.ocov, True, N, nw, tau, a, c,
                                    self.otab, oy)
            self.fid[nf] = f
            nf += 1
        self.d2_nnz = nw
        return nf

    cdef double _d2_ranks(self, int d, double leaf, int* out_f) noexcept nogil:
        """Exact best subtree of depth <= 2 for the absolute / pinball loss
        (unit weights), from the feature pairs.

        With the cover's rows packed in target order, a quadrant of a pair
        (i, k) holds ``n`` rows and its tau-quantile is its ``_rank``-th row.
        The pairs are ``_ranks_pairs``'; the best root is the one whose best
        left and right branches (``bl`` / ``br``) sum least.
        """
        cdef int nnz = self.cv.cnnz[d], j, i, nf, N = 0, nw
        cdef uint64_t* cov = self.cv.cov + d * self.W
        cdef double best, l
        cdef _Quantile one
        out_f[0] = FEATURE_LEAF
        for j in range(nnz):
            N += odt_popcount(cov[j])
        nw = (N + 63) >> 6
        nf = self._ranks_features(d, N, nw)
        if nf == 0:
            return leaf
        one.tau, one.a, one.c = self.tau, self.above, self.below
        self._ranks_pairs(N, nw, nf, one, self.bl, self.br)
        best = leaf
        for i in range(nf):
            l = self.bl[i] + self.br[i]
            if l < best:
                best = l
                out_f[0] = self.fid[i]
        return best if best > self.eps else 0.0

    cdef void _ranks_pairs(self, int N, int nw, int nf, _Taus q, double* bl,
                           double* br) noexcept nogil:
        """The feature pairs of ``_d2_ranks`` at one quantile or at K
        (``solve_quantiles``): the best branches of root i at quantile j
        improved in ``bl`` / ``br`` (at ``j * stride + i``).

        The counts of the pairs of root i come from the pair-count kernel;
        one pass over the words of i AND k (``odt_and_prefix``) gives its
        prefix counts and sums of y, and with those of i, k and the cover,
        every quadrant's (shared by the quantiles). Per quantile, a
        branch-free scan finds the word of each quadrant's quantile row (the
        words before it hold fewer than its rank of the quadrant's rows),
        which gives its y and the sum of y below it; the four quadrant
        losses are candidate branches of roots i and k (``v``: which
        branches have ``min_sup`` rows on both sides).

        The fused ``_Taus`` compiles one quantile apart, with the quadrant
        code inline: a loop over quantiles, or a call per pair, costs the
        single-quantile search 6 % of its instructions.
        """
        cdef int i, k, j, t, r0, x, ms = self.min_sup, ni, nk, nq
        cdef uint64_t* gw = self.gw
        cdef uint64_t* gi
        cdef uint64_t* gk
        cdef int32_t* ocnt = self.ocnt
        cdef double* opre = self.opre
        cdef int32_t* cpi
        cdef int32_t* cpk
        cdef double* spi
        cdef double* spk
        cdef int32_t* c11 = self.opc
        cdef double* s11 = self.ops
        cdef int32_t* cnt0 = self.cnt0
        cdef int32_t* f0 = self.f0
        cdef const double* cs = self.ocov
        cdef const double* tab = self.otab
        cdef const double* oy = self.oy
        cdef double tau, a, c
        cdef double* blj
        cdef double* brj
        cdef int n[4]
        cdef bint v[4]
        cdef int kq[4]
        cdef int wq[4]
        cdef double qv[4]
        cdef double sb[4]
        cdef double lq[4]
        if _Taus is _Quantile:
            nq = 1
        else:
            nq = q.K
        self._pairs_transpose(self.gw, self.d2_nnz, nf)
        for i in range(nf):
            gi = gw + i * nw
            cpi = ocnt + i * (nw + 1)
            spi = opre + i * (nw + 1)
            ni = f0[i]
            odt_pair_counts(self.gT, nf, nw, gi, gi, cnt0, self.cnt1, i + 1, nf)
            for k in range(i + 1, nf):
                nk = f0[k]
                n[0] = cnt0[k]                # i and k
                n[1] = ni - n[0]              # i, not k
                n[2] = nk - n[0]              # k, not i
                n[3] = N - ni - nk + n[0]     # neither
                v[0] = n[0] >= ms and n[1] >= ms     # right branch of i
                v[1] = n[2] >= ms and n[3] >= ms     # left branch of i
                v[2] = n[0] >= ms and n[2] >= ms     # right branch of k
                v[3] = n[1] >= ms and n[3] >= ms     # left branch of k
                if not (v[0] or v[1] or v[2] or v[3]):
                    continue
                gk = gw + k * nw
                cpk = ocnt + k * (nw + 1)
                spk = opre + k * (nw + 1)
                # prefix counts and sums of y of the rows of i AND k
                odt_and_prefix(oy, tab, gi, gk, nw, c11, s11)
                for j in range(nq):
                    if _Taus is _Quantile:
                        tau, a, c, blj, brj = q.tau, q.a, q.c, bl, br
                    else:
                        tau, a, c = q.tau[j], q.a[j], q.c[j]
                        blj, brj = bl + j * q.stride, br + j * q.stride
                    for x in range(4):
                        kq[x] = _rank(tau, n[x])
                        wq[x] = 0
                    for t in range(1, nw):
                        r0 = c11[t]
                        wq[0] += r0 < kq[0]
                        wq[1] += cpi[t] - r0 < kq[1]
                        wq[2] += cpk[t] - r0 < kq[2]
                        wq[3] += (t << 6) - cpi[t] - cpk[t] + r0 < kq[3]
                    for x in range(4):
                        qv[x] = 0.0
                        sb[x] = 0.0
                        if n[x] <= 0:
                            continue
                        t = wq[x]
                        sb[x] = _quadrant(x, s11[t], spi[t], spk[t], cs[t])
                        qv[x] = _quantile_row(
                            tab, oy, t, _quadrant_bits(x, gi[t], gk[t], _last_mask(N, t, nw)),
                            kq[x] - _quadrant(x, c11[t], cpi[t], cpk[t],
                                              <int32_t>_imin(t << 6, N)) - 1,
                            &sb[x])
                    for x in range(4):
                        lq[x] = _side_loss(n[x], kq[x],
                                           _quadrant(x, s11[nw], spi[nw], spk[nw], cs[nw]),
                                           qv[x], sb[x], a, c)
                    if v[0] and lq[0] + lq[1] < brj[i]:
                        brj[i] = lq[0] + lq[1]
                    if v[1] and lq[2] + lq[3] < blj[i]:
                        blj[i] = lq[2] + lq[3]
                    if v[2] and lq[0] + lq[2] < brj[k]:
                        brj[k] = lq[0] + lq[2]
                    if v[3] and lq[1] + lq[3] < blj[k]:
                        blj[k] = lq[1] + lq[3]

    cdef void _pairs_transpose(self, const uint64_t* g, int nw, int nf) noexcept nogil:
        """Word-major copy ``gT`` of nf features' words (``nw`` each, ``g``)."""
        cdef int i, j
        for i in range(nf):
            for j in range(nw):
                self.gT[j * nf + i] = g[i * nw + j]

    cdef void _pairs_of(self, const uint64_t* cw, int nw, int i, int nf, int32_t* c0,
                        int32_t* c1) noexcept nogil:
        """Class-0 / class-1 counts ``c0[k]`` / ``c1[k]`` of the pairs (i, k),
        k in (i, nf), in one sweep (after ``_pairs_transpose``; ``cw``: the
        class words, ``nw`` a class)."""
        cdef int j
        for j in range(nw):
            self.tmp[j] = self.gT[j * nf + i] & cw[j]
            self.tmp[nw + j] = self.gT[j * nf + i] & cw[nw + j]
        odt_pair_counts(self.gT, nf, nw, self.tmp, self.tmp + nw, c0, c1, i + 1, nf)

    # ------------------------------------------- children by difference
    cdef int _pack(self, const uint64_t* src, const int32_t* idx, const uint64_t* rows,
                   int nnz, uint64_t* out) noexcept nogil:
        """The bits of ``src`` (word ``idx[j]`` for j < nnz) on ``rows``,
        packed densely; returns the words written."""
        if odt_compact != NULL:
            return odt_compact(src, idx, rows, nnz, out)
        return _compact_soft(src, idx, rows, nnz, out)

    cdef void _pair_table(self, const uint64_t* g, const uint64_t* cw, int nf, int nw,
                          int32_t* f0, int32_t* f1, int32_t* p0,
                          int32_t* p1) noexcept nogil:
        """Class-0 / class-1 counts of nf features (``nw`` packed words each,
        ``g``; class words ``cw``) into f0 / f1, and of their pairs (i, k),
        k > i, into row i of p0 / p1 (nf entries a row)."""
        cdef int i, j
        cdef long long c0, c1
        cdef const uint64_t* gi
        for i in range(nf):
            gi = g + i * nw
            c0 = 0
            c1 = 0
            for j in range(nw):
                c0 += odt_popcount(gi[j] & cw[j])
                c1 += odt_popcount(gi[j] & cw[nw + j])
            f0[i] = <int32_t>c0
            f1[i] = <int32_t>c1
        self._pairs_transpose(g, nw, nf)
        for i in range(nf - 1):
            self._pairs_of(cw, nw, i, nf, p0 + i * nf, p1 + i * nf)

    cdef bint _sibling_parent(self, int d) noexcept nogil:
        """Pack the features that split the parent (cover d - 1) on its rows
        and count their items and pairs by class; False when they are more
        than the tables hold. A feature that splits the parent's rows as an
        earlier one (the same split or its mirror) is left out: it does on
        every child what that one does, and the first of equal roots wins."""
        cdef int W = self.W, p = d - 1, nnz = self.cv.cnnz[d - 1], f, j, c
        cdef int nf = 0, N = 0, nw, tot
        cdef uint64_t* w = self.cv.cov + p * W
        cdef int32_t* ix = self.cv.cidx + p * W
        cdef uint64_t* g
        for j in range(nnz):
            N += odt_popcount(w[j])
        nw = (N + 63) >> 6
        self.sp_nw = nw
        for c in range(2):
            self._pack(self.cv.cmask + c * W, ix, w, nnz, self.sp_cw + c * nw)
        tot = 0
        for j in range(nw):
            tot += odt_popcount(self.sp_cw[j])
        self.sp_n0 = tot
        self.sp_n1 = N - tot
        self._splits_reset()
        self.split_rows = N
        for f in range(self.m):
            g = self.sp_g + nf * nw
            self._pack(self.cv.cols + f * W, ix, w, nnz, g)
            tot = 0
            for j in range(nw):
                tot += odt_popcount(g[j])
            if tot == 0 or tot == N:
                continue
            if self._split_seen(self.sp_g, nf, nw, NULL):
                continue
            if nf == self.sp_cap:
                return False
            self.sp_fid[nf] = f
            nf += 1
        self.sp_nf = nf
        self._pair_table(self.sp_g, self.sp_cw, nf, nw, self.sp_f0, self.sp_f1,
                         self.sp_p0, self.sp_p1)
        return True

    cdef void _sibling_rows(self, int d, int n) noexcept nogil:
        """Count the child with fewer rows of the split that made cover d
        (``n`` rows) on the parent's packed rows."""
        cdef int W = self.W, nw = self.sp_nw, N = self.sp_n0 + self.sp_n1
        cdef int side, j, i, snw, S = 0
        cdef uint64_t* r = self.ss_rows
        side = self.cv.split_v[d] if 2 * n <= N else 1 - self.cv.split_v[d]
        self._pack(self.cv.cols + self.cv.split_f[d] * W, self.cv.cidx + (d - 1) * W,
                   self.cv.cov + (d - 1) * W, self.cv.cnnz[d - 1], r)
        for j in range(nw):
            if not side:
                r[j] = ~r[j]
            r[j] &= _last_mask(N, j, nw)
            S += odt_popcount(r[j])
        snw = (S + 63) >> 6
        for i in range(2):
            self._pack(self.sp_cw + i * nw, self.sp_ident, r, nw, self.ss_cw + i * snw)
        for i in range(self.sp_nf):
            self._pack(self.sp_g + i * nw, self.sp_ident, r, nw, self.ss_g + i * snw)
        self._pair_table(self.ss_g, self.ss_cw, self.sp_nf, snw, self.ss_f0,
                         self.ss_f1, self.ss_p0, self.ss_p1)
        j = 0
        for i in range(snw):
            j += odt_popcount(self.ss_cw[i])
        self.ss_n0 = j
        self.ss_n1 = S - j
        self.sp_feat = self.cv.split_f[d]
        self.sp_side = side

    cdef double _d2_sibling(self, int d, double total, int* out_f) noexcept nogil:
        """``_d2_pairs_binary`` of a child of a depth-3 node, by difference.

        The two children of a split partition the parent's rows, so their
        item and pair counts add up to the parent's. From the second request
        under one parent (cover d - 1, named by its version), the parent's
        counts are taken once; then per split feature only the child with
        fewer rows is counted, and its sibling is the difference (MurTree's
        incremental counting, for siblings; as ``WeightedCore.depth2_child``
        does for weights). The parent's features that are constant on the
        child are partners here (their quadrants give a branch its leaf
        error, its starting value) but never roots, so the loss and the root
        are those of ``_d2_pairs_binary``. NaN: count this child directly.
        """
        cdef int i, o, nf, n0, n1, N = <int>total, best, tot
        cdef int32_t bli, bri
        cdef int32_t* f0
        cdef int32_t* f1
        cdef int32_t* bl = self.bli
        cdef int32_t* br = self.bri
        cdef bint same
        if self.cv.version[d - 1] != self.sp_version:
            self.sp_version = self.cv.version[d - 1]
            self.sp_req = 0
            self.sp_feat = -1
            self.sp_nf = 0
        self.sp_req += 1
        if self.sp_req == 1:
            # one child may be all this parent asks for
            return NAN
        if self.sp_req == 2 and not self._sibling_parent(d):
            self.sp_nf = -1
        if self.sp_nf < 0:
            return NAN
        if self.cv.split_f[d] != self.sp_feat:
            self._sibling_rows(d, N)
        self.sp_hits += 1
        nf = self.sp_nf
        same = self.cv.split_v[d] == self.sp_side
        if same:
            f0 = self.ss_f0
            f1 = self.ss_f1
            n0 = self.ss_n0
            n1 = self.ss_n1
        else:
            f0 = self.f0
            f1 = self.f1
            for i in range(nf):
                f0[i] = self.sp_f0[i] - self.ss_f0[i]
                f1[i] = self.sp_f1[i] - self.ss_f1[i]
            n0 = self.sp_n0 - self.ss_n0
            n1 = self.sp_n1 - self.ss_n1
        for i in range(nf):
            br[i] = _imin(f0[i], f1[i])
            bl[i] = _imin(n0 - f0[i], n1 - f1[i])
        for i in range(nf - 1):
            o = i * nf
            bri = br[i]
            bli = bl[i]
            if same:
                odt_quadrants(self.ss_p0 + o, self.ss_p1 + o, NULL, NULL, f0, f1, bl, br,
                              f0[i], f1[i], n0, n1, i + 1, nf, &bli, &bri)
            else:
                odt_quadrants(self.sp_p0 + o, self.sp_p1 + o, self.ss_p0 + o,
                              self.ss_p1 + o, f0, f1, bl, br, f0[i], f1[i], n0, n1,
                              i + 1, nf, &bli, &bri)
            br[i] = bri
            bl[i] = bli
        best = N + 1
        out_f[0] = FEATURE_LEAF
        for i in range(nf):
            tot = f0[i] + f1[i]
            if tot >= 1 and N - tot >= 1 and bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.sp_fid[i]
        return <double>best

    cdef double _d2_cost_binary(self, int nf, double leaf, int* out_f) noexcept nogil:
        """``_d2_pairs_binary`` for a two-class cost matrix (min_sup = 1):
        the same pair-count kernel, then the quadrants of each root with all
        its partners in one branch-free kernel pass, each quadrant priced by
        the cheaper of the two predictions (int32 arithmetic when the costs
        are small integers, else doubles)."""
        cdef int i
        cdef int32_t* f0 = self.f0
        cdef int32_t* f1 = self.f1
        cdef double* C = self.objective.cost
        cdef int32_t* ci = self.cost_i
        cdef double n0 = self._d2_nc[0], n1 = self._d2_nc[1], best
        cdef int32_t bli_i, bri_i
        cdef double bli_d, bri_d
        for i in range(nf):
            f0[i] = self.fq1[2 * i]
            f1[i] = self.fq1[2 * i + 1]
            if self.cost_int:
                self.bri[i] = <int32_t>_cost2(C[0], C[1], C[2], C[3], f0[i], f1[i])
                self.bli[i] = <int32_t>_cost2(C[0], C[1], C[2], C[3],
                                              n0 - f0[i], n1 - f1[i])
            else:
                self.br[i] = _cost2(C[0], C[1], C[2], C[3], f0[i], f1[i])
                self.bl[i] = _cost2(C[0], C[1], C[2], C[3], n0 - f0[i], n1 - f1[i])
        self._pairs_transpose(self.gw, self.d2_nnz, nf)
        for i in range(nf - 1):
            self._pairs_of(self.ccw, self.d2_nnz, i, nf, self.cnt0, self.cnt1)
            if self.cost_int:
                bli_i = self.bli[i]
                bri_i = self.bri[i]
                odt_cost_quadrants_i(self.cnt0, self.cnt1, f0, f1, self.bli, self.bri,
                                     ci[0], ci[1], ci[2], ci[3], f0[i], f1[i],
                                     <int32_t>n0, <int32_t>n1, i + 1, nf, &bli_i, &bri_i)
                self.bli[i] = bli_i
                self.bri[i] = bri_i
            else:
                bli_d = self.bl[i]
                bri_d = self.br[i]
                odt_cost_quadrants_d(self.cnt0, self.cnt1, f0, f1, self.bl, self.br,
                                     C[0], C[1], C[2], C[3], f0[i], f1[i], n0, n1,
                                     i + 1, nf, &bli_d, &bri_d)
                self.bl[i] = bli_d
                self.br[i] = bri_d
        if self.cost_int:
            for i in range(nf):
                self.bl[i] = self.bli[i]
                self.br[i] = self.bri[i]
        return self._best_root(nf, leaf, out_f)

    cdef double _best_root(self, int nf, double leaf, int* out_f) noexcept nogil:
        """The best root from the branch losses ``bl`` / ``br`` of the useful
        features, or the leaf (``FEATURE_LEAF``) when no split beats it."""
        cdef int i
        cdef double best = leaf
        out_f[0] = FEATURE_LEAF
        for i in range(nf):
            if self.bl[i] + self.br[i] < best:
                best = self.bl[i] + self.br[i]
                out_f[0] = self.fid[i]
        return best

    cdef double _d2_table_binary(self, int nf, double leaf, int* out_f) noexcept nogil:
        """Depth-2 optimum (min_sup = 1) for a Python loss of two-class counts.

        The pair counts of every root come from the pair-count kernel and
        are kept (``pc0`` / ``pc1``); the quadrants of each root are looked up
        in the objective's dense table of priced count vectors by the kernel
        ``odt_table_quadrants``, as ``_d2_cost_binary`` prices them. When
        some were not priced yet (``_table_branches`` says so), they are
        priced in one batch (``_table_misses``) and the lookups repeated.
        While the table fills (the last call priced some), the batch comes
        first, which saves the lookups that would find the misses.
        """
        cdef int i
        cdef Py_ssize_t row
        for i in range(nf):
            self.f0[i] = self.fq1[2 * i]
            self.f1[i] = self.fq1[2 * i + 1]
        self._pairs_transpose(self.gw, self.d2_nnz, nf)
        for i in range(nf - 1):
            self._pairs_of(self.ccw, self.d2_nnz, i, nf, self.cnt0, self.cnt1)
            row = <Py_ssize_t>i * nf
            memcpy(self.pc0 + row, self.cnt0, nf * sizeof(int32_t))
            memcpy(self.pc1 + row, self.cnt1, nf * sizeof(int32_t))
        if self.table_missed:
            self.table_missed = self._table_misses(nf) > 0
        elif self._table_branches(nf):
            self.table_missed = self._table_misses(nf) > 0
        else:
            return self._best_root(nf, leaf, out_f)
        if self.objective.aborted:
            out_f[0] = FEATURE_LEAF
            return leaf
        self._table_branches(nf)
        return self._best_root(nf, leaf, out_f)

    cdef bint _table_branches(self, int nf) noexcept nogil:
        """Best branch losses ``bl`` / ``br`` of each root from the table;
        whether a candidate leaf had no loss in it yet."""
        cdef double* T = self.objective.dense
        cdef Py_ssize_t s0 = self.objective.dstride[0], row
        cdef int n0 = <int>self._d2_nc[0], n1 = <int>self._d2_nc[1], i, miss = 0
        cdef double bli, bri
        for i in range(nf):
            self.br[i] = T[self.f0[i] * s0 + self.f1[i]]
            self.bl[i] = T[(n0 - self.f0[i]) * s0 + n1 - self.f1[i]]
            if isnan(self.br[i]) or isnan(self.bl[i]):
                miss = 1
        for i in range(nf - 1):
            row = <Py_ssize_t>i * nf
            bli = self.bl[i]
            bri = self.br[i]
            odt_table_quadrants(self.pc0 + row, self.pc1 + row, self.f0, self.f1, T,
                                <int32_t>s0, self.bl, self.br, self.f0[i], self.f1[i],
                                n0, n1, i + 1, nf, &bli, &bri, &miss)
            self.bl[i] = bli
            self.br[i] = bri
        return miss != 0

    cdef Py_ssize_t _table_misses(self, int nf) noexcept nogil:
        """Price the candidate leaves missing from the table in one batch;
        how many."""
        cdef double* T = self.objective.dense
        cdef double* q = self.node_q
        cdef int32_t* f0 = self.f0
        cdef int32_t* f1 = self.f1
        cdef Py_ssize_t s0 = self.objective.dstride[0], L = 0, o, row
        cdef int n0 = <int>self._d2_nc[0], n1 = <int>self._d2_nc[1], i, k, p0, p1
        for i in range(nf):
            L = _want(T, s0, f0[i], f1[i], q, L)
            L = _want(T, s0, n0 - f0[i], n1 - f1[i], q, L)
            row = <Py_ssize_t>i * nf
            for k in range(i + 1, nf):
                p0 = self.pc0[row + k]
                p1 = self.pc1[row + k]
                L = _want(T, s0, p0, p1, q, L)
                L = _want(T, s0, f0[i] - p0, f1[i] - p1, q, L)
                L = _want(T, s0, f0[k] - p0, f1[k] - p1, q, L)
                L = _want(T, s0, n0 - f0[i] - f0[k] + p0, n1 - f1[i] - f1[k] + p1, q, L)
        for o in range(L):
            T[<Py_ssize_t>q[2 * o] * s0 + <Py_ssize_t>q[2 * o + 1]] = NAN
        self.objective.batch_loss(q, <int>L, self.node_l)
        return L

    cdef double _d2_objective(self, int nf, int r, double leaf,
                              int* out_f) noexcept nogil:
        """Depth-2 optimum from the class counts for a cost matrix or a
        Python loss of the class supports.

        First every candidate leaf (each branch of each root, each quadrant
        of each pair of features) gets its class supports in ``node_q``;
        then all are priced at once (one batch for a Python loss); then the
        best left / right branch of each root is kept, as ``_d2_pairs``.
        """
        cdef int K = self.K, c, i, k, ms = self.min_sup
        cdef Py_ssize_t L = 0, o
        cdef int32_t* fi
        cdef int32_t* fk
        cdef int32_t* pc = self.pairbuf
        cdef double* nc = self._d2_nc
        cdef double* q = self.node_q
        cdef double* lo = self.node_l
        cdef double* bl = self.bl
        cdef double* br = self.br
        cdef double ntot = 0.0, best, p, s11, s10, s01, s00
        for c in range(K):
            ntot += nc[c]
        # branches of each root as leaves: (f = 1), (f = 0)
        for i in range(nf):
            fi = self.fq1 + i * K
            for c in range(K):
                q[L * K + c] = fi[c]
                q[(L + 1) * K + c] = nc[c] - fi[c]
            L += 2
        if r >= 2 and K == 2:
            # two classes: the pair counts of all partners of i at once
            self._pairs_transpose(self.gw, self.d2_nnz, nf)
            for i in range(nf):
                fi = self.fq1 + i * K
                self._pairs_of(self.ccw, self.d2_nnz, i, nf, self.cnt0, self.cnt1)
                for k in range(i + 1, nf):
                    fk = self.fq1 + k * K
                    for c in range(2):
                        p = self.cnt0[k] if c == 0 else self.cnt1[k]
                        q[L * K + c] = p
                        q[(L + 1) * K + c] = fi[c] - p
                        q[(L + 2) * K + c] = fk[c] - p
                        q[(L + 3) * K + c] = nc[c] - fi[c] - fk[c] + p
                    L += 4
        elif r >= 2:
            for i in range(nf):
                fi = self.fq1 + i * K
                self._mask_root(i)
                for k in range(i + 1, nf):
                    fk = self.fq1 + k * K
                    self._pair_classes(k, pc)
                    for c in range(K):
                        p = <double>pc[c]
                        q[L * K + c] = p                                  # i, k
                        q[(L + 1) * K + c] = fi[c] - p                    # i, not k
                        q[(L + 2) * K + c] = fk[c] - p                    # not i, k
                        q[(L + 3) * K + c] = nc[c] - fi[c] - fk[c] + p    # neither
                    L += 4
        if self.okind == OBJ_PY_CLASS:
            self.objective.batch_loss(q, <int>L, lo)
        else:
            for o in range(L):
                lo[o] = self.objective.class_loss(q + o * K)
        for i in range(nf):
            br[i] = lo[2 * i]
            bl[i] = lo[2 * i + 1]
        o = 2 * nf
        if r >= 2:
            for i in range(nf):
                for k in range(i + 1, nf):
                    if ms > 1:
                        s11 = 0.0
                        s10 = 0.0
                        s01 = 0.0
                        s00 = 0.0
                        for c in range(K):
                            s11 += q[o * K + c]
                            s10 += q[(o + 1) * K + c]
                            s01 += q[(o + 2) * K + c]
                            s00 += q[(o + 3) * K + c]
                        if s11 >= ms and s10 >= ms and lo[o] + lo[o + 1] < br[i]:
                            br[i] = lo[o] + lo[o + 1]
                        if s01 >= ms and s00 >= ms and lo[o + 2] + lo[o + 3] < bl[i]:
                            bl[i] = lo[o + 2] + lo[o + 3]
                        if s11 >= ms and s01 >= ms and lo[o] + lo[o + 2] < br[k]:
                            br[k] = lo[o] + lo[o + 2]
                        if s10 >= ms and s00 >= ms and lo[o + 1] + lo[o + 3] < bl[k]:
                            bl[k] = lo[o + 1] + lo[o + 3]
                    else:
                        # min_sup = 1: an empty quadrant gives the branch's leaf
                        if lo[o] + lo[o + 1] < br[i]:
                            br[i] = lo[o] + lo[o + 1]
                        if lo[o + 2] + lo[o + 3] < bl[i]:
                            bl[i] = lo[o + 2] + lo[o + 3]
                        if lo[o] + lo[o + 2] < br[k]:
                            br[k] = lo[o] + lo[o + 2]
                        if lo[o + 1] + lo[o + 3] < bl[k]:
                            bl[k] = lo[o + 1] + lo[o + 3]
                    o += 4
        return self._best_root(nf, leaf, out_f)

    cdef int quantiles(self, const double* taus, int K) except -1:
        """Prepare ``solve_quantiles`` for the pinball losses at ``taus[:K]``."""
        cdef int j
        if self.oy == NULL or self.okind != OBJ_QUANTILE:
            raise ValueError("several quantiles need the pinball loss with unit weights")
        self.mK = K
        self.mtau = <double*>_alloc(K * sizeof(double))
        self.ma = <double*>_alloc(K * sizeof(double))
        self.mc = <double*>_alloc(K * sizeof(double))
        self.mbl = <double*>_alloc(K * (self.m + 1) * sizeof(double))
        self.mbr = <double*>_alloc(K * (self.m + 1) * sizeof(double))
        for j in range(K):
            self.mtau[j] = taus[j]
            self.ma[j] = taus[j]
            self.mc[j] = 1.0 - taus[j]
        return 0

    cdef bint solve_quantiles(self, int d, int r, int j0, const double* leaves,
                              const double* eps, double* out_err,
                              int* out_f) noexcept nogil:
        """``solve`` at the quantiles ``j0`` .. K - 1 of ``quantiles`` in one
        pass over the feature pairs (``_ranks_pairs``: the pair counts and the
        prefix sums of each pair are shared); ``leaves[j]`` the cover's loss
        as a leaf at quantile j, ``eps[j]`` its purity. Writes ``out_err[j]``
        / ``out_f[j]``; returns False (nothing written) when the cover is not
        a depth-2 order-statistics case."""
        cdef int nnz = self.cv.cnnz[d], j, i, nf, N = 0, nw, S = self.m + 1
        cdef uint64_t* cov = self.cv.cov + d * self.W
        cdef uint64_t* g
        cdef int32_t* cp
        cdef double* sp
        cdef double best, l
        cdef _Quantiles many
        if r < 2 or self.mK == 0:
            return False
        for j in range(nnz):
            N += odt_popcount(cov[j])
        nw = (N + 63) >> 6
        nf = self._ranks_features(d, N, nw)
        for j in range(j0, self.mK):
            for i in range(nf):
                g = self.gw + i * nw
                cp = self.ocnt + i * (nw + 1)
                sp = self.opre + i * (nw + 1)
                self.mbr[j * S + i] = _set_loss(g, cp, sp, self.ocov, False, N, nw,
                                                self.mtau[j], self.ma[j], self.mc[j],
                                                self.otab, self.oy)
                self.mbl[j * S + i] = _set_loss(g, cp, sp, self.ocov, True, N, nw,
                                                self.mtau[j], self.ma[j], self.mc[j],
                                                self.otab, self.oy)
        if nf > 0:
            many.tau, many.a, many.c = self.mtau + j0, self.ma + j0, self.mc + j0
            many.K, many.stride = self.mK - j0, S
            self._ranks_pairs(N, nw, nf, many, self.mbl + j0 * S, self.mbr + j0 * S)
        for j in range(j0, self.mK):
            best = leaves[j]
            out_f[j] = FEATURE_LEAF
            out_err[j] = best
            if best <= eps[j]:
                continue    # a pure leaf
            for i in range(nf):
                l = self.mbl[j * S + i] + self.mbr[j * S + i]
                if l < best:
                    best = l
                    out_f[j] = self.fid[i]
            out_err[j] = best if best > eps[j] else 0.0
        return True

    cdef double solve(self, int d, int r, double leaf, double* nc, double total,
                      double eps, int* out_f) noexcept nogil:
        """Exact optimum (loss, root feature) of a depth-r (<= 2) subtree.

        ``leaf`` is the loss of the depth-d cover as one leaf, ``nc`` its
        class supports (counts) and ``total`` its rows; losses at most
        ``eps`` count as zero.
        """
        cdef int nf, i, K = self.K, c
        cdef double best, left, right, e
        cdef int32_t* fi
        cdef double s0, m0, s1, m1, v
        self.eps = eps
        out_f[0] = FEATURE_LEAF
        best = leaf
        if leaf <= self.eps or r <= 0:
            return leaf
        if self.okind == OBJ_ABSOLUTE or self.okind == OBJ_QUANTILE:
            if self.objective.ybytes != NULL:
                if r >= 2 and self.oy != NULL:
                    return self._d2_ranks(d, leaf, out_f)
                return self._depth1_ranks(d, leaf, out_f)
            return self._depth1_order(d, leaf, out_f)
        if self.weighted:
            if r == 2 and d >= 1:
                return self.wcore.depth2_child(
                    self.cv.cov + (d - 1) * self.W, self.cv.cidx + (d - 1) * self.W,
                    self.cv.cnnz[d - 1], self.cv.version[d - 1], self.cv.split_f[d],
                    self.cv.split_v[d], self.cv.cov + d * self.W, self.cv.cidx + d * self.W,
                    self.cv.cnnz[d], leaf, self.eps, out_f)
            return self.wcore.depth2(self.cv.cov + d * self.W, self.cv.cidx + d * self.W,
                                     self.cv.cnnz[d], r, leaf, self.eps, out_f)
        if self.sp_cap and r == 2 and d >= 1:
            e = self._d2_sibling(d, total, &i)
            if not isnan(e):
                if e < best:
                    best = e
                    out_f[0] = i
                return best
        self._d2_nc = nc
        nf = self._d2_counts(d, total)
        if nf == 0:
            return leaf
        if self.okind == OBJ_COST and K == 2 and r == 2 and self.min_sup <= 1:
            e = self._d2_cost_binary(nf, leaf, &i)
            if e < best:
                best = e
                out_f[0] = i
            return best
        if (self.pc0 != NULL and r == 2 and self.min_sup <= 1
                and not self.objective.aborted):
            e = self._d2_table_binary(nf, leaf, &i)
            if e < best:
                best = e
                out_f[0] = i
            return best
        if self.okind != OBJ_ERROR:
            e = self._d2_objective(nf, r, leaf, &i)
            if e < best:
                best = e
                out_f[0] = i
            return best
        if r == 1:
            for i in range(nf):
                fi = self.fq1 + i * K
                s1 = 0.0
                m1 = 0.0
                m0 = 0.0
                for c in range(K):
                    v = fi[c]
                    s1 += v
                    if v > m1:
                        m1 = v
                    v = self._d2_nc[c] - fi[c]
                    if v > m0:
                        m0 = v
                e = (s1 - m1) + (total - s1 - m0)
                if e < best:
                    best = e
                    out_f[0] = self.fid[i]
                    if best <= 0:
                        break
            return best
        if K == 2:
            e = self._d2_pairs_binary(d, nf, &i)
        else:
            e = self._d2_pairs(d, nf, &i)
        if e < best:
            best = e
            out_f[0] = i
        return best
