# cython: language_level=3
"""Compiled partition refinement: relabel rows of codes by exact signature.

One round of refinement labels each row (a state's moves, or a board's
pieces) by its previous label and the sorted multiset (or set) of its codes.
Equal signatures get equal labels, whatever their hash: rows that hash alike
are compared element by element, so no collision can merge two rows.
"""

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, free

from babytris.engine._types cimport mix64

import numpy as np

# Rows start at a table's int32 offsets (states) or at int64 ones (boards).
ctypedef fused start_t:
    int32_t
    int64_t


cdef void sort_row(int64_t* a, Py_ssize_t n) noexcept nogil:
    """In-place ascending sort: insertion sort for the short rows of a move
    table, a heap sort beyond (no recursion, no allocation)."""
    cdef Py_ssize_t i, j, start, end, root, child
    cdef int64_t x, t
    if n <= 32:
        for i in range(1, n):
            x = a[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        return
    # heap sort
    start = n // 2
    end = n
    while end > 1:
        if start > 0:
            start -= 1
        else:
            end -= 1
            t = a[end]
            a[end] = a[0]
            a[0] = t
        root = start
        while 2 * root + 1 < end:
            child = 2 * root + 1
            if child + 1 < end and a[child] < a[child + 1]:
                child += 1
            if a[root] < a[child]:
                t = a[root]
                a[root] = a[child]
                a[child] = t
                root = child
            else:
                break


cdef Py_ssize_t unique_prefix(int64_t* a, Py_ssize_t n) noexcept nogil:
    """Move the distinct values of the sorted ``a[:n]`` to its front; return their count."""
    cdef Py_ssize_t i, kept = 0
    for i in range(n):
        if kept == 0 or a[i] != a[kept - 1]:
            a[kept] = a[i]
            kept += 1
    return kept


cdef inline bint same_row(const int64_t* codes, const start_t* starts, const int64_t* lengths,
                          const int64_t* previous, Py_ssize_t i, Py_ssize_t j) noexcept nogil:
    cdef int64_t k, n = lengths[i]
    if previous[i] != previous[j] or lengths[j] != n:
        return False
    for k in range(n):
        if codes[starts[i] + k] != codes[starts[j] + k]:
            return False
    return True


def relabel(const start_t[::1] starts, int64_t[::1] codes, const int64_t[::1] previous, bint as_set=False):
    """Label row i (``codes[starts[i]:starts[i + 1]]``) by its previous label
    and the sorted multiset of its codes (with ``as_set``, the set: repeated
    codes count once).

    Sorts every row of ``codes`` in place (with ``as_set``, each row's
    distinct codes first).  Returns ``(labels, n_labels)``:
    int64 labels numbered by first appearance (row order), so equal inputs
    give equal outputs and a partition never merges rows labelled apart.
    """
    cdef Py_ssize_t n = previous.shape[0], i, slot
    cdef size_t capacity = 16, mask
    cdef uint64_t h
    cdef int64_t k, next_label = 0
    cdef int64_t* table          # row index of each label's first row, -1: empty
    cdef uint64_t* hashes
    cdef int64_t* lengths        # codes of each row that count: all, or the distinct ones
    if starts.shape[0] != n + 1 or (n and (starts[0] != 0 or starts[n] != codes.shape[0])):
        raise ValueError("relabel: starts must run from 0 to len(codes), one more than previous")
    for i in range(n):
        if starts[i + 1] < starts[i]:
            raise ValueError("relabel: starts must not decrease")
    while capacity < 2 * <size_t>n:
        capacity <<= 1
    mask = capacity - 1
    labels = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out = labels
    table = <int64_t*>malloc(capacity * sizeof(int64_t))
    hashes = <uint64_t*>malloc((n + 1) * sizeof(uint64_t))
    lengths = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    if table == NULL or hashes == NULL or lengths == NULL:
        free(table)
        free(hashes)
        free(lengths)
        raise MemoryError("relabel: cannot allocate the table")
    with nogil:
        for slot in range(<Py_ssize_t>capacity):
            table[slot] = -1
        for i in range(n):
            lengths[i] = starts[i + 1] - starts[i]
            if lengths[i] > 1:
                sort_row(&codes[starts[i]], lengths[i])
                if as_set:
                    lengths[i] = unique_prefix(&codes[starts[i]], lengths[i])
            h = mix64(<uint64_t>previous[i] ^ 0x51ed270b27a4e11dULL)
            for k in range(starts[i], starts[i] + lengths[i]):
                h = mix64(h ^ <uint64_t>codes[k])
            h = mix64(h ^ <uint64_t>lengths[i])
            hashes[i] = h
            slot = <Py_ssize_t>(h & mask)
            while True:
                if table[slot] == -1:
                    table[slot] = i
                    out[i] = next_label
                    next_label += 1
                    break
                if hashes[table[slot]] == h and same_row(&codes[0] if codes.shape[0] else NULL, &starts[0],
                                                         lengths, &previous[0], table[slot], i):
                    out[i] = out[table[slot]]
                    break
                slot = (slot + 1) & <Py_ssize_t>mask
    free(table)
    free(hashes)
    free(lengths)
    return labels, int(next_label)
