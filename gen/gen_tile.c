/*
 * gen_tile.c - the tile generators (mmafuzz_gen.h; the table is
 * generators.def).  Generation code: no I/O, no allocation, nothing of libc
 * beyond string.h (and limits.h for INT_MIN).
 *
 * Structured generators work on a per-tile "plan": an exponent for each K
 * position of A and of B (the same for every row / column), and one for c.
 * Rows and columns then draw signs and significands around that plan, so the
 * property the plan aims at (a product at the output's overflow threshold,
 * terms F bits below e_max, ...) holds for every output element of the tile.
 *
 * Each generator is a plan_<name> (drawn from a copy of the tile stream, the
 * same in every part: keep its draws few) and a part_<name> (rows of A,
 * columns of B or rows of C, each row from its own part stream), so that a
 * tile can be generated in independent parts (gen_run_part).
 */
#include "mmafuzz_gen.h"
#include "gen_int.h"
#include "gen_parts.h"

#include <limits.h>
#include <string.h>

MF_DEVTAB const gen_info gen_table[GEN_COUNT] = {
#define MF_GENERATOR(E, name, weight, needs_pool, help) {#name, weight, needs_pool, help},
#include "generators.def"
#undef MF_GENERATOR
};

MF_HD const char *gen_name(gen_kind g) { return (unsigned)g < GEN_COUNT ? gen_table[g].name : "?"; }

MF_HD void gen_mix_default(gen_mix *m)
{
    for (int g = 0; g < GEN_COUNT; g++)
        m->w[g] = gen_table[g].weight;
}

/* ------------------------------------------------------------ helpers */

#define NPAT 8   /* TestFloat's significand patterns: zero, lsb, msb, all ones, msb+lsb, alternating, top half, random */

/* A significand pattern from the bits of one draw x: random bits (the top
 * fbits of x) five times in eight, else one of the table's patterns. */
MF_HD static inline uint64_t frac_of_draw(uint64_t x, int fbits)
{
    if (!fbits)
        return 0;
    uint64_t all = (UINT64_C(1) << fbits) - 1, rnd = x >> (64 - fbits);
    uint32_t choice = (uint32_t)(x >> 1) & 7, pat = choice < 5 ? 7 : (uint32_t)(x >> 4) & 7;
    switch (pat) {
    case 0: return 0;
    case 1: return 1;
    case 2: return UINT64_C(1) << (fbits - 1);
    case 3: return all;
    case 4: return (UINT64_C(1) << (fbits - 1)) | 1;
    case 5: return UINT64_C(0x5555555555555555) & all;
    case 6: return all & ~((UINT64_C(1) << (fbits / 2)) - 1);
    default: return rnd;
    }
}

/* A random significand: random bits most of the time, a table pattern otherwise. */
MF_HD static uint64_t rnd_frac(gen_rng *r, int fbits)
{
    return frac_of_draw(rng_next(r), fbits);
}

MF_HD static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

typedef gen_vfmt vfmt;   /* mmafuzz_gen.h */

MF_HD static vfmt vfmt_of(mf_format f)
{
    vfmt v;
    v.f = f;
    v.L = *rv_get(f);
    v.es = mf_tile_elem_bytes(f);
    for (int p = 0; p < 8; p++)
        v.pat[p] = frac_of_draw((uint64_t)p << 4 | 6u << 1, v.L.fbits);   /* choice 6 >= 5: pattern p */
    return v;
}

/* A value at exponent e + j, j uniform in [0, w] (w <= 15), from the one
 * draw x: sign in bit 0, pattern choice in bits 1-6 (random bits five times
 * in eight, else one of TestFloat's patterns), j in bits 8-23, the random
 * significand in the top bits. */
MF_HD static inline uint64_t vf_at(const vfmt *v, uint64_t x, int e, int w)
{
    const int fb = v->L.fbits;
    int j = (int)((((x >> 8) & 0xFFFF) * (uint64_t)(w + 1)) >> 16);
    uint32_t choice = (uint32_t)(x >> 1) & 7, p = (uint32_t)(x >> 4) & 7;
    uint64_t rnd = fb ? x >> (64 - fb) : 0;
    uint64_t frac = choice < 5 || p == 7 ? rnd : v->pat[p];
    return rv_make_in(&v->L, v->f, (int)(x & 1), e + j, frac);
}

/* A special value of format f (rv_specials' list, made at program start). */
MF_HD static uint64_t rnd_special(gen_rng *r, mf_format f)
{
    return rv_special_list[f][rng_below(r, rv_special_count[f])];
}

/* A block scale: mostly near 2^0, sometimes any pattern. */
MF_HD static uint64_t rnd_scale(gen_rng *r, mf_format fs, int wild)
{
    uint32_t x = rng_below(r, 16);
    if (x == 0 || (wild && x < 4))
        return x & 1 ? rnd_special(r, fs) : rng_next(r) & rv_get(fs)->mask;
    if (fs == MF_FMT_UE8M0)
        return (uint64_t)(127 + rng_range(r, -4, 4));
    /* two draws, in this order: the fraction, then the exponent (C leaves the
     * order of a call's arguments open; GCC took them in this order, nvcc and
     * clang the other way, so the GPU's ue4m3 scales differed from the host's) */
    uint64_t frac = rnd_frac(r, rv_get(fs)->fbits);
    int e = rng_range(r, -3, 3);
    return rv_make(fs, 0, e, frac);
}

