# cython: language_level=3
"""The wipe policy of the bounded DL8.5 caches, one for all of them.

Responsibility: decide which entries a wipe of a bounded cache deletes, for
the itemset caches of the 0/1 search (``_cache.pyx``: trie, hash table) and
the box cache of the numeric search (``_boxcache.pyx``), and check the
options that say how (``wipe_strategy``, ``wipe_factor``). A cache keeps
per entry what the policy ranks by (:c:type:`WipePolicy`: its reuses and its
remaining depth), tags the entries that must stay, and deletes what the
policy selects; how it deletes (trie edges, hash slots, compaction) is its
own business.

What is never wiped
-------------------
Entries a cache tags as kept: in the 0/1 caches the paths under evaluation
(with their trie ancestors) and the current best tree below the root and
below each of those paths (Aglin, Nijssen and Schaus, ECML PKDD 2022,
``setCurUsefulTag`` and ``setOptiUsefulTag``); when those leave no room, a
second pass keeps only the paths under evaluation. The numeric search writes
a node's entry when the node's evaluation ends and holds no entry across an
insertion, so nothing of its box cache is under evaluation and nothing is
tagged. Both searches rebuild the wiped nodes of their best tree after the
search, so no strategy changes the optimum.

Strategies (one meaning in every cache)
---------------------------------------
The candidates (live, untagged entries) are ranked by a key, smallest
deleted first:

* ``"reuses"``: lookups that returned the entry since it was created (in
  the trie a lookup also counts for every prefix node on the way, as in the
  paper, so an ancestor never ranks below its descendants); ties go to the
  entry of smaller remaining depth;
* ``"descendants"``: the entry's descendant paths in the cache, counted at
  each wipe (the trie's subtree, by a post-order pass; the hash table's
  supersets, through the itemset lattice); ties as for reuses. Only the 0/1
  caches link an entry to its descendants: a box's sub-boxes are not found
  from its key (their intervals are tightened to their rows), so counting
  them would compare every pair of entries at each wipe. The numeric search
  refuses this strategy (with ``thresholds`` in the estimators, whichever
  search the data goes to, so that the option never depends on the data);
* ``"remaining_depth"``: the entry's remaining depth (the deepest
  subproblems, the cheapest to solve again, go first); ties in entry order;
* ``"all_non_useful"``: every candidate.

Scores saturate; a key is ``score << 6 | remaining depth`` with the score
capped at 26 bits. Deeper entries going first on ties keeps what the trie
deletes closed under descendants.

How many
--------
``max(wipe_factor * max_size, needed)`` candidates (all of them when fewer
remain), the ones of smallest key: the threshold key comes from two
histogram passes over the keys (high, then low 16 bits), with no sort and
no memory per entry; then the cache asks :c:func:`takes` of each
candidate in entry order.
"""

from libc.stdint cimport int32_t, uint8_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from odtstudy.dl85.engine._grow cimport _grow_array

#: The ``wipe_strategy`` names and their codes.
WIPE_STRATEGIES = {
    "reuses": WIPE_REUSES,
    "descendants": WIPE_DESCENDANTS,
    "remaining_depth": WIPE_REMAINING_DEPTH,
    "all_non_useful": WIPE_ALL_NON_USEFUL,
}
#: The strategies the numeric search's box cache ranks by.
NUMERIC_WIPE_STRATEGIES = frozenset(WIPE_STRATEGIES) - {"descendants"}

cdef Py_ssize_t _HIST_SIZE = 65536


def _choices(names):
    return ", ".join(repr(name) for name in sorted(names))


def check_wipe_strategy(strategy, *, bint numeric=False):
    """The code of a ``wipe_strategy`` name.

    Parameters
    ----------
    strategy : str
        One of :data:`WIPE_STRATEGIES`.
    numeric : bool, default=False
        For the numeric search (``thresholds``), which does not count
        descendants.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        Naming ``wipe_strategy``, the value and the values allowed.
    """
    allowed = NUMERIC_WIPE_STRATEGIES if numeric else WIPE_STRATEGIES
    if strategy in allowed:
        return WIPE_STRATEGIES[strategy]
    if strategy in WIPE_STRATEGIES:
        problem = (
            "is not available with thresholds (numeric features): the numeric "
            "search's box cache has no links from an entry to its descendants"
        )
    else:
        problem = "is not a wipe strategy"
    raise ValueError(f"wipe_strategy={strategy!r} {problem}; use one of "
                     f"{_choices(allowed)}")


