# cython: language_level=3
"""The DL8.5 search on ordered numeric features (C-level Cython).

Responsibility: the split search over numeric features.
:class:`NumericSearcher` extends the search skeleton
(``_skeleton.Skeleton``: the node protocol, the failure bound, the time
limit, the anytime trace, ``run`` and the rebuild of the tree, written once
for both searches) through ``_numeric_pricing.NumericPricing`` (the fields
and the pricing of leaves and splits) and adds the nodes' sorted rows and
the search of their thresholds (``_splits``). A feature is a column
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
  thresholds are thereby pruned without being evaluated. A position's two
  children are solved larger first under the incumbent; the smaller one is
  solved even when the larger found no tree under it, with the bound left
  over plus the rows to the interval's farther end (ConTree's budget of the
  smaller child), so its loss is known well enough to prune the positions
  beyond it;
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
and its declarations (``order_stats``, ``python_rows``, ...) decide how a
sweep prices a split:

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
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, qsort
from libc.string cimport memcpy

from odtstudy.dl85.engine._boxcache cimport BOX_SOLVED, BoxCache, BoxEntry
from odtstudy.dl85.engine._numeric_pricing cimport PY_CHUNK, NumericPricing
from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._skeleton cimport (NO_ENTRY, SPLIT_EXACT, SPLIT_SEARCHED, Share,
                                      Skeleton, _check_max_depth, _tree_state,
                                      odt_spin_lock, odt_spin_unlock)
from odtstudy.dl85.engine._util cimport KeyIdx, _alloc, _cmp_keyidx

cnp.import_array()


ctypedef struct RootQueue:
    # the intervals of positions of one root feature still to search, on
    # threads: a thread out of root candidates takes the first half of the
    # busiest thread's (``_steal``); every field under ``Share.lock``
    int f               # the feature; -1: none (nothing to take)
    int P               # its positions
    int head, top       # the first in first out queue of intervals in ``stk``
    int32_t* stk
    double* low         # the owner's lower bounds on the children's losses at
                        # each position (left, then right at ``+ n + 2``)


@cython.final
cdef class NumericSearcher(NumericPricing):
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

    cdef readonly BoxCache cache
    cdef readonly long long n_d2, n_evals, n_interval_pruned
    cdef readonly long long n_seeds     # root seeds tried (``_try_seeds``)
    cdef readonly long long n_stolen    # root intervals taken from another thread
    cdef RootQueue rq

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
        _check_max_depth(max_depth)
        self.obj = objective
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
            if not objective.squared:
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
        self.unit = (self.error_stats and self.cls != NULL
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
            ent.left = self.counted_left[d] if f >= 0 else -1.0
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
                ent.left = self.counted_left[d] if f >= 0 else -1.0
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

    cdef bint _counted(self, int d, int f, int t, double* left) noexcept nogil:
        cdef Py_ssize_t e = self.cache.find(self.key + d * self.L, self.keylen[d], False)
        cdef BoxEntry* ent
        if e < 0:
            return False
        ent = &self.cache.entries[e]
        if ent.feature != f or ent.threshold != t or ent.left < 0.0:
            return False
        left[0] = ent.left
        return True

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
                self.counted_left[d] = errL if big_left else errR
                f_out[0] = f
                t_out[0] = pt[j]
                found = True
                self._trace_root(best[0], lb)
        return found

    cdef void* _root_queue(self) noexcept nogil:
        self.rq.f = -1
        self.rq.head = 0
        self.rq.top = 0
        self.rq.stk = self.stk
        self.rq.low = self.stkb
        return &self.rq

    cdef bint _steal(self, int* f_out) noexcept nogil:
        """At the root on threads, out of candidates: the first half of the
        intervals queued by the thread with the most (at least two), its
        bounds at every position of their feature (lower bounds for any
        thread) copied, become this thread's queue. Whether any were taken;
        their feature in ``f_out``."""
        cdef Share* sh = self.share
        cdef RootQueue* q = &self.rq
        cdef RootQueue* v
        cdef RootQueue* most = NULL
        cdef int qcap = self.n + 2, k, cnt, most_cnt = 1, i
        odt_spin_lock(&sh.lock)
        for k in range(sh.n_busy):
            v = <RootQueue*>sh.queues[k]
            if v == NULL or v == q or v.f < 0:
                continue
            cnt = (v.top - v.head + qcap) % qcap
            if cnt > most_cnt:
                most_cnt = cnt
                most = v
        if most != NULL:
            k = most_cnt // 2
            for i in range(k):
                q.stk[2 * i] = most.stk[2 * most.head]
                q.stk[2 * i + 1] = most.stk[2 * most.head + 1]
                most.head = (most.head + 1) % qcap
            memcpy(q.low, most.low, most.P * sizeof(double))
            memcpy(q.low + qcap, most.low + qcap, most.P * sizeof(double))
            q.f = most.f
            q.P = most.P
            q.head = 0
            q.top = k
            f_out[0] = q.f
            self.n_stolen += k
        odt_spin_unlock(&sh.lock)
        return most != NULL

    cdef int _splits(self, int d, Py_ssize_t e, double ub, double lb, double leaf,
                     double* best_out, int* f_out, int* t_out,
                     double* min_lb_out) noexcept nogil:
        """Every feature's depth-1 sweep (the depth-1 optimum, and the order
        of the features), then the thresholds of each feature searched as
        intervals of positions under the hierarchical upper bound."""
        cdef int r = self.max_depth - d, n = self.n, p = self.p, g, f, i, P, j
        cdef int lo, hi, top = 0, head = 0, bf = -1, bt = -1, seed, first, k, nb
        cdef int qcap = n + 2
        cdef int* hp
        cdef int* tp
        cdef RootQueue* q
        cdef bint big_left
        cdef double best, cur_ub, min_lb, v
        cdef double bL, bR, Lj, Rj, errL, errR, lL, lR, slack, min_before, other
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
        self.counted_left[d] = -1.0
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
        # the queue of intervals; at the root on threads it is shared
        # (``RootQueue``: its fields under the lock)
        q = &self.rq if d == 0 and self.share != NULL else NULL
        hp = &q.head if q != NULL else &head
        tp = &q.top if q != NULL else &top
        nb = self._breadth(d, p)
        i = -1
        while lb < cur_ub:
            i += 1
            if i < nb and order[i].key != INFINITY:
                if not self._claim(d, i + p if seeds else i, &cur_ub):
                    continue
                f = order[i].idx
                P = self._positions(d, f)
                if P == 0:
                    continue
                self._spend(d, i)
                seed = self._seed_position(d, f, P)
                # lowL / lowR: lower bounds on the losses of the two
                # children at each position, raised after every evaluation
                for j in range(P):
                    lowL[j] = 0.0
                    lowR[j] = 0.0
                first = 1
                # intervals of positions, first in first out (coarse to fine)
                if q != NULL:
                    odt_spin_lock(&self.share.lock)
                    q.f = f
                    q.P = P
                stk[0] = 0
                stk[1] = P - 1
                hp[0] = 0
                tp[0] = 1
                if q != NULL:
                    odt_spin_unlock(&self.share.lock)
            elif q != NULL and self._steal(&f):
                # out of root candidates: half of another thread's intervals
                P = self._positions(d, f)
                first = 0
                seed = -1
            else:
                break
            min_before = min_lb
            while True:
                if self._check_time():
                    break
                if q != NULL:
                    odt_spin_lock(&self.share.lock)
                    # the other threads' best root loss
                    if self.share.best < cur_ub:
                        cur_ub = self.share.best
                if hp[0] == tp[0]:
                    if q != NULL:
                        q.f = -1
                        odt_spin_unlock(&self.share.lock)
                    break
                lo = stk[2 * hp[0]]
                hi = stk[2 * hp[0] + 1]
                hp[0] = (hp[0] + 1) % qcap
                if q != NULL:
                    odt_spin_unlock(&self.share.lock)
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
                    # the other child even when this one found no tree under
                    # the bound: solved under the slack alone, its loss (or
                    # bound) prunes the positions on the other side of j,
                    # whose children contain it (wilt at depth 4: 5,022
                    # positions at remaining depth 3 -> 1,153)
                    other = cur_ub - Lj if cur_ub > Lj else 0.0
                    if other + slack > (bR if big_left else bL) and (
                        Lex or slack > 0.0
                    ):
                        self._make_child(d, f, pt[j], not big_left)
                        errR = self._solve(d + 1, other + slack, &lR)
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
                    self.counted_left[d] = Lj
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
                if q != NULL:
                    odt_spin_lock(&self.share.lock)
                if lo < j:
                    stk[2 * tp[0]] = lo
                    stk[2 * tp[0] + 1] = j - 1
                    tp[0] = (tp[0] + 1) % qcap
                if j < hi:
                    stk[2 * tp[0]] = j + 1
                    stk[2 * tp[0] + 1] = hi
                    tp[0] = (tp[0] + 1) % qcap
                if q != NULL:
                    odt_spin_unlock(&self.share.lock)
            if q != NULL:
                # cut short: the intervals left are not another's to take
                odt_spin_lock(&self.share.lock)
                q.f = -1
                odt_spin_unlock(&self.share.lock)
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
        if self.timed_out or self.restricted:
            # cut short: thresholds of other features not reached, whose
            # children have no bound without a search (no floor here: rows
            # rarely repeat on real features), so the node keeps its own
            min_lb_out[0] = lb
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
        cdef long long n_stolen = self.n_stolen
        for h in self.helpers:
            n_d2 += h.n_d2
            n_evals += h.n_evals
            n_pruned += h.n_interval_pruned
            n_seeds += h.n_seeds
            n_stolen += h.n_stolen
        return {
            "itemsets_explored": int(self.n_explored),
            "cache_hits": int(self.n_hits),
            "depth2_calls": int(n_d2),
            "thresholds_evaluated": int(n_evals),
            "thresholds_pruned": int(n_pruned),
            "root_seeds_tried": int(n_seeds),
            "root_intervals_taken": int(n_stolen),
            "timeout": bool(self.timed_out),
            **self.thread_stats(),
            **self.cache.stats(),
            "reconstitution_ms": float(self.reconstitution_ms),
            "reconstituted_nodes": int(self.n_reconstituted),
        }