/* Exact product a*b (decoded, finite) truncated into format fc; 0 when not finite. */
MF_HD static uint64_t product_into(mf_format fc, const mf_instr *in, mf_value va, mf_value vb, int negate)
{
    if (va.cls != MF_CLS_FINITE || vb.cls != MF_CLS_FINITE)
        return 0;
    unsigned __int128 p = (unsigned __int128)va.sig * vb.sig;
    int exp = va.exp - mf_format_get(in->fa)->frac_bits + vb.exp - mf_format_get(in->fb)->frac_bits;
    while (p >> 63) {
        p >>= 1;
        exp++;
    }
    return rv_from_sig(fc, (va.sign ^ vb.sign) ^ negate, (uint64_t)p, exp);
}

/* ------------------------------------------------------------ parts and plans
 *
 * A tile is generated in independent parts (mmafuzz_gen.h): phase 0 part
 * p < M is row p of A (and of SA), part M + q column q of B (and of SB);
 * phase 1 part i is row i of C, which may read A and B back.  Each part
 * draws from its own stream (rng_split of the tile stream by (phase,
 * part)); what must be the same for the whole tile (the "plan": exponents,
 * modes, windows) is drawn from a copy of the tile stream, identically in
 * every part. */

MF_HD static part_role part_role_of(const gen_ctx *g, int phase, int part, int *idx)
{
    if (phase == 0 && part >= 0 && part < g->m + g->n) {
        *idx = part < g->m ? part : part - g->m;
        return part < g->m ? ROLE_A : ROLE_B;
    }
    *idx = part;
    return phase == 1 && part >= 0 && part < g->m ? ROLE_C : ROLE_NONE;
}

#define PLAN_NONE GEN_PLAN_NONE

/* The per-tile plan of every generator (each uses what it needs; mmafuzz_gen.h). */
typedef gen_plan tile_plan;

/* The format a part of `role` writes (A's, B's or C's). */
MF_HD static inline const vfmt *role_vfmt(const tile_plan *p, part_role role)
{
    return role == ROLE_A ? p->va : role == ROLE_B ? p->vb : p->vc;
}

/* A format of the plan read by a part's loop: on the host a local copy, so
 * that the loop's stores to the tile arrays cannot alias it; in device code
 * the plan's own (a copy there goes to local memory, which the part threads
 * missed in L1 and fetched from L2 per element: ncu, H200). */
#if defined(__CUDA_ARCH__)
#define VFMT_USE(name, src) const vfmt *const name = (src)
#else
#define VFMT_USE(name, src) const vfmt name##_copy = *(src), *const name = &name##_copy
#endif

/* One scale row (SA row idx for ROLE_A, SB row idx for ROLE_B). */
MF_HD static void part_scales(const gen_ctx *g, size_t slot, gen_rng *r, int wild, part_role role, int idx)
{
    int S = g->in->n_scales;
    if (!S || !g->SA || !g->SB || role == ROLE_C)
        return;
    for (int s = 0; s < S; s++) {
        uint64_t v = rnd_scale(r, g->in->fs, wild);
        if (role == ROLE_A)
            abi_set(g->in->fs, g->SA, IS(idx, s, g->m), v);
        else
            abi_set(g->in->fs, g->SB, IS(idx, s, g->n), v);
    }
}

/* Split a product exponent et into (ea, eb) as split_exp, the choice taken
 * from the top 32 bits of the draw x. */
MF_HD static void split_exp_x(uint64_t x, const mf_instr *in, int et, int16_t *ea, int16_t *eb)
{
    const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
    int lo = et - B->emax, hi = et - B->emin, a;
    if (lo < A->emin - A->fbits)
        lo = A->emin - A->fbits;
    if (hi > A->emax)
        hi = A->emax;
    if (lo > hi)
        a = clampi(et / 2, A->emin - A->fbits, A->emax);
    else
        a = lo + (int)(((x >> 32) * (uint64_t)(hi - lo + 1)) >> 32);
    *ea = (int16_t)a;
    *eb = (int16_t)(et - a);
}

/* ------------------------------------------------------------ generators */

/* n uniform bit patterns of format v at element `first` of base, several
 * per draw when they are narrow. */
MF_HD static void uniform_run(gen_rng *r, const vfmt *v, void *base, size_t first, size_t n)
{
    const int w = v->L.bits;
    const uint64_t mask = v->L.mask;
    const size_t es = v->es;
    if (mask == (es == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * es)) - 1)) {
        /* every stored bit is a value bit: whole draws straight into the array */
        unsigned char *p = (unsigned char *)base + first * es;
        size_t bytes = n * es, i = 0;
        for (; i + 8 <= bytes; i += 8)
            store8(p + i, rng_next(r));
        if (i < bytes) {
            uint64_t x = rng_next(r);
            memcpy(p + i, &x, bytes - i);
        }
        return;
    }
    uint64_t x = 0;
    int left = 0;
    row_out o = ro_start(base, first, n, es);
    for (size_t i = 0; i < n; i++) {
        if (left < w) {
            x = rng_next(r);
            left = 64;
        }
        ro_put(&o, x & mask);
        x = w < 64 ? x >> w : 0;
        left -= w;
    }
}

MF_HD static void plan_uniform(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)pr, (void)tile, (void)p;
}

MF_HD static void part_uniform(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                               part_role role, int i0, int i1, uint64_t tile)
{
    (void)tile;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        if (role == ROLE_A)
            uniform_run(r, p->va, g->A, IA(idx, 0), (size_t)g->k);
        else if (role == ROLE_B)
            uniform_run(r, p->vb, g->B, IB(idx, 0), (size_t)g->k);
        else
            uniform_run(r, p->vc, g->C, IC(idx, 0), (size_t)g->n);
        part_scales(g, slot, r, 1, role, idx);
    }
}

