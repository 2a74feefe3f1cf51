# cython: language_level=3
"""The skeleton every DL8.5 search shares (C-level Cython).

Responsibility: what a DL8.5 search does whatever its data, written once.
:class:`Skeleton` is the base ``cdef class`` of the 0/1 search
(``_search.Searcher``) and of the numeric search
(``_numeric.NumericSearcher``); they keep only their data structures
(covers of the search path, sorted rows) and their split search, and
answer the hooks below. The hooks are ``cdef`` methods, called once per
node (never per row), so the hot loops stay in the subclasses.

The node protocol (``_solve``)
------------------------------
A node is the depth-d state of the subclass (its cover or rows, its cache
key); ``_solve(d, ub)`` returns its optimal loss when it is below ``ub``
(or an exact optimum above it), else ``inf`` and a lower bound:

1. cache (``_open``): a solved entry answers; a stored lower bound
   ``>= ub`` prunes the node;
2. the time limit (``_check_time``): a node met after the deadline answers
   with the better of its leaf and its incumbent (``_keep_incumbent``);
3. the leaf test: purity (loss ``<= eps``), depth, minimum support, or a
   lower bound reaching the leaf's loss;
4. an extra lower bound of the subclass (``_extra_lb``: the similarity
   bound of the 0/1 search) may prove the leaf optimal or prune the node;
5. the split search (``_splits``), which answers an exact optimum (a
   direct solver) or the best split below ``ub`` and a lower bound of the
   others;
6. bookkeeping: a tree below ``ub`` is stored solved; a search stopped by
   the time limit keeps its incumbent; otherwise the node's loss is at
   least ``max(lb, ub, min_lb)`` (the strong infeasibility bound), and
   when that reaches the best tree known (a leaf, or a depth-1 tree of the
   numeric search) that tree is optimal.

The first descent
-----------------
With ``first_descent`` (the searches set it when a time limit is given),
the search first runs alone for ``probe_seconds`` (at most 5 % of the
limit); most fits end there and are exactly those of a search without it.
A search that has not ended builds a greedy tree (``_descend``): at each
node the root split of the direct solver's optimal subtree, and the exact
optimum where the direct solver reaches the bottom. Its nodes are kept as
the cache entries' incumbents, so a search stopped by the time limit
returns a tree at least as good as the greedy one. Limited-discrepancy
passes (``_passes``) then improve it while they find better trees, for at
most as long as the probe lasted, and the search starts again from the
root, its cache kept. With an unbounded cache and ``restart_bounded`` (the
0/1 search) the best of these trees and the probe's incumbent is the
root's upper bound: the search looks for a better tree only, and when none
exists that tree is the optimum (then the tree returned may be another
optimal tree than an unlimited fit's). The numeric search starts again
under its own bound: its thresholds are pruned by the children's exact
losses, which a search under a tight bound does not compute (on
contree/page at depth 3 the bounded restart evaluated a third more
thresholds than a search with no limit; the unbounded one, as many). A search that has not ended by 90 % of the limit
spends the rest on passes again.

Threads
-------
With helpers (``share_root``, the estimators' ``n_jobs``), the root's split
search runs on ``1 + len(helpers)`` threads (``_splits_shared``), one
searcher each on one cache: a root candidate goes to the first thread that
reaches it (``_claim``), each thread searches under the best root loss any
of them found, and every cache lookup or insertion holds the lock of
``Share`` (``_lock``). The 0/1 search reads and writes the entries it has
found without it, and looks up its candidates' children in the trie
(``_peek_chunk``), in guarded sections (``_enter`` / ``_leave``) that an
insertion moving the entry array or the trie's edges waits out
(``Cache.share_world``), each entry's fields under its own lock bit
(``_spin.h``). The numeric search's root candidate is a feature whose
thresholds are searched as a queue of intervals (``_numeric._splits``): a
thread out of candidates takes the first half of the queue of the thread
with the most (``_root_queue``, ``_steal``), so the last features do not
leave one thread idle. Each candidate being searched
or pruned by one thread, the best of their answers is the root's optimum
and the least of their bounds its bound. A thread that finds a tree at the
root's lower bound ends the others' searches (``_check_time``). The descent
and the passes of a time-limited search, and the rebuild, run on one
thread.

After the search
----------------
``run`` searches from the root with the anytime trace of the root
(``anytime()``: a point each time its incumbent or bound improves), checks
the bounded cache, and rebuilds the tree (``_walk``): each node is taken
from its cache entry, or from the direct solver of small subtrees
(``_direct``), or re-solved when a bounded cache wiped it: with the tight
bounds ``[lo, hi]`` its loss is known to lie in after a proof (a sibling's
loss subtracted from the parent's), or with a short time budget after a
time-out (the tree returned may then beat the incumbent; the trace ends
with it).

The bound at a time-out
-----------------------
A search cut short (the time limit, or a limited-discrepancy pass) still
answers a valid lower bound of each node it leaves: the greatest of its
entry's bound, its extra bound and ``min(min_lb, best)``, where the
searches' ``_splits`` give as ``min_lb`` the least lower bound over the
leaf and every candidate split: a split searched contributes the sum of
its children's bounds (their optima when solved, their own cut-short
bounds when interrupted), a split not reached the bounds its children have
without a search (cached bounds, the similarity bound, the floor). The
floor (``_floor``) is the loss of the node's rows grouped by identical
feature vectors, each group one leaf: no tree of any depth separates
identical rows, and a leaf's loss (a minimum over one prediction of a sum
over rows) is at least the sum of its groups' (0 where the objective gives
none). The bound is stored in the node's entry (with
``use_infeasibility_lb``), so later phases start from it; ``run`` answers
the greatest root bound of its phases (probe, restart, passes), never
above the incumbent.
"""

