/*
 * mmafuzz_gen.h - the case-generation library of mmafuzz: generators of
 * whole tiles, mutators of single cases, the one PRNG (gen_rng.h) and the
 * format field layouts (gen_values.h).  It sits above the model (formats,
 * the instruction table) and below the devices and the harness: `run`,
 * `record`, `bench`, fuzz_model and the device tests all generate through it.
 *
 * A generator fills one whole tile (M x K of A, N x K of B, M x N of C, and
 * the scales) in the canonical tile layout of mmafuzz_model.h (the device
 * ABI); every output element of the tile is then one case.  Each tile is a
 * pure function of (seed, instruction name, tile index, mix, mutation
 * pool), so a case is reproducible from (seed, index) with
 * index = tile * M * N + row * N + column, as long as MF_GEN_VERSION is the
 * same.
 *
 * The generators are listed once, in generators.def; the mutators once, in
 * mutators.def.  The generation code is pure C11: no I/O, no allocation, no
 * libc beyond string.h and stdint.h (limits.h for INT_MIN), functions
 * marked MF_HD (mf_portable.h): the same sources compile as CUDA device code
 * (devices/cuda/model_device.cuh).  Only gen_mix.c (parsing and formatting
 * --mix) is host-only.
 */
#ifndef MMAFUZZ_GEN_H
#define MMAFUZZ_GEN_H