/* A part of a tile from the plan's ea[]/eb[] exponents, a jitter window w
 * added per element, c at exponent ec (INT_MIN: zero). */
MF_HD static void part_from_plan(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                                 part_role role, int i0, int i1, uint64_t tile)
{
    (void)tile;
    const int w = p->w, ec = p->ec;
    VFMT_USE(v, role_vfmt(p, role));
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        if (role == ROLE_A) {
            row_out o = ro_start(g->A, IA(idx, 0), (size_t)g->k, v->es);
            for (int kk = 0; kk < g->k; kk++) {
                uint64_t x = rng_next(r);
                ro_put(&o, p->ea[kk] == PLAN_NONE ? 0 : vf_at(v, x, p->ea[kk], w));
            }
        } else if (role == ROLE_B) {
            row_out o = ro_start(g->B, IB(idx, 0), (size_t)g->k, v->es);
            for (int kk = 0; kk < g->k; kk++) {
                uint64_t x = rng_next(r);
                ro_put(&o, p->eb[kk] == PLAN_NONE ? 0 : vf_at(v, x, p->eb[kk], w));
            }
        } else {
            row_out o = ro_start(g->C, IC(idx, 0), (size_t)g->n, v->es);
            for (int j = 0; j < g->n; j++) {
                uint64_t x = rng_next(r);
                ro_put(&o, ec == INT_MIN ? 0 : vf_at(v, x, ec - w, 2 * w));
            }
        }
        part_scales(g, slot, r, 0, role, idx);
    }
}

MF_HD static void plan_window(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)tile;
    const rv_layout *A = &p->va->L, *B = &p->vb->L;
    int w = rng_range(pr, 0, 3);
    int ca = rng_range(pr, A->emin - 2, A->emax - w), cb = rng_range(pr, B->emin - 2, B->emax - w);
    if (rng_below(pr, 2)) {  /* half the time stay near 1, where sums are ordinary */
        ca = clampi(rng_range(pr, -4, 4), A->emin, A->emax - w);
        cb = clampi(rng_range(pr, -4, 4), B->emin, B->emax - w);
    }
    /* one K position in 16 is a zero product: bit kk of the AND of four draws */
    uint64_t zeros = rng_next(pr) & rng_next(pr) & rng_next(pr) & rng_next(pr);
    for (int kk = 0; kk < g->k; kk++) {
        int zero = (int)(zeros >> (kk & 63) & 1);
        p->ea[kk] = (int16_t)(zero ? PLAN_NONE : ca);
        p->eb[kk] = (int16_t)(zero ? PLAN_NONE : cb);
    }
    p->w = w;
    p->ec = rng_below(pr, 8) == 0 ? INT_MIN : ca + cb + rng_range(pr, -3, 3);
}
#define part_window part_from_plan

/* Cancellation: in every row of A, products at positions (first+2p,
 * first+2p+1) are partners (a' = -a, nearly; b' = b, nearly), so that they
 * nearly cancel; in mode 1, c also cancels product 0 (c = -a0*b0 truncated
 * into C's format, maybe one bit off). */
MF_HD static void plan_cancel(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)tile;
    p->ca = clampi(rng_range(pr, -6, 6), p->va->L.emin, p->va->L.emax - 1);
    p->cb = clampi(rng_range(pr, -6, 6), p->vb->L.emin, p->vb->L.emax - 1);
    p->mode = (int)rng_below(pr, 2);   /* 0: pairs cancel; 1: c also cancels product 0 */
}

/* The partner of value `prev` (the element before it) in a row of A (the
 * negated value, up to three low-bit steps off) or a column of B (the same
 * value, maybe one low bit off), from its own draw x. */
MF_HD static inline uint64_t cancel_partner(const vfmt *v, part_role role, uint64_t prev, uint64_t x)
{
    if (role == ROLE_A) {
        uint64_t val = prev ^ (UINT64_C(1) << (v->L.bits - 1));
        if (x & 1)
            val ^= (UINT64_C(1) << v->L.low) * (1 + (((x >> 1) & 0xFFFF) * 3 >> 16));
        return val;
    }
    return x & 1 ? prev ^ (UINT64_C(1) << v->L.low) : prev;
}

/* 1 if position kk of a row of A or column of B is the partner of kk - 1
 * (pairs from position `first`). */
MF_HD static inline int cancel_is_partner(int kk, int first)
{
    return kk >= first + 1 && (kk - first) % 2 == 1;
}

MF_HD static void part_cancel(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                              part_role role, int i0, int i1, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const int first = p->mode ? 1 : 0;         /* positions before `first` are left alone */
    VFMT_USE(v, role_vfmt(p, role));   /* the format written */
    const int e = role == ROLE_A ? p->ca : p->cb;
    const int mode = p->mode, ecb = p->ca + p->cb - 8;
    const size_t esa = p->va->es, esb = p->vb->es;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        if (role == ROLE_A || role == ROLE_B) {
            uint64_t prev = 0;
            row_out o = role == ROLE_A ? ro_start(g->A, IA(idx, 0), (size_t)g->k, v->es)
                                       : ro_start(g->B, IB(idx, 0), (size_t)g->k, v->es);
            for (int kk = 0; kk < g->k; kk++) {
                uint64_t x = rng_next(r);
                uint64_t val = cancel_is_partner(kk, first) ? cancel_partner(v, role, prev, x) : vf_at(v, x, e, 1);
                ro_put(&o, val);
                prev = val;
            }
            part_scales(g, slot, r, 0, role, idx);
            continue;
        }
        /* row idx of C; mode 1 reads a0 = A[idx][0] and b0 = B[j][0] back */
        mf_value a0;
        memset(&a0, 0, sizeof a0);
        if (mode)
            a0 = mf_decode(in->fa, mf_elem_get(esa, g->A, IA(idx, 0)));
        row_out o = ro_start(g->C, IC(idx, 0), (size_t)g->n, v->es);
        for (int j = 0; j < g->n; j++) {
            uint64_t x = rng_next(r), c;
            if (mode) {
                mf_value b0 = mf_decode(in->fb, mf_elem_get(esb, g->B, IB(j, 0)));
                c = product_into(in->fc, in, a0, b0, 1);
                if (x & 1)
                    c ^= UINT64_C(1) << (v->L.low + (int)(((x >> 1) & 0xFFFF) * 3 >> 16));
            } else {
                c = x & 1 ? 0 : vf_at(v, rng_next(r), ecb - (int)(((x >> 1) & 0xFFFF) * 23 >> 16), 0);
            }
            ro_put(&o, c);
        }
    }
}

