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
 */
#include "mmafuzz_gen.h"
#include "gen_int.h"

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

/* Element of format f in the tile arrays (mmafuzz_model.h: the device ABI). */
MF_HD static inline void abi_set(mf_format f, void *base, size_t idx, uint64_t v)
{
    mf_elem_set(mf_tile_elem_bytes(f), base, idx, v);
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

/* What the per-value code needs of one format, looked up once per tile. */
typedef struct vfmt {
    mf_format f;
    rv_layout L;          /* a copy: the loops' stores cannot alias it */
    size_t es;            /* bytes per element in the ABI arrays */
    uint64_t pat[8];      /* TestFloat's significand patterns; 7: random bits */
} vfmt;

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
    return rv_make(fs, 0, rng_range(r, -3, 3), rnd_frac(r, rv_get(fs)->fbits));
}

/* Split a product exponent et into (ea, eb) inside both input ranges when possible. */
MF_HD static void split_exp(gen_rng *r, const mf_instr *in, int et, int *ea, int *eb)
{
    const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
    int lo = et - B->emax, hi = et - B->emin;
    if (lo < A->emin - A->fbits)
        lo = A->emin - A->fbits;
    if (hi > A->emax)
        hi = A->emax;
    if (lo > hi)
        *ea = clampi(et / 2, A->emin - A->fbits, A->emax);
    else
        *ea = rng_range(r, lo, hi);
    *eb = et - *ea;
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

/* ABI index helpers for tile `slot`. */
#define IA(i, kk) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->k + (size_t)(kk))
#define IB(j, kk) ((slot * (size_t)g->n + (size_t)(j)) * (size_t)g->k + (size_t)(kk))
#define IC(i, j) ((slot * (size_t)g->m + (size_t)(i)) * (size_t)g->n + (size_t)(j))
#define IS(r, s, rows) ((slot * (size_t)(rows) + (size_t)(r)) * (size_t)S + (size_t)(s))

MF_HD static void fill_scales(const gen_ctx *g, size_t slot, gen_rng *r, int wild)
{
    int S = g->in->n_scales;
    if (!g->SA || !g->SB)
        return;
    for (int i = 0; i < g->m; i++)
        for (int s = 0; s < S; s++)
            abi_set(g->in->fs, g->SA, IS(i, s, g->m), rnd_scale(r, g->in->fs, wild));
    for (int j = 0; j < g->n; j++)
        for (int s = 0; s < S; s++)
            abi_set(g->in->fs, g->SB, IS(j, s, g->n), rnd_scale(r, g->in->fs, wild));
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
        for (; i + 8 <= bytes; i += 8) {
            uint64_t x = rng_next(r);
            memcpy(p + i, &x, 8);
        }
        if (i < bytes) {
            uint64_t x = rng_next(r);
            memcpy(p + i, &x, bytes - i);
        }
        return;
    }
    uint64_t x = 0;
    int left = 0;
    for (size_t i = 0; i < n; i++) {
        if (left < w) {
            x = rng_next(r);
            left = 64;
        }
        mf_elem_set(es, base, first + i, x & mask);
        x = w < 64 ? x >> w : 0;
        left -= w;
    }
}

MF_HD static void gen_fn_uniform(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const vfmt va = vfmt_of(in->fa), vb = vfmt_of(in->fb), vc = vfmt_of(in->fc);
    uniform_run(r, &va, g->A, IA(0, 0), (size_t)g->m * (size_t)g->k);
    uniform_run(r, &vb, g->B, IB(0, 0), (size_t)g->n * (size_t)g->k);
    uniform_run(r, &vc, g->C, IC(0, 0), (size_t)g->m * (size_t)g->n);
    if (in->n_scales)
        fill_scales(g, slot, r, 1);
}

/* Fill from a plan: ea[k]/eb[k] exponents (INT_MIN: that position is zero),
 * a jitter window w added per element, c at exponent ec (INT_MIN: zero). */
MF_HD static void fill_plan(const gen_ctx *g, size_t slot, gen_rng *r, const int *ea, const int *eb, int ec, int w)
{
    const mf_instr *in = g->in;
    const vfmt va = vfmt_of(in->fa), vb = vfmt_of(in->fb), vc = vfmt_of(in->fc);
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t x = rng_next(r);
            mf_elem_set(va.es, g->A, IA(i, kk), ea[kk] == INT_MIN ? 0 : vf_at(&va, x, ea[kk], w));
        }
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t x = rng_next(r);
            mf_elem_set(vb.es, g->B, IB(j, kk), eb[kk] == INT_MIN ? 0 : vf_at(&vb, x, eb[kk], w));
        }
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            uint64_t x = rng_next(r);
            mf_elem_set(vc.es, g->C, IC(i, j), ec == INT_MIN ? 0 : vf_at(&vc, x, ec - w, 2 * w));
        }
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

