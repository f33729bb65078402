"""Random numbers for the playouts: splitmix64 (seeding) and xoshiro256** (the games).

Shared by ``_play`` (the exact engine's games) and ``big._playout`` (big boards), so
a seed means the same piece sequence in both.
"""

from libc.stdint cimport uint64_t, int64_t

cdef inline uint64_t splitmix64(uint64_t* x) noexcept nogil:
    """The next output of the splitmix64 sequence whose state is ``*x``."""
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL  # 2**64 / the golden ratio
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef struct Rng:
    uint64_t s0, s1, s2, s3


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    r.s0 = splitmix64(&seed)
    r.s1 = splitmix64(&seed)
    r.s2 = splitmix64(&seed)
    r.s3 = splitmix64(&seed)


cdef inline uint64_t rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    """xoshiro256** (Blackman and Vigna, 2018)."""
    cdef uint64_t result = rotl(r.s1 * 5, 7) * 9
    cdef uint64_t t = r.s1 << 17
    r.s2 ^= r.s0
    r.s3 ^= r.s1
    r.s1 ^= r.s2
    r.s0 ^= r.s3
    r.s2 ^= t
    r.s3 = rotl(r.s3, 45)
    return result


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    """A double in [0, 1): the top 53 bits."""
    return <double>(rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline int64_t rng_below(Rng* r, int64_t n) noexcept nogil:
    """An integer in [0, n) for 1 <= n < 2**32: the top 32 bits scaled
    (multiply and shift; the bias is below n / 2**32)."""
    return <int64_t>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)