MF_HD static void plan_special(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)pr, (void)tile, (void)p;
}

MF_HD static void part_special(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                               part_role role, int i0, int i1, uint64_t tile)
{
    (void)tile;
    VFMT_USE(v, role_vfmt(p, role));
    void *base = role == ROLE_A ? g->A : role == ROLE_B ? g->B : g->C;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        size_t first = role == ROLE_A ? IA(idx, 0) : role == ROLE_B ? IB(idx, 0) : IC(idx, 0);
        size_t count = role == ROLE_C ? (size_t)g->n : (size_t)g->k;
        const uint64_t *list = rv_special_list[v->f];
        const uint64_t nlist = rv_special_count[v->f];
        row_out o = ro_start(base, first, count, v->es);
        for (size_t i = 0; i < count; i++) {
            uint64_t x = rng_next(r);
            /* three in eight a special value, else a number near 1 (exponent -4..4) */
            uint64_t val = (x & 7) < 3 ? list[(((x >> 8) & 0xFFFF) * nlist) >> 16] : vf_at(v, rng_next(r), -4, 8);
            ro_put(&o, val);
        }
        part_scales(g, slot, r, 1, role, idx);
    }
}

/* Boundaries (products and sums at the output format's thresholds, alignment
 * shifts of exactly F and F+-1 bits, the zero-exponent region). */
MF_HD static void plan_boundary(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)tile;
    const mf_instr *in = g->in;
    const rv_layout *D = rv_get(in->fd), *Cl = rv_get(in->fc);
    int ec = INT_MIN;
    for (int kk = 0; kk < g->k; kk++)
        p->ea[kk] = p->eb[kk] = PLAN_NONE;
    int mode = (int)rng_below(pr, 4);
    int F = in->F > 0 ? in->F : D->fbits + 1;
    int np = rng_range(pr, 1, 3 < g->k ? 3 : g->k);
    if (mode == 0 || mode == 1) {
        /* overflow threshold (mode 0) or underflow: normal and subnormal edge (mode 1) */
        int base = mode == 0 ? D->emax : (rng_below(pr, 2) ? D->emin : D->emin - D->fbits);
        for (int q = 0; q < np; q++) {
            int kk = (int)rng_below(pr, (uint32_t)g->k);
            uint64_t x = rng_next(pr);
            split_exp_x(x, in, base - 2 + (int)((x & 0xFFFF) * 4 >> 16), &p->ea[kk], &p->eb[kk]);
        }
        if (rng_below(pr, 2))
            ec = mode == 0 ? Cl->emax - rng_range(pr, 0, 1) : base + rng_range(pr, -2, 1);
    } else if (mode == 2) {
        /* alignment: one big term, the others exactly F-1, F, F+1 bits below it */
        int big = rng_range(pr, -4, 4);
        int c_big = (int)rng_below(pr, 2);
        int k0 = (int)rng_below(pr, (uint32_t)g->k);
        if (c_big)
            ec = big;
        else
            split_exp_x(rng_next(pr), in, big, &p->ea[k0], &p->eb[k0]);
        for (int q = 0; q < np; q++) {
            int kk = (int)rng_below(pr, (uint32_t)g->k);
            if (!c_big && kk == k0)
                continue;
            uint64_t x = rng_next(pr);
            split_exp_x(x, in, big - F - 1 + (int)((x & 0xFFFF) * 3 >> 16), &p->ea[kk], &p->eb[kk]);
        }
        if (!c_big && rng_below(pr, 2))
            ec = big - F + rng_range(pr, -1, 1);
    } else {
        /* the zero-exponent region: tiny terms near e_zero (half the K
         * positions, bits of one draw), zeros among them */
        int ez = in->e_zero ? in->e_zero : D->emin;
        uint64_t terms = rng_next(pr);
        for (int kk = 0; kk < g->k; kk++)
            if (terms >> (kk & 63) & 1) {
                uint64_t x = rng_next(pr);
                split_exp_x(x, in, ez - 3 + (int)((x & 0xFFFF) * 7 >> 16), &p->ea[kk], &p->eb[kk]);
            }
        if (rng_below(pr, 2))
            ec = ez + rng_range(pr, -3, 3);
    }
    p->ec = ec;
    p->w = 0;
}
#define part_boundary part_from_plan

/* TestFloat-style tables: the tile number picks an exponent class for A, B
 * and C and a significand pattern; together they enumerate the table. */
#define NEXPC 9
/* The exponent of class cls (8: zero, INT_MIN) of layout L; a subnormal's
 * depth comes from bits 12-19 of the draw x. */
