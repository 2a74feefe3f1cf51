# cython: language_level=3
"""The DL8.5 search: one recursion for every leaf objective (C-level Cython).

Responsibility: search the trees of bounded depth for the one of least
total leaf loss, given a leaf objective (``_objective.pyx``) that prices
covers and declares which bounds hold. This module owns the recursion, the
sparse covers it walks, the lower bounds (infeasibility, similarity) and
the depth-2 solvers over class counts; it does not know what a leaf costs.
The ISA kernels it calls are in ``_kernels.h``, the cache in ``_cache.pyx``,
the weighted pair statistics in ``_weighted.pyx``. No Python objects in the
hot loop (a Python objective calls back with the GIL, batched).

Data layout
-----------
Rows are bits of 64-bit words. ``cols[f * W + k]`` holds the rows with
``x[f] = 1``; ``cmask[c * W + k]`` the rows of class ``c``. The cover of the
node at depth ``d`` is a *sparse* bitset kept in a per-depth buffer: the
non-zero words ``cov[d * W + j]`` and their word indices ``cidx[d * W + j]``
for ``j < cnnz[d]``. A child's cover is the parent's non-zero words ANDed
with the feature column (or its complement), so covers only shrink and the
buffers of depths ``> d`` are reused (undone) when the search backtracks: no
allocation happens per node.

Search
------
``_solve`` is DL8.5's recursion (Aglin, Nijssen & Schaus, AAAI 2020) over
itemsets with the MurTree refinements (Demirović et al., JMLR 2022) listed
in the package's methods notes:

* hierarchical upper bound: a node looks for a tree with error ``< ub``;
  the first child gets ``ub - lb(second)``, the second ``ub - err(first)``;
* cache of itemsets (``_cache.pyx``) with the best feature, the best error
  and a lower bound; nodes searched without a solution keep the *strong*
  infeasibility bound ``max(lb, ub, min_f LB_f)``;
* purity, depth and minimum-support pruning;
* a specialised depth-2 solver from counts of items and item pairs;
* a similarity lower bound (two remembered covers per depth, min_sup = 1);
* dynamic order of the two children (larger lower bound first);
* an anytime time limit (checked at every node, through the vDSO clock);
  the root's incumbent and bound are traced when they improve
  (:meth:`Searcher.anytime`), never inside the recursion's loops.

Objectives and memory
---------------------
* Losses, bounds and cache values are doubles. A node's leaf loss comes
  from the objective (``_leaf``): class counts by popcount when the
  objective is a function of unweighted class supports (misclassification,
  cost matrix, Python ``f(class supports)``), otherwise the objective's own
  pass over the cover's rows. The depth-2 solver runs on class counts here
  (``_d2_pairs*``, ``_d2_cost_binary``, ``_d2_objective``, which prices
  all candidate leaves in one batch) or on the objective's
  ``_weighted.WeightedCore`` (weights, cost matrices, squared error); it is
  used only when the objective declares ``pair_stats``, and the similarity
  bound only when it declares ``similarity`` (each row's largest loss,
  ``worst``, replaces the row count). Every cover rewrite gets a new
  version (``cover_version``) and remembers the split that made it, so the
  weighted depth-2 solver of a child can reuse its parent's pair weights
  (parent minus sibling).
* The cache (``_cache.pyx``) may be bounded (``max_cache_size``): wipes
  free entries off the paths under evaluation, and the optimal tree is
  reconstituted after the search by re-solving wiped nodes
  (``_reconstitute_tree``).

The two-class depth-2 kernels (``_kernels.h``) are compiled for several
instruction sets and chosen at import (``kernel_isa()``; ``set_kernel_isa``
for tests). The leaf objective is a plug-in (``_objective.pyx``): the
recursion, covers, similarity bound and depth-2 solvers here serve every
objective, and use what the objective declares valid for it.
"""

import numpy as np

cimport numpy as cnp
from libc.math cimport INFINITY, log
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, qsort
from libc.string cimport memcpy

from odtstudy.dl85._cache cimport (
    ENTRY_SOLVED,
    FEATURE_LEAF,
    FEATURE_NONE,
    Cache,
    Entry,
    HashCache,
    TrieCache,
)
from odtstudy.dl85._kernels cimport (
    odt_compact,
    odt_kernel_isa,
    odt_kernels_init,
    odt_kernels_set,
    odt_pair_counts,
    odt_popcount,
    odt_quadrants,
)
from odtstudy.dl85._objective cimport (
    OBJ_COST,
    OBJ_ERROR,
    OBJ_ABSOLUTE,
    OBJ_PY_CLASS,
    OBJ_QUANTILE,
    OBJ_WEIGHTED,
    Objective,
)
from odtstudy.dl85._objective import Objective as _Objective
from odtstudy.dl85._util cimport _alloc, _now
from odtstudy.dl85._weighted cimport WeightedCore

cnp.import_array()
odt_kernels_init()

KERNEL_LEVELS = {"baseline": 0, "popcnt": 1, "avx2": 2, "avx512": 3}


def kernel_isa():
    """Instruction set of the depth-2 kernels in use."""
    return odt_kernel_isa.decode()


def set_kernel_isa(name):
    """Use the depth-2 kernels compiled for ``name`` (tests, benchmarks).

    ``name`` is one of "baseline", "popcnt", "avx2", "avx512" or "auto".
    Returns False (and changes nothing) when the CPU lacks that instruction set.
    """
    if name == "auto":
        odt_kernels_init()
        return True
    return bool(odt_kernels_set(KERNEL_LEVELS[name]))



ctypedef struct KeyIdx:
    double key
    int32_t idx


cdef int _cmp_keyidx(const void* a, const void* b) noexcept nogil:
    cdef double ka = (<const KeyIdx*>a).key
    cdef double kb = (<const KeyIdx*>b).key
    if ka < kb:
        return -1
    if ka > kb:
        return 1
    return (<const KeyIdx*>a).idx - (<const KeyIdx*>b).idx


cdef enum:
    BRANCH_DATA = 0
    BRANCH_ASC = 1
    BRANCH_DESC = 2

BRANCHINGS = {"data": BRANCH_DATA, "asc": BRANCH_ASC, "desc": BRANCH_DESC}


cdef inline int _imin(int a, int b) noexcept nogil:
    return a if a < b else b


cdef inline double _cost2(double a00, double a01, double a10, double a11,
                         double q0, double q1) noexcept nogil:
    """Cost of a two-class leaf with class supports (q0, q1): the cheaper
    prediction under the cost matrix ``[[a00, a01], [a10, a11]]``."""
    cdef double c0 = a00 * q0 + a01 * q1, c1 = a10 * q0 + a11 * q1
    return c0 if c0 < c1 else c1


cdef inline double _xlogx(double x) noexcept nogil:
    return x * log(x) if x > 0 else 0.0


