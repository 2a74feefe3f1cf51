# cython: language_level=3
"""Depth-2 solver from weighted item / item-pair statistics.

Responsibility: the exact optimum of a subtree of depth <= 2 when a leaf's
loss is a function of statistics that add up over its rows, but not of row
counts alone: class weights (weighted misclassification, or a cost matrix
``cost[p, c]``: the cheapest prediction's cost), or ``(w, w y, w y^2)``
(squared error). ``_objective.Objective`` builds a ``WeightedCore`` when its
loss is of this kind, and the search (``_search.pyx``) calls it:

* :meth:`WeightedCore.depth2`: the item and item-pair statistics come from
  one pass over the cover's rows: each row adds its weight to every pair of
  its 1-features (as MurTree does for weights), then the four quadrants of
  every pair give the best left / right branch of both roots. Two
  reductions keep the pairs per row few: only one feature per partition of
  the cover is kept (the CP4IM files hold both ``x`` and ``not x``, and
  deeper covers make more columns coincide), and each feature is taken on
  its sparser side on the cover (splitting on ``not x`` is the same split);
  on the CP4IM sets this cuts the 1-features per row 3-5 times.
* :meth:`WeightedCore.depth2_child`: the same for the children of a depth-3
  node. The two children of a split partition their parent's rows, so their
  statistics add up to the parent's: once the parent's are known, each
  split feature costs one pass over the rows of its smaller child, and the
  larger child is the difference (MurTree's incremental counting, applied
  to siblings).

The popcount kernels of the unweighted engine count 64 rows per
instruction; weights need one addition per row and pair of its features,
so this solver remains slower than the count one (squared error runs it:
the ``sq`` column against ``cls`` in ``benchmarks/dl85_instructions.py``'s
record, ``benchmarks/results/dl85_instructions.txt``).
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from odtstudy.dl85.engine._util cimport _alloc, _cheapest_cost, _misclassified

cnp.import_array()


cdef extern from *:
    """
    static inline int odt_w_popcount(unsigned long long x) {
        return __builtin_popcountll(x);
    }
    static inline int odt_w_ctz(unsigned long long x) {
        return __builtin_ctzll(x);
    }
    static inline double odt_w_min(double a, double b) { return a < b ? a : b; }

    /* Two classes, min_sup = 1: the four quadrants of root a with each
       partner k in [start, end) update the best left / right branch losses
       of a (*bl_a, *br_a) and of k. The pair weights of class c are
       A_c[k] (minus M_c[k] when M0 is given: a sibling's weights). */
    #define ODT_WQ_LOOP(P0, P1) \
        for (int k = start; k < end; k++) { \
            double p0 = P0, p1 = P1; \
            double e11 = odt_w_min(p0, p1); \
            double e10 = odt_w_min(fa0 - p0, fa1 - p1); \
            double e01 = odt_w_min(f0[k] - p0, f1[k] - p1); \
            double e00 = odt_w_min(n0 - fa0 - f0[k] + p0, n1 - fa1 - f1[k] + p1); \
            bra = odt_w_min(bra, e11 + e10); \
            bla = odt_w_min(bla, e01 + e00); \
            br[k] = odt_w_min(br[k], e11 + e01); \
            bl[k] = odt_w_min(bl[k], e10 + e00); \
        }
    #define ODT_WQ_BODY \
        double bra = *br_a, bla = *bl_a; \
        if (M0) { ODT_WQ_LOOP(A0[k] - M0[k], A1[k] - M1[k]) } \
        else { ODT_WQ_LOOP(A0[k], A1[k]) } \
        *br_a = bra; \
        *bl_a = bla;
    #define ODT_WQ_ARGS const double* A0, const double* A1, const double* M0, \
        const double* M1, const double* f0, const double* f1, double* bl, \
        double* br, double fa0, double fa1, double n0, double n1, int start, \
        int end, double* bl_a, double* br_a

    /* Squared error, from the interleaved pair statistics (w, w y) of root
       a with each partner k in [start, end) (minus a sibling's, M, when
       given). A leaf of statistics (w, s, ss) loses ss - s^2 / w (odt_gain:
       s^2 / w, 0 for an empty leaf), and the
       ss of the two quadrants of a branch add up to the branch's, so the
       best split of a branch is the one of largest gain s^2 / w summed
       over its quadrants: *gl_a, *gr_a (gl, gr for the partners) keep the
       largest gains of the left / right branch. With Pc (min_sup > 1) a
       quadrant pair counts only when both hold >= ms rows. */
    static inline double odt_w_max(double a, double b) { return a > b ? a : b; }
    static inline double odt_gain(double w, double s) {
        return w > 0.0 ? s * s / w : 0.0;
    }
    #define ODT_SQ_LOOP(W11, S11, OK) \
        for (int k = start; k < end; k++) { \
            double w11 = W11, s11 = S11; \
            double w01 = fw[k] - w11, s01 = fs[k] - s11; \
            double g11 = odt_gain(w11, s11); \
            double g10 = odt_gain(wa - w11, sa - s11); \
            double g01 = odt_gain(w01, s01); \
            double g00 = odt_gain(tw - wa - w01, ts - sa - s01); \
            OK \
            gra = odt_w_max(gra, ok11_10 ? g11 + g10 : -1.0); \
            gla = odt_w_max(gla, ok01_00 ? g01 + g00 : -1.0); \
            gr[k] = odt_w_max(gr[k], ok11_01 ? g11 + g01 : -1.0); \
            gl[k] = odt_w_max(gl[k], ok10_00 ? g10 + g00 : -1.0); \
        }
    #define ODT_SQ_ALL int ok11_10 = 1, ok01_00 = 1, ok11_01 = 1, ok10_00 = 1;
    #define ODT_SQ_SUPPORT \
        int c11 = Pc[k], c10 = ca - c11, c01 = Fc[k] - c11; \
        int c00 = N - ca - c01; \
        int ok11_10 = (c11 >= ms) & (c10 >= ms), ok01_00 = (c01 >= ms) & (c00 >= ms); \
        int ok11_01 = (c11 >= ms) & (c01 >= ms), ok10_00 = (c10 >= ms) & (c00 >= ms);
    #define ODT_SQ_BODY \
        double gra = *gr_a, gla = *gl_a; \
        if (Pc) { \
            if (M) { ODT_SQ_LOOP(P[2 * k] - M[2 * k], P[2 * k + 1] - M[2 * k + 1], \
                                 ODT_SQ_SUPPORT) } \
            else { ODT_SQ_LOOP(P[2 * k], P[2 * k + 1], ODT_SQ_SUPPORT) } \
        } else if (M) { \
            ODT_SQ_LOOP(P[2 * k] - M[2 * k], P[2 * k + 1] - M[2 * k + 1], ODT_SQ_ALL) \
        } else { ODT_SQ_LOOP(P[2 * k], P[2 * k + 1], ODT_SQ_ALL) } \
        *gr_a = gra; \
        *gl_a = gla;
    #define ODT_SQ_ARGS const double* P, const double* M, const double* fw, \
        const double* fs, double* gl, double* gr, double wa, double sa, \
        double tw, double ts, const int32_t* Pc, const int32_t* Fc, int ca, \
        int N, int ms, int start, int end, double* gl_a, double* gr_a

    /* _add_pairs for two interleaved statistics: Pm[a, b, 0] += w0 and
       Pm[a, b, 1] += w1 for the pairs a < b of the row's features lst
       (Pm is nf x nf x 2), one 128-bit addition per pair. */
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    static inline void odt_add_pairs2(double* Pm, const int32_t* lst, int L, int nf,
                                      double w0, double w1) {
    #if defined(__SSE2__)
        __m128d v = _mm_set_pd(w1, w0);
    #endif
        for (int a = 0; a < L; a++) {
            double* Pab = Pm + 2 * (size_t)lst[a] * nf;
            for (int b = a + 1; b < L; b++) {
                double* p = Pab + 2 * (size_t)lst[b];
    #if defined(__SSE2__)
                _mm_storeu_pd(p, _mm_add_pd(_mm_loadu_pd(p), v));
    #else
                p[0] += w0;
                p[1] += w1;
    #endif
            }
        }
    }

    typedef void (*odt_wq_fn)(ODT_WQ_ARGS);
    typedef void (*odt_sq_fn)(ODT_SQ_ARGS);
    static void odt_wq_base(ODT_WQ_ARGS) { ODT_WQ_BODY }
    static void odt_sq_base(ODT_SQ_ARGS) { ODT_SQ_BODY }
    static odt_wq_fn odt_wquadrants = odt_wq_base;
    static odt_sq_fn odt_sqquadrants = odt_sq_base;
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
    __attribute__((target("avx512f,avx512vl")))
    static void odt_wq_512(ODT_WQ_ARGS) { ODT_WQ_BODY }
    __attribute__((target("avx2")))
    static void odt_wq_avx2(ODT_WQ_ARGS) { ODT_WQ_BODY }
    __attribute__((target("avx512f,avx512vl")))
    static void odt_sq_512(ODT_SQ_ARGS) { ODT_SQ_BODY }
    __attribute__((target("avx2")))
    static void odt_sq_avx2(ODT_SQ_ARGS) { ODT_SQ_BODY }
    static void odt_wkernels_init(void) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
            odt_wquadrants = odt_wq_512;
            odt_sqquadrants = odt_sq_512;
        } else if (__builtin_cpu_supports("avx2")) {
            odt_wquadrants = odt_wq_avx2;
            odt_sqquadrants = odt_sq_avx2;
        }
    }
    #else
    static void odt_wkernels_init(void) {}
    #endif
    """
    int odt_w_popcount(uint64_t x) noexcept nogil
    int odt_w_ctz(uint64_t x) noexcept nogil
    double odt_w_min(double a, double b) noexcept nogil
    double odt_gain(double w, double s) noexcept nogil
    void odt_add_pairs2(double* Pm, const int32_t* lst, int L, int nf, double w0,
                        double w1) noexcept nogil
    void odt_wkernels_init() noexcept nogil
    void odt_wquadrants(const double* A0, const double* A1, const double* M0,
                        const double* M1, const double* f0, const double* f1,
                        double* bl, double* br, double fa0, double fa1, double n0,
                        double n1, int start, int end, double* bl_a,
                        double* br_a) noexcept nogil
    void odt_sqquadrants(const double* P, const double* M, const double* fw,
                         const double* fs, double* gl, double* gr, double wa,
                         double sa, double tw, double ts, const int32_t* Pc,
                         const int32_t* Fc, int ca, int N, int ms, int start, int end,
                         double* gl_a, double* gr_a) noexcept nogil


odt_wkernels_init()


cdef inline double _loss(const double* q, int K, bint squared,
                         const double* cost) noexcept nogil:
    """Loss of a leaf from its K class weights (misclassification, or the
    cheapest prediction under ``cost[p * K + c]`` when given), or from its
    statistics ``(w, w y, w y^2)`` when ``squared``."""
    cdef double v
    if cost != NULL:
        v = _cheapest_cost(cost, q, K)
        return v if v > 0.0 else 0.0
    if not squared:
        v = _misclassified(q, K)
        return v if v > 0 else 0.0
    if q[0] <= 0.0:
        return 0.0
    v = q[2] - q[1] * q[1] / q[0]
    return v if v > 0.0 else 0.0


cdef inline void _add_pairs(double* Pm, const int32_t* lst, int L, int nf,
                            double wr) noexcept nogil:
    """Add ``wr`` to ``Pm[a, b]`` for the pairs a < b of the row's features
    ``lst`` (ascending local indices; ``Pm`` is nf x nf, row-major)."""
    cdef int a, b
    cdef double* Pab
    for a in range(L):
        Pab = Pm + <Py_ssize_t>lst[a] * nf
        for b in range(a + 1, L):
            Pab[lst[b]] += wr


cdef class WeightedCore:
    """Row weights and weighted kernels for one DL8.5 search.

    Parameters
    ----------
    cols : ndarray of uint64, shape (n_features, n_words)
        Packed feature columns.
    cmask : ndarray of uint64, shape (n_classes, n_words), or None
        Packed rows of each class; None with ``y`` (squared error).
    weights : ndarray of float64, shape (n_rows,)
        Non-negative row weights.
    n_rows, min_sup : int
    y : ndarray of float64, shape (n_rows,), optional
        Regression target: the loss of a leaf is then the weighted squared
        error around its weighted mean, from the sufficient statistics
        ``(w, w y, w y^2)`` of its rows (y centred on its weighted mean, so
        the statistics do not cancel catastrophically). Only the depth-2
        solvers are meaningful in this mode.
    """

    def __cinit__(self, const uint64_t[:, ::1] cols, const uint64_t[:, ::1] cmask,
                  const double[::1] weights, int n_rows, int min_sup=1,
                  const double[::1] y=None):
        cdef Py_ssize_t m = cols.shape[0]
        cdef Py_ssize_t W = (n_rows + 63) // 64 if cmask is None else cmask.shape[1]
        cdef Py_ssize_t K = 3 if cmask is None else cmask.shape[0]
        cdef Py_ssize_t MW = (m + 63) // 64 if m > 0 else 1
        cdef Py_ssize_t r, f, c
        cdef double mean = 0.0, ss = 0.0, yc
        if weights.shape[0] != n_rows:
            raise ValueError("one weight per row is needed")
        if (cmask is None) == (y is None):
            raise ValueError("give class masks (classification) or y (squared error)")
        if y is not None and y.shape[0] != n_rows:
            raise ValueError("one target per row is needed")
        self.squared = y is not None
        self.n = n_rows
        self.m = <int>m
        self.K = <int>K
        self.W = <int>W
        self.MW = <int>MW
        self.min_sup = min_sup if min_sup > 1 else 1
        self.w = <double*>_alloc(n_rows * sizeof(double))
        self.ycls = <int32_t*>_alloc(n_rows * sizeof(int32_t))
        self.cols = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.rowbits = <uint64_t*>_alloc(n_rows * MW * sizeof(uint64_t))
        self.useful = <uint64_t*>_alloc(MW * sizeof(uint64_t))
        self.loc = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.fid = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.lst = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.tot = <double*>_alloc(K * sizeof(double))
        self.F = <double*>_alloc((m + 1) * K * sizeof(double))
        self.P = <double*>_alloc((m + 1) * (m + 1) * K * sizeof(double))
        self.Fc = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.Pc = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
        self.bl = <double*>_alloc((m + 1) * sizeof(double))
        self.br = <double*>_alloc((m + 1) * sizeof(double))
        self.q = <double*>_alloc(4 * K * sizeof(double))
        self.f0 = <double*>_alloc((m + 1) * sizeof(double))
        self.f1 = <double*>_alloc((m + 1) * sizeof(double))
        self.flipm = <uint64_t*>_alloc(MW * sizeof(uint64_t))
        cdef Py_ssize_t hsize = 16
        while hsize < 2 * (m + 1):
            hsize *= 2
        self.hmask = <int>(hsize - 1)
        self.hfeat = <int32_t*>_alloc(hsize * sizeof(int32_t))
        self.hkey = <uint64_t*>_alloc(hsize * sizeof(uint64_t))
        self.hflip = <uint8_t*>_alloc(hsize * sizeof(uint8_t))
        self.total_weight = 0.0
        self.pversion = -1
        cdef uint64_t x
        cdef Py_ssize_t j
        for r in range(n_rows):
            self.w[r] = weights[r]
            self.total_weight += weights[r]
        # leaf errors at most this are zero (sums of real weights round)
        self.eps = 1e-12 * self.total_weight
        if self.squared:
            self.stat = <double*>_alloc(3 * n_rows * sizeof(double))
            for r in range(n_rows):
                mean += weights[r] * y[r]
            mean = mean / self.total_weight if self.total_weight > 0 else 0.0
            for r in range(n_rows):
                yc = y[r] - mean
                self.stat[3 * r] = weights[r]
                self.stat[3 * r + 1] = weights[r] * yc
                self.stat[3 * r + 2] = weights[r] * yc * yc
                ss += weights[r] * yc * yc
            self.eps = 1e-12 * ss
        for c in range(K if not self.squared else 0):
            for j in range(W):
                x = cmask[c, j]
                while x:
                    r = (j << 6) + odt_w_ctz(x)
                    x &= x - 1
                    if r < n_rows:
                        self.ycls[r] = <int32_t>c
        if m > 0:
            memcpy(self.cols, &cols[0, 0], m * W * sizeof(uint64_t))
        # the transposed bit matrix: the feature bits of each row
        for f in range(m):
            for j in range(W):
                x = cols[f, j]
                while x:
                    r = (j << 6) + odt_w_ctz(x)
                    x &= x - 1
                    if r < n_rows:
                        self.rowbits[r * MW + (f >> 6)] |= (<uint64_t>1) << (f & 63)

    def __dealloc__(self):
        free(self.cost)
        free(self.w)
        free(self.stat)
        free(self.ycls)
        free(self.cols)
        free(self.rowbits)
        free(self.useful)
        free(self.loc)
        free(self.fid)
        free(self.lst)
        free(self.tot)
        free(self.F)
        free(self.P)
        free(self.Fc)
        free(self.Pc)
        free(self.bl)
        free(self.br)
        free(self.q)
        free(self.f0)
        free(self.f1)
        free(self.flipm)
        free(self.hfeat)
        free(self.hkey)
        free(self.hflip)
        free(self.puseful)
        free(self.pflipm)
        free(self.ploc)
        free(self.pfid)
        free(self.ptot)
        free(self.pF)
        free(self.pFc)
        free(self.pP)
        free(self.pPc)
        free(self.stot)
        free(self.sF)
        free(self.sFc)
        free(self.sP)
        free(self.sPc)

    cdef int n_rows(self, const uint64_t* cov, int nnz) noexcept nogil:
        cdef int j, cnt = 0
        for j in range(nnz):
            cnt += odt_w_popcount(cov[j])
        return cnt

    cdef bint _same(self, const uint64_t* cov, const int32_t* idx, int nnz,
                    int f, bint flip_f, int g, bint flip_g) noexcept nogil:
        """Whether oriented features f and g split the cover alike."""
        cdef uint64_t* cf = self.cols + f * self.W
        cdef uint64_t* cg = self.cols + g * self.W
        cdef uint64_t xf, xg
        cdef int j
        for j in range(nnz):
            xf = cov[j] & cf[idx[j]]
            xg = cov[j] & cg[idx[j]]
            if flip_f:
                xf ^= cov[j]
            if flip_g:
                xg ^= cov[j]
            if xf != xg:
                return False
        return True

    cdef int _select(self, const uint64_t* cov, const int32_t* idx, int nnz, int N,
                     uint64_t* useful, uint64_t* flipm, int32_t* loc,
                     int32_t* fid) noexcept nogil:
        """Features usable on a cover (both branches hold >= min_sup rows).

        Each is taken on its sparser side on this cover (x or not-x: the
        same split), and only one feature per partition of the cover is kept
        (CP4IM data holds both x and not-x; deeper covers make more columns
        coincide). Fills the masks and the local <-> feature maps; returns
        the number of features kept.
        """
        cdef int W = self.W, ms = self.min_sup, j, f, t, cnt, nf = 0
        cdef uint64_t x, h
        cdef uint64_t* col
        cdef bint flip, dup
        for j in range(self.MW):
            useful[j] = 0
            flipm[j] = 0
        for t in range(self.hmask + 1):
            self.hfeat[t] = -1
        for f in range(self.m):
            col = self.cols + f * W
            cnt = 0
            for j in range(nnz):
                cnt += odt_w_popcount(cov[j] & col[idx[j]])
            if cnt < ms or N - cnt < ms:
                continue
            flip = 2 * cnt > N
            h = 0
            for j in range(nnz):
                x = cov[j] & col[idx[j]]
                if flip:
                    x ^= cov[j]
                h = (h ^ x) * <uint64_t>0x9E3779B97F4A7C15ULL + <uint64_t>j
            t = <int>(h & <uint64_t>self.hmask)
            dup = False
            while self.hfeat[t] >= 0:
                if self.hkey[t] == h and self._same(cov, idx, nnz, f, flip,
                                                    self.hfeat[t], self.hflip[t]):
                    dup = True
                    break
                t = (t + 1) & self.hmask
            if dup:
                continue
            self.hfeat[t] = f
            self.hkey[t] = h
            self.hflip[t] = flip
            useful[f >> 6] |= (<uint64_t>1) << (f & 63)
            if flip:
                flipm[f >> 6] |= (<uint64_t>1) << (f & 63)
            loc[f] = nf
            fid[nf] = f
            nf += 1
        return nf

    cdef void _accumulate(self, const uint64_t* cov, const int32_t* idx, int nnz,
                          const uint64_t* split, uint64_t flip_split,
                          const uint64_t* useful, const uint64_t* flipm,
                          const int32_t* loc, int nf, int r, double* tot,
                          double* F, int32_t* Fc, double* P,
                          int32_t* Pc) noexcept nogil:
        """Class weights of the cover, of each item and of each item pair.

        One pass over the rows of the cover (restricted to the rows where
        column ``split`` xor ``flip_split`` is set, when ``split`` is given):
        each row adds its weight to every pair of its (oriented) features,
        as MurTree does for weights.
        """
        cdef int K = self.K, MW = self.MW, ms = self.min_sup
        cdef int j, c, a, b, base, row, L, t
        cdef uint64_t x, y
        cdef uint64_t* rb
        cdef double wr
        cdef int32_t* Pcr
        cdef int32_t* lst = self.lst
        cdef Py_ssize_t nn = <Py_ssize_t>nf * nf
        memset(tot, 0, K * sizeof(double))
        memset(F, 0, nf * K * sizeof(double))
        memset(Fc, 0, nf * sizeof(int32_t))
        if r >= 2:
            memset(P, 0, <Py_ssize_t>nf * nf * (2 if self.squared else K) * sizeof(double))
            if ms > 1:
                memset(Pc, 0, <Py_ssize_t>nf * nf * sizeof(int32_t))
        for j in range(nnz):
            x = cov[j]
            if split != NULL:
                x &= split[idx[j]] ^ flip_split
            base = idx[j] << 6
            while x:
                row = base + odt_w_ctz(x)
                x &= x - 1
                rb = self.rowbits + <Py_ssize_t>row * MW
                L = 0
                for t in range(MW):
                    y = (rb[t] ^ flipm[t]) & useful[t]
                    while y:
                        lst[L] = loc[(t << 6) + odt_w_ctz(y)]
                        L += 1
                        y &= y - 1
                for a in range(L):
                    Fc[lst[a]] += 1
                if not self.squared:
                    c = self.ycls[row]
                    wr = self.w[row]
                    tot[c] += wr
                    for a in range(L):
                        F[lst[a] * K + c] += wr
                    if r >= 2:
                        _add_pairs(P + <Py_ssize_t>c * nn, lst, L, nf, wr)
                else:
                    # squared error: the row's three statistics in slots 0-2
                    # of the items, (w, w y) interleaved for the pairs
                    for c in range(3):
                        wr = self.stat[3 * row + c]
                        tot[c] += wr
                        for a in range(L):
                            F[lst[a] * 3 + c] += wr
                    if r >= 2:
                        odt_add_pairs2(P, lst, L, nf, self.stat[3 * row],
                                       self.stat[3 * row + 1])
                if r >= 2 and ms > 1:
                    for a in range(L):
                        Pcr = Pc + <Py_ssize_t>lst[a] * nf
                        for b in range(a + 1, L):
                            Pcr[lst[b]] += 1

    cdef double _best_root(self, int nf, int N, const int32_t* fid,
                           const int32_t* Fc, double leaf, int* out_f) noexcept nogil:
        """The best root from ``bl`` / ``br`` (features constant on the cover
        are never roots); losses up to ``eps`` are zero."""
        cdef int a, ms = self.min_sup
        cdef double best = leaf, e
        for a in range(nf):
            if Fc[a] < ms or N - Fc[a] < ms:
                continue
            e = self.bl[a] + self.br[a]
            if e < best:
                best = e
                out_f[0] = fid[a]
        return best if best > self.eps else 0.0

    cdef double _evaluate(self, int nf, int N, const int32_t* fid, const double* tot,
                          const double* F, const int32_t* Fc, const double* P,
                          const double* M, const int32_t* Pc, int r, double leaf,
                          int* out_f) noexcept nogil:
        """Best (error, root) of depth <= r from the item / pair class weights.

        For each pair (a, b) the four quadrant class weights give a candidate
        split for both branches of a (child b) and of b (child a); ``bl`` /
        ``br`` keep the best loss of the left / right branch of each root.
        The pair weights are ``P`` minus ``M`` when ``M`` is given (a
        sibling's weights). Features constant on the cover are never roots.
        """
        cdef int K = self.K, ms = self.min_sup, a, b, c
        cdef const double* Fa
        cdef const double* Fb
        cdef const double* Pab
        cdef double* q = self.q
        cdef double best = leaf, e, e11, e10, e01, e00, wr
        cdef int32_t s11, s10, s01, s00
        cdef Py_ssize_t nn = <Py_ssize_t>nf * nf
        cdef bint sq = self.squared
        if sq:
            return self._evaluate_squared(nf, N, fid, tot, F, Fc, P, M, Pc, r, leaf,
                                          out_f)
        if K == 2 and ms <= 1 and r >= 2 and self.cost == NULL:
            for a in range(nf):
                self.f0[a] = F[2 * a]
                self.f1[a] = F[2 * a + 1]
                self.br[a] = odt_w_min(F[2 * a], F[2 * a + 1])
                self.bl[a] = odt_w_min(tot[0] - F[2 * a], tot[1] - F[2 * a + 1])
            for a in range(nf - 1):
                odt_wquadrants(P + a * nf, P + nn + a * nf,
                               M + a * nf if M != NULL else NULL,
                               M + nn + a * nf if M != NULL else NULL,
                               self.f0, self.f1, self.bl, self.br,
                               self.f0[a], self.f1[a], tot[0], tot[1], a + 1, nf,
                               &self.bl[a], &self.br[a])
            return self._best_root(nf, N, fid, Fc, leaf, out_f)
        # leaves of each branch as the starting point
        for a in range(nf):
            Fa = F + a * K
            for c in range(K):
                q[c] = tot[c] - Fa[c]
            self.bl[a] = _loss(q, K, sq, self.cost)
            self.br[a] = _loss(Fa, K, sq, self.cost)
        if r >= 2:
            for a in range(nf):
                Fa = F + a * K
                for b in range(a + 1, nf):
                    Fb = F + b * K
                    Pab = P + <Py_ssize_t>a * nf + b
                    for c in range(K):
                        wr = Pab[c * nn]
                        if M != NULL:
                            wr -= M[c * nn + <Py_ssize_t>a * nf + b]
                        q[c] = wr                                       # a, b
                        q[K + c] = Fa[c] - wr                           # a, not b
                        q[2 * K + c] = Fb[c] - wr                       # not a, b
                        q[3 * K + c] = tot[c] - Fa[c] - Fb[c] + wr
                    e11 = _loss(q, K, sq, self.cost)
                    e10 = _loss(q + K, K, sq, self.cost)
                    e01 = _loss(q + 2 * K, K, sq, self.cost)
                    e00 = _loss(q + 3 * K, K, sq, self.cost)
                    if ms > 1:
                        s11 = Pc[a * nf + b]
                        s10 = Fc[a] - s11
                        s01 = Fc[b] - s11
                        s00 = N - s11 - s10 - s01
                        if s11 >= ms and s10 >= ms and e11 + e10 < self.br[a]:
                            self.br[a] = e11 + e10
                        if s01 >= ms and s00 >= ms and e01 + e00 < self.bl[a]:
                            self.bl[a] = e01 + e00
                        if s11 >= ms and s01 >= ms and e11 + e01 < self.br[b]:
                            self.br[b] = e11 + e01
                        if s10 >= ms and s00 >= ms and e10 + e00 < self.bl[b]:
                            self.bl[b] = e10 + e00
                        continue
                    # min_sup = 1: an empty quadrant gives the branch's leaf
                    if e11 + e10 < self.br[a]:
                        self.br[a] = e11 + e10
                    if e01 + e00 < self.bl[a]:
                        self.bl[a] = e01 + e00
                    if e11 + e01 < self.br[b]:
                        self.br[b] = e11 + e01
                    if e10 + e00 < self.bl[b]:
                        self.bl[b] = e10 + e00
        return self._best_root(nf, N, fid, Fc, leaf, out_f)

    cdef double _evaluate_squared(self, int nf, int N, const int32_t* fid,
                                  const double* tot, const double* F,
                                  const int32_t* Fc, const double* P, const double* M,
                                  const int32_t* Pc, int r, double leaf,
                                  int* out_f) noexcept nogil:
        """``_evaluate`` for the squared error, from the gains ``s^2 / w`` of
        the quadrants (``odt_sqquadrants``): the pairs carry ``(w, w y)``
        only, since a branch's ``w y^2`` is the sum of its quadrants'."""
        cdef int a, ms = self.min_sup
        cdef Py_ssize_t nn = <Py_ssize_t>nf * nf
        cdef double* gl = self.bl
        cdef double* gr = self.br
        cdef double* fw = self.f0
        cdef double* fs = self.f1
        cdef double tw = tot[0], ts = tot[1], v
        for a in range(nf):
            fw[a] = F[3 * a]
            fs[a] = F[3 * a + 1]
            # no split of a branch: its leaf
            gr[a] = odt_gain(fw[a], fs[a])
            gl[a] = odt_gain(tw - fw[a], ts - fs[a])
        if r >= 2:
            for a in range(nf - 1):
                odt_sqquadrants(P + 2 * a * nf, M + 2 * a * nf if M != NULL else NULL,
                                fw, fs, gl, gr, fw[a], fs[a], tw, ts,
                                Pc + a * nf if ms > 1 else NULL, Fc, Fc[a], N, ms,
                                a + 1, nf, &gl[a], &gr[a])
        for a in range(nf):
            v = F[3 * a + 2] - gr[a]
            gr[a] = v if v > 0.0 else 0.0
            v = (tot[2] - F[3 * a + 2]) - gl[a]
            gl[a] = v if v > 0.0 else 0.0
        return self._best_root(nf, N, fid, Fc, leaf, out_f)

    cdef double depth2(self, const uint64_t* cov, const int32_t* idx, int nnz,
                       int r, double leaf, double eps, int* out_f) noexcept nogil:
        """Exact (error, root feature) of the best subtree of depth <= r <= 2.

        ``leaf`` is the cover's leaf error; ``out_f`` gets the root feature,
        or -1 when the leaf is optimal.
        """
        cdef int nf, N
        out_f[0] = -1
        if leaf <= eps or r <= 0:
            return leaf
        N = self.n_rows(cov, nnz)
        nf = self._select(cov, idx, nnz, N, self.useful, self.flipm, self.loc,
                          self.fid)
        if nf == 0:
            return leaf
        self._accumulate(cov, idx, nnz, NULL, 0, self.useful, self.flipm, self.loc,
                         nf, r, self.tot, self.F, self.Fc, self.P, self.Pc)
        return self._evaluate(nf, N, self.fid, self.tot, self.F, self.Fc, self.P,
                              NULL, self.Pc, r, leaf, out_f)

    cdef double depth2_child(self, const uint64_t* pcov, const int32_t* pidx,
                             int pnnz, long long pversion, int f, int v,
                             const uint64_t* cov, const int32_t* idx, int nnz,
                             double leaf, double eps, int* out_f) noexcept nogil:
        """``depth2`` (r = 2) of the child ``f = v`` of a parent cover.

        The two children of a split partition the parent's rows, so their
        item and pair weights add up to the parent's. From the second
        request under one parent (``pversion`` names the parent cover), the
        parent's weights are computed once; then per split feature only the
        child with fewer rows is accumulated, and its sibling is the
        difference (MurTree's incremental counting, for siblings).
        """
        cdef int K = self.K, ms = self.min_sup, nf, N, a, b, c, j, PN
        cdef Py_ssize_t o
        cdef uint64_t fl
        cdef bint same
        out_f[0] = -1
        if leaf <= eps:
            return leaf
        if pversion != self.pversion:
            self.pversion = pversion
            self.preq = 0
            self.sfeat = -1
        self.preq += 1
        if self.preq == 1 or self.psize == 0:
            # one child may be all this parent asks for: solve it directly
            return self.depth2(cov, idx, nnz, 2, leaf, eps, out_f)
        if self.preq == 2:
            PN = self.n_rows(pcov, pnnz)
            self.pN = PN
            self.pnf = self._select(pcov, pidx, pnnz, PN, self.puseful, self.pflipm,
                                    self.ploc, self.pfid)
            self._accumulate(pcov, pidx, pnnz, NULL, 0, self.puseful, self.pflipm,
                             self.ploc, self.pnf, 2, self.ptot, self.pF, self.pFc,
                             self.pP, self.pPc)
        nf = self.pnf
        if nf == 0:
            return leaf
        N = self.n_rows(cov, nnz)
        if self.sfeat != f:
            # accumulate the child of f with fewer rows
            self.sfeat = f
            self.sside = v if 2 * N <= self.pN else 1 - v
            fl = 0 if self.sside else ~(<uint64_t>0)
            self._accumulate(pcov, pidx, pnnz, self.cols + f * self.W, fl,
                             self.puseful, self.pflipm, self.ploc, nf, 2,
                             self.stot, self.sF, self.sFc, self.sP, self.sPc)
        same = v == self.sside
        if same:
            return self._evaluate(nf, N, self.pfid, self.stot, self.sF, self.sFc,
                                  self.sP, NULL, self.sPc, 2, leaf, out_f)
        # the sibling: parent minus the accumulated child
        for c in range(K):
            self.tot[c] = self.ptot[c] - self.stot[c]
        for j in range(nf * K):
            self.F[j] = self.pF[j] - self.sF[j]
        for j in range(nf):
            self.Fc[j] = self.pFc[j] - self.sFc[j]
        if ms > 1:
            for a in range(nf):
                o = <Py_ssize_t>a * nf
                for b in range(a + 1, nf):
                    self.Pc[o + b] = self.pPc[o + b] - self.sPc[o + b]
        return self._evaluate(nf, N, self.pfid, self.tot, self.F, self.Fc,
                              self.pP, self.sP, self.Pc, 2, leaf, out_f)

    def set_cost(self, const double[:, ::1] cost):
        """Price leaves with ``cost[p, c]`` (predict p, true c) instead of
        the misclassification: the cheapest prediction's total cost."""
        cdef int p, c, K = self.K
        if self.squared or cost.shape[0] != K or cost.shape[1] != K:
            raise ValueError("cost must be a (n_classes, n_classes) matrix")
        if self.cost == NULL:
            self.cost = <double*>_alloc(K * K * sizeof(double))
        for p in range(K):
            for c in range(K):
                self.cost[p * K + c] = cost[p, c]

    def enable_sibling_counts(self):
        """Allocate the parent / sibling buffers of :meth:`depth2_child`."""
        if self.psize:
            return
        cdef Py_ssize_t m = self.m, K = self.K
        self.puseful = <uint64_t*>_alloc(self.MW * sizeof(uint64_t))
        self.pflipm = <uint64_t*>_alloc(self.MW * sizeof(uint64_t))
        self.ploc = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.pfid = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.ptot = <double*>_alloc(K * sizeof(double))
        self.pF = <double*>_alloc((m + 1) * K * sizeof(double))
        self.pFc = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.pP = <double*>_alloc((m + 1) * (m + 1) * K * sizeof(double))
        self.pPc = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
        self.stot = <double*>_alloc(K * sizeof(double))
        self.sF = <double*>_alloc((m + 1) * K * sizeof(double))
        self.sFc = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.sP = <double*>_alloc((m + 1) * (m + 1) * K * sizeof(double))
        self.sPc = <int32_t*>_alloc((m + 1) * (m + 1) * sizeof(int32_t))
        self.psize = 1

    def solve_depth2(self, const uint64_t[::1] cover, int r, double leaf):
        """(error, root feature) of the best subtree of depth <= r (for tests)."""
        cdef int nnz = cover.shape[0], f = -1
        idx = np.arange(nnz, dtype=np.int32)
        cdef const int32_t[::1] iv = idx
        cdef double e = self.depth2(&cover[0], &iv[0], nnz, r, leaf, 0.0, &f)
        return e, f
