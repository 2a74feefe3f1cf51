# cython: language_level=3
"""Depth-2 solvers over class counts (C-level Cython; see ``_depth2.pyx``).

``Depth2Counts`` holds every buffer of the depth-2 solvers (allocated in
``__cinit__``, freed in ``__dealloc__``) and the solvers over the class
counts of a cover: the items' and pairs' counts (``_d2_counts``,
``_mask_root``, ``_pair_classes``), the pair passes (``_d2_pairs``,
``_d2_pairs_binary``), the cost-matrix and table kernels
(``_d2_cost_binary``, ``_d2_table_binary``), seen splits (``_split_seen``)
and children by difference (``_d2_sibling``). ``_kernels.h`` is static:
this module has its own copy of the kernels, chosen by ``_select_kernels``.
"""

from libc.math cimport INFINITY, NAN, isnan
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from odtstudy.dl85.engine._cache cimport FEATURE_LEAF
from odtstudy.dl85.engine._covers cimport Covers
from odtstudy.dl85.engine._kernels cimport (
    odt_compact,
    odt_cost_quadrants_d,
    odt_cost_quadrants_i,
    odt_kernel_isa,
    odt_kernels_init,
    odt_pair_counts,
    odt_popcount,
    odt_quadrants,
    odt_table_quadrants,
)
from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._util cimport _alloc

odt_kernels_init()


def kernel_isa():
    """Instruction set of this module's kernels."""
    return odt_kernel_isa.decode()


def _select_kernels(int level):
    """Use this module's kernels for ``level`` (``_kernels_select``)."""
    return _kernels_select(level)


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


cdef class Depth2Counts:
    """Buffers of the depth-2 solvers and the ones over class counts: the
    counts of a cover's features and pairs, pair solvers, cost-matrix and
    table kernels, children by difference (base of ``_depth2.Depth2``)."""

    def __cinit__(self, Covers covers, Objective objective, int min_sup, bint pairs):
        cdef Py_ssize_t m = covers.m, K = covers.K, W = covers.W
        self.cv = covers
        self.m = covers.m
        self.K = covers.K
        self.W = covers.W
        self.min_sup = min_sup
        self.objective = objective
        self.error_counts = objective.error_counts
        self.cost_matrix = objective.cost_matrix
        self.order_stats = objective.order_stats
        self.pinball = objective.pinball
        self.python_batches = objective.python_batches
        self.wcore = objective.core
        self.weighted = not objective.counts
        self.eps = 0.0
        self.table_missed = True    # the table of priced leaves starts empty
        self.order_weights(objective)
        self.cost_int = False
        if self.cost_matrix and K == 2 and not self.weighted:
            self._cost_integers(covers.n)
        if pairs and not self.error_counts and not self.weighted:
            # depth-2 solver of a cost / Python objective over class counts
            self.node_q = <double*>_alloc(2 * (m + 1) * (m + 1) * K * sizeof(double))
            self.node_l = <double*>_alloc(2 * (m + 1) * (m + 1) * sizeof(double))
            if (self.python_batches and K == 2 and objective.dense != NULL
                    and m <= TABLE_PAIRS_MAX_FEATURES):
                self.pc0 = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
                self.pc1 = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
        if self.order_stats and objective.ybytes != NULL:
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
        if (pairs and self.error_counts and K == 2 and not self.weighted
                and min_sup == 1):
            self._sibling_buffers()

    cdef void order_weights(self, Objective objective):
        """The order-statistics solvers' quantile and slopes: the
        objective's (its current tau, with several quantiles)."""
        self.tau = objective.order_tau
        self.above = objective.order_above
        self.below = objective.order_below

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
        free(self.mrank)
        free(self.mlq)
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
