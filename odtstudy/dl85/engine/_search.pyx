# cython: language_level=3
"""The DL8.5 search over 0/1 features, for every leaf objective (C-level Cython).

Responsibility: the split search of 0/1 data. :class:`Searcher` extends the
search skeleton (``_skeleton.Skeleton``: the node protocol, the failure
bound, the time limit, the anytime trace, ``run`` and the rebuild of the
tree) and adds what is particular to itemsets: the covers of the search
path, the order of the candidate features, the hierarchical upper bound
over the two children of a feature, the similarity lower bound and the
depth-2 solver. It is given a leaf objective (``_objective.pyx``) that
prices covers and declares which bounds hold; it does not know what a leaf
costs. The engine is split by responsibility, as scikit-learn splits
``_tree`` / ``_splitter`` / ``_criterion``:

* ``_kernels.h`` / ``_kernels.pxd``: ISA kernels (popcount, compaction,
  two-class pair counts and quadrants, pair sums of y and bit selection
  for the order statistics);
* ``_covers.pyx``: the sparse covers of the search path and their
  operations (root, child, class supports, rows, intersections);
* ``_depth2.pyx``: the depth-2 solvers over class counts and over packed
  rows in target order (absolute / pinball losses, unit weights), and the
  dispatch to the weighted ones;
* ``_weighted.pyx``: the weighted pair statistics and their depth-2 solver;
* ``_objective.pyx``: the leaf objectives; ``_cache.pyx``: the cache;
* ``_skeleton.pyx``: what every search does (``_solve``, ``run``, the
  rebuild), with hooks for what differs;
* ``_search.pyx`` (this module): the 0/1 split search and its hooks;
  ``_numeric.pyx``: the numeric one.

No Python objects in the hot loop (a Python objective calls back with the
GIL, batched); the modules call each other through ``cdef`` methods
declared in their ``.pxd``.

Search
------
The skeleton's ``_solve`` is DL8.5's recursion (Aglin, Nijssen & Schaus,
AAAI 2020); over itemsets, with this module's hooks (``_open``, ``_splits``,
``_extra_lb``, ...), it has the MurTree refinements (Demirović et al., JMLR
2022) listed in the package's methods notes:

* hierarchical upper bound: a node looks for a tree with error ``< ub``;
  the first child gets ``ub - lb(second)``, the second ``ub - err(first)``;
* cache of itemsets (``_cache.pyx``) with the best feature, the best error
  and a lower bound; nodes searched without a solution keep the *strong*
  infeasibility bound ``max(lb, ub, min_f LB_f)``;
  with an unbounded cache of ``PEEK_MIN_ENTRIES`` entries or more, the
  children of ``PEEK_CHUNK`` candidates are looked up in one batch
  (``_peek_chunk``);
* purity, depth and minimum-support pruning;
* equivalent splits: a feature that splits a node's cover as one met
  before (x and not-x, columns equal on the cover) is left out
  (``Covers.seen_split``);
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
  pass over the cover's rows. The depth-2 solver (``_depth2.Depth2``) is
  used only when the objective declares ``pair_stats``, and the similarity
  bound only when it declares ``similarity`` (each row's largest loss,
  ``worst``, replaces the row count).
* The cache (``_cache.pyx``) may be bounded (``max_cache_size``): wipes
  free entries off the paths under evaluation (``_open`` and ``_tree_of``
  keep the path in ``cur_path``), and the skeleton's rebuild re-solves the
  wiped nodes of the tree after the search.

The two-class depth-2 kernels (``_kernels.h``) are compiled for several
instruction sets and chosen at import (``kernel_isa()``; ``set_kernel_isa``
for tests; both live in ``_depth2.pyx`` and are re-exported here). The leaf
objective is a plug-in (``_objective.pyx``): the recursion, covers,
similarity bound and depth-2 solvers serve every objective, and use what
the objective declares valid for it.
"""

import numpy as np

cimport cython
cimport numpy as cnp
from libc.math cimport INFINITY, log
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, qsort

from odtstudy.dl85.engine._cache cimport (
    ENTRY_LOCKED,
    ENTRY_SOLVED,
    FEATURE_LEAF,
    FEATURE_NONE,
    Cache,
    Entry,
    HashCache,
    TrieCache,
)
from odtstudy.dl85.engine._covers cimport Covers
from odtstudy.dl85.engine._depth2 cimport Depth2
from odtstudy.dl85.engine._kernels cimport odt_ctz, odt_popcount
from odtstudy.dl85.engine._objective cimport Objective
from odtstudy.dl85.engine._objective import Objective as _Objective
from odtstudy.dl85.engine._skeleton cimport (CACHE_FAILED, NO_ENTRY, SPLIT_EXACT, SPLIT_SEARCHED,
                                      Skeleton, _check_max_depth, _tree_state,
                                      odt_entry_lock, odt_entry_unlock,
                                      odt_load_flags)
from odtstudy.dl85.engine._util cimport KeyIdx, _alloc, _cmp_keyidx, _largest
from odtstudy.dl85.engine._weighted cimport WeightedCore

