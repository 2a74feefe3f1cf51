# cython: language_level=3
"""Declarations of the counting solvers of the depth-2 search (see ``_depth2_counts.pyx``)."""

from libc.stdint cimport int32_t, uint64_t

from odtstudy.dl85.engine._covers cimport Covers
from odtstudy.dl85.engine._kernels cimport odt_ctz, odt_kernels_init, odt_kernels_set
from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._weighted cimport WeightedCore


ctypedef struct _Quantile:
    double tau, a, c      # slopes a above the tau-quantile, c below it

ctypedef struct _Quantiles:
    const double* tau
    const double* a
    const double* c
    int K
    int stride            # the branches of quantile j at j * stride in bl / br
    const int32_t* rank   # rank of quantile j among c rows at j * R + c
    int R
    double* lq            # one pair's quadrant losses, at 4 j + quadrant

ctypedef fused _Taus:
    _Quantile
    _Quantiles


cdef inline int _imin(int a, int b) noexcept nogil:
    return a if a < b else b


cdef inline uint64_t _last_mask(int N, int j, int nw) noexcept nogil:
    """Packed word j of a cover of N rows: its valid bits."""
    if j < nw - 1 or (N & 63) == 0:
        return ~(<uint64_t>0)
    return ((<uint64_t>1) << (N & 63)) - 1


