/*
 * kernel_table.h - the kernel table (python/mmafuzz/data/kernels.tsv, and
 * the user's discoveries in ~/.cache/mmafuzz/kernels.tsv): which kernel
 * model reproduced a recorded call, looked up for a recording as
 * mmafuzz.kernels.lookup does (docs/kernels.md, "Checking a recording").
 */
#ifndef MMAFUZZ_KERNEL_TABLE_H
#define MMAFUZZ_KERNEL_TABLE_H

#include "mmafuzz_kernel.h"
#include "recording.h"

#include <stddef.h>

/* The default tables: the shipped one of this source tree, then the user's
 * cache ($XDG_CACHE_HOME or ~/.cache, /mmafuzz/kernels.tsv); those that
 * exist.  @return how many paths were put in paths[0..max). */
int mf_ktable_defaults(char paths[][4096], int max);

/* Find the model of recording *r in the tables: the last row with the
 * recording's op, a_format, d_format, M, N, K and GPU (env.gpu) whose flags
 * hold every flag the recording names with the same value.  On a hit, *kr
 * is the row's model, `where` says "TABLE:LINE" and `note` says what differs
 * (software versions) or is "".
 * @return 1 found, 0 none (why in err: what the tables know), -1 a table is
 * malformed or the row's model does not parse (err: "TABLE:LINE: ..."). */
int mf_ktable_lookup(const char *const *paths, int npaths, const mf_rec *r, mf_kernel *kr, char *where,
                     size_t wlen, char *note, size_t nlen, char *err, size_t errlen);

/* A model derived from a cuBLASLt recording's own evidence (`mmafuzz gemm
 * --record` on an sm_90 GPU): the Hopper wgmma row of the input format
 * chained over K in steps of 64 (128 for fp8), split in the algorithm's
 * CUBLASLT_ALGO_CONFIG_SPLITK_NUM slices (ceil rule, serial binary32
 * reduction), fp8 promoted every 4 instructions without fast accumulation:
 * the structure found for torch's cuBLAS calls (docs/kernels.md), a guess
 * for other algorithms, which a failure refutes.
 * @return 1 derived (where says so), 0 the recording is not one. */
int mf_ktable_derive(const mf_rec *r, mf_kernel *kr, char *where, size_t wlen);
/* The same guess from the algorithm's attributes themselves (`gemm -runs`'s
 * first model of a call).  @return 0, or -1 (no such row). */
int mf_ktable_guess(mf_format a, mf_format b, mf_format d, int splitk_num, int fast_accum, mf_kernel *kr);

/* Parse a model in the text form, or in the table's one-line form (fields
 * separated by ';').  @return 0, or -1 with err. */
int mf_ktable_parse_model(const char *text, mf_kernel *kr, char *err, size_t errlen);

#endif
