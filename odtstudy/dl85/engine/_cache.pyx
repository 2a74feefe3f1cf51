# cython: language_level=3
"""Itemset caches for the DL8.5 search, unbounded or bounded.

An itemset is a sorted array of items ``2 * feature + value`` (value 1 means
``x[feature] = 1``, the right branch). Both caches map an itemset to an
:c:type:`Entry` index; entries live in one growable array, so code holding
an index across an insertion stays valid (pointers do not).

* :class:`TrieCache` (default, as in DL8.5): a prefix tree whose nodes are
  entries; its edges ``(parent, item) -> child`` live in one open-addressing
  hash table, so a lookup costs one probe per item.
* :class:`HashCache`: one open-addressing table keyed by the whole itemset.

Memory grows by doubling (no allocation per search node); arrays of 32 MiB
and more ask for transparent huge pages (``_grow.pxd``), since their probes
land at random. ``peek_many`` looks up several itemsets together: the
trie walks them one level at a time and prefetches each level's probes
first, so their cache misses overlap (the search's candidates, a chunk at a
time).

On threads (``share_world``) insertions hold the search's lock, while the
threads read entries, and walk the unbounded trie (``peek_many``,
``peek_prefix``), outside it: an edge's key is published after its child,
and an insertion that moves the entry array or swaps in a larger edge table
first waits until no thread is inside a guarded section (``_spin.h``).

Bounded cache
-------------
``configure(max_size, wipe_factor, strategy)`` turns either cache into the
bounded cache of Aglin, Nijssen and Schaus ("Learning optimal decision trees
under memory constraints", ECML PKDD 2022; thesis chapter 5, Algorithms 1 and
8). When inserting the missing part of a path would take the number of live
entries above ``max_size``, :meth:`Cache._wipe` runs first:

1. entries that must stay are tagged ``ENTRY_USEFUL``: the paths under
   evaluation (the searcher writes the entry of each depth of its recursion
   into ``cur_path``; the paper's ``curFeat`` walk) and the current best
   solution, followed from the root through the ``feature`` of each entry
   (``setOptiUsefulTag``), also below each path under evaluation when the
   searcher shares its itemsets (``cur_items``). In the trie the tag is
   closed under ancestors;
2. the wipe policy (``_cache_policy.pyx``, shared with the numeric search's
   box cache) picks the other live entries to delete, by the strategy's
   order (``"descendants"`` counted here: a post-order pass in the trie,
   the itemset lattice in the hash table);
3. they are deleted: their trie edge (or hash slot) is removed by
   backward-shift deletion and the entry id goes to a free list that later
   insertions recycle. The entry array is never grown past
   ``max_size + 1``, so memory stays bounded. In the trie the policy's
   order deletes children before their parents.

Slots
-----
``use_slots(K)`` gives every itemset K entries, one per slot (the several
quantiles of one multi-quantile search share the lattice, and the keys,
edges and lookups with it); ``select_slot(k)`` makes slot k's the
``entries`` the searcher reads and writes, and ``slot_entry`` reaches the
others. Unbounded caches only.

If the tagged best solution leaves no room, a second pass keeps only the
paths under evaluation. The hard guarantee: ``n_live <= max_size`` always
(``peak_live`` records the maximum); a bound too small for the paths under
evaluation is rejected by ``configure``.
"""

import numpy as np

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from odtstudy.dl85.engine cimport _cache_policy as wipe
from odtstudy.dl85.engine._grow cimport _advise_huge, _grow_array

ctypedef unsigned int uint32_t_cast

cdef extern from *:
    void __builtin_prefetch(const void* addr) noexcept nogil

#: Largest ``max_size``: entry ids are int32 (trie edges, the free list) and
#: the entry array holds ``max_size + 1`` of them.
MAX_CACHE_SIZE = 2**31 - 2
#: Edge-table slots a bounded trie allocates up front (about 50 MB); a larger
#: bound grows the table by doubling, as the unbounded trie does.
cdef Py_ssize_t EAGER_EDGE_SLOTS = 1 << 22

cdef uint64_t SCORE_SAT = 0xFFFFFFFFULL


cdef inline void _add_paths(uint32_t* score, Py_ssize_t to,
                            uint32_t below) noexcept nogil:
    """Count a descendant and its ``below`` descendant paths for entry
    ``to`` (saturating)."""
    cdef uint64_t v = <uint64_t>score[to] + below + 1
    score[to] = <uint32_t>(v if v < SCORE_SAT else SCORE_SAT)