#include "gen_rng.h"
#include "gen_values.h"
#include "mmafuzz_model.h"

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
extern "C" {
#endif

/* Version of the generator and mutator tables.  (seed, index) gives the same
 * case under the same version; the campaign state and the mismatch headers
 * record it.  Bump it whenever any case stream changes (a generator, a
 * mutator, a weight, the PRNG, the order of draws), and record the new
 * pinned hashes in tests/gen/test_gen_stable.c. */
#define MF_GEN_VERSION 2

/* The generators, in table order (generators.def). */
typedef enum gen_kind {
#define MF_GENERATOR(E, name, weight, needs_pool, help) GEN_##E,
#include "generators.def"
#undef MF_GENERATOR
    GEN_COUNT
} gen_kind;
#ifndef __cplusplus
_Static_assert(GEN_COUNT <= 255, "a tile's generator is kept in one byte (harness/cmd_run.c)");
#endif

/* One row of the generator table. */
typedef struct gen_info {
    const char *name;
    uint32_t weight;     /* default weight */
    int needs_pool;      /* 1: draws from saved cases */
    const char *help;
} gen_info;

/* The generator table (generators.def), indexed by gen_kind. */
#if MF_TABLE_DECLS
extern const gen_info gen_table[GEN_COUNT];
#endif

/* @return the name of generator g ("uniform", ...), or "?". */
MF_HD const char *gen_name(gen_kind g);

/* Relative weights of the generators. */
typedef struct gen_mix {
    uint32_t w[GEN_COUNT];
} gen_mix;

/* The default mix: the table's weights (pool generators only when the pool has cases). */
MF_HD void gen_mix_default(gen_mix *m);
/* Parse "NAME[:WEIGHT],..." (e.g. "uniform:1,special:2,mutate").
 * @return 0, or -1 with a message naming the bad item.  (Host only.) */
int gen_mix_parse(const char *s, gen_mix *m, char *err, size_t errlen);
/* Format a mix as parse accepts it.  (Host only.) */
void gen_mix_format(const gen_mix *m, char *buf, size_t len);
/* Write the generators' names, space-separated, into buf.  (Host only.) */
void gen_names(char *buf, size_t len);

/* A saved case that the mutation generator draws from. */
typedef struct gen_saved_case {
    const mf_instr *in;
    mf_case cs;
} gen_saved_case;

/* Everything generation of one batch needs. */
typedef struct gen_ctx {
    const mf_instr *in;
    int m, n, k;
    uint64_t seed;
    gen_mix mix;               /* pool generators ignored when nview == 0 */
    const gen_saved_case *const *view;  /* compatible saved cases */
    size_t nview;
    void *A, *B, *C, *SA, *SB; /* batch buffers (tile layout); SA, SB may be NULL
                                  (then no scales are written) */
} gen_ctx;

/* Generate tile number `tile` of the campaign into position `slot` of the
 * batch buffers.  @return the generator used. */
MF_HD gen_kind gen_tile(const gen_ctx *g, uint64_t tile, size_t slot);

/* gen_tile in two steps, for callers that group tiles by generator (the GPU:
 * threads of a warp then run the same generator).  gen_pick derives the
 * tile's stream into *r and draws its generator; gen_run runs that
 * generator on the stream as gen_pick left it (*r is not changed).
 * gen_pick then gen_run give exactly what gen_tile gives. */
MF_HD gen_kind gen_pick(const gen_ctx *g, uint64_t tile, gen_rng *r);
MF_HD void gen_run(const gen_ctx *g, gen_kind kind, const gen_rng *r, uint64_t tile, size_t slot);

/* What the per-value code needs of one format (gen_prepare). */
typedef struct gen_vfmt {
    mf_format f;
    rv_layout L;          /* a copy: the loops' stores cannot alias it */
    size_t es;            /* bytes per element in the ABI arrays */
    uint64_t pat[8];      /* TestFloat's significand patterns; 7: random bits */
} gen_vfmt;

/* What every tile of a batch shares, worked out once (gen_prepare) by
 * callers that generate many tiles or parts of one gen_ctx (the GPU): the
 * formats' constants and the hash of the instruction's name that seeds each
 * tile's stream.  A plain value (no pointers): it may be copied to a device. */
typedef struct gen_prep {
    gen_vfmt va, vb, vc;  /* the formats of A, B, C */
    uint64_t key;         /* rng_hash_str(in->name) */
} gen_prep;

/* Fill *pp from g (g->in and its name). */
MF_HD void gen_prepare(const gen_ctx *g, gen_prep *pp);
/* gen_pick with key = rng_hash_str(g->in->name) given (gen_prep.key): the same result. */
MF_HD gen_kind gen_pick_keyed(const gen_ctx *g, uint64_t key, uint64_t tile, gen_rng *r);

/* gen_run in independent parts, for many threads per tile (the GPU).  A
 * tile is generated in two phases:
 *   phase 0: parts 0 .. M+N-1: part p < M writes row p of A (and of SA),
 *            part M+q column q of B (and of SB);
 *   phase 1: parts 0 .. M-1: part i writes row i of C; it may read A and B
 *            of the same tile (slot) back, so every phase-0 part of the tile
 *            must be complete (and visible) before any phase-1 part starts.
 * Within a phase the parts are independent: any order, any thread, any
 * interleaving (a part may write nothing: mutate's case s writes A row s,
 * B column s and C[s][s] from part s, leaving part M+s empty).  Running
 * every part of phase 0, then every part of phase 1, gives exactly gen_run's
 * bytes.  tile_rng is the stream as gen_pick left it; it is not changed (each
 * part derives its own stream from it and (phase, part); what the whole tile
 * shares is drawn again from a copy of it, in each part).  No part does work
 * proportional to the whole tile, except the integer generators' phase-1
 * parts that need c = -(A.B): a row of C reads row i of A and all of B.
 * gen_part_count(g, phase): M + N for phase 0, M for phase 1, 0 otherwise. */
MF_HD int gen_part_count(const gen_ctx *g, int phase);
MF_HD void gen_run_part(const gen_ctx *g, gen_kind kind, const gen_rng *tile_rng, uint64_t tile, size_t slot,
                        int phase, int part);
/* gen_run_part with the batch's gen_prep (gen_prepare of the same g) at hand: the same bytes. */
MF_HD void gen_run_part_prep(const gen_ctx *g, const gen_prep *pp, gen_kind kind, const gen_rng *tile_rng,
                             uint64_t tile, size_t slot, int phase, int part);

/* What every part of one tile shares (the floating-point generators' "plan":
 * per-K exponents, modes, windows), drawn from a copy of the tile's stream.
 * gen_run_part_prep works it out again in every part; callers that run many
 * parts of a tile (the GPU: one plan per tile in shared memory, read by the
 * tile's M + N threads) work it out once with gen_plan_tile and run the
 * parts with gen_run_part_planned: the same bytes.  The plan points into the
 * gen_prep it was made from (its formats), which must outlive it. */
#define GEN_PLAN_NONE INT16_MIN   /* a K position of the plan that is zero */
typedef struct gen_plan {
    const gen_vfmt *va, *vb, *vc;   /* the formats of A, B, C (the batch's gen_prep) */
    int w;                  /* window: jitter */
    int mode;               /* cancel, boundary: the mode */
    int ca, cb;             /* window, cancel, zero: the exponents of A and B */
    int ec;                 /* c's exponent (INT_MIN: c = 0) */
    int16_t ea[MF_KMAX], eb[MF_KMAX];   /* per K position (GEN_PLAN_NONE: zero) */
} gen_plan;

/* The plan of tile `tile` for generator `kind` (tile_rng as gen_pick left
 * it; not changed).  Integer tiles and mutate have none (*p is left as it is). */
MF_HD void gen_plan_tile(const gen_ctx *g, const gen_prep *pp, gen_kind kind, const gen_rng *tile_rng,
                         uint64_t tile, gen_plan *p);
/* gen_run_part_prep with the tile's plan (gen_plan_tile of the same tile) at hand: the same bytes. */
MF_HD void gen_run_part_planned(const gen_ctx *g, const gen_plan *p, gen_kind kind, const gen_rng *tile_rng,
                                uint64_t tile, size_t slot, int phase, int part);
/* gen_run_part_planned with room for mutate's working case: 2K + 1 values,
 * value q at scratch[q * stride] (c, then a, then b), used where the row is
 * dense and has no scales (gen_mcase); NULL: a local mf_case.  The same
 * bytes either way (tests/gen/test_gen_parts.c).  gen_mutate_scratch_values:
 * the values of that room a case of row `in` takes (2K + 1), or 0 where the
 * row keeps its working case in an mf_case (sparse rows, rows with scales). */
MF_HD size_t gen_mutate_scratch_values(const mf_instr *in);
MF_HD void gen_run_part_scratch(const gen_ctx *g, const gen_plan *p, gen_kind kind, const gen_rng *tile_rng,
                                uint64_t tile, size_t slot, int phase, int part, uint64_t *scratch,
                                size_t stride);

/* Elements one at a time, for one thread per element (or per word) of a
 * part (the GPU).  Where generator `kind` draws a fixed number of values for
 * each element of a role, element q of a part of that role is a function of
 * the part's stream, the tile's plan and the tile number alone:
 *   gen_elem_roles: the roles where it is (GEN_ELEM_A: rows of A, _B:
 *     columns of B, _C: rows of C), on dense unscaled floating-point rows:
 *     every role of uniform, window, boundary and table (but fractions
 *     wider than 40 bits), rows of A and columns of B of cancel and zero;
 *   gen_part_stream: the stream of part (phase, part) of the tile (the one
 *     gen_run_part draws from);
 *   gen_part_elem: element q (< K for A and B, < N for C) of that part, for
 *     a role gen_elem_roles gives, from the tile's plan (gen_plan_tile):
 *     the value gen_run_part writes there.  Element values are as the tile
 *     layout holds them (mf_tile_elem_bytes). */
#define GEN_ELEM_A 1u
#define GEN_ELEM_B 2u
#define GEN_ELEM_C 4u
MF_HD unsigned gen_elem_roles(const gen_ctx *g, const gen_prep *pp, gen_kind kind);
MF_HD gen_rng gen_part_stream(const gen_ctx *g, const gen_rng *tile_rng, int phase, int part);
MF_HD uint64_t gen_part_elem(const gen_ctx *g, const gen_plan *p, gen_kind kind, const gen_rng *part_rng,
                             uint64_t tile, int phase, int part, int q);

/* Generate tiles first .. first+ntiles-1 of the campaign `seed` with the
 * default mix (no saved cases) into slots 0 .. ntiles-1: `record`, the
 * device tests and benchmarks.  Tile t is the tile `run` generates as tile
 * t of that seed when its pool is empty. */
MF_HD void gen_fill_tiles(const mf_instr *in, int m, int n, int k, uint64_t seed, uint64_t first, size_t ntiles,
                              void *A, void *B, void *C, void *SA, void *SB);

/* Put one case at the diagonal position (s, s) of tile `slot`: row s of A
 * and SA, column s of B and SB, C[s][s].  (s < min(M, N).)  Sparse rows: SA
 * is the metadata (mmafuzz_model.h, tiles), row s gets cs->meta.
 *
 * Sparse rows (mf_instr.sparse): every generator fills A as for a dense row
 * of the same formats; then each row of A draws its metadata from a stream of
 * its own (every legal nibble alike) and its pruned positions are set to +0;
 * the metadata goes to SA (when SA is not NULL).  Dense rows' streams are
 * unchanged. */
MF_HD void gen_put_case(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                            size_t slot, int s, const mf_case *cs);

/* ------------------------------------------------------------ mutators */

/* The mutators, in table order (mutators.def). */
typedef enum mut_kind {
#define MF_MUTATOR(name, weight, help) MUT_##name,
#include "mutators.def"
#undef MF_MUTATOR
    MUT_COUNT
} mut_kind;

typedef struct mut_info {
    const char *name;
    uint32_t weight;
    const char *help;
} mut_info;

/* The mutator table (mutators.def), indexed by mut_kind. */
#if MF_TABLE_DECLS
extern const mut_info mut_table[MUT_COUNT];
#endif

/* Apply one mutation, drawn by the table's weights, to *cs (every value
 * stays masked to its format).  `other`: another case of the same
 * instruction for splicing, or NULL.  @return the mutation applied. */
MF_HD mut_kind gen_mutate_once(const mf_instr *in, gen_rng *r, mf_case *cs, const mf_case *other);

/* Apply 1 to 4 random mutations (gen_mutate_once) to *cs. */
MF_HD void gen_mutate(const mf_instr *in, gen_rng *r, mf_case *cs, const mf_case *other);

/* A case being mutated, wherever its values are: c at *c, a[q] at
 * a[q * stride], b[q] at b[q * stride]; its scales and metadata in *whole,
 * the mf_case that holds it (stride 1), which may be NULL for a dense row
 * without scales.  gen_mcase_of: the view of an mf_case.  The GPU's part
 * kernel mutates in shared memory, a thread's values `blockDim` apart
 * (gen_run_part_scratch); the mutators and their draws are the same. */
typedef struct gen_mcase {
    uint64_t *c, *a, *b;
    size_t stride;
    mf_case *whole;
} gen_mcase;
/* a[q] and b[q] of the case being mutated */
#define GEN_MC_A(cs, q) ((cs)->a[(size_t)(q) * (cs)->stride])
#define GEN_MC_B(cs, q) ((cs)->b[(size_t)(q) * (cs)->stride])
MF_HD gen_mcase gen_mcase_of(mf_case *cs);
/* gen_mutate_once and gen_mutate of a view. */
MF_HD mut_kind gen_mutate_once_in(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other);
MF_HD void gen_mutate_in(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other);

/* ------------------------------------------------------------ sparse rows */

/* A metadata nibble for sparse row `in`, every legal one (mf_sparse_meta_ok)
 * alike: 12 for mma.sp 2:4 (both index orders), 6 for ::ordered_metadata, 2
 * for tf32. */
MF_HD unsigned gen_sparse_nibble(const mf_instr *in, gen_rng *r);

/* ------------------------------------------------------------ values */

/* A random finite value of format f (random bits, NaN and Inf drawn again). */
MF_HD uint64_t gen_random_finite(mf_format f, gen_rng *r);

#if defined(__cplusplus) && !defined(MF_DEVICE_BUILD)
}
#endif
#endif
