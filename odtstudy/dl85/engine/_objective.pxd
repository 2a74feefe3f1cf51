# cython: language_level=3
"""Declarations of the DL8.5 leaf objectives (see ``_objective.pyx``)."""

from libc.stdint cimport int32_t, int64_t, uint64_t

from odtstudy.dl85.engine._weighted cimport WeightedCore

cdef enum:
    OBJ_ERROR = 0       # misclassified rows (class counts by popcount)
    OBJ_WEIGHTED = 1    # weighted misclassification
    OBJ_COST = 2        # cost matrix on the class supports (counts or weights)
    OBJ_SQUARED = 3     # (weighted) squared error around the mean
    OBJ_ABSOLUTE = 4    # (weighted) absolute error around a median
    OBJ_QUANTILE = 5    # pinball loss around the tau-quantile
    OBJ_PY_CLASS = 6    # Python f(class supports) -> loss, batched
    OBJ_PY_ROWS = 7     # Python f(row indices) -> loss
    OBJ_PY_STATS = 8    # Python f(summed per-row statistics) -> loss, batched


cdef inline double ysum(const double* ybytes, int j, uint64_t x) noexcept nogil:
    """Sum of y over the rows of bits ``x`` of word j, from the byte tables
    ``Objective.ybytes`` (unit weights): one lookup per byte."""
    cdef const double* t = ybytes + (<Py_ssize_t>j << 11)
    # a tree of additions: no chain of 8 dependent ones
    return (((t[x & 255] + t[256 | ((x >> 8) & 255)])
             + (t[512 | ((x >> 16) & 255)] + t[768 | ((x >> 24) & 255)]))
            + ((t[1024 | ((x >> 32) & 255)] + t[1280 | ((x >> 40) & 255)])
               + (t[1536 | ((x >> 48) & 255)] + t[1792 | (x >> 56)])))


cdef class Objective:
    cdef readonly int kind
    cdef readonly int n, K
    # what the engine may use for this objective
    cdef readonly bint class_based   # the loss is a function of the K class supports
    cdef readonly bint counts        # class supports are unweighted counts (popcount)
    cdef readonly bint pair_stats    # depth-2 solver from item / pair statistics
    cdef readonly bint similarity    # the similarity lower bound is valid
    cdef readonly bint python        # calls Python (only with the GIL, batched)
    cdef readonly bint batched       # the Python callback prices a 2-D batch at once
    cdef readonly bint monotone      # a leaf's optimal loss never grows when
                                     # rows are removed (interval bounds)
    # how a leaf is priced, declared once here: the searches and the depth-2
    # solvers read these, never the kind
    cdef readonly bint error_counts    # rows outside the largest class (counts)
    cdef readonly bint weighted_error  # weight outside the heaviest class
    cdef readonly bint cost_matrix     # the cheapest prediction of a cost matrix
    cdef readonly bint squared         # squared error around the mean
    cdef readonly bint order_stats     # absolute / pinball loss of rows in target order
    cdef readonly bint pinball         # the pinball loss, whose tau a search may change
    cdef readonly bint python_batches  # a Python loss of class supports (batch_loss)
    cdef readonly bint python_rows     # a Python loss of the rows
    cdef readonly bint python_stats    # a Python loss of summed per-row statistics
    # order statistics: the quantile a leaf predicts and the weights of the
    # residuals above and below it (absolute error: 1/2, 1 and 1)
    cdef readonly double order_tau, order_above, order_below
    cdef double* w                   # row weights, or NULL (all ones)
    cdef double* y                   # regression target (sorted for absolute / quantile)
    cdef int32_t* ycls               # class of each row
    cdef double* cost                # K x K, cost[p * K + c]: predict p, true c
    cdef double* worst               # per row: largest loss it can add to a leaf
    cdef double* rstats              # "py_stats": K additive statistics per row
    cdef double* sbuf                # scratch: K summed statistics
    cdef readonly double worst_max   # largest ``worst`` (counts: per row)
    cdef double tau
    cdef double* ybytes              # unit weights, order statistics: per word j and
                                     # byte b, the sums of y over the 256 subsets of
                                     # the byte's rows, at ((j * 8 + b) << 8) | mask
    cdef int32_t* rows               # scratch: the rows of one cover
    cdef object callback
    cdef object error
    cdef object loss_name            # the user loss, in error messages
    cdef readonly bint aborted
    cdef readonly WeightedCore core  # pair statistics (weights, costs, squared error)
    # Python losses of class supports: a C hash table of the vectors
    # already priced (open addressing, K doubles per key)
    cdef double* hkeys
    cdef double* hvals
    cdef Py_ssize_t hcap, hcount
    cdef Py_ssize_t* hslot        # per batch: slot of each vector
    cdef Py_ssize_t* hmiss        # per batch: first vector of each slot to price
    # unweighted counts: a dense table indexed by the counts themselves
    cdef double* dense
    cdef Py_ssize_t* dstride
    cdef Py_ssize_t hbatch_cap
    cdef readonly long long n_priced, n_lookups

    cdef double class_loss(self, const double* sup) noexcept nogil
    cdef double class_loss_py(self, const double* sup) noexcept nogil
    cdef void batch_loss(self, const double* Q, int L, double* out) noexcept nogil
    cdef bint _reserve(self, Py_ssize_t L) noexcept nogil
    cdef Py_ssize_t _slot(self, const double* key) noexcept nogil
    cdef void _price(self, const double* Q, Py_ssize_t nmiss) noexcept with gil
    cdef void _fail(self, str what) noexcept with gil
    cdef double class_supports(self, const uint64_t* cov, const int32_t* idx,
                               int nnz, double* sup) noexcept nogil
    cdef double leaf(self, const uint64_t* cov, const int32_t* idx, int nnz,
                     double* sup) noexcept nogil
    cdef int gather(self, const uint64_t* cov, const int32_t* idx,
                    int nnz) noexcept nogil
    cdef double _pinball(self, int cnt, double tau) noexcept nogil
    cdef void quantile_leaves(self, const uint64_t* cov, const int32_t* idx, int nnz,
                              const double* taus, int K, double* out) noexcept nogil
    cdef double rows_loss_py(self, int cnt) noexcept with gil
    cdef double stats_loss(self, const int32_t* rows, int cnt) noexcept nogil
    cdef double rows_loss_of(self, const int32_t* rows, int cnt) noexcept nogil
    cdef double _worst_class(self, int32_t c)
    cdef void _ybytes(self)
    cdef void _set_tau(self, double tau)
    cdef double sim_weight(self, const uint64_t* cov, const int32_t* idx,
                           int nnz) noexcept nogil
    cdef double sim_common(self, const uint64_t* dense, const uint64_t* cov,
                           const int32_t* idx, int nnz) noexcept nogil
