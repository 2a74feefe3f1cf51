# cython: language_level=3
"""DL8.5 search for any additive leaf objective (thesis chapters 6 and 7).

The search is DL8.5's recursion over itemsets (Aglin, Nijssen & Schaus,
AAAI 2020): a trie cache of itemsets (``_cache.TrieCache``), a
hierarchical upper bound (a node looks for a tree whose loss is ``< ub``;
the first child gets ``ub - lb(second)``, the second ``ub - loss(first)``),
the infeasibility lower bound stored for itemsets searched without success,
dynamic order of the two children, purity, depth and minimum-support pruning
and an anytime time limit. It assumes only that the loss of a tree is the
sum of non-negative leaf losses, so it has none of the classification
refinements of ``_search.pyx`` (similarity bound, depth-2 solver), except
for the squared error: its leaf loss is a function of the statistics
``(w, w y, w y^2)``, which add up over rows like class weights, so subtrees
of depth <= 2 are solved from the statistics of item pairs
(``_weighted.WeightedCore``).

Covers are dense bitsets (one buffer per depth); a leaf's loss is computed
by iterating the set bits of its cover. Leaf objectives:

* ``"class"``: weighted misclassification (total weight minus the largest
  class weight);
* ``"squared"``: weighted squared error around the weighted mean;
* ``"absolute"``: weighted absolute error around a weighted median;
* ``"quantile"``: pinball loss around the weighted tau-quantile;
* ``"py_fast"``: a Python callable on the per-class weights of the leaf,
  returning ``(loss, label)``;
* ``"py_rows"``: a Python callable on the leaf's row indices, returning the
  loss.

The absolute and quantile objectives need the rows sorted by target (the
caller permutes them), so the rows of a cover come out in target order.
Python callables are called with the GIL re-acquired for the call only; an
exception they raise stops the search and is re-raised by :meth:`run`.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from odtstudy.dl85._cache cimport (
    ENTRY_SOLVED,
    FEATURE_LEAF,
    FEATURE_NONE,
    Entry,
    TrieCache,
)
from odtstudy.dl85._util cimport _alloc, _now
from odtstudy.dl85._weighted cimport WeightedCore

cnp.import_array()

cdef extern from *:
    """
    static inline int odt_g_popcount(unsigned long long x) {
        return __builtin_popcountll(x);
    }
    static inline int odt_g_ctz(unsigned long long x) {
        return __builtin_ctzll(x);
    }
    """
    int odt_g_popcount(uint64_t x) noexcept nogil
    int odt_g_ctz(uint64_t x) noexcept nogil


cdef enum:
    OBJ_CLASS = 0
    OBJ_SQUARED = 1
    OBJ_ABSOLUTE = 2
    OBJ_QUANTILE = 3
    OBJ_PY_FAST = 4
    OBJ_PY_ROWS = 5

OBJECTIVES = {
    "class": OBJ_CLASS,
    "squared": OBJ_SQUARED,
    "absolute": OBJ_ABSOLUTE,
    "quantile": OBJ_QUANTILE,
    "py_fast": OBJ_PY_FAST,
    "py_rows": OBJ_PY_ROWS,
}


cdef class GeneralSearcher:
    """One DL8.5 search for an additive leaf objective over 0/1 data.

    Parameters
    ----------
    cols : ndarray of uint64, shape (n_features, n_words)
        Packed feature columns (``_bitset.pack_columns``).
    n_rows, max_depth, min_sup : int
    objective : {"class", "squared", "absolute", "quantile", "py_fast", "py_rows"}
    weights : ndarray of float64, shape (n_rows,)
        Row weights (ones for an unweighted fit).
    y_class : ndarray of int32, shape (n_rows,)
        Class index of each row (classification objectives; zeros otherwise).
    n_classes : int
    y_value : ndarray of float64, shape (n_rows,)
        Target (regression objectives); sorted ascending for "absolute" and
        "quantile".
    quantile : float
        The tau of the pinball loss.
    callback : callable or None
        ``f(class_weights) -> (loss, label)`` for "py_fast",
        ``f(rows) -> loss`` for "py_rows".
    time_limit : float
        Seconds; ``<= 0`` means no limit.
    use_depth2_solver : bool
        Squared error only: solve subtrees of depth <= 2 from the sufficient
        statistics of item pairs (``_weighted.WeightedCore``), as the
        classification core does from class weights.
    """

    cdef int n, m, W, K, max_depth, min_sup, objective
    cdef double tau, eps, time_limit, deadline
    cdef uint64_t* cols
    cdef uint64_t* cov
    cdef int32_t* items
    cdef int32_t* cand
    cdef double* w
    cdef double* yv
    cdef int32_t* yc
    cdef int32_t* rows        # scratch: the rows of one cover, ascending
    cdef double* sup
    cdef object callback
    cdef object error
    cdef readonly bint timed_out, aborted
    cdef readonly TrieCache cache
    cdef readonly long long n_explored, n_hits, n_leaf_evals, n_d2
    # squared error: depth-2 solver from pair statistics (``_weighted.pyx``)
    cdef WeightedCore d2core
    cdef int32_t* ident       # word indices 0..W-1 (covers here are dense)
    cdef long long* cover_version
    cdef long long n_versions
    cdef int32_t* split_f
    cdef int32_t* split_v

    def __cinit__(self, const uint64_t[:, ::1] cols, int n_rows, int max_depth,
                  int min_sup, str objective, const double[::1] weights,
                  const int32_t[::1] y_class, int n_classes,
                  const double[::1] y_value, double quantile=0.5,
                  object callback=None, double time_limit=0.0,
                  bint use_depth2_solver=True):
        cdef Py_ssize_t m = cols.shape[0], W = (n_rows + 63) // 64, D
        if W == 0:
            raise ValueError("no rows")
        if m > 0 and cols.shape[1] != W:
            raise ValueError("cols do not hold n_rows bits")
        if weights.shape[0] != n_rows or y_class.shape[0] != n_rows:
            raise ValueError("weights / y_class must have one entry per row")
        if y_value.shape[0] != n_rows:
            raise ValueError("y_value must have one entry per row")
        if max_depth < 0 or max_depth > 60:
            raise ValueError("max_depth must be in [0, 60]")
        self.n = n_rows
        self.m = <int>m
        self.W = <int>W
        self.K = n_classes if n_classes > 0 else 1
        self.max_depth = max_depth
        self.min_sup = min_sup if min_sup > 1 else 1
        self.objective = OBJECTIVES[objective]
        self.tau = quantile
        self.callback = callback
        self.error = None
        if self.objective in (OBJ_PY_FAST, OBJ_PY_ROWS) and callback is None:
            raise ValueError(f"objective {objective!r} needs a callback")
        self.time_limit = time_limit
        self.cache = TrieCache(max_depth)
        D = max_depth + 1
        self.cols = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        if m > 0:
            memcpy(self.cols, &cols[0, 0], m * W * sizeof(uint64_t))
        self.cov = <uint64_t*>_alloc(D * W * sizeof(uint64_t))
        self.items = <int32_t*>_alloc(D * D * sizeof(int32_t))
        self.cand = <int32_t*>_alloc(D * (m + 1) * sizeof(int32_t))
        self.w = <double*>_alloc(n_rows * sizeof(double))
        self.rows = <int32_t*>_alloc(n_rows * sizeof(int32_t))
        self.yv = <double*>_alloc(n_rows * sizeof(double))
        self.yc = <int32_t*>_alloc(n_rows * sizeof(int32_t))
        self.sup = <double*>_alloc(self.K * sizeof(double))
        memcpy(self.w, &weights[0], n_rows * sizeof(double))
        memcpy(self.yv, &y_value[0], n_rows * sizeof(double))
        memcpy(self.yc, &y_class[0], n_rows * sizeof(int32_t))
        cdef int k
        for k in range(W):
            self.cov[k] = ~(<uint64_t>0)
        if n_rows % 64:
            self.cov[W - 1] = ((<uint64_t>1) << (n_rows % 64)) - 1
        self.eps = 0.0
        self.ident = <int32_t*>_alloc(W * sizeof(int32_t))
        for k in range(W):
            self.ident[k] = k
        self.cover_version = <long long*>_alloc(D * sizeof(long long))
        self.split_f = <int32_t*>_alloc(D * sizeof(int32_t))
        self.split_v = <int32_t*>_alloc(D * sizeof(int32_t))
        self.n_versions = 1
        self.cover_version[0] = 1
        if use_depth2_solver and self.objective == OBJ_SQUARED and max_depth >= 1:
            self.d2core = WeightedCore(cols, None, weights, n_rows, min_sup,
                                       y=y_value)
            if max_depth >= 3:
                self.d2core.enable_sibling_counts()

    def __dealloc__(self):
        free(self.cols)
        free(self.cov)
        free(self.ident)
        free(self.cover_version)
        free(self.split_f)
        free(self.split_v)
        free(self.items)
        free(self.cand)
        free(self.w)
        free(self.rows)
        free(self.yv)
        free(self.yc)
        free(self.sup)

    # ------------------------------------------------------ leaf losses
    cdef inline int _count(self, int d) noexcept nogil:
        cdef uint64_t* c = self.cov + d * self.W
        cdef int k, cnt = 0
        for k in range(self.W):
            cnt += odt_g_popcount(c[k])
        return cnt

    cdef double _class_weights(self, int d) noexcept nogil:
        """Fill ``sup`` with the class weights of the depth-d cover."""
        cdef int i, r, n = self._gather(d)
        cdef double total = 0.0
        for i in range(self.K):
            self.sup[i] = 0.0
        for i in range(n):
            r = self.rows[i]
            self.sup[self.yc[r]] += self.w[r]
        for i in range(self.K):
            total += self.sup[i]
        return total

    cdef int _gather(self, int d) noexcept nogil:
        """List the rows of the depth-d cover into ``rows``; returns how many."""
        cdef uint64_t* c = self.cov + d * self.W
        cdef uint64_t x
        cdef int k, base, n = 0
        for k in range(self.W):
            x = c[k]
            base = k << 6
            while x:
                self.rows[n] = base + odt_g_ctz(x)
                n += 1
                x &= x - 1
        return n

    cdef double _squared(self, int d) noexcept nogil:
        cdef int i, r, n = self._gather(d)
        cdef double sw = 0.0, swy = 0.0, mean, diff, loss = 0.0
        for i in range(n):
            r = self.rows[i]
            sw += self.w[r]
            swy += self.w[r] * self.yv[r]
        if sw <= 0:
            return 0.0
        mean = swy / sw
        for i in range(n):
            r = self.rows[i]
            diff = self.yv[r] - mean
            loss += self.w[r] * diff * diff
        return loss

    cdef double _pinball(self, int d, bint absolute) noexcept nogil:
        """Pinball loss around the lower weighted tau-quantile (rows sorted by y).

        ``absolute``: the absolute error around the lower weighted median.
        """
        cdef int i, r, n = self._gather(d)
        cdef double tau = 0.5 if absolute else self.tau
        cdef double total = 0.0, cum = 0.0, q = 0.0, loss = 0.0, diff
        for i in range(n):
            total += self.w[self.rows[i]]
        if total <= 0:
            return 0.0
        for i in range(n):
            r = self.rows[i]
            cum += self.w[r]
            q = self.yv[r]
            if cum >= tau * total and self.w[r] > 0:
                break
        for i in range(n):
            r = self.rows[i]
            diff = self.yv[r] - q
            if absolute:
                loss += self.w[r] * (diff if diff >= 0 else -diff)
            elif diff >= 0:
                loss += self.w[r] * tau * diff
            else:
                loss -= self.w[r] * (1.0 - tau) * diff
        return loss

    cdef double _call_fast(self) noexcept with gil:
        cdef int k
        cdef double[::1] view
        if self.aborted:
            return 0.0
        try:
            arr = np.empty(self.K, dtype=np.float64)
            view = arr
            for k in range(self.K):
                view[k] = self.sup[k]
            out = self.callback(arr)
            return float(out[0])
        except BaseException as exc:  # re-raised by run()
            self.error = exc
            self.aborted = True
            return 0.0

    cdef object _cover_rows(self, int d):
        """The row indices of the depth-d cover, ascending."""
        cdef int i, n = self._gather(d)
        rows = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] view = rows
        for i in range(n):
            view[i] = self.rows[i]
        return rows

    cdef double _call_rows(self, int d) noexcept with gil:
        if self.aborted:
            return 0.0
        try:
            return float(self.callback(self._cover_rows(d)))
        except BaseException as exc:  # re-raised by run()
            self.error = exc
            self.aborted = True
            return 0.0

    cdef double _leaf(self, int d, int cnt) noexcept nogil:
        """Loss of the depth-d cover as one leaf valued optimally."""
        cdef double total, best = 0.0
        cdef int k
        self.n_leaf_evals += 1
        if cnt == 0:
            return 0.0
        if self.objective == OBJ_CLASS:
            total = self._class_weights(d)
            for k in range(self.K):
                if self.sup[k] > best:
                    best = self.sup[k]
            return total - best
        if self.objective == OBJ_SQUARED:
            return self._squared(d)
        if self.objective == OBJ_ABSOLUTE:
            return self._pinball(d, True)
        if self.objective == OBJ_QUANTILE:
            return self._pinball(d, False)
        if self.objective == OBJ_PY_FAST:
            self._class_weights(d)
            return self._call_fast()
        return self._call_rows(d)

    # ------------------------------------------------------------ covers
    cdef void _make_child(self, int d, int f, int v) noexcept nogil:
        """Cover and itemset of child ``I + (f, v)`` into depth d + 1."""
        cdef int W = self.W, k, i, L = self.max_depth + 1
        cdef uint64_t* src = self.cov + d * W
        cdef uint64_t* dst = self.cov + (d + 1) * W
        cdef uint64_t* col = self.cols + f * W
        cdef uint64_t flip = 0 if v else ~(<uint64_t>0)
        for k in range(W):
            dst[k] = src[k] & (col[k] ^ flip)
        self.n_versions += 1
        self.cover_version[d + 1] = self.n_versions
        self.split_f[d + 1] = f
        self.split_v[d + 1] = v
        cdef int32_t item = 2 * f + v
        cdef int32_t* a = self.items + d * L
        cdef int32_t* b = self.items + (d + 1) * L
        i = 0
        while i < d and a[i] < item:
            b[i] = a[i]
            i += 1
        b[i] = item
        while i < d:
            b[i + 1] = a[i]
            i += 1

    cdef Py_ssize_t _child_entry(self, int d, int f, int v) noexcept nogil:
        cdef int32_t buf[64]
        cdef int L = self.max_depth + 1, i = 0
        cdef int32_t item = 2 * f + v
        cdef int32_t* src = self.items + d * L
        while i < d and src[i] < item:
            buf[i] = src[i]
            i += 1
        buf[i] = item
        while i < d:
            buf[i + 1] = src[i]
            i += 1
        return self.cache.find(buf, d + 1, False)

    cdef int _candidates(self, int d, int cnt) noexcept nogil:
        """Features whose two branches both hold >= min_sup rows, into cand[d]."""
        cdef int W = self.W, k, f, nc = 0, c1
        cdef uint64_t* c = self.cov + d * W
        cdef uint64_t* col
        cdef int32_t* out = self.cand + d * (self.m + 1)
        for f in range(self.m):
            col = self.cols + f * W
            c1 = 0
            for k in range(W):
                c1 += odt_g_popcount(c[k] & col[k])
            if c1 < self.min_sup or cnt - c1 < self.min_sup:
                continue
            out[nc] = f
            nc += 1
        return nc

    # ------------------------------------------------------------ search
    cdef double _depth2(self, int d, int r, double leaf, int* out_f) noexcept nogil:
        """Exact optimum (loss, root feature) of a depth-r (<= 2) subtree."""
        cdef int W = self.W
        cdef double best
        if r == 2 and d >= 1:
            best = self.d2core.depth2_child(
                self.cov + (d - 1) * W, self.ident, W, self.cover_version[d - 1],
                self.split_f[d], self.split_v[d], self.cov + d * W, self.ident, W,
                leaf, self.eps, out_f)
        else:
            best = self.d2core.depth2(self.cov + d * W, self.ident, W, r, leaf,
                                      self.eps, out_f)
        if out_f[0] < 0:
            out_f[0] = FEATURE_LEAF
        return best

    cdef inline void _store_solved(self, Py_ssize_t e, double err, int f) noexcept nogil:
        cdef Entry* ent = &self.cache.entries[e]
        ent.error = err
        ent.lb = err
        ent.feature = f
        ent.flags = ent.flags | ENTRY_SOLVED

    cdef inline bint _stop(self) noexcept nogil:
        if self.timed_out or self.aborted:
            return True
        if self.time_limit > 0 and _now() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    cdef double _child_value(self, Py_ssize_t e) noexcept nogil:
        if e < 0:
            return 0.0
        cdef Entry* ent = &self.cache.entries[e]
        if ent.flags & ENTRY_SOLVED:
            return ent.error
        return ent.lb

    cdef double _solve(self, int d, Py_ssize_t e, double ub, double* out_lb) noexcept nogil:
        """Best loss < ub of the itemset at depth d (entry e), or INFINITY.

        May return an exact optimum >= ub (then ``out_lb`` equals it). When
        no tree < ub exists, returns INFINITY and a lower bound in out_lb.
        """
        cdef Entry* ent = &self.cache.entries[e]
        cdef double lb, leaf, best, cur_ub, min_lb, v0, v1, lbs
        cdef double b1, b2, err1, err2, l1, l2, newlb
        cdef int r = self.max_depth - d, f, nc, i, first, bestf, cnt
        cdef Py_ssize_t e0, e1, ef, es
        if ent.flags & ENTRY_SOLVED:
            self.n_hits += 1
            out_lb[0] = ent.error
            return ent.error
        lb = ent.lb
        out_lb[0] = lb
        if lb >= ub:
            self.n_hits += 1
            return INFINITY
        cnt = self._count(d)
        leaf = self._leaf(d, cnt)
        if self._stop():
            # not searched: answer with the leaf (anytime)
            if leaf < ent.error:
                ent.error = leaf
                ent.feature = FEATURE_LEAF
            return ent.error
        self.n_explored += 1
        if leaf <= self.eps or r == 0 or cnt < 2 * self.min_sup or lb >= leaf:
            self._store_solved(e, leaf, FEATURE_LEAF)
            out_lb[0] = leaf
            return leaf
        if self.d2core is not None and r <= 2:
            self.n_d2 += 1
            best = self._depth2(d, r, leaf, &f)
            self._store_solved(e, best, f)
            out_lb[0] = best
            return best

        nc = self._candidates(d, cnt)
        if leaf < ub:
            best = leaf
            bestf = FEATURE_LEAF
            cur_ub = leaf
        else:
            best = INFINITY
            bestf = FEATURE_NONE
            cur_ub = ub
        min_lb = leaf
        for i in range(nc):
            if lb >= cur_ub:
                if lb < min_lb:
                    min_lb = lb
                break
            f = self.cand[d * (self.m + 1) + i]
            e0 = self._child_entry(d, f, 0)
            e1 = self._child_entry(d, f, 1)
            v0 = self._child_value(e0)
            v1 = self._child_value(e1)
            if v0 + v1 >= cur_ub:
                if v0 + v1 < min_lb:
                    min_lb = v0 + v1
                continue
            # larger lower bound first (ties: the left branch, not-f)
            first = 1 if v1 > v0 else 0
            lbs = v0 if first else v1
            self._make_child(d, f, first)
            ef = self.cache.find(self.items + (d + 1) * (self.max_depth + 1), d + 1, True)
            if ef < 0:
                self.timed_out = True
                break
            b1 = cur_ub - lbs
            err1 = self._solve(d + 1, ef, b1, &l1)
            if self.timed_out or self.aborted:
                break
            if not (err1 < b1):
                if l1 + lbs < min_lb:
                    min_lb = l1 + lbs
                continue
            self._make_child(d, f, 1 - first)
            es = self.cache.find(self.items + (d + 1) * (self.max_depth + 1), d + 1, True)
            if es < 0:
                self.timed_out = True
                break
            b2 = cur_ub - err1
            err2 = self._solve(d + 1, es, b2, &l2)
            if err1 + err2 < cur_ub:
                best = err1 + err2
                bestf = f
                cur_ub = best
            elif not (self.timed_out or self.aborted) and err1 + l2 < min_lb:
                min_lb = err1 + l2
            if self.timed_out or self.aborted:
                break

        ent = &self.cache.entries[e]
        if self.timed_out or self.aborted:
            if best < ent.error:
                ent.error = best
                ent.feature = bestf
            out_lb[0] = lb
            return ent.error
        if best < ub:
            self._store_solved(e, best, bestf)
            out_lb[0] = best
            return best
        newlb = lb
        if ub > newlb:
            newlb = ub
        if min_lb > newlb:
            newlb = min_lb
        if newlb >= leaf:
            # no split beats the leaf: the leaf is optimal
            self._store_solved(e, leaf, FEATURE_LEAF)
            out_lb[0] = leaf
            return leaf
        if newlb > ent.lb:
            ent.lb = newlb
        out_lb[0] = newlb
        return INFINITY

    def root_leaf_loss(self):
        """Loss of the whole training set as a single leaf."""
        cdef double v
        with nogil:
            v = self._leaf(0, self._count(0))
        if self.aborted:
            err, self.error = self.error, None
            raise err
        return v

    def run(self, double max_error=INFINITY, double purity_tol=0.0):
        """Search from the root; returns ``(loss, lower_bound)``.

        ``loss`` is ``inf`` when no tree has loss < ``max_error``. A leaf
        whose loss is ``<= purity_tol`` is not split further.
        """
        cdef double err, lb
        cdef Py_ssize_t root
        self.eps = purity_tol
        root = self.cache.find(self.items, 0, True)
        if root < 0:
            raise MemoryError("cache allocation failed")
        self.deadline = _now() + self.time_limit
        with nogil:
            err = self._solve(0, root, max_error, &lb)
        if self.aborted:
            exc, self.error = self.error, None
            raise exc
        if self.cache.out_of_memory:
            raise MemoryError("the DL8.5 cache ran out of memory")
        if err >= max_error and not self.timed_out:
            # an exact optimum at or above the bound (depth-2 solver): none
            # below it exists
            lb = err if err < INFINITY else lb
            err = INFINITY
        return err, lb

    # --------------------------------------------------- reconstruction
    def tree_nodes(self):
        """The best tree found, in preorder.

        Returns
        -------
        list of dict
            One dict per node: ``feature`` (-1 for a leaf), ``left``,
            ``right`` (node ids, -1 for a leaf), ``rows`` (row indices of
            the node's cover, int64 array) and ``loss`` (the node's loss as
            one leaf).
        """
        nodes = []
        self._rebuild(0, nodes)
        if self.aborted:
            exc, self.error = self.error, None
            raise exc
        return nodes

    cdef int _rebuild(self, int d, list nodes) except -1:
        cdef Py_ssize_t e = self.cache.find(self.items + d * (self.max_depth + 1), d, False)
        cdef int f = FEATURE_LEAF, node, cnt = self._count(d)
        cdef Entry* ent
        cdef double leaf = self._leaf(d, cnt)
        if e >= 0 and d < self.max_depth:
            ent = &self.cache.entries[e]
            if ent.error < INFINITY and ent.feature >= 0:
                f = ent.feature
        elif e < 0 and self.d2core is not None and 1 <= self.max_depth - d <= 2:
            # below a node solved by the depth-2 solver: solve it again
            if not (leaf <= self.eps or cnt < 2 * self.min_sup):
                self._depth2(d, self.max_depth - d, leaf, &f)
        rows = self._cover_rows(d)
        node = len(nodes)
        nodes.append({"feature": f, "left": -1, "right": -1, "rows": rows,
                      "loss": leaf})
        if f < 0:
            return node
        self._make_child(d, f, 0)
        nodes[node]["left"] = self._rebuild(d + 1, nodes)
        self._make_child(d, f, 1)
        nodes[node]["right"] = self._rebuild(d + 1, nodes)
        return node

    def stats(self):
        """Search counters."""
        return {
            "cache_entries": int(self.cache.n_entries),
            "cache_bytes": int(self.cache.nbytes()),
            "itemsets_explored": int(self.n_explored),
            "cache_hits": int(self.n_hits),
            "leaf_evaluations": int(self.n_leaf_evals),
            "depth2_calls": int(self.n_d2),
            "timeout": bool(self.timed_out),
        }
