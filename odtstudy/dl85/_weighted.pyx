# cython: language_level=3
"""Real-valued sample weights for the DL8.5 classification core.

``WeightedCore`` holds the row weights and the two kernels the core
(``_search.pyx``) needs when the leaf error is ``total weight - largest
class weight`` (Aglin's thesis, chapter 6):

* :meth:`WeightedCore.class_supports`: the class weights of a sparse cover,
  by iterating the set bits of the cover;
* :meth:`WeightedCore.depth2`: the exact optimum of a subtree of depth
  <= 2. The item and item-pair class weights come from one pass over the
  cover's rows: each row adds its weight to every pair of its 1-features
  (as MurTree does for weights), then the four quadrants of every pair give
  the best left / right branch of both roots. Two reductions keep the pairs
  per row few: only one feature per partition of the cover is kept (the
  CP4IM files hold both ``x`` and ``not x``, and deeper covers make more
  columns coincide), and each feature is taken on its sparser side on the
  cover (splitting on ``not x`` is the same split); on the CP4IM sets this
  cuts the 1-features per row 3-5 times.

The popcount kernels of the unweighted core count 64 rows per instruction;
weights need one addition per row (and per pair of its features), so the
weighted depth-2 solver is slower than the unweighted one.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport int32_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

cnp.import_array()


cdef extern from *:
    """
    static inline int odt_w_popcount(unsigned long long x) {
        return __builtin_popcountll(x);
    }
    static inline int odt_w_ctz(unsigned long long x) {
        return __builtin_ctzll(x);
    }
    """
    int odt_w_popcount(uint64_t x) noexcept nogil
    int odt_w_ctz(uint64_t x) noexcept nogil


cdef void* _alloc(Py_ssize_t nbytes) except NULL:
    cdef void* p = malloc(nbytes if nbytes > 0 else 1)
    if p == NULL:
        raise MemoryError()
    memset(p, 0, nbytes if nbytes > 0 else 1)
    return p


cdef inline double _leaf_err(const double* v, int K) noexcept nogil:
    """Leaf error of class weights ``v``: total minus the largest (>= 0)."""
    cdef double s = 0.0, best = 0.0
    cdef int c
    for c in range(K):
        s += v[c]
        if v[c] > best:
            best = v[c]
    s -= best
    return s if s > 0 else 0.0


cdef class WeightedCore:
    """Row weights and weighted kernels for one DL8.5 search.

    Parameters
    ----------
    cols : ndarray of uint64, shape (n_features, n_words)
        Packed feature columns.
    cmask : ndarray of uint64, shape (n_classes, n_words)
        Packed rows of each class.
    weights : ndarray of float64, shape (n_rows,)
        Non-negative row weights.
    n_rows, min_sup : int
    """

    def __cinit__(self, const uint64_t[:, ::1] cols, const uint64_t[:, ::1] cmask,
                  const double[::1] weights, int n_rows, int min_sup=1):
        cdef Py_ssize_t m = cols.shape[0], K = cmask.shape[0], W = cmask.shape[1]
        cdef Py_ssize_t MW = (m + 63) // 64 if m > 0 else 1
        cdef Py_ssize_t r, f, c
        if weights.shape[0] != n_rows:
            raise ValueError("one weight per row is needed")
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
        self.flipm = <uint64_t*>_alloc(MW * sizeof(uint64_t))
        cdef Py_ssize_t hsize = 16
        while hsize < 2 * (m + 1):
            hsize *= 2
        self.hmask = <int>(hsize - 1)
        self.hfeat = <int32_t*>_alloc(hsize * sizeof(int32_t))
        self.hkey = <uint64_t*>_alloc(hsize * sizeof(uint64_t))
        self.hflip = <uint8_t*>_alloc(hsize * sizeof(uint8_t))
        self.total_weight = 0.0
        for r in range(n_rows):
            self.w[r] = weights[r]
            self.total_weight += weights[r]
            for c in range(K):
                if (cmask[c, r >> 6] >> (r & 63)) & 1:
                    self.ycls[r] = <int32_t>c
        if m > 0:
            memcpy(self.cols, &cols[0, 0], m * W * sizeof(uint64_t))
        for f in range(m):
            for r in range(n_rows):
                if (cols[f, r >> 6] >> (r & 63)) & 1:
                    self.rowbits[r * MW + (f >> 6)] |= (<uint64_t>1) << (f & 63)

    def __dealloc__(self):
        free(self.w)
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
        free(self.flipm)
        free(self.hfeat)
        free(self.hkey)
        free(self.hflip)

    cdef double class_supports(self, const uint64_t* cov, const int32_t* idx,
                               int nnz, double* out) noexcept nogil:
        """Class weights of a sparse cover into ``out``; returns their sum."""
        cdef int c, j, base, r
        cdef uint64_t x
        cdef double total = 0.0
        for c in range(self.K):
            out[c] = 0.0
        for j in range(nnz):
            x = cov[j]
            base = idx[j] << 6
            while x:
                r = base + odt_w_ctz(x)
                x &= x - 1
                out[self.ycls[r]] += self.w[r]
        for c in range(self.K):
            total += out[c]
        return total

    cdef int n_rows(self, const uint64_t* cov, int nnz) noexcept nogil:
        cdef int j, cnt = 0
        for j in range(nnz):
            cnt += odt_w_popcount(cov[j])
        return cnt

    cdef double common_weight(self, const uint64_t* dense, const uint64_t* cov,
                              const int32_t* idx, int nnz) noexcept nogil:
        """Weight of the rows in both a dense bitset and a sparse cover."""
        cdef int j, base
        cdef uint64_t x
        cdef double total = 0.0
        for j in range(nnz):
            x = dense[idx[j]] & cov[j]
            base = idx[j] << 6
            while x:
                total += self.w[base + odt_w_ctz(x)]
                x &= x - 1
        return total

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

    cdef double depth2(self, const uint64_t* cov, const int32_t* idx, int nnz,
                       int r, double leaf, double eps, int* out_f) noexcept nogil:
        """Exact (error, root feature) of the best subtree of depth <= r <= 2.

        ``leaf`` is the cover's leaf error; ``out_f`` gets the root feature,
        or -1 when the leaf is optimal.
        """
        cdef int K = self.K, W = self.W, MW = self.MW, ms = self.min_sup
        cdef int j, c, f, a, b, nf = 0, base, row, L, t, cnt, N
        cdef uint64_t x, y
        cdef uint64_t* col
        cdef uint64_t* rb
        cdef double wr
        cdef double* Fa
        cdef double* Fb
        cdef double* Pab
        cdef int32_t* Pc
        cdef double* q = self.q
        cdef double best = leaf, e, e11, e10, e01, e00
        cdef int32_t s11, s10, s01, s00
        cdef uint64_t h
        cdef bint flip, dup
        out_f[0] = -1
        if leaf <= eps or r <= 0:
            return leaf
        N = self.n_rows(cov, nnz)
        # usable features (both branches hold >= min_sup rows), each taken on
        # its sparser side on this cover (x or not-x: the same split), and
        # one feature per partition of the cover (CP4IM data holds both x
        # and not-x; deeper covers make more columns coincide)
        for j in range(MW):
            self.useful[j] = 0
            self.flipm[j] = 0
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
            self.useful[f >> 6] |= (<uint64_t>1) << (f & 63)
            if flip:
                self.flipm[f >> 6] |= (<uint64_t>1) << (f & 63)
            self.loc[f] = nf
            self.fid[nf] = f
            nf += 1
        if nf == 0:
            return leaf
        memset(self.tot, 0, K * sizeof(double))
        memset(self.F, 0, nf * K * sizeof(double))
        memset(self.Fc, 0, nf * sizeof(int32_t))
        if r >= 2:
            memset(self.P, 0, nf * nf * K * sizeof(double))
            if ms > 1:
                memset(self.Pc, 0, nf * nf * sizeof(int32_t))
        # one pass over the rows of the cover
        for j in range(nnz):
            x = cov[j]
            base = idx[j] << 6
            while x:
                row = base + odt_w_ctz(x)
                x &= x - 1
                c = self.ycls[row]
                wr = self.w[row]
                self.tot[c] += wr
                rb = self.rowbits + <Py_ssize_t>row * MW
                L = 0
                for t in range(MW):
                    y = (rb[t] ^ self.flipm[t]) & self.useful[t]
                    while y:
                        self.lst[L] = self.loc[(t << 6) + odt_w_ctz(y)]
                        L += 1
                        y &= y - 1
                for a in range(L):
                    self.F[self.lst[a] * K + c] += wr
                    self.Fc[self.lst[a]] += 1
                if r >= 2:
                    for a in range(L):
                        # class-major layout: row lst[a] of class c's matrix
                        Pab = self.P + (<Py_ssize_t>c * nf + self.lst[a]) * nf
                        for b in range(a + 1, L):
                            Pab[self.lst[b]] += wr
                    if ms > 1:
                        for a in range(L):
                            Pc = self.Pc + <Py_ssize_t>self.lst[a] * nf
                            for b in range(a + 1, L):
                                Pc[self.lst[b]] += 1
        # leaves of each branch as the starting point
        for a in range(nf):
            Fa = self.F + a * K
            for c in range(K):
                q[c] = self.tot[c] - Fa[c]
            self.bl[a] = _leaf_err(q, K)
            self.br[a] = _leaf_err(Fa, K)
        if r >= 2:
            for a in range(nf):
                Fa = self.F + a * K
                for b in range(a + 1, nf):
                    Fb = self.F + b * K
                    Pab = self.P + <Py_ssize_t>a * nf + b
                    for c in range(K):
                        wr = Pab[<Py_ssize_t>c * nf * nf]
                        q[c] = wr                                       # a, b
                        q[K + c] = Fa[c] - wr                           # a, not b
                        q[2 * K + c] = Fb[c] - wr                       # not a, b
                        q[3 * K + c] = self.tot[c] - Fa[c] - Fb[c] + wr
                    e11 = _leaf_err(q, K)
                    e10 = _leaf_err(q + K, K)
                    e01 = _leaf_err(q + 2 * K, K)
                    e00 = _leaf_err(q + 3 * K, K)
                    if ms > 1:
                        s11 = self.Pc[a * nf + b]
                        s10 = self.Fc[a] - s11
                        s01 = self.Fc[b] - s11
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
        for a in range(nf):
            e = self.bl[a] + self.br[a]
            if e < best:
                best = e
                out_f[0] = self.fid[a]
        return best

    def supports(self, const uint64_t[::1] cover):
        """Class weights of a dense cover (for tests)."""
        cdef int j, nnz = cover.shape[0]
        idx = np.arange(nnz, dtype=np.int32)
        cdef const int32_t[::1] iv = idx
        out = np.zeros(self.K)
        cdef double[::1] ov = out
        self.class_supports(&cover[0], &iv[0], nnz, &ov[0])
        return out

    def solve_depth2(self, const uint64_t[::1] cover, int r, double leaf):
        """(error, root feature) of the best subtree of depth <= r (for tests)."""
        cdef int nnz = cover.shape[0], f = -1
        idx = np.arange(nnz, dtype=np.int32)
        cdef const int32_t[::1] iv = idx
        cdef double e = self.depth2(&cover[0], &iv[0], nnz, r, leaf, 0.0, &f)
        return e, f
