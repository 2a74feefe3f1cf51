# cython: language_level=3
"""Declarations of the weighted kernels of the DL8.5 core (see ``_weighted.pyx``)."""

from libc.stdint cimport int32_t, uint8_t, uint64_t


cdef class WeightedCore:
    cdef int n, m, K, W, MW, min_sup
    cdef double* w            # weight per row
    cdef int32_t* ycls        # class per row
    cdef uint64_t* cols       # feature columns, m * W words
    cdef uint64_t* rowbits    # feature bits of each row, n * MW words
    cdef uint64_t* useful     # MW words: features usable at the current node
    cdef int32_t* loc         # feature -> local index among the useful ones
    cdef int32_t* fid         # local index -> feature
    cdef int32_t* lst         # scratch: local indices of a row's features
    cdef double* tot          # K class weights of the cover
    cdef double* F            # nf * K: class weights of each item
    cdef double* P            # K * nf * nf: class weights of each item pair
    cdef int32_t* Fc          # nf: row counts of each item
    cdef int32_t* Pc          # nf * nf: row counts of each item pair
    cdef double* bl           # nf: best left-branch loss of each root
    cdef double* br           # nf: best right-branch loss of each root
    cdef double* q            # 4 * K scratch: quadrant class weights
    cdef uint64_t* flipm      # MW words: useful features taken as not-x
    cdef int hmask            # hash table of the cover's partitions
    cdef int32_t* hfeat
    cdef uint64_t* hkey
    cdef uint8_t* hflip
    cdef readonly double total_weight

    cdef double class_supports(self, const uint64_t* cov, const int32_t* idx,
                               int nnz, double* out) noexcept nogil
    cdef int n_rows(self, const uint64_t* cov, int nnz) noexcept nogil
    cdef bint _same(self, const uint64_t* cov, const int32_t* idx, int nnz,
                    int f, bint flip_f, int g, bint flip_g) noexcept nogil
    cdef double common_weight(self, const uint64_t* dense, const uint64_t* cov,
                              const int32_t* idx, int nnz) noexcept nogil
    cdef double depth2(self, const uint64_t* cov, const int32_t* idx, int nnz,
                       int r, double leaf, double eps, int* out_f) noexcept nogil
