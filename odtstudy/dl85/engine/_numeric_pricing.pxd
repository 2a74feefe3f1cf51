# cython: language_level=3
"""Declarations of the leaf and split pricing of the numeric search (see
``_numeric_pricing.pyx``): the searcher's fields, and the inline pricing
methods with their bodies so that ``_numeric.pyx`` inlines them too."""

cimport cython
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint64_t

from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._skeleton cimport Skeleton
from odtstudy.dl85.engine._util cimport KeyIdx, _cheapest_cost, _misclassified


cdef enum:
    PY_CHUNK = 256    # split positions priced per call of a Python loss


cdef class NumericPricing(Skeleton):
    cdef int n, p, S, D, L
    cdef Objective obj
    # the objective's declarations: misclassification (counts or weights)
    # and cost-matrix losses of class statistics, priced inline
    cdef bint error_stats, cost_stats
    cdef bint special         # priced by _side_any (Python, order statistics)
    cdef bint py_add          # Python loss of summed statistics
    cdef bint order           # absolute / pinball loss
    cdef bint by_rows         # Python loss of the row list
    cdef double tau, below, above
    cdef int od               # the node whose target ranks _side_order uses
    cdef int32_t* yrow        # per depth: the node's rows by target
    cdef int32_t* lrank       # per depth: each row's rank in yrow
    cdef double* yl           # per depth: targets by rank
    cdef double* wl           # per depth: weights by rank
    cdef double* fen          # a Fenwick tree pair (weights, weighted targets)
    cdef double* qbuf         # a batch of leaves for a Python loss
    cdef double* sfx          # per split position: the right side's sums
    cdef double* qout
    cdef int32_t* qk
    cdef bint use_d2, monotone
    cdef object _refs
    cdef const int32_t* rank
    cdef const int32_t* nthr
    cdef const double* rs
    cdef const int32_t* cls   # class of each row (class-based objectives)
    cdef const double* wt     # weight of each row (class-based objectives)
    cdef int32_t* buf         # two rows buffers of the depth-2 pass
    cdef int32_t* d2g         # per depth: the features of the children's
                              # best splits in the last depth-2 pass
    cdef bint unit            # misclassification with unit weights: two
                              # classes, or 3-16 and fewer than 65536 rows;
                              # fewer than 2**27 thresholds per feature
    cdef int32_t* srtk        # unit: the keys of ``srt``'s rows beside it
                              # (rank << 4 | class)
    cdef unsigned char* left  # unit: 1 for a row on the left of the split
                              # the depth-2 pass evaluates
    cdef const uint64_t* onehot  # unit, 3-16 classes: each class as a one
    cdef int W                   # in a 16-bit field of W words
    cdef const double* worst
    cdef const double* cost
    cdef int32_t* srt
    cdef int* cnt
    cdef double* tot
    cdef double* leafv
    cdef int32_t* cons
    cdef int* ncons
    cdef int32_t* key
    cdef int* keylen
    cdef int32_t* pos_k
    cdef int32_t* pos_t
    cdef double* pos_w
    cdef double* pos_s
    cdef int32_t* stk
    cdef double* stkb
    cdef KeyIdx* forder
    cdef int32_t* fk
    cdef readonly bint stable     # squared error as (W, mean, M2)
    cdef const double* yv         # each row's target (the stable form)
    cdef double* scr              # suffix statistics of one pass
    cdef int PS                   # doubles per split position in pos_s

    @cython.final
    cdef void _suffixes(self, const int32_t* rows, int m) noexcept nogil
    @cython.final
    cdef double _stable_side(self, const int32_t* rows, int m, const int32_t* rg,
                             double best, double lb, bint* done, int* out_k) noexcept nogil
    @cython.final
    cdef double _leaf_of(self, int d, const double* tt) noexcept nogil
    @cython.final
    cdef double _sweep(self, int d, int g, int* out_k) noexcept nogil
    @cython.final
    cdef int _positions(self, int d, int f) noexcept nogil
    @cython.final
    cdef double _side2(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil
    @cython.final
    cdef double _sidek(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil
    @cython.final
    cdef double _side(self, const int32_t* rows, int m, const int32_t* rg,
                      const double* tot, double best, double lb, bint* done) noexcept nogil
    @cython.final
    cdef double _side_any(self, const int32_t* rows, int m, const int32_t* rg,
                          const double* tot, double best, double lb, bint* done,
                          int* out_k) noexcept nogil
    @cython.final
    cdef double _side_py(self, const int32_t* rows, int m, const int32_t* rg,
                         double best, int* out_k) noexcept nogil
    @cython.final
    cdef double _py_flush(self, int k, double best, int* out_k) noexcept nogil
    @cython.final
    cdef double _side_order(self, const int32_t* rows, int m, const int32_t* rg,
                            double best, double lb, int* out_k) noexcept nogil
    @cython.final
    cdef double _side_rows(self, const int32_t* rows, int m, const int32_t* rg,
                           double best, double lb, int* out_k) noexcept nogil
    @cython.final
    cdef double _split_leaf(self, int d, int f, int j, bint left) noexcept nogil
    @cython.final
    cdef void _d2_eval(self, int d, int f, int j, double ubL, double ubR,
                       double lbL, double lbR, double* outL, double* outR) noexcept nogil

    cdef inline double _loss(self, const double* s) noexcept nogil:
        """Loss of a leaf with statistics ``s`` (the C losses of additive
        statistics; the others are priced by ``_leaf_of`` / ``_side_any``)."""
        cdef int S = self.S
        cdef double v
        if self.error_stats:
            if S == 2:
                return s[0] if s[0] < s[1] else s[1]
            return _misclassified(s, S)
        if self.cost_stats:
            return _cheapest_cost(self.cost, s, S)
        if self.stable:
            return s[3] if s[3] > 0.0 else 0.0
        if s[0] <= 0.0:
            return 0.0
        v = s[2] - s[1] * s[1] / s[0]
        return v if v > 0.0 else 0.0

    cdef inline double _loss_rest(self, const double* t, const double* a) noexcept nogil:
        """Loss of a leaf with statistics ``t - a``."""
        cdef int c, q, S = self.S
        cdef double tot = 0.0, big = 0.0, v, best, x, w
        if self.error_stats:
            if S == 2:
                x = t[0] - a[0]
                v = t[1] - a[1]
                return x if x < v else v
            for c in range(S):
                x = t[c] - a[c]
                tot += x
                if x > big:
                    big = x
            return tot - big
        if self.cost_stats:
            best = INFINITY
            for q in range(S):
                v = 0.0
                for c in range(S):
                    v += self.cost[q * S + c] * (t[c] - a[c])
                if v < best:
                    best = v
            return best
        w = t[0] - a[0]
        if w <= 0.0:
            return 0.0
        x = t[1] - a[1]
        v = (t[2] - a[2]) - x * x / w
        return v if v > 0.0 else 0.0

    cdef inline void _add_row(self, double* a, int row) noexcept nogil:
        """Welford's update of ``a = (W, mean, mean's error, M2)`` with one
        row; the mean is the unevaluated sum ``a[1] + a[2]`` (Knuth's
        two-sum keeps the error of each addition), and M2 grows by
        ``w W_before / W * dev**2``."""
        cdef double w = self.rs[row * 4], y = self.yv[row], W, dev, inc, hi, b, lo
        if w <= 0.0:
            return
        W = a[0] + w
        dev = (y - a[1]) - a[2]
        inc = dev * (w / W)
        hi = a[1] + inc
        b = hi - a[1]
        lo = a[2] + ((a[1] - (hi - b)) + (inc - b))
        a[1] = hi + lo
        a[2] = lo - (a[1] - hi)
        # w dev (y - new mean), in the form that stays exact to a few
        # roundings whatever the ratio of w to the weight before it
        a[3] += dev * dev * (w * (a[0] / W))
        a[0] = W

    cdef inline void _stats_of(self, const int32_t* rows, int m, double* a) noexcept nogil:
        """``a``: the statistics of ``rows[:m]``, in the form searched."""
        cdef int i, c, S = self.S
        for c in range(S):
            a[c] = 0.0
        if self.stable:
            for i in range(m):
                self._add_row(a, rows[i])
            return
        for i in range(m):
            for c in range(S):
                a[c] += self.rs[rows[i] * S + c]


    cdef inline double _side_d2(self, const int32_t* rows, int m, const int32_t* rg,
                                const double* tot, double best, double lb,
                                bint* done) noexcept nogil:
        """One side of the depth-2 pass: ``_side``, or ``_side_any`` for the
        objectives it does not price (kept apart so that ``_side``'s loop
        compiles as it does alone)."""
        cdef int k
        if self.special:
            return self._side_any(rows, m, rg, tot, best, lb, done, &k)
        return self._side(rows, m, rg, tot, best, lb, done)


    cdef inline void _add_stats(self, double* acc, int row) noexcept nogil:
        """Add one row's statistics to ``acc`` (additive objectives)."""
        cdef int c
        cdef const double* r
        if self.cls != NULL:
            acc[self.cls[row]] += self.wt[row]
            return
        r = self.rs + row * self.S
        for c in range(self.S):
            acc[c] += r[c]
