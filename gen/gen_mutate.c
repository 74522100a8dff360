/*
 * gen_mutate.c - the mutations of single cases (mmafuzz_gen.h; the table is
 * mutators.def).  Generation code: no I/O, no allocation, nothing of libc
 * beyond string.h.
 */
#include "mmafuzz_gen.h"
#include "gen_parts.h"

#include <string.h>

MF_DEVTAB const mut_info mut_table[MUT_COUNT] = {
#define MF_MUTATOR(name, weight, help) {#name, weight, help},
#include "mutators.def"
#undef MF_MUTATOR
};

MF_HD gen_mcase gen_mcase_of(mf_case *cs)
{
    gen_mcase v;
    v.c = &cs->c;
    v.a = cs->a;
    v.b = cs->b;
    v.stride = 1;
    v.whole = cs;
    return v;
}

/* One value of the case, drawn uniformly among c, a[], b[] and the scales:
 * its address and format. */
MF_HD static uint64_t *pick_value(const mf_instr *in, gen_rng *r, gen_mcase *cs, mf_format *f)
{
    uint32_t x = rng_below(r, (uint32_t)(1 + 2 * in->k + 2 * in->n_scales));
    if (x == 0) {
        *f = in->fc;
        return cs->c;
    }
    x--;
    if (x < 2 * (uint32_t)in->k) {
        *f = x & 1 ? in->fb : in->fa;
        return x & 1 ? &GEN_MC_B(cs, x / 2) : &GEN_MC_A(cs, x / 2);
    }
    x -= 2 * (uint32_t)in->k;
    *f = in->fs;
    return x & 1 ? &cs->whole->sb[x / 2] : &cs->whole->sa[x / 2];
}

MF_HD static void mut_bitflip(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    *v ^= UINT64_C(1) << rng_below(r, (uint32_t)rv_get(f)->bits);
}

MF_HD static void mut_exponent(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    const rv_layout *L = rv_get(f);
    mf_value x = mf_decode(f, *v);
    if (x.cls == MF_CLS_FINITE && x.sig >> L->fbits) {
        int s;
        uint32_t E;
        uint64_t fr;
        rv_unpack(f, *v, &s, &E, &fr);
        *v = rv_make(f, s, x.exp + (rng_below(r, 2) ? 1 : -1), fr);
    }
}

MF_HD static void mut_lowbits(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    const rv_layout *L = rv_get(f);
    int n = rng_range(r, 1, 3);
    if (n > L->fbits)
        n = L->fbits ? L->fbits : 1;
    *v ^= ((UINT64_C(1) << n) - 1) << L->low;
}

MF_HD static void mut_sign(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    const rv_layout *L = rv_get(f);
    if (L->sign_shift >= 0)
        *v ^= UINT64_C(1) << L->sign_shift;
}

MF_HD static void mut_permute(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    for (int kk = in->k - 1; kk > 0; kk--) {
        int o = (int)rng_below(r, (uint32_t)kk + 1);
        uint64_t ta = GEN_MC_A(cs, kk), tb = GEN_MC_B(cs, kk);
        GEN_MC_A(cs, kk) = GEN_MC_A(cs, o);
        GEN_MC_B(cs, kk) = GEN_MC_B(cs, o);
        GEN_MC_A(cs, o) = ta;
        GEN_MC_B(cs, o) = tb;
    }
}

MF_HD static void mut_cancel(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    int i = (int)rng_below(r, (uint32_t)in->k), j = (int)rng_below(r, (uint32_t)in->k);
    GEN_MC_A(cs, j) = rv_negate(in->fa, GEN_MC_A(cs, i));
    GEN_MC_B(cs, j) = GEN_MC_B(cs, i);
}

MF_HD static void mut_special(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    *v = rv_special_list[f][rng_below(r, rv_special_count[f])];
}

MF_HD static void mut_random(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    mf_format f;
    uint64_t *v = pick_value(in, r, cs, &f);
    *v = rng_next(r) & rv_get(f)->mask;
}

