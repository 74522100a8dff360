/*
 * casegen.h - tiles of test inputs rich in boundaries, for `mmafuzz record`
 * and the device tests.  Plain C; no device needed.
 *
 * Tile t of a run is a pure function of (seed, t): every case can be
 * regenerated from the two numbers.  Tile t uses input mix t % MF_MIX_COUNT.
 */
#ifndef MMAFUZZ_CASEGEN_H
#define MMAFUZZ_CASEGEN_H

#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mf_mix {
    MF_MIX_RANDOM,       /* uniformly random bit patterns */
    MF_MIX_SPECIAL,      /* +-0, +-Inf, NaN, max, min normal, min/max subnormal, +-1 among normal values */
    MF_MIX_SUBNORMAL,    /* subnormal and near-minimum inputs, tiny c */
    MF_MIX_CANCEL,       /* products that cancel in pairs, then single-bit perturbations */
    MF_MIX_ALIGN,        /* terms F-2 .. F+2 binades below the largest: the truncation boundary */
    MF_MIX_OVERFLOW,     /* products and c near the output format's overflow threshold */
    MF_MIX_ZERO_SIGN,    /* +-0 and exact cancellations: the sign of a zero result */
    MF_MIX_MIXED,        /* each element drawn from any of the above classes */
    MF_MIX_COUNT
} mf_mix;

/* @return the name of mix `m` ("random", "special", ...). */
const char *mf_mix_name(mf_mix m);

/* Fill tiles first .. first+ntiles-1 of the run `seed` for instruction `in`
 * in the ABI layout of mf_device.h (A row-major m x k, B column-major n x k,
 * C row-major m x n).  Scales (SA, SB; may be NULL) are filled for
 * block-scaled instructions. */
void mf_casegen_tiles(const mf_instr *in, int m, int n, int k, uint64_t seed, uint64_t first, size_t ntiles, void *A,
                      void *B, void *C, void *SA, void *SB);

/* splitmix64 step: the generator's random numbers (public for tests). */
uint64_t mf_splitmix64(uint64_t *state);

#ifdef __cplusplus
}
#endif
#endif
