# cython: language_level=3
"""Declarations of the DL8.5 itemset caches (see ``_cache.pyx``)."""

from libc.stdint cimport int32_t, uint64_t

cdef enum:
    ENTRY_SOLVED = 1      # ``error`` is the proven optimum of the itemset

cdef enum:
    FEATURE_NONE = -2     # no tree known for the itemset
    FEATURE_LEAF = -1     # the best tree known is a leaf


ctypedef struct Entry:
    double error          # error of the best tree known (INFINITY if none)
    double lb             # proven lower bound on the optimal error
    int32_t feature       # root feature of that tree, FEATURE_LEAF or FEATURE_NONE
    int32_t flags         # ENTRY_SOLVED when ``error`` is optimal


cdef class Cache:
    cdef Entry* entries
    cdef readonly Py_ssize_t n_entries
    cdef Py_ssize_t capacity
    cdef readonly int max_len
    cdef readonly bint out_of_memory

    cdef Py_ssize_t _new_entry(self) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil


cdef class TrieCache(Cache):
    cdef uint64_t* edge_keys
    cdef int32_t* edge_child
    cdef Py_ssize_t edge_mask
    cdef Py_ssize_t n_edges

    cdef bint _grow_edges(self) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil


cdef class HashCache(Cache):
    cdef int32_t* keys          # max_len items per entry
    cdef int32_t* lengths       # itemset length per entry
    cdef uint64_t* hashes       # hash per entry
    cdef int32_t* slots         # entry id per slot, -1 when empty
    cdef Py_ssize_t slot_mask

    cdef bint _grow_slots(self) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
