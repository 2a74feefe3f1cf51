# cython: language_level=3
from libc.stdint cimport int32_t, int64_t, uint64_t

from odtstudy.dl85.engine._cache_policy cimport WipePolicy


cdef enum:
    BOX_SOLVED = 1


ctypedef struct BoxEntry:
    uint64_t hash
    int64_t key_at       # offset of the key in the key pool
    int32_t key_len
    int32_t feature      # best split's feature (-1: leaf)
    int32_t threshold    # best split's threshold index
    int32_t flags
    double error         # best loss found (the optimum when solved)
    double lb            # proven lower bound
    double left          # the left child's loss in ``error`` (< 0: unknown)


cdef class BoxCache:
    cdef BoxEntry* entries
    cdef int32_t* keys
    cdef int64_t* table
    cdef Py_ssize_t n_entries, cap_entries, n_keys, cap_keys, n_slots
    cdef Py_ssize_t max_size
    cdef WipePolicy policy       # what a wipe deletes (_cache_policy)
    cdef readonly long long n_created, n_wipes, n_wiped, peak_live
    cdef readonly bint out_of_memory

    cdef Py_ssize_t find(self, const int32_t* key, int length, bint create) noexcept nogil
    cdef int _wipe(self) noexcept nogil
    cdef int _rehash(self, Py_ssize_t slots) noexcept nogil
