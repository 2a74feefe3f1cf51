# cython: language_level=3
"""Declarations of the bounded-cache wipe policy (see ``_cache_policy.pyx``)."""

from libc.stdint cimport int32_t, uint8_t, uint32_t

cdef enum:
    WIPE_REUSES = 0
    WIPE_DESCENDANTS = 1
    WIPE_REMAINING_DEPTH = 2
    WIPE_ALL_NON_USEFUL = 3

cdef enum:
    # the largest score a key holds (26 bits, above the remaining depth's 6)
    _SCORE_KEY_MAX = (1 << 26) - 1


ctypedef struct WipePolicy:
    int strategy            # WIPE_*
    double wipe_factor      # share of the bound one wipe frees
    uint32_t* score         # per entry: reuses (saturating), or descendants
    uint8_t* remaining      # per entry: remaining depth of its subproblem


ctypedef struct WipeCut:
    # the candidates a wipe deletes: every key below ``thr``, and the first
    # ``take_eq`` (in entry order) equal to it; all of them with ``take_all``
    uint32_t thr
    Py_ssize_t take_eq
    bint take_all


cdef int configure(WipePolicy* pol, strategy, double wipe_factor,
                   bint numeric) except -1
cdef bint grow(WipePolicy* pol, Py_ssize_t capacity) noexcept nogil
cdef void release(WipePolicy* pol) noexcept nogil
cdef Py_ssize_t quota(const WipePolicy* pol, Py_ssize_t max_size,
                      Py_ssize_t need) noexcept nogil
cdef bint cut(const WipePolicy* pol, const int32_t* flags, Py_ssize_t stride,
              int32_t kept, Py_ssize_t n, Py_ssize_t n_take,
              WipeCut* out) noexcept nogil


cdef inline void new_entry(WipePolicy* pol, Py_ssize_t e,
                           int remaining) noexcept nogil:
    """A new entry ``e``: no reuse yet, its remaining depth."""
    pol.score[e] = 0
    pol.remaining[e] = <uint8_t>remaining


cdef inline void hit(WipePolicy* pol, Py_ssize_t e) noexcept nogil:
    """A lookup returned entry ``e`` (the count saturates, never wraps)."""
    pol.score[e] += pol.score[e] != <uint32_t>0xFFFFFFFF


cdef inline uint32_t key(const WipePolicy* pol, Py_ssize_t e) noexcept nogil:
    """Wipe key of entry ``e``: smaller keys are deleted first."""
    cdef uint32_t s
    if pol.strategy == WIPE_REMAINING_DEPTH:
        return pol.remaining[e]
    s = pol.score[e]
    if s > _SCORE_KEY_MAX:
        s = _SCORE_KEY_MAX
    # ties: the smaller remaining depth (the deeper entry) first
    return (s << 6) | pol.remaining[e]


cdef inline bint takes(const WipePolicy* pol, WipeCut* chosen,
                       Py_ssize_t e) noexcept nogil:
    """Whether the wipe deletes candidate ``e`` (ask once per candidate, in
    entry order)."""
    cdef uint32_t k
    if chosen.take_all:
        return True
    k = key(pol, e)
    if k < chosen.thr:
        return True
    if k == chosen.thr and chosen.take_eq > 0:
        chosen.take_eq -= 1
        return True
    return False
