# cython: language_level=3
"""Leaf objectives of the DL8.5 engine: what a leaf costs, and which bounds hold.

Both searches take an :class:`Objective`: the 0/1 search (``_search.pyx``)
asks it for the loss of a cover taken as one leaf; the numeric search
(``_numeric.pyx``) sums the rows' statistics along its sweeps and prices
them with the objective's losses (inline for the C kinds, ``batch_loss`` for
the Python ones; order statistics and row lists as its kind says). Neither
knows which loss it minimises; they read the objective's declarations to
decide which of their refinements apply:

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
  Python losses make no such promise: no similarity bound for them, unless
  a "py_stats" objective (a ``LeafObjective``) gives its rows' ``worst``
  and declares ``monotone``;
* ``monotone``: a leaf's optimal loss never grows when rows are removed
  (true of every built-in kind; a Python loss declares it or not). The
  numeric search's interval bounds need it.

A new leaf objective written in Python is one class
(``_leaf_objective.LeafObjective``: per-row statistics, a batched loss of
their sums, a leaf value, its declarations), kind "py_stats" here.

Every leaf loss is non-negative and additive over leaves, so the purity
test (a leaf of loss 0 is optimal) holds for every objective.

Python losses run with the GIL re-acquired for the call only. Losses of
class supports are memoised in a C hash table (a vector priced once is
never priced again, and looking it up needs no GIL) and the depth-2 solver
prices all its candidate leaves in one batch: one entry into Python per
batch, for the vectors not seen before, and one call of the callback for
the whole batch when it declares ``batched`` (else one per vector). An
exception stops the search (``aborted``) and is re-raised by the searcher.
"""

import numpy as np

from odtstudy.dl85.engine._losses import _checked_loss

cimport numpy as cnp
from libc.math cimport INFINITY, NAN, isnan
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memcpy

from odtstudy.dl85.engine._util cimport _alloc, _cheapest_cost, _misclassified

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


cdef int _cmp_int32(const void* a, const void* b) noexcept nogil:
    return (<const int32_t*>a)[0] - (<const int32_t*>b)[0]


cdef inline uint64_t _hash(const double* key, int K) noexcept nogil:
    cdef uint64_t h = <uint64_t>1469598103934665603ULL, bits
    cdef int j
    for j in range(K):
        memcpy(&bits, &key[j], 8)
        h = (h ^ bits) * <uint64_t>0x100000001B3ULL
        h ^= h >> 29
    # full avalanche (MurmurHash3's finaliser): the table indexes by the low
    # bits, and whole-number doubles differ only in their high bits
    h ^= h >> 33
    h *= <uint64_t>0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= <uint64_t>0xC4CEB9FE1A85EC53ULL
    return h ^ (h >> 33)


#: Largest table of priced count vectors (doubles) kept densely.
DENSE_TABLE_MAX = 1 << 22

#: Most rows for which the absolute / pinball losses keep the byte tables of
#: y (256 doubles per 8 rows).
YBYTES_MAX_ROWS = 1 << 20


OBJECTIVES = {
    "error": OBJ_ERROR,
    "weighted": OBJ_WEIGHTED,
    "cost": OBJ_COST,
    "squared": OBJ_SQUARED,
    "absolute": OBJ_ABSOLUTE,
    "quantile": OBJ_QUANTILE,
    "py_class": OBJ_PY_CLASS,
    "py_rows": OBJ_PY_ROWS,
    "py_stats": OBJ_PY_STATS,
}


