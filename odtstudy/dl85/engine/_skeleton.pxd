# cython: language_level=3
"""Declarations of the search skeleton shared by the DL8.5 searches (see
``_skeleton.pyx``)."""

cimport cython
from libc.math cimport INFINITY

from odtstudy.dl85.engine._util cimport _now, _thread_cpu_now, _trace_point


cdef enum:
    MAX_DEPTH = 60        # the deepest tree the searches grow (their arrays' size)

cdef enum:
    NO_ENTRY = -1         # ``_open``: the node has no cache entry (yet)
    CACHE_FAILED = -2     # ``_open``: the cache could not make one (full)

cdef enum:
    SPLIT_SEARCHED = 0    # ``_splits``: best / split / min_lb of a full search
    SPLIT_EXACT = 1       # ``_splits``: best / split is the node's optimum

cdef enum:
    TREE_NONE = 0         # ``_tree_of``: no tree known for the node
    TREE_INCUMBENT = 1    # the best tree found so far (a timed-out search)
    TREE_SOLVED = 2       # the node's optimal tree


cdef inline int _tree_state(double error, int feature, bint solved, double* err,
                            int* f) noexcept nogil:
    """``_tree_of``'s answer for an entry of best loss ``error`` (split
    ``feature``, optimal when ``solved``)."""
    if error == INFINITY:
        return TREE_NONE
    err[0] = error
    f[0] = feature
    return TREE_SOLVED if solved else TREE_INCUMBENT


cdef inline int _check_max_depth(int max_depth) except -1:
    if max_depth < 0 or max_depth > MAX_DEPTH:
        raise ValueError(f"max_depth must be in [0, {MAX_DEPTH}]")
    return 0


cdef extern from "_spin.h":
    void odt_spin_lock(int* lock) noexcept nogil
    void odt_spin_unlock(int* lock) noexcept nogil
    double odt_load_double(const double* x) noexcept nogil
    void odt_store_double(double* x, double v) noexcept nogil
    void odt_guard_enter(int* busy, const int* growing) noexcept nogil
    void odt_guard_leave(int* busy) noexcept nogil
    void odt_stop_world(int* growing, int** busy, int n) noexcept nogil
    void odt_resume_world(int* growing) noexcept nogil
    void odt_entry_lock(int* flags, int bit) noexcept nogil
    void odt_entry_unlock(int* flags, int bit, int set) noexcept nogil
    int odt_load_flags(const int* flags) noexcept nogil


ctypedef struct Share:
    # the root of a search on several threads (``_splits_shared``)
    int lock                 # held for every cache access and the fields below
    int next                 # root candidates before it are taken by a thread
    double best              # the best root loss any thread found
    double lb                # the root's lower bound: best <= lb ends the search
    double* trace            # the main searcher's anytime trace
    int* n_trace
    int trace_cap
    double t_start
    bint tracing
    # the 0/1 search's entries, read and written outside the lock
    # (``_enter`` / ``_leave``, ``_spin.h``)
    int growing              # an array is being moved: wait (``Cache.share_world``)
    int** busy               # each thread's flag: inside a guarded section
    int n_busy
    # each thread's work at the root that another may share (``_root_queue``;
    # NULL: none), as many as ``busy``
    void** queues


