/*
 * lanes.h - eight 32-bit integer lanes for the model's vectorized paths
 * (GCC/Clang vector extensions: AVX2 registers in the avx2 clone of a
 * MULTI_ISA function, pairs of SSE registers otherwise).  Integer code only:
 * both clones give identical bits.
 */
#ifndef MMAFUZZ_LANES_H
#define MMAFUZZ_LANES_H

#include <stdint.h>
#include <string.h>

/* Built twice where the compiler can: for AVX2 and for the baseline ISA; the
 * loader picks one at start-up. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(MMAFUZZ_NO_CLONES)
#define MULTI_ISA __attribute__((target_clones("avx2", "default")))
#else
#define MULTI_ISA
#endif

typedef uint32_t v8u __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

/* v = eight 32-bit values at p (any alignment) */
#define LOAD8(v, p) memcpy(&(v), (p), sizeof(v))

/* The helpers are always inlined into the MULTI_ISA kernels, so the note GCC
 * gives on passing AVX vectors by value without AVX does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define AI static inline __attribute__((always_inline))

/* m ? a : b per lane (m: all ones or all zeros in each lane) */
AI v8u sel_lanes(v8u m, v8u a, v8u b) { return (a & m) | (b & ~m); }

/* Leading zeros of each lane (lanes that are 0 give 31: callers mask them). */
AI v8u clz_lanes(v8u x)
{
    v8u n = {0}, m;
    m = (v8u)((x >> 16) == 0), n += m & 16, x = (x & ~m) | ((x << 16) & m);
    m = (v8u)((x >> 24) == 0), n += m & 8, x = (x & ~m) | ((x << 8) & m);
    m = (v8u)((x >> 28) == 0), n += m & 4, x = (x & ~m) | ((x << 4) & m);
    m = (v8u)((x >> 30) == 0), n += m & 2, x = (x & ~m) | ((x << 2) & m);
    m = (v8u)((x >> 31) == 0), n += m & 1;
    return n;
}

#endif
