/*
 * gen_int.h - tile generation for the integer and single-bit rows
 * (gen_int.c): generation code, internal to the generation library.
 */
#ifndef MMAFUZZ_GEN_INT_H
#define MMAFUZZ_GEN_INT_H

#include "mmafuzz_gen.h"

/* Fill tile `slot` of g's buffers for an integer row (mf_format_is_int(fa))
 * as generator `kind` (any but GEN_MUTATE) means it for integers. */
MF_HD void gen_int_tile(const gen_ctx *g, size_t slot, gen_rng *r, gen_kind kind);

#endif