MF_HD static inline int exp_class(const rv_layout *L, int cls, uint64_t x)
{
    switch (cls) {
    case 0: return L->emin - 1 - (L->fbits ? (int)((((x >> 12) & 0xFF) * (uint64_t)L->fbits) >> 8) : 0);  /* subnormal */
    case 1: return L->emin;
    case 2: return L->emin + 1;
    case 3: return -1;
    case 4: return 0;
    case 5: return 1;
    case 6: return L->emax - 1;
    case 7: return L->emax;
    default: return INT_MIN;  /* zero */
    }
}

/* One table value from the draw x: class cls (or, one time in four when
 * `vary`, any class), sign bit 11, pattern pat half the time (always when
 * not `vary`), else random bits. */
MF_HD static inline uint64_t table_value(gen_rng *r, const vfmt *v, uint64_t x, int cls, int pat, int vary)
{
    if (vary && !(x & 3))
        cls = (int)((((x >> 2) & 0xFF) * NEXPC) >> 8);
    int e = exp_class(&v->L, cls, x);
    if (e == INT_MIN)
        return 0;
    int p = !vary || ((x >> 10) & 1) ? pat : 7, fb = v->L.fbits;
    uint64_t frac = v->pat[p];
    if (p == 7)   /* random bits: the draw's top bits, or a fresh draw for wide fractions */
        frac = fb ? (fb > 40 ? rng_next(r) : x) >> (64 - fb) : 0;
    return rv_make_in(&v->L, v->f, (int)((x >> 11) & 1), e, frac);
}

/* The exponent class of `role` in tile `tile` (the tile number enumerates
 * the classes of A, B and C, then the pattern: table_pat). */
MF_HD static inline int table_class(uint64_t tile, part_role role)
{
    return role == ROLE_A ? (int)(tile % NEXPC) : role == ROLE_B ? (int)(tile / NEXPC % NEXPC)
                                                                 : (int)(tile / (NEXPC * NEXPC) % NEXPC);
}
MF_HD static inline int table_pat(uint64_t tile) { return (int)(tile / (NEXPC * NEXPC * NEXPC) % NPAT); }

MF_HD static void plan_table(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)pr, (void)tile, (void)p;   /* the plan is the tile number itself */
}

MF_HD static void part_table(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                             part_role role, int i0, int i1, uint64_t tile)
{
    const int cls = table_class(tile, role), pat = table_pat(tile);
    VFMT_USE(v, role_vfmt(p, role));
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        const int len = role == ROLE_C ? g->n : g->k;
        row_out o = role == ROLE_A ? ro_start(g->A, IA(idx, 0), (size_t)len, v->es)
                    : role == ROLE_B ? ro_start(g->B, IB(idx, 0), (size_t)len, v->es)
                                     : ro_start(g->C, IC(idx, 0), (size_t)len, v->es);
        for (int q = 0; q < len; q++)
            ro_put(&o, table_value(r, v, rng_next(r), cls, pat, role != ROLE_C));
        part_scales(g, slot, r, 0, role, idx);
    }
}

/* Exact cancellation and signed zeros (the sign of a zero result, DOMAIN
 * section 3): products in pairs (2p, 2p+1) with a' = -a and b' = b, so that
 * they cancel exactly; an unpaired last product and one position in eight
 * are +-0; c is +-0 three times in four, else a small value near the
 * products' scale.  fnuz formats, which have no -0, get +0 (rv_make). */
/* -0 (sign 1) or +0 of a format; +0 where the format has no -0. */
MF_HD static inline uint64_t signed_zero(const vfmt *v, int sign)
{
    return sign && v->L.sign_shift >= 0 && v->f != MF_FMT_E4M3FNUZ && v->f != MF_FMT_E5M2FNUZ
               ? UINT64_C(1) << v->L.sign_shift : 0;
}

/* Element kk + h (h = 0, 1) of the pair at even position kk of a row of A
 * (K elements), from the pair's draw x: a value and its negation, or +-0
 * one pair in eight and for an unpaired last element. */
MF_HD static inline uint64_t zero_a_value(const vfmt *v, uint64_t x, int kk, int h, int k, int ca)
{
    const int sign = (int)(x & 1) ^ h, zero = (x >> 1 & 7) == 0 || kk + 1 == k;
    const uint64_t frac = v->L.fbits ? x >> (64 - v->L.fbits) : 0;
    return zero ? signed_zero(v, sign) : rv_make_in(&v->L, v->f, sign, ca + (int)(x >> 4 & 1), frac);
}

/* Both elements of a pair of a column of B (b' = b), from the pair's draw x. */
MF_HD static inline uint64_t zero_b_value(const vfmt *v, uint64_t x, int cb)
{
    const uint64_t frac = v->L.fbits ? x >> (64 - v->L.fbits) : 0;
    return rv_make_in(&v->L, v->f, (int)(x & 1), cb + (int)(x >> 1 & 1), frac);
}

MF_HD static void plan_zero(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)tile;
    p->ca = clampi(rng_range(pr, -3, 3), p->va->L.emin, p->va->L.emax - 1);
    p->cb = clampi(rng_range(pr, -3, 3), p->vb->L.emin, p->vb->L.emax - 1);
}

