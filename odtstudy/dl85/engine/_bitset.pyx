# cython: language_level=3
"""Packed 0/1 columns as 64-bit words, and popcount over them.

Column ``j`` of a 0/1 matrix becomes ``n_words = ceil(n_rows / 64)`` words;
bit ``i % 64`` of word ``i // 64`` is row ``i``. The DL8.5 search counts
covers with these words.
"""

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint64_t

cnp.import_array()


cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil


cdef inline int popcount64(uint64_t word) noexcept nogil:
    return __builtin_popcountll(word)


def n_words_for(Py_ssize_t n_rows):
    """Number of 64-bit words that hold ``n_rows`` bits."""
    return (n_rows + 63) // 64


def pack_columns(const unsigned char[:, :] X):
    """Pack each column of a 0/1 ``uint8`` matrix into 64-bit words.

    Returns
    -------
    ndarray of uint64, shape (n_features, n_words)
    """
    cdef Py_ssize_t n = X.shape[0], m = X.shape[1], i, j
    cdef Py_ssize_t n_words = (n + 63) // 64
    out = np.zeros((m, n_words), dtype=np.uint64)
    cdef uint64_t[:, :] words = out
    with nogil:
        for i in range(n):
            for j in range(m):
                if X[i, j]:
                    words[j, i >> 6] |= (<uint64_t>1) << (i & 63)
    return out


def pack_mask(const unsigned char[:] mask):
    """Pack a 0/1 row mask (e.g. the rows of one class) into 64-bit words."""
    cdef Py_ssize_t n = mask.shape[0], i
    out = np.zeros((n + 63) // 64, dtype=np.uint64)
    cdef uint64_t[:] words = out
    with nogil:
        for i in range(n):
            if mask[i]:
                words[i >> 6] |= (<uint64_t>1) << (i & 63)
    return out


def popcount(const uint64_t[:] words):
    """Number of set bits in ``words``."""
    cdef Py_ssize_t k
    cdef long total = 0
    with nogil:
        for k in range(words.shape[0]):
            total += popcount64(words[k])
    return total


def popcount_and(const uint64_t[:] a, const uint64_t[:] b):
    """Number of bits set in both ``a`` and ``b`` (size of a cover intersection)."""
    if a.shape[0] != b.shape[0]:
        raise ValueError("bitsets of different lengths")
    cdef Py_ssize_t k
    cdef long total = 0
    with nogil:
        for k in range(a.shape[0]):
            total += popcount64(a[k] & b[k])
    return total
