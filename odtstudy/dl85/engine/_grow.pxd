# cython: language_level=3
"""Growth of a C array: the one "resize or report out of memory" step of the
DL8.5 caches (``_cache.pyx``, ``_boxcache.pyx``, ``_cache_policy.pyx``)."""

from libc.stdint cimport uintptr_t
from libc.stdlib cimport realloc


cdef extern from "<sys/mman.h>" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE


cdef enum:
    HUGE_PAGE = 1 << 21
    # arrays from this size ask for huge pages: the caches are probed at
    # random, so with 4 KiB pages nearly every probe of a large table also
    # misses the TLB
    HUGE_MIN = 1 << 25


cdef inline void _advise_huge(void* p, size_t nbytes) noexcept nogil:
    """Ask for transparent huge pages on the 2 MiB pages inside the array
    (a hint: ignored where the system does not give them)."""
    cdef uintptr_t start, end
    if nbytes < HUGE_MIN:
        return
    start = (<uintptr_t>p + HUGE_PAGE - 1) & ~(<uintptr_t>HUGE_PAGE - 1)
    end = (<uintptr_t>p + nbytes) & ~(<uintptr_t>HUGE_PAGE - 1)
    if end > start:
        madvise(<void*>start, end - start, MADV_HUGEPAGE)


cdef inline bint _grow_array(void** array, Py_ssize_t n_items,
                             size_t item_size) noexcept nogil:
    """Resize ``*array`` to ``n_items`` items of ``item_size`` bytes.

    Returns False when memory runs out; ``*array`` is then unchanged (still
    valid, at its old size), so the caller only flags the failure."""
    cdef size_t nbytes = (n_items if n_items > 0 else 1) * item_size
    cdef void* p = realloc(array[0], nbytes)
    if p == NULL:
        return False
    _advise_huge(p, nbytes)
    array[0] = p
    return True
