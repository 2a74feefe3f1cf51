# cython: language_level=3
"""Declarations of the depth-2 solvers of the DL8.5 search (see ``_depth2.pyx``)."""

from odtstudy.dl85.engine._depth2_order cimport Depth2Order


cdef class Depth2(Depth2Order):
    cdef double _d2_objective(self, int nf, int r, double leaf, int* out_f) noexcept nogil
    cdef double solve(self, int d, int r, double leaf, double* nc, double total,
                      double eps, int* out_f) noexcept nogil

