/* A spin lock for the DL8.5 search threads (``_skeleton.pxd``: ``Share``).
 *
 * The threads hold it for a cache lookup or an entry update, a few hundred
 * nanoseconds: spinning costs less than putting a thread to sleep. A thread
 * that has spun long (its holder may be descheduled, e.g. more threads
 * than cores) yields the CPU between attempts. */
#ifndef ODT_SPIN_H
#define ODT_SPIN_H

#include <sched.h>

static inline void odt_spin_lock(int* lock) {
    int spins = 0;
    while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(lock, __ATOMIC_RELAXED)) {
            if (++spins > 4096) {
                sched_yield();
                spins = 0;
            } else {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        }
    }
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

#endif