# the kernels' instruction set lives with the solvers that call them
from odtstudy.dl85.engine._depth2 import KERNEL_LEVELS, kernel_isa, set_kernel_isa

cnp.import_array()


cdef enum:
    BRANCH_DATA = 0
    BRANCH_ASC = 1
    BRANCH_DESC = 2

BRANCHINGS = {"data": BRANCH_DATA, "asc": BRANCH_ASC, "desc": BRANCH_DESC}

cdef enum:
    # candidates whose children's cache entries are looked up together
    PEEK_CHUNK = 16
    # from this many cache entries on (a trie of about 1.5 MiB): a smaller
    # one stays in the core's cache, where batching has no misses to overlap
    # and a loop that ends early would waste the chunk's lookups
    PEEK_MIN_ENTRIES = 1 << 16

cdef Py_ssize_t _peek_min_entries = PEEK_MIN_ENTRIES


def set_peek_min_entries(n=None):
    """Batch the cache lookups from ``n`` entries on (``None``: the default,
    ``PEEK_MIN_ENTRIES``); for tests. Returns the previous value."""
    global _peek_min_entries
    old = int(_peek_min_entries)
    _peek_min_entries = PEEK_MIN_ENTRIES if n is None else int(n)
    return old


cdef inline double _xlogx(double x) noexcept nogil:
    return x * log(x) if x > 0 else 0.0


cdef int _one_quantile_on_threads(int quantiles, int helpers) except -1:
    """Threads search one quantile at a time: refuse several with helpers."""
    if quantiles > 1 and helpers > 0:
        raise ValueError("n_jobs > 1 searches one quantile at a time: fit "
                         "each quantile apart or set n_jobs=1")
    return 0