cdef inline bint _stays(Py_ssize_t i, Py_ssize_t h, Py_ssize_t j) noexcept nogil:
    """Backward-shift deletion of slot i: the key in slot j (home slot h)
    stays where it is when h lies cyclically in ``(i, j]``."""
    if i <= j:
        return i < h and h <= j
    return i < h or h <= j


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    # splitmix64 finaliser
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef class Cache:
    """Base class: the entry array, its free list and the wipe.

    Subclasses implement ``find`` (lookup, insertion), ``_peek`` (lookup
    without side effects), ``_delete`` and ``_count_descendants``.
    """

    def __cinit__(self, int max_len, Py_ssize_t initial_capacity=1024):
        cdef int i
        if initial_capacity < 16:
            initial_capacity = 16
        self.max_len = max_len
        self.capacity = initial_capacity
        self.n_entries = 0
        self.out_of_memory = False
        self.max_size = 0
        self.policy.wipe_factor = 0.5   # (zeroed: "reuses", no arrays)
        self.n_live = 0
        self.peak_live = 0
        self.n_created = 0
        self.n_wipes = 0
        self.n_wiped = 0
        self.cache_full = False
        self.free_head = -1
        self.n_free = 0
        self.cur_items = NULL
        self.cur_stride = 0
        self.slot_entries = NULL
        self.n_slots = 1
        self.entries = <Entry*>malloc(initial_capacity * sizeof(Entry))
        self.cur_path = <int32_t*>malloc((max_len + 2) * sizeof(int32_t))
        if self.entries == NULL or self.cur_path == NULL:
            raise MemoryError()
        for i in range(max_len + 2):
            self.cur_path[i] = -1

    def __dealloc__(self):
        cdef int k
        if self.slot_entries != NULL:
            for k in range(self.n_slots):
                if self.slot_entries[k] != self.entries:
                    free(self.slot_entries[k])
            free(self.slot_entries)
        free(self.entries)
        free(self.cur_path)
        wipe.release(&self.policy)

    # ------------------------------------------------------------- slots
    def use_slots(self, int n_slots):
        """Give every itemset ``n_slots`` entries (call before use, on an
        unbounded cache); slot 0 is selected."""
        cdef int k
        cdef Py_ssize_t e
        if self.max_size > 0:
            raise ValueError("a bounded cache has one slot per itemset")
        if self.slot_entries != NULL or n_slots < 2:
            raise ValueError("use_slots takes n_slots >= 2, once")
        self.slot_entries = <Entry**>calloc(n_slots, sizeof(Entry*))
        if self.slot_entries == NULL:
            raise MemoryError()
        self.slot_entries[0] = self.entries
        self.n_slots = n_slots
        for k in range(1, n_slots):
            self.slot_entries[k] = <Entry*>malloc(self.capacity * sizeof(Entry))
            if self.slot_entries[k] == NULL:
                raise MemoryError()
        for e in range(self.n_entries):
            self._clear_slots(e)

    def select_slot(self, int k):
        """Make slot k's entries the ones the searcher reads and writes."""
        if not 0 <= k < self.n_slots or self.slot_entries == NULL:
            raise ValueError(f"no slot {k}")
        self.entries = self.slot_entries[k]

    cdef void _clear_slots(self, Py_ssize_t e) noexcept nogil:
        """Entry ``e`` of every slot: no tree known, lower bound 0."""
        cdef int k
        for k in range(self.n_slots):
            self.slot_entries[k][e].error = INFINITY
            self.slot_entries[k][e].lb = 0.0
            self.slot_entries[k][e].feature = FEATURE_NONE
            self.slot_entries[k][e].flags = 0

    # ------------------------------------------------------------ bounds
    def min_size(self):
        """Smallest ``max_size`` that always leaves room for the paths under
        evaluation (their entries plus a new path of ``max_len`` items)."""
        return self.max_len + 1

    def configure(self, Py_ssize_t max_size, double wipe_factor=0.5,
                  strategy="reuses"):
        """Bound the cache to ``max_size`` live entries (call before use).

        Raises ``ValueError`` when ``max_size`` is below :meth:`min_size`,
        and for a wipe option the policy refuses (``_cache_policy``).
        """
        wipe.configure(&self.policy, strategy, wipe_factor, False)
        if max_size > MAX_CACHE_SIZE:
            raise ValueError(
                f"max_cache_size={max_size} is too large: entry ids are 32-bit, "
                f"so at most {MAX_CACHE_SIZE} entries; use a smaller bound (or "
                "None for an unbounded cache)"
            )
        need = self.min_size()
        if max_size < need:
            raise ValueError(
                f"max_cache_size={max_size} is too small: with max_depth="
                f"{self.max_len} the paths under evaluation alone need up to "
                f"{need} cache entries ({type(self).__name__}); use "
                f"max_cache_size >= {need} (or None for an unbounded cache)"
            )
        if self.n_entries > 1:
            raise RuntimeError("configure() must be called on an empty cache")
        if self.slot_entries != NULL:
            raise ValueError("a cache with several slots cannot be bounded")
        self.max_size = max_size
        cdef Py_ssize_t cap = self.capacity
        if cap > max_size + 1:
            cap = max_size + 1
        if not self._grow(cap):
            raise MemoryError()
        cdef Py_ssize_t e
        for e in range(self.n_entries):
            wipe.new_entry(&self.policy, e, self.max_len)

    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil:
        """Resize the per-entry arrays to ``new_cap`` entries."""
        cdef int k
        if self.slot_entries != NULL:
            for k in range(self.n_slots):
                if self.slot_entries[k] == self.entries:
                    if not _grow_array(<void**>&self.entries, new_cap, sizeof(Entry)):
                        return False
                    self.slot_entries[k] = self.entries
                elif not _grow_array(<void**>&self.slot_entries[k], new_cap, sizeof(Entry)):
                    return False
        elif not _grow_array(<void**>&self.entries, new_cap, sizeof(Entry)):
            return False
        if self.max_size > 0 and not wipe.grow(&self.policy, new_cap):
            return False
        self.capacity = new_cap
        return True

    cdef void share_world(self, int* growing, int** busy, int n) noexcept nogil:
        """On threads, which read and write entries outside the cache's lock
        in guarded sections (``_spin.h``): an insertion that moves an array
        they read first waits until none of the ``n`` threads' ``busy``
        flags is up, with ``growing`` raised. ``growing = NULL``: one
        thread again."""
        self.world_growing = growing
        self.world_busy = busy
        self.world_n = n

    cdef void _stop_world(self) noexcept nogil:
        if self.world_growing != NULL:
            odt_stop_world(self.world_growing, self.world_busy, self.world_n)

    cdef void _resume_world(self) noexcept nogil:
        if self.world_growing != NULL:
            odt_resume_world(self.world_growing)

    cdef bint concurrent_peeks(self) noexcept nogil:
        """Whether ``peek_many`` may run on threads outside the lock, beside
        an insertion made under it: no."""
        return False

    cdef Py_ssize_t _new_entry(self) noexcept nogil:
        cdef Py_ssize_t e, new_cap
        cdef bint grown
        if self.n_free > 0:
            self.n_free -= 1
            e = self.free_head
            self.free_head = self.entries[e].feature
        else:
            if self.n_entries == self.capacity:
                new_cap = 2 * self.capacity
                if self.max_size > 0 and new_cap > self.max_size + 1:
                    new_cap = self.max_size + 1
                if new_cap <= self.capacity:
                    self.out_of_memory = True
                    return -1
                self._stop_world()
                grown = self._grow(new_cap)
                self._resume_world()
                if not grown:
                    self.out_of_memory = True
                    return -1
            e = self.n_entries
            self.n_entries += 1
        if self.slot_entries != NULL:
            self._clear_slots(e)
        else:
            self.entries[e].error = INFINITY
            self.entries[e].lb = 0.0
            self.entries[e].feature = FEATURE_NONE
            self.entries[e].flags = 0
        self.n_live += 1
        self.n_created += 1
        if self.n_live > self.peak_live:
            self.peak_live = self.n_live
        return e

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        return -1

    cdef int peek_prefix(self, const int32_t* items, int n, Py_ssize_t* node) noexcept nogil:
        """With ``concurrent_peeks``, outside the lock: how many of the
        itemset's first items are known (the itemset of that prefix, its
        entry in ``node``), for ``find_from`` under the lock. Here: -1, not
        even the empty itemset."""
        node[0] = -1
        return -1

    cdef Py_ssize_t find_from(self, const int32_t* items, int n, Py_ssize_t node,
                              int i) noexcept nogil:
        """``find(items, n, True)``, knowing that the prefix of ``i`` items
        has the entry ``node`` (``peek_prefix``)."""
        return self.find(items, n, True)

    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil:
        return -1

    cdef void peek_many(self, const int32_t* items, int n, int count,
                        Py_ssize_t* out) noexcept nogil:
        """``_peek`` of ``count`` itemsets of ``n`` items each, stored one
        after another in ``items``: their entries (``-1`` when absent) into
        ``out``. It counts no reuse (for unbounded caches)."""
        cdef int k
        for k in range(count):
            out[k] = self._peek(items + k * n, n)

    cdef void _delete(self, Py_ssize_t e) noexcept nogil:
        pass

    cdef void _release(self, Py_ssize_t e) noexcept nogil:
        """Put the deleted entry ``e`` on the free list."""
        self.entries[e].flags = ENTRY_FREE
        self.entries[e].feature = <int32_t>self.free_head
        self.free_head = e
        self.n_free += 1
        self.n_live -= 1
        self.n_wiped += 1

    cdef void _count_descendants(self) noexcept nogil:
        pass

    # -------------------------------------------------------------- wipe
    cdef void _mark(self, Py_ssize_t e) noexcept nogil:
        if e < 0 or e >= self.n_entries or self.entries[e].flags & ENTRY_FREE:
            return
        self.entries[e].flags |= ENTRY_USEFUL

    cdef void _mark_solution(self, int32_t* items, int n) noexcept nogil:
        """Tag the best tree known below ``items`` (setOptiUsefulTag)."""
        cdef Py_ssize_t e = self._peek(items, n)
        cdef int32_t buf[64]
        cdef int32_t it
        cdef int f, v, i, j
        if e < 0:
            return
        self._mark(e)
        f = self.entries[e].feature
        if f < 0 or n >= self.max_len or n >= 63 or not (self.entries[e].error < INFINITY):
            return
        for v in range(2):
            it = 2 * f + v
            i = 0
            while i < n and items[i] < it:
                buf[i] = items[i]
                i += 1
            buf[i] = it
            for j in range(i, n):
                buf[j + 1] = items[j]
            self._mark_solution(buf, n + 1)

    cdef void _mark_sibling(self, int k) noexcept nogil:
        """Tag the sibling of path step k -> k + 1 and its best tree."""
        cdef int32_t* par = self.cur_items + k * self.cur_stride
        cdef int32_t* chi = par + self.cur_stride
        cdef int32_t buf[64]
        cdef int i = 0, j = 0
        if k + 1 > 63:
            return
        # the one item of the child missing from the parent, flipped
        while i < k + 1:
            if j < k and chi[i] == par[j]:
                buf[i] = chi[i]
                j += 1
            else:
                buf[i] = chi[i] ^ 1
            i += 1
        self._mark_solution(buf, k + 1)

    cdef bint _wipe(self, int n, Py_ssize_t missing, Py_ssize_t keep) noexcept nogil:
        """Make room for ``missing`` new entries while a path of ``n`` items
        is inserted (``cur_path[:n]`` are the paths under evaluation; ``keep``
        is the existing part of the new path, kept with its ancestors)."""
        self.n_wipes += 1
        self._wipe_pass(n, self.n_live + missing - self.max_size, True, keep)
        if self.n_live + missing > self.max_size:
            # the best solution takes too much room: keep only the paths
            # under evaluation (reconstitution rebuilds the rest)
            self._wipe_pass(n, self.n_live + missing - self.max_size, False, keep)
        if self.n_live + missing > self.max_size:
            self.cache_full = True
            return False
        return True

    cdef Py_ssize_t _wipe_pass(self, int n, Py_ssize_t need, bint keep_solution,
                               Py_ssize_t keep) noexcept nogil:
        """Tag what stays, then delete the entries the policy picks (at
        least ``need``). In the trie the policy's order deletes descendants
        before ancestors, so the deleted set is closed under descendants;
        the order of deletions within a wipe does not matter (freed ids are
        only recycled after the wipe)."""
        cdef int32_t buf[1]
        cdef Py_ssize_t e, done = 0
        cdef int k
        cdef int32_t fl
        cdef wipe.WipeCut chosen
        for k in range(n):
            self._mark(self.cur_path[k])
        self._mark(0)
        self._mark(keep)
        if keep_solution:
            self._mark_solution(buf, 0)
            if self.cur_items != NULL:
                # the best trees found so far below each path under
                # evaluation (they become part of the final tree when that
                # node's search ends), and below the sibling of each path
                # step (curFeat's other child: solved first, it joins the
                # best tree if this child does)
                for k in range(1, n):
                    self._mark_solution(self.cur_items + k * self.cur_stride, k)
                for k in range(n):
                    self._mark_sibling(k)
        if self.policy.strategy == wipe.WIPE_DESCENDANTS:
            self._count_descendants()
        if not wipe.cut(&self.policy, &self.entries[0].flags,
                        sizeof(Entry) // sizeof(int32_t), ENTRY_FREE | ENTRY_USEFUL,
                        self.n_entries, wipe.quota(&self.policy, self.max_size, need),
                        &chosen):
            self.out_of_memory = True
            return 0
        for e in range(self.n_entries):
            fl = self.entries[e].flags
            if fl & ENTRY_FREE:
                continue
            if fl & ENTRY_USEFUL:
                self.entries[e].flags = fl & ~ENTRY_USEFUL
            elif wipe.takes(&self.policy, &chosen, e):
                self._delete(e)
                done += 1
        return done

    # ------------------------------------------------------------ python
    def lookup(self, items, bint create=False):
        """Entry id of a sorted itemset (``-1`` when absent); for tests."""
        cdef int32_t buf[64]
        cdef int i, n = len(items)
        if n > 64 or n > self.max_len:
            raise ValueError("itemset longer than the cache's max_len")
        for i in range(n):
            buf[i] = items[i]
        return self.find(buf, n, create)

    def open_in_two_steps(self, items):
        """The entry of a sorted itemset, made if absent, as a search on
        threads opens it: its known prefix first (``peek_prefix``), then the
        rest (``find_from``); ``(entry, items known first)``, -1 items for
        a cache that knows no prefix. For tests."""
        cdef int32_t buf[64]
        cdef int i, n = len(items), known
        cdef Py_ssize_t node
        if n > 64 or n > self.max_len:
            raise ValueError("itemset longer than the cache's max_len")
        for i in range(n):
            buf[i] = items[i]
        known = self.peek_prefix(buf, n, &node)
        if known == n:
            return node, known
        if known < 0:
            return self.find(buf, n, True), known
        return self.find_from(buf, n, node, known), known

    def lookup_many(self, itemsets):
        """Entry ids of sorted itemsets of one length, looked up together
        (``peek_many``; ``-1`` when absent); for tests."""
        cdef int k, i, count = len(itemsets)
        cdef int n = len(itemsets[0]) if count else 0
        if n > self.max_len or any(len(s) != n for s in itemsets):
            raise ValueError("itemsets of one length, at most the cache's max_len")
        cdef int32_t[::1] buf = np.zeros(max(count * n, 1), dtype=np.int32)
        cdef Py_ssize_t[::1] out = np.zeros(max(count, 1), dtype=np.intp)
        for k in range(count):
            for i in range(n):
                buf[k * n + i] = itemsets[k][i]
        if count:
            self.peek_many(&buf[0], n, count, &out[0])
        return [int(out[k]) for k in range(count)]

    def entry(self, Py_ssize_t e):
        """The entry ``e`` as a dict (error, lb, feature, solved)."""
        if e < 0 or e >= self.n_entries or self.entries[e].flags & ENTRY_FREE:
            raise IndexError(e)
        cdef Entry ent = self.entries[e]
        return {
            "error": ent.error,
            "lb": ent.lb,
            "feature": ent.feature,
            "solved": bool(ent.flags & ENTRY_SOLVED),
        }

    def nbytes(self):
        """Bytes held by the cache's arrays (they never shrink: the peak)."""
        cdef Py_ssize_t n = self.capacity * sizeof(Entry)
        n += (self.max_len + 2) * sizeof(int32_t)
        if self.policy.score != NULL:
            n += self.capacity * (sizeof(uint32_t) + sizeof(uint8_t))
        return int(n)

    def stats(self):
        """Entry counters: created, live, peak live, wipes, entries wiped;
        ``cache_bytes`` (:meth:`nbytes`)."""
        return {
            "cache_bytes": int(self.nbytes()),
            "cache_entries_created": int(self.n_created),
            "cache_live_entries": int(self.n_live),
            "cache_peak_entries": int(self.peak_live),
            "cache_wipes": int(self.n_wipes),
            "cache_entries_wiped": int(self.n_wiped),
        }


