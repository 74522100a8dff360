/*
 * gemm_fuzz.h - fuzzing whole cuBLASLt GEMM calls on the GPU against the
 * kernel model (gemm_fuzz.c; `mmafuzz gemm -runs N`).
 */
#ifndef MMAFUZZ_GEMM_FUZZ_H
#define MMAFUZZ_GEMM_FUZZ_H

#include "mmafuzz_kernel.h"

#include <stdint.h>

typedef struct gemm_fuzz_opts {
    int device;              /* CUDA ordinal */
    uint64_t seed;
    uint64_t runs;           /* GEMM calls (0: no limit) */
    double max_time;         /* seconds (0: no limit) */
    const char *out;         /* the store: findings under OUT/findings/ */
    const mf_format *types_in, *types_out;
    int ntypes;
    const int64_t *ms, *ns, *ks;   /* the sizes drawn from (a quarter of the draws move one by -7..+7) */
    int nms, nns, nks;
    int algos;               /* algorithms of the heuristic's list drawn from (1..8) */
    int mem_mib;             /* device memory a round's operand may take */
    double status_every;     /* seconds between status lines */
    int json;                /* the summary as JSON */
    int require_gpu;         /* no GPU: exit 1 (MMAFUZZ_REQUIRE_GPU) instead of 77 */
} gemm_fuzz_opts;

/* @return 0 (no disagreement left unexplained), 1 (some unexplained, or a
 * GPU error), 77 (no GPU and not required). */
int gemm_fuzz(const gemm_fuzz_opts *o);

#endif
