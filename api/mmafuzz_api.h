/*
 * mmafuzz_api.h - the small C API behind the Python package (python/):
 * evaluate batches of cases and of tiles on several threads, and read `.vec`
 * text line by line with the harness's line parser (harness/vec/vecline.c).
 *
 * Operands are arrays of bit patterns in the canonical element widths of
 * mmafuzz_model.h (mf_tile_elem_bytes: 1, 2, 4 or 8 bytes per value).  The
 * arithmetic is the model's: this layer only lays out cases and splits work.
 */
#ifndef MMAFUZZ_API_H
#define MMAFUZZ_API_H

#include "mmafuzz_kernel.h"
#include "mmafuzz_model.h"
#include "vecfile.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* @return the number of CPUs this process may run on (at least 1). */
int mfa_cpu_count(void);

/* Evaluate n independent dot products of row `in` (mf_eval's result each):
 *   A n x K, B n x K (case i: its K values contiguous), C n, D n (written),
 *   SA n x S, SB n x S (S = in->n_scales; NULL when 0).
 * Work is split over `threads` threads (<= 0: mfa_cpu_count()).
 * @return 0, or -1 if a thread could not be started (nothing is then
 * guaranteed about D). */
int mfa_eval_cases(const mf_instr *in, size_t n, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D, int threads);

/* Evaluate ntiles whole tiles of row `in` in the canonical tile layout of
 * mf_eval_tiles (its m, n, k), split over `threads` threads as above.
 * @return 0 or -1 as mfa_eval_cases. */
int mfa_eval_tiles(const mf_instr *in, size_t ntiles, const void *A, const void *B, const void *C, const void *SA,
                   const void *SB, void *D, int threads);

/* Evaluate nr x nc outputs of a GEMM call under kernel model *kr
 * (mmafuzz_kernel.h): output (i, j) from row i of A (nr x K, row-major) and
 * row j of Bt (nc x K: B's column j), into D (nr x nc, row-major, elements
 * of mf_tile_elem_bytes(kr->out) bytes).  Split over `threads` threads as
 * above.  @return 0 or -1 as mfa_eval_cases. */
int mfa_kernel_eval(const mf_kernel *kr, size_t K, size_t nr, size_t nc, const void *A, const void *Bt, void *D,
                    int threads);

/* Kinds of `.vec` line (shared/VECTORS.md). */
enum {
    MFA_LINE_BLANK = 0,    /* empty or a comment */
    MFA_LINE_INSTR = 1,    /* `instr NAME`; *cur is set (NULL if unknown) */
    MFA_LINE_CASE = 2,     /* a case, parsed into *out */
    MFA_LINE_ERROR = -1,   /* malformed; message in err */
    MFA_LINE_UNKNOWN = -2  /* `instr` names no known row; the name in err */
};

/* Classify and parse one line of `.vec` text (no newline) under the current
 * instruction *cur (NULL before the first `instr` line).
 * @return an MFA_LINE_* kind. */
int mfa_vec_line(const char *line, const mf_instr **cur, mf_vec_case *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MMAFUZZ_API_H */
