/*
 * gen_rng.h - the one pseudo-random generator of mmafuzz: wyrand streams
 * (one 64x64 -> 128-bit multiply per output), so that every generated tile
 * is a pure function of (seed, instruction, tile index).  The harness, the
 * devices' tools, the fuzz targets and the tests all draw from it.
 *
 * Pure C11 (plus unsigned __int128, which GCC, Clang and nvcc all have);
 * MF_HD marks what is compiled as CUDA device code too.
 */
#ifndef MMAFUZZ_GEN_RNG_H
#define MMAFUZZ_GEN_RNG_H

#include <stdint.h>

/* MF_HD (mf_portable.h) marks the functions of the generation code: plain
 * on the host, device code in the device build (devices/cuda/model_device.cuh). */
#include "mf_portable.h"

/* wyrand's increment: the state after d draws is the start + d * GEN_RNG_INC. */
#define GEN_RNG_INC UINT64_C(0xa0761d6478bd642f)

typedef struct gen_rng {
    uint64_t s;
} gen_rng;

/* wyrand (Wang Yi, wyhash): a Weyl sequence folded through a 128-bit product;
 * one 64-bit output per call, passes BigCrush and PractRand. */
MF_HD static inline uint64_t rng_next(gen_rng *r)
{
    r->s += GEN_RNG_INC;
    unsigned __int128 t = (unsigned __int128)r->s * (r->s ^ UINT64_C(0xe7037ed1a0b428db));
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

/* Draw number d of stream *r (0: the next one), which is not changed: what
 * the (d+1)-th rng_next(r) from here returns.  O(1), because the state is a
 * Weyl sequence (after d draws it is s + d * increment): elements that take
 * a fixed number of draws each can be generated one at a time, in any order
 * (gen_part_elem). */
MF_HD static inline uint64_t rng_peek(const gen_rng *r, uint64_t d)
{
    gen_rng t = {r->s + d * GEN_RNG_INC};
    return rng_next(&t);
}

/* The next output of the stream whose whole state is *state (for code that
 * keeps a bare 64-bit state). */
MF_HD static inline uint64_t rng_next_u64(uint64_t *state)
{
    gen_rng r = {*state};
    uint64_t x = rng_next(&r);
    *state = r.s;
    return x;
}

/* @return a value in [0, n) (n > 0); the small modulo bias is irrelevant here. */
MF_HD static inline uint32_t rng_below(gen_rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * n) >> 32);
}

/* @return a value in [lo, hi] (lo <= hi). */
MF_HD static inline int rng_range(gen_rng *r, int lo, int hi)
{
    return lo + (int)rng_below(r, (uint32_t)(hi - lo + 1));
}

/* A stream derived from several keys (mixing each in). */
MF_HD static inline gen_rng rng_derive(uint64_t a, uint64_t b, uint64_t c)
{
    gen_rng r = {a};
    r.s = rng_next(&r) ^ b;
    r.s = rng_next(&r) ^ c;
    rng_next(&r);
    return r;
}

/* splitmix64's finalizer (Steele, Lea and Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014; Vigna's splitmix64.c
 * constants): a bijective mix of 64 bits. */
MF_HD static inline uint64_t rng_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* splitmix64: the next value of the stream whose state is *s (the state
 * advances by the golden-ratio increment).  The refinement's random cases
 * (refine.c, fit.c) draw from it. */
MF_HD static inline uint64_t rng_splitmix64(uint64_t *s)
{
    return rng_mix64(*s += UINT64_C(0x9e3779b97f4a7c15));
}

/* The stream of part `key` of the stream *r, which is not changed (tile
 * generation in parts, mmafuzz_gen.h): r's state XOR a mix of key+1
 * (splitmix64's finalizer).  O(1); the starting points of different keys
 * lie far apart on wyrand's Weyl sequence (a difference of d states needs
 * (s ^ z1) - (s ^ z2) = d * increment), so their draws do not overlap in
 * practice, nor do they repeat the parent's. */
MF_HD static inline gen_rng rng_split(const gen_rng *r, uint64_t key)
{
    gen_rng p = {r->s ^ rng_mix64(key + 1)};
    return p;
}

/* FNV-1a of a string: a stable key for an instruction name. */
MF_HD static inline uint64_t rng_hash_str(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    while (*s)
        h = (h ^ (unsigned char)*s++) * UINT64_C(0x100000001b3);
    return h;
}

#endif
