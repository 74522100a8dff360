/*
 * run_gen.c - tile generators of the fuzz driver (see run_gen.h).
 *
 * Structured generators work on a per-tile "plan": an exponent for each K
 * position of A and of B (the same for every row / column), and one for c.
 * Rows and columns then draw signs and significands around that plan, so the
 * property the plan aims at (a product at the output's overflow threshold,
 * terms F bits below e_max, ...) holds for every output element of the tile.
 */
#include "run_gen.h"

#include "mf_device.h"
#include "run_values.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

static const char *const gen_names[GEN_COUNT] = {"uniform", "window", "cancel", "special",
                                                 "boundary", "table", "mutate"};

const char *gen_name(gen_kind g) { return (unsigned)g < GEN_COUNT ? gen_names[g] : "?"; }

void gen_mix_default(gen_mix *m)
{
    static const uint32_t w[GEN_COUNT] = {2, 3, 2, 2, 3, 2, 2};
    memcpy(m->w, w, sizeof w);
}

int gen_mix_parse(const char *s, gen_mix *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const char *p = s;
    while (*p) {
        size_t len = strcspn(p, ",");
        size_t nlen = strcspn(p, ":,");
        int g;
        for (g = 0; g < GEN_COUNT; g++)
            if (strlen(gen_names[g]) == nlen && !strncasecmp(p, gen_names[g], nlen))
                break;
        if (g == GEN_COUNT) {
            snprintf(err, errlen, "--mix: unknown generator '%.*s' (expected uniform, window, cancel, special, "
                                  "boundary, table, mutate, each optionally :WEIGHT)", (int)nlen, p);
            return -1;
        }
        unsigned long w = 1;
        if (nlen < len) {
            char buf[16];
            size_t wl = len - nlen - 1;
            char *end;
            if (wl == 0 || wl >= sizeof buf) {
                snprintf(err, errlen, "--mix: expected a weight 0..1000 after '%s:'", gen_names[g]);
                return -1;
            }
            memcpy(buf, p + nlen + 1, wl);
            buf[wl] = 0;
            w = strtoul(buf, &end, 10);
            if (*end || w > 1000) {
                snprintf(err, errlen, "--mix: expected a weight 0..1000 after '%s:', found '%s'", gen_names[g], buf);
                return -1;
            }
        }
        m->w[g] = (uint32_t)w;
        p += len;
        if (*p == ',')
            p++;
    }
    uint32_t total = 0;
    for (int g = 0; g < GEN_COUNT; g++)
        total += m->w[g];
    if (!total) {
        snprintf(err, errlen, "--mix: expected at least one generator with a non-zero weight");
        return -1;
    }
    return 0;
}

void gen_mix_format(const gen_mix *m, char *buf, size_t len)
{
    size_t pos = 0;
    buf[0] = 0;
    for (int g = 0; g < GEN_COUNT; g++)
        if (m->w[g] && pos < len)
            pos += (size_t)snprintf(buf + pos, len - pos, "%s%s:%u", pos ? "," : "", gen_names[g], m->w[g]);
}

/* ------------------------------------------------------------ helpers */

#define NPAT 8
/* Significand patterns of TestFloat's tables: zero, lsb, msb, all ones,
 * msb+lsb, alternating, top half, random. */
static uint64_t frac_pattern(rng *r, int fbits, int pat)
{
    uint64_t all = fbits ? (UINT64_C(1) << fbits) - 1 : 0;
    if (!fbits)
        return 0;
    switch (pat) {
    case 0: return 0;
    case 1: return 1;
    case 2: return UINT64_C(1) << (fbits - 1);
    case 3: return all;
    case 4: return (UINT64_C(1) << (fbits - 1)) | 1;
    case 5: return UINT64_C(0x5555555555555555) & all;
    case 6: return all & ~((UINT64_C(1) << (fbits / 2)) - 1);
    default: return rng_next(r) & all;
    }
}

/* A significand pattern from the bits of one draw x: random bits (the top
 * fbits of x) five times in eight, else one of the table's patterns. */