MF_HD static void part_zero(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                            part_role role, int i0, int i1, uint64_t tile)
{
    (void)tile;
    VFMT_USE(v, role_vfmt(p, role));   /* A's, B's or C's: the part's own */
    const int ca = p->ca, cb = p->cb;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng rs = role_rng(g, tr, role, idx), *r = &rs;
        if (role == ROLE_A) {
            row_out o = ro_start(g->A, IA(idx, 0), (size_t)g->k, v->es);
            for (int kk = 0; kk < g->k; kk += 2) {
                uint64_t x = rng_next(r);
                for (int h = 0; h < 2 && kk + h < g->k; h++)   /* the partner: the same value, the other sign */
                    ro_put(&o, zero_a_value(v, x, kk, h, g->k, ca));
            }
        } else if (role == ROLE_B) {
            uint64_t val = 0;
            row_out o = ro_start(g->B, IB(idx, 0), (size_t)g->k, v->es);
            for (int kk = 0; kk < g->k; kk++) {
                if (kk % 2 == 0)
                    val = zero_b_value(v, rng_next(r), cb);
                ro_put(&o, val);   /* b' = b */
            }
        } else {
            row_out o = ro_start(g->C, IC(idx, 0), (size_t)g->n, v->es);
            for (int j = 0; j < g->n; j++) {
                uint64_t x = rng_next(r), c;
                if (x & 6)
                    c = signed_zero(v, (int)(x & 1));
                else
                    c = vf_at(v, rng_next(r), ca + cb - 30 + (int)(x >> 8 & 15), 0);
                ro_put(&o, c);
            }
        }
        part_scales(g, slot, r, 0, role, idx);
    }
}

/* ------------------------------------------------------------ sparse metadata */

MF_HD unsigned gen_sparse_nibble(const mf_instr *in, gen_rng *r)
{
    unsigned legal[16], n = 0;
    for (unsigned v = 0; v < 16; v++)
        if (mf_sparse_meta_ok(in, v))
            legal[n++] = v;
    return n ? legal[rng_below(r, n)] : 0;
}

/* Sparse rows: draw the metadata of rows i0 .. i1-1 of A, each from its
 * part's stream split once more (A's values stay what they are for a dense
 * row of the same formats), and set the pruned positions to +0. */
MF_HD static void sparse_rows(const gen_ctx *g, size_t slot, const gen_rng *tile_rng, int i0, int i1)
{
    const mf_instr *in = g->in;
    for (int idx = i0; idx < i1; idx++) {
        gen_rng pr = role_rng(g, tile_rng, ROLE_A, idx);
        gen_rng r = rng_split(&pr, UINT64_C(0x5350415253450000)); /* "SPARSE" */
        mf_case cs;
        for (int q = 0; q < in->n_meta; q++)
            cs.meta[q] = (uint8_t)gen_sparse_nibble(in, &r);
        for (int kk = 0; kk < g->k; kk++)
            if (!mf_sparse_is_kept(in, &cs, kk))
                abi_set(in->fa, g->A, IA(idx, kk), 0);
        gen_put_meta(in, g->m, g->SA, slot, idx, cs.meta);
    }
}

/* Mutated saved cases: the parts are gen_mutate.c's (gen_mutate_part). */
MF_HD static void plan_mutate(const gen_ctx *g, gen_rng *pr, uint64_t tile, tile_plan *p)
{
    (void)g, (void)pr, (void)tile, (void)p;
}

MF_HD static void part_mutate(const gen_ctx *g, size_t slot, const tile_plan *p, const gen_rng *tr,
                              part_role role, int i0, int i1, uint64_t tile)
{
    (void)p, (void)tile;
    gen_mutate_part(g, slot, tr, role, i0, i1, NULL, 0);
}

/* ------------------------------------------------------------ driving the parts */

MF_HD gen_kind gen_pick(const gen_ctx *g, uint64_t tile, gen_rng *r)
{
    return gen_pick_keyed(g, rng_hash_str(g->in->name), tile, r);
}

MF_HD gen_kind gen_pick_keyed(const gen_ctx *g, uint64_t key, uint64_t tile, gen_rng *r)
{
    *r = rng_derive(g->seed, key, tile);
    uint32_t total = 0;
    for (int k = 0; k < GEN_COUNT; k++)
        total += (gen_table[k].needs_pool && !g->nview) ? 0 : g->mix.w[k];
    gen_kind kind = GEN_UNIFORM;
    if (total) {
        uint32_t x = rng_below(r, total);
        for (int k = 0; k < GEN_COUNT; k++) {
            uint32_t w = (gen_table[k].needs_pool && !g->nview) ? 0 : g->mix.w[k];
            if (x < w) {
                kind = (gen_kind)k;
                break;
            }
            x -= w;
        }
    }
    return kind;
}

MF_HD int gen_part_count(const gen_ctx *g, int phase)
{
    return phase == 0 ? g->m + g->n : phase == 1 ? g->m : 0;
}

/* The integer rows' meaning of each generator (gen_int.c), but mutate's. */
MF_HD static int is_int_tile(const gen_ctx *g, gen_kind kind)
{
    return mf_format_is_int(g->in->fa) && kind != GEN_MUTATE;
}

/* The plan of tile `tile` for generator `kind`, from a copy of its stream. */
MF_HD static void plan_tile(const gen_ctx *g, const gen_prep *pp, gen_kind kind, const gen_rng *tile_rng,
                            uint64_t tile, tile_plan *p)
{
    gen_rng pr = *tile_rng;
    if (kind == GEN_MUTATE)
        return;
    p->va = &pp->va;
    p->vb = &pp->vb;
    p->vc = &pp->vc;
    switch (kind) {
#define MF_GENERATOR(E, name, weight, needs_pool, help)                                                           \
    case GEN_##E: plan_##name(g, &pr, tile, p); break;
#include "generators.def"
#undef MF_GENERATOR
    default: break;
    }
}

/* Rows / columns i0 .. i1-1 of `role` (their parts) of a float (or mutate)
 * tile, its plan at hand. */