MF_HD static void gen_fn_window(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
    int ea[MF_KMAX], eb[MF_KMAX];
    int w = rng_range(r, 0, 3);
    int ca = rng_range(r, A->emin - 2, A->emax - w), cb = rng_range(r, B->emin - 2, B->emax - w);
    if (rng_below(r, 2)) {  /* half the time stay near 1, where sums are ordinary */
        ca = clampi(rng_range(r, -4, 4), A->emin, A->emax - w);
        cb = clampi(rng_range(r, -4, 4), B->emin, B->emax - w);
    }
    for (int kk = 0; kk < g->k; kk++) {
        int zero = rng_below(r, 16) == 0;
        ea[kk] = zero ? INT_MIN : ca;
        eb[kk] = zero ? INT_MIN : cb;
    }
    int ec = rng_below(r, 8) == 0 ? INT_MIN : ca + cb + rng_range(r, -3, 3);
    fill_plan(g, slot, r, ea, eb, ec, w);
}

#define CANCEL_MAX 256   /* rows and columns whose first product c may cancel */

MF_HD static void gen_fn_cancel(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const vfmt va = vfmt_of(in->fa), vb = vfmt_of(in->fb), vc = vfmt_of(in->fc);
    const rv_layout *A = &va.L, *B = &vb.L, *Cl = &vc.L;
    int ea = clampi(rng_range(r, -6, 6), A->emin, A->emax - 1);
    int eb = clampi(rng_range(r, -6, 6), B->emin, B->emax - 1);
    /* 0: pairs cancel; 1: c also cancels product 0 */
    int mode = g->m <= CANCEL_MAX && g->n <= CANCEL_MAX ? (int)rng_below(r, 2) : 0;
    int first = mode ? 1 : 0;         /* positions before `first` are left alone */
    uint64_t asign = UINT64_C(1) << (A->bits - 1), lowa = UINT64_C(1) << A->low, lowb = UINT64_C(1) << B->low;
    mf_value a0[CANCEL_MAX], b0[CANCEL_MAX];   /* the first products' factors, for mode 1 */
    for (int i = 0; i < g->m; i++) {
        uint64_t prev = 0;
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t x = rng_next(r), v;
            if (kk >= first + 1 && (kk - first) % 2 == 1) {
                v = prev ^ asign;   /* the negated partner */
                if (x & 1)
                    v ^= lowa * (1 + (((x >> 1) & 0xFFFF) * 3 >> 16));
            } else {
                v = vf_at(&va, x, ea, 1);
            }
            mf_elem_set(va.es, g->A, IA(i, kk), v);
            if (mode && kk == 0)
                a0[i] = mf_decode(in->fa, v);
            prev = v;
        }
    }
    for (int j = 0; j < g->n; j++) {
        uint64_t prev = 0;
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t x = rng_next(r), v;
            if (kk >= first + 1 && (kk - first) % 2 == 1) {
                v = prev;
                if (x & 1)
                    v ^= lowb;
            } else {
                v = vf_at(&vb, x, eb, 1);
            }
            mf_elem_set(vb.es, g->B, IB(j, kk), v);
            if (mode && kk == 0)
                b0[j] = mf_decode(in->fb, v);
            prev = v;
        }
    }
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            uint64_t x = rng_next(r), c;
            if (mode) {
                c = product_into(in->fc, in, a0[i], b0[j], 1);
                if (x & 1)
                    c ^= UINT64_C(1) << (Cl->low + (int)(((x >> 1) & 0xFFFF) * 3 >> 16));
            } else {
                c = x & 1 ? 0 : vf_at(&vc, rng_next(r), ea + eb - 8 - (int)(((x >> 1) & 0xFFFF) * 23 >> 16), 0);
            }
            mf_elem_set(vc.es, g->C, IC(i, j), c);
        }
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

MF_HD static void gen_fn_special(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const vfmt v[3] = {vfmt_of(in->fa), vfmt_of(in->fb), vfmt_of(in->fc)};
    void *base[3] = {g->A, g->B, g->C};
    size_t first[3] = {IA(0, 0), IB(0, 0), IC(0, 0)};
    size_t count[3] = {(size_t)g->m * (size_t)g->k, (size_t)g->n * (size_t)g->k, (size_t)g->m * (size_t)g->n};
    for (int a = 0; a < 3; a++) {
        const uint64_t *list = rv_special_list[v[a].f];
        const uint64_t nlist = rv_special_count[v[a].f];
        for (size_t i = 0; i < count[a]; i++) {
            uint64_t x = rng_next(r);
            /* three in eight a special value, else a number near 1 (exponent -4..4) */
            uint64_t val = (x & 7) < 3 ? list[(((x >> 8) & 0xFFFF) * nlist) >> 16] : vf_at(&v[a], rng_next(r), -4, 8);
            mf_elem_set(v[a].es, base[a], first[a] + i, val);
        }
    }
    if (in->n_scales)
        fill_scales(g, slot, r, 1);
}

