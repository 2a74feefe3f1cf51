# cython: language_level=3
"""ISA kernels of the DL8.5 engine (C in ``_kernels.h``): two-class depth-2
pair counts and quadrants (misclassification, a cost matrix, a loss table),
prefix counts and sums of y of a feature pair, the r-th set bit of a word,
sparse-cover compaction, popcount; one variant per instruction set, chosen at
import."""

from libc.stdint cimport int32_t, uint64_t


cdef extern from "_kernels.h":
    int odt_popcount(uint64_t x) noexcept nogil
    int odt_ctz(uint64_t x) noexcept nogil
    void odt_kernels_init() noexcept nogil
    int odt_kernels_set(int level) noexcept nogil
    const char* odt_kernel_isa
    ctypedef int (*odt_compact_fn)(const uint64_t*, const int32_t*, const uint64_t*,
                                   int, uint64_t*) noexcept nogil
    odt_compact_fn odt_compact
    void odt_pair_counts(const uint64_t* gT, int stride, int nnz, const uint64_t* a0,
                         const uint64_t* a1, int32_t* c0, int32_t* c1,
                         int start, int end) noexcept nogil
    void odt_quadrants(const int32_t* c0, const int32_t* c1, const int32_t* m0,
                       const int32_t* m1, const int32_t* f0,
                       const int32_t* f1, int32_t* bl, int32_t* br, int32_t fi0,
                       int32_t fi1, int32_t n0, int32_t n1, int start, int end,
                       int32_t* bl_i, int32_t* br_i) noexcept nogil
    # the cost quadrants, one C template (ODT_COST_QUADRANTS_BODY) in two types:
    # (c0, c1, f0, f1, bl, br, a00, a01, a10, a11, fi0, fi1, n0, n1, start, end,
    #  bl_i, br_i)
    void odt_cost_quadrants_i(const int32_t*, const int32_t*, const int32_t*,
        const int32_t*, int32_t*, int32_t*, int32_t, int32_t, int32_t, int32_t,
        int32_t, int32_t, int32_t, int32_t, int, int, int32_t*, int32_t*) noexcept nogil
    void odt_cost_quadrants_d(const int32_t*, const int32_t*, const int32_t*,
        const int32_t*, double*, double*, double, double, double, double,
        double, double, double, double, int, int, double*, double*) noexcept nogil
    ctypedef int (*odt_select_fn)(uint64_t, int) noexcept nogil
    odt_select_fn odt_select
    ctypedef void (*odt_and_prefix_fn)(const double*, const double*, const uint64_t*,
                                       const uint64_t*, int, int32_t*, double*) noexcept nogil
    odt_and_prefix_fn odt_and_prefix
    # (c0, c1, f0, f1, T, s0, bl, br, fi0, fi1, n0, n1, start, end, bl_i, br_i,
    #  miss)
    void odt_table_quadrants(const int32_t*, const int32_t*, const int32_t*,
        const int32_t*, const double*, int32_t, double*, double*, int32_t, int32_t,
        int32_t, int32_t, int, int, double*, double*, int*) noexcept nogil

