/*
 * gen_mutate.c - the mutations of single cases (mmafuzz_gen.h; the table is
 * mutators.def).  Generation code: no I/O, no allocation, nothing of libc
 * beyond string.h.
 */
#include "mmafuzz_gen.h"

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