cdef class Objective:
    """The leaf loss of one DL8.5 search, and what the engine may use for it.

    Parameters
    ----------
    kind : {"error", "weighted", "cost", "squared", "absolute", "quantile", \
"py_class", "py_rows", "py_stats"}
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
        "py_class": ``f(class_supports) -> loss``; "py_rows": ``f(rows) -> loss``;
        "py_stats": ``f(summed_row_stats) -> loss``.
        A "py_class" callback whose ``batched`` attribute is true is called
        once per batch instead, with the batch's class supports as a 2-D
        float array (one leaf per row), and returns one loss per row.
    min_sup : int, default=1
    pair_stats : bool, default=True
        Allow the depth-2 solver when the kind supports it.
    row_stats : ndarray of float64, shape (n_rows, n_stats), optional
        "py_stats": each row's additive statistics; a leaf's loss is the
        callback's value of their sum over the leaf's rows.
    worst : ndarray of float64, shape (n_rows,), optional
        "py_stats": the largest loss each row can add to a leaf (the
        similarity bound holds then, for a ``monotone`` loss); None: no
        similarity bound.
    monotone : bool, optional
        Python kinds: the user declares that a leaf's optimal loss never
        grows when rows are removed (default False); built-in kinds are.
    bitsets : bool, default=True
        Build the 0/1 search's aids (byte tables of y, depth-2 statistics);
        the numeric search needs neither.
    loss_name : str, default="fast_error_function"
        The Python loss, as error messages name it.
    """

    def __cinit__(self, str kind, const uint64_t[:, ::1] cols, int n_rows, *,
                  int n_classes=1, y_class=None, weights=None, y=None, cost=None,
                  double quantile=0.5, object callback=None, int min_sup=1,
                  bint pair_stats=True, row_stats=None, worst=None,
                  object monotone=None, bint bitsets=True,
                  str loss_name="fast_error_function"):
        cdef Py_ssize_t i, c, p
        cdef int K = n_classes if n_classes > 0 else 1
        cdef double v
        if kind == "py_stats":
            if row_stats is None:
                raise ValueError("objective 'py_stats' needs row_stats")
            row_stats = np.ascontiguousarray(row_stats, dtype=np.float64)
            if row_stats.ndim != 2 or row_stats.shape[0] != n_rows:
                raise ValueError("row_stats must be (n_rows, n_stats)")
            K = max(int(row_stats.shape[1]), 1)
        if kind not in OBJECTIVES:
            raise ValueError(f"unknown objective {kind!r}")
        self.kind = OBJECTIVES[kind]
        self.error_counts = self.kind == OBJ_ERROR
        self.weighted_error = self.kind == OBJ_WEIGHTED
        self.cost_matrix = self.kind == OBJ_COST
        self.squared = self.kind == OBJ_SQUARED
        self.order_stats = self.kind == OBJ_ABSOLUTE or self.kind == OBJ_QUANTILE
        self.pinball = self.kind == OBJ_QUANTILE
        self.python_batches = self.kind == OBJ_PY_CLASS
        self.python_rows = self.kind == OBJ_PY_ROWS
        self.python_stats = self.kind == OBJ_PY_STATS
        self.n = n_rows
        self.K = K
        self._set_tau(quantile)
        self.callback = callback
        self.loss_name = loss_name
        self.batched = bool(getattr(callback, "batched", False))
        self.error = None
        self.aborted = False
        self.hcap = 0
        self.hcount = 0
        self.hbatch_cap = 0
        self.dense = NULL
        self.dstride = NULL
        self.class_based = self.kind in (OBJ_ERROR, OBJ_WEIGHTED, OBJ_COST, OBJ_PY_CLASS)
        self.python = self.kind in (OBJ_PY_CLASS, OBJ_PY_ROWS, OBJ_PY_STATS)
        self.monotone = (not self.python) or bool(monotone)
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
                if self.kind not in (OBJ_PY_ROWS, OBJ_PY_STATS):
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
        if self.kind == OBJ_PY_STATS:
            self.rstats = <double*>_alloc(n_rows * K * sizeof(double))
            self.sbuf = <double*>_alloc(K * sizeof(double))
            memcpy(self.rstats, cnp.PyArray_DATA(<cnp.ndarray>row_stats),
                   n_rows * K * sizeof(double))
        # the largest loss each row can add to a leaf (similarity bound)
        self.similarity = not self.python or (self.kind == OBJ_PY_STATS
                                              and worst is not None
                                              and self.monotone)
        self.worst_max = 0.0
        if self.kind == OBJ_PY_STATS and self.similarity:
            wv = np.ascontiguousarray(worst, dtype=np.float64)
            if wv.shape != (n_rows,) or not (np.isfinite(wv).all() and (wv >= 0).all()):
                raise ValueError("worst must hold one finite loss >= 0 per row")
            self.worst = <double*>_alloc(n_rows * sizeof(double))
            for i in range(n_rows):
                self.worst[i] = wv[i]
            self.worst_max = float(wv.max()) if n_rows else 0.0
        elif self.similarity and not self.counts:
            self.worst = <double*>_alloc(n_rows * sizeof(double))
            _fill_worst(self)
        elif self.similarity:
            for c in range(K):
                v = self._worst_class(<int32_t>c)
                if v > self.worst_max:
                    self.worst_max = v
        if self.kind == OBJ_PY_CLASS and self.counts:
            # the losses of count vectors, in a table indexed by the counts
            # when it is small (vector (q_0..q_K-1) at sum_c q_c * stride_c)
            totals = np.bincount(np.asarray(y_class, dtype=np.int64), minlength=K)
            size = 1
            for c in range(K):
                size *= int(totals[c]) + 1
            if size <= DENSE_TABLE_MAX:
                self.dstride = <Py_ssize_t*>_alloc(K * sizeof(Py_ssize_t))
                p = 1
                for c in range(K - 1, -1, -1):
                    self.dstride[c] = p
                    p *= int(totals[c]) + 1
                self.dense = <double*>_alloc(size * sizeof(double))
                for i in range(size):
                    self.dense[i] = NAN
        if (bitsets and self.kind in (OBJ_ABSOLUTE, OBJ_QUANTILE) and self.w == NULL
                and n_rows <= YBYTES_MAX_ROWS):
            self._ybytes()
        # depth-2 statistics: counts in the engine; weights / costs / squared
        # error in a WeightedCore; none for the order statistics and Python
        self.pair_stats = bitsets and pair_stats and (
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

    cdef void _ybytes(self):
        """Byte tables of y: the sum of y over any subset of the 8 rows of a
        byte of a word is one lookup (``ysum`` in ``_objective.pxd``)."""
        cdef Py_ssize_t W = (self.n + 63) // 64, base, mask, r
        cdef double* t
        self.ybytes = <double*>_alloc(W * 8 * 256 * sizeof(double))
        for base in range(0, W * 64, 8):
            t = self.ybytes + (base >> 3) * 256
            for mask in range(1, 256):
                r = base + odt_o_ctz(mask)
                t[mask] = t[mask & (mask - 1)] + (self.y[r] if r < self.n else 0.0)

    def __dealloc__(self):
        free(self.ybytes)
        free(self.w)
        free(self.y)
        free(self.ycls)
        free(self.cost)
        free(self.worst)
        free(self.rstats)
        free(self.sbuf)
        free(self.rows)
        free(self.hkeys)
        free(self.hvals)
        free(self.hslot)
        free(self.hmiss)
        free(self.dense)
        free(self.dstride)

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
        cdef int K = self.K
        cdef double best, total
        if self.kind == OBJ_ERROR or self.kind == OBJ_WEIGHTED:
            total = _misclassified(sup, K)
            return total if total > 0 else 0.0
        if self.kind == OBJ_COST:
            best = _cheapest_cost(self.cost, sup, K)
            return best if best > 0 else 0.0
        return self.class_loss_py(sup)

    cdef double class_loss_py(self, const double* sup) noexcept nogil:
        cdef double v
        self.batch_loss(sup, 1, &v)
        return v

    cdef bint _reserve(self, Py_ssize_t L) noexcept nogil:
        """Room for L more keys (load <= 1/2) and a batch of L vectors."""
        cdef Py_ssize_t cap, i, j, K = self.K
        cdef double* keys
        cdef double* vals
        cdef Py_ssize_t s
        if L > self.hbatch_cap:
            free(self.hslot)
            free(self.hmiss)
            self.hslot = <Py_ssize_t*>malloc(L * sizeof(Py_ssize_t))
            self.hmiss = <Py_ssize_t*>malloc(L * sizeof(Py_ssize_t))
            if self.hslot == NULL or self.hmiss == NULL:
                self.hbatch_cap = 0
                return False
            self.hbatch_cap = L
        if self.dense != NULL or 2 * (self.hcount + L) <= self.hcap:
            return True
        cap = 1024
        while cap < 2 * (self.hcount + L):
            cap *= 2
        keys = <double*>malloc(cap * K * sizeof(double))
        vals = <double*>malloc(cap * sizeof(double))
        if keys == NULL or vals == NULL:
            free(keys)
            free(vals)
            return False
        for i in range(cap):
            vals[i] = -1.0      # empty slot (losses are >= 0 or NaN)
        for i in range(self.hcap):
            if self.hvals[i] == -1.0:
                continue
            s = <Py_ssize_t>(_hash(self.hkeys + i * K, K) & <uint64_t>(cap - 1))
            while vals[s] != -1.0:
                s = (s + 1) & (cap - 1)
            for j in range(K):
                keys[s * K + j] = self.hkeys[i * K + j]
            vals[s] = self.hvals[i]
        free(self.hkeys)
        free(self.hvals)
        self.hkeys = keys
        self.hvals = vals
        self.hcap = cap
        return True

    cdef Py_ssize_t _slot(self, const double* key) noexcept nogil:
        """Slot of ``key``, inserted (value NaN: to price) when absent."""
        cdef Py_ssize_t K = self.K, mask = self.hcap - 1, j
        cdef Py_ssize_t s = <Py_ssize_t>(_hash(key, <int>K) & <uint64_t>mask)
        cdef double* k
        cdef bint same
        while self.hvals[s] != -1.0:
            k = self.hkeys + s * K
            same = True
            for j in range(K):
                if k[j] != key[j]:
                    same = False
                    break
            if same:
                return s
            s = (s + 1) & mask
        for j in range(K):
            self.hkeys[s * K + j] = key[j]
        self.hvals[s] = NAN
        self.hcount += 1
        return s

    cdef void batch_loss(self, const double* Q, int L, double* out) noexcept nogil:
        """Losses of L class-support vectors (rows of Q, K each) into out.

        Vectors priced before come from the hash table; the others are
        priced by one call into Python for the whole batch.
        """
        cdef Py_ssize_t i, s, c, nmiss = 0, K = self.K
        cdef double* vals
        if self.aborted or L <= 0:
            for i in range(L):
                out[i] = 0.0
            return
        if not self._reserve(L):
            self._fail("out of memory for the table of priced leaves")
            for i in range(L):
                out[i] = 0.0
            return
        self.n_lookups += L
        vals = self.dense if self.dense != NULL else self.hvals
        for i in range(L):
            if self.dense != NULL:
                s = 0
                for c in range(K):
                    s += (<Py_ssize_t>Q[i * K + c]) * self.dstride[c]
            else:
                s = self._slot(Q + i * K)
            self.hslot[i] = s
            if isnan(vals[s]):
                vals[s] = -2.0    # being priced in this batch
                self.hmiss[nmiss] = i
                nmiss += 1
        if nmiss:
            self._price(Q, nmiss)
        for i in range(L):
            out[i] = vals[self.hslot[i]] if not self.aborted else 0.0

    cdef void _price(self, const double* Q, Py_ssize_t nmiss) noexcept with gil:
        """Price the batch's new vectors (rows ``hmiss`` of Q) in Python."""
        cdef Py_ssize_t i, j, K = self.K
        cdef double[:, ::1] qv
        cdef double v
        cdef double[::1] vv
        cdef double* table = self.dense if self.dense != NULL else self.hvals
        try:
            arr = np.empty((nmiss, K), dtype=np.float64)
            qv = arr
            for i in range(nmiss):
                for j in range(K):
                    qv[i, j] = Q[self.hmiss[i] * K + j]
            fn = self.callback
            if self.batched:
                vals = np.asarray(fn(arr), dtype=np.float64).reshape(-1)
                if vals.shape[0] != nmiss:
                    raise ValueError(
                        f"a batched loss must return {nmiss} losses (one per "
                        f"row of its input), got {vals.shape[0]}")
            else:
                vals = np.array([float(fn(row)) for row in arr], dtype=np.float64)
            vv = np.ascontiguousarray(vals)
            for i in range(nmiss):
                v = vv[i]
                if not (0.0 <= v < INFINITY):
                    _checked_loss(v, self.loss_name)   # raises
                table[self.hslot[self.hmiss[i]]] = v
            self.n_priced += nmiss
        except BaseException as exc:  # re-raised by the searcher
            self.error = exc
            self.aborted = True
            for i in range(nmiss):
                table[self.hslot[self.hmiss[i]]] = 0.0

    cdef void _fail(self, str what) noexcept with gil:
        self.error = MemoryError(what)
        self.aborted = True

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
        if self.class_based:
            self.class_supports(cov, idx, nnz, sup)
            return self.class_loss(sup)
        cnt = self.gather(cov, idx, nnz)
        sup[0] = cnt
        if cnt == 0:
            return 0.0
        if self.kind == OBJ_PY_ROWS:
            return self.rows_loss_py(cnt)
        if self.kind == OBJ_PY_STATS:
            return self.stats_loss(self.rows, cnt)
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
        return self._pinball(cnt, self.order_tau)

    cdef double _pinball(self, int cnt, double tau) noexcept nogil:
        """Pinball loss (absolute error for ``OBJ_ABSOLUTE``) of the
        ``cnt`` gathered ``rows``, in target order, around their lower
        weighted tau-quantile."""
        cdef int i, r
        cdef double total = 0.0, cum = 0.0, q = 0.0, wr, diff, loss = 0.0
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

    cdef void quantile_leaves(self, const uint64_t* cov, const int32_t* idx, int nnz,
                              const double* taus, int K, double* out) noexcept nogil:
        """Pinball losses of a sparse cover as one leaf at K quantiles
        (``out[j]`` at ``taus[j]``): the rows gathered once."""
        cdef int j, cnt = self.gather(cov, idx, nnz)
        for j in range(K):
            out[j] = self._pinball(cnt, taus[j]) if cnt > 0 else 0.0

    cdef double stats_loss(self, const int32_t* rows, int cnt) noexcept nogil:
        """"py_stats": the loss of the summed statistics of ``rows[:cnt]``."""
        cdef int i, c, K = self.K
        cdef const double* r
        for c in range(K):
            self.sbuf[c] = 0.0
        for i in range(cnt):
            r = self.rstats + <Py_ssize_t>rows[i] * K
            for c in range(K):
                self.sbuf[c] += r[c]
        return self.class_loss_py(self.sbuf)

    cdef double rows_loss_of(self, const int32_t* rows, int cnt) noexcept nogil:
        """"py_rows": the loss of ``rows[:cnt]`` (the rows are copied to
        ``rows`` and sorted ascending first, as a cover's are)."""
        if rows != self.rows:
            memcpy(self.rows, rows, cnt * sizeof(int32_t))
        qsort(self.rows, cnt, sizeof(int32_t), _cmp_int32)
        return self.rows_loss_py(cnt)

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

    def select_tau(self, double tau):
        """Price the pinball loss at ``tau`` from now on (several quantiles
        in one search): each row's ``worst`` follows, since a row's largest
        pinball loss, ``max(tau (y - lo), (1 - tau) (hi - y))``, depends on
        tau, and a ``worst`` of another tau can lie below it."""
        self._set_tau(tau)
        if self.worst != NULL and not self.python:
            _fill_worst(self)

    cdef void _set_tau(self, double tau):
        """The quantile of the pinball loss, and the order statistics'
        quantile and weights (the absolute error's are fixed)."""
        self.tau = tau
        cdef bint absolute = self.kind == OBJ_ABSOLUTE
        self.order_tau = 0.5 if absolute else tau
        self.order_above = 1.0 if absolute else tau
        self.order_below = 1.0 if absolute else 1.0 - tau

    def row_worst(self):
        """Each row's ``worst`` loss (ndarray), or None (no similarity bound)."""
        if not self.similarity:
            return None
        if self.worst != NULL:
            return np.array(<double[:self.n]>self.worst)
        return np.array([self._worst_class(self.ycls[i]) for i in range(self.n)],
                        dtype=np.float64)

    def pop_error(self):
        """The exception a Python loss raised during the search (cleared), or None."""
        exc, self.error = self.error, None
        return exc

    def describe(self):
        """What the engine may use for this objective (for tests and docs)."""
        return {
            "class_based": bool(self.class_based),
            "counts": bool(self.counts),
            "pair_stats": bool(self.pair_stats),
            "similarity": bool(self.similarity),
            "python": bool(self.python),
            "monotone": bool(self.monotone),
            "error_counts": bool(self.error_counts),
            "weighted_error": bool(self.weighted_error),
            "cost_matrix": bool(self.cost_matrix),
            "squared": bool(self.squared),
            "order_stats": bool(self.order_stats),
            "pinball": bool(self.pinball),
            "python_batches": bool(self.python_batches),
            "python_rows": bool(self.python_rows),
            "python_stats": bool(self.python_stats),
        }

    def python_calls(self):
        """(vectors priced in Python, lookups of the priced-vector table)."""
        return int(self.n_priced), int(self.n_lookups)


cdef int _fill_worst(Objective obj) except -1:
    """Each row's largest loss as one row of a leaf (``obj.worst``) and
    their maximum (``obj.worst_max``): its class's worst prediction, or its
    largest distance to the range of ``y`` under the loss at ``obj.tau``."""
    cdef Py_ssize_t i
    cdef double lo = INFINITY, hi = -INFINITY, a, b, v
    obj.worst_max = 0.0
    if not obj.class_based:
        for i in range(obj.n):
            if obj.y[i] < lo:
                lo = obj.y[i]
            if obj.y[i] > hi:
                hi = obj.y[i]
    for i in range(obj.n):
        if obj.class_based:
            v = obj._worst_class(obj.ycls[i])
        else:
            a = obj.y[i] - lo
            b = hi - obj.y[i]
            if obj.kind == OBJ_SQUARED:
                v = a * a if a > b else b * b
            elif obj.kind == OBJ_ABSOLUTE:
                v = a if a > b else b
            else:
                a = obj.tau * a
                b = (1.0 - obj.tau) * b
                v = a if a > b else b
        v = v * (obj.w[i] if obj.w != NULL else 1.0)
        obj.worst[i] = v
        if v > obj.worst_max:
            obj.worst_max = v
    return 0


def make_objective(str kind, cols, int n_rows, *, y_class=None, n_classes=1,
                   weights=None, y=None, cost=None, quantile=0.5, callback=None,
                   min_sup=1, **declared):
    """An :class:`Objective` from the estimators' arrays (any dtypes): the
    class count applies with ``y_class`` only; ``declared``: the keyword
    arguments of :class:`Objective` past ``min_sup`` (``pair_stats``,
    ``row_stats``, ``worst``, ``monotone``, ``bitsets``, ``loss_name``)."""
    return Objective(
        kind,
        cols,
        n_rows,
        n_classes=n_classes if y_class is not None else 1,
        y_class=y_class,
        weights=None if weights is None else np.ascontiguousarray(weights, float),
        y=None if y is None else np.ascontiguousarray(y, dtype=np.float64),
        cost=None if cost is None else np.ascontiguousarray(cost, dtype=np.float64),
        quantile=float(quantile),
        callback=callback,
        min_sup=int(min_sup),
        **declared,
    )
