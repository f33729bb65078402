# cython: language_level=3
"""The greedy backups' shared declarations: what a pass reads (:c:type:`Backup`),
and the tie-breaking pass the :class:`~babytris.solvers._sweep.Sweeper` runs on its own,
already checked, arrays."""

from libc.stdint cimport int32_t, int16_t, uint8_t

from babytris.engine._types cimport offset_t

cdef struct Backup:
    const offset_t* offsets
    const int32_t* nxt
    const uint8_t* lines
    const double* scores
    const double* move_reward  # if not NULL, each move's reward (instead of scores[lines])
    const double* W
    double discount

cdef Py_ssize_t first_best(const Backup* m, int16_t* policy, double slack, const double* known, Py_ssize_t n,
                           int n_threads) noexcept nogil
