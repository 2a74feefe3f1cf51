# cython: language_level=3
"""The DL8.5 search on ordered numeric features (C-level Cython).

Responsibility: the split search over numeric features.
:class:`NumericSearcher` extends the search skeleton
(``_skeleton.Skeleton``: the node protocol, the failure bound, the time
limit, the anytime trace, ``run`` and the rebuild of the tree, written once
for both searches) and adds the nodes' sorted rows and the search of their
thresholds (``_splits``). A feature is a column
of threshold ranks (``rank[f, i]`` = number of candidate thresholds below
row i's value; row i goes left at threshold t when ``rank[f, i] <= t``),
and each node keeps its rows sorted by every feature, so the search works
on the order instead of one bitset per threshold:

* depth 1 is one sweep of the sorted rows per feature with running class
  statistics (every threshold of a feature in O(rows));
* depth 2 evaluates a root threshold by one pass over the node's sorted
  rows per feature that prices every depth-1 split of both children; for
  misclassification with unit weights each node keeps, beside its rows in
  every feature's order, their keys (``rank << 4 | class``), so the pass
  reads no row's data at random: the split's side is one byte per row, the
  children's keys are copied in order, and their sweeps count classes in
  registers, skip the rows that cannot beat the best split and stop when
  the left side's loss alone reaches it;
* the thresholds of a feature are searched as intervals (a
  branch-and-bound over their positions, after ConTree, Brița et al.,
  AAAI 2025): moving a threshold right only adds rows to the left child and
  removes rows from the right one, so for positions ``i < j < k`` the cost
  at ``j`` is at least ``L(i) + R(k)`` (the optimal loss of a subtree can
  only grow with its rows); and a position's children differ from a
  neighbour's by the rows between them, so its cost is at least the
  neighbour's minus those rows' largest losses. Whole intervals of
  thresholds are thereby pruned without being evaluated;
* at the root of a search of depth 3 or more, each feature's best single
  split is first tried as the root of a full subtree (``_try_seeds``; on
  threads each seed goes to the first thread to claim it). Without it the
  search spends its first minutes on the first feature's thresholds
  (contree/fault at depth 4: 52 s, and every improvement of the root came
  from the first of its 27 features) before any other feature's tree is
  known. Each of
  these trees is met again, from the cache, by its feature's interval
  search, which stays exact and complete under the tighter bound.

Subproblems are cached by their box (``_boxcache.pyx``) with the best split,
the best loss and a lower bound (the skeleton's strong bound of a search
that found no tree under its upper bound); ``_open`` only looks an entry
up and each store finds it again, since a bounded box cache may wipe any
entry meanwhile. The depth-1 optimum (one sweep per feature) is the
skeleton's direct solver (``_direct``) and the best tree known when the
failure bound proves it optimal.

The leaf objective is the 0/1 search's plug-in (``_objective.Objective``),
and its kind decides how a sweep prices a split:

* additive statistics (misclassification, weights, a cost matrix, squared
  error, and the Python losses of summed statistics: ``fast_error_function``
  on class supports, ``"py_stats"``): a row's statistics are one vector
  (class weights, ``w, w y, w y^2``, or the user's), summed along the
  sweep; the C losses are priced inline, the Python ones in batches through
  the objective's memoised ``batch_loss``;
* order statistics (absolute and pinball losses): each side of a split is a
  Fenwick tree over the node's rows ranked by target (``_order.pxd``), so a
  threshold costs O(log n) per row moved;
* the row list (``error_function``): each side's rows go to Python.

The interval bounds need the objective's ``monotone`` declaration (a
subset's optimal loss is never larger) and ``min_sup = 1``; the neighbour
bound needs each row's ``worst`` loss.

The squared error has a second, stable form (``values`` given): a set of
rows is ``(W, mean, M2)``, grown one row at a time by Welford's update, and
its loss is ``M2``, the weighted sum of squared deviations, which never
cancels. The mean is kept in two doubles (its rounding error beside it), so
a deviation ``y - mean`` is exact to the last bit even when the mean is
large next to the spread. A split's two sides are then a forward pass (the left) and a
backward pass (the right) over the same sorted rows. The sums form is exact
up to a rounding error that ``_rounding.sums_certify`` bounds (the sums of a
side taken as its node's minus the other side's scale with the node); the
caller re-runs in the stable form when that bound cannot certify.
"""

import numpy as np

cimport cython
cimport numpy as cnp
from libc.math cimport INFINITY, ceil
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, qsort
from libc.string cimport memcpy, memset

from odtstudy.dl85._boxcache cimport BOX_SOLVED, BoxCache, BoxEntry
from odtstudy.dl85._objective cimport (
    OBJ_ABSOLUTE,
    OBJ_COST,
    OBJ_ERROR,
    OBJ_PY_CLASS,
    OBJ_PY_ROWS,
    OBJ_PY_STATS,
    OBJ_QUANTILE,
    OBJ_SQUARED,
    OBJ_WEIGHTED,
    Objective,
)
from odtstudy.dl85._order cimport fw_add, fw_loss, fw_top, sorted_loss
from odtstudy.dl85._skeleton cimport (NO_ENTRY, SPLIT_EXACT, SPLIT_SEARCHED, Skeleton,
                                      _tree_state)
from odtstudy.dl85._util cimport (
    KeyIdx,
    _alloc,
    _cheapest_cost,
    _cmp_keyidx,
    _misclassified,
)

cnp.import_array()

cdef enum:
    PY_CHUNK = 256    # split positions priced per call of a Python loss