cdef class Skeleton:
    cdef int max_depth, min_sup
    cdef int direct_depth       # subtrees of this depth or less: ``_direct``
    cdef bint use_inf_lb
    cdef double eps             # purity: a leaf of loss <= eps is not split
    cdef double time_limit, deadline, t_start, t_limit_run
    cdef double tick            # > 0: the clock counts ``_check_time`` calls,
    cdef long long ticks        # ``tick`` seconds each (``set_node_clock``)
    cdef bint cpu_clock         # the clock is the thread's CPU time (a rebuild)
    cdef double rebuild_end     # the rebuild's deadline on that clock
    # the left child's loss in the loss a search of the depth-d node last
    # returned with a split (< 0: unknown), for the entry that keeps it
    cdef double counted_left[MAX_DEPTH + 1]
    cdef readonly bint timed_out
    cdef public bint first_descent  # a greedy tree first (``_descend``)
    cdef double probe_seconds   # the exact search before the descent
    cdef bint restart_bounded   # the search after the descent looks for a
                                # tree better than the best found only
    cdef bint restricted        # a limited-discrepancy pass (``_passes``)
    cdef bint cut               # the pass left out a candidate somewhere
    cdef int* disc              # discrepancies left per depth in a pass
    cdef bint _never            # the abort flag of a search that cannot abort
    cdef const bint* abort_flag
    cdef bint bounded           # the cache may wipe entries
    cdef Py_ssize_t max_cache_size
    cdef double* trace          # the root's anytime trace (3 doubles a point)
    cdef int n_trace, trace_cap
    cdef bint tracing
    cdef readonly long long n_explored, n_hits, n_lb_pruned, n_reconstituted
    cdef readonly double root_error, root_lb, reconstitution_ms
    cdef tuple _out             # the rebuilt tree (lists, see ``_emit``)
    # threads (``n_jobs``): helper searchers on the same cache; the root's
    # candidates go to the first thread that reaches them
    cdef list helpers
    cdef list _threads
    cdef object _interrupt      # an exception met while waiting for the threads
    # called (once) when a search is first cut short: gives the searchers
    # their floor (``_floor``), which only bounds searches cut short
    cdef public object floor_source
    cdef bint _stopped          # the abort flag after it
    cdef const bint* _saved_flag
    cdef int n_helpers
    cdef Share* share           # NULL unless the root is searched on threads
    cdef int busy               # in a guarded section (``_enter``)
    cdef int sh_kind, sh_f, sh_t   # a helper's root answer
    cdef readonly long long n_claimed   # root candidates this thread searched
    cdef double sh_best, sh_min_lb

    cdef int _adopt(self, Skeleton helper) except -1
    cdef void* _root_queue(self) noexcept nogil
    cdef void _launch(self, Py_ssize_t e, double ub, double lb) noexcept
    cdef void _gather(self, bint combine, double* best, int* f, int* t,
                      double* min_lb) noexcept
    cdef int _init_skeleton(self, int max_depth, int min_sup, double time_limit,
                            bint use_inf_lb, Py_ssize_t max_cache_size,
                            int trace_cap) except -1

    @cython.final
    cdef double _solve(self, int d, double ub, double* out_lb) noexcept nogil
    @cython.final
    cdef double _passes(self, double best, double until, bint while_improving,
                        double* bound) noexcept nogil
    @cython.final
    cdef Py_ssize_t _start(self, double* value, bint* solved) except -3
    @cython.final
    cdef int _splits_shared(self, Py_ssize_t e, double ub, double lb, double leaf,
                            double* best, int* f, int* t, double* min_lb) noexcept nogil
    @cython.final
    cdef bint _claim_root(self, int i, double* cur_ub) noexcept nogil
    @cython.final
    cdef void _trace_shared(self, double obj, double lb) noexcept nogil
    @cython.final
    cdef double _descend(self, int d, Py_ssize_t e, double leaf) noexcept nogil

    cdef inline double _clock(self) noexcept nogil:
        """The search's clock: seconds, or the node clock of the tests
        (``set_node_clock``), which makes a stop independent of the
        machine's speed."""
        if self.tick > 0:
            self.ticks += 1
            return self.ticks * self.tick
        if self.cpu_clock:
            return _thread_cpu_now()
        return _now()

    cdef inline bint _check_time(self) noexcept nogil:
        if self.timed_out:
            return True
        if self.time_limit > 0 and self._clock() >= self.deadline:
            self.timed_out = True
        if self.abort_flag[0]:
            # a Python loss raised: stop (``run`` re-raises)
            self.timed_out = True
        if self.share != NULL and odt_load_double(&self.share.best) <= self.share.lb:
            # another thread found a tree as good as the root's bound: the
            # root is solved (``_splits_shared`` does not count this a time-out)
            self.timed_out = True
        return self.timed_out

    cdef inline int _breadth(self, int d, int n) noexcept nogil:
        """How many of the depth-d node's ``n`` ordered candidate splits to
        try: all, or those within the discrepancy left in a pass."""
        if self.restricted and self.disc[d] + 1 < n:
            self.cut = True
            return self.disc[d] + 1
        return n

    cdef inline void _spend(self, int d, int i) noexcept nogil:
        """The children of the depth-d node's i-th candidate get the
        discrepancy left minus i."""
        if self.restricted:
            self.disc[d + 1] = self.disc[d] - i

    cdef inline void _lock(self) noexcept nogil:
        """Take the cache (searches on several threads only)."""
        if self.share != NULL:
            odt_spin_lock(&self.share.lock)

    cdef inline void _unlock(self) noexcept nogil:
        if self.share != NULL:
            odt_spin_unlock(&self.share.lock)

    cdef inline void _enter(self) noexcept nogil:
        """Read or write cache entries without the lock (threads only):
        waits while another thread moves the entry array."""
        if self.share != NULL:
            odt_guard_enter(&self.busy, &self.share.growing)

    cdef inline void _leave(self) noexcept nogil:
        if self.share != NULL:
            odt_guard_leave(&self.busy)

    cdef inline bint _claim(self, int d, int i, double* cur_ub) noexcept nogil:
        """Whether this thread searches the depth-d node's i-th candidate:
        always, but at the root of a search on several threads only if no
        other thread took it; there ``cur_ub`` is lowered to the best root
        loss any thread found."""
        if d != 0 or self.share == NULL:
            return True
        return self._claim_root(i, cur_ub)

    cdef inline void _trace_root(self, double obj, double lb) noexcept nogil:
        if self.share != NULL:
            self._trace_shared(obj, lb)
        elif self.tracing:
            self.n_trace = _trace_point(self.trace, self.n_trace, self.trace_cap,
                                        _now() - self.t_start, obj, lb)

    # the rebuild walk
    @cython.final
    cdef double _walk(self, int d, double lo, double hi, bint timed) except? -1.0
    @cython.final
    cdef double _resolve(self, int d, double lo, double hi, bint timed,
                         int* f, int* t) except? -1.0
    @cython.final
    cdef int _emit(self, int d, int f, int t, double leaf) except -1
    @cython.final
    cdef int _build_tree(self, double err, bint timed) except -1

    # hooks: what the searches do differently
    cdef Py_ssize_t _open(self, int d, double* value, bint* solved) noexcept nogil
    cdef double _leaf_loss(self, int d) noexcept nogil
    cdef double _rows(self, int d) noexcept nogil
    cdef double _extra_lb(self, int d) noexcept nogil
    cdef double _floor(self, int d) noexcept nogil
    cdef int _splits(self, int d, Py_ssize_t e, double ub, double lb, double leaf,
                     double* best, int* f, int* t, double* min_lb) noexcept nogil
    cdef void _store_solved(self, int d, Py_ssize_t e, double err, int f,
                            int t) noexcept nogil
    cdef void _store_bound(self, int d, Py_ssize_t e, double lb) noexcept nogil
    cdef double _keep_incumbent(self, int d, Py_ssize_t e, double err, int f,
                                int t) noexcept nogil
    cdef void _remember(self, int d, double value) noexcept nogil
    cdef bint _counted(self, int d, int f, int t, double* left) noexcept nogil
    cdef void _root_node(self) noexcept nogil
    cdef int _tree_of(self, int d, double* err, int* f, int* t) noexcept nogil
    cdef double _direct(self, int d, int r, double leaf, int* f, int* t) noexcept nogil
    cdef bint _child_known(self, int d, int f, int t, int side,
                           double* err) noexcept nogil
    cdef void _child(self, int d, int f, int t, int side) noexcept nogil
    cdef object _node_value(self, int d)
    cdef bint _cache_full(self) noexcept nogil
    cdef void _shared(self, bint on) noexcept nogil
    cdef bint _out_of_memory(self) noexcept nogil
    cdef int _raise_if_aborted(self) except -1
