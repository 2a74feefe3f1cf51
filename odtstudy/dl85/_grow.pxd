# cython: language_level=3
"""Growth of a C array: the one "resize or report out of memory" step of the
DL8.5 caches (``_cache.pyx``, ``_boxcache.pyx``, ``_cache_policy.pyx``)."""

from libc.stdlib cimport realloc


cdef inline bint _grow_array(void** array, Py_ssize_t n_items,
                             size_t item_size) noexcept nogil:
    """Resize ``*array`` to ``n_items`` items of ``item_size`` bytes.

    Returns False when memory runs out; ``*array`` is then unchanged (still
    valid, at its old size), so the caller only flags the failure."""
    cdef void* p = realloc(array[0], (n_items if n_items > 0 else 1) * item_size)
    if p == NULL:
        return False
    array[0] = p
    return True
