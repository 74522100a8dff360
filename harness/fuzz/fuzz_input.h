/*
 * fuzz_input.h - the byte layout of a fuzz_model input, and format-aware
 * mutations of it (used by the custom mutator and cross-over).
 *
 * Layout (little-endian):
 *   bytes 0-3   instruction: the low 32 bits of the FNV-1a hash of its name
 *               (fz_key), so that an input keeps its meaning when rows are
 *               added or reordered; a key that names no row being fuzzed
 *               maps to one that is (key modulo their count)
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

/* Bytes of the instruction key, and the largest encoded input. */
#define FZ_KEY_BYTES 4
#define FZ_MAX_SIZE (FZ_KEY_BYTES + 8 * (1 + 2 * MF_KMAX + 2 * MF_SMAX) + MF_MMAX)   /* + a byte per sparse group */

/* @return the key of instruction `in` in an input (bytes 0-3). */
uint32_t fz_key(const mf_instr *in);

/* Choose the rows to fuzz: those whose name matches glob `pattern` and whose
 * family is in `group` ("nvidia": T/ST/GST-FDPA and the fp8 mma.sync
 * sequence; "amd": E-FDPA, FTZ-Mul-Add, TR/GTR-FDPA; "fma": FMA chains;
 * NULL or "all": every row).  @return the number of rows chosen (0 also
 * when two names of the table share a key, which fz_select reports). */
size_t fz_select(const char *group, const char *pattern);
size_t fz_count(void);
const mf_instr *fz_row(size_t i);

/* Decode data[0..size) into a row and a case. */
const mf_instr *fz_decode(const uint8_t *data, size_t size, mf_case *cs);
/* Encode; @return the size written (at most max, never more than FZ_MAX_SIZE). */
size_t fz_encode(const mf_instr *in, const mf_case *cs, uint8_t *out, size_t max);

/* Mask a value to the bits format f uses (tf32: its 32-bit container). */
uint64_t fz_mask(mf_format f, uint64_t x);

/* One random format-aware mutation of (in, cs) in place: one of the
 * library's mutators (gen/mutators.def) seven times in eight, else another
 * row of the same family.  `rnd` is the state of a gen_rng.h stream. */
void fz_mutate(const mf_instr **in, mf_case *cs, uint64_t *rnd);

#endif
