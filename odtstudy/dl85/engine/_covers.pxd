# cython: language_level=3
"""Declarations of the sparse covers of the DL8.5 search (see ``_covers.pyx``)."""

from libc.stdint cimport int32_t, uint64_t


cdef class Covers:
    cdef int n, m, K, W, max_depth
    cdef uint64_t* cols           # feature columns, m * W words
    cdef uint64_t* cmask          # rows of each class, K * W words
    cdef uint64_t* cov            # per depth: the cover's non-zero words
    cdef int32_t* cidx            # and their word indices
    cdef int* cnnz                # and their number
    cdef int32_t* items           # per depth: the sorted itemset (stride max_depth + 1)
    cdef long long* version       # per depth: version of the cover
    cdef long long n_versions
    cdef int32_t* split_f         # per depth: the split that made the cover
    cdef int32_t* split_v
    # splits met at a node (``seen_split``): open addressing on the split's
    # hash; entries of an older node (another stamp) are free
    cdef uint64_t* shash
    cdef int32_t* sfeat
    cdef long long* sstamp
    cdef long long n_stamp
    cdef int smask

    cdef void root(self) noexcept nogil
    cdef double class_supports(self, int d, double* s) noexcept nogil
    cdef double rows(self, int d) noexcept nogil
    cdef long long common(self, const uint64_t* dense, int d) noexcept nogil
    cdef void make_child(self, int d, int f, int v) noexcept nogil
    cdef void child_items(self, int d, int f, int v, int32_t* buf) noexcept nogil
    cdef uint64_t split_hash(self, int d, int f, int* ones) noexcept nogil
    cdef bint same_split(self, int d, int f, int g) noexcept nogil
    cdef void new_splits(self) noexcept nogil
    cdef bint seen_split(self, int d, int f, uint64_t h) noexcept nogil
