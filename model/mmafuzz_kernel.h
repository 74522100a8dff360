/*
 * mmafuzz_kernel.h - the kernel model: what a whole GEMM call computes for one
 * output element, as the accumulation structure of the kernel that runs it
 * (docs/kernels.md; shared/DOMAIN.md section 9).
 *
 * A GEMM kernel's main loop issues one instruction (a row of the instruction
 * table) per K step and feeds each D into the next C.  Around that loop the
 * kernel model adds what libraries do:
 *   - split-K: K's main-loop iterations (bk elements each) cut into `split`
 *     slices, each accumulated from +0 by its own CTA, then summed in binary32
 *     (`reduce`) before the epilogue;
 *   - promotion (FP8 GEMMs): every `promote` instructions the instruction's
 *     accumulator is added into a binary32 accumulator and restarted from +0;
 *   - the epilogue: one conversion of the binary32 sum to the output format,
 *     round to nearest even (alpha = 1 and beta = 0: the only ones modelled).
 * K that is not a multiple of the instruction's K is padded with zeros, as a
 * kernel's out-of-range loads are.
 *
 * Like the instruction model it is integer arithmetic on bit patterns, and
 * compiles as device code (MF_HD).
 */
#ifndef MMAFUZZ_KERNEL_H
#define MMAFUZZ_KERNEL_H

#include "mmafuzz_model.h"

#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
extern "C" {
#endif

/* How the main-loop iterations of K are shared out among the slices. */
typedef enum mf_ksplit {
    MF_KSPLIT_CEIL = 0,   /* ceil(iters / split) iterations a slice, the last takes what is left */
    MF_KSPLIT_BALANCED,   /* floor(iters / split) each, the first (iters % split) one more */
    MF_KSPLIT_COUNT
} mf_ksplit;

/* How the slices' binary32 partial sums are added. */
typedef enum mf_kreduce {
    MF_KRED_SERIAL = 0,   /* ((p0 + p1) + p2) + ... in slice order */
    MF_KRED_TREE,         /* pairwise: (p0 + p1) + (p2 + p3), levels of neighbours */
    MF_KRED_COUNT
} mf_kreduce;

typedef struct mf_kernel {
    const mf_instr *in;   /* the main loop's row: C = D = the accumulator format */
    uint32_t bk;          /* K elements a main-loop iteration (a multiple of in->k) */
    uint32_t split;       /* slices (1: no split-K) */
    uint8_t split_rule;   /* mf_ksplit */
    uint8_t reduce;       /* mf_kreduce */
    uint32_t promote;     /* instructions between promotions into binary32; 0: none */
    mf_format out;        /* the output's format: F32, F16 or BF16 */
} mf_kernel;

/* Slice s of K's `iters` main-loop iterations: [*first, *end). */
MF_HD void mf_kernel_slice(const mf_kernel *kr, uint32_t iters, uint32_t s, uint32_t *first, uint32_t *end);

/* The pieces of mf_kernel_dot, for a caller that evaluates the instruction
 * steps itself (the GPU's fixed-shape check, devices/cuda/kernel_check.cuh):
 *   for each slice s < split: mf_kernel_slice_k gives its K range [k0, k1)
 *   (K padded to the instruction's K); an mf_kacc starts at zero; each
 *   instruction step sets acc to the instruction's D from C = acc, then
 *   calls mf_kernel_step_done (promotion); mf_kernel_part gives the slice's
 *   binary32 partial; mf_kernel_finish reduces the partials and converts. */
typedef struct mf_kacc {
    uint32_t acc;    /* the instruction's accumulator (binary32 bits) */
    uint32_t main;   /* the promoted sum */
    uint32_t n;      /* instructions since the last promotion */
} mf_kacc;
MF_HD void mf_kernel_slice_k(const mf_kernel *kr, size_t K, uint32_t s, size_t *k0, size_t *k1);
MF_HD void mf_kernel_step_done(const mf_kernel *kr, mf_kacc *st);
MF_HD uint32_t mf_kernel_part(const mf_kernel *kr, const mf_kacc *st);
/* part[0..split) is overwritten.  @return the output's bit pattern. */
MF_HD uint64_t mf_kernel_finish(const mf_kernel *kr, uint32_t *part);

/* One output of the call: row a[0..K) of A and column b[0..K) of B, bit
 * patterns of elem_a and elem_b bytes each (mf_tile_elem_bytes of the row's
 * formats).  @return the output's bit pattern. */
MF_HD uint64_t mf_kernel_dot(const mf_kernel *kr, size_t K, const void *a, const void *b);

/* n outputs at once (host only): output o from a[o] and b[o] (rows of A and
 * columns of B, K elements each), written to D[o]; each exactly what
 * mf_kernel_dot gives it, the instruction steps batched through
 * mf_eval_cases. */
void mf_kernel_eval_rows(const mf_kernel *kr, size_t K, size_t n, const void *const *a, const void *const *b,
                         void *D);

/* @return NULL when *kr is one the model evaluates, else what is wrong. */
const char *mf_kernel_check(const mf_kernel *kr);

/* The text form (docs/kernels.md): one `key value` line each, `#` comments.
 * Parse `text` into *kr.  @return 0, or -1 with a message naming the line in
 * err. */
int mf_kernel_parse(const char *text, mf_kernel *kr, char *err, size_t errlen);
/* Write the text form of *kr into buf (always NUL-terminated).
 * @return the length it needs, as snprintf. */
int mf_kernel_format(const mf_kernel *kr, char *buf, size_t len);

#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
}
#endif
#endif /* MMAFUZZ_KERNEL_H */