cdef inline uint64_t _edge_key(Py_ssize_t parent, int32_t item) noexcept nogil:
    # parent + 1 keeps key 0 free as the empty-slot marker
    return ((<uint64_t>(parent + 1)) << 32) | <uint64_t>(<uint32_t_cast>item)


cdef inline Py_ssize_t _probe(const uint64_t* edge_keys, Py_ssize_t mask,
                              uint64_t key) noexcept nogil:
    """The slot of the edge ``key``, or -1 if the table has none. Keys are
    loaded with acquire order (a plain load on x86), so a walk beside an
    insertion (``concurrent_peeks``) may miss an edge being added but never
    misreads one (``_spin.h``)."""
    cdef Py_ssize_t p = <Py_ssize_t>(_mix(key) & <uint64_t>mask)
    cdef uint64_t seen = odt_load_key(&edge_keys[p])
    while seen != key and seen != 0:
        p = (p + 1) & mask
        seen = odt_load_key(&edge_keys[p])
    return p if seen != 0 else -1


cdef inline Py_ssize_t _free_slot(const uint64_t* edge_keys, Py_ssize_t mask,
                                  uint64_t key) noexcept nogil:
    """The first empty slot on the probe path of ``key``, which the table
    does not hold."""
    cdef Py_ssize_t p = <Py_ssize_t>(_mix(key) & <uint64_t>mask)
    while edge_keys[p] != 0:
        p = (p + 1) & mask
    return p


