# cython: language_level=3
"""Small C helpers shared by the DL8.5 extension modules (allocation, the
clock, the anytime trace, sorting keys, and the class-support leaf losses
that both searches price)."""

from libc.math cimport INFINITY
from libc.stdint cimport int32_t
from libc.stdlib cimport calloc
from posix.time cimport CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, clock_gettime, timespec


cdef inline void* _alloc(Py_ssize_t nbytes) except NULL:
    """Zeroed memory (large blocks come as untouched, lazily zeroed pages)."""
    cdef void* p = calloc(nbytes if nbytes > 0 else 1, 1)
    if p == NULL:
        raise MemoryError()
    return p


cdef inline double _now() noexcept nogil:
    """Monotonic clock, in seconds."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double _thread_cpu_now() noexcept nogil:
    """CPU time of the calling thread, in seconds: a budget on it is not
    cut short when the machine is loaded."""
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


ctypedef struct KeyIdx:
    double key
    int32_t idx


cdef inline int _cmp_keyidx(const void* a, const void* b) noexcept nogil:
    """``qsort`` order of :c:type:`KeyIdx`: by key, then by index."""
    cdef double ka = (<const KeyIdx*>a).key
    cdef double kb = (<const KeyIdx*>b).key
    if ka < kb:
        return -1
    if ka > kb:
        return 1
    return (<const KeyIdx*>a).idx - (<const KeyIdx*>b).idx


cdef inline int _trace_point(double* trace, int n, int cap, double t, double obj,
                             double lb) noexcept nogil:
    """Append ``(t, obj, lb)`` to an anytime trace of ``n`` points (three
    doubles each) when it improves the incumbent or the bound; returns the
    new number of points (at most ``cap``). The incumbent never gets worse
    (a search started again may find a worse tree first, and keeps the
    better one): a point with a better bound keeps the last incumbent."""
    cdef double* last
    if n >= cap:
        return n
    if n > 0:
        last = trace + 3 * (n - 1)
        if not (obj < last[1] or lb > last[2]):
            return n
        if obj > last[1]:
            obj = last[1]
    last = trace + 3 * n
    last[0] = t
    last[1] = obj
    last[2] = lb
    return n + 1


cdef inline double _largest(const double* sup, int K) noexcept nogil:
    """The largest of the class supports ``sup[:K]`` (0 for none)."""
    cdef double big = 0.0
    cdef int c
    for c in range(K):
        if sup[c] > big:
            big = sup[c]
    return big


cdef inline double _misclassified(const double* sup, int K) noexcept nogil:
    """Loss of a leaf with class supports ``sup[:K]`` that predicts its
    largest class: the supports of the other classes (a search that has
    counted the rows prices it as ``rows - _largest(sup, K)``)."""
    cdef double total = 0.0
    cdef int c
    for c in range(K):
        total += sup[c]
    return total - _largest(sup, K)


cdef inline double _cheapest_cost(const double* cost, const double* sup,
                                  int K) noexcept nogil:
    """Loss of a leaf with class supports ``sup[:K]`` that predicts the class
    of least cost, ``cost[p * K + c]`` for predicting p on class c."""
    cdef double best = INFINITY, v
    cdef int p, c
    for p in range(K):
        v = 0.0
        for c in range(K):
            v += cost[p * K + c] * sup[c]
        if v < best:
            best = v
    return best
