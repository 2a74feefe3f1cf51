# cython: language_level=3
"""Declarations of the DL8.5 itemset caches (see ``_cache.pyx``)."""

from libc.stdint cimport int32_t, uint64_t

from odtstudy.dl85._cache_policy cimport WipePolicy

cdef enum:
    ENTRY_SOLVED = 1      # ``error`` is the proven optimum of the itemset
    ENTRY_FREE = 2        # bounded cache: the entry was wiped (on the free list)
    ENTRY_USEFUL = 4      # bounded cache: kept by the wipe in progress
    ENTRY_LOCKED = 8      # threads: a thread is writing the entry (``_spin.h``)

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
    cdef readonly Py_ssize_t n_entries      # entry ids in use so far (live + free)
    cdef Py_ssize_t capacity
    cdef readonly int max_len
    cdef readonly bint out_of_memory
    # bounded cache (max_size == 0: unbounded)
    cdef readonly Py_ssize_t max_size
    cdef WipePolicy policy                   # what a wipe deletes (_cache_policy)
    cdef readonly Py_ssize_t n_live, peak_live, n_created, n_wipes, n_wiped
    cdef readonly bint cache_full           # a wipe could not make room
    cdef Py_ssize_t free_head                # wiped entries, chained through ``feature``
    cdef Py_ssize_t n_free
    cdef int32_t* cur_path                  # entry per depth of the path under evaluation
    cdef int32_t* cur_items                 # their itemsets (searcher's buffer), or NULL
    cdef int cur_stride                     # items between two depths of cur_items
    # several objectives on one itemset lattice (``use_slots``): one entry
    # array per slot, ``entries`` the selected one (unbounded caches only)
    cdef Entry** slot_entries
    cdef readonly int n_slots

    cdef Py_ssize_t _new_entry(self) noexcept nogil
    cdef void _clear_slots(self, Py_ssize_t e) noexcept nogil
    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil
    cdef void peek_many(self, const int32_t* items, int n, int count,
                        Py_ssize_t* out) noexcept nogil
    cdef void _mark(self, Py_ssize_t e) noexcept nogil
    cdef void _mark_solution(self, int32_t* items, int n) noexcept nogil
    cdef void _mark_sibling(self, int k) noexcept nogil
    cdef void _count_descendants(self) noexcept nogil
    cdef void _delete(self, Py_ssize_t e) noexcept nogil
    cdef void _release(self, Py_ssize_t e) noexcept nogil
    cdef bint _wipe(self, int n, Py_ssize_t missing, Py_ssize_t keep) noexcept nogil
    cdef Py_ssize_t _wipe_pass(self, int n, Py_ssize_t need, bint keep_solution,
                               Py_ssize_t keep) noexcept nogil


cdef class TrieCache(Cache):
    cdef uint64_t* edge_keys
    cdef int32_t* edge_child
    cdef Py_ssize_t edge_mask
    cdef Py_ssize_t n_edges
    cdef int32_t* parent                    # bounded: parent node per entry
    cdef int32_t* item                      # bounded: item of the edge into the entry

    cdef bint _grow_edges(self) noexcept nogil
    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil
    cdef void peek_many(self, const int32_t* items, int n, int count,
                        Py_ssize_t* out) noexcept nogil
    cdef void _mark(self, Py_ssize_t e) noexcept nogil
    cdef void _count_descendants(self) noexcept nogil
    cdef void _delete(self, Py_ssize_t e) noexcept nogil


cdef class HashCache(Cache):
    cdef int32_t* keys          # max_len items per entry
    cdef int32_t* lengths       # itemset length per entry
    cdef uint64_t* hashes       # hash per entry
    cdef int32_t* slots         # entry id per slot, -1 when empty
    cdef Py_ssize_t slot_mask

    cdef bint _grow_slots(self) noexcept nogil
    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil
    cdef Py_ssize_t _slot(self, const int32_t* items, int n, uint64_t h) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil
    cdef void _count_descendants(self) noexcept nogil
    cdef void _delete(self, Py_ssize_t e) noexcept nogil