cimport cython
from libc.math cimport INFINITY
from libc.stdlib cimport free, malloc

import threading

#: the deepest tree the searches grow (``max_depth``)
DEPTH_LIMIT = MAX_DEPTH
#: the share of a time limit left to limited-discrepancy passes (``_passes``)
#: when the search has not ended by then
cdef double PASSES_SHARE = 0.1
#: the exact search runs alone for at most this many seconds (and this share
#: of the time limit) before the first descent: the fits that end by then,
#: most of them, pay nothing for the descent
PROBE_SECONDS = 1.0
cdef double PROBE_SHARE = 0.05
#: after a time-out of T seconds, the rebuild of the incumbent's wiped nodes
#: may take REBUILD_SHARE * T of CPU time, at least REBUILD_MIN_S
cdef double REBUILD_SHARE = 0.1
cdef double REBUILD_MIN_S = 0.25
#: > 0: searchers made from now on run on the node clock (``set_node_clock``)
cdef double _node_tick = 0.0


def set_node_clock(seconds_per_node=None):
    """Make the searchers created from now on count their time in nodes:
    each time check advances their clock by ``seconds_per_node`` (None: the
    real clock again). For tests: a time limit then stops a search at the
    same point on any machine (on one thread)."""
    global _node_tick
    _node_tick = 0.0 if seconds_per_node is None else float(seconds_per_node)

from odtstudy.dl85.engine._util cimport _alloc, _now, _trace_point