/* Boundaries (products and sums at the output format's thresholds, alignment
 * shifts of exactly F and F+-1 bits, the zero-exponent region). */
MF_HD static void gen_fn_boundary(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const rv_layout *D = rv_get(in->fd), *Cl = rv_get(in->fc);
    int ea[MF_KMAX], eb[MF_KMAX], ec = INT_MIN;
    for (int kk = 0; kk < g->k; kk++)
        ea[kk] = eb[kk] = INT_MIN;
    int mode = (int)rng_below(r, 4);
    int F = in->F > 0 ? in->F : D->fbits + 1;
    int np = rng_range(r, 1, 3 < g->k ? 3 : g->k);
    if (mode == 0 || mode == 1) {
        /* overflow threshold (mode 0) or underflow: normal and subnormal edge (mode 1) */
        int base = mode == 0 ? D->emax : (rng_below(r, 2) ? D->emin : D->emin - D->fbits);
        for (int p = 0; p < np; p++) {
            int kk = (int)rng_below(r, (uint32_t)g->k);
            split_exp(r, in, base + rng_range(r, -2, 1), &ea[kk], &eb[kk]);
        }
        if (rng_below(r, 2))
            ec = mode == 0 ? Cl->emax - rng_range(r, 0, 1) : base + rng_range(r, -2, 1);
    } else if (mode == 2) {
        /* alignment: one big term, the others exactly F-1, F, F+1 bits below it */
        int big = rng_range(r, -4, 4);
        int c_big = (int)rng_below(r, 2);
        int k0 = (int)rng_below(r, (uint32_t)g->k);
        if (c_big)
            ec = big;
        else
            split_exp(r, in, big, &ea[k0], &eb[k0]);
        for (int p = 0; p < np; p++) {
            int kk = (int)rng_below(r, (uint32_t)g->k);
            if (!c_big && kk == k0)
                continue;
            split_exp(r, in, big - F + rng_range(r, -1, 1), &ea[kk], &eb[kk]);
        }
        if (!c_big && rng_below(r, 2))
            ec = big - F + rng_range(r, -1, 1);
    } else {
        /* the zero-exponent region: tiny terms near e_zero, zeros among them */
        int ez = in->e_zero ? in->e_zero : D->emin;
        for (int kk = 0; kk < g->k; kk++)
            if (rng_below(r, 2))
                split_exp(r, in, ez + rng_range(r, -3, 3), &ea[kk], &eb[kk]);
        if (rng_below(r, 2))
            ec = ez + rng_range(r, -3, 3);
    }
    fill_plan(g, slot, r, ea, eb, ec, 0);
}

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

MF_HD static void gen_fn_table(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    const mf_instr *in = g->in;
    uint64_t t = tile;
    int xa = (int)(t % NEXPC), xb = (int)(t / NEXPC % NEXPC), xc = (int)(t / (NEXPC * NEXPC) % NEXPC);
    int pat = (int)(t / (NEXPC * NEXPC * NEXPC) % NPAT);
    const vfmt va = vfmt_of(in->fa), vb = vfmt_of(in->fb), vc = vfmt_of(in->fc);
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++)
            mf_elem_set(va.es, g->A, IA(i, kk), table_value(r, &va, rng_next(r), xa, pat, 1));
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++)
            mf_elem_set(vb.es, g->B, IB(j, kk), table_value(r, &vb, rng_next(r), xb, pat, 1));
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            mf_elem_set(vc.es, g->C, IC(i, j), table_value(r, &vc, rng_next(r), xc, pat, 0));
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
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