MF_HD static void run_parts(const gen_ctx *g, gen_kind kind, const tile_plan *p, const gen_rng *tile_rng,
                            uint64_t tile, size_t slot, part_role role, int i0, int i1)
{
    switch (kind) {
#define MF_GENERATOR(E, name, weight, needs_pool, help)                                                           \
    case GEN_##E: part_##name(g, slot, p, tile_rng, role, i0, i1, tile); break;
#include "generators.def"
#undef MF_GENERATOR
    default: break;
    }
    if (g->in->sparse && role == ROLE_A && kind != GEN_MUTATE)   /* mutate's cases bring their metadata */
        sparse_rows(g, slot, tile_rng, i0, i1);
}

MF_HD void gen_prepare(const gen_ctx *g, gen_prep *pp)
{
    pp->va = vfmt_of(g->in->fa);
    pp->vb = vfmt_of(g->in->fb);
    pp->vc = vfmt_of(g->in->fc);
    pp->key = rng_hash_str(g->in->name);
}

MF_HD void gen_plan_tile(const gen_ctx *g, const gen_prep *pp, gen_kind kind, const gen_rng *tile_rng,
                         uint64_t tile, gen_plan *p)
{
    if (!is_int_tile(g, kind))
        plan_tile(g, pp, kind, tile_rng, tile, p);
}

MF_HD size_t gen_mutate_scratch_values(const mf_instr *in)
{
    return in->sparse || in->n_scales ? 0 : (size_t)(2 * in->k + 1);
}

MF_HD void gen_run_part_scratch(const gen_ctx *g, const gen_plan *p, gen_kind kind, const gen_rng *tile_rng,
                                uint64_t tile, size_t slot, int phase, int part, uint64_t *scratch, size_t stride)
{
    if (is_int_tile(g, kind)) {
        gen_int_part(g, slot, tile_rng, kind, phase, part);
        if (g->in->sparse && phase == 0 && part >= 0 && part < g->m)   /* sparse integer rows: the row's metadata */
            sparse_rows(g, slot, tile_rng, part, part + 1);
        return;
    }
    int idx;
    part_role role = part_role_of(g, phase, part, &idx);
    if (role == ROLE_NONE)
        return;
    if (kind == GEN_MUTATE && scratch && gen_mutate_scratch_values(g->in))
        gen_mutate_part(g, slot, tile_rng, role, idx, idx + 1, scratch, stride);
    else
        run_parts(g, kind, p, tile_rng, tile, slot, role, idx, idx + 1);
}

MF_HD void gen_run_part_planned(const gen_ctx *g, const gen_plan *p, gen_kind kind, const gen_rng *tile_rng,
                                uint64_t tile, size_t slot, int phase, int part)
{
    gen_run_part_scratch(g, p, kind, tile_rng, tile, slot, phase, part, NULL, 0);
}

MF_HD void gen_run_part_prep(const gen_ctx *g, const gen_prep *pp, gen_kind kind, const gen_rng *tile_rng,
                             uint64_t tile, size_t slot, int phase, int part)
{
    tile_plan p;
    int idx;
    if (!is_int_tile(g, kind) && part_role_of(g, phase, part, &idx) != ROLE_NONE)
        plan_tile(g, pp, kind, tile_rng, tile, &p);
    gen_run_part_planned(g, &p, kind, tile_rng, tile, slot, phase, part);
}

MF_HD void gen_run_part(const gen_ctx *g, gen_kind kind, const gen_rng *tile_rng, uint64_t tile, size_t slot,
                        int phase, int part)
{
    gen_prep pp;
    gen_prepare(g, &pp);
    gen_run_part_prep(g, &pp, kind, tile_rng, tile, slot, phase, part);
}

MF_HD void gen_run(const gen_ctx *g, gen_kind kind, const gen_rng *r, uint64_t tile, size_t slot)
{
    if (is_int_tile(g, kind) && !g->in->sparse) {
        gen_int_run(g, slot, r, kind);
        return;
    }
    if (is_int_tile(g, kind)) {
        /* sparse integer rows: part by part, each row of A pruned by its
         * metadata (sparse_rows) in phase 0, so that phase 1's c (which
         * follows the tile's dot products: zero sums, overflow edges) sees the
         * kept products only */
        for (int phase = 0; phase < 2; phase++)
            for (int part = 0; part < gen_part_count(g, phase); part++)
                gen_run_part_prep(g, NULL, kind, r, tile, slot, phase, part);
        return;
    }
    /* the plan once, then every part of phase 0 (A rows, B columns), then of
     * phase 1 (C rows): what gen_run_part gives part by part */
    gen_prep pp;
    gen_prepare(g, &pp);
    tile_plan p;
    plan_tile(g, &pp, kind, r, tile, &p);
    run_parts(g, kind, &p, r, tile, slot, ROLE_A, 0, g->m);
    run_parts(g, kind, &p, r, tile, slot, ROLE_B, 0, g->n);
    run_parts(g, kind, &p, r, tile, slot, ROLE_C, 0, g->m);
}

/* ------------------------------------------------------------ elements one at a time
 *
 * Where a generator draws a fixed number of values for each element of a
 * part (one per element, or one per pair), element q of the part is a
 * function of the part's stream (rng_peek at q's draw), the plan and the
 * tile number alone: the same value the part writes, with no loop over the
 * elements before it.  The element formulas below restate each part_<name>
 * loop for one element; test_gen_parts checks every one against gen_tile.
 * special (and the rows of C of cancel and zero) draw one or two values an
 * element, mutate puts whole saved cases: they stay part by part.  (Two
 * draws for every element of those, a new generator version, made them
 * element by element too, and the GPU check no faster: H100, NOTES.) */

