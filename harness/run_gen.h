/*
 * run_gen.h - the fuzz driver's case generators.  A generator fills one
 * whole tile (M x K of A, N x K of B, M x N of C, and the scales) in the
 * canonical ABI layout of mf_device.h; every output element of the tile is
 * then one case.  Each tile is a pure function of (seed, instruction name,
 * tile index, mix, mutation pool), so a case is reproducible from
 * (seed, index) with index = tile * M * N + row * N + column.
 */
#ifndef MMAFUZZ_RUN_GEN_H
#define MMAFUZZ_RUN_GEN_H

#include "run_pool.h"
#include "run_rng.h"

#include <stddef.h>
#include <stdint.h>

typedef enum gen_kind {
    GEN_UNIFORM,   /* uniform random bits */
    GEN_WINDOW,    /* every value in a narrow exponent window */
    GEN_CANCEL,    /* products that nearly cancel, in pairs and against c */
    GEN_SPECIAL,   /* +-0, +-Inf, NaN payloads, subnormal extremes, largest finite, powers of two */
    GEN_BOUNDARY,  /* output overflow/underflow thresholds, alignment shifts of F and F+-1, e_zero region */
    GEN_TABLE,     /* TestFloat-style: exponent classes crossed with significand patterns */
    GEN_MUTATE,    /* corpus mutation of saved cases */
    GEN_COUNT
} gen_kind;

const char *gen_name(gen_kind g);

/* Relative weights of the generators. */
typedef struct gen_mix {
    uint32_t w[GEN_COUNT];
} gen_mix;

/* The default mix: every generator, mutation only when the pool has cases. */
void gen_mix_default(gen_mix *m);
/* Parse "NAME[:WEIGHT],..." (e.g. "uniform:1,special:2,mutate").
 * @return 0, or -1 with a message naming the bad item. */
int gen_mix_parse(const char *s, gen_mix *m, char *err, size_t errlen);
/* Format a mix as parse accepts it. */
void gen_mix_format(const gen_mix *m, char *buf, size_t len);

/* Everything generation of one batch needs. */
typedef struct gen_ctx {
    const mf_instr *in;
    int m, n, k;
    uint64_t seed;
    gen_mix mix;               /* GEN_MUTATE ignored when nview == 0 */
    const pool_entry *const *view;  /* compatible pool cases */
    size_t nview;
    void *A, *B, *C, *SA, *SB; /* batch buffers (ABI layout) */
} gen_ctx;

/* Generate tile number `tile` of the campaign into position `slot` of the
 * batch buffers.  @return the generator used. */
gen_kind gen_tile(const gen_ctx *g, uint64_t tile, size_t slot);

/* Put one case at the diagonal position (s, s) of tile `slot`: row s of A
 * and SA, column s of B and SB, C[s][s].  (s < min(M, N).) */
void gen_put_case(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                  size_t slot, int s, const mf_case *cs);

/* Apply 1 to 4 random mutations (bit flips, exponent +-1, last-mantissa-bit
 * flips, sign flips, a permutation of the K positions, special values, a
 * splice with `other` when not NULL) to *cs. */
void gen_mutate(const mf_instr *in, rng *r, mf_case *cs, const mf_case *other);

#endif
