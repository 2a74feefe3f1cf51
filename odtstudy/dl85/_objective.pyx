# cython: language_level=3
"""Leaf objectives of the DL8.5 engine: what a leaf costs, and which bounds hold.

The search (``_search.pyx``) never knows which loss it minimises. It asks an
:class:`Objective` for the loss of a cover taken as one leaf, and reads the
objective's declarations to decide which of its refinements apply:

* ``class_based``: the loss is a function of the K class supports of the
  leaf (misclassification, cost matrix, Python ``f(class weights)``);
* ``counts``: those supports are unweighted row counts, so the engine
  computes them (and the depth-2 statistics) with popcount kernels;
* ``pair_stats``: the loss is a function of statistics that add up over
  rows, so subtrees of depth <= 2 are solved from item / item-pair
  statistics (``_weighted.WeightedCore`` or the engine's count kernels);
* ``similarity``: every row has a largest loss ``worst`` it can add to a
  leaf whose prediction is optimal for other rows (weights for the
  misclassification, ``max_p C[p, y]`` for a cost matrix, the largest
  distance to the range of ``y`` for the regression losses). Then an
  optimum of cover ``D_old`` bounds the one of ``D_new`` from below by
  ``opt(D_old) - worst(D_old minus D_new)``, MurTree's similarity bound.
  Python losses make no such promise: no similarity bound for them.

Every leaf loss is non-negative and additive over leaves, so the purity
test (a leaf of loss 0 is optimal) holds for every objective.

Python losses run with the GIL re-acquired for the call only. Losses of
class supports are memoised (a vector priced once is never priced again)
and the depth-2 solver prices all its candidate leaves in one batch; an
exception stops the search (``aborted``) and is re-raised by the searcher.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free
from libc.string cimport memcpy

from odtstudy.dl85._util cimport _alloc

cnp.import_array()

cdef extern from *:
    """
    static inline int odt_o_ctz(unsigned long long x) {
        return __builtin_ctzll(x);
    }
    static inline int odt_o_popcount(unsigned long long x) {
        return __builtin_popcountll(x);
    }
    """
    int odt_o_ctz(uint64_t x) noexcept nogil
    int odt_o_popcount(uint64_t x) noexcept nogil


OBJECTIVES = {
    "error": OBJ_ERROR,
    "weighted": OBJ_WEIGHTED,
    "cost": OBJ_COST,
    "squared": OBJ_SQUARED,
    "absolute": OBJ_ABSOLUTE,
    "quantile": OBJ_QUANTILE,
    "py_class": OBJ_PY_CLASS,
    "py_rows": OBJ_PY_ROWS,
}


cdef class Objective:
    """The leaf loss of one DL8.5 search, and what the engine may use for it.

    Parameters
    ----------
    kind : {"error", "weighted", "cost", "squared", "absolute", "quantile", \
"py_class", "py_rows"}
    cols : ndarray of uint64, shape (n_features, n_words)
        Packed feature columns (for the depth-2 statistics).
    n_rows : int
    n_classes : int, default=1
    y_class : ndarray of int32, shape (n_rows,), optional
        Class index of each row (class-based kinds).
    weights : ndarray of float64, shape (n_rows,), optional
        Row weights; None: every row weighs 1 (class supports are counts).
    y : ndarray of float64, shape (n_rows,), optional
        Regression target; sorted ascending for "absolute" and "quantile"
        (the caller permutes the rows).
    cost : ndarray of float64, shape (n_classes, n_classes), optional
        ``cost[p, c]``: the loss of predicting class p for a row of class c.
    quantile : float, default=0.5
    callback : callable, optional
        "py_class": ``f(class_supports) -> loss``; "py_rows": ``f(rows) -> loss``.
    min_sup : int, default=1
    pair_stats : bool, default=True
        Allow the depth-2 solver when the kind supports it.
    """

    def __cinit__(self, str kind, const uint64_t[:, ::1] cols, int n_rows, *,
                  int n_classes=1, y_class=None, weights=None, y=None, cost=None,
                  double quantile=0.5, object callback=None, int min_sup=1,
                  bint pair_stats=True):
        cdef Py_ssize_t i, c, p
        cdef int K = n_classes if n_classes > 0 else 1
        cdef double v, lo, hi, a, b
        if kind not in OBJECTIVES:
            raise ValueError(f"unknown objective {kind!r}")
        self.kind = OBJECTIVES[kind]
        self.n = n_rows
        self.K = K
        self.tau = quantile
        self.callback = callback
        self.error = None
        self.aborted = False
        self.memo = {}
        self.class_based = self.kind in (OBJ_ERROR, OBJ_WEIGHTED, OBJ_COST, OBJ_PY_CLASS)
        self.python = self.kind in (OBJ_PY_CLASS, OBJ_PY_ROWS)
        if self.python and callback is None:
            raise ValueError(f"objective {kind!r} needs a callback")
        if self.kind == OBJ_ERROR and weights is not None:
            raise ValueError("objective 'error' takes no weights ('weighted' does)")
        if self.kind == OBJ_WEIGHTED and weights is None:
            raise ValueError("objective 'weighted' needs weights")
        self.counts = self.class_based and weights is None
        self.rows = <int32_t*>_alloc(n_rows * sizeof(int32_t))
        self.ycls = <int32_t*>_alloc(n_rows * sizeof(int32_t))
        if y_class is not None:
            yc = np.ascontiguousarray(y_class, dtype=np.int32)
            if yc.shape[0] != n_rows:
                raise ValueError("y_class must have one entry per row")
            for i in range(n_rows):
                self.ycls[i] = yc[i]
        elif self.class_based:
            raise ValueError(f"objective {kind!r} needs y_class")
        if weights is not None:
            wv = np.ascontiguousarray(weights, dtype=np.float64)
            if wv.shape[0] != n_rows:
                raise ValueError("weights must have one entry per row")
            self.w = <double*>_alloc(n_rows * sizeof(double))
            for i in range(n_rows):
                self.w[i] = wv[i]
        if not self.class_based:
            if y is None:
                if self.kind != OBJ_PY_ROWS:
                    raise ValueError(f"objective {kind!r} needs y")
            else:
                yv = np.ascontiguousarray(y, dtype=np.float64)
                if yv.shape[0] != n_rows:
                    raise ValueError("y must have one entry per row")
                self.y = <double*>_alloc(n_rows * sizeof(double))
                for i in range(n_rows):
                    self.y[i] = yv[i]
        if self.kind == OBJ_COST:
            C = np.ascontiguousarray(cost, dtype=np.float64)
            if C.shape != (K, K):
                raise ValueError("cost must be a (n_classes, n_classes) matrix")
            self.cost = <double*>_alloc(K * K * sizeof(double))
            for p in range(K):
                for c in range(K):
                    self.cost[p * K + c] = C[p, c]
        # the largest loss each row can add to a leaf (similarity bound)
        self.similarity = not self.python
        self.worst_max = 0.0
        if self.similarity and not self.counts:
            self.worst = <double*>_alloc(n_rows * sizeof(double))
            lo = INFINITY
            hi = -INFINITY
            if not self.class_based:
                for i in range(n_rows):
                    if self.y[i] < lo:
                        lo = self.y[i]
                    if self.y[i] > hi:
                        hi = self.y[i]
            for i in range(n_rows):
                if self.class_based:
                    v = self._worst_class(self.ycls[i])
                else:
                    a = self.y[i] - lo
                    b = hi - self.y[i]
                    if self.kind == OBJ_SQUARED:
                        v = a * a if a > b else b * b
                    elif self.kind == OBJ_ABSOLUTE:
                        v = a if a > b else b
                    else:
                        a = quantile * a
                        b = (1.0 - quantile) * b
                        v = a if a > b else b
                v = v * (self.w[i] if self.w != NULL else 1.0)
                self.worst[i] = v
                if v > self.worst_max:
                    self.worst_max = v
        elif self.similarity:
            for c in range(K):
                v = self._worst_class(<int32_t>c)
                if v > self.worst_max:
                    self.worst_max = v
        # depth-2 statistics: counts in the engine; weights / costs / squared
        # error in a WeightedCore; none for the order statistics and Python
        self.pair_stats = pair_stats and (
            self.kind in (OBJ_ERROR, OBJ_WEIGHTED, OBJ_COST, OBJ_SQUARED)
            or (self.kind == OBJ_PY_CLASS and self.counts))
        if self.pair_stats and not self.counts:
            wts = (np.ascontiguousarray(weights, dtype=np.float64) if weights is not None
                   else np.ones(n_rows))
            if self.kind == OBJ_SQUARED:
                self.core = WeightedCore(cols, None, wts, n_rows, min_sup,
                                         y=np.ascontiguousarray(y, dtype=np.float64))
            else:
                onehot = np.zeros((K, (n_rows + 63) // 64), dtype=np.uint64)
                for i in range(n_rows):
                    onehot[self.ycls[i], i >> 6] |= np.uint64(1) << np.uint64(i & 63)
                self.core = WeightedCore(cols, onehot, wts, n_rows, min_sup)
                if self.kind == OBJ_COST:
                    self.core.set_cost(np.ascontiguousarray(cost, dtype=np.float64))

    def __dealloc__(self):
        free(self.w)
        free(self.y)
        free(self.ycls)
        free(self.cost)
        free(self.worst)
        free(self.rows)

    cdef double _worst_class(self, int32_t c):
        """Largest loss one row of class c adds to a leaf (unit weight)."""
        cdef int p
        cdef double v = 0.0
        if self.kind == OBJ_COST:
            for p in range(self.K):
                if self.cost[p * self.K + c] > v:
                    v = self.cost[p * self.K + c]
            return v
        return 1.0

    # ------------------------------------------------------- class losses
    cdef double class_loss(self, const double* sup) noexcept nogil:
        """Loss of a leaf from its class supports."""
        cdef int p, c, K = self.K
        cdef double best = 0.0, total = 0.0, v
        if self.kind == OBJ_ERROR or self.kind == OBJ_WEIGHTED:
            for c in range(K):
                total += sup[c]
                if sup[c] > best:
                    best = sup[c]
            total -= best
            return total if total > 0 else 0.0
        if self.kind == OBJ_COST:
            best = INFINITY
            for p in range(K):
                v = 0.0
                for c in range(K):
                    v += self.cost[p * K + c] * sup[c]
                if v < best:
                    best = v
            return best if best > 0 else 0.0
        return self.class_loss_py(sup)

    cdef double class_loss_py(self, const double* sup) noexcept with gil:
        cdef int c
        if self.aborted:
            return 0.0
        key = (<char*>sup)[:self.K * sizeof(double)]
        got = self.memo.get(key)
        if got is not None:
            return got
        try:
            arr = np.empty(self.K, dtype=np.float64)
            for c in range(self.K):
                arr[c] = sup[c]
            v = float(self.callback(arr))
        except BaseException as exc:  # re-raised by the searcher
            self.error = exc
            self.aborted = True
            return 0.0
        self.memo[key] = v
        return v

    cdef void batch_loss(self, const double* Q, int L, double* out) noexcept with gil:
        """Losses of L class-support vectors (rows of Q, K each) into out:
        one call from C for the batch; each distinct vector is priced once."""
        cdef int i, K = self.K
        cdef double[:, ::1] qv
        cdef double[::1] ov
        if self.aborted or L == 0:
            for i in range(L):
                out[i] = 0.0
            return
        try:
            arr = np.empty((L, K), dtype=np.float64)
            qv = arr
            memcpy(&qv[0, 0], Q, L * K * sizeof(double))
            keys = arr.view(np.dtype((np.void, K * 8))).ravel()
            uniq, first, inverse = np.unique(keys, return_index=True,
                                             return_inverse=True)
            memo = self.memo
            fn = self.callback
            vals = np.empty(len(uniq), dtype=np.float64)
            for j, key in enumerate(uniq.tolist()):
                got = memo.get(key)
                if got is None:
                    got = float(fn(arr[first[j]].copy()))
                    memo[key] = got
                vals[j] = got
            res = np.ascontiguousarray(vals[inverse.ravel()])
            ov = res
            memcpy(out, &ov[0], L * sizeof(double))
        except BaseException as exc:  # re-raised by the searcher
            self.error = exc
            self.aborted = True
            for i in range(L):
                out[i] = 0.0

    # ------------------------------------------------------------ leaves
    cdef double class_supports(self, const uint64_t* cov, const int32_t* idx,
                               int nnz, double* sup) noexcept nogil:
        """Weighted class supports of a sparse cover into sup; their sum."""
        cdef int c, j, base, r
        cdef uint64_t x
        cdef double total = 0.0
        for c in range(self.K):
            sup[c] = 0.0
        for j in range(nnz):
            x = cov[j]
            base = idx[j] << 6
            while x:
                r = base + odt_o_ctz(x)
                x &= x - 1
                sup[self.ycls[r]] += self.w[r] if self.w != NULL else 1.0
        for c in range(self.K):
            total += sup[c]
        return total

    cdef int gather(self, const uint64_t* cov, const int32_t* idx, int nnz) noexcept nogil:
        """The rows of a sparse cover into ``rows`` (ascending); how many."""
        cdef int j, base, cnt = 0
        cdef uint64_t x
        for j in range(nnz):
            x = cov[j]
            base = idx[j] << 6
            while x:
                self.rows[cnt] = base + odt_o_ctz(x)
                cnt += 1
                x &= x - 1
        return cnt

    cdef double rows_loss_py(self, int cnt) noexcept with gil:
        cdef int i
        cdef int64_t[::1] view
        if self.aborted:
            return 0.0
        try:
            rows = np.empty(cnt, dtype=np.int64)
            view = rows
            for i in range(cnt):
                view[i] = self.rows[i]
            return float(self.callback(rows))
        except BaseException as exc:  # re-raised by the searcher
            self.error = exc
            self.aborted = True
            return 0.0

    cdef double leaf(self, const uint64_t* cov, const int32_t* idx, int nnz,
                     double* sup) noexcept nogil:
        """Loss of a sparse cover as one leaf valued optimally.

        ``sup`` gets the class supports (class-based kinds) or the leaf's
        row count in ``sup[0]``.
        """
        cdef int i, r, cnt
        cdef double sw = 0.0, swy = 0.0, mean, diff, loss = 0.0, wr
        cdef double tau, total = 0.0, cum = 0.0, q = 0.0
        if self.class_based:
            self.class_supports(cov, idx, nnz, sup)
            return self.class_loss(sup)
        cnt = self.gather(cov, idx, nnz)
        sup[0] = cnt
        if cnt == 0:
            return 0.0
        if self.kind == OBJ_PY_ROWS:
            return self.rows_loss_py(cnt)
        if self.kind == OBJ_SQUARED:
            for i in range(cnt):
                r = self.rows[i]
                wr = self.w[r] if self.w != NULL else 1.0
                sw += wr
                swy += wr * self.y[r]
            if sw <= 0:
                return 0.0
            mean = swy / sw
            for i in range(cnt):
                r = self.rows[i]
                wr = self.w[r] if self.w != NULL else 1.0
                diff = self.y[r] - mean
                loss += wr * diff * diff
            return loss
        # pinball loss around the lower weighted tau-quantile (rows by y)
        tau = 0.5 if self.kind == OBJ_ABSOLUTE else self.tau
        for i in range(cnt):
            total += self.w[self.rows[i]] if self.w != NULL else 1.0
        if total <= 0:
            return 0.0
        for i in range(cnt):
            r = self.rows[i]
            wr = self.w[r] if self.w != NULL else 1.0
            cum += wr
            q = self.y[r]
            if cum >= tau * total and wr > 0:
                break
        for i in range(cnt):
            r = self.rows[i]
            wr = self.w[r] if self.w != NULL else 1.0
            diff = self.y[r] - q
            if self.kind == OBJ_ABSOLUTE:
                loss += wr * (diff if diff >= 0 else -diff)
            elif diff >= 0:
                loss += wr * tau * diff
            else:
                loss -= wr * (1.0 - tau) * diff
        return loss

    # -------------------------------------------------------- similarity
    cdef double sim_weight(self, const uint64_t* cov, const int32_t* idx,
                           int nnz) noexcept nogil:
        """Sum of ``worst`` over a sparse cover."""
        cdef int j, base
        cdef uint64_t x
        cdef double total = 0.0
        for j in range(nnz):
            x = cov[j]
            base = idx[j] << 6
            while x:
                total += self.worst[base + odt_o_ctz(x)]
                x &= x - 1
        return total

    cdef double sim_common(self, const uint64_t* dense, const uint64_t* cov,
                           const int32_t* idx, int nnz) noexcept nogil:
        """Sum of ``worst`` over the rows in both a dense bitset and a cover."""
        cdef int j, base
        cdef uint64_t x
        cdef double total = 0.0
        for j in range(nnz):
            x = dense[idx[j]] & cov[j]
            base = idx[j] << 6
            while x:
                total += self.worst[base + odt_o_ctz(x)]
                x &= x - 1
        return total

    def describe(self):
        """What the engine may use for this objective (for tests and docs)."""
        return {
            "class_based": bool(self.class_based),
            "counts": bool(self.counts),
            "pair_stats": bool(self.pair_stats),
            "similarity": bool(self.similarity),
            "python": bool(self.python),
        }
