# cython: language_level=3
"""Itemset caches for the DL8.5 search.

An itemset is a sorted array of items ``2 * feature + value`` (value 1 means
``x[feature] = 1``, the right branch). Both caches map an itemset to an
:c:type:`Entry` index; entries live in one growable array, so code holding
an index across an insertion stays valid (pointers do not).

* :class:`TrieCache` (default, as in DL8.5): a prefix tree whose nodes are
  entries; its edges ``(parent, item) -> child`` live in one open-addressing
  hash table, so a lookup costs one probe per item.
* :class:`HashCache`: one open-addressing table keyed by the whole itemset.

Memory grows by doubling (no allocation per search node). The entry count
is exposed as ``n_entries``; a bounded cache with wipe policies can subclass
:class:`Cache` later.
"""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

ctypedef unsigned int uint32_t_cast


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    # splitmix64 finaliser
    x ^= x >> 30
    x *= <uint64_t>0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= <uint64_t>0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef class Cache:
    """Base class: the entry array. Subclasses implement ``find``."""

    def __cinit__(self, int max_len, Py_ssize_t initial_capacity=1024):
        if initial_capacity < 16:
            initial_capacity = 16
        self.max_len = max_len
        self.capacity = initial_capacity
        self.n_entries = 0
        self.out_of_memory = False
        self.entries = <Entry*>malloc(initial_capacity * sizeof(Entry))
        if self.entries == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.entries)

    cdef Py_ssize_t _new_entry(self) noexcept nogil:
        cdef Entry* grown
        cdef Py_ssize_t e
        if self.n_entries == self.capacity:
            grown = <Entry*>realloc(self.entries, 2 * self.capacity * sizeof(Entry))
            if grown == NULL:
                self.out_of_memory = True
                return -1
            self.entries = grown
            self.capacity *= 2
        e = self.n_entries
        self.n_entries += 1
        self.entries[e].error = INFINITY
        self.entries[e].lb = 0.0
        self.entries[e].feature = FEATURE_NONE
        self.entries[e].flags = 0
        return e

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        return -1

    def lookup(self, items, bint create=False):
        """Entry id of a sorted itemset (``-1`` when absent); for tests."""
        cdef int32_t buf[64]
        cdef int i, n = len(items)
        if n > 64 or n > self.max_len:
            raise ValueError("itemset longer than the cache's max_len")
        for i in range(n):
            buf[i] = items[i]
        return self.find(buf, n, create)

    def entry(self, Py_ssize_t e):
        """The entry ``e`` as a dict (error, lb, feature, solved)."""
        if e < 0 or e >= self.n_entries:
            raise IndexError(e)
        cdef Entry ent = self.entries[e]
        return {
            "error": ent.error,
            "lb": ent.lb,
            "feature": ent.feature,
            "solved": bool(ent.flags & ENTRY_SOLVED),
        }


