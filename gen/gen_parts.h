/*
 * gen_parts.h - what the tile generators (gen_tile.c) and the mutation of
 * saved cases (gen_mutate.c) share: the parts of a tile, their streams and
 * the stores into the tile arrays.  Internal to the generation library;
 * generation code (C11 + MF_HD, also compiled as device code).
 */
#ifndef MMAFUZZ_GEN_PARTS_H
#define MMAFUZZ_GEN_PARTS_H

#include "mmafuzz_gen.h"

#include <string.h>

/* Element of format f in the tile arrays (mmafuzz_model.h: the device ABI). */
MF_HD static inline void abi_set(mf_format f, void *base, size_t idx, uint64_t v)
{
    mf_elem_set(mf_tile_elem_bytes(f), base, idx, v);
}

/* 8 bytes at p: one store where p is 8-byte aligned (device code stores a
 * memcpy of unknown alignment a byte at a time). */
MF_HD static inline void store8(unsigned char *p, uint64_t x)
{
#if defined(__CUDA_ARCH__)
    if (((uintptr_t)p & 7) == 0) {
        *(uint64_t *)(void *)p = x;
        return;
    }
#endif
    memcpy(p, &x, 8);
}

/* Consecutive elements of one row of a tile array (a row of A, a column of
 * B, a row of C), gathered into 8-byte words and stored a word at a time
 * when the row starts on an 8-byte boundary and is a whole number of words
 * (the common shapes), else stored one element at a time: the same bytes
 * either way.  The caller puts exactly the n elements it started with. */
typedef struct row_out {
    unsigned char *p;   /* where the next word (element) goes */
    uint64_t acc;       /* the elements gathered for the next word */
    uint64_t emask;     /* an element's bits */
    int es;             /* bytes per element */
    int fill;           /* bytes gathered in acc */
    int wide;           /* gathered into words */
} row_out;

MF_HD static inline row_out ro_start(void *base, size_t first, size_t n, size_t es)
{
    row_out o;
    o.p = (unsigned char *)base + first * es;
    o.acc = 0;
    o.es = (int)es;
    o.emask = es >= 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * es)) - 1;
    o.fill = 0;
    o.wide = es < 8 && ((uintptr_t)o.p & 7) == 0 && ((n * es) & 7) == 0;
    return o;
}

MF_HD static inline void ro_put(row_out *o, uint64_t v)
{
    if (!o->wide) {
        mf_elem_set((size_t)o->es, o->p, 0, v);
        o->p += o->es;
        return;
    }
    o->acc |= (v & o->emask) << (8 * o->fill);   /* little-endian: element q at byte q * es */
    o->fill += o->es;
    if (o->fill == 8) {
        store8(o->p, o->acc);
        o->p += 8;
        o->acc = 0;
        o->fill = 0;
    }
}

/* ABI index helpers for tile `slot`. */
#define IA(i, kk) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->k + (size_t)(kk))
#define IB(j, kk) ((slot * (size_t)g->n + (size_t)(j)) * (size_t)g->k + (size_t)(kk))
#define IC(i, j) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->n + (size_t)(j))
#define IS(r, s, rows) ((slot * (size_t)(rows) + (size_t)(r)) * (size_t)S + (size_t)(s))

/* What a part writes. */
typedef enum part_role { ROLE_A, ROLE_B, ROLE_C, ROLE_NONE } part_role;

/* The stream of the part that writes row / column idx of `role`. */
MF_HD static inline gen_rng role_rng(const gen_ctx *g, const gen_rng *tile_rng, part_role role, int idx)
{
    return gen_part_stream(g, tile_rng, role == ROLE_C, role == ROLE_B ? g->m + idx : idx);
}

/* Write the metadata of row s of A of tile `slot` (sparse rows; SA may be NULL). */
MF_HD static inline void gen_put_meta(const mf_instr *in, int m, void *SA, size_t slot, int s, const uint8_t *meta)
{
    if (!in->sparse || !SA)
        return;
    for (int q = 0; q < in->n_meta; q++)
        ((uint8_t *)SA)[(slot * (size_t)m + (size_t)s) * in->n_meta + (size_t)q] = meta[q];
}

/* Mutated saved cases (gen_mutate.c): rows / columns i0 .. i1-1 of `role`
 * of tile `slot`, from the tile's stream tr; scratch (stride apart) the
 * caller's room for one case of a dense row without scales
 * (gen_mutate_scratch_values), or NULL. */
MF_HD void gen_mutate_part(const gen_ctx *g, size_t slot, const gen_rng *tr, part_role role, int i0, int i1,
                           uint64_t *scratch, size_t stride);

#endif