cdef inline int _compact_soft(const uint64_t* src, const int32_t* idx, const uint64_t* cover,
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


cdef inline bint _kernels_select(int level) noexcept nogil:
    """Set the calling module's copy of the ``_kernels.h`` kernels (static
    per module) to instruction-set ``level`` (-1: the best the CPU has);
    False (nothing changed) when the CPU lacks it."""
    if level < 0:
        odt_kernels_init()
        return True
    return odt_kernels_set(level) != 0


cdef class Depth2Counts:
    cdef int m, K, W, min_sup
    cdef bint weighted
    # the objective's declarations (``Objective``), which pick the solver
    cdef bint error_counts, cost_matrix, order_stats, pinball, python_batches
    cdef bint cost_int        # two-class cost matrix of integers: int32 kernel
    cdef int32_t cost_i[4]    # its entries
    cdef double eps
    cdef Covers cv
    cdef Objective objective
    cdef WeightedCore wcore
    cdef uint64_t* gw         # the useful features' words on the cover
    cdef double* wsum         # sum of y over each word of the cover (order stats)
    cdef uint64_t* ccw        # the cover's words of each class
    cdef uint64_t* tmp        # a root's words of each class
    cdef int32_t* fq1         # class counts of each useful feature
    cdef int32_t* pairbuf     # class counts of one pair
    cdef double* bl           # best left / right branch loss of each root
    cdef double* br
    cdef uint64_t* gT         # word-major copy of gw (two classes)
    cdef int32_t* cnt0        # class-0 / class-1 counts of the pairs of a root
    cdef int32_t* cnt1
    cdef int32_t* f0          # class-0 / class-1 counts of each useful feature
    cdef int32_t* f1
    cdef int32_t* bli         # integer bl / br (two classes)
    cdef int32_t* bri
    cdef int32_t* fid         # useful feature -> feature
    cdef double* node_q       # cost / Python: quadrant class supports
    cdef double* node_l       # and their losses
    cdef double* _d2_nc       # class supports of the cover
    cdef int32_t* pc0         # table losses (two classes): class-0 / class-1
    cdef int32_t* pc1         # counts of every pair, row i for root i
    cdef int d2_nnz           # words per feature in gw
    # the splits of one cover met so far (``_split_seen``), open addressing
    cdef int split_mask           # table size - 1
    cdef int split_rows           # the cover's rows (words packed densely)
    cdef uint64_t* split_key      # hashes
    cdef int32_t* split_at        # and the feature's index (-1: free)
    cdef bint table_missed    # the last table solve had leaves to price
    cdef double tau, above, below   # pinball loss: quantile, slopes above / below it
    # order statistics (absolute / pinball loss, unit weights), on the
    # cover's rows packed densely in target order:
    cdef double* oy           # y of each packed row (0 past the last)
    cdef double* otab         # byte tables of oy (as ``Objective.ybytes``)
    cdef double* opre         # per useful feature: prefix sums of y per word
    cdef int32_t* ocnt        # per useful feature: prefix counts per word
    cdef double* ocov         # the cover's prefix sums of y per word
    cdef int32_t* opc         # one pair: prefix counts of its rows per word
    cdef double* ops          # and prefix sums of their y
    # several quantiles at once (``quantiles``, ``solve_quantiles``)
    cdef int mK
    cdef double* mtau         # the quantiles, and their slopes above / below
    cdef double* ma
    cdef double* mc
    cdef double* mbl          # bl / br of each quantile, m + 1 apart
    cdef double* mbr
    cdef int32_t* mrank       # rank of quantile j among c rows, at j * (64 W + 1) + c
    cdef double* mlq          # one pair's quadrant losses, at 4 j + quadrant
    # the children of a depth-3 node by difference (``_d2_sibling``: two
    # classes, misclassification, min_sup = 1); sp_ the parent, ss_ the
    # smaller child of the current split feature
    cdef int sp_cap               # most parent features the tables hold (0: off)
    cdef long long sp_hits        # depth-2 solves by difference
    cdef long long sp_version     # the parent cover held
    cdef int sp_req               # depth-2 requests under it so far
    cdef int sp_feat, sp_side     # the split feature of ss_, and its side
    cdef int sp_nf, sp_nw, sp_n0, sp_n1
    cdef int ss_n0, ss_n1
    cdef int32_t* sp_fid          # the parent's useful features
    cdef uint64_t* sp_g           # their words, packed on the parent's rows
    cdef uint64_t* sp_cw          # the parent's class words, packed
    cdef int32_t* sp_f0           # class-0 / class-1 counts of each feature
    cdef int32_t* sp_f1
    cdef int32_t* sp_p0           # and of each pair (i, k > i), row i
    cdef int32_t* sp_p1
    cdef uint64_t* ss_g           # the same on the smaller child's rows
    cdef uint64_t* ss_cw
    cdef uint64_t* ss_rows        # that child's rows among the parent's packed rows
    cdef int32_t* ss_f0
    cdef int32_t* ss_f1
    cdef int32_t* ss_p0
    cdef int32_t* ss_p1
    cdef int32_t* sp_ident        # 0, 1, 2, ... (word indices of packed words)

    cdef void order_weights(self, Objective objective)
    cdef void _cost_integers(self, int n)
    cdef void _sibling_buffers(self) except *
    cdef void _splits_reset(self) noexcept nogil
    cdef bint _split_seen(self, const uint64_t* base, int i, int nw,
                          const uint64_t* rows) noexcept nogil
    cdef int _d2_counts(self, int d, double total) noexcept nogil
    cdef void _item_classes(self, int i, const uint64_t* g, int nw) noexcept nogil
    cdef void _mask_root(self, int i) noexcept nogil
    cdef void _pair_classes(self, int k, int32_t* p) noexcept nogil
    cdef double _d2_pairs(self, int d, int nf, int* out_f) noexcept nogil
    cdef double _d2_pairs_binary(self, int d, int nf, int* out_f) noexcept nogil
    cdef int _pack(self, const uint64_t* src, const int32_t* idx, const uint64_t* rows,
                   int nnz, uint64_t* out) noexcept nogil
    cdef void _pair_table(self, const uint64_t* g, const uint64_t* cw, int nf, int nw,
                          int32_t* f0, int32_t* f1, int32_t* p0,
                          int32_t* p1) noexcept nogil
    cdef bint _sibling_parent(self, int d) noexcept nogil
    cdef void _sibling_rows(self, int d, int n) noexcept nogil
    cdef double _d2_sibling(self, int d, double total, int* out_f) noexcept nogil
    cdef void _pairs_transpose(self, const uint64_t* g, int nw, int nf) noexcept nogil
    cdef void _pairs_of(self, const uint64_t* cw, int nw, int i, int nf, int32_t* c0,
                        int32_t* c1) noexcept nogil
    cdef double _d2_cost_binary(self, int nf, double leaf, int* out_f) noexcept nogil
    cdef double _best_root(self, int nf, double leaf, int* out_f) noexcept nogil
    cdef double _d2_table_binary(self, int nf, double leaf, int* out_f) noexcept nogil
    cdef bint _table_branches(self, int nf) noexcept nogil
    cdef Py_ssize_t _table_misses(self, int nf) noexcept nogil
