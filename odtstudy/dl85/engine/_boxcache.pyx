# cython: language_level=3
"""The cache of the numeric DL8.5 search: subproblems keyed by their box.

Responsibility: remember, for each subproblem of the numeric search
(``_numeric.pyx``), its best split, best loss and lower bound. A
subproblem is the set of training rows inside a box (an interval of
threshold ranks on some features) with a remaining depth; its key is
``[remaining depth, f1, lo1, hi1, f2, lo2, hi2, ...]`` (features ascending, each
interval tightened to the ranks its rows actually take), so two paths that
select the same rows through the same features share an entry.

Entries live in one array, their keys in one pool, and an open-addressing
table (linear probing) maps keys to entries. The searcher never keeps an
entry index across a call that may insert, so a bounded cache
(``max_size``) may wipe at any insertion: the wipe policy
(``_cache_policy.pyx``, shared with the 0/1 search's caches) picks the
entries to delete; nothing is tagged as kept, as the numeric search holds no
entry while it evaluates a node. The survivors are compacted in place (in
their order) and the table rebuilt. Wiped subproblems are re-solved when
needed, so the result does not change.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy, memmove

from odtstudy.dl85.engine cimport _cache_policy as wipe
from odtstudy.dl85.engine._grow cimport _grow_array

ctypedef unsigned int uint32_t_t


cdef inline uint64_t _hash_key(const int32_t* key, int length) noexcept nogil:
    cdef uint64_t h = 0x9e3779b97f4a7c15ULL
    cdef int i
    for i in range(length):
        h ^= <uint64_t><uint32_t_t>key[i]
        h *= <uint64_t>0xff51afd7ed558ccdULL
        h ^= h >> 29
    return h | 1   # 0 marks nothing: every hash is odd


cdef class BoxCache:
    """Box-keyed cache of the numeric search.

    Parameters
    ----------
    max_size : int, default=0
        Largest number of live entries (0: unbounded).
    wipe_factor : float, default=0.5
        Fraction of ``max_size`` freed by each wipe, in (0, 1].
    strategy : {"reuses", "remaining_depth", "all_non_useful"}, default="reuses"
        The wipe order (``_cache_policy``); ``"descendants"`` is refused.
    """

    def __cinit__(self, Py_ssize_t max_size=0, double wipe_factor=0.5,
                  str strategy="reuses"):
        wipe.configure(&self.policy, strategy, wipe_factor, True)
        if max_size < 0:
            raise ValueError(f"max_cache_size={max_size} is negative; use a "
                             "positive bound, or 0 for an unbounded cache")
        self.max_size = max_size
        self.cap_entries = 1024
        self.cap_keys = 8192
        self.n_slots = 2048
        self.entries = <BoxEntry*>malloc(self.cap_entries * sizeof(BoxEntry))
        self.keys = <int32_t*>malloc(self.cap_keys * sizeof(int32_t))
        self.table = <int64_t*>malloc(self.n_slots * sizeof(int64_t))
        if self.entries == NULL or self.keys == NULL or self.table == NULL:
            raise MemoryError()
        if max_size > 0 and not wipe.grow(&self.policy, self.cap_entries):
            raise MemoryError()
        cdef Py_ssize_t i
        for i in range(self.n_slots):
            self.table[i] = -1

    def __dealloc__(self):
        free(self.entries)
        free(self.keys)
        free(self.table)
        wipe.release(&self.policy)

    cdef int _rehash(self, Py_ssize_t slots) noexcept nogil:
        cdef int64_t* table = <int64_t*>malloc(slots * sizeof(int64_t))
        cdef Py_ssize_t i, s, mask = slots - 1
        if table == NULL:
            self.out_of_memory = True
            return -1
        for i in range(slots):
            table[i] = -1
        for i in range(self.n_entries):
            s = <Py_ssize_t>(self.entries[i].hash & <uint64_t>mask)
            while table[s] >= 0:
                s = (s + 1) & mask
            table[s] = i
        free(self.table)
        self.table = table
        self.n_slots = slots
        return 0

    cdef Py_ssize_t find(self, const int32_t* key, int length, bint create) noexcept nogil:
        """Entry index of ``key`` (created when asked), or -1."""
        cdef uint64_t h = _hash_key(key, length)
        cdef Py_ssize_t mask = self.n_slots - 1
        cdef Py_ssize_t s = <Py_ssize_t>(h & <uint64_t>mask)
        cdef int64_t e
        cdef BoxEntry* ent
        cdef int32_t* kp
        while True:
            e = self.table[s]
            if e < 0:
                break
            ent = &self.entries[e]
            if (ent.hash == h and ent.key_len == length and memcmp(
                    self.keys + ent.key_at, key, length * sizeof(int32_t)) == 0):
                if self.max_size > 0:
                    wipe.hit(&self.policy, e)
                return e
            s = (s + 1) & mask
        if not create or self.out_of_memory:
            return -1
        if self.max_size > 0 and self.n_entries >= self.max_size:
            if self._wipe() < 0:
                return -1
            return self.find(key, length, True)
        if self.n_entries + 1 > self.cap_entries:
            if not (_grow_array(<void**>&self.entries, 2 * self.cap_entries,
                                sizeof(BoxEntry))
                    and (self.max_size == 0
                         or wipe.grow(&self.policy, 2 * self.cap_entries))):
                self.out_of_memory = True
                return -1
            self.cap_entries *= 2
        if self.n_keys + length > self.cap_keys:
            if not _grow_array(<void**>&self.keys, 2 * (self.cap_keys + length),
                               sizeof(int32_t)):
                self.out_of_memory = True
                return -1
            self.cap_keys = 2 * (self.cap_keys + length)
        e = self.n_entries
        ent = &self.entries[e]
        ent.hash = h
        ent.key_at = self.n_keys
        ent.key_len = length
        ent.feature = -1
        ent.threshold = -1
        ent.flags = 0
        if self.max_size > 0:
            wipe.new_entry(&self.policy, e, key[0])
        ent.error = 1e308
        ent.lb = 0.0
        ent.left = -1.0
        memcpy(self.keys + self.n_keys, key, length * sizeof(int32_t))
        self.n_keys += length
        self.n_entries += 1
        self.n_created += 1
        if self.n_entries > self.peak_live:
            self.peak_live = self.n_entries
        self.table[s] = e
        if 2 * self.n_entries > self.n_slots:
            if self._rehash(2 * self.n_slots) < 0:
                return -1
        return e

    cdef int _wipe(self) noexcept nogil:
        """Delete the entries the policy picks (room for one more), keep the
        others in place, in their order."""
        cdef Py_ssize_t i, n = self.n_entries, kept = 0, nk = 0
        cdef int32_t length
        cdef wipe.WipeCut chosen
        self.n_wipes += 1
        if not wipe.cut(&self.policy, NULL, 0, 0, n,
                        wipe.quota(&self.policy, self.max_size, n + 1 - self.max_size),
                        &chosen):
            self.out_of_memory = True
            return -1
        for i in range(n):
            if wipe.takes(&self.policy, &chosen, i):
                continue
            # kept <= i and nk <= key_at: moving down never overwrites
            length = self.entries[i].key_len
            memmove(self.keys + nk, self.keys + self.entries[i].key_at,
                    length * sizeof(int32_t))
            self.entries[kept] = self.entries[i]
            self.entries[kept].key_at = nk
            self.policy.score[kept] = self.policy.score[i]
            self.policy.remaining[kept] = self.policy.remaining[i]
            nk += length
            kept += 1
        self.n_keys = nk
        self.n_wiped += n - kept
        self.n_entries = kept
        return self._rehash(self.n_slots)

    def lookup(self, key, bint create=False):
        """Entry index of a key ``[remaining depth, f, lo, hi, ...]`` (``-1``
        when absent); for tests."""
        cdef int32_t buf[256]
        cdef int i, n = len(key)
        if not 0 < n <= 256:
            raise ValueError("a box key has 1 to 256 numbers")
        for i in range(n):
            buf[i] = key[i]
        e = self.find(buf, n, create)
        if e < 0 and create and self.out_of_memory:
            raise MemoryError()
        return e

    def stats(self):
        """Cache counters."""
        return {
            "cache_entries": int(self.n_entries),
            "cache_entries_created": int(self.n_created),
            "cache_live_entries": int(self.n_entries),
            "cache_peak_entries": int(self.peak_live),
            "cache_wipes": int(self.n_wipes),
            "cache_entries_wiped": int(self.n_wiped),
            "cache_bytes": int(self.cap_entries * sizeof(BoxEntry)
                               + self.cap_keys * sizeof(int32_t)
                               + self.n_slots * sizeof(int64_t)),
        }