MF_HD static void mut_splice(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    if (!other)
        return;
    int cut = (int)rng_below(r, (uint32_t)in->k);
    const uint64_t ma = rv_get(in->fa)->mask, mb = rv_get(in->fb)->mask;
    for (int kk = cut; kk < in->k; kk++) {
        GEN_MC_A(cs, kk) = other->a[kk] & ma;
        GEN_MC_B(cs, kk) = other->b[kk] & mb;
    }
    if (rng_below(r, 2))
        *cs->c = other->c & rv_get(in->fc)->mask;
}

/* Sparse rows: group g's metadata redrawn (gen_sparse_nibble); the values of
 * a it kept move, in metadata order, to the positions the new nibble keeps. */
MF_HD static void mut_meta(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    (void)other;
    if (!in->sparse || !in->n_meta)
        return;
    uint8_t *meta = cs->whole->meta;
    int g = (int)rng_below(r, in->n_meta), oldp[MF_SP_KEPT_MAX], newp[MF_SP_KEPT_MAX];
    int n = mf_sparse_group_kept(in, g, meta[g], oldp);
    uint64_t v[MF_SP_KEPT_MAX] = {0};
    for (int i = 0; i < n; i++)
        v[i] = GEN_MC_A(cs, oldp[i]);
    for (int i = 0; i < in->sp_group; i++)
        GEN_MC_A(cs, g * in->sp_group + i) = 0;
    meta[g] = (uint8_t)gen_sparse_nibble(in, r);
    n = mf_sparse_group_kept(in, g, meta[g], newp);
    for (int i = 0; i < n; i++)
        GEN_MC_A(cs, newp[i]) = v[i];
}

/* 1 if mutator m applies to row `in` (the sparse-only ones to sparse rows). */
MF_HD static inline int mut_applies(const mf_instr *in, int m)
{
    return m != MUT_meta || in->sparse;
}

/* Every value masked to its format's storage bits. */
MF_HD static void mask_case(const mf_instr *in, gen_mcase *cs)
{
    uint64_t ma = rv_get(in->fa)->mask, mb = rv_get(in->fb)->mask, ms = rv_get(in->fs)->mask;
    *cs->c &= rv_get(in->fc)->mask;
    for (int kk = 0; kk < in->k; kk++) {
        GEN_MC_A(cs, kk) &= ma;
        GEN_MC_B(cs, kk) &= mb;
    }
    for (int q = 0; q < in->n_scales; q++) {
        cs->whole->sa[q] &= ms;
        cs->whole->sb[q] &= ms;
    }
}

/* One mutation, then the sparse row's pruned positions set to +0. */
MF_HD static mut_kind mutate_op(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    uint32_t total = 0;
    for (int m = 0; m < MUT_COUNT; m++)
        total += mut_applies(in, m) ? mut_table[m].weight : 0;
    uint32_t x = rng_below(r, total);
    mut_kind kind = (mut_kind)0;
    for (int m = 0; m < MUT_COUNT; m++) {
        if (!mut_applies(in, m))
            continue;
        if (x < mut_table[m].weight) {
            kind = (mut_kind)m;
            break;
        }
        x -= mut_table[m].weight;
    }
    switch (kind) {
#define MF_MUTATOR(name, weight, help)                                                                                 \
    case MUT_##name: mut_##name(in, r, cs, other); break;
#include "mutators.def"
#undef MF_MUTATOR
    default: break;
    }
    if (in->sparse)
        mf_sparse_canon(in, cs->whole);   /* a value moved to a pruned position is +0 there */
    return kind;
}

/* The values a mutator writes are within their formats' storage bits
 * whenever the values it reads are (mut_random and mut_splice mask what they
 * bring in; the others move, negate or rebuild values of the case). */
MF_HD mut_kind gen_mutate_once_in(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    mut_kind kind = mutate_op(in, r, cs, other);
    mask_case(in, cs);   /* the case itself may hold bits beyond its formats' (a saved case) */
    return kind;
}