static inline uint64_t frac_of_draw(uint64_t x, int fbits)
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
static uint64_t rnd_frac(rng *r, int fbits)
{
    return frac_of_draw(rng_next(r), fbits);
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* A random value of format f at exponent e + j, j uniform in [0, w] (w <= 15),
 * from a single draw: sign in bit 0, pattern choice in bits 1-6, j in bits
 * 8-23, the random significand in the top bits. */
static inline uint64_t rnd_at_jitter(rng *r, mf_format f, int e, int w)
{
    uint64_t x = rng_next(r);
    int j = (int)((((x >> 8) & 0xFFFF) * (uint64_t)(w + 1)) >> 16);
    return rv_make(f, (int)(x & 1), e + j, frac_of_draw(x, rv_get(f)->fbits));
}

/* A random value of format f near exponent e. */
static inline uint64_t rnd_at(rng *r, mf_format f, int e)
{
    return rnd_at_jitter(r, f, e, 0);
}

/* Special values of every format, listed once (rv_specials) and shared by
 * all threads. */
static uint64_t special_list[MF_FMT_COUNT][40];
static uint32_t special_count[MF_FMT_COUNT];
static pthread_once_t special_once = PTHREAD_ONCE_INIT;

static void build_special_lists(void)
{
    for (int f = 1; f < MF_FMT_COUNT; f++)
        special_count[f] = (uint32_t)rv_specials((mf_format)f, special_list[f], 40);
}

static uint64_t rnd_special(rng *r, mf_format f)
{
    pthread_once(&special_once, build_special_lists);
    return special_list[f][rng_below(r, special_count[f])];
}

/* A block scale: mostly near 2^0, sometimes any pattern. */
static uint64_t rnd_scale(rng *r, mf_format fs, int wild)
{
    uint32_t x = rng_below(r, 16);
    if (x == 0 || (wild && x < 4))
        return x & 1 ? rnd_special(r, fs) : rng_next(r) & rv_get(fs)->mask;
    if (fs == MF_FMT_UE8M0)
        return (uint64_t)(127 + rng_range(r, -4, 4));
    return rv_make(fs, 0, rng_range(r, -3, 3), rnd_frac(r, rv_get(fs)->fbits));
}

/* Split a product exponent et into (ea, eb) inside both input ranges when possible. */
static void split_exp(rng *r, const mf_instr *in, int et, int *ea, int *eb)
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

/* Exact product a*b (finite) truncated into format fc; 0 when not finite. */
static uint64_t product_into(mf_format fc, const mf_instr *in, uint64_t a, uint64_t b, int negate)
{
    mf_value va = mf_decode(in->fa, a), vb = mf_decode(in->fb, b);
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

static void fill_scales(const gen_ctx *g, size_t slot, rng *r, int wild)
{
    int S = g->in->n_scales;
    for (int i = 0; i < g->m; i++)
        for (int s = 0; s < S; s++)
            mf_abi_set(g->in->fs, g->SA, IS(i, s, g->m), rnd_scale(r, g->in->fs, wild));
    for (int j = 0; j < g->n; j++)
        for (int s = 0; s < S; s++)
            mf_abi_set(g->in->fs, g->SB, IS(j, s, g->n), rnd_scale(r, g->in->fs, wild));
}

/* ------------------------------------------------------------ generators */

static void gen_uniform(const gen_ctx *g, size_t slot, rng *r)
{
    const mf_instr *in = g->in;
    uint64_t ma = rv_get(in->fa)->mask, mb = rv_get(in->fb)->mask, mc = rv_get(in->fc)->mask;
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fa, g->A, IA(i, kk), rng_next(r) & ma);
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fb, g->B, IB(j, kk), rng_next(r) & mb);
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            mf_abi_set(in->fc, g->C, IC(i, j), rng_next(r) & mc);
    if (in->n_scales)
        fill_scales(g, slot, r, 1);
}

/* Fill from a plan: ea[k]/eb[k] exponents (INT_MIN: that position is zero),
 * a jitter window w added per element, c at exponent ec (INT_MIN: zero). */
static void fill_plan(const gen_ctx *g, size_t slot, rng *r, const int *ea, const int *eb, int ec, int w)
{
    const mf_instr *in = g->in;
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fa, g->A, IA(i, kk), ea[kk] == INT_MIN ? 0 : rnd_at_jitter(r, in->fa, ea[kk], w));
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fb, g->B, IB(j, kk), eb[kk] == INT_MIN ? 0 : rnd_at_jitter(r, in->fb, eb[kk], w));
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            mf_abi_set(in->fc, g->C, IC(i, j), ec == INT_MIN ? 0 : rnd_at_jitter(r, in->fc, ec - w, 2 * w));
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