MF_HD static void gen_fn_zero(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    const vfmt va = vfmt_of(in->fa), vb = vfmt_of(in->fb), vc = vfmt_of(in->fc);
    int ea = clampi(rng_range(r, -3, 3), va.L.emin, va.L.emax - 1);
    int eb = clampi(rng_range(r, -3, 3), vb.L.emin, vb.L.emax - 1);
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk += 2) {
            uint64_t x = rng_next(r);
            int sign = (int)(x & 1), zero = (x >> 1 & 7) == 0 || kk + 1 == g->k;
            uint64_t frac = va.L.fbits ? x >> (64 - va.L.fbits) : 0;
            for (int h = 0; h < 2 && kk + h < g->k; h++) {   /* the partner: the same value, the other sign */
                uint64_t v = zero ? signed_zero(&va, sign ^ h)
                                  : rv_make_in(&va.L, va.f, sign ^ h, ea + (int)(x >> 4 & 1), frac);
                mf_elem_set(va.es, g->A, IA(i, kk + h), v);
            }
        }
    for (int j = 0; j < g->n; j++) {
        uint64_t v = 0;
        for (int kk = 0; kk < g->k; kk++) {
            if (kk % 2 == 0) {
                uint64_t x = rng_next(r);
                uint64_t frac = vb.L.fbits ? x >> (64 - vb.L.fbits) : 0;
                v = rv_make_in(&vb.L, vb.f, (int)(x & 1), eb + (int)(x >> 1 & 1), frac);
            }
            mf_elem_set(vb.es, g->B, IB(j, kk), v);   /* b' = b */
        }
    }
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            uint64_t x = rng_next(r), c;
            if (x & 6)
                c = signed_zero(&vc, (int)(x & 1));
            else
                c = vf_at(&vc, rng_next(r), ea + eb - 30 + (int)(x >> 8 & 15), 0);
            mf_elem_set(vc.es, g->C, IC(i, j), c);
        }
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

/* ------------------------------------------------------------ mutation of saved cases */

MF_HD void gen_put_case(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                  size_t slot, int s, const mf_case *cs)
{
    size_t S = in->n_scales;
    for (int kk = 0; kk < k; kk++) {
        abi_set(in->fa, A, (slot * (size_t)m + (size_t)s) * (size_t)k + (size_t)kk, cs->a[kk]);
        abi_set(in->fb, B, (slot * (size_t)n + (size_t)s) * (size_t)k + (size_t)kk, cs->b[kk]);
    }
    abi_set(in->fc, C, (slot * (size_t)m + (size_t)s) * (size_t)n + (size_t)s, cs->c);
    for (size_t q = 0; SA && SB && q < S; q++) {
        abi_set(in->fs, SA, (slot * (size_t)m + (size_t)s) * S + q, cs->sa[q]);
        abi_set(in->fs, SB, (slot * (size_t)n + (size_t)s) * S + q, cs->sb[q]);
    }
}

MF_HD static void gen_fn_mutate(const gen_ctx *g, size_t slot, gen_rng *r, uint64_t tile)
{
    (void)tile;
    const mf_instr *in = g->in;
    int diag = g->m < g->n ? g->m : g->n;
    mf_case cs;
    /* rows and columns beyond the diagonal, and off-diagonal c: other mutated cases */
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            abi_set(in->fc, g->C, IC(i, j), g->view[rng_below(r, (uint32_t)g->nview)]->cs.c);
    int rows = g->m > g->n ? g->m : g->n;
    for (int s = 0; s < rows; s++) {
        cs = g->view[rng_below(r, (uint32_t)g->nview)]->cs;
        const mf_case *other = &g->view[rng_below(r, (uint32_t)g->nview)]->cs;
        gen_mutate(in, r, &cs, other);
        if (s < diag) {
            gen_put_case(in, g->m, g->n, g->k, g->A, g->B, g->C, g->SA, g->SB, slot, s, &cs);
        } else if (s < g->m) {
            for (int kk = 0; kk < g->k; kk++)
                abi_set(in->fa, g->A, IA(s, kk), cs.a[kk]);
            for (int q = 0; g->SA && q < in->n_scales; q++)
                abi_set(in->fs, g->SA, (slot * (size_t)g->m + (size_t)s) * in->n_scales + (size_t)q, cs.sa[q]);
        } else {
            for (int kk = 0; kk < g->k; kk++)
                abi_set(in->fb, g->B, IB(s, kk), cs.b[kk]);
            for (int q = 0; g->SB && q < in->n_scales; q++)
                abi_set(in->fs, g->SB, (slot * (size_t)g->n + (size_t)s) * in->n_scales + (size_t)q, cs.sb[q]);
        }
    }
}

MF_HD gen_kind gen_pick(const gen_ctx *g, uint64_t tile, gen_rng *r)
{
    *r = rng_derive(g->seed, rng_hash_str(g->in->name), tile);
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

MF_HD void gen_run(const gen_ctx *g, gen_kind kind, gen_rng *r, uint64_t tile, size_t slot)
{
    if (mf_format_is_int(g->in->fa) && kind != GEN_MUTATE) {
        gen_int_tile(g, slot, r, kind); /* the integer rows' meaning of each generator (gen_int.c) */
        return;
    }
    switch (kind) {
#define MF_GENERATOR(E, name, weight, needs_pool, help)                                                           \
    case GEN_##E: gen_fn_##name(g, slot, r, tile); break;
#include "generators.def"
#undef MF_GENERATOR
    default: break;
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
