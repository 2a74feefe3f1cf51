# cython: language_level=3
"""Sparse covers of the DL8.5 search (C-level Cython).

Responsibility: the rows of each node on the search path, as sparse
bitsets, and the operations on them (root, child, class supports, row
counts, intersection with a dense bitset, which features split a cover
alike); it knows nothing of losses, bounds or solvers.

Rows are bits of 64-bit words. ``cols[f * W + k]`` holds the rows with
``x[f] = 1``; ``cmask[c * W + k]`` the rows of class ``c``. The cover of the
node at depth ``d`` is a *sparse* bitset kept in a per-depth buffer: the
non-zero words ``cov[d * W + j]`` and their word indices ``cidx[d * W + j]``
for ``j < cnnz[d]``. A child's cover is the parent's non-zero words ANDed
with the feature column (or its complement), so covers only shrink and the
buffers of depths ``> d`` are reused (undone) when the search backtracks: no
allocation happens per node. Beside each cover: its itemset (sorted items
``2 f + v``), a version (new at every rewrite) and the split that made it,
so a solver can tell a child's parent cover (``_weighted.pyx`` reuses the
parent's pair weights).
"""

from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from odtstudy.dl85.engine._kernels cimport odt_popcount
from odtstudy.dl85.engine._util cimport _alloc