static void gen_window(const gen_ctx *g, size_t slot, rng *r)
{
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

static void gen_cancel(const gen_ctx *g, size_t slot, rng *r)
{
    const mf_instr *in = g->in;
    const rv_layout *A = rv_get(in->fa), *B = rv_get(in->fb);
    int ea = clampi(rng_range(r, -6, 6), A->emin, A->emax - 1);
    int eb = clampi(rng_range(r, -6, 6), B->emin, B->emax - 1);
    int mode = (int)rng_below(r, 2);  /* 0: pairs cancel; 1: c also cancels product 0 */
    int first = mode ? 1 : 0;         /* positions before `first` are left alone */
    uint64_t asign = UINT64_C(1) << (A->bits - 1), lowa = UINT64_C(1) << A->low, lowb = UINT64_C(1) << B->low;
    for (int i = 0; i < g->m; i++) {
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t v;
            if (kk >= first + 1 && (kk - first) % 2 == 1) {
                v = mf_abi_get(in->fa, g->A, IA(i, kk - 1)) ^ asign;  /* the negated partner */
                if (rng_below(r, 2))
                    v ^= lowa * (1 + rng_below(r, 3));
            } else {
                v = rnd_at(r, in->fa, ea + rng_range(r, 0, 1));
            }
            mf_abi_set(in->fa, g->A, IA(i, kk), v);
        }
    }
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++) {
            uint64_t v;
            if (kk >= first + 1 && (kk - first) % 2 == 1) {
                v = mf_abi_get(in->fb, g->B, IB(j, kk - 1));
                if (rng_below(r, 2))
                    v ^= lowb;
            } else {
                v = rnd_at(r, in->fb, eb + rng_range(r, 0, 1));
            }
            mf_abi_set(in->fb, g->B, IB(j, kk), v);
        }
    const rv_layout *Cl = rv_get(in->fc);
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            uint64_t c;
            if (mode) {
                c = product_into(in->fc, in, mf_abi_get(in->fa, g->A, IA(i, 0)), mf_abi_get(in->fb, g->B, IB(j, 0)), 1);
                if (rng_below(r, 2))
                    c ^= UINT64_C(1) << (Cl->low + rng_below(r, 3));
            } else {
                c = rng_below(r, 2) ? 0 : rnd_at(r, in->fc, ea + eb - rng_range(r, 8, 30));
            }
            mf_abi_set(in->fc, g->C, IC(i, j), c);
        }
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

static void gen_special(const gen_ctx *g, size_t slot, rng *r)
{
    const mf_instr *in = g->in;
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fa, g->A, IA(i, kk), rng_below(r, 8) < 3 ? rnd_special(r, in->fa) : rnd_at(r, in->fa, rng_range(r, -4, 4)));
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++)
            mf_abi_set(in->fb, g->B, IB(j, kk), rng_below(r, 8) < 3 ? rnd_special(r, in->fb) : rnd_at(r, in->fb, rng_range(r, -4, 4)));
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            mf_abi_set(in->fc, g->C, IC(i, j), rng_below(r, 8) < 3 ? rnd_special(r, in->fc) : rnd_at(r, in->fc, rng_range(r, -4, 4)));
    if (in->n_scales)
        fill_scales(g, slot, r, 1);
}

/* Boundaries (products and sums at the output format's thresholds, alignment
 * shifts of exactly F and F+-1 bits, the zero-exponent region). */
