/* A spin lock for the DL8.5 search threads (``_skeleton.pxd``: ``Share``).
 *
 * The threads hold it for a cache lookup or insertion, a few hundred
 * nanoseconds: spinning costs less than putting a thread to sleep. A thread
 * that has spun long (its holder may be descheduled, e.g. more threads
 * than cores) yields the CPU between attempts (``odt_backoff``, every wait
 * below). */
#ifndef ODT_SPIN_H
#define ODT_SPIN_H

#include <sched.h>
#include <stdint.h>

/* One round of a wait: a pause, or after 4096 of them the CPU yielded. */
static inline void odt_backoff(int* spins) {
    if (++*spins > 4096) {
        sched_yield();
        *spins = 0;
    } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

static inline void odt_spin_lock(int* lock) {
    int spins = 0;
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(lock, __ATOMIC_RELAXED))
            odt_backoff(&spins);
}

static inline void odt_spin_unlock(int* lock) {
    __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
}

/* A double written by one thread and read by others without the lock. */
static inline double odt_load_double(const double* x) {
    double v;
    __atomic_load(x, &v, __ATOMIC_RELAXED);
    return v;
}

static inline void odt_store_double(double* x, double v) {
    __atomic_store(x, &v, __ATOMIC_RELAXED);
}

/* The entries of the 0/1 search's cache, on several threads.
 *
 * A thread reads and writes entries without the cache's lock, inside
 * ``odt_guard_enter`` / ``odt_guard_leave`` (its ``busy`` flag). Only an
 * insertion moves the entry array (growth by doubling): the thread making
 * it holds the lock, raises ``growing`` and waits until no other thread is
 * busy (``odt_stop_world``), then lowers it (``odt_resume_world``). A
 * guarded section takes no lock but entry locks, so the wait ends.
 *
 * A writer holds the entry's lock bit (``bit`` of its flags, the cache's
 * ``ENTRY_LOCKED``) for the entry's fields; a reader loads the flags first
 * (acquire), so a solved entry's flags are never seen before its error. */

static inline void odt_guard_enter(int* busy, const int* growing) {
    int spins = 0;
    for (;;) {
        __atomic_store_n(busy, 1, __ATOMIC_SEQ_CST);
        if (!__atomic_load_n(growing, __ATOMIC_SEQ_CST))
            return;
        __atomic_store_n(busy, 0, __ATOMIC_RELEASE);
        while (__atomic_load_n(growing, __ATOMIC_RELAXED))
            odt_backoff(&spins);
    }
}

static inline void odt_guard_leave(int* busy) {
    __atomic_store_n(busy, 0, __ATOMIC_RELEASE);
}

static inline void odt_stop_world(int* growing, int** busy, int n) {
    int spins = 0;
    __atomic_store_n(growing, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < n; i++)
        while (__atomic_load_n(busy[i], __ATOMIC_SEQ_CST))
            odt_backoff(&spins);
}

static inline void odt_resume_world(int* growing) {
    __atomic_store_n(growing, 0, __ATOMIC_RELEASE);
}

static inline void odt_entry_lock(int* flags, int bit) {
    int spins = 0;
    for (;;) {
        int cur = __atomic_load_n(flags, __ATOMIC_RELAXED);
        if (!(cur & bit)
            && __atomic_compare_exchange_n(flags, &cur, cur | bit, 0,
                                           __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
        odt_backoff(&spins);
    }
}

/* release the entry, with the flags ``set`` added */
static inline void odt_entry_unlock(int* flags, int bit, int set) {
    int cur = __atomic_load_n(flags, __ATOMIC_RELAXED);
    __atomic_store_n(flags, (cur | set) & ~bit, __ATOMIC_RELEASE);
}

static inline int odt_load_flags(const int* flags) {
    return __atomic_load_n(flags, __ATOMIC_ACQUIRE);
}

/* The trie's edge keys (``_cache.pyx``), probed by threads outside the
 * cache's lock while one thread inserts under it: an edge's child is written
 * before its key is published, so a reader that sees the key sees the child
 * (a reader that sees 0 takes the edge as absent: a weaker bound, no error). */
static inline uint64_t odt_load_key(const uint64_t* key) {
    return __atomic_load_n(key, __ATOMIC_ACQUIRE);
}

static inline void odt_publish_key(uint64_t* key, uint64_t v) {
    __atomic_store_n(key, v, __ATOMIC_RELEASE);
}

#endif
