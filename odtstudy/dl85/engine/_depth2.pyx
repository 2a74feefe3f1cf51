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
is static, so each module that calls them has its own copy, set by
``set_kernel_isa``. The class is split by solver family along a chain:
``_depth2_counts.Depth2Counts`` (buffers, solvers over class counts),
``_depth2_order.Depth2Order`` (order statistics), ``Depth2`` here (the
dispatch ``solve`` and ``_d2_objective``).
"""

from libc.math cimport isnan
from libc.stdint cimport int32_t

from odtstudy.dl85.engine import _depth2_counts, _depth2_order
from odtstudy.dl85.engine._cache cimport FEATURE_LEAF
from odtstudy.dl85.engine._depth2_order cimport Depth2Order

KERNEL_LEVELS = {"baseline": 0, "popcnt": 1, "avx2": 2, "avx512": 3}


def kernel_isa():
    """Instruction set of the depth-2 kernels in use."""
    return _depth2_counts.kernel_isa()


def set_kernel_isa(name):
    """Use the depth-2 kernels compiled for ``name`` (tests, benchmarks).

    ``name`` is one of "baseline", "popcnt", "avx2", "avx512" or "auto".
    Returns False (and changes nothing) when the CPU lacks that instruction set.
    """
    cdef int level = -1 if name == "auto" else KERNEL_LEVELS[name]
    if not _depth2_counts._select_kernels(level):
        return False
    return _depth2_order._select_kernels(level)


cdef class Depth2(Depth2Order):
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
        if self.python_batches:
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
        if self.order_stats:
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
        if self.cost_matrix and K == 2 and r == 2 and self.min_sup <= 1:
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
        if not self.error_counts:
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