cdef inline int _walk(TrieCache trie, const int32_t* items, int n,
                      Py_ssize_t* node, bint count, Py_ssize_t at) noexcept nogil:
    """Follow ``items`` from the node ``at`` (the root) as far as the trie
    goes: the number of items matched, the node reached in ``node``.
    ``count``: add a reuse to each node on the way (the prefixes of a
    lookup)."""
    cdef Py_ssize_t p, mask = trie.edge_mask
    cdef const uint64_t* edge_keys = trie.edge_keys
    cdef int i = 0
    while i < n:
        p = _probe(edge_keys, mask, _edge_key(at, items[i]))
        if p < 0:
            break
        at = trie.edge_child[p]
        if count:
            wipe.hit(&trie.policy, at)
        i += 1
    node[0] = at
    return i


cdef class TrieCache(Cache):
    """Trie keyed by sorted itemsets; entry 0 is the empty itemset (root)."""

    def __cinit__(self, int max_len, Py_ssize_t initial_capacity=1024):
        cdef Py_ssize_t size = 16
        while size < 2 * initial_capacity:
            size *= 2
        self.parent = NULL
        self.item = NULL
        self.edge_keys = <uint64_t*>malloc(size * sizeof(uint64_t))
        self.edge_child = <int32_t*>malloc(size * sizeof(int32_t))
        if self.edge_keys == NULL or self.edge_child == NULL:
            raise MemoryError()
        memset(self.edge_keys, 0, size * sizeof(uint64_t))
        self.edge_mask = size - 1
        self.n_edges = 0
        self._new_entry()

    def __dealloc__(self):
        free(self.edge_keys)
        free(self.edge_child)
        free(self.parent)
        free(self.item)

    def nbytes(self):
        """Bytes held by the entry arrays and the edge table."""
        cdef Py_ssize_t n = (self.edge_mask + 1) * (sizeof(uint64_t) + sizeof(int32_t))
        if self.parent != NULL:
            n += self.capacity * sizeof(int32_t)
        if self.item != NULL:
            n += self.capacity * sizeof(int32_t)
        return Cache.nbytes(self) + int(n)

    def min_size(self):
        # the paths under evaluation (itemsets of 0..L-1 items) with their
        # trie prefixes, and a new path of L items
        return 1 + self.max_len * (self.max_len + 1) // 2

    def configure(self, Py_ssize_t max_size, double wipe_factor=0.5,
                  strategy="reuses"):
        Cache.configure(self, max_size, wipe_factor, strategy)
        self.parent[0] = -1
        self.item[0] = -1
        # the edge table at its final size (load <= 0.7), up to
        # EAGER_EDGE_SLOTS: no growth, so no transient old + new tables;
        # calloc'd pages are only touched when used
        cdef Py_ssize_t size = 16
        cdef uint64_t* keys
        cdef int32_t* child
        while 7 * size < 10 * (max_size + 1) and size < EAGER_EDGE_SLOTS:
            size *= 2
        if size > self.edge_mask + 1 and self.n_edges == 0:
            keys = <uint64_t*>calloc(size, sizeof(uint64_t))
            child = <int32_t*>malloc(size * sizeof(int32_t))
            if keys == NULL or child == NULL:
                free(keys)
                free(child)
                raise MemoryError()
            _advise_huge(keys, size * sizeof(uint64_t))
            _advise_huge(child, size * sizeof(int32_t))
            free(self.edge_keys)
            free(self.edge_child)
            self.edge_keys = keys
            self.edge_child = child
            self.edge_mask = size - 1

    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil:
        return Cache._grow(self, new_cap) and (self.max_size == 0 or (
            _grow_array(<void**>&self.parent, new_cap, sizeof(int32_t))
            and _grow_array(<void**>&self.item, new_cap, sizeof(int32_t))))

    cdef bint concurrent_peeks(self) noexcept nogil:
        """Unbounded: yes. Edges are only added, each key published after
        its child (``_spin.h``), and a larger table replaces the old one in
        a stopped world (``_grow_edges``); a bounded cache deletes edges in
        its wipes."""
        return self.max_size == 0

    cdef bint _grow_edges(self) noexcept nogil:
        cdef Py_ssize_t old_size = self.edge_mask + 1, new_size = 2 * old_size
        cdef Py_ssize_t i, p, mask = new_size - 1
        cdef uint64_t* old_keys
        cdef int32_t* old_child
        cdef uint64_t* keys = <uint64_t*>malloc(new_size * sizeof(uint64_t))
        cdef int32_t* child = <int32_t*>malloc(new_size * sizeof(int32_t))
        if keys == NULL or child == NULL:
            free(keys)
            free(child)
            self.out_of_memory = True
            return False
        _advise_huge(keys, new_size * sizeof(uint64_t))
        _advise_huge(child, new_size * sizeof(int32_t))
        memset(keys, 0, new_size * sizeof(uint64_t))
        # threads read the old table meanwhile (``concurrent_peeks``); the
        # caller holds the lock, so no edge is added before the swap
        for i in range(old_size):
            if self.edge_keys[i] != 0:
                p = _free_slot(keys, mask, self.edge_keys[i])
                keys[p] = self.edge_keys[i]
                child[p] = self.edge_child[i]
        old_keys = self.edge_keys
        old_child = self.edge_child
        self._stop_world()
        self.edge_keys = keys
        self.edge_child = child
        self.edge_mask = mask
        self._resume_world()
        free(old_keys)
        free(old_child)
        return True

    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil:
        cdef Py_ssize_t node
        return node if _walk(self, items, n, &node, False, 0) == n else -1

    cdef void peek_many(self, const int32_t* items, int n, int count,
                        Py_ssize_t* out) noexcept nogil:
        # the walks go one level at a time, all of them: the probes of a
        # level are prefetched first, so their cache misses overlap
        cdef Py_ssize_t mask = self.edge_mask, p
        cdef const uint64_t* edge_keys = self.edge_keys
        cdef uint64_t key
        cdef int i, k
        for k in range(count):
            out[k] = 0
        for i in range(n):
            for k in range(count):
                if out[k] >= 0:
                    key = _edge_key(out[k], items[k * n + i])
                    p = <Py_ssize_t>(_mix(key) & <uint64_t>mask)
                    __builtin_prefetch(&edge_keys[p])
                    __builtin_prefetch(&self.edge_child[p])
            for k in range(count):
                if out[k] >= 0:
                    p = _probe(edge_keys, mask, _edge_key(out[k], items[k * n + i]))
                    out[k] = self.edge_child[p] if p >= 0 else -1

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        cdef Py_ssize_t node
        cdef bint bounded = self.max_size > 0
        cdef int i = _walk(self, items, n, &node, bounded, 0)
        if i == n:
            return node
        if not create:
            return -1
        if bounded and self.n_live + (n - i) > self.max_size:
            if not self._wipe(n, n - i, node):
                return -1
            # the wipe may have removed part of the path: walk it again
            i = _walk(self, items, n, &node, False, 0)
            if self.n_live + (n - i) > self.max_size:  # pragma: no cover
                self.cache_full = True
                return -1
        return self._insert(items, n, node, i)

    cdef int peek_prefix(self, const int32_t* items, int n, Py_ssize_t* node) noexcept nogil:
        return _walk(self, items, n, node, False, 0)

    cdef Py_ssize_t find_from(self, const int32_t* items, int n, Py_ssize_t node,
                              int i) noexcept nogil:
        # unbounded (``concurrent_peeks``): the prefix's node stays; edges
        # below it may have been added since ``peek_prefix``
        i += _walk(self, items + i, n - i, &node, False, node)
        if i == n:
            return node
        return self._insert(items, n, node, i)

    cdef Py_ssize_t _insert(self, const int32_t* items, int n, Py_ssize_t node,
                            int i) noexcept nogil:
        """The entries of the itemset's prefixes past its first ``i`` items,
        whose entry is ``node``: the itemset's entry."""
        cdef Py_ssize_t p, child
        cdef uint64_t key
        cdef bint bounded = self.max_size > 0
        while i < n:
            child = self._new_entry()
            if child < 0:
                return -1
            key = _edge_key(node, items[i])
            p = _free_slot(self.edge_keys, self.edge_mask, key)
            self.edge_child[p] = <int32_t>child
            odt_publish_key(&self.edge_keys[p], key)
            self.n_edges += 1
            if bounded:
                self.parent[child] = <int32_t>node
                self.item[child] = items[i]
                wipe.new_entry(&self.policy, child, self.max_len - (i + 1))
            node = child
            # load factor 1/2 (bounded: 0.7, the table's share of the bound)
            if (10 * self.n_edges > 7 * (self.edge_mask + 1) if bounded
                    else 2 * self.n_edges > self.edge_mask):
                if not self._grow_edges():
                    return -1
            i += 1
        return node

    cdef void _mark(self, Py_ssize_t e) noexcept nogil:
        # tag e and its ancestors (stops at an already tagged node, whose
        # ancestors were tagged with it)
        while e >= 0 and e < self.n_entries:
            if self.entries[e].flags & (ENTRY_USEFUL | ENTRY_FREE):
                return
            self.entries[e].flags |= ENTRY_USEFUL
            if e == 0:
                return
            e = self.parent[e]

    cdef void _count_descendants(self) noexcept nogil:
        """Descendant paths of every live node (post-order: the nodes of
        remaining depth 0 first, then 1, ...; the root last)."""
        cdef uint32_t* score = self.policy.score
        cdef Py_ssize_t e
        cdef int r
        for e in range(self.n_entries):
            score[e] = 0
        for r in range(self.max_len):
            for e in range(1, self.n_entries):
                if self.policy.remaining[e] == r and not (self.entries[e].flags & ENTRY_FREE):
                    _add_paths(score, self.parent[e], score[e])

    cdef void _delete(self, Py_ssize_t e) noexcept nogil:
        """Remove the leaf node e: its edge (backward-shift deletion)."""
        cdef Py_ssize_t mask = self.edge_mask, j, h
        cdef Py_ssize_t i = _probe(self.edge_keys, mask,
                                   _edge_key(self.parent[e], self.item[e]))
        if i >= 0:
            j = i
            while True:
                j = (j + 1) & mask
                if self.edge_keys[j] == 0:
                    break
                h = <Py_ssize_t>(_mix(self.edge_keys[j]) & <uint64_t>mask)
                if _stays(i, h, j):
                    continue
                self.edge_keys[i] = self.edge_keys[j]
                self.edge_child[i] = self.edge_child[j]
                i = j
            self.edge_keys[i] = 0
            self.n_edges -= 1
        self._release(e)