@cython.final
cdef class Searcher(Skeleton):
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

    cdef int n, m, K, W, branching
    cdef bint use_sim, use_d2, dl8, dynamic
    cdef int d2_depth         # subtrees up to this depth go to a direct solver
    cdef Covers cv            # the covers of the search path (``_covers.pyx``)
    cdef Depth2 d2            # the depth-2 solvers (``_depth2.pyx``)
    cdef KeyIdx* order
    cdef int32_t* pk_items    # scratch: the itemsets of a chunk's children
    cdef Py_ssize_t* pk_entries   # per depth: their cache entries (``_peek_chunk``)
    cdef double* sup
    # similarity bound: two remembered covers per depth
    cdef uint64_t* sim_words
    cdef int32_t* sim_idx
    cdef int* sim_nnz
    cdef double* sim_val
    cdef double* sim_size
    cdef readonly Cache cache
    cdef bint peek_free           # threads look the trie up outside its lock
    cdef readonly long long n_d2, n_sim_pruned
    # the leaf objective (``_objective.pyx``); ``weighted``: its class
    # supports / losses are not popcounts (the objective computes them)
    cdef readonly Objective objective
    cdef bint error_counts, weighted_error   # the objective's declarations
    cdef WeightedCore wcore
    cdef bint weighted
    cdef double sim_scale     # counts: largest loss one row adds to a leaf
    cdef double* ntot         # rows of the cover per depth
    # several quantiles (``quantiles``): one cache slot each, searched one
    # after the other (``select_quantile``); the depth-2 subtrees are solved
    # for the current one and every later one at once (``_depth2_shared``)
    cdef int nq, qk
    cdef bint q_shared        # the depth-2 solver serves every quantile
    cdef double* qtau
    cdef double* qeps         # purity of each quantile
    cdef double* qleaf        # scratch: a cover's leaf loss per quantile
    cdef double* qerr         # scratch: its depth-2 optimum per quantile
    cdef int* qf              # and root feature
    # the floor (``set_floor``): rows carrying the loss of their group of
    # identical rows, and those losses (per row, 0 elsewhere)
    cdef uint64_t* fl_mask
    cdef double* fl_val

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
        _check_max_depth(max_depth)
        D = max_depth + 1
        W = self.W
        m = self.m
        K = self.K
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
        self.error_counts = objective.error_counts
        self.weighted_error = objective.weighted_error
        # the root's incumbent improves at most once per feature, plus the
        # leaf and the final proof
        self._init_skeleton(max_depth, min_sup, time_limit,
                            use_infeasibility_lb and not dl8, max_cache_size, self.m + 3)
        self.abort_flag = &self.objective.aborted
        self.use_sim = (use_similarity_lb and not dl8 and min_sup == 1
                        and objective.similarity)
        self.use_d2 = use_depth2_solver and not dl8 and objective.pair_stats
        self.d2_depth = 2 if self.use_d2 else 0
        if use_depth2_solver and not dl8 and objective.order_stats:
            # order statistics: a depth-2 solver over packed rows in target
            # order for unit weights, a depth-1 solver over rows otherwise
            self.d2_depth = 2 if objective.ybytes != NULL else 1
        self.direct_depth = self.d2_depth
        self.first_descent = time_limit > 0 and not dl8
        self.dynamic = not dl8
        if cache == "trie":
            self.cache = TrieCache(max_depth)
        elif cache == "hash":
            self.cache = HashCache(max_depth)
        else:
            raise ValueError(f"unknown cache {cache!r}")
        if self.bounded:
            # raises ValueError when the bound is too small for max_depth
            self.cache.configure(max_cache_size, wipe_factor, wipe_strategy)
        self.peek_free = self.cache.concurrent_peeks()
        self.cv = Covers(cols, cmask, n_rows, max_depth)
        self.weighted = not objective.counts
        self.eps = 0.0
        self.sim_scale = objective.worst_max if objective.counts else 1.0
        self.wcore = objective.core
        if self.wcore is not None:
            if self.weighted_error:
                # leaf error = total weight - largest class weight
                self.eps = 1e-12 * self.wcore.total_weight
            if self.use_d2 and max_depth >= 3:
                self.wcore.enable_sibling_counts()
        self.ntot = <double*>_alloc(D * sizeof(double))
        self.d2 = Depth2(self.cv, objective, min_sup, self.use_d2)
        self.order = <KeyIdx*>_alloc(D * (m + 1) * sizeof(KeyIdx))
        self.pk_items = <int32_t*>_alloc(2 * PEEK_CHUNK * D * sizeof(int32_t))
        self.pk_entries = <Py_ssize_t*>_alloc(D * 2 * PEEK_CHUNK * sizeof(Py_ssize_t))
        self.sup = <double*>_alloc(D * K * sizeof(double))
        self.sim_words = <uint64_t*>_alloc(2 * D * W * sizeof(uint64_t))
        self.sim_idx = <int32_t*>_alloc(2 * D * W * sizeof(int32_t))
        self.sim_nnz = <int*>_alloc(2 * D * sizeof(int))
        self.sim_val = <double*>_alloc(2 * D * sizeof(double))
        self.sim_size = <double*>_alloc(2 * D * sizeof(double))
        cdef int i
        for i in range(2 * D):
            self.sim_val[i] = -1.0
        self.cv.root()
        if self.bounded:
            # the itemsets of the paths under evaluation, for the wipes
            self.cache.cur_items = self.cv.items
            self.cache.cur_stride = max_depth + 1

    def __dealloc__(self):
        if self.cache is not None:
            self.cache.cur_items = NULL
        free(self.ntot)
        free(self.order)
        free(self.pk_items)
        free(self.pk_entries)
        free(self.sup)
        free(self.sim_words)
        free(self.sim_idx)
        free(self.sim_nnz)
        free(self.sim_val)
        free(self.sim_size)
        free(self.qtau)
        free(self.qeps)
        free(self.qleaf)
        free(self.qerr)
        free(self.qf)
        free(self.fl_mask)
        free(self.fl_val)

    def set_floor(self, const double[::1] values):
        """Give each row ``values[i]`` (>= 0) to the floor of the covers
        holding it (``_floor``): the loss of its group of identical rows on
        one row of the group, 0 on the others. The floor of a cover is then
        the sum of its groups' losses, a lower bound of any tree over it."""
        cdef Py_ssize_t i
        if values.shape[0] != self.n:
            raise ValueError("set_floor takes one value per row")
        if self.nq:
            raise ValueError("the floor is per quantile: not with several")
        free(self.fl_mask)
        free(self.fl_val)
        self.fl_mask = NULL
        self.fl_val = NULL
        for i in range(self.n):
            if values[i] > 0.0:
                break
        else:
            return
        self.fl_mask = <uint64_t*>_alloc(self.W * sizeof(uint64_t))
        self.fl_val = <double*>_alloc(self.n * sizeof(double))
        for i in range(self.W):
            self.fl_mask[i] = 0
        for i in range(self.n):
            self.fl_val[i] = values[i]
            if values[i] > 0.0:
                self.fl_mask[i >> 6] |= (<uint64_t>1) << (i & 63)

    cdef double _floor(self, int d) noexcept nogil:
        cdef int j, nnz = self.cv.cnnz[d]
        cdef uint64_t* w = self.cv.cov + d * self.W
        cdef int32_t* ix = self.cv.cidx + d * self.W
        cdef uint64_t x
        cdef double total = 0.0
        if self.fl_mask == NULL:
            return 0.0
        for j in range(nnz):
            x = w[j] & self.fl_mask[ix[j]]
            while x:
                total += self.fl_val[64 * ix[j] + odt_ctz(x)]
                x &= x - 1
        return total

    # ------------------------------------------------------------ leaves
    cdef double _leaf(self, int d) noexcept nogil:
        """Loss of the depth-d cover as one leaf; fills ``sup[d]`` (class
        supports) and ``ntot[d]`` (rows)."""
        cdef double total
        cdef double* s = self.sup + d * self.K
        if not self.weighted:
            total = self.cv.class_supports(d, s)
            self.ntot[d] = total
            if self.error_counts:
                return total - _largest(s, self.K)
            return self.objective.class_loss(s)
        self.ntot[d] = self.cv.rows(d)
        return self.objective.leaf(self.cv.cov + d * self.W, self.cv.cidx + d * self.W,
                                   self.cv.cnnz[d], s)

    cdef double _sim_size(self, int d) noexcept nogil:
        """Size of the depth-d cover for the similarity bound: rows, or the
        sum of the objective's per-row worst losses."""
        cdef int c
        cdef double total = 0.0
        if not self.weighted:
            return self.ntot[d]
        if self.weighted_error:
            for c in range(self.K):
                total += self.sup[d * self.K + c]
            return total
        return self.objective.sim_weight(self.cv.cov + d * self.W,
                                         self.cv.cidx + d * self.W, self.cv.cnnz[d])

    cdef inline void _make_child(self, int d, int f, int v) noexcept nogil:
        """Cover and itemset of child ``I + (f, v)`` into depth d + 1."""
        self.cv.make_child(d, f, v)

    cdef Py_ssize_t _child_entry(self, int d, int f, int v, bint create) noexcept nogil:
        """Entry of ``I + (f, v)`` without touching the depth-d+1 buffers."""
        cdef int32_t buf[64]
        self.cv.child_items(d, f, v, buf)
        return self.cache.find(buf, d + 1, create)

    # -------------------------------------------------------- similarity
    cdef double _sim_lb(self, int d) noexcept nogil:
        cdef int s, slot, W = self.W
        cdef uint64_t* old
        cdef double best = 0.0, v
        for s in range(2):
            slot = 2 * d + s
            if self.sim_val[slot] < 0:
                continue
            old = self.sim_words + slot * W
            if self.weighted:
                # sizes are weights: lb >= LB_old - worst(D_old minus D_new)
                v = self.sim_val[slot] - (
                    self.sim_size[slot] - self.objective.sim_common(
                        old, self.cv.cov + d * W, self.cv.cidx + d * W, self.cv.cnnz[d])
                ) - self.eps
                if v > best:
                    best = v
                continue
            v = self.sim_val[slot] - self.sim_scale * (
                self.sim_size[slot] - <double>self.cv.common(old, d))
            if v > best:
                best = v
        return best

    cdef void _sim_store(self, int d, double value) noexcept nogil:
        if not self.use_sim or value <= 0:
            return
        cdef double size = self._sim_size(d)
        cdef int s, j, slot = -1, nnz = self.cv.cnnz[d], W = self.W
        cdef uint64_t* w = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef uint64_t* old
        cdef int32_t* oidx
        cdef double dist, best_dist = INFINITY
        for s in range(2):
            if self.sim_val[2 * d + s] < 0:
                slot = 2 * d + s
                break
        if slot < 0:
            # replace the remembered cover closest to the newcomer
            for s in range(2):
                old = self.sim_words + (2 * d + s) * W
                dist = self.sim_size[2 * d + s] + size - 2.0 * self.cv.common(old, d)
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

    # ------------------------------------------------- the cache (hooks)
    cdef Py_ssize_t _open(self, int d, double* value, bint* solved) noexcept nogil:
        cdef Py_ssize_t e
        cdef Entry* ent
        cdef const int32_t* items = self.cv.items + d * (self.max_depth + 1)
        cdef int known = -1
        if self.share != NULL and self.peek_free:
            # on threads, the itemset's known prefix is found outside the
            # lock: an itemset already cached takes no lock at all
            self._enter()
            known = self.cache.peek_prefix(items, d, &e)
            if known == d:
                ent = &self.cache.entries[e]
                solved[0] = odt_load_flags(<int*>&ent.flags) & ENTRY_SOLVED
                value[0] = ent.error if solved[0] else ent.lb
                self._leave()
                return e
            self._leave()
        self._lock()
        # an insertion that moves an array stops the other threads itself
        # (``Cache.share_world``)
        if known >= 0:
            e = self.cache.find_from(items, d, e, known)
        else:
            e = self.cache.find(items, d, True)
        if e < 0:
            self._unlock()
            self.timed_out = True
            return CACHE_FAILED
        if self.bounded:
            # the path under evaluation (never wiped)
            self.cache.cur_path[d] = <int32_t>e
        ent = &self.cache.entries[e]
        solved[0] = odt_load_flags(<int*>&ent.flags) & ENTRY_SOLVED
        value[0] = ent.error if solved[0] else ent.lb
        self._unlock()
        return e

    # The entry writes: without the lock on threads (``_enter``), each
    # entry's fields under its own lock bit (``_hold`` / ``_release``)
    cdef inline Entry* _hold(self, Py_ssize_t e) noexcept nogil:
        cdef Entry* ent = &self.cache.entries[e]
        if self.share != NULL:
            odt_entry_lock(<int*>&ent.flags, ENTRY_LOCKED)
        return ent

    cdef inline void _release(self, Entry* ent, int set) noexcept nogil:
        """Give the entry back, with the flags ``set`` added."""
        if self.share != NULL:
            odt_entry_unlock(<int*>&ent.flags, ENTRY_LOCKED, set)
        else:
            ent.flags = ent.flags | set

    cdef void _store_solved(self, int d, Py_ssize_t e, double err, int f,
                            int t) noexcept nogil:
        self._enter()
        cdef Entry* ent = self._hold(e)
        ent.error = err
        ent.lb = err
        ent.feature = f
        self._release(ent, ENTRY_SOLVED)
        self._leave()

    cdef void _store_bound(self, int d, Py_ssize_t e, double lb) noexcept nogil:
        self._enter()
        cdef Entry* ent = self._hold(e)
        if lb > ent.lb:
            ent.lb = lb
        self._release(ent, 0)
        self._leave()

    cdef double _keep_incumbent(self, int d, Py_ssize_t e, double err, int f,
                                int t) noexcept nogil:
        cdef double kept
        self._enter()
        cdef Entry* ent = self._hold(e)
        if err < ent.error:
            ent.error = err
            ent.feature = f
        kept = ent.error
        self._release(ent, 0)
        self._leave()
        return kept

    cdef int _tree_of(self, int d, double* err, int* f, int* t) noexcept nogil:
        cdef Py_ssize_t e = self.cache.find(self.cv.items + d * (self.max_depth + 1), d, False)
        cdef Entry* ent
        if self.bounded:
            self.cache.cur_path[d] = <int32_t>e
        if e < 0:
            return NO_ENTRY
        ent = &self.cache.entries[e]
        return _tree_state(ent.error, ent.feature, ent.flags & ENTRY_SOLVED, err, f)

    cdef bint _child_known(self, int d, int f, int t, int side,
                           double* err) noexcept nogil:
        cdef Py_ssize_t e = self._child_entry(d, f, side, False)
        if e >= 0 and (self.cache.entries[e].flags & ENTRY_SOLVED):
            err[0] = self.cache.entries[e].error
            return True
        return False

    cdef bint _cache_full(self) noexcept nogil:
        return self.bounded and self.cache.cache_full

    cdef bint _out_of_memory(self) noexcept nogil:
        return self.cache.out_of_memory

    cdef void _shared(self, bint on) noexcept nogil:
        if on:
            self.cache.share_world(&self.share.growing, self.share.busy,
                                   self.share.n_busy)
        else:
            self.cache.share_world(NULL, NULL, 0)

    # ------------------------------------------------- the nodes (hooks)
    cdef void _root_node(self) noexcept nogil:
        self.cv.root()

    cdef double _leaf_loss(self, int d) noexcept nogil:
        return self._leaf(d)

    cdef double _rows(self, int d) noexcept nogil:
        return self.ntot[d]

    cdef double _extra_lb(self, int d) noexcept nogil:
        return self._sim_lb(d) if self.use_sim else 0.0

    cdef void _remember(self, int d, double value) noexcept nogil:
        self._sim_store(d, value)

    cdef void _child(self, int d, int f, int t, int side) noexcept nogil:
        self.cv.make_child(d, f, side)

    cdef double _direct(self, int d, int r, double leaf, int* f, int* t) noexcept nogil:
        return self._depth2(d, r, leaf, f)

    cdef object _node_value(self, int d):
        return [self.sup[d * self.K + c] for c in range(self.K)]

    cdef int _raise_if_aborted(self) except -1:
        exc = self.objective.pop_error()
        if exc is not None:
            raise exc
        return 0

    # --------------------------------------------------- depth-2 solver
    cdef inline double _depth2(self, int d, int r, double leaf, int* out_f) noexcept nogil:
        """Exact optimum (loss, root feature) of a depth-r (<= 2) subtree
        (``_depth2.Depth2``); ``_leaf(d)`` was called for this cover."""
        return self.d2.solve(d, r, leaf, self.sup + d * self.K, self.ntot[d], self.eps,
                             out_f)

    cdef double _depth2_shared(self, int d, Py_ssize_t e, int r, double leaf,
                               int* out_f) noexcept nogil:
        """``_depth2`` at the current quantile and every later one at once;
        the later ones' optima go to their slots of entry e, solved."""
        cdef int j, k = self.qk, W = self.W
        cdef Entry* ent
        self.qleaf[k] = leaf
        self.objective.quantile_leaves(self.cv.cov + d * W, self.cv.cidx + d * W,
                                       self.cv.cnnz[d], self.qtau + k + 1,
                                       self.nq - k - 1, self.qleaf + k + 1)
        if not self.d2.solve_quantiles(d, r, k, self.qleaf, self.qeps, self.qerr,
                                       self.qf):
            return self._depth2(d, r, leaf, out_f)
        for j in range(k + 1, self.nq):
            ent = &self.cache.slot_entries[j][e]
            if not (ent.flags & ENTRY_SOLVED):
                ent.error = self.qerr[j]
                ent.lb = self.qerr[j]
                ent.feature = self.qf[j]
                ent.flags = ent.flags | ENTRY_SOLVED
        out_f[0] = self.qf[k]
        return self.qerr[k]

    # ----------------------------------------------------- quantiles
    def quantiles(self, taus, double purity_rtol):
        """Search the pinball loss at several quantiles ``taus`` (one cache
        slot each); returns each one's purity tolerance, ``purity_rtol``
        times its root leaf's loss. Then :meth:`select_quantile` and
        :meth:`run` once per quantile, in order."""
        cdef int K = len(taus), j
        _one_quantile_on_threads(K, self.n_helpers)
        if not self.objective.pinball:
            raise ValueError("several quantiles need the quantile objective")
        if self.bounded:
            raise ValueError("several quantiles need an unbounded cache "
                             "(max_cache_size=None)")
        if self.nq or K < 2:
            raise ValueError("quantiles takes at least 2 quantiles, once")
        # the floor is the loss at one quantile: none for several
        free(self.fl_mask)
        self.fl_mask = NULL
        self.floor_source = None
        self.qtau = <double*>_alloc(K * sizeof(double))
        self.qeps = <double*>_alloc(K * sizeof(double))
        self.qleaf = <double*>_alloc(K * sizeof(double))
        self.qerr = <double*>_alloc(K * sizeof(double))
        self.qf = <int*>_alloc(K * sizeof(int))
        for j in range(K):
            self.qtau[j] = taus[j]
        self.cache.use_slots(K)
        self.nq = K
        self.q_shared = self.d2_depth == 2 and self.objective.ybytes != NULL
        if self.q_shared:
            self.d2.quantiles(self.qtau, K)
        self.cv.root()
        self.objective.quantile_leaves(self.cv.cov, self.cv.cidx, self.cv.cnnz[0],
                                       self.qtau, K, self.qleaf)
        for j in range(K):
            self.qeps[j] = purity_rtol * abs(self.qleaf[j])
        self.select_quantile(0, 0.0)
        return [self.qeps[j] for j in range(K)]

    def select_quantile(self, int k, double time_limit):
        """Make quantile k the one :meth:`run` searches, within
        ``time_limit`` seconds (0: none); returns its purity tolerance."""
        cdef int i
        if not 0 <= k < self.nq:
            raise ValueError(f"no quantile {k}")
        self.cache.select_slot(k)
        self.qk = k
        self.objective.select_tau(self.qtau[k])
        self.d2.order_weights(self.objective)
        self.time_limit = time_limit
        self.eps = self.qeps[k]
        # the similarity bound remembers losses of the previous quantile
        for i in range(2 * (self.max_depth + 1)):
            self.sim_val[i] = -1.0
        return self.qeps[k]

    # ------------------------------------------------------- candidates
    cdef int _candidates(self, int d, double total) noexcept nogil:
        """Order the splittable features of the depth-d node into order[d].

        A feature that splits the cover as one taken before (the same split
        or its mirror, e.g. x and not-x) is left out: its subtrees are the
        same, so it cannot beat that one.
        """
        cdef int W = self.W, K = self.K, nnz = self.cv.cnnz[d], j, c, f, nc = 0
        cdef uint64_t* w = self.cv.cov + d * W
        cdef int32_t* ix = self.cv.cidx + d * W
        cdef uint64_t* col
        cdef uint64_t* cm
        cdef uint64_t x, h
        cdef KeyIdx* out = self.order + d * (self.m + 1)
        cdef double* s = self.sup + d * K
        cdef long long cnt
        cdef int tot
        cdef double cond, n1, n0
        # a limited-discrepancy pass tries the highest information gain first
        cdef int branching = BRANCH_DESC if self.restricted else self.branching
        self.cv.new_splits()
        for f in range(self.m):
            col = self.cv.cols + f * W
            h = self.cv.split_hash(d, f, &tot)
            if tot < self.min_sup or total - tot < self.min_sup:
                continue
            if self.cv.seen_split(d, f, h):
                continue
            out[nc].idx = f
            out[nc].key = f
            if branching != BRANCH_DATA:
                # conditional entropy (times n) of the split on f
                n1 = <double>tot
                n0 = total - n1
                cond = _xlogx(n1) + _xlogx(n0)
                for c in range(K):
                    cm = self.cv.cmask + c * W
                    cnt = 0
                    for j in range(nnz):
                        cnt += odt_popcount(w[j] & col[ix[j]] & cm[ix[j]])
                    cond -= _xlogx(<double>cnt) + _xlogx(s[c] - <double>cnt)
                # information gain = H(parent) - cond / n
                out[nc].key = cond if branching == BRANCH_DESC else -cond
            nc += 1
        if branching != BRANCH_DATA and nc > 1:
            qsort(out, nc, sizeof(KeyIdx), _cmp_keyidx)
        return nc

    # ------------------------------------------------------ split search
    cdef double _child_value(self, Py_ssize_t e, bint* solved) noexcept nogil:
        """A child's cached bound (its optimum when ``solved``), 0 when it
        has no entry."""
        solved[0] = False
        if e < 0:
            return 0.0
        cdef Entry* ent = &self.cache.entries[e]
        if odt_load_flags(<int*>&ent.flags) & ENTRY_SOLVED:
            solved[0] = True
            return ent.error
        return ent.lb

    cdef void _peek_chunk(self, int d, int i0, int i1) noexcept nogil:
        """Cache entries of both children of the depth-d node's candidates
        ``i0 .. i1 - 1`` into ``pk_entries`` (unbounded cache: an entry, once
        made, stays; one made by another thread meanwhile is found by
        ``_open``). On threads the trie is read outside the lock, in a
        guarded section, where the cache allows it (``concurrent_peeks``)."""
        cdef int j, v, n = d + 1
        cdef int32_t* buf = self.pk_items
        cdef KeyIdx* order = self.order + d * (self.m + 1)
        for j in range(i0, i1):
            for v in range(2):
                self.cv.child_items(d, order[j].idx, v, buf + (2 * (j - i0) + v) * n)
        cdef bint guarded = self.peek_free
        if guarded:
            self._enter()
        else:
            self._lock()
        self.cache.peek_many(buf, n, 2 * (i1 - i0), self.pk_entries + d * 2 * PEEK_CHUNK)
        if guarded:
            self._leave()
        else:
            self._unlock()

    cdef int _splits(self, int d, Py_ssize_t e, double ub, double lb, double leaf,
                     double* best_out, int* f_out, int* t_out,
                     double* min_lb_out) noexcept nogil:
        """The features of the depth-d itemset (entry e), in order: both
        children of a feature are solved under the hierarchical upper bound
        unless their cached or similarity bounds exceed it; subtrees of
        depth <= ``d2_depth`` go to the depth-2 solver. A search cut short
        (time-out, pass) answers in ``min_lb`` the least bound of the leaf
        and every candidate (``_unreached`` for those it did not reach)."""
        cdef double s, best, cur_ub, min_lb = leaf, v0, v1, lbs
        cdef double b1, b2, err1, err2, l1, l2
        cdef double all_lb = leaf     # the least bound of every candidate
        cdef int r = self.max_depth - d, f, nc, n_all, i, first, bestf
        cdef int rest = -1            # the first candidate not reached
        cdef Py_ssize_t e0, e1
        cdef bint solved0, solved1
        cdef bint batch = (not self.dl8 and not self.bounded
                           and self.cache.n_entries >= _peek_min_entries)
        cdef int pk_start = 0, pk_end = 0
        cdef Py_ssize_t* pk = self.pk_entries + d * 2 * PEEK_CHUNK
        if r <= self.d2_depth:
            self.n_d2 += 1
            if self.q_shared and self.qk < self.nq - 1:
                best_out[0] = self._depth2_shared(d, e, r, leaf, &f)
            else:
                best_out[0] = self._depth2(d, r, leaf, &f)
            f_out[0] = f
            return SPLIT_EXACT
        n_all = self._candidates(d, self._rows(d))
        nc = self._breadth(d, n_all)
        if leaf < ub:
            best = leaf
            bestf = FEATURE_LEAF
            cur_ub = leaf
        else:
            best = INFINITY
            bestf = FEATURE_NONE
            cur_ub = ub
        for i in range(nc):
            if lb >= cur_ub:
                if lb < min_lb:
                    min_lb = lb
                if lb < all_lb:
                    all_lb = lb     # the node's bound holds for every split
                rest = n_all
                break
            if not self._claim(d, i, &cur_ub):
                continue
            f = self.order[d * (self.m + 1) + i].idx
            if self.dl8:
                v0 = 0.0
                v1 = 0.0
            else:
                if batch and i >= pk_end:
                    pk_start = i
                    pk_end = i + PEEK_CHUNK if i + PEEK_CHUNK < nc else nc
                    self._peek_chunk(d, pk_start, pk_end)
                if batch:
                    # the entries are known: no trie walk, so no lock
                    self._enter()
                    e0 = pk[2 * (i - pk_start)]
                    e1 = pk[2 * (i - pk_start) + 1]
                else:
                    self._lock()
                    e0 = self._child_entry(d, f, 0, False)
                    e1 = self._child_entry(d, f, 1, False)
                v0 = self._child_value(e0, &solved0)
                v1 = self._child_value(e1, &solved1)
                if batch:
                    self._leave()
                else:
                    self._unlock()
                if self.use_sim and v0 + v1 < cur_ub:
                    # similarity bounds of both children before any solving
                    if not solved0:
                        self._make_child(d, f, 0)
                        s = self._sim_lb(d + 1)
                        if s > v0:
                            v0 = s
                    if not solved1:
                        self._make_child(d, f, 1)
                        s = self._sim_lb(d + 1)
                        if s > v1:
                            v1 = s
                    if v0 + v1 >= cur_ub:
                        self.n_sim_pruned += 1
                if v0 + v1 >= cur_ub:
                    if v0 + v1 < min_lb:
                        min_lb = v0 + v1
                    if v0 + v1 < all_lb:
                        all_lb = v0 + v1
                    continue
            # larger lower bound first (ties: the left branch, not-f)
            first = 1 if (self.dynamic and v1 > v0) else 0
            lbs = v0 if first else v1
            self._spend(d, i)
            self._make_child(d, f, first)
            b1 = INFINITY if self.dl8 else cur_ub - lbs
            err1 = self._solve(d + 1, b1, &l1)
            if not (err1 < b1) or (self.dl8 and err1 >= cur_ub):
                if not self.timed_out and l1 + lbs < min_lb:
                    min_lb = l1 + lbs
                if l1 + lbs < all_lb:
                    all_lb = l1 + lbs
                if self.timed_out:
                    rest = i + 1
                    break
                continue
            self._make_child(d, f, 1 - first)
            b2 = INFINITY if self.dl8 else cur_ub - err1
            err2 = self._solve(d + 1, b2, &l2)
            if l1 + l2 < all_lb:
                all_lb = l1 + l2
            if err1 + err2 < cur_ub:
                best = err1 + err2
                bestf = f
                cur_ub = best
                if d == 0:
                    self._trace_root(best, lb)
                if self.bounded and best < self.cache.entries[e].error:
                    # current best solution, kept by the wipes
                    self.cache.entries[e].error = best
                    self.cache.entries[e].feature = bestf
            elif not self.timed_out and err1 + l2 < min_lb:
                min_lb = err1 + l2
            if self.timed_out:
                rest = i + 1
                break
        best_out[0] = best
        f_out[0] = bestf
        min_lb_out[0] = min_lb
        if self.timed_out or self.restricted:
            if rest < 0:
                rest = nc
            min_lb_out[0] = self._unreached(d, rest, n_all, lb, all_lb)
        return SPLIT_SEARCHED

    cdef double _unreached(self, int d, int i0, int n_all, double lb,
                           double all_lb) noexcept nogil:
        """``all_lb`` lowered to the bounds of the depth-d node's candidates
        ``i0 .. n_all - 1``, not searched: for each child its optimum or
        bound in the cache, its similarity bound or its floor, whichever is
        greatest. Stops once ``all_lb`` is at most the node's floor or ``lb``
        (no candidate can lower it then). Returns it, or the node's floor
        when greater (a bound of the node, not of a candidate)."""
        cdef double floor = self._floor(d), v0, v1, s
        cdef int i, f, v
        cdef bint solved0, solved1
        cdef Py_ssize_t e0, e1
        for i in range(i0, n_all):
            if all_lb <= floor or all_lb <= lb:
                break
            f = self.order[d * (self.m + 1) + i].idx
            self._lock()
            e0 = self._child_entry(d, f, 0, False)
            e1 = self._child_entry(d, f, 1, False)
            v0 = self._child_value(e0, &solved0)
            v1 = self._child_value(e1, &solved1)
            self._unlock()
            for v in range(2):
                if solved1 if v else solved0:
                    continue
                self._make_child(d, f, v)
                s = self._floor(d + 1)
                if self.use_sim:
                    s = max(s, self._sim_lb(d + 1))
                if v:
                    v1 = max(v1, s)
                else:
                    v0 = max(v0, s)
            if v0 + v1 < all_lb:
                all_lb = v0 + v1
        # the floor bounds the node itself, whatever its candidates' bounds
        return all_lb if all_lb > floor else floor

    # ------------------------------------------------------------ results
    def tree_arrays(self):
        """The best tree found (rebuilt by :meth:`run`).

        Returns
        -------
        feature, left, right : list of int
        value : list of list of float
            Class supports per node.
        """
        feature, _, left, right, value, _ = self._tree_lists()
        return feature, left, right, value

    def node_losses(self):
        """Loss of each node of :meth:`tree_arrays` taken as one leaf."""
        return list(self._tree_lists()[5])

    cdef int _adopt(self, Skeleton helper) except -1:
        cdef Searcher h = <Searcher?>helper
        _one_quantile_on_threads(self.nq, 1)
        if h.n != self.n or h.m != self.m or h.K != self.K:
            raise ValueError("a helper searcher must be made with the same data "
                             "as the searcher it helps")
        h.cache = self.cache
        return 0

    def stats(self):
        """Search counters (of every thread)."""
        cdef Searcher h
        cdef long long n_d2 = self.n_d2, n_sim = self.n_sim_pruned + self.n_lb_pruned
        cdef long long n_diff = self.d2.sp_hits
        for h in self.helpers:
            n_d2 += h.n_d2
            n_sim += h.n_sim_pruned
            n_diff += h.d2.sp_hits
        return {
            "cache_entries": int(self.cache.n_entries),
            "itemsets_explored": int(self.n_explored),
            "cache_hits": int(self.n_hits),
            "depth2_calls": int(n_d2),
            "depth2_by_difference": int(n_diff),
            "similarity_prunes": int(n_sim),
            "timeout": bool(self.timed_out),
            "kernel_isa": kernel_isa(),
            **self.thread_stats(),
            **self.cache.stats(),
            "reconstitution_ms": float(self.reconstitution_ms),
            "reconstituted_nodes": int(self.n_reconstituted),
        }