def check_wipe_factor(double wipe_factor):
    """Raise a ValueError unless ``0 < wipe_factor <= 1``."""
    if not 0.0 < wipe_factor <= 1.0:
        raise ValueError(f"wipe_factor={wipe_factor!r} is not in (0, 1]; use the "
                         "share of the cache bound a wipe frees, e.g. 0.5")


cdef int configure(WipePolicy* pol, strategy, double wipe_factor,
                   bint numeric) except -1:
    """Check and set the options (the per-entry arrays come with
    :c:func:`grow`)."""
    cdef int code = check_wipe_strategy(strategy, numeric=numeric)
    check_wipe_factor(wipe_factor)
    pol.strategy = code
    pol.wipe_factor = wipe_factor
    return 0


cdef bint grow(WipePolicy* pol, Py_ssize_t capacity) noexcept nogil:
    """Room for ``capacity`` entries in the per-entry arrays."""
    return (_grow_array(<void**>&pol.score, capacity, sizeof(uint32_t))
            and _grow_array(<void**>&pol.remaining, capacity, sizeof(uint8_t)))


cdef void release(WipePolicy* pol) noexcept nogil:
    free(pol.score)
    free(pol.remaining)
    pol.score = NULL
    pol.remaining = NULL


cdef Py_ssize_t quota(const WipePolicy* pol, Py_ssize_t max_size,
                      Py_ssize_t need) noexcept nogil:
    """Entries one wipe deletes: the ``wipe_factor`` share of the bound, and
    at least the ``need`` the insertion lacks."""
    cdef Py_ssize_t share = <Py_ssize_t>(max_size * pol.wipe_factor)
    return share if share > need else need


cdef bint cut(const WipePolicy* pol, const int32_t* flags, Py_ssize_t stride,
              int32_t kept, Py_ssize_t n, Py_ssize_t n_take,
              WipeCut* out) noexcept nogil:
    """Choose the ``n_take`` candidates of smallest key among entries
    ``0 .. n - 1``. A candidate is an entry whose flags (``flags[e * stride]``)
    hold none of the bits ``kept``; every entry when ``flags`` is NULL.
    Returns False when memory runs out."""
    cdef Py_ssize_t* hist
    cdef Py_ssize_t e, n_cand = 0, cum = 0, high = 0, low = 0, take_eq
    cdef uint32_t k
    out.thr = 0xFFFFFFFF
    out.take_eq = 0
    out.take_all = pol.strategy == WIPE_ALL_NON_USEFUL
    if out.take_all:
        return True
    hist = <Py_ssize_t*>malloc(_HIST_SIZE * sizeof(Py_ssize_t))
    if hist == NULL:
        return False
    memset(hist, 0, _HIST_SIZE * sizeof(Py_ssize_t))
    for e in range(n):
        if flags == NULL or not (flags[e * stride] & kept):
            hist[key(pol, e) >> 16] += 1
            n_cand += 1
    if n_take >= n_cand:
        out.take_all = True
        free(hist)
        return True
    while cum + hist[high] < n_take:
        cum += hist[high]
        high += 1
    take_eq = n_take - cum             # candidates to take from bucket high
    memset(hist, 0, _HIST_SIZE * sizeof(Py_ssize_t))
    for e in range(n):
        if flags == NULL or not (flags[e * stride] & kept):
            k = key(pol, e)
            if (k >> 16) == <uint32_t>high:
                hist[k & 0xFFFF] += 1
    cum = 0
    while cum + hist[low] < take_eq:
        cum += hist[low]
        low += 1
    free(hist)
    out.thr = <uint32_t>((high << 16) | low)
    out.take_eq = take_eq - cum       # candidates to take with key == thr
    return True