cdef class HashCache(Cache):
    """Open-addressing hash table keyed by the whole sorted itemset."""

    def __cinit__(self, int max_len, Py_ssize_t initial_capacity=1024):
        cdef Py_ssize_t size = 16
        cdef int width = max_len if max_len > 0 else 1
        while size < 2 * initial_capacity:
            size *= 2
        self.keys = <int32_t*>malloc(self.capacity * width * sizeof(int32_t))
        self.lengths = <int32_t*>malloc(self.capacity * sizeof(int32_t))
        self.hashes = <uint64_t*>malloc(self.capacity * sizeof(uint64_t))
        self.slots = <int32_t*>malloc(size * sizeof(int32_t))
        if (self.keys == NULL or self.lengths == NULL or self.hashes == NULL
                or self.slots == NULL):
            raise MemoryError()
        memset(self.slots, 0xFF, size * sizeof(int32_t))
        self.slot_mask = size - 1

    def __dealloc__(self):
        free(self.keys)
        free(self.lengths)
        free(self.hashes)
        free(self.slots)

    def nbytes(self):
        """Bytes held by the entry arrays, the keys and the slot table."""
        cdef int width = self.max_len if self.max_len > 0 else 1
        cdef Py_ssize_t n = self.capacity * (
            width * sizeof(int32_t) + sizeof(int32_t) + sizeof(uint64_t)
        )
        n += (self.slot_mask + 1) * sizeof(int32_t)
        return Cache.nbytes(self) + int(n)

    def itemset(self, Py_ssize_t e):
        """The sorted itemset of entry ``e`` (for tests and debugging)."""
        if e < 0 or e >= self.n_entries or self.entries[e].flags & ENTRY_FREE:
            raise IndexError(e)
        cdef int width = self.max_len if self.max_len > 0 else 1
        return [int(self.keys[e * width + i]) for i in range(self.lengths[e])]

    cdef bint _grow(self, Py_ssize_t new_cap) noexcept nogil:
        cdef int width = self.max_len if self.max_len > 0 else 1
        return (Cache._grow(self, new_cap)
                and _grow_array(<void**>&self.keys, new_cap * width, sizeof(int32_t))
                and _grow_array(<void**>&self.lengths, new_cap, sizeof(int32_t))
                and _grow_array(<void**>&self.hashes, new_cap, sizeof(uint64_t)))

    cdef bint _grow_slots(self) noexcept nogil:
        cdef Py_ssize_t new_size = 2 * (self.slot_mask + 1), mask = new_size - 1
        cdef Py_ssize_t e, p
        cdef int32_t* slots = <int32_t*>malloc(new_size * sizeof(int32_t))
        if slots == NULL:
            self.out_of_memory = True
            return False
        memset(slots, 0xFF, new_size * sizeof(int32_t))
        for e in range(self.n_entries):
            if self.entries[e].flags & ENTRY_FREE:
                continue
            p = <Py_ssize_t>(self.hashes[e] & <uint64_t>mask)
            while slots[p] >= 0:
                p = (p + 1) & mask
            slots[p] = <int32_t>e
        free(self.slots)
        self.slots = slots
        self.slot_mask = mask
        return True

    cdef Py_ssize_t _slot(self, const int32_t* items, int n, uint64_t h) noexcept nogil:
        """Slot holding the itemset, or the empty slot ending its probe."""
        cdef int width = self.max_len if self.max_len > 0 else 1
        cdef Py_ssize_t p = <Py_ssize_t>(h & <uint64_t>self.slot_mask), e
        while True:
            e = self.slots[p]
            if e < 0:
                return p
            if (self.hashes[e] == h and self.lengths[e] == n
                    and memcmp(self.keys + e * width, items,
                               n * sizeof(int32_t)) == 0):
                return p
            p = (p + 1) & self.slot_mask

    cdef Py_ssize_t _peek(self, const int32_t* items, int n) noexcept nogil:
        cdef uint64_t h = <uint64_t>0x9e3779b97f4a7c15ULL + <uint64_t>n
        cdef int i
        for i in range(n):
            h = _mix(h ^ <uint64_t>(<uint32_t_cast>items[i]))
        return self.slots[self._slot(items, n, h)]

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        cdef uint64_t h = <uint64_t>0x9e3779b97f4a7c15ULL + <uint64_t>n
        cdef int i, width = self.max_len if self.max_len > 0 else 1
        cdef Py_ssize_t p, e
        for i in range(n):
            h = _mix(h ^ <uint64_t>(<uint32_t_cast>items[i]))
        p = self._slot(items, n, h)
        e = self.slots[p]
        if e >= 0:
            if self.max_size > 0:
                wipe.hit(&self.policy, e)
            return e
        if not create:
            return -1
        if self.max_size > 0 and self.n_live + 1 > self.max_size:
            if not self._wipe(n, 1, -1):
                return -1
            p = self._slot(items, n, h)
        e = self._new_entry()
        if e < 0:
            return -1
        if n > 0:
            memcpy(self.keys + e * width, items, n * sizeof(int32_t))
        self.lengths[e] = n
        self.hashes[e] = h
        if self.max_size > 0:
            wipe.new_entry(&self.policy, e, self.max_len - n)
        self.slots[p] = <int32_t>e
        if 2 * self.n_live > self.slot_mask:
            if not self._grow_slots():
                return -1
        return e

    cdef void _count_descendants(self) noexcept nogil:
        """Descendant paths in the itemset lattice (by decreasing length):
        each entry adds its count + 1 to every cached one-item-shorter
        subset."""
        cdef Py_ssize_t e, s
        cdef int d, j, k, L, width = self.max_len if self.max_len > 0 else 1
        cdef int32_t buf[64]
        cdef int32_t* key
        cdef uint32_t* score = self.policy.score
        for e in range(self.n_entries):
            score[e] = 0
        d = self.max_len
        while d >= 1:
            for e in range(self.n_entries):
                if self.lengths[e] != d or self.entries[e].flags & ENTRY_FREE:
                    continue
                key = self.keys + e * width
                for j in range(d):
                    L = 0
                    for k in range(d):
                        if k != j:
                            buf[L] = key[k]
                            L += 1
                    s = self._peek(buf, d - 1)
                    if s >= 0:
                        _add_paths(score, s, score[e])
            d -= 1

    cdef void _delete(self, Py_ssize_t e) noexcept nogil:
        """Remove entry e from the table (backward-shift deletion)."""
        cdef Py_ssize_t mask = self.slot_mask
        cdef Py_ssize_t i = <Py_ssize_t>(self.hashes[e] & <uint64_t>mask), j, h
        while self.slots[i] != e:
            if self.slots[i] < 0:
                break
            i = (i + 1) & mask
        if self.slots[i] == e:
            j = i
            while True:
                j = (j + 1) & mask
                if self.slots[j] < 0:
                    break
                h = <Py_ssize_t>(self.hashes[self.slots[j]] & <uint64_t>mask)
                if _stays(i, h, j):
                    continue
                self.slots[i] = self.slots[j]
                i = j
            self.slots[i] = -1
        self._release(e)
