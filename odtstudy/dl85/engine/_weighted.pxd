# cython: language_level=3
"""Declarations of the weighted depth-2 solver of DL8.5 (see ``_weighted.pyx``)."""

from libc.stdint cimport int32_t, uint8_t, uint64_t


cdef class WeightedCore:
    cdef int n, m, K, W, MW, min_sup
    cdef double* w            # weight per row
    cdef bint squared         # squared error: slots are (w, w y, w y^2)
    cdef double* cost         # cost matrix (K x K, cost[p * K + c]) or NULL
    cdef double* stat         # squared error: the 3 statistics of each row
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
                              # (squared error: nf * nf * 2, (w, w y) interleaved)
    cdef int32_t* Fc          # nf: row counts of each item
    cdef int32_t* Pc          # nf * nf: row counts of each item pair
    cdef double* bl           # nf: best left-branch loss of each root
    cdef double* br           # nf: best right-branch loss of each root
    cdef double* q            # 4 * K scratch: quadrant class weights
    cdef double* f0           # nf: class-0 weights of each item (two classes)
    cdef double* f1           # nf: class-1 weights of each item
    cdef uint64_t* flipm      # MW words: useful features taken as not-x
    cdef int hmask            # hash table of the cover's partitions
    cdef int32_t* hfeat
    cdef uint64_t* hkey
    cdef uint8_t* hflip
    cdef readonly double total_weight
    cdef double eps           # losses at most eps count as zero
    # sibling counts (depth2_child): the parent's weights and one child's
    cdef int psize, pnf, pN, preq, sfeat, sside
    cdef long long pversion
    cdef uint64_t* puseful
    cdef uint64_t* pflipm
    cdef int32_t* ploc
    cdef int32_t* pfid
    cdef double* ptot
    cdef double* pF
    cdef int32_t* pFc
    cdef double* pP
    cdef int32_t* pPc
    cdef double* stot
    cdef double* sF
    cdef int32_t* sFc
    cdef double* sP
    cdef int32_t* sPc

    cdef int n_rows(self, const uint64_t* cov, int nnz) noexcept nogil
    cdef bint _same(self, const uint64_t* cov, const int32_t* idx, int nnz,
                    int f, bint flip_f, int g, bint flip_g) noexcept nogil
    cdef int _select(self, const uint64_t* cov, const int32_t* idx, int nnz, int N,
                     uint64_t* useful, uint64_t* flipm, int32_t* loc,
                     int32_t* fid) noexcept nogil
    cdef void _accumulate(self, const uint64_t* cov, const int32_t* idx, int nnz,
                          const uint64_t* split, uint64_t flip_split,
                          const uint64_t* useful, const uint64_t* flipm,
                          const int32_t* loc, int nf, int r, double* tot,
                          double* F, int32_t* Fc, double* P,
                          int32_t* Pc) noexcept nogil
    cdef double _best_root(self, int nf, int N, const int32_t* fid,
                           const int32_t* Fc, double leaf, int* out_f) noexcept nogil
    cdef double _evaluate(self, int nf, int N, const int32_t* fid, const double* tot,
                          const double* F, const int32_t* Fc, const double* P,
                          const double* M, const int32_t* Pc, int r, double leaf,
                          int* out_f) noexcept nogil
    cdef double _evaluate_squared(self, int nf, int N, const int32_t* fid,
                                  const double* tot, const double* F,
                                  const int32_t* Fc, const double* P, const double* M,
                                  const int32_t* Pc, int r, double leaf,
                                  int* out_f) noexcept nogil
    cdef double depth2(self, const uint64_t* cov, const int32_t* idx, int nnz,
                       int r, double leaf, double eps, int* out_f) noexcept nogil
    cdef double depth2_child(self, const uint64_t* pcov, const int32_t* pidx,
                             int pnnz, long long pversion, int f, int v,
                             const uint64_t* cov, const int32_t* idx, int nnz,
                             double leaf, double eps, int* out_f) noexcept nogil
