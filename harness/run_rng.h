/*
 * run_rng.h - the fuzz driver's random numbers: wyrand streams (one 64x64
 * -> 128-bit multiply per output), so that every generated tile is a pure
 * function of (seed, instruction, tile index).
 */
#ifndef MMAFUZZ_RUN_RNG_H
#define MMAFUZZ_RUN_RNG_H

#include <stdint.h>

typedef struct rng {
    uint64_t s;
} rng;

/* wyrand (Wang Yi, wyhash): a Weyl sequence folded through a 128-bit product;
 * one 64-bit output per call, passes BigCrush and PractRand. */
static inline uint64_t rng_next(rng *r)
{
    r->s += UINT64_C(0xa0761d6478bd642f);
    unsigned __int128 t = (unsigned __int128)r->s * (r->s ^ UINT64_C(0xe7037ed1a0b428db));
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* @return a value in [0, n) (n > 0); the small modulo bias is irrelevant here. */
static inline uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(((rng_next(r) >> 32) * n) >> 32); }

/* @return a value in [lo, hi] (lo <= hi). */
static inline int rng_range(rng *r, int lo, int hi) { return lo + (int)rng_below(r, (uint32_t)(hi - lo + 1)); }

/* A stream derived from several keys (mixing each in). */
static inline rng rng_derive(uint64_t a, uint64_t b, uint64_t c)
{
    rng r = {a};
    r.s = rng_next(&r) ^ b;
    r.s = rng_next(&r) ^ c;
    rng_next(&r);
    return r;
}

/* FNV-1a of a string: a stable key for an instruction name. */
static inline uint64_t rng_hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    while (*s)
        h = (h ^ (unsigned char)*s++) * UINT64_C(0x100000001b3);
    return h;
}

#endif