@cython.final
cdef class NumericSearcher(Skeleton):
    """One DL8.5 search over numeric features given as threshold ranks.

    Parameters
    ----------
    rank : ndarray of int32, shape (n_features, n_rows)
        Threshold rank of each value (0 .. n_thresholds[f]).
    n_thresholds : ndarray of int32, shape (n_features,)
    stats : ndarray of float64, shape (n_rows, n_stats)
        Each row's statistics vector: its weight in its class's column
        (class-based objectives), ``(w, w y, w y^2)`` (squared error),
        ``(w, w y)`` (absolute and pinball losses), the objective's row
        statistics ("py_stats"), or the weight ("py_rows").
    objective : Objective
        The leaf objective, made for these rows with ``bitsets=False``.
    max_depth, min_sup : int
    worst : ndarray of float64, shape (n_rows,), optional
        Largest loss a row adds to a leaf; enables the neighbour bound.
    time_limit : float
        Seconds; ``<= 0``: no limit.
    max_cache_size : int
        0: unbounded.
    use_infeasibility_lb, use_depth2_solver : bool
    """

    cdef int n, p, S, kind, D, L
    cdef Objective obj
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
    cdef readonly BoxCache cache
    cdef readonly long long n_d2, n_evals, n_interval_pruned
    cdef readonly long long n_seeds     # root seeds tried (``_try_seeds``)

    def __cinit__(self, const int32_t[:, ::1] rank, const int32_t[::1] n_thresholds,
                  const double[:, ::1] stats, Objective objective, int max_depth,
                  int min_sup=1, object worst=None, double time_limit=0.0,
                  Py_ssize_t max_cache_size=0, double wipe_factor=0.5,
                  str wipe_strategy="reuses", bint use_infeasibility_lb=True,
                  bint use_depth2_solver=True, double purity_tol=0.0,
                  object values=None):
        cdef int D, n, p, S
        self.p = rank.shape[0]
        self.n = rank.shape[1]
        self.S = stats.shape[1]
        if stats.shape[0] != self.n or n_thresholds.shape[0] != self.p:
            raise ValueError("rank, n_thresholds and stats do not match")
        if max_depth < 0 or max_depth > 60:
            raise ValueError("max_depth must be in [0, 60]")
        self.obj = objective
        self.kind = OBJ_ERROR if objective.kind == OBJ_WEIGHTED else objective.kind
        self._check_objective()
        self._init_skeleton(max_depth, min_sup, time_limit, use_infeasibility_lb,
                            max_cache_size, 4 * (self.p + 4))
        self.direct_depth = 1
        self.first_descent = time_limit > 0
        self.restart_bounded = False
        self.abort_flag = &objective.aborted
        self.D = max_depth + 1
        self.L = 1 + 3 * self.D
        D, n, p, S = self.D, self.n, self.p, self.S
        worst_arr = None
        if worst is not None:
            worst_arr = np.ascontiguousarray(worst, dtype=np.float64)
            if worst_arr.shape != (n,):
                raise ValueError("worst must have one value per row")
        values_arr = None
        self.stable = False
        self.yv = NULL
        if values is not None:
            if self.kind != OBJ_SQUARED:
                raise ValueError("values (the stable form) is for kind='squared'")
            values_arr = np.ascontiguousarray(values, dtype=np.float64)
            if values_arr.shape != (n,):
                raise ValueError("values must have one value per row")
            self.stable = True
            self.yv = <const double*>cnp.PyArray_DATA(values_arr)
        if self.stable and S != 4:
            raise ValueError("the stable form takes stats (w, w y, w y^2, 0)")
        self.PS = 2 * S if self.stable else S
        self._refs = (rank, n_thresholds, stats, worst_arr, values_arr)
        self.rank = &rank[0, 0] if p > 0 else NULL
        self.nthr = &n_thresholds[0] if p > 0 else NULL
        self.rs = &stats[0, 0]
        self.cls = NULL
        self.wt = NULL
        cls_arr = wt_arr = None
        if objective.class_based:
            # one non-zero statistic per row: its class and weight
            st = np.asarray(stats)
            cls_arr = np.ascontiguousarray(np.argmax(st, axis=1), dtype=np.int32)
            wt_arr = np.ascontiguousarray(st.sum(axis=1), dtype=np.float64)
            if np.count_nonzero(st) <= n:
                self.cls = <const int32_t*>cnp.PyArray_DATA(cls_arr)
                self.wt = <const double*>cnp.PyArray_DATA(wt_arr)
        self._refs = self._refs + (cls_arr, wt_arr)
        self.unit = (self.kind == OBJ_ERROR and self.cls != NULL
                      and bool(np.all(wt_arr == 1.0)) and worst_arr is not None
                      and bool(np.all(worst_arr == 1.0))
                      and (S == 2 or (S <= 16 and n < 65536))
                      and (p == 0 or int(np.max(n_thresholds)) < 2 ** 27))
        self.onehot = NULL
        self.W = (S + 3) // 4
        if self.unit and S > 2:
            onehot_arr = np.zeros((S, self.W), dtype=np.uint64)
            for c in range(S):
                onehot_arr[c, c // 4] = np.uint64(1) << np.uint64(16 * (c % 4))
            self.onehot = <const uint64_t*>cnp.PyArray_DATA(onehot_arr)
            self._refs = self._refs + (onehot_arr,)
        self.cost = objective.cost
        self.worst = NULL
        if worst_arr is not None:
            self.worst = <const double*>cnp.PyArray_DATA(worst_arr)
        # subset monotonicity of the optimal loss needs every split allowed
        self.monotone = min_sup == 1 and objective.monotone
        self.use_d2 = use_depth2_solver
        self.eps = purity_tol
        self.cache = BoxCache(max_cache_size, wipe_factor, wipe_strategy)
        self.srt = <int32_t*>_alloc(D * p * n * sizeof(int32_t))
        self.cnt = <int*>_alloc(D * sizeof(int))
        self.tot = <double*>_alloc(D * S * sizeof(double))
        self.leafv = <double*>_alloc(D * sizeof(double))
        self.cons = <int32_t*>_alloc(D * 3 * D * sizeof(int32_t))
        self.ncons = <int*>_alloc(D * sizeof(int))
        self.key = <int32_t*>_alloc(D * self.L * sizeof(int32_t))
        self.keylen = <int*>_alloc(D * sizeof(int))
        self.pos_k = <int32_t*>_alloc(D * (n + 1) * sizeof(int32_t))
        self.pos_t = <int32_t*>_alloc(D * (n + 1) * sizeof(int32_t))
        self.pos_w = <double*>_alloc(D * (n + 1) * sizeof(double))
        self.pos_s = <double*>_alloc(D * (n + 1) * self.PS * sizeof(double))
        self.scr = <double*>_alloc(4 * (n + 1) * sizeof(double))
        self.stk = <int32_t*>_alloc(D * 2 * (n + 2) * sizeof(int32_t))
        self.stkb = <double*>_alloc(D * 2 * (n + 2) * sizeof(double))
        self.forder = <KeyIdx*>_alloc(D * (p + 1) * sizeof(KeyIdx))
        self.fk = <int32_t*>_alloc(D * (p + 1) * sizeof(int32_t))
        self.buf = <int32_t*>_alloc(2 * n * sizeof(int32_t))
        if self.unit:
            self.srtk = <int32_t*>_alloc(D * p * n * sizeof(int32_t))
            self.left = <unsigned char*>_alloc(n)
        self.d2g = <int32_t*>_alloc(2 * D * sizeof(int32_t))
        if self.order:
            self.yrow = <int32_t*>_alloc(D * n * sizeof(int32_t))
            self.lrank = <int32_t*>_alloc(D * n * sizeof(int32_t))
            self.yl = <double*>_alloc(D * n * sizeof(double))
            self.wl = <double*>_alloc(D * n * sizeof(double))
            self.fen = <double*>_alloc(2 * (n + 1) * sizeof(double))
        if self.py_add:
            self.qbuf = <double*>_alloc(2 * PY_CHUNK * S * sizeof(double))
            self.qout = <double*>_alloc(2 * PY_CHUNK * sizeof(double))
            self.qk = <int32_t*>_alloc(PY_CHUNK * sizeof(int32_t))
            self.sfx = <double*>_alloc((n + 1) * S * sizeof(double))
        self._root()

    def __dealloc__(self):
        free(self.srt)
        free(self.cnt)
        free(self.tot)
        free(self.leafv)
        free(self.cons)
        free(self.ncons)
        free(self.key)
        free(self.keylen)
        free(self.pos_k)
        free(self.pos_t)
        free(self.pos_w)
        free(self.pos_s)
        free(self.scr)
        free(self.stk)
        free(self.stkb)
        free(self.forder)
        free(self.fk)
        free(self.buf)
        free(self.srtk)
        free(self.left)
        free(self.d2g)
        free(self.yrow)
        free(self.lrank)
        free(self.yl)
        free(self.wl)
        free(self.fen)
        free(self.qbuf)
        free(self.qout)
        free(self.qk)
        free(self.sfx)

    def _check_objective(self):
        """The objective's kind and its agreement with the rows' statistics."""
        cdef Objective o = self.obj
        cdef int k = self.kind
        if o.n != self.n:
            raise ValueError("the objective was made for another number of rows")
        self.py_add = k == OBJ_PY_CLASS or k == OBJ_PY_STATS
        self.order = k == OBJ_ABSOLUTE or k == OBJ_QUANTILE
        self.by_rows = k == OBJ_PY_ROWS
        self.special = self.py_add or self.order or self.by_rows
        if (o.class_based or k == OBJ_PY_STATS) and o.K != self.S:
            raise ValueError("stats must have one column per class (statistic) "
                             "of the objective")
        if self.order and (self.S != 2 or o.y == NULL):
            raise ValueError("the absolute / pinball losses take stats (w, w y) "
                             "and an objective with y")
        if k == OBJ_SQUARED and self.S not in (3, 4):
            raise ValueError("the squared error takes stats (w, w y, w y^2)")
        self.tau = 0.5 if k == OBJ_ABSOLUTE else o.tau
        self.below = 1.0 if k == OBJ_ABSOLUTE else 1.0 - o.tau
        self.above = 1.0 if k == OBJ_ABSOLUTE else o.tau

    # ------------------------------------------------------------ leaves
    cdef inline double _loss(self, const double* s) noexcept nogil:
        """Loss of a leaf with statistics ``s`` (the C losses of additive
        statistics; the others are priced by ``_leaf_of`` / ``_side_any``)."""
        cdef int S = self.S
        cdef double v
        if self.kind == OBJ_ERROR:
            if S == 2:
                return s[0] if s[0] < s[1] else s[1]
            return _misclassified(s, S)
        if self.kind == OBJ_COST:
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
        if self.kind == OBJ_ERROR:
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
        if self.kind == OBJ_COST:
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

    cdef void _suffixes(self, const int32_t* rows, int m) noexcept nogil:
        """``scr[4 i: 4 i + 4]``: the stable statistics of ``rows[i:m]``."""
        cdef double* a = self.scr + 4 * m
        cdef int i, c
        for c in range(4):
            a[c] = 0.0
        for i in range(m - 1, -1, -1):
            for c in range(4):
                self.scr[4 * i + c] = a[c]
            a = self.scr + 4 * i
            self._add_row(a, rows[i])

    cdef double _stable_side(self, const int32_t* rows, int m, const int32_t* rg,
                             double best, double lb, bint* done, int* out_k) noexcept nogil:
        """The stable form of a depth-1 sweep of ``rows[:m]`` (sorted by the
        feature of ranks ``rg``): the best split below ``best`` (rows on its
        left in ``out_k``), stopping at ``lb``."""
        cdef int ms = self.min_sup, i, row, rk, last, c
        cdef double acc[4]
        cdef double v
        if m < 2 * ms or m == 0:
            return best
        self._suffixes(rows, m)
        for c in range(4):
            acc[c] = 0.0
        last = rg[rows[0]]
        for i in range(m):
            row = rows[i]
            rk = rg[row]
            if rk != last and i >= ms and m - i >= ms:
                v = self._loss(acc) + self._loss(self.scr + 4 * i)
                if v < best:
                    best = v
                    out_k[0] = i
                    if best <= lb:
                        done[0] = True
                        return best
            last = rk
            self._add_row(acc, row)
        return best

    # ------------------------------------------------------------- nodes
    cdef int _root(self) except -1:
        """The root node (depth 0): every row, sorted by every feature, its
        statistics and key. The search writes only deeper levels, so this is
        done once, when the searcher is made."""
        cdef int g, i, n = self.n, p = self.p, S = self.S, c
        cdef double* t = self.tot
        # rows sorted by every feature: a counting sort of the ranks
        cdef int32_t* lst
        cdef const int32_t* rk
        cdef int32_t* start = NULL
        cdef int B
        for g in range(p):
            rk = self.rank + g * n
            B = self.nthr[g] + 1
            start = <int32_t*>_alloc((B + 1) * sizeof(int32_t))
            for i in range(n):
                start[rk[i] + 1] += 1
            for i in range(B):
                start[i + 1] += start[i]
            lst = self.srt + g * n
            for i in range(n):
                lst[start[rk[i]]] = i
                start[rk[i]] += 1
            free(start)
            if self.unit:
                for i in range(n):
                    self.srtk[g * n + i] = (rk[lst[i]] << 4) | self.cls[lst[i]]
        for c in range(S):
            t[c] = 0.0
        for i in range(n):
            if self.stable:
                self._add_row(t, i)
                continue
            for c in range(S):
                t[c] += self.rs[i * S + c]
        self.cnt[0] = n
        if self.order:
            self._rank_root()
        self.leafv[0] = self._leaf_of(0, t)
        self.ncons[0] = 0
        self.key[0] = self.max_depth
        self.keylen[0] = 1
        return 0

    cdef int _rank_root(self) except -1:
        """The root's rows by target, their ranks, targets and weights."""
        cdef int i, n = self.n
        cdef KeyIdx* ki = <KeyIdx*>_alloc(n * sizeof(KeyIdx))
        for i in range(n):
            ki[i].key = self.obj.y[i]
            ki[i].idx = i
        qsort(ki, n, sizeof(KeyIdx), _cmp_keyidx)
        for i in range(n):
            self.yrow[i] = ki[i].idx
        free(ki)
        self._rank_rows(0)
        return 0

    cdef void _rank_rows(self, int d) noexcept nogil:
        """Ranks, targets and weights of the depth-d node's rows by target."""
        cdef int k, row, n = self.n
        cdef const int32_t* yr = self.yrow + d * n
        cdef const double* w = self.obj.w
        for k in range(self.cnt[d]):
            row = yr[k]
            self.lrank[d * n + row] = k
            self.yl[d * n + k] = self.obj.y[row]
            self.wl[d * n + k] = w[row] if w != NULL else 1.0

    cdef double _leaf_of(self, int d, const double* tt) noexcept nogil:
        """Loss of the depth-d node as one leaf (statistics ``tt``)."""
        cdef int i
        if self.order:
            return sorted_loss(self.yl + d * self.n, self.wl + d * self.n, self.cnt[d],
                               self.tau, self.below, self.above)
        if self.by_rows:
            if self.p > 0:
                return self.obj.rows_loss_of(self.srt + d * self.p * self.n, self.cnt[d])
            for i in range(self.n):
                self.obj.rows[i] = i
            return self.obj.rows_loss_of(self.obj.rows, self.n)
        if self.py_add:
            return self.obj.class_loss_py(tt)
        return self._loss(tt)

    cdef void _make_child(self, int d, int f, int t, bint left) noexcept nogil:
        """Rows of the depth-d node with ``rank[f] <= t`` (left) or ``> t``
        into depth d + 1: sorted lists, statistics, constraints and key."""
        cdef int n = self.n, p = self.p, S = self.S, g, i, m = 0, c, j, nc
        cdef int s = self.cnt[d], row, lo, hi, L = self.L, kl
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* rg
        cdef int32_t* src
        cdef int32_t* dst
        cdef int32_t* srck
        cdef int32_t* dstk
        cdef int sd
        cdef double* tt = self.tot + (d + 1) * S
        cdef int32_t* pc = self.cons + d * 3 * self.D
        cdef int32_t* cc = self.cons + (d + 1) * 3 * self.D
        cdef int32_t* k = self.key + (d + 1) * L
        for c in range(S):
            tt[c] = 0.0
        for g in range(p):
            src = self.srt + (d * p + g) * n
            dst = self.srt + ((d + 1) * p + g) * n
            m = 0
            if self.unit:
                srck = self.srtk + (d * p + g) * n
                dstk = self.srtk + ((d + 1) * p + g) * n
                for i in range(s):
                    row = src[i]
                    sd = (rf[row] <= t) == left
                    dst[m] = row
                    dstk[m] = srck[i]
                    m += sd
            elif left:
                for i in range(s):
                    row = src[i]
                    dst[m] = row
                    m += rf[row] <= t
            else:
                for i in range(s):
                    row = src[i]
                    dst[m] = row
                    m += rf[row] > t
        self._stats_of(self.srt + (d + 1) * p * n, m, tt)
        self.cnt[d + 1] = m
        if self.order:
            src = self.yrow + d * n
            dst = self.yrow + (d + 1) * n
            m = 0
            for i in range(s):
                row = src[i]
                dst[m] = row
                m += (rf[row] <= t) == left
            self._rank_rows(d + 1)
        self.leafv[d + 1] = self._leaf_of(d + 1, tt)
        # constraints: the parent's, with f's interval narrowed
        nc = 0
        j = 0
        while j < self.ncons[d] and pc[3 * j] < f:
            cc[3 * nc] = pc[3 * j]
            cc[3 * nc + 1] = pc[3 * j + 1]
            cc[3 * nc + 2] = pc[3 * j + 2]
            nc += 1
            j += 1
        lo = 0
        hi = self.nthr[f]
        if j < self.ncons[d] and pc[3 * j] == f:
            lo = pc[3 * j + 1]
            hi = pc[3 * j + 2]
            j += 1
        if left:
            if t < hi:
                hi = t
        elif t + 1 > lo:
            lo = t + 1
        cc[3 * nc] = f
        cc[3 * nc + 1] = lo
        cc[3 * nc + 2] = hi
        nc += 1
        while j < self.ncons[d]:
            cc[3 * nc] = pc[3 * j]
            cc[3 * nc + 1] = pc[3 * j + 1]
            cc[3 * nc + 2] = pc[3 * j + 2]
            nc += 1
            j += 1
        self.ncons[d + 1] = nc
        # key: the remaining depth, then each constrained feature whose rows
        # do not span all its ranks, with the ranks they span
        k[0] = self.max_depth - d - 1
        kl = 1
        for j in range(nc):
            g = cc[3 * j]
            rg = self.rank + g * n
            dst = self.srt + ((d + 1) * p + g) * n
            lo = rg[dst[0]]
            hi = rg[dst[m - 1]]
            if lo == 0 and hi == self.nthr[g]:
                continue
            k[kl] = g
            k[kl + 1] = lo
            k[kl + 2] = hi
            kl += 3
        self.keylen[d + 1] = kl

    # ------------------------------------------------------------ depth 1
    cdef double _sweep(self, int d, int g, int* out_k) noexcept nogil:
        """Best split of the depth-d node on feature g (its loss; INFINITY
        if none is allowed); ``out_k``: rows on its left."""
        cdef int n = self.n, S = self.S, s = self.cnt[d], i, c, row, last = -1
        cdef int ms = self.min_sup, bk = -1
        cdef const int32_t* rg = self.rank + g * n
        cdef const int32_t* lst = self.srt + (d * self.p + g) * n
        cdef const double* t = self.tot + d * S
        cdef double acc[64]
        cdef double best = INFINITY, v
        cdef const double* r
        cdef bint done = False
        if self.stable:
            best = self._stable_side(lst, s, rg, INFINITY, -INFINITY, &done, &bk)
            out_k[0] = bk
            return best
        if self.special:
            self.od = d
            best = self._side_any(lst, s, rg, t, INFINITY, -INFINITY, &done, &bk)
            out_k[0] = bk
            return best
        for c in range(S):
            acc[c] = 0.0
        for i in range(s):
            row = lst[i]
            if rg[row] != last and i >= ms and s - i >= ms:
                v = self._loss(acc) + self._loss_rest(t, acc)
                if v < best:
                    best = v
                    bk = i
            last = rg[row]
            r = self.rs + row * S
            for c in range(S):
                acc[c] += r[c]
        out_k[0] = bk
        return best

    cdef int _positions(self, int d, int f) noexcept nogil:
        """The allowed split positions of feature f at depth d: rows on the
        left, threshold rank, prefix statistics and prefix worst losses."""
        cdef int n = self.n, S = self.S, s = self.cnt[d], i, c, row, last = -1
        cdef int ms = self.min_sup, P = 0
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* lst = self.srt + (d * self.p + f) * n
        cdef int32_t* pk = self.pos_k + d * (n + 1)
        cdef int32_t* pt = self.pos_t + d * (n + 1)
        cdef double* pw = self.pos_w + d * (n + 1)
        cdef int PS = self.PS
        cdef double* ps = self.pos_s + d * (n + 1) * PS
        cdef double acc[64]
        cdef double w = 0.0
        cdef const double* r
        for c in range(S):
            acc[c] = 0.0
        if self.stable:
            self._suffixes(lst, s)
        for i in range(s):
            row = lst[i]
            if rf[row] != last and i >= ms and s - i >= ms:
                pk[P] = i
                pt[P] = last
                pw[P] = w
                for c in range(S):
                    ps[P * PS + c] = acc[c]
                if self.stable:  # and the right side's, from the suffixes
                    for c in range(S):
                        ps[P * PS + S + c] = self.scr[S * i + c]
                P += 1
            last = rf[row]
            if self.stable:
                self._add_row(acc, row)
                continue
            r = self.rs + row * S
            for c in range(S):
                acc[c] += r[c]
            if self.worst != NULL:
                w += self.worst[row]
        return P

    # ------------------------------------------------------------ depth 2
    cdef double _side2(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil:
        """``_side`` for two classes of unit weight, on the rows' keys
        (``rank << 4 | class``, in the feature's order): the class counts
        stay in registers, a split ``v`` above ``best`` skips ``v - best``
        rows, which are only counted, and the sweep ends when the left
        side's loss alone (which only grows) reaches ``best``."""
        cdef int ms = self.min_sup, i = 0, e, end = m - ms + 1, c1 = 0, nxt = ms, key
        cdef int t0 = <int>tot[0], t1 = <int>tot[1], a0, b0, b1, v
        # integer losses: v < best exactly when v < ceil(best)
        cdef int ibest = <int>ceil(best) if best < 2147483647.0 else 2147483647
        cdef bint improved = False
        if m < 2 * ms:
            return best
        while i < end:
            if i < nxt:
                e = nxt if nxt < end else end
                while i < e:
                    c1 += keys[i] & 15
                    i += 1
                if i == end:
                    break
            # i >= nxt >= ms >= 1: a split before row i, if values differ
            key = keys[i]
            if key >> 4 != keys[i - 1] >> 4:
                a0 = i - c1
                b0 = t0 - a0
                b1 = t1 - c1
                a0 = a0 if a0 < c1 else c1
                v = a0 + (b0 if b0 < b1 else b1)
                if v < ibest:
                    ibest = v
                    improved = True
                    if v <= lb:
                        done[0] = True
                        return v
                else:
                    nxt = i + (v - ibest) + 1
                if a0 >= ibest:
                    # the left side's loss alone only grows from here
                    break
            c1 += key & 15
            i += 1
        return ibest if improved else best

    cdef double _sidek(self, const int32_t* keys, int m, const double* tot,
                       double best, double lb, bint* done) noexcept nogil:
        """``_side2`` for 3 to 16 classes: the counts are 16-bit fields of at
        most four registers (``onehot``: each class's one in them)."""
        cdef int ms = self.min_sup, S = self.S, W = self.W, i = 0, e
        cdef int end = m - ms + 1, c, nxt = ms
        cdef int tt[16]
        cdef uint64_t aw[4]
        cdef uint64_t w0 = 0, w1 = 0, w2 = 0, w3 = 0
        cdef const uint64_t* oh = self.onehot
        cdef const uint64_t* o
        cdef int v, big_a, big_b, x, m_all = 0
        cdef int ibest = <int>ceil(best) if best < 2147483647.0 else 2147483647
        cdef bint improved = False
        if m < 2 * ms:
            return best
        for c in range(S):
            tt[c] = <int>tot[c]
            m_all += tt[c]
        while True:
            e = nxt if nxt < end else end
            while i < e:
                o = oh + W * (keys[i] & 15)
                w0 += o[0]
                if W > 1:
                    w1 += o[1]
                    if W > 2:
                        w2 += o[2]
                        if W > 3:
                            w3 += o[3]
                i += 1
            if i >= end:
                break
            # i >= nxt >= ms >= 1: a split before row i, if values differ
            nxt = i + 1
            if keys[i] >> 4 != keys[i - 1] >> 4:
                aw[0] = w0
                aw[1] = w1
                aw[2] = w2
                aw[3] = w3
                big_a = 0
                big_b = 0
                for c in range(S):
                    x = <int>((aw[c >> 2] >> ((c & 3) << 4)) & 0xFFFF)
                    if x > big_a:
                        big_a = x
                    x = tt[c] - x
                    if x > big_b:
                        big_b = x
                v = m_all - big_a - big_b
                if v < ibest:
                    ibest = v
                    improved = True
                    if v <= lb:
                        done[0] = True
                        return v
                else:
                    nxt = i + (v - ibest) + 1
                if i - big_a >= ibest:
                    # the left side's loss alone only grows from here
                    break
        return ibest if improved else best

    cdef double _side(self, const int32_t* rows, int m, const int32_t* rg,
                      const double* tot, double best, double lb, bint* done) noexcept nogil:
        """Best depth-1 split on one feature of the rows ``rows[:m]`` (sorted
        by that feature, ranks ``rg``), if below ``best``; stops at ``lb``.
        With per-row ``worst`` losses, a split ``v`` above ``best`` skips the
        next splits until the rows passed could make up ``v - best``."""
        cdef int S = self.S, ms = self.min_sup, i, c, row, rk, last
        cdef double acc[64]
        cdef double v, sk = -1.0
        cdef const double* wk = self.worst
        cdef const double* r
        cdef bint by_class = self.cls != NULL
        cdef int k
        if self.stable:
            return self._stable_side(rows, m, rg, best, lb, done, &k)
        if m < 2 * ms:
            return best
        for c in range(S):
            acc[c] = 0.0
        last = rg[rows[0]]
        for i in range(m):
            row = rows[i]
            rk = rg[row]
            if rk != last and sk < 0.0 and i >= ms and m - i >= ms:
                v = self._loss(acc) + self._loss_rest(tot, acc)
                if v < best:
                    best = v
                    if best <= lb:
                        done[0] = True
                        return best
                elif wk != NULL:
                    sk = v - best
            if wk != NULL:
                sk -= wk[row]
            last = rk
            if by_class:
                acc[self.cls[row]] += self.wt[row]
            else:
                r = self.rs + row * S
                for c in range(S):
                    acc[c] += r[c]
        return best

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

    cdef double _side_any(self, const int32_t* rows, int m, const int32_t* rg,
                          const double* tot, double best, double lb, bint* done,
                          int* out_k) noexcept nogil:
        """``_side`` for the objectives not priced inline (``special``); the
        best split's rows on the left in ``out_k``."""
        if m < 2 * self.min_sup or m < 2:
            return best
        if self.py_add:
            best = self._side_py(rows, m, rg, best, out_k)
        elif self.order:
            best = self._side_order(rows, m, rg, best, lb, out_k)
        else:
            best = self._side_rows(rows, m, rg, best, lb, out_k)
        if best <= lb:
            done[0] = True
        return best

    cdef double _side_py(self, const int32_t* rows, int m, const int32_t* rg,
                         double best, int* out_k) noexcept nogil:
        """Python loss of summed statistics: both sides of up to
        ``PY_CHUNK`` positions priced per ``batch_loss``. Each side is summed
        over its own rows (a backward pass for the right ones), never as a
        difference: a class absent from a side has a support of exactly 0
        for the user's function."""
        cdef int S = self.S, ms = self.min_sup, i, c, row, k = 0
        cdef double acc[64]
        cdef double* q
        for c in range(S):
            acc[c] = 0.0
        for i in range(m - 1, 0, -1):
            self._add_stats(acc, rows[i])
            if rg[rows[i]] != rg[rows[i - 1]]:
                memcpy(self.sfx + i * S, acc, S * sizeof(double))
        for c in range(S):
            acc[c] = 0.0
        for i in range(m):
            row = rows[i]
            if i > 0 and rg[row] != rg[rows[i - 1]] and i >= ms and m - i >= ms:
                q = self.qbuf + 2 * k * S
                memcpy(q, acc, S * sizeof(double))
                memcpy(q + S, self.sfx + i * S, S * sizeof(double))
                self.qk[k] = i
                k += 1
                if k == PY_CHUNK:
                    best = self._py_flush(k, best, out_k)
                    k = 0
            self._add_stats(acc, row)
        if k:
            best = self._py_flush(k, best, out_k)
        return best

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

    cdef double _py_flush(self, int k, double best, int* out_k) noexcept nogil:
        """Price the k positions of ``qbuf``; the best below ``best``."""
        cdef int i
        cdef double v
        self.obj.batch_loss(self.qbuf, 2 * k, self.qout)
        for i in range(k):
            v = self.qout[2 * i] + self.qout[2 * i + 1]
            if v < best:
                best = v
                out_k[0] = self.qk[i]
        return best

    cdef double _side_order(self, const int32_t* rows, int m, const int32_t* rg,
                            double best, double lb, int* out_k) noexcept nogil:
        """Absolute / pinball loss: ``rows[:m]`` are rows of the node at
        depth ``od``, ranked by target there. A backward pass prices every
        right side (into ``scr``), a forward pass every left side, each side
        a Fenwick tree over those ranks."""
        cdef int d = self.od, n = self.n, M = self.cnt[d], ms = self.min_sup
        cdef int i, k, top = fw_top(M)
        cdef const int32_t* lr = self.lrank + d * n
        cdef const double* yr = self.yl + d * n
        cdef const double* wr = self.wl + d * n
        cdef double* fw = self.fen
        cdef double* fy = self.fen + (n + 1)
        cdef double* right = self.scr
        cdef double W = 0.0, WY = 0.0, v
        memset(fw, 0, (M + 1) * sizeof(double))
        memset(fy, 0, (M + 1) * sizeof(double))
        for i in range(m - 1, 0, -1):
            k = lr[rows[i]]
            fw_add(fw, fy, M, k, wr[k], wr[k] * yr[k])
            W += wr[k]
            WY += wr[k] * yr[k]
            if rg[rows[i]] != rg[rows[i - 1]] and i >= ms and m - i >= ms:
                right[i] = fw_loss(fw, fy, M, top, W, WY, self.tau, self.below,
                                   self.above, yr)
        memset(fw, 0, (M + 1) * sizeof(double))
        memset(fy, 0, (M + 1) * sizeof(double))
        W = 0.0
        WY = 0.0
        for i in range(m - 1):
            k = lr[rows[i]]
            fw_add(fw, fy, M, k, wr[k], wr[k] * yr[k])
            W += wr[k]
            WY += wr[k] * yr[k]
            if (rg[rows[i + 1]] != rg[rows[i]] and i + 1 >= ms
                    and m - i - 1 >= ms):
                v = fw_loss(fw, fy, M, top, W, WY, self.tau, self.below,
                            self.above, yr) + right[i + 1]
                if v < best:
                    best = v
                    out_k[0] = i + 1
                    if best <= lb:
                        return best
        return best

    cdef double _side_rows(self, const int32_t* rows, int m, const int32_t* rg,
                           double best, double lb, int* out_k) noexcept nogil:
        """Python loss of the row list: each side's rows go to Python (the
        right side only when the left one leaves room under ``best``)."""
        cdef int i, ms = self.min_sup
        cdef double v
        for i in range(1, m):
            if rg[rows[i]] == rg[rows[i - 1]] or i < ms or m - i < ms:
                continue
            v = self.obj.rows_loss_of(rows, i)
            if v >= best:
                continue
            v += self.obj.rows_loss_of(rows + i, m - i)
            if v < best:
                best = v
                out_k[0] = i
                if best <= lb:
                    return best
        return best

    cdef double _split_leaf(self, int d, int f, int j, bint left) noexcept nogil:
        """Loss of one child of position j of f, as a leaf (order statistics
        and row lists; the additive objectives use the position's sums)."""
        cdef int n = self.n, s = self.cnt[d], i, m = 0, row
        cdef int t = self.pos_t[d * (n + 1) + j], nl = self.pos_k[d * (n + 1) + j]
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* lst
        cdef double* ys = self.fen
        cdef double* ws = self.fen + (n + 1)
        if self.by_rows:
            lst = self.srt + (d * self.p + f) * n
            if left:
                return self.obj.rows_loss_of(lst, nl)
            return self.obj.rows_loss_of(lst + nl, s - nl)
        for i in range(s):
            row = self.yrow[d * n + i]
            if (rf[row] <= t) == left:
                ys[m] = self.yl[d * n + i]
                ws[m] = self.wl[d * n + i]
                m += 1
        return sorted_loss(ys, ws, m, self.tau, self.below, self.above)

    cdef void _d2_eval(self, int d, int f, int j, double ubL, double ubR,
                       double lbL, double lbR, double* outL, double* outR) noexcept nogil:
        """Depth-1 optima of both children of position j of f: per feature,
        the node's sorted rows are split (branch-free, keeping the order)
        into the two children's, and each is swept once (``_side``).

        Only losses below ``ubL`` / ``ubR`` are sought: a side with none
        answers its bound (a lower bound then, not its optimum). A side
        stops at its lower bound ``lbL`` / ``lbR``.
        """
        cdef int n = self.n, p = self.p, S = self.S, s = self.cnt[d], g, i, c, row
        cdef int t = self.pos_t[d * (n + 1) + j], ml, mr, sd
        cdef int nl = self.pos_k[d * (n + 1) + j]
        cdef const int32_t* rf = self.rank + f * n
        cdef const int32_t* rg
        cdef const int32_t* lst
        cdef int32_t* bl = self.buf
        cdef int32_t* br = self.buf + n
        cdef double ta[64]
        cdef double tb[64]
        cdef double bestL, bestR, vL, vR
        cdef bint doneA, doneB
        cdef int gL, gR, k, key
        cdef const int32_t* kg
        cdef unsigned char* side = self.left
        cdef const int32_t* kl
        cdef const int32_t* kr
        cdef const double* ps = self.pos_s + (d * (n + 1) + j) * self.PS
        cdef const double* tt = self.tot + d * S
        for c in range(S):
            ta[c] = ps[c]
            tb[c] = ps[S + c] if self.stable else tt[c] - ps[c]
        if self.py_add:
            lst = self.srt + (d * p + f) * n
            self._stats_of(lst + nl, s - nl, tb)
        self.od = d
        if self.order or self.by_rows:
            bestL = self._split_leaf(d, f, j, True)
            bestR = self._split_leaf(d, f, j, False)
        elif self.py_add:
            bestL = self.obj.class_loss_py(ta)
            bestR = self.obj.class_loss_py(tb)
        else:
            bestL = self._loss(ta)
            bestR = self._loss(tb)
        if bestL > ubL:
            bestL = ubL
        if bestR > ubR:
            bestR = ubR
        doneA = bestL <= lbL
        doneB = bestR <= lbR
        # the features that split the children best at the last position
        # evaluated first: neighbouring positions mostly share them, and a
        # good loss early lets the other sweeps skip more
        gL = self.d2g[2 * d]
        gR = self.d2g[2 * d + 1]
        if self.unit:
            lst = self.srt + (d * p + f) * n
            for i in range(s):
                side[lst[i]] = i < nl
        for k in range(p + 2):
            if doneA and doneB:
                break
            if k == 0:
                g = gL
            elif k == 1:
                g = gR
                if g == gL:
                    continue
            else:
                g = k - 2
                if g == gL or g == gR:
                    continue
            lst = self.srt + (d * p + g) * n
            rg = NULL if self.unit else self.rank + g * n
            vL = bestL
            vR = bestR
            if self.unit:
                # the children's keys in g's order
                kg = self.srtk + (d * p + g) * n
                kl = kg
                kr = kg + nl
                ml = nl
                mr = s - nl
                if g != f:
                    ml = 0
                    mr = 0
                    for i in range(s):
                        sd = side[lst[i]]
                        key = kg[i]
                        bl[ml] = key
                        br[mr] = key
                        ml += sd
                        mr += 1 - sd
                    kl = bl
                    kr = br
                if S == 2:
                    if not doneA:
                        bestL = self._side2(kl, ml, ta, bestL, lbL, &doneA)
                    if not doneB:
                        bestR = self._side2(kr, mr, tb, bestR, lbR, &doneB)
                else:
                    if not doneA:
                        bestL = self._sidek(kl, ml, ta, bestL, lbL, &doneA)
                    if not doneB:
                        bestR = self._sidek(kr, mr, tb, bestR, lbR, &doneB)
            elif g == f:
                bestL = self._side_d2(lst, nl, rg, ta, bestL, lbL, &doneA)
                bestR = self._side_d2(lst + nl, s - nl, rg, tb, bestR, lbR, &doneB)
            else:
                ml = 0
                mr = 0
                for i in range(s):
                    row = lst[i]
                    sd = rf[row] <= t
                    bl[ml] = row
                    br[mr] = row
                    ml += sd
                    mr += 1 - sd
                if not doneA:
                    bestL = self._side_d2(bl, ml, rg, ta, bestL, lbL, &doneA)
                if not doneB:
                    bestR = self._side_d2(br, mr, rg, tb, bestR, lbR, &doneB)
            if bestL < vL:
                self.d2g[2 * d] = g
            if bestR < vR:
                self.d2g[2 * d + 1] = g
        outL[0] = bestL
        outR[0] = bestR

    # ------------------------------------------------- the cache (hooks)
    cdef Py_ssize_t _open(self, int d, double* value, bint* solved) noexcept nogil:
        cdef Py_ssize_t e
        cdef BoxEntry* ent
        self._lock()
        e = self.cache.find(self.key + d * self.L, self.keylen[d], False)
        if e < 0:
            self._unlock()
            value[0] = 0.0
            solved[0] = False
            return NO_ENTRY
        ent = &self.cache.entries[e]
        solved[0] = ent.flags & BOX_SOLVED
        value[0] = ent.error if solved[0] else ent.lb
        self._unlock()
        return e

    cdef inline BoxEntry* _entry(self, int d) noexcept nogil:
        """The entry of the depth-d node, made if new (NULL: out of memory).
        A bounded cache may have wiped the one ``_open`` found."""
        cdef Py_ssize_t e = self.cache.find(self.key + d * self.L, self.keylen[d], True)
        return &self.cache.entries[e] if e >= 0 else NULL

    cdef void _store_solved(self, int d, Py_ssize_t e, double err, int f,
                            int t) noexcept nogil:
        self._lock()
        cdef BoxEntry* ent = self._entry(d)
        if ent != NULL:
            ent.error = err
            ent.lb = err
            ent.feature = f
            ent.threshold = t
            ent.flags = ent.flags | BOX_SOLVED
        self._unlock()

    cdef void _store_bound(self, int d, Py_ssize_t e, double lb) noexcept nogil:
        self._lock()
        cdef BoxEntry* ent = self._entry(d)
        if ent != NULL and lb > ent.lb:
            ent.lb = lb
        self._unlock()

    cdef double _keep_incumbent(self, int d, Py_ssize_t e, double err, int f,
                                int t) noexcept nogil:
        cdef double kept = err
        self._lock()
        cdef BoxEntry* ent = self._entry(d)
        if ent != NULL:
            if err < ent.error:
                ent.error = err
                ent.feature = f
                ent.threshold = t
            kept = ent.error
        self._unlock()
        return kept

    cdef int _tree_of(self, int d, double* err, int* f, int* t) noexcept nogil:
        cdef Py_ssize_t e = self.cache.find(self.key + d * self.L, self.keylen[d], False)
        cdef BoxEntry* ent
        if e < 0:
            return NO_ENTRY
        ent = &self.cache.entries[e]
        t[0] = ent.threshold
        return _tree_state(ent.error, ent.feature, ent.flags & BOX_SOLVED, err, f)

    cdef bint _out_of_memory(self) noexcept nogil:
        return self.cache.out_of_memory

    # ------------------------------------------------- the nodes (hooks)
    cdef double _leaf_loss(self, int d) noexcept nogil:
        return self.leafv[d]

    cdef double _rows(self, int d) noexcept nogil:
        return self.cnt[d]

    cdef void _child(self, int d, int f, int t, int side) noexcept nogil:
        self._make_child(d, f, t, side == 0)

    cdef double _direct(self, int d, int r, double leaf, int* f, int* t) noexcept nogil:
        """The depth-1 optimum: one sweep per feature."""
        cdef double err = leaf, v
        cdef int g, k
        for g in range(self.p):
            v = self._sweep(d, g, &k)
            if v < err:
                err = v
                f[0] = g
                t[0] = self.rank[g * self.n + self.srt[(d * self.p + g) * self.n + k - 1]]
        return err

    cdef int _raise_if_aborted(self) except -1:
        exc = self.obj.pop_error()
        if exc is not None:
            raise exc
        return 0

    cdef object _node_value(self, int d):
        return [self.tot[d * self.S + c] for c in range(self.S)]

    # ------------------------------------------------------- split search
    cdef inline void _pruned(self, double bound, double* min_lb) noexcept nogil:
        self.n_interval_pruned += 1
        if bound < min_lb[0]:
            min_lb[0] = bound

    cdef void _raise_bounds(self, int d, int P, int j, double Lj, double Rj) noexcept nogil:
        """After evaluating position j (children's losses at least Lj, Rj):
        a position left of j has a right child containing j's, and a left
        child missing only the rows between them (each adding at most its
        ``worst`` loss); symmetrically on the right."""
        cdef int n = self.n, i
        cdef double* lowL = self.stkb + d * 2 * (n + 2)
        cdef double* lowR = lowL + (n + 2)
        cdef double* pw = self.pos_w + d * (n + 1)
        cdef double v
        cdef bint nb = self.worst != NULL
        for i in range(j):
            if Rj > lowR[i]:
                lowR[i] = Rj
            if nb:
                v = Lj - (pw[j] - pw[i])
                if v > lowL[i]:
                    lowL[i] = v
        for i in range(j + 1, P):
            if Lj > lowL[i]:
                lowL[i] = Lj
            if nb:
                v = Rj - (pw[i] - pw[j])
                if v > lowR[i]:
                    lowR[i] = v

    cdef inline int _seed_position(self, int d, int f, int P) noexcept nogil:
        """The position, among feature ``f``'s ``P`` at depth ``d``
        (``_positions``), of its best single split (the last position if
        none has its row count)."""
        cdef int32_t* pk = self.pos_k + d * (self.n + 1)
        cdef int32_t k = self.fk[d * (self.p + 1) + f]
        cdef int j = 0
        while j < P - 1 and pk[j] != k:
            j += 1
        return j

    cdef bint _try_seeds(self, int d, double lb, double* cur_ub, double* best,
                         int* f_out, int* t_out) noexcept nogil:
        """Before any feature's thresholds are searched as intervals, each
        feature's best single split tried as the root of a full subtree, in
        the features' order (children solved under the bound ``cur_ub``,
        lowered by every tree found, on threads by any thread's): whether a
        tree below it was found (its loss in ``best``, its feature and
        threshold). On threads each feature's seed is tried by the first
        thread to claim it (candidates ``0 .. p - 1``; the interval
        searches follow as ``p .. 2p - 1``). Every one of these trees is met
        again, from the cache, by its feature's interval search."""
        cdef int p = self.p, n = self.n, i, f, P, j
        cdef KeyIdx* order = self.forder + d * (p + 1)
        cdef int32_t* fk = self.fk + d * (p + 1)
        cdef int32_t* pk = self.pos_k + d * (n + 1)
        cdef int32_t* pt = self.pos_t + d * (n + 1)
        cdef double errL, errR, lL, lR
        cdef bint big_left, found = False
        for i in range(p):
            if order[i].key == INFINITY or self._check_time() or lb >= cur_ub[0]:
                break
            if not self._claim(d, i, cur_ub):
                continue
            f = order[i].idx
            P = self._positions(d, f)
            j = self._seed_position(d, f, P)
            if P == 0 or pk[j] != fk[f]:
                continue
            self.n_seeds += 1
            big_left = 2 * pk[j] >= self.cnt[d]
            self._make_child(d, f, pt[j], big_left)
            errL = self._solve(d + 1, cur_ub[0], &lL)
            if errL == INFINITY or self.timed_out:
                continue
            self._make_child(d, f, pt[j], not big_left)
            errR = self._solve(d + 1, cur_ub[0] - errL, &lR)
            if errR < INFINITY and errL + errR < cur_ub[0]:
                cur_ub[0] = errL + errR
                best[0] = cur_ub[0]
                f_out[0] = f
                t_out[0] = pt[j]
                found = True
                self._trace_root(best[0], lb)
        return found

    cdef int _splits(self, int d, Py_ssize_t e, double ub, double lb, double leaf,
                     double* best_out, int* f_out, int* t_out,
                     double* min_lb_out) noexcept nogil:
        """Every feature's depth-1 sweep (the depth-1 optimum, and the order
        of the features), then the thresholds of each feature searched as
        intervals of positions under the hierarchical upper bound."""
        cdef int r = self.max_depth - d, n = self.n, p = self.p, g, f, i, P, j
        cdef int lo, hi, top, head, bf = -1, bt = -1, seed, first, k
        cdef int qcap = n + 2
        cdef bint big_left
        cdef double best, cur_ub, min_lb, v
        cdef double bL, bR, Lj, Rj, errL, errR, lL, lR, slack, min_before
        cdef bint Lex, Rex, found, seeds
        cdef KeyIdx* order = self.forder + d * (p + 1)
        cdef int32_t* fk = self.fk + d * (p + 1)
        cdef int32_t* pk = self.pos_k + d * (n + 1)
        cdef int32_t* pt = self.pos_t + d * (n + 1)
        cdef double* pw = self.pos_w + d * (n + 1)
        cdef int32_t* stk = self.stk + d * 2 * (n + 2)
        cdef double* lowL = self.stkb + d * 2 * (n + 2)
        cdef double* lowR = lowL + (n + 2)
        # every feature's best single split: the depth-1 optimum, the first
        # threshold tried per feature, and the order of the features
        best = leaf
        for g in range(p):
            v = self._sweep(d, g, &k)
            fk[g] = k
            order[g].key = v
            order[g].idx = g
            if v < best:
                best = v
                bf = g
                bt = self.rank[g * n + self.srt[(d * p + g) * n + k - 1]]
        best_out[0] = best
        f_out[0] = bf
        t_out[0] = bt
        if r == 1 or best <= self.eps or lb >= best:
            return SPLIT_EXACT
        qsort(order, p, sizeof(KeyIdx), _cmp_keyidx)
        found = best < ub
        cur_ub = best if found else ub
        if d == 0 and found:
            self._trace_root(best, lb)
        seeds = d == 0 and r > 2 and not self.restricted
        if seeds:
            if self._try_seeds(d, lb, &cur_ub, &best, &bf, &bt):
                found = True
            if self.timed_out:
                best_out[0] = best
                f_out[0] = bf
                t_out[0] = bt
                min_lb_out[0] = lb
                return SPLIT_SEARCHED
        min_lb = best
        for i in range(self._breadth(d, p)):
            if lb >= cur_ub:
                break
            f = order[i].idx
            if order[i].key == INFINITY:
                break
            if not self._claim(d, i + p if seeds else i, &cur_ub):
                continue
            P = self._positions(d, f)
            if P == 0:
                continue
            self._spend(d, i)
            min_before = min_lb
            seed = self._seed_position(d, f, P)
            # lowL / lowR: lower bounds on the losses of the two children
            # at each position, raised after every evaluation
            for j in range(P):
                lowL[j] = 0.0
                lowR[j] = 0.0
            # intervals of positions, first in first out (coarse to fine)
            stk[0] = 0
            stk[1] = P - 1
            head = 0
            top = 1
            first = 1
            while head != top:
                if self._check_time():
                    break
                if d == 0 and self.share != NULL:
                    # the other threads' best root loss
                    self._claim_root(-1, &cur_ub)
                lo = stk[2 * head]
                hi = stk[2 * head + 1]
                head = (head + 1) % qcap
                while lo <= hi and lowL[lo] + lowR[lo] >= cur_ub:
                    self._pruned(lowL[lo] + lowR[lo], &min_lb)
                    lo += 1
                while hi >= lo and lowL[hi] + lowR[hi] >= cur_ub:
                    self._pruned(lowL[hi] + lowR[hi], &min_lb)
                    hi -= 1
                if lo > hi:
                    continue
                if first and lo <= seed <= hi:
                    j = seed
                else:
                    # the unpruned position nearest the middle (lo and hi
                    # are unpruned)
                    j = (lo + hi) // 2
                    if lowL[j] + lowR[j] >= cur_ub:
                        k = j - 1
                        j += 1
                        while True:
                            if j <= hi and lowL[j] + lowR[j] < cur_ub:
                                break
                            if k >= lo and lowL[k] + lowR[k] < cur_ub:
                                j = k
                                break
                            k -= 1
                            j += 1
                first = 0
                self.n_evals += 1
                bL = lowL[j]
                bR = lowR[j]
                # a child solved past the incumbent's bound by the worst
                # losses between j and the interval's ends returns an exact
                # loss that can prune the whole interval (ConTree's trick)
                slack = 0.0
                if self.worst != NULL and self.monotone:
                    slack = pw[j] - pw[lo]
                    if pw[hi] - pw[j] > slack:
                        slack = pw[hi] - pw[j]
                Lex = True
                Rex = True
                if r == 2 and self.use_d2:
                    self.n_d2 += 1
                    self._d2_eval(d, f, j, cur_ub - bR + slack, cur_ub - bL + slack,
                                  bL, bR, &Lj, &Rj)
                    Lex = Lj < cur_ub - bR + slack
                    Rex = Rj < cur_ub - bL + slack
                else:
                    # the larger child first: its bound may spare the other
                    big_left = 2 * pk[j] >= self.cnt[d]
                    self._make_child(d, f, pt[j], big_left)
                    errL = self._solve(d + 1, cur_ub, &lL)
                    if self.timed_out:
                        break
                    Lex = errL < INFINITY
                    Lj = errL if Lex else lL
                    if Lex and Lj + (bR if big_left else bL) < cur_ub + slack:
                        self._make_child(d, f, pt[j], not big_left)
                        errR = self._solve(d + 1, cur_ub - Lj + slack, &lR)
                        if self.timed_out and errR == INFINITY:
                            break
                        Rex = errR < INFINITY
                        Rj = errR if Rex else lR
                    else:
                        Rj = bR if big_left else bL
                        Rex = False
                    if not big_left:
                        Lj, Rj = Rj, Lj
                        Lex, Rex = Rex, Lex
                if Lj < bL:
                    Lj = bL
                if Rj < bR:
                    Rj = bR
                if Lex and Rex and Lj + Rj < cur_ub:
                    best = Lj + Rj
                    cur_ub = best
                    bf = f
                    bt = pt[j]
                    found = True
                    if d == 0:
                        self._trace_root(best, lb)
                elif Lj + Rj < min_lb:
                    min_lb = Lj + Rj
                if self.timed_out:
                    break
                if self.monotone:
                    self._raise_bounds(d, P, j, Lj, Rj)
                    lowL[j] = Lj
                    lowR[j] = Rj
                if lo < j:
                    stk[2 * top] = lo
                    stk[2 * top + 1] = j - 1
                    top = (top + 1) % qcap
                if j < hi:
                    stk[2 * top] = j + 1
                    stk[2 * top + 1] = hi
                    top = (top + 1) % qcap
            if self.timed_out:
                break
            if self.monotone and not found:
                # the final bounds of every position of f (raised by the
                # evaluations after it was pruned), not the ones it was
                # pruned with
                v = INFINITY
                for j in range(P):
                    if lowL[j] + lowR[j] < v:
                        v = lowL[j] + lowR[j]
                min_lb = v if v < min_before else min_before
        best_out[0] = best
        f_out[0] = bf
        t_out[0] = bt
        min_lb_out[0] = min_lb
        return SPLIT_SEARCHED

    # ------------------------------------------------------------ results
    def tree_arrays(self, loss=None):
        """The best tree found (rebuilt by :meth:`run`), in preorder:
        ``feature``, ``threshold`` (rank index), ``left``, ``right``,
        ``value`` (statistics) and each node's loss as a leaf. ``loss`` is
        not used (the searcher knows whether it proved its tree)."""
        return self._tree_lists()

    cdef int _adopt(self, Skeleton helper) except -1:
        cdef NumericSearcher h = <NumericSearcher?>helper
        if h.n != self.n or h.p != self.p or h.S != self.S:
            raise ValueError("a helper searcher must be made with the same data "
                             "as the searcher it helps")
        h.cache = self.cache
        return 0

    def stats(self):
        """Search counters (of every thread)."""
        cdef NumericSearcher h
        cdef long long n_d2 = self.n_d2, n_evals = self.n_evals
        cdef long long n_pruned = self.n_interval_pruned, n_seeds = self.n_seeds
        for h in self.helpers:
            n_d2 += h.n_d2
            n_evals += h.n_evals
            n_pruned += h.n_interval_pruned
            n_seeds += h.n_seeds
        return {
            "itemsets_explored": int(self.n_explored),
            "cache_hits": int(self.n_hits),
            "depth2_calls": int(n_d2),
            "thresholds_evaluated": int(n_evals),
            "thresholds_pruned": int(n_pruned),
            "root_seeds_tried": int(n_seeds),
            "timeout": bool(self.timed_out),
            **self.thread_stats(),
            **self.cache.stats(),
            "reconstitution_ms": float(self.reconstitution_ms),
            "reconstituted_nodes": int(self.n_reconstituted),
        }
