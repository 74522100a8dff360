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

/* Parse a model in the text form, or in the table's one-line form (fields
 * separated by ';').  @return 0, or -1 with err. */
int mf_ktable_parse_model(const char *text, mf_kernel *kr, char *err, size_t errlen);

#endif
