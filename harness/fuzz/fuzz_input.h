/*
 * fuzz_input.h - the byte layout of a fuzz_model input, and format-aware
 * mutations of it (used by the custom mutator and cross-over).
 *
 * Layout (little-endian):
 *   bytes 0-1   instruction: index into the table (modulo its size; a row
 *               not being fuzzed maps to one that is)
 *   then 8 bytes per value: c, a[0..K-1], b[0..K-1], sa[0..S-1], sb[0..S-1]
 * Each value is masked to its format's width; missing bytes read as 0.
 * Any byte string decodes to some case, so libFuzzer's own mutations stay
 * useful; the custom mutator works on the decoded case and encodes it back.
 */
#ifndef MMAFUZZ_FUZZ_INPUT_H
#define MMAFUZZ_FUZZ_INPUT_H

#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

/* Largest encoded input: 2 + 8 * (1 + 2*MF_KMAX + 2*MF_SMAX). */
#define FZ_MAX_SIZE (2 + 8 * (1 + 2 * MF_KMAX + 2 * MF_SMAX))

/* Choose the rows to fuzz: those whose name matches glob `pattern` and whose
 * family is in `group` ("nvidia": T/ST/GST-FDPA and the fp8 mma.sync
 * sequence; "amd": E-FDPA, FTZ-Mul-Add, TR/GTR-FDPA; "fma": FMA chains;
 * NULL or "all": every row).  @return the number of rows chosen. */
size_t fz_select(const char *group, const char *pattern);
size_t fz_count(void);
const mf_instr *fz_row(size_t i);
/* @return the position of `in` among the chosen rows, or 0. */
size_t fz_index_of(const mf_instr *in);

/* Decode data[0..size) into a row and a case. */
const mf_instr *fz_decode(const uint8_t *data, size_t size, mf_case *cs);
/* Encode; @return the size written (at most max, never more than FZ_MAX_SIZE). */
size_t fz_encode(const mf_instr *in, const mf_case *cs, uint8_t *out, size_t max);

/* Mask a value to the bits format f uses (tf32: its 32-bit container). */
uint64_t fz_mask(mf_format f, uint64_t x);
/* Negate a value of format f: flip the sign bit, except where the
 * format has no -0 (e4m3fnuz/e5m2fnuz: 0 stays 0, the NaN 0x80 stays). */
uint64_t fz_negate(mf_format f, uint64_t x);

/* One random format-aware mutation of (in, cs) in place: a special value
 * swapped in, an exponent nudged by +-1, low fraction bits flipped, K
 * permuted, a product copied with its sign flipped (cancellation), or
 * another row of the same family.  `rnd` is a 64-bit random state. */
void fz_mutate(const mf_instr **in, mf_case *cs, uint64_t *rnd);

#endif