MF_HD unsigned gen_elem_roles(const gen_ctx *g, const gen_prep *pp, gen_kind kind)
{
    const mf_instr *in = g->in;
    /* sparse rows prune A after the values; scaled rows draw their scales after a part's values */
    if (in->sparse || is_int_tile(g, kind) || (in->n_scales && g->SA && g->SB))
        return 0;
    switch (kind) {
    case GEN_UNIFORM:
    case GEN_WINDOW:
    case GEN_BOUNDARY: return GEN_ELEM_A | GEN_ELEM_B | GEN_ELEM_C;
    case GEN_CANCEL:   /* c: mode 0 draws one or two values an element */
    case GEN_ZERO: return GEN_ELEM_A | GEN_ELEM_B;   /* c: one or two values an element */
    case GEN_TABLE:    /* a random significand wider than 40 bits takes a second draw */
        return (pp->va.L.fbits <= 40 ? GEN_ELEM_A : 0u) | (pp->vb.L.fbits <= 40 ? GEN_ELEM_B : 0u) |
               (pp->vc.L.fbits <= 40 ? GEN_ELEM_C : 0u);
    default: return 0;   /* special: one or two values an element; mutate: whole saved cases */
    }
}

MF_HD gen_rng gen_part_stream(const gen_ctx *g, const gen_rng *tile_rng, int phase, int part)
{
    (void)g;
    return rng_split(tile_rng, (uint64_t)phase << 32 | (uint32_t)part);
}

/* In device code every call site gets its own copy, so that a caller
 * passing a constant kind (verify.cu's element kernel, one loop per
 * generator) has the switch folded and the plan's and format's fields read
 * once for all the elements of its loop. */
#if defined(__CUDA_ARCH__)
#define GEN_ELEM_INLINE __forceinline__
#else
#define GEN_ELEM_INLINE
#endif
MF_HD GEN_ELEM_INLINE uint64_t gen_part_elem(const gen_ctx *g, const gen_plan *p, gen_kind kind,
                                             const gen_rng *part_rng, uint64_t tile, int phase, int part, int q)
{
    int idx;
    const part_role role = part_role_of(g, phase, part, &idx);
    const vfmt *v = role_vfmt(p, role);
    const uint64_t d = (uint64_t)q;
    switch (kind) {
    case GEN_UNIFORM: {   /* uniform_run: whole draws as bytes, or floor(64 / bits) values a draw */
        const size_t es = v->es;
        if (v->L.mask == (es == 8 ? ~UINT64_C(0) : (UINT64_C(1) << (8 * es)) - 1)) {
            const uint64_t x = rng_peek(part_rng, d * es / 8);
            return es == 8 ? x : (x >> (8 * ((d * es) & 7))) & v->L.mask;
        }
        const int per = 64 / v->L.bits;
        return (rng_peek(part_rng, (uint64_t)(q / per)) >> ((q % per) * v->L.bits)) & v->L.mask;
    }
    case GEN_WINDOW:
    case GEN_BOUNDARY: {   /* part_from_plan: one draw an element */
        const uint64_t x = rng_peek(part_rng, d);
        if (role == ROLE_C)
            return p->ec == INT_MIN ? 0 : vf_at(v, x, p->ec - p->w, 2 * p->w);
        const int e = role == ROLE_A ? p->ea[q] : p->eb[q];
        return e == PLAN_NONE ? 0 : vf_at(v, x, e, p->w);
    }
    case GEN_TABLE: {   /* part_table: one draw an element (gen_elem_roles: no second draw) */
        gen_rng unused = *part_rng;
        return table_value(&unused, v, rng_peek(part_rng, d), table_class(tile, role), table_pat(tile),
                           role != ROLE_C);
    }
    case GEN_CANCEL: {   /* part_cancel, rows of A and columns of B: a partner from its own draw and the one before */
        const int first = p->mode ? 1 : 0, e = role == ROLE_A ? p->ca : p->cb;
        const uint64_t x = rng_peek(part_rng, d);
        if (cancel_is_partner(q, first))
            return cancel_partner(v, role, vf_at(v, rng_peek(part_rng, d - 1), e, 1), x);
        return vf_at(v, x, e, 1);
    }
    case GEN_ZERO: {   /* part_zero, rows of A and columns of B: one draw a pair of elements */
        const uint64_t x = rng_peek(part_rng, d / 2);
        return role == ROLE_B ? zero_b_value(v, x, p->cb) : zero_a_value(v, x, q & ~1, q & 1, g->k, p->ca);
    }
    default: return 0;
    }
}

MF_HD gen_kind gen_tile(const gen_ctx *g, uint64_t tile, size_t slot)
{
    gen_rng r;
    gen_kind kind = gen_pick(g, tile, &r);
    gen_run(g, kind, &r, tile, slot);
    return kind;
}

MF_HD void gen_fill_tiles(const mf_instr *in, int m, int n, int k, uint64_t seed, uint64_t first, size_t ntiles,
                              void *A, void *B, void *C, void *SA, void *SB)
{
    gen_ctx g;
    memset(&g, 0, sizeof g);
    g.in = in;
    g.m = m;
    g.n = n;
    g.k = k;
    g.seed = seed;
    gen_mix_default(&g.mix);
    g.A = A;
    g.B = B;
    g.C = C;
    g.SA = SA;
    g.SB = SB;
    for (size_t t = 0; t < ntiles; t++)
        gen_tile(&g, first + t, t);
}

MF_HD uint64_t gen_random_finite(mf_format f, gen_rng *r)
{
    const rv_layout *L = rv_get(f);
    for (;;) {
        uint64_t x = rng_next(r) & L->mask;
        int cls = mf_decode(f, x).cls;
        if (cls != MF_CLS_NAN && cls != MF_CLS_INF)
            return x;
    }
}