cdef class Searcher:
    """One DL8.5 search over packed 0/1 data.

    Parameters
    ----------
    cols : ndarray of uint64, shape (n_features, n_words)
        Packed feature columns (``_bitset.pack_columns``).
    cmask : ndarray of uint64, shape (n_classes, n_words)
        Packed rows of each class.
    n_rows : int
    max_depth, min_sup : int
    branching : {"data", "asc", "desc"}
    use_infeasibility_lb, use_similarity_lb, use_depth2_solver : bool
    cache : {"trie", "hash"}
    dl8 : bool
        Plain DL8: no upper bound given to children, no stored lower bounds.
    time_limit : float
        Seconds; ``<= 0`` means no limit.
    """

    cdef int n, m, K, W, max_depth, min_sup, branching
    cdef bint use_inf_lb, use_sim, use_d2, dl8, dynamic
    cdef int d2_depth         # subtrees up to this depth go to a direct solver
    cdef readonly bint timed_out
    cdef double time_limit, deadline
    cdef uint64_t* cols
    cdef uint64_t* cmask
    cdef uint64_t* cov
    cdef int32_t* cidx
    cdef int* cnnz
    cdef int32_t* items
    cdef KeyIdx* order
    cdef double* sup
    # depth-2 solver scratch
    cdef uint64_t* gw
    cdef uint64_t* ccw
    cdef uint64_t* tmp
    cdef int32_t* fq1
    cdef int32_t* pairbuf
    cdef double* bl
    cdef double* br
    cdef uint64_t* gT
    cdef int32_t* cnt0
    cdef int32_t* cnt1
    cdef int32_t* f0
    cdef int32_t* f1
    cdef int32_t* bli
    cdef int32_t* bri
    cdef int32_t* fid
    cdef double* cnt4
    cdef double* _d2_nc
    cdef int d2_nnz
    # similarity bound: two remembered covers per depth
    cdef uint64_t* sim_words
    cdef int32_t* sim_idx
    cdef int* sim_nnz
    cdef double* sim_val
    cdef double* sim_size
    cdef readonly Cache cache
    cdef readonly long long n_explored, n_d2, n_hits, n_sim_pruned
    cdef readonly double root_error, root_lb
    # bounded cache (issue 5): reconstitution of wiped nodes after the search
    cdef bint bounded
    cdef readonly double reconstitution_ms
    cdef readonly long long n_reconstituted
    cdef object _recon_out
    # the leaf objective (``_objective.pyx``); ``weighted``: its class
    # supports / losses are not popcounts (the objective computes them)
    cdef readonly Objective objective
    cdef int okind
    cdef WeightedCore wcore
    cdef bint weighted
    cdef double eps
    cdef double sim_scale     # counts: largest loss one row adds to a leaf
    cdef double* ntot         # rows of the cover per depth
    cdef double* node_q       # depth-2 (cost / Python): quadrant class supports
    cdef double* node_l       # and their losses
    cdef list _node_loss
    # each cover rewrite gets a new version; the split that made each cover
    cdef long long* cover_version
    cdef long long n_versions
    cdef int32_t* split_f
    cdef int32_t* split_v
    # anytime trace of the root: (seconds since run, incumbent, lower bound),
    # appended only when the root's incumbent or bound improves
    cdef double* trace
    cdef int n_trace, trace_cap
    cdef bint tracing
    cdef double t_start

    def __cinit__(self, const uint64_t[:, ::1] cols, const uint64_t[:, ::1] cmask,
                  int n_rows, int max_depth, int min_sup=1, str branching="data",
                  bint use_infeasibility_lb=True, bint use_similarity_lb=True,
                  bint use_depth2_solver=True, str cache="trie", bint dl8=False,
                  double time_limit=0.0, Py_ssize_t max_cache_size=0,
                  double wipe_factor=0.5, str wipe_strategy="reuses",
                  object weights=None, Objective objective=None):
        cdef int D, c
        cdef Py_ssize_t W, m, K
        self.m = cols.shape[0]
        self.K = cmask.shape[0]
        self.W = cmask.shape[1]
        self.n = n_rows
        if self.m > 0 and cols.shape[1] != self.W:
            raise ValueError("cols and cmask have different word counts")
        if self.W * 64 < n_rows or self.W == 0:
            raise ValueError("not enough words for n_rows")
        if max_depth < 0 or max_depth > 60:
            raise ValueError("max_depth must be in [0, 60]")
        self.max_depth = max_depth
        D = max_depth + 1
        W = self.W
        m = self.m
        K = self.K
        self.min_sup = min_sup
        self.branching = BRANCHINGS[branching]
        self.dl8 = dl8
        if objective is None:
            # misclassification: counts, or weights when given
            ycls = np.zeros(n_rows, dtype=np.int32)
            for c in range(1, self.K):
                bits = np.unpackbits(
                    np.ascontiguousarray(cmask[c]).view(np.uint8), bitorder="little")
                ycls[bits[:n_rows].astype(bool)] = c
            objective = _Objective(
                "error" if weights is None else "weighted", cols, n_rows,
                n_classes=self.K, y_class=ycls, weights=weights, min_sup=min_sup,
                pair_stats=use_depth2_solver)
        elif weights is not None:
            raise ValueError("give the weights to the objective")
        if objective.n != n_rows:
            raise ValueError("the objective was made for another number of rows")
        if objective.class_based and objective.K != self.K:
            raise ValueError("the objective and cmask have different class counts")
        self.objective = objective
        self.okind = objective.kind
        self.use_inf_lb = use_infeasibility_lb and not dl8
        self.use_sim = (use_similarity_lb and not dl8 and min_sup == 1
                        and objective.similarity)
        self.use_d2 = use_depth2_solver and not dl8 and objective.pair_stats
        self.d2_depth = 2 if self.use_d2 else 0
        if (use_depth2_solver and not dl8
                and objective.kind in (OBJ_ABSOLUTE, OBJ_QUANTILE)):
            # order statistics: no pair statistics, but a depth-1 solver
            self.d2_depth = 1
        self.dynamic = not dl8
        self.time_limit = time_limit
        self.timed_out = False
        if cache == "trie":
            self.cache = TrieCache(max_depth)
        elif cache == "hash":
            self.cache = HashCache(max_depth)
        else:
            raise ValueError(f"unknown cache {cache!r}")
        self.bounded = max_cache_size > 0
        self.reconstitution_ms = 0.0
        self.n_reconstituted = 0
        self._recon_out = None
        if self.bounded:
            # raises ValueError when the bound is too small for max_depth
            self.cache.configure(max_cache_size, wipe_factor, wipe_strategy)
        self.cols = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        if m > 0:
            memcpy(self.cols, &cols[0, 0], m * W * sizeof(uint64_t))
        self.cmask = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        memcpy(self.cmask, &cmask[0, 0], K * W * sizeof(uint64_t))
        self.weighted = not objective.counts
        self.eps = 0.0
        self.sim_scale = objective.worst_max if objective.counts else 1.0
        self.wcore = objective.core
        if self.wcore is not None:
            if self.okind == OBJ_WEIGHTED:
                # leaf error = total weight - largest class weight
                self.eps = 1e-12 * self.wcore.total_weight
            if self.use_d2 and max_depth >= 3:
                self.wcore.enable_sibling_counts()
        self.ntot = <double*>_alloc(D * sizeof(double))
        if self.use_d2 and self.okind != OBJ_ERROR and not self.weighted:
            # depth-2 solver of a cost / Python objective over class counts
            self.node_q = <double*>_alloc(2 * (m + 1) * (m + 1) * K * sizeof(double))
            self.node_l = <double*>_alloc(2 * (m + 1) * (m + 1) * sizeof(double))
        self._node_loss = None
        self.cover_version = <long long*>_alloc(D * sizeof(long long))
        self.n_versions = 0
        self.split_f = <int32_t*>_alloc(D * sizeof(int32_t))
        self.split_v = <int32_t*>_alloc(D * sizeof(int32_t))
        # the root's incumbent improves at most once per feature, plus the
        # leaf and the final proof
        self.trace_cap = self.m + 3
        self.trace = <double*>_alloc(3 * self.trace_cap * sizeof(double))
        self.n_trace = 0
        self.tracing = False
        self.cov = <uint64_t*>_alloc(D * W * sizeof(uint64_t))
        self.cidx = <int32_t*>_alloc(D * W * sizeof(int32_t))
        self.cnnz = <int*>_alloc(D * sizeof(int))
        self.items = <int32_t*>_alloc(D * (max_depth + 1) * sizeof(int32_t))
        self.order = <KeyIdx*>_alloc(D * (m + 1) * sizeof(KeyIdx))
        self.sup = <double*>_alloc(D * K * sizeof(double))
        self.gw = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.ccw = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        self.tmp = <uint64_t*>_alloc(K * W * sizeof(uint64_t))
        self.fq1 = <int32_t*>_alloc(m * K * sizeof(int32_t))
        self.pairbuf = <int32_t*>_alloc(K * sizeof(int32_t))
        self.bl = <double*>_alloc((m + 1) * sizeof(double))
        self.gT = <uint64_t*>_alloc(m * W * sizeof(uint64_t))
        self.cnt0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.cnt1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.f0 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.f1 = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.bli = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.bri = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.br = <double*>_alloc((m + 1) * sizeof(double))
        self.fid = <int32_t*>_alloc((m + 1) * sizeof(int32_t))
        self.cnt4 = <double*>_alloc(4 * K * sizeof(double))
        self.sim_words = <uint64_t*>_alloc(2 * D * W * sizeof(uint64_t))
        self.sim_idx = <int32_t*>_alloc(2 * D * W * sizeof(int32_t))
        self.sim_nnz = <int*>_alloc(2 * D * sizeof(int))
        self.sim_val = <double*>_alloc(2 * D * sizeof(double))
        self.sim_size = <double*>_alloc(2 * D * sizeof(double))
        cdef int i
        for i in range(2 * D):
            self.sim_val[i] = -1.0
        self._root_cover()
        if self.bounded:
            # the itemsets of the paths under evaluation, for the wipes
            self.cache.cur_items = self.items
            self.cache.cur_stride = max_depth + 1

    def __dealloc__(self):
        if self.cache is not None:
            self.cache.cur_items = NULL
        free(self.cols)
        free(self.cmask)
        free(self.ntot)
        free(self.node_q)
        free(self.node_l)
        free(self.cover_version)
        free(self.split_f)
        free(self.split_v)
        free(self.trace)
        free(self.cov)
        free(self.cidx)
        free(self.cnnz)
        free(self.items)
        free(self.order)
        free(self.sup)
        free(self.gw)
        free(self.ccw)
        free(self.tmp)
        free(self.fq1)
        free(self.pairbuf)
        free(self.bl)
        free(self.gT)
        free(self.cnt0)
        free(self.cnt1)
        free(self.f0)
        free(self.f1)
        free(self.bli)
        free(self.bri)
        free(self.br)
        free(self.fid)
        free(self.cnt4)
        free(self.sim_words)
        free(self.sim_idx)
        free(self.sim_nnz)
        free(self.sim_val)
        free(self.sim_size)

    cdef void _root_cover(self) noexcept nogil:
        cdef int k, W = self.W
        for k in range(W):
            self.cov[k] = ~(<uint64_t>0)
            self.cidx[k] = k
        if self.n % 64:
            self.cov[W - 1] = ((<uint64_t>1) << (self.n % 64)) - 1
        self.cnnz[0] = W
        self.n_versions += 1
        self.cover_version[0] = self.n_versions

    # ------------------------------------------------------------ covers
    cdef double _class_supports(self, int d) noexcept nogil:
        """Fill ``sup[d]`` with the class supports of the depth-d cover."""
        cdef int c, j, nnz = self.cnnz[d]
        cdef uint64_t* w = self.cov + d * self.W
        cdef int32_t* ix = self.cidx + d * self.W
        cdef uint64_t* cm
        cdef double* s = self.sup + d * self.K
        cdef long long cnt
        cdef double total = 0.0
        for c in range(self.K):
            cm = self.cmask + c * self.W
            cnt = 0
            for j in range(nnz):
                cnt += odt_popcount(w[j] & cm[ix[j]])
            s[c] = <double>cnt
            total += s[c]
        return total

    cdef double _leaf(self, int d) noexcept nogil:
        """Loss of the depth-d cover as one leaf; fills ``sup[d]`` (class
        supports) and ``ntot[d]`` (rows)."""
        cdef double best = 0.0, total
        cdef double* s = self.sup + d * self.K
        cdef int c, j
        cdef uint64_t* w
        if not self.weighted:
            total = self._class_supports(d)
            self.ntot[d] = total
            if self.okind != OBJ_ERROR:
                return self.objective.class_loss(s)
            for c in range(self.K):
                if s[c] > best:
                    best = s[c]
            return total - best
        w = self.cov + d * self.W
        total = 0.0
        for j in range(self.cnnz[d]):
            total += odt_popcount(w[j])
        self.ntot[d] = total
        return self.objective.leaf(w, self.cidx + d * self.W, self.cnnz[d], s)

    cdef inline double _rows(self, int d) noexcept nogil:
        """Rows of the depth-d cover (after ``_leaf(d)``)."""
        return self.ntot[d]

    cdef double _sim_size(self, int d) noexcept nogil:
        """Size of the depth-d cover for the similarity bound: rows, or the
        sum of the objective's per-row worst losses."""
        cdef int c
        cdef double total = 0.0
        if not self.weighted:
            return self.ntot[d]
        if self.okind == OBJ_WEIGHTED:
            for c in range(self.K):
                total += self.sup[d * self.K + c]
            return total
        return self.objective.sim_weight(self.cov + d * self.W,
                                         self.cidx + d * self.W, self.cnnz[d])

    cdef void _make_child(self, int d, int f, int v) noexcept nogil:
        """Cover and itemset of child ``I + (f, v)`` into depth d + 1."""
        cdef int W = self.W, j, nnz = self.cnnz[d], out = 0, i, L = self.max_depth + 1
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* cw = self.cov + (d + 1) * W
        cdef int32_t* cx = self.cidx + (d + 1) * W
        cdef uint64_t* col = self.cols + f * W
        cdef uint64_t x
        cdef uint64_t flip = 0 if v else ~(<uint64_t>0)
        for j in range(nnz):
            x = w[j] & (col[ix[j]] ^ flip)
            if x:
                cw[out] = x
                cx[out] = ix[j]
                out += 1
        self.cnnz[d + 1] = out
        self.n_versions += 1
        self.cover_version[d + 1] = self.n_versions
        self.split_f[d + 1] = f
        self.split_v[d + 1] = v
        # sorted insertion of item 2f + v
        cdef int32_t item = 2 * f + v
        cdef int32_t* src = self.items + d * L
        cdef int32_t* dst = self.items + (d + 1) * L
        i = 0
        while i < d and src[i] < item:
            dst[i] = src[i]
            i += 1
        dst[i] = item
        while i < d:
            dst[i + 1] = src[i]
            i += 1

    cdef Py_ssize_t _child_entry(self, int d, int f, int v, bint create) noexcept nogil:
        """Entry of ``I + (f, v)`` without touching the depth-d+1 buffers."""
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
        return self.cache.find(buf, d + 1, create)

    # -------------------------------------------------------- similarity
    cdef double _sim_lb(self, int d) noexcept nogil:
        cdef int s, j, slot, nnz = self.cnnz[d], W = self.W
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* old
        cdef long long inter
        cdef double best = 0.0, v
        for s in range(2):
            slot = 2 * d + s
            if self.sim_val[slot] < 0:
                continue
            old = self.sim_words + slot * W
            if self.weighted:
                # sizes are weights: lb >= LB_old - worst(D_old minus D_new)
                v = self.sim_val[slot] - (
                    self.sim_size[slot] - self.objective.sim_common(old, w, ix, nnz)
                ) - self.eps
                if v > best:
                    best = v
                continue
            inter = 0
            for j in range(nnz):
                inter += odt_popcount(old[ix[j]] & w[j])
            v = self.sim_val[slot] - self.sim_scale * (self.sim_size[slot] - <double>inter)
            if v > best:
                best = v
        return best

    cdef void _sim_store(self, int d, double value) noexcept nogil:
        if not self.use_sim or value <= 0:
            return
        cdef double size = self._sim_size(d)
        cdef int s, j, slot = -1, nnz = self.cnnz[d], W = self.W
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* old
        cdef int32_t* oidx
        cdef long long inter
        cdef double dist, best_dist = INFINITY
        for s in range(2):
            if self.sim_val[2 * d + s] < 0:
                slot = 2 * d + s
                break
        if slot < 0:
            # replace the remembered cover closest to the newcomer
            for s in range(2):
                old = self.sim_words + (2 * d + s) * W
                inter = 0
                for j in range(nnz):
                    inter += odt_popcount(old[ix[j]] & w[j])
                dist = self.sim_size[2 * d + s] + size - 2.0 * inter
                if dist < best_dist:
                    best_dist = dist
                    slot = 2 * d + s
        old = self.sim_words + slot * W
        oidx = self.sim_idx + slot * W
        for j in range(self.sim_nnz[slot]):
            old[oidx[j]] = 0
        for j in range(nnz):
            old[ix[j]] = w[j]
            oidx[j] = ix[j]
        self.sim_nnz[slot] = nnz
        self.sim_val[slot] = value
        self.sim_size[slot] = size

    # ------------------------------------------------------ entry updates
    cdef inline void _store_solved(self, Py_ssize_t e, double err, int f) noexcept nogil:
        cdef Entry* ent = &self.cache.entries[e]
        ent.error = err
        ent.lb = err
        ent.feature = f
        ent.flags = ent.flags | ENTRY_SOLVED

    cdef inline bint _check_time(self) noexcept nogil:
        if self.timed_out:
            return True
        if self.time_limit > 0 and _now() >= self.deadline:
            self.timed_out = True
        if self.objective.aborted:
            # a Python loss raised: stop (``run`` re-raises)
            self.timed_out = True
        return self.timed_out

    # --------------------------------------------------- depth-2 solver
    cdef int _d2_counts(self, int d, double total) noexcept nogil:
        """Gather the useful features' words and item / pair class counts.

        Returns the number ``nf`` of useful features (both branches hold at
        least ``min_sup`` rows); their ids are ``fid[:nf]``.
        """
        cdef int W = self.W, K = self.K, nnz = self.cnnz[d], j, c, f, nf = 0
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* col
        cdef uint64_t* g
        cdef uint64_t* t
        cdef uint64_t* cm
        cdef long long cnt
        cdef int tot
        cdef int ntot = <int>total
        cdef int nw = (ntot + 63) // 64
        cdef bint compact = odt_compact != NULL and nw < nnz
        if compact:
            # pack the cover's rows densely: nw words instead of nnz
            for c in range(K):
                odt_compact(self.cmask + c * W, ix, w, nnz, self.ccw + c * nw)
            for f in range(self.m):
                g = self.gw + nf * nw
                odt_compact(self.cols + f * W, ix, w, nnz, g)
                tot = 0
                for j in range(nw):
                    tot += odt_popcount(g[j])
                if tot < self.min_sup or ntot - tot < self.min_sup:
                    continue
                for c in range(K):
                    t = self.ccw + c * nw
                    cnt = 0
                    for j in range(nw):
                        cnt += odt_popcount(g[j] & t[j])
                    self.fq1[nf * K + c] = <int32_t>cnt
                self.fid[nf] = f
                nf += 1
            self.d2_nnz = nw
            return nf
        self.d2_nnz = nnz
        for c in range(K):
            cm = self.cmask + c * W
            for j in range(nnz):
                self.ccw[c * nnz + j] = w[j] & cm[ix[j]]
        for f in range(self.m):
            col = self.cols + f * W
            g = self.gw + nf * nnz
            tot = 0
            for j in range(nnz):
                g[j] = w[j] & col[ix[j]]
                tot += odt_popcount(g[j])
            if tot < self.min_sup or ntot - tot < self.min_sup:
                continue
            for c in range(K):
                t = self.ccw + c * nnz
                cnt = 0
                for j in range(nnz):
                    cnt += odt_popcount(g[j] & t[j])
                self.fq1[nf * K + c] = <int32_t>cnt
            self.fid[nf] = f
            nf += 1
        return nf

    cdef void _mask_root(self, int i) noexcept nogil:
        """``tmp[c]``: the words of useful feature i on the rows of class c."""
        cdef int nnz = self.d2_nnz, c, j
        cdef uint64_t* g = self.gw + i * nnz
        cdef uint64_t* t
        for c in range(self.K):
            t = self.tmp + c * nnz
            for j in range(nnz):
                t[j] = g[j] & self.ccw[c * nnz + j]

    cdef void _pair_classes(self, int k, int32_t* p) noexcept nogil:
        """Class counts ``p[c]`` of the rows with both the root of
        ``_mask_root`` and useful feature k."""
        cdef int nnz = self.d2_nnz, c, j
        cdef uint64_t* gk = self.gw + k * nnz
        cdef uint64_t* t0
        cdef uint64_t* t1
        cdef long long c0, c1
        if self.K == 2:
            t0 = self.tmp
            t1 = self.tmp + nnz
            c0 = 0
            c1 = 0
            for j in range(nnz):
                c0 += odt_popcount(t0[j] & gk[j])
                c1 += odt_popcount(t1[j] & gk[j])
            p[0] = <int32_t>c0
            p[1] = <int32_t>c1
            return
        for c in range(self.K):
            t0 = self.tmp + c * nnz
            c0 = 0
            for j in range(nnz):
                c0 += odt_popcount(t0[j] & gk[j])
            p[c] = <int32_t>c0

    cdef double _d2_pairs(self, int d, int nf, int* out_f) noexcept nogil:
        """Depth-2 optimum from the pair counts, one pass over feature pairs.

        For each pair (i, k) the four quadrant class counts give a candidate
        split for both branches of i (child k) and of k (child i); ``bl`` /
        ``br`` keep the best error of the left / right branch of each root.
        """
        cdef int K = self.K, c, i, k, ms = self.min_sup
        cdef int32_t* fi
        cdef int32_t* fk
        cdef int32_t* p = self.pairbuf
        cdef double* nc = self._d2_nc
        cdef double* bl = self.bl
        cdef double* br = self.br
        cdef int s11, s10, s01, s00, m11, m10, m01, m00, v, e11, e10, e01, e00
        cdef int ntot = 0
        cdef double best, left, right, leaf
        for c in range(K):
            ntot += <int>nc[c]
        # leaves of each branch as the starting point
        for i in range(nf):
            fi = self.fq1 + i * K
            s11 = 0
            m11 = 0
            m00 = 0
            for c in range(K):
                s11 += fi[c]
                if fi[c] > m11:
                    m11 = fi[c]
                v = <int>nc[c] - fi[c]
                if v > m00:
                    m00 = v
            br[i] = s11 - m11
            bl[i] = (ntot - s11) - m00
        for i in range(nf):
            fi = self.fq1 + i * K
            self._mask_root(i)
            for k in range(i + 1, nf):
                fk = self.fq1 + k * K
                self._pair_classes(k, p)
                s11 = 0
                s10 = 0
                s01 = 0
                s00 = 0
                m11 = 0
                m10 = 0
                m01 = 0
                m00 = 0
                for c in range(K):
                    v = p[c]
                    s11 += v
                    if v > m11:
                        m11 = v
                    v = fi[c] - p[c]
                    s10 += v
                    if v > m10:
                        m10 = v
                    v = fk[c] - p[c]
                    s01 += v
                    if v > m01:
                        m01 = v
                    v = <int>nc[c] - fi[c] - fk[c] + p[c]
                    s00 += v
                    if v > m00:
                        m00 = v
                e11 = s11 - m11
                e10 = s10 - m10
                e01 = s01 - m01
                e00 = s00 - m00
                if s11 >= ms and s10 >= ms and e11 + e10 < br[i]:
                    br[i] = e11 + e10
                if s01 >= ms and s00 >= ms and e01 + e00 < bl[i]:
                    bl[i] = e01 + e00
                if s11 >= ms and s01 >= ms and e11 + e01 < br[k]:
                    br[k] = e11 + e01
                if s10 >= ms and s00 >= ms and e10 + e00 < bl[k]:
                    bl[k] = e10 + e00
        best = INFINITY
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return best

    cdef double _d2_pairs_binary(self, int d, int nf, int* out_f) noexcept nogil:
        """Two-class version of ``_d2_pairs``: counts for all partners k of a
        root i in one sweep over a word-major copy of the feature words, then
        a branch-free pass (vectorisable) over k for the four quadrants."""
        cdef int nnz = self.d2_nnz, i, j, k, ms = self.min_sup
        cdef uint64_t* gT = self.gT
        cdef uint64_t* row
        cdef int32_t* c0 = self.cnt0
        cdef int32_t* c1 = self.cnt1
        cdef int32_t* f0 = self.f0
        cdef int32_t* f1 = self.f1
        cdef int32_t* bl = self.bli
        cdef int32_t* br = self.bri
        cdef int n0 = <int>self._d2_nc[0], n1 = <int>self._d2_nc[1]
        cdef int p0, p1, e11, e10, e01, e00, fi0, fi1, best
        cdef int32_t bri, bli
        cdef int s11, s10, s01, s00, big = n0 + n1 + 1
        for i in range(nf):
            f0[i] = self.fq1[2 * i]
            f1[i] = self.fq1[2 * i + 1]
            br[i] = _imin(f0[i], f1[i])
            bl[i] = _imin(n0 - f0[i], n1 - f1[i])
        self._pairs_transpose(nf)
        for i in range(nf - 1):
            self._pairs_of(i, nf)
            bri = br[i]
            bli = bl[i]
            fi0 = f0[i]
            fi1 = f1[i]
            if ms <= 1:
                # an empty quadrant gives the branch's leaf error: harmless
                odt_quadrants(c0, c1, f0, f1, bl, br, fi0, fi1, n0, n1, i + 1, nf,
                              &bli, &bri)
            else:
                for k in range(i + 1, nf):
                    p0 = c0[k]
                    p1 = c1[k]
                    s11 = p0 + p1
                    s10 = fi0 + fi1 - s11
                    s01 = f0[k] + f1[k] - s11
                    s00 = n0 + n1 - s11 - s10 - s01
                    e11 = _imin(p0, p1)
                    e10 = _imin(fi0 - p0, fi1 - p1)
                    e01 = _imin(f0[k] - p0, f1[k] - p1)
                    e00 = _imin(n0 - fi0 - f0[k] + p0, n1 - fi1 - f1[k] + p1)
                    bri = _imin(bri, e11 + e10 if (s11 >= ms and s10 >= ms) else big)
                    bli = _imin(bli, e01 + e00 if (s01 >= ms and s00 >= ms) else big)
                    br[k] = _imin(br[k], e11 + e01 if (s11 >= ms and s01 >= ms) else big)
                    bl[k] = _imin(bl[k], e10 + e00 if (s10 >= ms and s00 >= ms) else big)
            br[i] = bri
            bl[i] = bli
        best = big
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return <double>best

    cdef double _depth1_order(self, int d, double leaf, int* out_f) noexcept nogil:
        """Best split of depth 1 for the absolute / pinball loss.

        The cover's rows are in target order (the caller sorts the rows by
        y), so for each feature two passes over them give both children's
        weights, their lower weighted tau-quantiles and the sums before
        them, hence both leaf losses, with no child cover, cache entry or
        leaf evaluation of its own.
        """
        cdef int n = self.objective.gather(self.cov + d * self.W,
                                           self.cidx + d * self.W, self.cnnz[d])
        cdef int32_t* rows = self.objective.rows
        cdef double* w = self.objective.w
        cdef double* yv = self.objective.y
        cdef int f, i, r, b, ms = self.min_sup
        cdef int cnt[2]
        cdef double T[2]
        cdef double S[2]
        cdef double cw[2]
        cdef double cs[2]
        cdef double q[2]
        cdef double Wb[2]
        cdef double Sb[2]
        cdef bint found[2]
        cdef double tau = 0.5 if self.okind == OBJ_ABSOLUTE else self.objective.tau
        cdef double a = 1.0 if self.okind == OBJ_ABSOLUTE else tau
        cdef double c = 1.0 if self.okind == OBJ_ABSOLUTE else 1.0 - tau
        cdef double best = leaf, wr, yr, loss
        cdef uint64_t* col
        out_f[0] = FEATURE_LEAF
        for f in range(self.m):
            col = self.cols + f * self.W
            cnt[0] = 0
            cnt[1] = 0
            T[0] = 0.0
            T[1] = 0.0
            S[0] = 0.0
            S[1] = 0.0
            for i in range(n):
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                wr = w[r] if w != NULL else 1.0
                cnt[b] += 1
                T[b] += wr
                S[b] += wr * yv[r]
            if cnt[0] < ms or cnt[1] < ms:
                continue
            for b in range(2):
                cw[b] = 0.0
                cs[b] = 0.0
                found[b] = T[b] <= 0.0
                q[b] = 0.0
                Wb[b] = 0.0
                Sb[b] = 0.0
            for i in range(n):
                if found[0] and found[1]:
                    break
                r = rows[i]
                b = <int>((col[r >> 6] >> (r & 63)) & 1)
                if found[b]:
                    continue
                wr = w[r] if w != NULL else 1.0
                yr = yv[r]
                if cw[b] + wr >= tau * T[b] and wr > 0:
                    q[b] = yr
                    Wb[b] = cw[b]
                    Sb[b] = cs[b]
                    found[b] = True
                else:
                    cw[b] += wr
                    cs[b] += wr * yr
            loss = 0.0
            for b in range(2):
                if T[b] > 0.0:
                    # rows before the quantile row lie at or below it, the
                    # others at or above it (ties cost nothing either way)
                    loss += (a * ((S[b] - Sb[b]) - q[b] * (T[b] - Wb[b]))
                             + c * (q[b] * Wb[b] - Sb[b]))
            if loss < best:
                best = loss
                out_f[0] = f
        return best if best > self.eps else 0.0

    cdef void _pairs_transpose(self, int nf) noexcept nogil:
        """Word-major copy ``gT`` of the useful features' words (two classes)."""
        cdef int nnz = self.d2_nnz, i, j
        for i in range(nf):
            for j in range(nnz):
                self.gT[j * nf + i] = self.gw[i * nnz + j]

    cdef void _pairs_of(self, int i, int nf) noexcept nogil:
        """Class-0 / class-1 counts ``cnt0[k]`` / ``cnt1[k]`` of the pairs
        (i, k), k in (i, nf), in one sweep (after ``_pairs_transpose``)."""
        cdef int nnz = self.d2_nnz, j
        for j in range(nnz):
            self.tmp[j] = self.gT[j * nf + i] & self.ccw[j]
            self.tmp[nnz + j] = self.gT[j * nf + i] & self.ccw[nnz + j]
        odt_pair_counts(self.gT, nf, nnz, self.tmp, self.tmp + nnz, self.cnt0,
                        self.cnt1, i + 1, nf)

    cdef double _d2_cost_binary(self, int nf, double leaf, int* out_f) noexcept nogil:
        """``_d2_pairs_binary`` for a two-class cost matrix (min_sup = 1):
        the same pair-count kernel, then each quadrant priced by the
        cheaper of the two predictions."""
        cdef int nnz = self.d2_nnz, i, j, k
        cdef uint64_t* gT = self.gT
        cdef int32_t* c0 = self.cnt0
        cdef int32_t* c1 = self.cnt1
        cdef int32_t* f0 = self.f0
        cdef int32_t* f1 = self.f1
        cdef double* bl = self.bl
        cdef double* br = self.br
        cdef double* C = self.objective.cost
        cdef double a00 = C[0], a01 = C[1], a10 = C[2], a11 = C[3]
        cdef double n0 = self._d2_nc[0], n1 = self._d2_nc[1]
        cdef double p0, p1, q0, q1, e11, e10, e01, e00, bri, bli, fi0, fi1, best
        for i in range(nf):
            f0[i] = self.fq1[2 * i]
            f1[i] = self.fq1[2 * i + 1]
            br[i] = _cost2(a00, a01, a10, a11, f0[i], f1[i])
            bl[i] = _cost2(a00, a01, a10, a11, n0 - f0[i], n1 - f1[i])
        self._pairs_transpose(nf)
        for i in range(nf - 1):
            self._pairs_of(i, nf)
            bri = br[i]
            bli = bl[i]
            fi0 = f0[i]
            fi1 = f1[i]
            for k in range(i + 1, nf):
                p0 = c0[k]
                p1 = c1[k]
                e11 = _cost2(a00, a01, a10, a11, p0, p1)
                e10 = _cost2(a00, a01, a10, a11, fi0 - p0, fi1 - p1)
                q0 = f0[k] - p0
                q1 = f1[k] - p1
                e01 = _cost2(a00, a01, a10, a11, q0, q1)
                e00 = _cost2(a00, a01, a10, a11, n0 - fi0 - q0, n1 - fi1 - q1)
                if e11 + e10 < bri:
                    bri = e11 + e10
                if e01 + e00 < bli:
                    bli = e01 + e00
                if e11 + e01 < br[k]:
                    br[k] = e11 + e01
                if e10 + e00 < bl[k]:
                    bl[k] = e10 + e00
            br[i] = bri
            bl[i] = bli
        best = leaf
        out_f[0] = FEATURE_LEAF
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return best

    cdef double _d2_objective(self, int nf, int r, double leaf,
                              int* out_f) noexcept nogil:
        """Depth-2 optimum from the class counts for a cost matrix or a
        Python loss of the class supports.

        First every candidate leaf (each branch of each root, each quadrant
        of each pair of features) gets its class supports in ``node_q``;
        then all are priced at once (one batch for a Python loss); then the
        best left / right branch of each root is kept, as ``_d2_pairs``.
        """
        cdef int K = self.K, c, i, k, ms = self.min_sup
        cdef Py_ssize_t L = 0, o
        cdef int32_t* fi
        cdef int32_t* fk
        cdef int32_t* pc = self.pairbuf
        cdef double* nc = self._d2_nc
        cdef double* q = self.node_q
        cdef double* lo = self.node_l
        cdef double* bl = self.bl
        cdef double* br = self.br
        cdef double ntot = 0.0, best, p, s11, s10, s01, s00
        for c in range(K):
            ntot += nc[c]
        # branches of each root as leaves: (f = 1), (f = 0)
        for i in range(nf):
            fi = self.fq1 + i * K
            for c in range(K):
                q[L * K + c] = fi[c]
                q[(L + 1) * K + c] = nc[c] - fi[c]
            L += 2
        if r >= 2 and K == 2:
            # two classes: the pair counts of all partners of i at once
            self._pairs_transpose(nf)
            for i in range(nf):
                fi = self.fq1 + i * K
                self._pairs_of(i, nf)
                for k in range(i + 1, nf):
                    fk = self.fq1 + k * K
                    for c in range(2):
                        p = self.cnt0[k] if c == 0 else self.cnt1[k]
                        q[L * K + c] = p
                        q[(L + 1) * K + c] = fi[c] - p
                        q[(L + 2) * K + c] = fk[c] - p
                        q[(L + 3) * K + c] = nc[c] - fi[c] - fk[c] + p
                    L += 4
        elif r >= 2:
            for i in range(nf):
                fi = self.fq1 + i * K
                self._mask_root(i)
                for k in range(i + 1, nf):
                    fk = self.fq1 + k * K
                    self._pair_classes(k, pc)
                    for c in range(K):
                        p = <double>pc[c]
                        q[L * K + c] = p                                  # i, k
                        q[(L + 1) * K + c] = fi[c] - p                    # i, not k
                        q[(L + 2) * K + c] = fk[c] - p                    # not i, k
                        q[(L + 3) * K + c] = nc[c] - fi[c] - fk[c] + p    # neither
                    L += 4
        if self.okind == OBJ_PY_CLASS:
            self.objective.batch_loss(q, <int>L, lo)
        else:
            for o in range(L):
                lo[o] = self.objective.class_loss(q + o * K)
        for i in range(nf):
            br[i] = lo[2 * i]
            bl[i] = lo[2 * i + 1]
        o = 2 * nf
        if r >= 2:
            for i in range(nf):
                for k in range(i + 1, nf):
                    if ms > 1:
                        s11 = 0.0
                        s10 = 0.0
                        s01 = 0.0
                        s00 = 0.0
                        for c in range(K):
                            s11 += q[o * K + c]
                            s10 += q[(o + 1) * K + c]
                            s01 += q[(o + 2) * K + c]
                            s00 += q[(o + 3) * K + c]
                        if s11 >= ms and s10 >= ms and lo[o] + lo[o + 1] < br[i]:
                            br[i] = lo[o] + lo[o + 1]
                        if s01 >= ms and s00 >= ms and lo[o + 2] + lo[o + 3] < bl[i]:
                            bl[i] = lo[o + 2] + lo[o + 3]
                        if s11 >= ms and s01 >= ms and lo[o] + lo[o + 2] < br[k]:
                            br[k] = lo[o] + lo[o + 2]
                        if s10 >= ms and s00 >= ms and lo[o + 1] + lo[o + 3] < bl[k]:
                            bl[k] = lo[o + 1] + lo[o + 3]
                    else:
                        # min_sup = 1: an empty quadrant gives the branch's leaf
                        if lo[o] + lo[o + 1] < br[i]:
                            br[i] = lo[o] + lo[o + 1]
                        if lo[o + 2] + lo[o + 3] < bl[i]:
                            bl[i] = lo[o + 2] + lo[o + 3]
                        if lo[o] + lo[o + 2] < br[k]:
                            br[k] = lo[o] + lo[o + 2]
                        if lo[o + 1] + lo[o + 3] < bl[k]:
                            bl[k] = lo[o + 1] + lo[o + 3]
                    o += 4
        best = leaf
        out_f[0] = FEATURE_LEAF
        for i in range(nf):
            if bl[i] + br[i] < best:
                best = bl[i] + br[i]
                out_f[0] = self.fid[i]
        return best

    cdef double _depth2(self, int d, int r, double leaf, int* out_f) noexcept nogil:
        """Exact optimum (loss, root feature) of a depth-r (<= 2) subtree.

        ``leaf`` is the loss of the depth-d cover as one leaf (``_leaf(d)``
        was called for this cover: ``sup[d]`` and ``ntot[d]`` are its own).
        """
        cdef int nf, i, K = self.K, c
        cdef double total = self.ntot[d], best, left, right, e
        cdef int32_t* fi
        cdef double s0, m0, s1, m1, v
        out_f[0] = FEATURE_LEAF
        best = leaf
        if leaf <= self.eps or r <= 0:
            return leaf
        if self.okind == OBJ_ABSOLUTE or self.okind == OBJ_QUANTILE:
            return self._depth1_order(d, leaf, out_f)
        if self.weighted:
            if r == 2 and d >= 1:
                return self.wcore.depth2_child(
                    self.cov + (d - 1) * self.W, self.cidx + (d - 1) * self.W,
                    self.cnnz[d - 1], self.cover_version[d - 1], self.split_f[d],
                    self.split_v[d], self.cov + d * self.W, self.cidx + d * self.W,
                    self.cnnz[d], leaf, self.eps, out_f)
            return self.wcore.depth2(self.cov + d * self.W, self.cidx + d * self.W,
                                     self.cnnz[d], r, leaf, self.eps, out_f)
        self._d2_nc = self.sup + d * K
        nf = self._d2_counts(d, total)
        if nf == 0:
            return leaf
        if self.okind == OBJ_COST and K == 2 and r == 2 and self.min_sup <= 1:
            e = self._d2_cost_binary(nf, leaf, &i)
            if e < best:
                best = e
                out_f[0] = i
            return best
        if self.okind != OBJ_ERROR:
            e = self._d2_objective(nf, r, leaf, &i)
            if e < best:
                best = e
                out_f[0] = i
            return best
        if r == 1:
            for i in range(nf):
                fi = self.fq1 + i * K
                s1 = 0.0
                m1 = 0.0
                m0 = 0.0
                for c in range(K):
                    v = fi[c]
                    s1 += v
                    if v > m1:
                        m1 = v
                    v = self._d2_nc[c] - fi[c]
                    if v > m0:
                        m0 = v
                e = (s1 - m1) + (total - s1 - m0)
                if e < best:
                    best = e
                    out_f[0] = self.fid[i]
                    if best <= 0:
                        break
            return best
        if K == 2:
            e = self._d2_pairs_binary(d, nf, &i)
        else:
            e = self._d2_pairs(d, nf, &i)
        if e < best:
            best = e
            out_f[0] = i
        return best

    # ------------------------------------------------------- candidates
    cdef int _candidates(self, int d, double total) noexcept nogil:
        """Order the splittable features of the depth-d node into order[d]."""
        cdef int W = self.W, K = self.K, nnz = self.cnnz[d], j, c, f, nc = 0
        cdef uint64_t* w = self.cov + d * W
        cdef int32_t* ix = self.cidx + d * W
        cdef uint64_t* col
        cdef uint64_t* cm
        cdef uint64_t x
        cdef KeyIdx* out = self.order + d * (self.m + 1)
        cdef double* s = self.sup + d * K
        cdef long long tot, cnt
        cdef double cond, n1, n0
        for f in range(self.m):
            col = self.cols + f * W
            tot = 0
            for j in range(nnz):
                tot += odt_popcount(w[j] & col[ix[j]])
            if tot < self.min_sup or total - tot < self.min_sup:
                continue
            out[nc].idx = f
            out[nc].key = f
            if self.branching != BRANCH_DATA:
                # conditional entropy (times n) of the split on f
                n1 = <double>tot
                n0 = total - n1
                cond = _xlogx(n1) + _xlogx(n0)
                for c in range(K):
                    cm = self.cmask + c * W
                    cnt = 0
                    for j in range(nnz):
                        cnt += odt_popcount(w[j] & col[ix[j]] & cm[ix[j]])
                    cond -= _xlogx(<double>cnt) + _xlogx(s[c] - <double>cnt)
                # information gain = H(parent) - cond / n
                out[nc].key = cond if self.branching == BRANCH_DESC else -cond
            nc += 1
        if self.branching != BRANCH_DATA and nc > 1:
            qsort(out, nc, sizeof(KeyIdx), _cmp_keyidx)
        return nc

    # ------------------------------------------------------------ search
    cdef void _trace_root(self, double obj, double lb) noexcept nogil:
        """Append a point to the root's anytime trace if it improves."""
        cdef double* last
        if not self.tracing or self.n_trace >= self.trace_cap:
            return
        if self.n_trace > 0:
            last = self.trace + 3 * (self.n_trace - 1)
            if not (obj < last[1] or lb > last[2]):
                return
        last = self.trace + 3 * self.n_trace
        last[0] = _now() - self.t_start
        last[1] = obj
        last[2] = lb
        self.n_trace += 1

    cdef double _child_value(self, Py_ssize_t e) noexcept nogil:
        if e < 0:
            return 0.0
        cdef Entry* ent = &self.cache.entries[e]
        if ent.flags & ENTRY_SOLVED:
            return ent.error
        return ent.lb

    cdef double _timeout_leaf(self, Py_ssize_t e, double leaf) noexcept nogil:
        """On time-out a node not searched yet answers with its leaf."""
        cdef Entry* ent = &self.cache.entries[e]
        if ent.error <= leaf:
            return ent.error
        ent.error = leaf
        ent.feature = FEATURE_LEAF
        return leaf

    cdef double _solve(self, int d, Py_ssize_t e, double ub, double* out_lb) noexcept nogil:
        """Best error < ub of the itemset at depth d (entry e), or INFINITY.

        May return an exact optimum >= ub (then ``out_lb`` equals it). When
        no tree < ub exists, returns INFINITY and a lower bound in out_lb.
        """
        cdef Entry* ent = &self.cache.entries[e]
        cdef double lb, leaf, s, best, cur_ub, min_lb, v0, v1, lbs
        cdef double b1, b2, err1, err2, l1, l2, newlb
        cdef int r = self.max_depth - d, f, nc, i, first, bestf
        cdef Py_ssize_t e0, e1, ef, es
        if self.bounded:
            # the path under evaluation (never wiped)
            self.cache.cur_path[d] = <int32_t>e
        if ent.flags & ENTRY_SOLVED:
            self.n_hits += 1
            out_lb[0] = ent.error
            return ent.error
        lb = ent.lb
        out_lb[0] = lb
        if lb >= ub:
            self.n_hits += 1
            return INFINITY
        leaf = self._leaf(d)
        if self._check_time():
            return self._timeout_leaf(e, leaf)
        self.n_explored += 1
        if (leaf <= self.eps or r == 0 or self._rows(d) < 2 * self.min_sup
                or lb >= leaf):
            self._store_solved(e, leaf, FEATURE_LEAF)
            out_lb[0] = leaf
            return leaf
        if self.use_sim:
            s = self._sim_lb(d)
            if s > lb:
                lb = s
                out_lb[0] = lb
                if lb >= leaf:
                    self._store_solved(e, leaf, FEATURE_LEAF)
                    out_lb[0] = leaf
                    return leaf
                if lb >= ub:
                    self.n_sim_pruned += 1
                    if self.use_inf_lb and lb > ent.lb:
                        ent.lb = lb
                    return INFINITY
        if r <= self.d2_depth:
            self.n_d2 += 1
            best = self._depth2(d, r, leaf, &f)
            self._store_solved(e, best, f)
            self._sim_store(d, best)
            out_lb[0] = best
            return best

        nc = self._candidates(d, self._rows(d))
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
            f = self.order[d * (self.m + 1) + i].idx
            if self.dl8:
                v0 = 0.0
                v1 = 0.0
            else:
                e0 = self._child_entry(d, f, 0, False)
                e1 = self._child_entry(d, f, 1, False)
                v0 = self._child_value(e0)
                v1 = self._child_value(e1)
                if self.use_sim and v0 + v1 < cur_ub:
                    # similarity bounds of both children before any solving
                    if e0 < 0 or not (self.cache.entries[e0].flags & ENTRY_SOLVED):
                        self._make_child(d, f, 0)
                        s = self._sim_lb(d + 1)
                        if s > v0:
                            v0 = s
                    if e1 < 0 or not (self.cache.entries[e1].flags & ENTRY_SOLVED):
                        self._make_child(d, f, 1)
                        s = self._sim_lb(d + 1)
                        if s > v1:
                            v1 = s
                    if v0 + v1 >= cur_ub:
                        self.n_sim_pruned += 1
                if v0 + v1 >= cur_ub:
                    if v0 + v1 < min_lb:
                        min_lb = v0 + v1
                    continue
            # larger lower bound first (ties: the left branch, not-f)
            first = 1 if (self.dynamic and v1 > v0) else 0
            lbs = v0 if first else v1
            self._make_child(d, f, first)
            ef = self.cache.find(self.items + (d + 1) * (self.max_depth + 1), d + 1, True)
            if ef < 0:
                self.timed_out = True
                break
            b1 = INFINITY if self.dl8 else cur_ub - lbs
            err1 = self._solve(d + 1, ef, b1, &l1)
            if not (err1 < b1) or (self.dl8 and err1 >= cur_ub):
                if not self.timed_out and l1 + lbs < min_lb:
                    min_lb = l1 + lbs
                if self.timed_out:
                    break
                continue
            self._make_child(d, f, 1 - first)
            es = self.cache.find(self.items + (d + 1) * (self.max_depth + 1), d + 1, True)
            if es < 0:
                self.timed_out = True
                break
            b2 = INFINITY if self.dl8 else cur_ub - err1
            err2 = self._solve(d + 1, es, b2, &l2)
            if err1 + err2 < cur_ub:
                best = err1 + err2
                bestf = f
                cur_ub = best
                if d == 0:
                    self._trace_root(best, lb)
                if self.bounded:
                    # current best solution, kept by the wipes
                    self.cache.entries[e].error = best
                    self.cache.entries[e].feature = bestf
            elif not self.timed_out and err1 + l2 < min_lb:
                min_lb = err1 + l2
            if self.timed_out:
                break

        ent = &self.cache.entries[e]
        if self.timed_out:
            if best < ent.error:
                ent.error = best
                ent.feature = bestf
            out_lb[0] = lb
            return ent.error
        if best < ub:
            self._store_solved(e, best, bestf)
            self._sim_store(d, best)
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
            self._sim_store(d, leaf)
            out_lb[0] = leaf
            return leaf
        if self.use_inf_lb and newlb > ent.lb:
            ent.lb = newlb
        self._sim_store(d, newlb)
        out_lb[0] = newlb
        return INFINITY

    def root_leaf_loss(self):
        """Loss of the whole training set as a single leaf."""
        cdef double v
        self._root_cover()
        with nogil:
            v = self._leaf(0)
        self._raise_if_aborted()
        return v

    def _raise_if_aborted(self):
        if self.objective.aborted:
            exc, self.objective.error = self.objective.error, None
            raise exc

    def run(self, double max_error=INFINITY, purity_tol=None):
        """Search from the root; returns ``(error, lower_bound)``.

        ``error`` is ``inf`` when no tree has error < ``max_error``. A leaf
        whose loss is ``<= purity_tol`` is not split further (default: 0
        for counts, ``1e-12`` times the total weight for weights).
        """
        cdef double err, lb, leaf
        cdef Py_ssize_t root
        if purity_tol is not None:
            self.eps = purity_tol
        root = self.cache.find(self.items, 0, True)
        if root < 0:
            raise MemoryError("cache allocation failed")
        self.t_start = _now()
        self.deadline = self.t_start + self.time_limit
        self.n_trace = 0
        self.tracing = True
        leaf = self._leaf(0)
        if leaf < max_error:
            self._trace_root(leaf, self.cache.entries[root].lb)
        with nogil:
            err = self._solve(0, root, max_error, &lb)
        if err < max_error:
            self._trace_root(err, lb if self.timed_out else err)
        self.tracing = False
        self._raise_if_aborted()
        if self.bounded and self.cache.cache_full:
            raise MemoryError(
                f"the bounded DL8.5 cache ({self.cache.max_size} entries) "
                "could not make room for the paths under evaluation")
        if self.bounded and not self.timed_out and err < INFINITY:
            self._reconstitute_tree(err)
            self._raise_if_aborted()
        if self.cache.out_of_memory:
            raise MemoryError("the DL8.5 cache ran out of memory")
        self.root_error = err
        self.root_lb = lb
        return err, lb

    def anytime(self):
        """The root's anytime trace of the last :meth:`run`.

        Returns
        -------
        list of tuple of (float, float, float)
            ``(seconds since the search started, best error, lower bound)``,
            one point each time the incumbent or the bound of the root
            improved: the root leaf first, the proof (error = bound) last.
        """
        return [
            (self.trace[3 * i], self.trace[3 * i + 1], self.trace[3 * i + 2])
            for i in range(self.n_trace)
        ]

    # --------------------------------------------------- reconstruction
    def tree_arrays(self):
        """Rebuild the best tree found from the cache.

        Returns
        -------
        feature, left, right : list of int
        value : list of list of float
            Class supports per node.
        """
        if self._recon_out is not None:
            return self._recon_out
        out = ([], [], [], [])
        self._node_loss = []
        self._root_cover()
        self._rebuild(0, out)
        self._raise_if_aborted()
        return out

    def node_losses(self):
        """Loss of each node of :meth:`tree_arrays` taken as one leaf."""
        if self._node_loss is None:
            self.tree_arrays()
        return list(self._node_loss)

    # -------------------------------------------- bounded cache (issue 5)
    def _reconstitute_tree(self, double err):
        """reconstituteWipedNodes: walk the optimal tree from the root and
        re-solve the nodes whose entries were wiped, with the tight bounds
        of the paper (exact error = parent - sibling; upper bound + 1).

        The tree is emitted during the walk (``tree_arrays`` returns it), so
        a subtree may be wiped again once emitted.
        """
        cdef double t0 = _now(), tl = self.time_limit
        cdef int node
        out = ([], [], [], [])
        self._node_loss = []
        self.time_limit = 0.0   # the search is over: no deadline here
        try:
            self._root_cover()
            got = self._reconstitute(0, err, err + 1.0, out, &node)
        finally:
            self.time_limit = tl
        if self.cache.cache_full or self.cache.out_of_memory:
            raise MemoryError("the bounded DL8.5 cache ran out of room "
                              "while reconstituting wiped nodes")
        if abs(got - err) > 1e-6 * max(1.0, abs(err)):  # pragma: no cover
            raise RuntimeError(f"DL8.5 reconstitution found error {got}, "
                               f"the search proved {err}")
        self._recon_out = out
        self.reconstitution_ms = 1000.0 * (_now() - t0)

    cdef double _reconstitute(self, int d, double lo, double hi, tuple out,
                              int* node_out) except? -1.0:
        """Emit the optimal subtree of the depth-d itemset (cover and items
        at depth d), whose error is known to lie in [lo, hi); re-solve it
        when its entry is gone. Returns its error."""
        cdef int L = self.max_depth + 1, r = self.max_depth - d, f, node, c
        cdef int ln, rn
        cdef Py_ssize_t e = self.cache.find(self.items + d * L, d, False)
        cdef Py_ssize_t e0, e1
        cdef double leaf = self._leaf(d), err, lb, left, right, tol
        cdef Entry* ent
        self.cache.cur_path[d] = <int32_t>e
        if e >= 0 and (self.cache.entries[e].flags & ENTRY_SOLVED):
            err = self.cache.entries[e].error
            f = self.cache.entries[e].feature
        elif r == 0:
            err = leaf
            f = FEATURE_LEAF
        elif r <= self.d2_depth:
            err = self._depth2(d, r, leaf, &f)
        else:
            self.n_reconstituted += 1
            e = self.cache.find(self.items + d * L, d, True)
            if e < 0:
                raise MemoryError("the bounded DL8.5 cache ran out of room")
            ent = &self.cache.entries[e]
            if lo > ent.lb:
                ent.lb = lo
            err = self._solve(d, e, hi, &lb)
            ent = &self.cache.entries[e]
            if not (err < hi) or not (ent.flags & ENTRY_SOLVED):  # pragma: no cover
                raise RuntimeError("DL8.5 reconstitution: wiped node not re-solved")
            f = ent.feature
        if r == 0 or f < 0:
            f = FEATURE_LEAF
        feature, left_, right_, value = out
        node = len(feature)
        node_out[0] = node
        feature.append(f)
        left_.append(-1)
        right_.append(-1)
        value.append([self.sup[d * self.K + c] for c in range(self.K)])
        self._node_loss.append(leaf)
        if f == FEATURE_LEAF:
            return err
        # bounds of the left child from its sibling when that one is known
        tol = 1e-9 * (err if err > 1.0 else 1.0)
        e0 = self._child_entry(d, f, 0, False)
        e1 = self._child_entry(d, f, 1, False)
        if e0 >= 0 and (self.cache.entries[e0].flags & ENTRY_SOLVED):
            left = self.cache.entries[e0].error
            lo, hi = left - tol, left + 1.0
        elif e1 >= 0 and (self.cache.entries[e1].flags & ENTRY_SOLVED):
            left = err - self.cache.entries[e1].error
            lo, hi = left - tol, left + 1.0
        else:
            lo, hi = 0.0, err + 1.0
        self._make_child(d, f, 0)
        left = self._reconstitute(d + 1, lo, hi, out, &ln)
        right = err - left
        self._make_child(d, f, 1)
        right = self._reconstitute(d + 1, right - tol, right + 1.0, out, &rn)
        left_[node] = ln
        right_[node] = rn
        return left + right

    cdef int _rebuild(self, int d, tuple out) except -1:
        cdef Py_ssize_t e = self.cache.find(self.items + d * (self.max_depth + 1), d, False)
        cdef double leaf = self._leaf(d)
        cdef int f = FEATURE_NONE, r = self.max_depth - d, node, c
        cdef Entry* ent
        if e >= 0:
            ent = &self.cache.entries[e]
            if ent.error < INFINITY:
                f = ent.feature
        if (f == FEATURE_NONE and 1 <= r <= self.d2_depth
                and not (leaf <= self.eps or self._rows(d) < 2 * self.min_sup)):
            self._depth2(d, r, leaf, &f)
        if r == 0 or f < 0:
            f = FEATURE_LEAF
        feature, left, right, value = out
        node = len(feature)
        feature.append(f)
        left.append(-1)
        right.append(-1)
        value.append([self.sup[d * self.K + c] for c in range(self.K)])
        self._node_loss.append(leaf)
        if f == FEATURE_LEAF:
            return node
        self._make_child(d, f, 0)
        left[node] = self._rebuild(d + 1, out)
        self._make_child(d, f, 1)
        right[node] = self._rebuild(d + 1, out)
        return node

    def stats(self):
        """Search counters."""
        return {
            "cache_entries": int(self.cache.n_entries),
            "itemsets_explored": int(self.n_explored),
            "cache_hits": int(self.n_hits),
            "depth2_calls": int(self.n_d2),
            "similarity_prunes": int(self.n_sim_pruned),
            "timeout": bool(self.timed_out),
            "kernel_isa": kernel_isa(),
            **self.cache.stats(),
            "reconstitution_ms": float(self.reconstitution_ms),
            "reconstituted_nodes": int(self.n_reconstituted),
        }