cdef class Skeleton:
    """The node protocol, time limit, anytime trace and tree rebuild of a
    DL8.5 search (abstract: the subclasses answer the hooks)."""

    def __dealloc__(self):
        free(self.trace)
        free(self.disc)

    cdef int _init_skeleton(self, int max_depth, int min_sup, double time_limit,
                            bint use_inf_lb, Py_ssize_t max_cache_size,
                            int trace_cap) except -1:
        """Set the options every search has; ``trace_cap``: the most points
        the root's anytime trace can take."""
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.t_limit_run = time_limit
        self.tick = _node_tick
        self.ticks = 0
        self.timed_out = False
        self.use_inf_lb = use_inf_lb
        self.max_cache_size = max_cache_size
        self.bounded = max_cache_size > 0
        self._never = False
        self.first_descent = False
        self.probe_seconds = PROBE_SECONDS
        self.restart_bounded = True
        self.restricted = False
        self.disc = <int*>_alloc((max_depth + 2) * sizeof(int))
        self.abort_flag = &self._never
        self.trace_cap = trace_cap + 1     # and the first descent's tree
        self.trace = <double*>_alloc(3 * trace_cap * sizeof(double))
        self.n_trace = 0
        self.tracing = False
        self._out = None
        self.helpers = []
        self._interrupt = None
        self.n_claimed = 0
        self._threads = []
        self.n_helpers = 0
        self.share = NULL
        return 0

    def share_root(self, helpers):
        """Search the root on ``1 + len(helpers)`` threads (``n_jobs``).

        Parameters
        ----------
        helpers : list of Skeleton
            Searchers of this one's class made with the same data and
            options; each gets this searcher's cache (which must be
            unbounded) and searches the root candidates that no other thread
            took first.
        """
        cdef Skeleton h
        if self.bounded:
            raise ValueError("n_jobs > 1 needs an unbounded cache: set "
                             "max_cache_size=None or n_jobs=1")
        for h in helpers:
            if (h.max_depth != self.max_depth or h.min_sup != self.min_sup
                    or h.bounded):
                raise ValueError("a helper searcher must be made with the same "
                                 "options as the searcher it helps")
            self._adopt(h)
        self.helpers = list(helpers)
        self.n_helpers = len(self.helpers)

    cdef int _adopt(self, Skeleton helper) except -1:
        """Give ``helper`` this searcher's cache (the subclasses)."""
        raise TypeError("Skeleton is the base of the DL8.5 searches")

    cdef void* _root_queue(self) noexcept nogil:
        """This thread's work at the root that the other threads may share
        (``Share.queues``), emptied for a new search; NULL: none (the
        subclasses)."""
        return NULL

    # ------------------------------------------------------------ search
    @cython.final
    cdef double _solve(self, int d, double ub, double* out_lb) noexcept nogil:
        """Best loss < ub of the depth-d node, or INFINITY.

        May return an exact optimum >= ub (then ``out_lb`` equals it). When
        no tree < ub exists, returns INFINITY and a lower bound in out_lb.
        """
        cdef double value, lb, leaf, s, best = INFINITY, min_lb, newlb
        cdef bint solved = False
        cdef int r = self.max_depth - d, f = -1, t = -1, kind
        cdef Py_ssize_t e = self._open(d, &value, &solved)
        if e == CACHE_FAILED:
            out_lb[0] = 0.0
            return INFINITY
        if solved:
            self.n_hits += 1
            out_lb[0] = value
            return value
        lb = value
        out_lb[0] = lb
        if lb >= ub:
            self.n_hits += 1
            return INFINITY
        leaf = self._leaf_loss(d)
        if self._check_time():
            s = self._floor(d)
            if s > lb:
                out_lb[0] = s if s < leaf else leaf
            return self._keep_incumbent(d, e, leaf, -1, -1)
        self.n_explored += 1
        if leaf <= self.eps or r == 0 or self._rows(d) < 2 * self.min_sup or lb >= leaf:
            self._store_solved(d, e, leaf, -1, -1)
            out_lb[0] = leaf
            return leaf
        s = self._extra_lb(d)
        if s > lb:
            lb = s
            out_lb[0] = lb
            if lb >= leaf:
                self._store_solved(d, e, leaf, -1, -1)
                out_lb[0] = leaf
                return leaf
            if lb >= ub:
                self.n_lb_pruned += 1
                if self.use_inf_lb:
                    self._store_bound(d, e, lb)
                return INFINITY
        min_lb = leaf
        if d == 0 and self.n_helpers > 0 and not self.restricted:
            kind = self._splits_shared(e, ub, lb, leaf, &best, &f, &t, &min_lb)
        else:
            kind = self._splits(d, e, ub, lb, leaf, &best, &f, &t, &min_lb)
        if kind == SPLIT_EXACT:
            self._store_solved(d, e, best, f, t)
            self._remember(d, best)
            out_lb[0] = best
            return best
        if self.timed_out or self.restricted:
            # an incumbent, not an optimum: the search was cut short; its
            # bound is the least over the leaf and the candidates
            newlb = min_lb if min_lb < best else best
            if newlb > lb:
                lb = newlb
                if self.use_inf_lb:
                    self._store_bound(d, e, lb)
            out_lb[0] = lb
            return self._keep_incumbent(d, e, best, f, t)
        if best < ub:
            self._store_solved(d, e, best, f, t)
            self._remember(d, best)
            out_lb[0] = best
            return best
        newlb = lb
        if ub > newlb:
            newlb = ub
        if min_lb > newlb:
            newlb = min_lb
        if best > leaf:
            best = leaf
            f = -1
            t = -1
        if newlb >= best:
            # no tree beats the best one known: that one is optimal
            self._store_solved(d, e, best, f, t)
            self._remember(d, best)
            out_lb[0] = best
            return best
        if self.use_inf_lb:
            self._store_bound(d, e, newlb)
        self._remember(d, newlb)
        out_lb[0] = newlb
        return INFINITY

    @cython.final
    cdef int _splits_shared(self, Py_ssize_t e, double ub, double lb, double leaf,
                            double* best, int* f, int* t, double* min_lb) noexcept nogil:
        """``_splits`` of the root on this thread and the helpers' threads,
        which share the cache (each access under ``share.lock``): each root
        candidate is searched by the first thread to reach it, under the best
        root loss any thread has found. Returns the best of the threads'
        answers; the lower bound of the rest is the least of their bounds,
        each candidate having been searched or pruned by one of them."""
        cdef Share sh
        cdef int kind
        sh.lock = 0
        sh.next = 0
        sh.best = INFINITY
        sh.lb = lb
        sh.trace = self.trace
        sh.n_trace = &self.n_trace
        sh.trace_cap = self.trace_cap
        sh.t_start = self.t_start
        sh.tracing = self.tracing
        sh.growing = 0
        sh.n_busy = 1 + self.n_helpers
        sh.busy = <int**>malloc(sh.n_busy * sizeof(int*))
        sh.queues = <void**>malloc(sh.n_busy * sizeof(void*))
        if sh.busy == NULL or sh.queues == NULL:
            # no thread to share with: this one searches every candidate
            free(sh.busy)
            free(sh.queues)
            sh.n_busy = 0
            return self._splits(0, e, ub, lb, leaf, best, f, t, min_lb)
        self.busy = 0
        sh.busy[0] = &self.busy
        sh.queues[0] = self._root_queue()
        self.share = &sh
        self._shared(True)
        with gil:
            self._launch(e, ub, lb)
        kind = self._splits(0, e, ub, lb, leaf, best, f, t, min_lb)
        with gil:
            self._gather(kind != SPLIT_EXACT, best, f, t, min_lb)
        self._shared(False)
        self.share = NULL
        free(sh.busy)
        free(sh.queues)
        if sh.best <= lb:
            # the threads stopped once one found a tree at the root's bound
            # (``_check_time``): that tree is optimal, whatever the clock says
            self.timed_out = False
        return kind

    cdef void _launch(self, Py_ssize_t e, double ub, double lb) noexcept:
        """Start each helper on the root's candidates (``_help``). A helper
        that could not start leaves its share to the threads that did (a
        candidate goes to the first thread that reaches it)."""
        cdef Skeleton h
        cdef int k = 1
        self._threads = []
        for h in self.helpers:
            h.sh_kind = -1      # not started (yet)
            h.busy = 0
            self.share.busy[k] = &h.busy
            self.share.queues[k] = h._root_queue()
            k += 1
        try:
            for h in self.helpers:
                h.share = self.share
                h.eps = self.eps
                h.time_limit = self.time_limit
                h.t_start = self.t_start
                h.deadline = self.deadline
                h.tick = self.tick
                h.ticks = self.ticks
                h.timed_out = False
                h.restricted = False
                h.tracing = False
                thread = threading.Thread(target=h._help, args=(e, ub, lb), daemon=True)
                thread.start()
                self._threads.append(thread)
        except Exception:
            return

    cdef void _gather(self, bint combine, double* best, int* f, int* t,
                      double* min_lb) noexcept:
        """Wait for the helpers; with ``combine``, the best of their answers
        and the least of their bounds into the root's."""
        cdef Skeleton h
        for thread in self._threads:
            while True:
                try:
                    thread.join()
                    break
                except BaseException as exc:
                    # e.g. KeyboardInterrupt: stop every thread and wait for
                    # them (they use the caller's Share); the search aborts
                    # as for a Python loss that raised, ``run`` re-raises
                    self.share.lb = INFINITY
                    self.timed_out = True
                    self._interrupt = exc
                    self._saved_flag = self.abort_flag
                    self._stopped = True
                    self.abort_flag = &self._stopped
        self._threads = []
        for h in self.helpers:
            h.share = NULL
            if h.timed_out and self.share.best > self.share.lb:
                self.timed_out = True
            self.n_explored += h.n_explored
            self.n_hits += h.n_hits
            self.n_lb_pruned += h.n_lb_pruned
            h.n_explored = 0
            h.n_hits = 0
            h.n_lb_pruned = 0
            if not combine or h.sh_kind < 0:
                continue
            if h.sh_best < best[0]:
                best[0] = h.sh_best
                f[0] = h.sh_f
                t[0] = h.sh_t
                self.counted_left[0] = h.counted_left[0]
            if h.sh_min_lb < min_lb[0]:
                min_lb[0] = h.sh_min_lb

    def _help(self, Py_ssize_t e, double ub, double lb):
        """A helper thread's share of the root's candidates (``_launch``)."""
        cdef double leaf, best = INFINITY, min_lb
        cdef int f = -1, t = -1, kind
        with nogil:
            self._root_node()
            leaf = self._leaf_loss(0)
            min_lb = leaf
            kind = self._splits(0, e, ub, lb, leaf, &best, &f, &t, &min_lb)
        self.sh_best = best
        self.sh_f = f
        self.sh_t = t
        self.sh_min_lb = min_lb
        self.sh_kind = kind

    @cython.final
    cdef bint _claim_root(self, int i, double* cur_ub) noexcept nogil:
        """``_claim`` at the root (``i < 0``: only the bound)."""
        cdef bint mine
        odt_spin_lock(&self.share.lock)
        mine = self.share.next <= i
        if mine:
            self.share.next = i + 1
            self.n_claimed += 1
        if self.share.best < cur_ub[0]:
            cur_ub[0] = self.share.best
        odt_spin_unlock(&self.share.lock)
        return mine

    @cython.final
    cdef void _trace_shared(self, double obj, double lb) noexcept nogil:
        """A root loss found by one of the threads: the others' bound, and a
        point of the main searcher's trace when it beats the best so far."""
        cdef Share* sh = self.share
        odt_spin_lock(&sh.lock)
        if obj < sh.best:
            odt_store_double(&sh.best, obj)
            if sh.tracing:
                sh.n_trace[0] = _trace_point(sh.trace, sh.n_trace[0], sh.trace_cap,
                                             _now() - sh.t_start, obj, lb)
        odt_spin_unlock(&sh.lock)

    @cython.final
    cdef double _descend(self, int d, Py_ssize_t e, double leaf) noexcept nogil:
        """A greedy tree of the depth-d node (entry ``e``, loss ``leaf`` as
        one leaf), kept as the entry's incumbent; returns its loss.

        Where at most ``direct_depth`` levels remain the node is solved
        exactly (``_solve``); above, it is split on the root split of the
        direct solver's optimal subtree and both children are descended
        into. Once the time is up, nodes stay leaves.
        """
        cdef int r = self.max_depth - d, f = -1, t = -1, side
        cdef double lb, value, total = 0.0, left = 0.0
        cdef bint solved = False
        cdef Py_ssize_t c
        if r <= self.direct_depth or leaf <= self.eps or self._rows(d) < 2 * self.min_sup:
            value = self._solve(d, INFINITY, &lb)
            return value if value < leaf else leaf
        if self._check_time():
            return self._keep_incumbent(d, e, leaf, -1, -1)
        self._direct(d, self.direct_depth, leaf, &f, &t)
        if f < 0:
            return self._keep_incumbent(d, e, leaf, -1, -1)
        for side in range(2):
            self._child(d, f, t, side)
            c = self._open(d + 1, &value, &solved)
            if c == CACHE_FAILED:
                return self._keep_incumbent(d, e, leaf, -1, -1)
            if not solved:
                value = self._descend(d + 1, c, self._leaf_loss(d + 1))
            if side == 0:
                left = value
            total += value
        if total < leaf:
            self.counted_left[d] = left
            return self._keep_incumbent(d, e, total, f, t)
        return self._keep_incumbent(d, e, leaf, -1, -1)

    def thread_stats(self):
        """``{"threads": ..., "root_candidates_of_helpers": ...}``: the
        threads of the search and the root candidates its helpers searched."""
        cdef Skeleton h
        return {
            "threads": 1 + self.n_helpers,
            "root_candidates_of_helpers": int(sum(h.n_claimed for h in self.helpers)),
        }

    def root_leaf_loss(self):
        """Loss of the whole training set as a single leaf."""
        cdef double v
        self._root_node()
        with nogil:
            v = self._leaf_loss(0)
        self._raise_if_aborted()
        return v

    @cython.final
    cdef double _passes(self, double best, double until, bint while_improving,
                        double* bound) noexcept nogil:
        """Limited-discrepancy passes until ``until`` (and, with
        ``while_improving``, until a pass finds no better tree), from
        incumbent ``best``: each pass tries, at a node, its first ``k + 1``
        candidate splits (the 0/1 search orders them by information gain),
        its children getting the discrepancy left (``k`` doubles each pass),
        looks for trees below the incumbent only and keeps what it finds as
        incumbents. Returns the best loss; the search is left timed out (no
        proof: the caller resets it). ``bound`` is raised to the greatest
        lower bound of the root a pass found."""
        cdef double v, lb
        cdef int k = 1
        self.deadline = until
        self.timed_out = False
        self.restricted = True
        while not self._check_time():
            self.disc[0] = k
            self.cut = False
            self._root_node()
            v = self._solve(0, best, &lb)
            if lb > bound[0]:
                bound[0] = lb
            if v < best:
                best = v
            elif while_improving:
                break
            if not self.cut:
                break       # nothing was left out: a further pass repeats it
            k *= 2
        self.restricted = False
        self.timed_out = True
        return best

    @cython.final
    cdef Py_ssize_t _start(self, double* value, bint* solved) except -3:
        """Open the root's entry and start the clock; returns the entry."""
        cdef Py_ssize_t root
        self._root_node()
        root = self._open(0, value, solved)
        if root == CACHE_FAILED:
            raise MemoryError("the DL8.5 cache could not store the root")
        self.t_start = self._clock()
        self.deadline = self.t_start + self.time_limit
        self.t_limit_run = self.time_limit
        return root

    def run(self, double max_error=INFINITY, purity_tol=None):
        """Search from the root; returns ``(loss, lower_bound)``.

        ``loss`` is ``inf`` when no tree has loss < ``max_error``. A leaf
        whose loss is ``<= purity_tol`` is not split further (default: the
        searcher's own tolerance). The tree found is rebuilt before the
        method returns (:meth:`tree_arrays`).
        """
        cdef double err, lb, leaf, value = 0.0, greedy = INFINITY, ub = max_error
        cdef double bound = 0.0     # the best root bound of a phase cut short
        cdef bint solved = False, greedy_optimal = False, descend
        cdef double probe = 0.0, early
        cdef Py_ssize_t root
        if self.trace == NULL:
            raise TypeError("Skeleton is the base of the DL8.5 searches: run a "
                            "Searcher or a NumericSearcher")
        if purity_tol is not None:
            self.eps = purity_tol
        root = self._start(&value, &solved)
        self.n_trace = 0
        self.tracing = True
        leaf = self._leaf_loss(0)
        if leaf < max_error:
            self._trace_root(leaf, 0.0 if solved else value)
        with nogil:
            descend = (self.first_descent and not solved and self.time_limit > 0
                       and self.max_depth > self.direct_depth)
            if descend:
                probe = PROBE_SHARE * self.time_limit
                if self.probe_seconds < probe:
                    probe = self.probe_seconds
                self.deadline = self.t_start + probe
            err = self._solve(0, ub, &lb)
            if self.timed_out and lb > bound:
                bound = lb
        if self.timed_out and self.floor_source is not None:
            # cut short: the floor bounds the phases that follow (made now,
            # not before: most searches end in the probe and never use it)
            source, self.floor_source = self.floor_source, None
            source()
        with nogil:
            if (descend and self.timed_out and not self.abort_flag[0]
                    and not self._cache_full()):
                # the search did not end in the probe: a greedy tree, then
                # the search again (its cache kept) for a better one
                self.timed_out = False
                self.deadline = self.t_start + (1.0 - PASSES_SHARE) * self.time_limit
                self._root_node()
                root = self._open(0, &value, &solved)
                if root != CACHE_FAILED and not solved:
                    greedy = self._descend(0, root, leaf)
                    if greedy < err:
                        self._trace_root(greedy, value)
                    if greedy > err:
                        greedy = err
                    # passes for as long as the probe: a better tree early,
                    # and a tighter bound for the search that follows
                    early = self._clock() + probe
                    if early > self.deadline:
                        early = self.deadline
                    greedy = self._passes(greedy, early, True, &bound)
                    self.timed_out = False
                    self.deadline = self.t_start + (1.0 - PASSES_SHARE) * self.time_limit
                    if (greedy < max_error and not self.bounded
                            and self.restart_bounded):
                        # the search looks for a better tree only (a wiped
                        # entry of the incumbent could not be rebuilt)
                        ub = greedy
                self._root_node()
                err = self._solve(0, ub, &lb)
                if self.timed_out and lb > bound:
                    bound = lb
            if (self.first_descent and self.timed_out and self.time_limit > 0
                    and not self.abort_flag[0] and not self._cache_full()):
                err = self._passes(err, self.t_start + self.time_limit, False, &bound)
            if self.timed_out:
                # every phase's root bound holds: the greatest, never above
                # the incumbent
                if bound > lb:
                    lb = bound
                if lb > err:
                    lb = err
        if err == INFINITY and ub < max_error and not self.timed_out:
            # no tree beats the greedy one: it is optimal
            err = ub
            lb = ub
            greedy_optimal = True
        if err < max_error:
            self._trace_root(err, lb if self.timed_out else err)
        self.tracing = False
        self._raise_if_aborted()
        for helper in self.helpers:
            (<Skeleton>helper)._raise_if_aborted()
        if self._interrupt is not None:
            exc, self._interrupt = self._interrupt, None
            self.abort_flag = self._saved_flag
            self._stopped = False
            raise exc
        if self._cache_full():
            raise MemoryError(
                f"the bounded DL8.5 cache ({self.max_cache_size} entries) "
                "could not make room for the paths under evaluation")
        self._out = None
        if err < max_error:
            # the greedy tree is kept as incumbents, not as solved entries
            self._build_tree(err, self.timed_out or greedy_optimal)
            self.timed_out = self.timed_out and not greedy_optimal
        if self._out_of_memory():
            raise MemoryError("the DL8.5 cache ran out of memory")
        self.root_error = err
        self.root_lb = lb
        return err, lb

    def descend(self):
        """Only the first descent from the root (no search); returns the
        greedy tree's loss, the tree being rebuilt (:meth:`run`'s
        ``tree_arrays`` gives it)."""
        cdef double value = 0.0, leaf, err
        cdef bint solved = False
        cdef Py_ssize_t root
        root = self._start(&value, &solved)
        leaf = self._leaf_loss(0)
        with nogil:
            err = self._descend(0, root, leaf) if not solved else value
        self._raise_if_aborted()
        self._out = None
        self._build_tree(err, True)
        return err

    def anytime(self):
        """The root's anytime trace of the last :meth:`run`.

        Returns
        -------
        list of tuple of (float, float, float)
            ``(seconds since the search started, best loss, lower bound)``,
            one point each time the incumbent or the bound of the root
            improved: the root leaf first, the proof (loss = bound) last.
        """
        return [
            (self.trace[3 * i], self.trace[3 * i + 1], self.trace[3 * i + 2])
            for i in range(self.n_trace)
        ]

    # ------------------------------------------------------- the rebuild
    def _tree_lists(self):
        """``(feature, threshold, left, right, value, loss)`` of the tree
        found, in preorder (rebuilt from the cache when :meth:`run` found
        none under its ``max_error``)."""
        if self._out is None:
            self._build_tree(INFINITY, True)
        return self._out

    @cython.final
    cdef int _build_tree(self, double err, bint timed) except -1:
        """Walk the best tree from the root into ``_out``; ``err``: the
        proven optimum, or the incumbent's loss when ``timed``. The sum of
        the leaves is checked against ``err`` by the caller
        (``_engine.fit_result``), which knows how exact the losses are."""
        cdef double t0 = _now(), tl = self.time_limit, got, tol
        cdef double* last
        self._out = ([], [], [], [], [], [])
        self.time_limit = 0.0     # the search is over: no deadline here
        self.timed_out = False
        # after a time-out, wiped nodes are re-solved within this much of
        # this thread's CPU time (which load does not eat), in all
        self.cpu_clock = True
        self.rebuild_end = self._clock() + (
            REBUILD_SHARE * self.t_limit_run
            if REBUILD_SHARE * self.t_limit_run > REBUILD_MIN_S else REBUILD_MIN_S)
        self.cpu_clock = False
        tol = 1e-9 * (err if err > 1.0 else 1.0)
        try:
            self._root_node()
            if timed:
                got = self._walk(0, 0.0, INFINITY, True)
            else:
                got = self._walk(0, err - tol, err + tol, False)
        finally:
            self.time_limit = tl
            self.timed_out = timed
        self._raise_if_aborted()
        if self._cache_full() or self._out_of_memory():
            raise MemoryError("the bounded DL8.5 cache ran out of room "
                              "while rebuilding the tree")
        if timed and self.n_trace > 0:
            # re-solved wiped subtrees may beat the incumbent they replace
            last = self.trace + 3 * (self.n_trace - 1)
            if got < last[1] - 1e-9 * max(1.0, abs(got)):
                self.n_trace = _trace_point(self.trace, self.n_trace, self.trace_cap,
                                            _now() - self.t_start, got, last[2])
        if self.bounded:
            self.reconstitution_ms = 1000.0 * (_now() - t0)
        return 0

    @cython.final
    cdef double _walk(self, int d, double lo, double hi, bint timed) except? -1.0:
        """Emit the best subtree of the depth-d node (whose optimum lies in
        ``[lo, hi]`` unless ``timed``); returns the sum of its leaves."""
        cdef int r = self.max_depth - d, f = -1, t = -1, state, node
        cdef double leaf = self._leaf_loss(d), err = leaf, v, tol, llo, lhi, left
        cdef double counted = -1.0
        cdef list left_of, right_of
        if not (r == 0 or leaf <= self.eps or self._rows(d) < 2 * self.min_sup):
            state = self._tree_of(d, &err, &f, &t)
            if state == TREE_SOLVED or (timed and state == TREE_INCUMBENT and err <= hi):
                pass
            elif r <= self.direct_depth:
                err = self._direct(d, r, leaf, &f, &t)
            elif timed and state == TREE_NONE and hi == INFINITY:
                f = -1
            else:
                # wiped, or re-made holding a worse tree than the one its
                # parent's incumbent counted (at most hi)
                err = self._resolve(d, lo, hi, timed, &f, &t)
        if f < 0:
            f = -1
            t = -1
        node = self._emit(d, f, t, leaf)
        if f < 0:
            return leaf
        left_of = self._out[2]
        right_of = self._out[3]
        # the left child's loss from its own entry or its sibling's
        tol = 1e-9 * (err if err > 1.0 else 1.0)
        if self._child_known(d, f, t, 0, &v):
            llo, lhi = v - tol, v + tol
        elif self._child_known(d, f, t, 1, &v):
            llo, lhi = err - v - tol, err - v + tol
        elif timed and self._counted(d, f, t, &counted):
            # an incumbent: each child's loss in it, a tree that exists
            llo, lhi = 0.0, counted + tol
        elif timed:
            llo, lhi = 0.0, INFINITY
        else:
            llo, lhi = 0.0, err + tol
        self._child(d, f, t, 0)
        left_of[node] = len(self._out[0])
        left = self._walk(d + 1, llo, lhi, timed)
        v = err - left
        if timed and counted >= 0.0:
            v = err - (counted if counted < left else left)
            llo, lhi = 0.0, v + tol
        elif timed:
            llo, lhi = 0.0, INFINITY
        else:
            llo, lhi = v - tol, v + tol
        self._child(d, f, t, 1)
        right_of[node] = len(self._out[0])
        return left + self._walk(d + 1, llo, lhi, timed)

    @cython.final
    cdef double _resolve(self, int d, double lo, double hi, bint timed,
                         int* f, int* t) except? -1.0:
        """Re-solve the depth-d node, wiped from a bounded cache: below
        ``hi`` from the lower bound ``lo`` after a proof, or with a short
        time budget after a time-out. Returns its loss (``f``, ``t``: its
        split)."""
        cdef double lb, err = INFINITY, budget, value
        cdef bint solved
        cdef int state
        cdef Py_ssize_t e
        self.n_reconstituted += 1
        if timed:
            # a tree below the loss its parent's incumbent counted (hi),
            # within what is left of the rebuild's budget
            self.cpu_clock = True
            self.time_limit = 1.0     # > 0: the deadline holds
            self.deadline = self.rebuild_end
            if self._clock() < self.deadline:
                self._solve(d, hi, &lb)
            self.cpu_clock = False
            self.time_limit = 0.0
            self.timed_out = False
        else:
            e = self._open(d, &value, &solved)
            if e == CACHE_FAILED:
                raise MemoryError("the bounded DL8.5 cache ran out of room")
            if lo > value and not solved:
                self._store_bound(d, e, lo)
            self._solve(d, hi, &lb)
        state = self._tree_of(d, &err, f, t)
        if state == TREE_SOLVED and err < hi:
            return err
        if timed:
            if state == TREE_SOLVED or state == TREE_INCUMBENT:
                return err    # the best held, if none below hi was found
            f[0] = -1
            return self._leaf_loss(d)
        raise RuntimeError("DL8.5: a wiped node was not re-solved")  # pragma: no cover

    @cython.final
    cdef int _emit(self, int d, int f, int t, double leaf) except -1:
        """Append the depth-d node to ``_out``; returns its index."""
        feature, threshold, left, right, value, loss = self._out
        feature.append(f)
        threshold.append(t)
        left.append(-1)
        right.append(-1)
        value.append(self._node_value(d))
        loss.append(leaf)
        return len(feature) - 1

    # ------------------------------------------------------------- hooks
    cdef Py_ssize_t _open(self, int d, double* value, bint* solved) noexcept nogil:
        """The cache entry of the depth-d node (``NO_ENTRY`` if none,
        ``CACHE_FAILED``, with ``timed_out`` set, if none could be made);
        ``value``: its optimum (``solved``) or its lower bound (0 if none)."""
        value[0] = 0.0
        solved[0] = False
        return NO_ENTRY

    cdef double _leaf_loss(self, int d) noexcept nogil:
        """Loss of the depth-d node as one leaf (fills its node value)."""
        return INFINITY

    cdef double _rows(self, int d) noexcept nogil:
        """Rows (or weight, for the minimum support) of the depth-d node."""
        return 0.0

    cdef double _extra_lb(self, int d) noexcept nogil:
        """A lower bound of the depth-d node besides its entry's (0: none)."""
        return 0.0

    cdef double _floor(self, int d) noexcept nogil:
        """A lower bound of the depth-d node at any depth, for the bound at a
        time-out: the loss of its rows grouped by identical feature vectors
        (0: none known)."""
        return 0.0

    cdef int _splits(self, int d, Py_ssize_t e, double ub, double lb, double leaf,
                     double* best, int* f, int* t, double* min_lb) noexcept nogil:
        """Search the splits of the depth-d node (entry ``e``) for a tree of
        loss < ub: ``best`` / ``f`` / ``t`` the best tree found (INFINITY /
        -1 if none), ``min_lb`` (in: the leaf's loss) the least lower bound
        of the splits that do not beat ``ub``. Returns ``SPLIT_EXACT`` when
        ``best`` is the node's optimum, else ``SPLIT_SEARCHED``."""
        return SPLIT_SEARCHED

    cdef void _store_solved(self, int d, Py_ssize_t e, double err, int f,
                            int t) noexcept nogil:
        """Store ``err`` (split ``f`` / ``t``, -1: a leaf) as the optimum."""
        pass

    cdef void _store_bound(self, int d, Py_ssize_t e, double lb) noexcept nogil:
        """Raise the entry's lower bound to ``lb``."""
        pass

    cdef double _keep_incumbent(self, int d, Py_ssize_t e, double err, int f,
                                int t) noexcept nogil:
        """Keep the tree of loss ``err`` when it beats the entry's; returns
        the better loss."""
        return err

    cdef void _remember(self, int d, double value) noexcept nogil:
        """A node's optimum or bound is known (the similarity bound's
        memory)."""
        pass

    cdef bint _counted(self, int d, int f, int t, double* left) noexcept nogil:
        """The left child's loss in the depth-d node's incumbent of split
        ``f`` / ``t``, if its entry keeps it."""
        return False

    cdef void _root_node(self) noexcept nogil:
        """Make the depth-0 node the whole training set."""
        pass

    cdef int _tree_of(self, int d, double* err, int* f, int* t) noexcept nogil:
        """The tree the cache holds for the depth-d node: ``TREE_SOLVED``,
        ``TREE_INCUMBENT``, ``TREE_NONE`` or ``NO_ENTRY``."""
        return NO_ENTRY

    cdef double _direct(self, int d, int r, double leaf, int* f, int* t) noexcept nogil:
        """Optimum of the depth-r (<= ``direct_depth``) subtree of the
        depth-d node, without the cache."""
        f[0] = -1
        return leaf

    cdef bint _child_known(self, int d, int f, int t, int side,
                           double* err) noexcept nogil:
        """The optimum of one child of split ``f`` / ``t`` if the cache
        holds it (side 0: left)."""
        return False

    cdef void _child(self, int d, int f, int t, int side) noexcept nogil:
        """Make one child of the depth-d node's split the depth-d+1 node."""
        pass

    cdef object _node_value(self, int d):
        """The value stored for the depth-d node (its class supports or
        statistics)."""
        return None

    cdef bint _cache_full(self) noexcept nogil:
        """A bounded cache could not make room for the path searched."""
        return False

    cdef bint _out_of_memory(self) noexcept nogil:
        return False

    cdef void _shared(self, bint on) noexcept nogil:
        """The root's search goes on threads (``on``; ``share`` is set) or
        back to one: the cache may need to know (the 0/1 search's does)."""
        pass

    cdef int _raise_if_aborted(self) except -1:
        """Re-raise the error of a Python callback that stopped the search."""
        return 0
