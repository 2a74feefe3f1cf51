# cython: language_level=3
"""The cache of the numeric DL8.5 search: subproblems keyed by their box.

Responsibility: remember, for each subproblem of the numeric search
(``_numeric.pyx``), its best split, best loss and lower bound. A
subproblem is the set of training rows inside a box (an interval of
threshold ranks on some features) with a remaining depth; its key is
``[depth, f1, lo1, hi1, f2, lo2, hi2, ...]`` (features ascending, each
interval tightened to the ranks its rows actually take), so two paths that
select the same rows through the same features share an entry.

Entries live in one array, their keys in one pool, and an open-addressing
table (linear probing) maps keys to entries. The searcher never keeps an
entry index across a call that may insert, so a bounded cache
(``max_size``) may wipe at any insertion: it keeps the
``(1 - wipe_factor) * max_size`` most useful entries, by the strategy's
order ("reuses": most lookups; "descendants": largest remaining depth;
"all_non_useful": none), compacts the arrays and rebuilds the table. Wiped
subproblems are re-solved when needed, so the result does not change.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy

ctypedef unsigned int uint32_t_t

cdef enum:
    WIPE_REUSES = 0
    WIPE_DESCENDANTS = 1
    WIPE_ALL = 2

STRATEGIES = {"reuses": WIPE_REUSES, "descendants": WIPE_DESCENDANTS,
              "all_non_useful": WIPE_ALL}


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
        Fraction of ``max_size`` freed by each wipe.
    strategy : {"reuses", "descendants", "all_non_useful"}
    """

    def __cinit__(self, Py_ssize_t max_size=0, double wipe_factor=0.5,
                  str strategy="reuses"):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown wipe_strategy {strategy!r}")
        self.max_size = max_size
        self.wipe_factor = wipe_factor
        self.strategy = STRATEGIES[strategy]
        self.cap_entries = 1024
        self.cap_keys = 8192
        self.n_slots = 2048
        self.entries = <BoxEntry*>malloc(self.cap_entries * sizeof(BoxEntry))
        self.keys = <int32_t*>malloc(self.cap_keys * sizeof(int32_t))
        self.table = <int64_t*>malloc(self.n_slots * sizeof(int64_t))
        if self.entries == NULL or self.keys == NULL or self.table == NULL:
            raise MemoryError()
        cdef Py_ssize_t i
        for i in range(self.n_slots):
            self.table[i] = -1

    def __dealloc__(self):
        free(self.entries)
        free(self.keys)
        free(self.table)

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
                ent.hits += 1
                return e
            s = (s + 1) & mask
        if not create or self.out_of_memory:
            return -1
        if self.max_size > 0 and self.n_entries >= self.max_size:
            if self._wipe() < 0:
                return -1
            return self.find(key, length, True)
        if self.n_entries + 1 > self.cap_entries:
            ent = <BoxEntry*>realloc(self.entries, 2 * self.cap_entries * sizeof(BoxEntry))
            if ent == NULL:
                self.out_of_memory = True
                return -1
            self.entries = ent
            self.cap_entries *= 2
        if self.n_keys + length > self.cap_keys:
            kp = <int32_t*>realloc(self.keys, 2 * (self.cap_keys + length) * sizeof(int32_t))
            if kp == NULL:
                self.out_of_memory = True
                return -1
            self.keys = kp
            self.cap_keys = 2 * (self.cap_keys + length)
        e = self.n_entries
        ent = &self.entries[e]
        ent.hash = h
        ent.key_at = self.n_keys
        ent.key_len = length
        ent.feature = -1
        ent.threshold = -1
        ent.flags = 0
        ent.depth = key[0]
        ent.hits = 0
        ent.error = 1e308
        ent.lb = 0.0
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
        """Keep the most useful entries (the strategy's order), drop the rest."""
        cdef Py_ssize_t keep = <Py_ssize_t>((1.0 - self.wipe_factor) * self.max_size)
        cdef Py_ssize_t i, j, n = self.n_entries, kept = 0, nk = 0
        cdef int64_t threshold = 0, score
        cdef int64_t* hist
        cdef int64_t top = 0
        cdef int32_t* keys
        if keep >= n:
            keep = n - 1
        if keep < 0 or self.strategy == WIPE_ALL:
            keep = 0
        self.n_wipes += 1
        if keep > 0:
            # the score of the keep-th most useful entry, by a histogram
            for i in range(n):
                score = self._score(i)
                if score > top:
                    top = score
            hist = <int64_t*>malloc((top + 2) * sizeof(int64_t))
            if hist == NULL:
                self.out_of_memory = True
                return -1
            for i in range(top + 2):
                hist[i] = 0
            for i in range(n):
                hist[self._score(i)] += 1
            threshold = top + 1
            j = 0
            while threshold > 0 and j + hist[threshold - 1] <= keep:
                threshold -= 1
                j += hist[threshold]
            free(hist)
        else:
            threshold = 1 << 62
        keys = <int32_t*>malloc(self.cap_keys * sizeof(int32_t))
        if keys == NULL:
            self.out_of_memory = True
            return -1
        for i in range(n):
            if self._score(i) < threshold:
                continue
            self.entries[kept] = self.entries[i]
            memcpy(keys + nk, self.keys + self.entries[i].key_at,
                   self.entries[i].key_len * sizeof(int32_t))
            self.entries[kept].key_at = nk
            self.entries[kept].hits = 0
            nk += self.entries[kept].key_len
            kept += 1
        free(self.keys)
        self.keys = keys
        self.n_keys = nk
        self.n_wiped += n - kept
        self.n_entries = kept
        return self._rehash(self.n_slots)

    cdef int64_t _score(self, Py_ssize_t i) noexcept nogil:
        if self.strategy == WIPE_DESCENDANTS:
            return self.entries[i].depth
        if self.entries[i].hits > 1_000_000:
            return 1_000_000
        return self.entries[i].hits

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
