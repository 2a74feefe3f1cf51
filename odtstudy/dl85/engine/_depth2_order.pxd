# cython: language_level=3
"""Declarations of the order-statistics solvers of the depth-2 search (see ``_depth2_order.pyx``)."""

from libc.stdint cimport int32_t, uint64_t

from odtstudy.dl85.engine._depth2_counts cimport Depth2Counts, _Taus


cdef class Depth2Order(Depth2Counts):
    cdef double _depth1_order(self, int d, double leaf, int* out_f) noexcept nogil
    cdef double _depth1_ranks(self, int d, double leaf, int* out_f) noexcept nogil
    cdef int _ranks_features(self, int d, int N, int nw) noexcept nogil
    cdef double _d2_ranks(self, int d, double leaf, int* out_f) noexcept nogil
    cdef void _ranks_pairs(self, int N, int nw, int nf, _Taus q, double* bl,
                           double* br) noexcept nogil
    cdef int quantiles(self, const double* taus, int K) except -1
    cdef bint solve_quantiles(self, int d, int r, int j0, const double* leaves,
                              const double* eps, double* out_err,
                              int* out_f) noexcept nogil