cdef class Covers:
    """The covers of the nodes of one search path (depths 0 to max_depth).

    Parameters
    ----------
    cols : ndarray of uint64, shape (n_features, n_words)
    cmask : ndarray of uint64, shape (n_classes, n_words)
    n_rows, max_depth : int
    """

    def __cinit__(self, const uint64_t[:, ::1] cols, const uint64_t[:, ::1] cmask,
                  int n_rows, int max_depth):
        cdef Py_ssize_t W = cmask.shape[1], m = cols.shape[0], K = cmask.shape[0]
        cdef Py_ssize_t D = max_depth + 1
        self.n = n_rows
        self.m = <int>m
        self.K = <int>K
        self.W = <int>W
        self.max_depth = max_depth
        self.cols = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        if m > 0:
            memcpy(self.cols, &cols[0, 0], m * W * sizeof(uint64_t))
        self.cmask = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        memcpy(self.cmask, &cmask[0, 0], K * W * sizeof(uint64_t))
        self.cov = <uint64_t*>_alloc(D * W * sizeof(uint64_t))
        self.cidx = <int32_t*>_alloc(D * W * sizeof(int32_t))
        self.cnnz = <int*>_alloc(D * sizeof(int))
        self.items = <int32_t*>_alloc(D * D * sizeof(int32_t))
        self.version = <long long*>_alloc(D * sizeof(long long))
        self.n_versions = 0
        self.split_f = <int32_t*>_alloc(D * sizeof(int32_t))
        self.split_v = <int32_t*>_alloc(D * sizeof(int32_t))
        cdef Py_ssize_t hsize = 16
        while hsize < 2 * (m + 1):
            hsize *= 2
        self.smask = <int>(hsize - 1)
        self.shash = <uint64_t*>_alloc(hsize * sizeof(uint64_t))
        self.sfeat = <int32_t*>_alloc(hsize * sizeof(int32_t))
        self.sstamp = <long long*>_alloc(hsize * sizeof(long long))
        self.n_stamp = 0
        self.root()

    def __dealloc__(self):
        free(self.cols)
        free(self.cmask)
        free(self.cov)
        free(self.cidx)
        free(self.cnnz)
        free(self.items)
        free(self.version)
        free(self.split_f)
        free(self.split_v)
        free(self.shash)
        free(self.sfeat)
        free(self.sstamp)

    cdef void root(self) noexcept nogil:
        """The depth-0 cover: every row."""
        cdef int k, W = self.W
        for k in range(W):
            self.cov[k] = ~(<uint64_t>0)
            self.cidx[k] = k
        if self.n % 64:
            self.cov[W - 1] = ((<uint64_t>1) << (self.n % 64)) - 1
        self.cnnz[0] = W
        self.n_versions += 1
        self.version[0] = self.n_versions

    cdef double class_supports(self, int d, double* s) noexcept nogil:
        """Fill ``s[:K]`` with the class supports of the depth-d cover;
        returns their sum (its rows)."""
        cdef int c, j, nnz = self.cnnz[d]
        cdef uint64_t* w = self.cov + d * self.W
        cdef int32_t* ix = self.cidx + d * self.W
        cdef uint64_t* cm
        cdef long long cnt
        cdef double total = 0.0
        for c in range(self.K):
            cm = self.cmask + c * self.W
            cnt = 0
            for j in range(nnz):
                cnt += odt_popcount(w[j] & cm[ix[j]])
            s[c] = <double>cnt
            total += s[c]
        return total

    cdef double rows(self, int d) noexcept nogil:
        """Rows of the depth-d cover."""
        cdef uint64_t* w = self.cov + d * self.W
        cdef double total = 0.0
        cdef int j
        for j in range(self.cnnz[d]):
            total += odt_popcount(w[j])
        return total

    cdef long long common(self, const uint64_t* dense, int d) noexcept nogil:
        """Rows of the depth-d cover in the dense bitset ``dense`` (W words)."""
        cdef uint64_t* w = self.cov + d * self.W
        cdef int32_t* ix = self.cidx + d * self.W
        cdef long long inter = 0
        cdef int j
        for j in range(self.cnnz[d]):
            inter += odt_popcount(dense[ix[j]] & w[j])
        return inter

    cdef void make_child(self, int d, int f, int v) noexcept nogil:
        """Cover and itemset of child ``I + (f, v)`` into depth d + 1."""
        cdef int W = self.W, j, nnz = self.cnnz[d], out = 0, i, L = self.max_depth + 1
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* cw = self.cov + (d + 1) * W
        cdef int32_t* cx = self.cidx + (d + 1) * W
        cdef uint64_t* col = self.cols + f * W
        cdef uint64_t x
        cdef uint64_t flip = 0 if v else ~(<uint64_t>0)
        for j in range(nnz):
            x = w[j] & (col[ix[j]] ^ flip)
            if x:
                cw[out] = x
                cx[out] = ix[j]
                out += 1
        self.cnnz[d + 1] = out
        self.n_versions += 1
        self.version[d + 1] = self.n_versions
        self.split_f[d + 1] = f
        self.split_v[d + 1] = v
        self.child_items(d, f, v, self.items + (d + 1) * L)

    cdef void child_items(self, int d, int f, int v, int32_t* dst) noexcept nogil:
        """Itemset of child ``I + (f, v)`` (d + 1 items) into ``dst``: sorted
        insertion of item ``2 f + v`` into the depth-d itemset."""
        cdef int i = 0
        cdef int32_t item = 2 * f + v
        cdef int32_t* src = self.items + d * (self.max_depth + 1)
        while i < d and src[i] < item:
            dst[i] = src[i]
            i += 1
        dst[i] = item
        while i < d:
            dst[i + 1] = src[i]
            i += 1

    # ------------------------------------------------ equivalent splits
    cdef uint64_t split_hash(self, int d, int f, int* ones) noexcept nogil:
        """Hash of the split of the depth-d cover by feature f, the same for
        x and not-x (the side holding the cover's first row is hashed);
        ``ones`` gets the rows with ``x[f] = 1``."""
        cdef int nnz = self.cnnz[d], j, cnt = 0
        cdef uint64_t* w = self.cov + d * self.W
        cdef int32_t* ix = self.cidx + d * self.W
        cdef uint64_t* col = self.cols + f * self.W
        cdef uint64_t x, flip = 0, h = <uint64_t>1469598103934665603ULL
        if nnz > 0 and not (col[ix[0]] & w[0] & (~w[0] + 1)):
            flip = ~(<uint64_t>0)
        for j in range(nnz):
            x = w[j] & col[ix[j]]
            cnt += odt_popcount(x)
            h = (h ^ ((x ^ (w[j] & flip)) + <uint64_t>j)) * <uint64_t>0x100000001B3ULL
        ones[0] = cnt
        return h ^ (h >> 29)

    cdef bint same_split(self, int d, int f, int g) noexcept nogil:
        """Whether features f and g split the depth-d cover alike (either
        way round: x and not-x make the same split)."""
        cdef int nnz = self.cnnz[d], j
        cdef uint64_t* w = self.cov + d * self.W
        cdef int32_t* ix = self.cidx + d * self.W
        cdef uint64_t* cf = self.cols + f * self.W
        cdef uint64_t* cg = self.cols + g * self.W
        cdef uint64_t low, flip = 0
        if nnz == 0:
            return True
        low = w[0] & (~w[0] + 1)
        if (cf[ix[0]] & low) != (cg[ix[0]] & low):
            flip = ~(<uint64_t>0)
        for j in range(nnz):
            if (w[j] & cf[ix[j]]) != (w[j] & (cg[ix[j]] ^ flip)):
                return False
        return True

    cdef void new_splits(self) noexcept nogil:
        """Forget the splits met so far: a new node's features follow."""
        self.n_stamp += 1

    cdef bint seen_split(self, int d, int f, uint64_t h) noexcept nogil:
        """Whether a feature met since ``new_splits`` splits the depth-d
        cover as f does (``h``: f's ``split_hash``); else remember f."""
        cdef int t = <int>(h & <uint64_t>self.smask)
        while self.sstamp[t] == self.n_stamp:
            if self.shash[t] == h and self.same_split(d, f, self.sfeat[t]):
                return True
            t = (t + 1) & self.smask
        self.sstamp[t] = self.n_stamp
        self.shash[t] = h
        self.sfeat[t] = f
        return False