MF_HD mut_kind gen_mutate_once(const mf_instr *in, gen_rng *r, mf_case *cs, const mf_case *other)
{
    gen_mcase v = gen_mcase_of(cs);
    return gen_mutate_once_in(in, r, &v, other);
}

/* The first mutation masks the whole case (gen_mutate_once_in); the later
 * ones keep it masked (mutate_op), so that masking every value once per
 * mutation, as gen_mutate_once does, would change nothing: the same bits
 * for a fraction of the work (on the GPU, mask_case's pass over the case in
 * local memory after each mutation was the generation's main stall). */
MF_HD void gen_mutate_in(const mf_instr *in, gen_rng *r, gen_mcase *cs, const mf_case *other)
{
    int nops = rng_range(r, 1, 4);
    gen_mutate_once_in(in, r, cs, other);
    for (int op = 1; op < nops; op++)
        mutate_op(in, r, cs, other);
}

MF_HD void gen_mutate(const mf_instr *in, gen_rng *r, mf_case *cs, const mf_case *other)
{
    gen_mcase v = gen_mcase_of(cs);
    gen_mutate_in(in, r, &v, other);
}

/* ------------------------------------------------------------ mutated saved cases in a tile */

/* Sparse rows: a saved case brings metadata that may not be this row's (a
 * dense row's case has none: nibbles 0), and a mutator may move a value into
 * a pruned position.  Groups with illegal metadata draw a legal nibble from
 * r; every pruned position of a becomes +0. */
MF_HD static void sparse_legalize(const mf_instr *in, gen_rng *r, mf_case *cs)
{
    for (int q = 0; q < in->n_meta; q++)
        if (!mf_sparse_meta_ok(in, cs->meta[q]))
            cs->meta[q] = (uint8_t)gen_sparse_nibble(in, r);
    mf_sparse_canon(in, cs);
}

/* gen_put_case of a view (gen_mcase). */
MF_HD static void put_mcase(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                            size_t slot, int s, const gen_mcase *cs)
{
    size_t S = in->n_scales;
    if (cs->whole)
        gen_put_meta(in, m, SA, slot, s, cs->whole->meta);
    row_out oa = ro_start(A, (slot * (size_t)m + (size_t)s) * (size_t)k, (size_t)k, mf_tile_elem_bytes(in->fa));
    row_out ob = ro_start(B, (slot * (size_t)n + (size_t)s) * (size_t)k, (size_t)k, mf_tile_elem_bytes(in->fb));
    for (int kk = 0; kk < k; kk++) {
        ro_put(&oa, GEN_MC_A(cs, kk));
        ro_put(&ob, GEN_MC_B(cs, kk));
    }
    abi_set(in->fc, C, (slot * (size_t)m + (size_t)s) * (size_t)n + (size_t)s, *cs->c);
    for (size_t q = 0; SA && SB && q < S; q++) {
        abi_set(in->fs, SA, (slot * (size_t)m + (size_t)s) * S + q, cs->whole->sa[q]);
        abi_set(in->fs, SB, (slot * (size_t)n + (size_t)s) * S + q, cs->whole->sb[q]);
    }
}

MF_HD void gen_put_case(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                  size_t slot, int s, const mf_case *cs)
{
    gen_mcase v = gen_mcase_of((mf_case *)cs);   /* read only */
    put_mcase(in, m, n, k, A, B, C, SA, SB, slot, s, &v);
}

/* The values of saved case *src that row `in` reads (c, a and b up to its K,
 * its scales and metadata) into *dst, the rest of *dst left as it is: every
 * mutator, gen_put_case and the sparse helpers read only these.  A whole
 * mf_case is MF_KMAX values a side; in device code it was copied through
 * local memory once per part, and mutate's tiles took four times as long
 * to generate as the other generators' (H200, fp8 m16n8k32).  Eight values
 * of a side are loaded before any is stored: copied one by one, each store
 * waited on its load, so a part waited on 2K loads from the pool in turn
 * (device code: the compiler cannot move a store to *dst past a later load
 * from *src it may alias). */