cdef class TrieCache(Cache):
    """Trie keyed by sorted itemsets; entry 0 is the empty itemset (root)."""

    def __cinit__(self, int max_len, Py_ssize_t initial_capacity=1024):
        cdef Py_ssize_t size = 16
        while size < 2 * initial_capacity:
            size *= 2
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

    cdef bint _grow_edges(self) noexcept nogil:
        cdef Py_ssize_t old_size = self.edge_mask + 1, new_size = 2 * old_size
        cdef Py_ssize_t i, p, mask = new_size - 1
        cdef uint64_t* keys = <uint64_t*>malloc(new_size * sizeof(uint64_t))
        cdef int32_t* child = <int32_t*>malloc(new_size * sizeof(int32_t))
        if keys == NULL or child == NULL:
            free(keys)
            free(child)
            self.out_of_memory = True
            return False
        memset(keys, 0, new_size * sizeof(uint64_t))
        for i in range(old_size):
            if self.edge_keys[i] != 0:
                p = <Py_ssize_t>(_mix(self.edge_keys[i]) & <uint64_t>mask)
                while keys[p] != 0:
                    p = (p + 1) & mask
                keys[p] = self.edge_keys[i]
                child[p] = self.edge_child[i]
        free(self.edge_keys)
        free(self.edge_child)
        self.edge_keys = keys
        self.edge_child = child
        self.edge_mask = mask
        return True

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        cdef Py_ssize_t node = 0, p, child
        cdef uint64_t key
        cdef int i
        for i in range(n):
            # parent + 1 keeps key 0 free as the empty-slot marker
            key = ((<uint64_t>(node + 1)) << 32) | <uint64_t>(<uint32_t_cast>items[i])
            p = <Py_ssize_t>(_mix(key) & <uint64_t>self.edge_mask)
            while True:
                if self.edge_keys[p] == key:
                    node = self.edge_child[p]
                    break
                if self.edge_keys[p] == 0:
                    if not create:
                        return -1
                    child = self._new_entry()
                    if child < 0:
                        return -1
                    self.edge_keys[p] = key
                    self.edge_child[p] = <int32_t>child
                    self.n_edges += 1
                    node = child
                    if 2 * self.n_edges > self.edge_mask:
                        if not self._grow_edges():
                            return -1
                    break
                p = (p + 1) & self.edge_mask
        return node



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

    def itemset(self, Py_ssize_t e):
        """The sorted itemset of entry ``e`` (for tests and debugging)."""
        if e < 0 or e >= self.n_entries:
            raise IndexError(e)
        cdef int width = self.max_len if self.max_len > 0 else 1
        return [int(self.keys[e * width + i]) for i in range(self.lengths[e])]

    cdef bint _grow_slots(self) noexcept nogil:
        cdef Py_ssize_t new_size = 2 * (self.slot_mask + 1), mask = new_size - 1
        cdef Py_ssize_t e, p
        cdef int32_t* slots = <int32_t*>malloc(new_size * sizeof(int32_t))
        if slots == NULL:
            self.out_of_memory = True
            return False
        memset(slots, 0xFF, new_size * sizeof(int32_t))
        for e in range(self.n_entries):
            p = <Py_ssize_t>(self.hashes[e] & <uint64_t>mask)
            while slots[p] >= 0:
                p = (p + 1) & mask
            slots[p] = <int32_t>e
        free(self.slots)
        self.slots = slots
        self.slot_mask = mask
        return True

    cdef Py_ssize_t find(self, const int32_t* items, int n, bint create) noexcept nogil:
        cdef uint64_t h = <uint64_t>0x9e3779b97f4a7c15ULL + <uint64_t>n
        cdef int i, width = self.max_len if self.max_len > 0 else 1
        cdef Py_ssize_t p, e, old_cap
        cdef int32_t* k2
        cdef int32_t* l2
        cdef uint64_t* h2
        for i in range(n):
            h = _mix(h ^ <uint64_t>(<uint32_t_cast>items[i]))
        p = <Py_ssize_t>(h & <uint64_t>self.slot_mask)
        while True:
            e = self.slots[p]
            if e < 0:
                break
            if (self.hashes[e] == h and self.lengths[e] == n
                    and memcmp(self.keys + e * width, items,
                               n * sizeof(int32_t)) == 0):
                return e
            p = (p + 1) & self.slot_mask
        if not create:
            return -1
        old_cap = self.capacity
        e = self._new_entry()
        if e < 0:
            return -1
        if self.capacity != old_cap:
            k2 = <int32_t*>realloc(self.keys, self.capacity * width * sizeof(int32_t))
            if k2 == NULL:
                self.out_of_memory = True
                return -1
            self.keys = k2
            l2 = <int32_t*>realloc(self.lengths, self.capacity * sizeof(int32_t))
            if l2 == NULL:
                self.out_of_memory = True
                return -1
            self.lengths = l2
            h2 = <uint64_t*>realloc(self.hashes, self.capacity * sizeof(uint64_t))
            if h2 == NULL:
                self.out_of_memory = True
                return -1
            self.hashes = h2
        if n > 0:
            memcpy(self.keys + e * width, items, n * sizeof(int32_t))
        self.lengths[e] = n
        self.hashes[e] = h
        self.slots[p] = <int32_t>e
        if 2 * self.n_entries > self.slot_mask:
            if not self._grow_slots():
                return -1
        return e