static void gen_boundary(const gen_ctx *g, size_t slot, rng *r)
{
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
static int exp_class(rng *r, mf_format f, int cls)
{
    const rv_layout *L = rv_get(f);
    switch (cls) {
    case 0: return L->emin - 1 - (L->fbits ? rng_range(r, 0, L->fbits - 1) : 0);  /* subnormal */
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

static void gen_table(const gen_ctx *g, size_t slot, rng *r, uint64_t tile)
{
    const mf_instr *in = g->in;
    uint64_t t = tile;
    int xa = (int)(t % NEXPC), xb = (int)(t / NEXPC % NEXPC), xc = (int)(t / (NEXPC * NEXPC) % NEXPC);
    int pat = (int)(t / (NEXPC * NEXPC * NEXPC) % NPAT);
    for (int i = 0; i < g->m; i++)
        for (int kk = 0; kk < g->k; kk++) {
            int e = exp_class(r, in->fa, rng_below(r, 4) ? xa : (int)rng_below(r, NEXPC));
            uint64_t v = e == INT_MIN ? 0 : rv_make(in->fa, (int)(rng_next(r) & 1), e,
                                                    frac_pattern(r, rv_get(in->fa)->fbits, rng_below(r, 2) ? pat : 7));
            mf_abi_set(in->fa, g->A, IA(i, kk), v);
        }
    for (int j = 0; j < g->n; j++)
        for (int kk = 0; kk < g->k; kk++) {
            int e = exp_class(r, in->fb, rng_below(r, 4) ? xb : (int)rng_below(r, NEXPC));
            uint64_t v = e == INT_MIN ? 0 : rv_make(in->fb, (int)(rng_next(r) & 1), e,
                                                    frac_pattern(r, rv_get(in->fb)->fbits, rng_below(r, 2) ? pat : 7));
            mf_abi_set(in->fb, g->B, IB(j, kk), v);
        }
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++) {
            int e = exp_class(r, in->fc, xc);
            uint64_t v = e == INT_MIN ? 0 : rv_make(in->fc, (int)(rng_next(r) & 1), e,
                                                    frac_pattern(r, rv_get(in->fc)->fbits, pat));
            mf_abi_set(in->fc, g->C, IC(i, j), v);
        }
    if (in->n_scales)
        fill_scales(g, slot, r, 0);
}

/* ------------------------------------------------------------ mutation */

static uint64_t *pick_value(const mf_instr *in, rng *r, mf_case *cs, mf_format *f)
{
    uint32_t x = rng_below(r, (uint32_t)(2 * in->k + 1));
    if (x == 0) {
        *f = in->fc;
        return &cs->c;
    }
    x--;
    *f = x & 1 ? in->fb : in->fa;
    return x & 1 ? &cs->b[x / 2] : &cs->a[x / 2];
}

void gen_mutate(const mf_instr *in, rng *r, mf_case *cs, const mf_case *other)
{
    int nops = rng_range(r, 1, 4);
    for (int op = 0; op < nops; op++) {
        mf_format f;
        uint64_t *v = pick_value(in, r, cs, &f);
        const rv_layout *L = rv_get(f);
        switch (rng_below(r, 7)) {
        case 0:  /* bit flip */
            *v ^= UINT64_C(1) << rng_below(r, (uint32_t)L->bits);
            break;
        case 1: { /* exponent +-1 */
            mf_value x = mf_decode(f, *v);
            if (x.cls == MF_CLS_FINITE && x.sig >> L->fbits) {
                int s;
                uint32_t E;
                uint64_t fr;
                rv_unpack(f, *v, &s, &E, &fr);
                *v = rv_make(f, s, x.exp + (rng_below(r, 2) ? 1 : -1), fr);
            }
            break;
        }
        case 2:  /* last mantissa bit */
            *v ^= UINT64_C(1) << L->low;
            break;
        case 3:  /* sign */
            if (L->sign_shift >= 0)
                *v ^= UINT64_C(1) << L->sign_shift;
            break;
        case 4:  /* permutation of the K positions (a and b move together) */
            for (int kk = in->k - 1; kk > 0; kk--) {
                int o = (int)rng_below(r, (uint32_t)kk + 1);
                uint64_t ta = cs->a[kk], tb = cs->b[kk];
                cs->a[kk] = cs->a[o];
                cs->b[kk] = cs->b[o];
                cs->a[o] = ta;
                cs->b[o] = tb;
            }
            break;
        case 5:  /* special value */
            *v = rnd_special(r, f);
            break;
        default:  /* splice: the tail of another case */
            if (other) {
                int cut = (int)rng_below(r, (uint32_t)in->k);
                for (int kk = cut; kk < in->k; kk++) {
                    cs->a[kk] = other->a[kk];
                    cs->b[kk] = other->b[kk];
                }
                if (rng_below(r, 2))
                    cs->c = other->c;
            }
            break;
        }
        *v &= L->mask;
    }
}

void gen_put_case(const mf_instr *in, int m, int n, int k, void *A, void *B, void *C, void *SA, void *SB,
                  size_t slot, int s, const mf_case *cs)
{
    size_t S = in->n_scales;
    for (int kk = 0; kk < k; kk++) {
        mf_abi_set(in->fa, A, (slot * (size_t)m + (size_t)s) * (size_t)k + (size_t)kk, cs->a[kk]);
        mf_abi_set(in->fb, B, (slot * (size_t)n + (size_t)s) * (size_t)k + (size_t)kk, cs->b[kk]);
    }
    mf_abi_set(in->fc, C, (slot * (size_t)m + (size_t)s) * (size_t)n + (size_t)s, cs->c);
    for (size_t q = 0; q < S; q++) {
        mf_abi_set(in->fs, SA, (slot * (size_t)m + (size_t)s) * S + q, cs->sa[q]);
        mf_abi_set(in->fs, SB, (slot * (size_t)n + (size_t)s) * S + q, cs->sb[q]);
    }
}

static void gen_mutate_tile(const gen_ctx *g, size_t slot, rng *r)
{
    const mf_instr *in = g->in;
    int diag = g->m < g->n ? g->m : g->n;
    mf_case cs;
    /* rows and columns beyond the diagonal, and off-diagonal c: other mutated cases */
    for (int i = 0; i < g->m; i++)
        for (int j = 0; j < g->n; j++)
            mf_abi_set(in->fc, g->C, IC(i, j), g->view[rng_below(r, (uint32_t)g->nview)]->cs.c);
    int rows = g->m > g->n ? g->m : g->n;
    for (int s = 0; s < rows; s++) {
        cs = g->view[rng_below(r, (uint32_t)g->nview)]->cs;
        const mf_case *other = &g->view[rng_below(r, (uint32_t)g->nview)]->cs;
        gen_mutate(in, r, &cs, other);
        if (s < diag) {
            gen_put_case(in, g->m, g->n, g->k, g->A, g->B, g->C, g->SA, g->SB, slot, s, &cs);
        } else if (s < g->m) {
            for (int kk = 0; kk < g->k; kk++)
                mf_abi_set(in->fa, g->A, IA(s, kk), cs.a[kk]);
            for (int q = 0; q < in->n_scales; q++)
                mf_abi_set(in->fs, g->SA, (slot * (size_t)g->m + (size_t)s) * in->n_scales + (size_t)q, cs.sa[q]);
        } else {
            for (int kk = 0; kk < g->k; kk++)
                mf_abi_set(in->fb, g->B, IB(s, kk), cs.b[kk]);
            for (int q = 0; q < in->n_scales; q++)
                mf_abi_set(in->fs, g->SB, (slot * (size_t)g->n + (size_t)s) * in->n_scales + (size_t)q, cs.sb[q]);
        }
    }
}

gen_kind gen_tile(const gen_ctx *g, uint64_t tile, size_t slot)
{
    rng r = rng_derive(g->seed, rng_hash_str(g->in->name), tile);
    uint32_t total = 0;
    for (int k = 0; k < GEN_COUNT; k++)
        total += (k == GEN_MUTATE && !g->nview) ? 0 : g->mix.w[k];
    gen_kind kind = GEN_UNIFORM;
    if (total) {
        uint32_t x = rng_below(&r, total);
        for (int k = 0; k < GEN_COUNT; k++) {
            uint32_t w = (k == GEN_MUTATE && !g->nview) ? 0 : g->mix.w[k];
            if (x < w) {
                kind = (gen_kind)k;
                break;
            }
            x -= w;
        }
    }
    switch (kind) {
    case GEN_WINDOW: gen_window(g, slot, &r); break;
    case GEN_CANCEL: gen_cancel(g, slot, &r); break;
    case GEN_SPECIAL: gen_special(g, slot, &r); break;
    case GEN_BOUNDARY: gen_boundary(g, slot, &r); break;
    case GEN_TABLE: gen_table(g, slot, &r, tile); break;
    case GEN_MUTATE: gen_mutate_tile(g, slot, &r); break;
    default: gen_uniform(g, slot, &r); break;
    }
    return kind;
}
