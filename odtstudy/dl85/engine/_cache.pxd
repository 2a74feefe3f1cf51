# cython: language_level=3
"""Declarations of the DL8.5 itemset caches (see ``_cache.pyx``)."""

from libc.stdint cimport int32_t, uint64_t

from odtstudy.dl85.engine._cache_policy cimport WipePolicy


cdef extern from "_spin.h":
    uint64_t odt_load_key(const uint64_t* key) noexcept nogil
    void odt_publish_key(uint64_t* key, uint64_t v) noexcept nogil
    void odt_stop_world(int* growing, int** busy, int n) noexcept nogil
    void odt_resume_world(int* growing) noexcept nogil

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
    # on threads, the fields read outside the lock come first, the counters
    # each insertion writes after ``_apart`` (not on their cache line)
    cdef Entry* entries
    cdef Py_ssize_t capacity
    cdef readonly int max_len
    # bounded cache (max_size == 0: unbounded)
    cdef readonly Py_ssize_t max_size
    cdef char _apart[64]
    cdef readonly Py_ssize_t n_entries      # entry ids in use so far (live + free)
    cdef readonly bint out_of_memory
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
    # threads (``_spin.h``): what an insertion moving an array that they
    # read outside the lock stops (``share_world``); NULL on one thread
    cdef int* world_growing
    cdef int** world_busy
    cdef int world_n

    cdef Py_ssize_t _new_entry(self) noexcept nogil
    cdef void share_world(self, int* growing, int** busy, int n) noexcept nogil
    cdef void _stop_world(self) noexcept nogil
    cdef void _resume_world(self) noexcept nogil
    cdef bint concurrent_peeks(self) noexcept nogil
    cdef void _clear_slots(self, Py_ssize_t e) noexcept nogil
    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
    cdef int peek_prefix(self, const int32_t* items, int n, Py_ssize_t* node) noexcept nogil
    cdef Py_ssize_t find_from(self, const int32_t* items, int n, Py_ssize_t node,
                              int i) noexcept nogil
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
    # read outside the lock on threads (``Cache``), apart from the counters
    cdef char _apart_edges[64]
    cdef uint64_t* edge_keys
    cdef int32_t* edge_child
    cdef Py_ssize_t edge_mask
    cdef int32_t* parent                    # bounded: parent node per entry
    cdef int32_t* item                      # bounded: item of the edge into the entry
    cdef char _apart_count[64]
    cdef Py_ssize_t n_edges

    cdef bint _grow_edges(self) noexcept nogil
    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil
    cdef bint concurrent_peeks(self) noexcept nogil
    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil
    cdef Py_ssize_t _insert(self, const int32_t* items, int n, Py_ssize_t node,
                            int i) noexcept nogil
    cdef int peek_prefix(self, const int32_t* items, int n, Py_ssize_t* node) noexcept nogil
    cdef Py_ssize_t find_from(self, const int32_t* items, int n, Py_ssize_t node,
                              int i) noexcept nogil
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