MF_HD static void saved_case_load(const mf_instr *in, gen_mcase *dst, const mf_case *src)
{
    *dst->c = src->c;
    int kk = 0;
    for (; kk + 8 <= in->k; kk += 8) {
        uint64_t a[8], b[8];   /* constant bounds: unrolled, in registers */
        for (int q = 0; q < 8; q++) {
            a[q] = src->a[kk + q];
            b[q] = src->b[kk + q];
        }
        for (int q = 0; q < 8; q++) {
            GEN_MC_A(dst, kk + q) = a[q];
            GEN_MC_B(dst, kk + q) = b[q];
        }
    }
    for (; kk < in->k; kk++) {
        GEN_MC_A(dst, kk) = src->a[kk];
        GEN_MC_B(dst, kk) = src->b[kk];
    }
    for (int q = 0; q < in->n_scales; q++) {
        dst->whole->sa[q] = src->sa[q];
        dst->whole->sb[q] = src->sb[q];
    }
    for (int q = 0; in->sparse && q < in->n_meta; q++)
        dst->whole->meta[q] = src->meta[q];
}

/* Mutated saved cases: case s (from its part's stream) is put on the
 * diagonal (s, s) for s < min(M, N) by part s (A row s, B column s and
 * C[s][s]; part M + s is then empty); beyond the diagonal, it gives A row s
 * or B column s only.  The off-diagonal c are the c of saved cases. */
MF_HD void gen_mutate_part(const gen_ctx *g, size_t slot, const gen_rng *tr, part_role role, int i0, int i1,
                                 uint64_t *scratch, size_t stride)
{
    const mf_instr *in = g->in;
    const int diag = g->m < g->n ? g->m : g->n;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        if (role == ROLE_C) {
            for (int j = 0; j < g->n; j++) {
                uint64_t c = g->view[rng_below(r, (uint32_t)g->nview)]->cs.c;
                if (j != idx || idx >= diag)
                    abi_set(in->fc, g->C, IC(idx, j), c);
            }
            continue;
        }
        if (role == ROLE_B && idx < diag)
            continue;   /* written with A row idx */
        mf_case local;
        gen_mcase cs;
        if (scratch) {   /* the caller's room (a dense row without scales) */
            cs.c = scratch;
            cs.a = scratch + stride;
            cs.b = scratch + (size_t)(1 + in->k) * stride;
            cs.stride = stride;
            cs.whole = NULL;
        } else {
            cs = gen_mcase_of(&local);
        }
        saved_case_load(in, &cs, &g->view[rng_below(r, (uint32_t)g->nview)]->cs);
        const mf_case *other = &g->view[rng_below(r, (uint32_t)g->nview)]->cs;
        gen_mutate_in(in, r, &cs, other);
        if (in->sparse && role == ROLE_A)
            sparse_legalize(in, r, cs.whole);
        const int s = idx;
        if (s < diag) {
            put_mcase(in, g->m, g->n, g->k, g->A, g->B, g->C, g->SA, g->SB, slot, s, &cs);
        } else if (role == ROLE_A) {
            for (int kk = 0; kk < g->k; kk++)
                abi_set(in->fa, g->A, IA(s, kk), GEN_MC_A(&cs, kk));
            if (cs.whole)
                gen_put_meta(in, g->m, g->SA, slot, s, cs.whole->meta);
            for (int q = 0; g->SA && g->SB && q < in->n_scales; q++)
                abi_set(in->fs, g->SA, (slot * (size_t)g->m + (size_t)s) * in->n_scales + (size_t)q,
                        cs.whole->sa[q]);
        } else {
            for (int kk = 0; kk < g->k; kk++)
                abi_set(in->fb, g->B, IB(s, kk), GEN_MC_B(&cs, kk));
            for (int q = 0; g->SA && g->SB && q < in->n_scales; q++)
                abi_set(in->fs, g->SB, (slot * (size_t)g->n + (size_t)s) * in->n_scales + (size_t)q,
                        cs.whole->sb[q]);
        }
    }
}
