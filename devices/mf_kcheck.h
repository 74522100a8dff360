/*
 * mf_kcheck.h - whole GEMM calls checked on the GPU against the kernel model
 * (model/mmafuzz_kernel.h), and operands for them made on the GPU: the
 * device half of kernel fuzzing (`mmafuzz gemm -runs N`, docs/kernels.md).
 *
 * Operands and outputs stay in device memory: a fuzzing loop makes A and B
 * here, runs the GEMM (devices/mf_gemm.h), and checks D here, copying back
 * only the count of outputs that differ and the first few of them.
 *
 * Layout is mf_gemm.h's: A row-major M x K; B row-major K x N, or N x K rows
 * (b_colmajor); D row-major M x N; `calls` calls of one shape back to back
 * in each buffer.
 *
 * The functions exist in every build; without the CUDA layer they fail with
 * a message saying so.  Plain C ABI.
 */
#ifndef MF_KCHECK_H
#define MF_KCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "mmafuzz_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outputs that differ reported back one by one (the rest are counted). */
#define MF_KCHECK_MISSES 32

/* How a call's operands are drawn (mf_kgen_run). */
typedef enum mf_kgen_kind {
    MF_KGEN_NORMAL = 0,   /* finite values, exponents within 2^-8 .. 2^8 of 1 */
    MF_KGEN_WIDE,         /* any finite bit pattern: overflow, underflow, subnormals */
    MF_KGEN_SPECIAL,      /* NORMAL with one element in 64 a zero, subnormal, extreme, Inf or NaN */
    MF_KGEN_CANCEL,       /* second half of K repeats the first (A) or negates it (B): sums cancel to what
                             rounding and order leave */
    MF_KGEN_SPIKES,       /* small values with a few large terms of both signs (FPRev-like) */
    MF_KGEN_COUNT
} mf_kgen_kind;

/* Name of a kind ("normal", ...), for reports. */
const char *mf_kgen_name(int kind);

/* One batch of GEMM calls to check. */
typedef struct mf_kcheck_job {
    const mf_kernel *kr;    /* the kernel model (host struct; its row is copied) */
    int64_t m, n, k;
    int calls;              /* calls of this shape back to back in dA, dB, dD */
    int b_colmajor;
    const void *dA, *dB, *dD;   /* device pointers */
} mf_kcheck_job;

typedef struct mf_kcheck_miss {
    uint32_t call, i, j;
    uint64_t got, want;     /* D's bits and the kernel model's */
} mf_kcheck_miss;

typedef struct mf_kcheck_result {
    uint64_t outputs;       /* outputs checked */
    uint64_t differ;        /* of which not equal (bit for bit; any NaN equals any NaN) */
    uint64_t steps;         /* instruction-level dot products the model evaluated */
    int fixed;              /* 1: the fixed-shape path (operands in registers); 0: the general mf_eval path */
    int nmiss;              /* entries of miss[] filled (<= MF_KCHECK_MISSES) */
    mf_kcheck_miss miss[MF_KCHECK_MISSES];
} mf_kcheck_result;

/* Fill `count` elements of format f at device pointer dptr (calls of `per`
 * elements each, each call drawing with its own stream) from seed, as kind
 * says.  `role` 0 for A, 1 for B (CANCEL mirrors A and negates B); `kdim`
 * and `kstride`/`rstride` say where an element sits in K (element e of a call
 * is at k = (e / kstride) % kdim when rstride is 0, else (e % rstride)),
 * for the kinds that depend on K.  @return 0, or -1 with why in err. */
int mf_kgen_run(mf_format f, void *dptr, size_t count, size_t per, uint64_t seed, int kind, int role,
                int64_t kdim, int64_t kstride, int64_t rstride, void *stream, char *err, size_t errlen);

/* Check every output of job's calls on the GPU of the current CUDA device
 * (the one mf_gemm_open opened): each against mf_kernel_dot of the kernel
 * model.  Waits for the stream.  @return 0, or -1 with why in err. */
int mf_kcheck_run(const mf_kcheck_job *job, mf_kcheck_result *res, void *stream, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MF_KCHECK_H */
