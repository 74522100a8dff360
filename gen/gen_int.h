/*
 * gen_int.h - tile generation for the integer and single-bit rows
 * (gen_int.c): generation code, internal to the generation library.
 */
#ifndef MMAFUZZ_GEN_INT_H
#define MMAFUZZ_GEN_INT_H

#include "mmafuzz_gen.h"

/* For an integer row (mf_format_is_int(fa)) and generator `kind` (any but
 * GEN_MUTATE), as that generator means it for integers: one part of tile
 * `slot` (gen_run_part's parts, mmafuzz_gen.h), or the whole tile (every
 * part of phase 0, then of phase 1).  tile_rng: the tile's stream as
 * gen_pick left it (not changed). */
MF_HD void gen_int_part(const gen_ctx *g, size_t slot, const gen_rng *tile_rng, gen_kind kind, int phase, int part);
MF_HD void gen_int_run(const gen_ctx *g, size_t slot, const gen_rng *tile_rng, gen_kind kind);

#endif
