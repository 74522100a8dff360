/*
 * probe.c - the probe table (probe.h) and the builders and rules it names.
 *
 * Expected values of the rules are exact powers of two or short sums, chosen
 * so that the outputs are exact in D's format: the only thing a probe
 * observes is whether a term survived alignment (F, e_zero), which chunk it
 * landed in (L), or which way a tie or a half-ulp went (rounding, sign).
 */
#include "probe.h"

#include "mmafuzz_gen.h"

#include <stdio.h>
#include <string.h>

/* The table: one row per experiment, in the order they run. */
const rf_probe_def rf_probes[] = {
    {"alignment bits F", "Fasi et al. 2021 (extra bits); Hickmann & Bradford 2019 (2^30 + -2^30 + 2^N)", RP_F,
     PB_CANCEL_SMALL, 1, 40, PR_LAST_KEPT},
    {"output precision P", "Fasi et al. 2021 (normalisation): 4*2 + 2^-j", RP_P, PB_PRECISION, 1, 30,
     PR_LAST_KEPT},
    {"final rounding", "Fasi et al. 2021 (rounding mode); DOMAIN section 7 (H100: toward zero)", RP_RHO, PB_ROUND,
     0, 1, PR_DIRECTION},
    {"chunk length L", "FTTN (block-FMA width): c = 2^E, -2^E at k = 0, 2^(E-F-3) at k = j", RP_L, PB_CHUNK, 1,
     MF_KMAX - 1, PR_FIRST_SEEN},
    {"zero-term exponent e_zero", "MMA-Sim v2 e_zero probe; H100 finding (2^-25 + 2^-j, c = +0)", RP_EZERO,
     PB_EZERO, 1, 200, PR_LAST_KEPT},
    {"sign of a sum rounding to zero", "zero-sign probe (DOMAIN section 3 step 8)", RP_ZERO_PLUS, PB_ZERO_SIGN, 0,
     0, PR_SIGN},
    {"NaN result", "Hickmann & Bradford 2019 (NaN, Inf and exceptions)", RP_NAN, PB_NAN, 0, 0, PR_NAN_KIND},
    {"subnormal inputs", "Fasi et al. 2021 (smallest subnormal a times b = 4)", RP_SUBNORMAL, PB_SUBNORMAL, 0, 0,
     PR_EQUAL},
    {"monotonicity", "Fasi et al. 2021 (3.1.4): c = 1-2^-24 vs c = 1 plus n products 2^-(F+1), scaled to 2^E",
     RP_NO_NORMALISE, PB_MONOTONIC, 2, 2 * MF_KMAX + 1, PR_MONOTONIC},
    {"accumulator integration", "Hickmann & Bradford 2019 (C introduced): 2^E - 2^E + c, c = 2^(E-j)", RP_C_BITS,
     PB_C_ALIGN, 1, 60, PR_LAST_KEPT},
    {"order of Big, -Big, Small", "Hickmann & Bradford 2019: 2^E, -2^E, 2^(E-D) in the 6 orders over k = 0..2",
     RP_ONE_SUM, PB_ORDER, 0, 5, PR_ORDERS},
    {"Table 8 vector", "MMA-Sim Table 8: a = -2^13,-1/2,-1/4,-1/8, b = 2^10,1,1,1, c = 2^23", RP_NONE, PB_TABLE8, 0,
     0, PR_VALUE},
};
const int rf_probe_count = (int)(sizeof rf_probes / sizeof rf_probes[0]);

static rf_case_sink g_sink;
static void *g_sink_ctx;

void rf_probe_set_sink(rf_case_sink sink, void *ctx)
{
    g_sink = sink;
    g_sink_ctx = ctx;
}

/* ------------------------------------------------------------- builders */

/* a = sa*2^ea in fa, b = (-1)^sign * sb*2^eb in fb, both exact. */
static int prod(const mf_instr *in, int sign, uint64_t sa, int ea, uint64_t sb, int eb, uint64_t *a, uint64_t *b)
{
    return rf_exact(in->fa, 0, sa, ea, a) || rf_exact(in->fb, sign, sb, eb, b) ? -1 : 0;
}

/* a * b = (-1)^sign * 2^e with both factors powers of two, split as evenly as possible. */
static int prod_pow2(const mf_instr *in, int sign, int e, uint64_t *a, uint64_t *b)
{
    int h = e >= 0 ? e / 2 : -((-e + 1) / 2);
    for (int d = 0; d <= 80; d++)
        for (int s = 0; s < 2; s++) {
            int ea = h + (s ? -d : d);
            if (prod(in, sign, 1, ea, 1, e - ea, a, b) == 0)
                return 0;
        }
    return -1;
}

/* The exponent E of the big products: 2^E = 2^(E/2) * 2^(E/2), at most 2^16,
 * with 2^E exact in C's format too. */
static int big_E(const mf_instr *in)
{
    uint64_t a, b, c;
    for (int h = 8; h >= 1; h--)
        if (prod(in, 0, 1, h, 1, h, &a, &b) == 0 && rf_exact(in->fc, 0, 1, 2 * h, &c) == 0)
            return 2 * h;
    return 0;
}

static int nan_input(mf_format f, uint64_t *x)
{
    const mf_format_info *fi = mf_format_get(f);
    uint64_t e = ((UINT64_C(1) << fi->exp_bits) - 1) << (fi->bits - 1 - fi->exp_bits);
    uint64_t cand[3] = {e | 1, e | ((UINT64_C(1) << (fi->bits - 1 - fi->exp_bits)) - 1),
                        UINT64_C(1) << (fi->bits - 1)};
    if (f == MF_FMT_TF32)
        cand[0] = e | (UINT64_C(1) << 13);
    for (int i = 0; i < 3; i++)
        if (mf_is_nan(f, cand[i])) {
            *x = cand[i];
            return 0;
        }
    return -1;
}

static int build_case(const rf_probe_def *p, const mf_instr *in, const rf_probe_run *st, int j, mf_case *cs,
                      uint64_t *expect, int E, int K);

/* Build case j of probe p.  @return 0 with *cs and *expect, 1 when the case
 * cannot be built (the sweep stops there). */
static int build(const rf_probe_def *p, const mf_instr *in, const rf_probe_run *st, int j, mf_case *cs,
                 uint64_t *expect)
{
    memset(cs, 0, sizeof *cs);
    *expect = 0;
    int E = big_E(in), K = in->k;
    int r = build_case(p, in, st, j, cs, expect, E, K);
    /* block scales of 1 */
    for (int i = 0; i < in->n_scales && i < MF_SMAX; i++)
        cs->sa[i] = cs->sb[i] = in->fs == MF_FMT_UE8M0 ? 127 : 0x38;
    return r;
}

static int build_case(const rf_probe_def *p, const mf_instr *in, const rf_probe_run *st, int j, mf_case *cs,
                      uint64_t *expect, int E, int K)
{
    switch (p->build) {
    case PB_CANCEL_SMALL:
        if (K >= 3 && E && !prod_pow2(in, 0, E, &cs->a[0], &cs->b[0]) && !prod_pow2(in, 1, E, &cs->a[1], &cs->b[1]) &&
            !prod_pow2(in, 0, E - j, &cs->a[2], &cs->b[2]) && !rf_exact(in->fd, 0, 1, E - j, expect))
            return 0;
        /* narrow inputs: the carry form.  c = 1.1...1 (m ones) * 2^j, plus 2^(j-m) made of
         * n = 2^(j-m) products 1*1 (each 2^-j below e_max = j): 2^(j+1) if they are kept, c if not */
        memset(cs, 0, sizeof *cs);
        for (int nl = 0; nl <= 3 && (1 << nl) <= K; nl++) {
            int m = j - nl;
            const int pd = mf_format_get(in->fd)->frac_bits;
            uint64_t cc;
            if (m < 0 || m > pd || m > 40 || rf_exact(in->fc, 0, (UINT64_C(2) << m) - 1, j - m, &cc) ||
                rf_exact(in->fd, 0, 1, j + 1, expect))
                continue;
            for (int k = 0; k < (1 << nl); k++)
                if (prod_pow2(in, 0, 0, &cs->a[k], &cs->b[k]))
                    return 1;
            cs->c = cc;
            return 0;
        }
        return 1;
    case PB_PRECISION:
        if (K < 4 || (st->F >= 0 && j > st->F + 2))
            return 1;
        for (int k = 0; k < 4; k++)
            if (prod_pow2(in, 0, 1, &cs->a[k], &cs->b[k]))
                return 1;
        if (rf_exact(in->fc, 0, 1, -j, &cs->c))
            return 1;
        if (rf_exact(in->fd, 0, (UINT64_C(8) << j) + 1, -j, expect))
            *expect = UINT64_MAX;  /* not exact in D: lost, which is what this probe measures */
        return 0;
    case PB_ROUND: {
        int P = st->P;
        if (P < 2 || prod(in, j, 3, -1, 3, -1, &cs->a[0], &cs->b[0]) || rf_exact(in->fc, j, 3, -P, &cs->c))
            return 1;
        /* expect: the value toward zero, 2.25 + ulp = (9*2^(P-3) + 1) * 2^(1-P) */
        return P < 3 || rf_exact(in->fd, j, (UINT64_C(9) << (P - 3)) + 1, 1 - P, expect) ? 1 : 0;
    }
    case PB_CHUNK:
        if (st->F < 0 || j >= K || !E || rf_exact(in->fc, 0, 1, E, &cs->c) ||
            prod_pow2(in, 1, E, &cs->a[0], &cs->b[0]) || prod_pow2(in, 0, E - st->F - 3, &cs->a[j], &cs->b[j]))
            return 1;
        return rf_exact(in->fd, 0, 1, E - st->F - 3, expect) ? 1 : 0;
    case PB_EZERO:
        if (st->F < 0 || K < 2)
            return 1;
        if (in->fd == MF_FMT_F16) {
            /* 2^-25 is a tie between 0 and 2^-24: 2^-j, if kept, rounds it up (RNE) */
            if (st->dir != 1 || j < 26 || prod_pow2(in, 0, -25, &cs->a[0], &cs->b[0]) ||
                prod_pow2(in, 0, -j, &cs->a[1], &cs->b[1]))
                return j < 26 && st->dir == 1 ? 2 : 1;
            return rf_exact(in->fd, 0, 1, -24, expect) ? 1 : 0;
        }
        if (prod_pow2(in, 0, -j, &cs->a[0], &cs->b[0]))
            return 1;
        return rf_exact(in->fd, 0, 1, -j, expect) ? 1 : 0;
    case PB_ZERO_SIGN:
        /* a negative product of at most half the smallest subnormal of D (a tie rounds to
         * even, zero; toward zero anything below it), in the last chunk */
        for (int e = in->fd == MF_FMT_F16 ? -25 : in->fd == MF_FMT_F32 ? -150 : -1075; e > -1200; e--)
            if (prod_pow2(in, 1, e, &cs->a[K - 1], &cs->b[K - 1]) == 0) {
                *expect = UINT64_C(1) << (mf_format_get(in->fd)->bits - 1);  /* -0 */
                return 0;
            }
        return 1;
    case PB_NAN:
        if (nan_input(in->fa, &cs->a[0]) || rf_exact(in->fb, 0, 1, 0, &cs->b[0]))
            return 1;
        return 0;
    case PB_SUBNORMAL: {
        const rv_layout *L = rv_get(in->fa);
        if (rf_exact(in->fa, 0, 1, L->emin - L->fbits, &cs->a[0]) || rf_exact(in->fb, 0, 1, 2, &cs->b[0]) ||
            L->fbits == 0)
            return 1;
        return rf_exact(in->fd, 0, 1, L->emin - L->fbits + 2, expect) ? 1 : 0;
    }
    case PB_MONOTONIC: {
        /* j = 2n: c just below 2^E (binary32's largest, 2^E - 2^(E-24)); j = 2n + 1: c = 2^E.
         * Each time n products 2^(E-F-1) in the first chunk: below 2^E they are kept
         * (e_max = E - 1), beside 2^E truncated away (e_max = E) */
        int n = j / 2, lim = st->L > 0 && st->L < K ? st->L : K;
        if (st->F < 0 || !E || n < 1 || n > lim ||
            rf_exact(in->fc, 0, j % 2 ? 1 : (UINT64_C(1) << 24) - 1, j % 2 ? E : E - 24, &cs->c))
            return 1;
        for (int k = 0; k < n; k++)
            if (prod_pow2(in, 0, E - st->F - 1, &cs->a[k], &cs->b[k]))
                return 1;
        return 0;
    }
    case PB_C_ALIGN:
        /* c is a term of the fused sum: aligned to e_max = E and kept while j <= F; added
         * after the products (whose sum is 0): kept for every j */
        if (!E || K < 2 || prod_pow2(in, 0, E, &cs->a[0], &cs->b[0]) || prod_pow2(in, 1, E, &cs->a[1], &cs->b[1]) ||
            rf_exact(in->fc, 0, 1, E - j, &cs->c) || rf_exact(in->fd, 0, 1, E - j, expect))
            return 1;
        return 0;
    case PB_ORDER: {
        /* permutation j of (Big, -Big, Small) over k = 0, 1, 2; Small 2^(E-D) with D as large
         * as the formats allow (at most 60), beyond F when F is known */
        static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        if (!E || K < 3)
            return 1;
        int D = 60;
        uint64_t sa, sb;
        while (D > 0 && prod_pow2(in, 0, E - D, &sa, &sb))
            D--;
        if (D <= (st->F >= 0 ? st->F : 0))
            return 1;
        if (prod_pow2(in, 0, E, &cs->a[perm[j][0]], &cs->b[perm[j][0]]) ||
            prod_pow2(in, 1, E, &cs->a[perm[j][1]], &cs->b[perm[j][1]]))
            return 1;
        cs->a[perm[j][2]] = sa;
        cs->b[perm[j][2]] = sb;
        return 0;
    }
    case PB_TABLE8:
        if (K < 4 || prod(in, 1, 1, 13, 1, 10, &cs->a[0], &cs->b[0]) || prod(in, 1, 1, -1, 1, 0, &cs->a[1], &cs->b[1]) ||
            prod(in, 1, 1, -2, 1, 0, &cs->a[2], &cs->b[2]) || prod(in, 1, 1, -3, 1, 0, &cs->a[3], &cs->b[3]) ||
            rf_exact(in->fc, 0, 1, 23, &cs->c))
            return 1;
        /* the minus signs sit on a: swap the sign from b to a */
        for (int k = 0; k < 4; k++) {
            const mf_format_info *fa = mf_format_get(in->fa), *fb = mf_format_get(in->fb);
            cs->a[k] ^= UINT64_C(1) << (fa->bits - 1);
            cs->b[k] ^= UINT64_C(1) << (fb->bits - 1);
        }
        return 0;
    }
    return 1;
}

static const char *dir_name(int d)
{
    static const char *const n[4] = {"toward zero", "nearest even", "up", "down"};
    return d >= 0 && d < 4 ? n[d] : "other";
}

static int rho_of(const mf_instr *in, int dir, int P)
{
    if (dir == 0 && P == 23 && in->fd == MF_FMT_F32)
        return MF_RZ_FP32;
    if (dir == 0 && P == 13 && in->fd == MF_FMT_F32)
        return MF_RZ_E8M13;
    if (dir == 1 && P == 10 && in->fd == MF_FMT_F16)
        return MF_RNE_FP16;
    if (dir == 1 && P == mf_format_get(in->fd)->frac_bits)
        return MF_RNE;
    if (P == mf_format_get(in->fd)->frac_bits && (in->fd == MF_FMT_F32 || in->fd == MF_FMT_F16))
        return dir == 0 ? MF_RZ : dir == 2 ? MF_RU : dir == 3 ? MF_RD : -1;
    return -1;
}

/* The held exponent sum of the products and c (the e_max of the sum, zero terms aside). */
static int e_terms(const mf_instr *in, const mf_case *cs)
{
    int e = -100000;
    for (int k = 0; k < in->k; k++) {
        mf_value a = mf_decode(in->fa, cs->a[k]), b = mf_decode(in->fb, cs->b[k]);
        if (a.cls == MF_CLS_FINITE && b.cls == MF_CLS_FINITE && a.exp + b.exp > e)
            e = a.exp + b.exp;
    }
    return e;
}

/* A sparse row (mma.sp) is probed through its dense view: the row's fields
 * with K the number of kept products and no metadata.  Each case is built
 * for the view and placed at the kept positions of the row's first legal
 * metadata (every group keeps its first legal pattern, as
 * mf_sparse_legalize gives it), in K order, which is how the row's
 * hypothesis reads a sparse case (model/sparse.c): the rules then infer the
 * view's parameters, L as a chunk length over kept products.  A dense row
 * is its own view. */
static mf_instr probe_view(const mf_instr *in)
{
    mf_instr v = *in;
    if (!in->sparse)
        return v;
    mf_case z;
    memset(&z, 0, sizeof z);
    mf_sparse_legalize(in, &z);
    int kept = 0;
    for (int g = 0; g < in->n_meta; g++) {
        int pos[MF_SP_KEPT_MAX];
        kept += mf_sparse_group_kept(in, g, z.meta[g], pos);
    }
    v.sparse = 0;
    v.sp_model = 0;
    v.n_meta = 0;
    v.k = (uint16_t)kept;
    v.L = (int16_t)(in->L < kept ? in->L : kept);
    return v;
}

/* The view's case *dense as a case of sparse row `in` (see probe_view). */
static void sparse_embed(const mf_instr *in, const mf_case *dense, mf_case *cs)
{
    memset(cs, 0, sizeof *cs);
    mf_sparse_legalize(in, cs);
    int n = 0;
    for (int g = 0; g < in->n_meta; g++) {
        int pos[MF_SP_KEPT_MAX];
        int c = mf_sparse_group_kept(in, g, cs->meta[g], pos);
        for (int i = 1; i < c; i++)   /* K order */
            for (int q = i; q > 0 && pos[q] < pos[q - 1]; q--) {
                int t = pos[q];
                pos[q] = pos[q - 1];
                pos[q - 1] = t;
            }
        for (int i = 0; i < c; i++, n++) {
            cs->a[pos[i]] = dense->a[n];
            cs->b[pos[i]] = dense->b[n];
        }
    }
    cs->c = dense->c;
}

int rf_probe_all(const mf_instr *row, rf_run_fn run, void *ctx, rf_probe_run *out)
{
    memset(out, 0, sizeof *out);
    out->F = out->P = out->dir = out->L = -1;
    const mf_instr view = probe_view(row), *in = &view;
    static mf_case cs[256], rcs[256];   /* the view's cases; the row's (embedded when sparse) */
    static uint64_t expect[256], d[256];
    int jv[256];
    for (int pi = 0; pi < rf_probe_count && pi < 16; pi++) {
        const rf_probe_def *p = &rf_probes[pi];
        rf_probe_result *r = &out->r[pi];
        int n = 0;
        for (int j = p->lo; j <= p->hi && n < 256; j++) {
            int b = build(p, in, out, j, &cs[n], &expect[n]);
            if (b == 2)
                continue;  /* not yet in range */
            if (b)
                break;
            jv[n++] = j;
        }
        if (!n) {
            r->status = RF_PROBE_NA;
            snprintf(r->text, sizeof r->text, "n/a");
            continue;
        }
        const mf_case *rc = cs;
        if (row->sparse) {
            for (int q = 0; q < n; q++)
                sparse_embed(row, &cs[q], &rcs[q]);
            rc = rcs;
        }
        if (run(ctx, rc, (size_t)n, d))
            return -1;
        out->cases += n;
        if (g_sink)
            for (int q = 0; q < n; q++)
                g_sink(g_sink_ctx, &rc[q], d[q]);
        r->status = RF_PROBE_OK;
        switch (p->rule) {
        case PR_LAST_KEPT: {
            int q = 0;
            while (q < n && d[q] == expect[q])
                q++;
            int last = q ? jv[q - 1] : p->lo - 1;
            if (p->param == RP_EZERO) {
                /* kept iff j <= F - e_max: e_max = F - last, e_zero when above every term */
                int em = out->F - last;
                if (q == n || em <= e_terms(in, &cs[q])) {
                    r->status = RF_PROBE_BOUND;
                    snprintf(r->text, sizeof r->text, "<= %d (not observable below)", em);
                } else {
                    snprintf(r->text, sizeof r->text, "%d", em);
                }
                r->value = em;
            } else if (q == n) {
                r->status = RF_PROBE_BOUND;
                r->value = last;
                snprintf(r->text, sizeof r->text, ">= %d (no loss seen)%s", last,
                         p->param == RP_C_BITS ? ": c added after the products" : "");
            } else if (p->param == RP_C_BITS) {
                r->value = last;
                if (last == out->F)
                    snprintf(r->text, sizeof r->text, "%d = F: c in the fused sum", last);
                else
                    snprintf(r->text, sizeof r->text, "%d bits", last);
            } else {
                r->value = last;
                snprintf(r->text, sizeof r->text, "%d", last);
            }
            if (p->param == RP_F)
                out->F = r->status == RF_PROBE_OK ? r->value : -1;
            if (p->param == RP_P) {
                /* 8 + 2^-j is exact while j <= P - 3, and kept while j <= F - 1 */
                if (out->F >= 0 && last >= out->F - 1)
                    r->status = RF_PROBE_BOUND;
                r->value = last + 3;
                out->P = r->value;
                snprintf(r->text, sizeof r->text, "%d bits%s", r->value, r->status == RF_PROBE_OK ? "" : " or more");
            }
            break;
        }
        case PR_FIRST_SEEN: {
            int q = 0;
            while (q < n && d[q] != expect[q])
                q++;
            r->value = q < n ? jv[q] : in->k;
            snprintf(r->text, sizeof r->text, "%d", r->value);
            if (p->param == RP_L)
                out->L = r->value;
            break;
        }
        case PR_DIRECTION: {
            if (n < 2) {
                r->status = RF_PROBE_NA;
                snprintf(r->text, sizeof r->text, "n/a");
                break;
            }
            /* d equal to expect: rounded toward zero; one ulp further: away */
            int up0 = d[0] != expect[0], up1 = d[1] != expect[1];
            uint64_t u0 = expect[0] + 1, u1 = expect[1] + 1;  /* one ulp away from zero */
            int ok = (!up0 || d[0] == u0) && (!up1 || d[1] == u1);
            int dir = !ok ? -1 : !up0 && !up1 ? 0 : up0 && up1 ? 1 : up0 ? 2 : 3;
            out->dir = dir;
            int rho = dir < 0 ? -1 : rho_of(in, dir, out->P);
            r->value = rho;
            if (rho < 0) {
                r->status = RF_PROBE_BOUND;
                snprintf(r->text, sizeof r->text, "%s at %d bits", dir_name(dir), out->P);
            } else {
                snprintf(r->text, sizeof r->text, "%s (%s)", mf_rho_name((mf_rho)rho), dir_name(dir));
            }
            break;
        }
        case PR_SIGN: {
            r->value = d[0] == expect[0] ? 0 : d[0] == 0 ? 1 : -1;
            snprintf(r->text, sizeof r->text, "%s", r->value == 0 ? "-0 (sign kept)" : r->value == 1 ? "+0" : "not zero");
            break;
        }
        case PR_NAN_KIND: {
            const mf_format_info *fd = mf_format_get(in->fd);
            uint64_t canon = fd->bits == 64 ? UINT64_C(0x7FFFFFFFFFFFFFFF) : (UINT64_C(1) << (fd->bits - 1)) - 1;
            if (in->fd == MF_FMT_F64)
                canon = UINT64_C(0x7FF8000000000000);
            r->value = d[0] == canon ? 0 : mf_is_nan(in->fd, d[0]) ? 1 : 2;
            char h[24];
            snprintf(h, sizeof h, "%0*llx", fd->hex_width, (unsigned long long)d[0]);
            snprintf(r->text, sizeof r->text, "%s %s", r->value == 0 ? "canonical" : r->value == 1 ? "NaN" : "not NaN",
                     h);
            break;
        }
        case PR_EQUAL:
            r->value = d[0] == expect[0];
            snprintf(r->text, sizeof r->text, "%s", r->value ? "kept" : "flushed or other");
            break;
        case PR_MONOTONIC: {
            /* pairs (c below 2^E, c = 2^E) with the same products: positive outputs, so
             * their bit patterns order as their values */
            r->status = RF_PROBE_BOUND;
            r->value = 0;
            int last_n = 0;
            for (int q = 0; q + 1 < n; q += 2) {
                if (jv[q + 1] != jv[q] + 1)
                    continue;
                last_n = jv[q] / 2;
                if (d[q] > d[q + 1] && !mf_is_nan(in->fd, d[q])) {
                    r->status = RF_PROBE_OK;
                    r->value = 1;
                    snprintf(r->text, sizeof r->text, "non-monotonic from n = %d", last_n);
                    break;
                }
            }
            if (!r->value)
                snprintf(r->text, sizeof r->text, "monotonic up to n = %d", last_n);
            break;
        }
        case PR_ORDERS: {
            int distinct = 0;
            for (int q = 0; q < n; q++) {
                int seen = 0;
                for (int s = 0; s < q; s++)
                    seen |= d[s] == d[q];
                distinct += !seen;
            }
            r->value = distinct;
            if (distinct == 1)
                snprintf(r->text, sizeof r->text, "one output in %d orders", n);
            else
                snprintf(r->text, sizeof r->text, "%d outputs in %d orders", distinct, n);
            break;
        }
        case PR_VALUE: {
            r->d = d[0];
            snprintf(r->text, sizeof r->text, "d=%0*llx", mf_format_get(in->fd)->hex_width, (unsigned long long)d[0]);
            break;
        }
        }
    }
    return 0;
}

int rf_probe_check_row(const mf_instr *table_row, const rf_probe_run *pr, char *buf, size_t len)
{
    const mf_instr view = probe_view(table_row), *row = &view;   /* what the probes inferred: the view's */
    size_t o = 0;
    int bad = 0;
    buf[0] = 0;
    if (row->family != MF_T_FDPA && row->family != MF_ST_FDPA)
        return 0;  /* the probes' inference rules are those of the truncated fused sum */
    for (int pi = 0; pi < rf_probe_count; pi++) {
        const rf_probe_def *p = &rf_probes[pi];
        const rf_probe_result *r = &pr->r[pi];
        int want, ok = 1;
        switch (p->param) {
        case RP_F:
            /* a bound ("no loss seen up to j") is all narrow formats can show */
            want = row->F;
            ok = r->status == RF_PROBE_OK ? r->value == want : r->status == RF_PROBE_BOUND && r->value <= want;
            break;
        case RP_RHO: want = (int)row->rho; ok = r->status == RF_PROBE_OK && r->value == want; break;
        case RP_L:
            want = row->L;
            ok = r->status == RF_PROBE_NA || r->value == want;
            break;
        case RP_EZERO:
            want = row->e_zero;
            ok = r->status == RF_PROBE_NA || (r->status == RF_PROBE_OK ? r->value == want : want <= r->value);
            break;
        case RP_ZERO_PLUS: want = row->zero_plus; ok = r->status == RF_PROBE_NA || r->value == want; break;
        case RP_NAN: want = row->nan_any; ok = r->status == RF_PROBE_NA || r->value == want; break;
        case RP_SUBNORMAL: want = 1; ok = r->status == RF_PROBE_NA || r->value == want; break;
        case RP_NO_NORMALISE: {
            /* the row's prediction (binary32 c and D, toward zero at P bits): in units of
             * 2^(E-1-F), c below 2^E lacks u = 2^(F-23) (1 when F < 23, c truncated), and the
             * sum shows above 2^E from 2^(F+1-P) units on: non-monotonic from n = u + that,
             * if n products fit in the first chunk */
            int P = row->rho == MF_RZ_FP32 ? 23 : row->rho == MF_RZ_E8M13 ? 13 : -1;
            int lim = row->L < row->k ? row->L : row->k;
            want = 0;
            if (P > 0 && row->fc == MF_FMT_F32 && row->fd == MF_FMT_F32 && row->F <= 40) {
                long u = row->F >= 23 ? 1L << (row->F - 23) : 1, x = row->F + 1 >= P ? 1L << (row->F + 1 - P) : 1;
                want = u + x <= lim;
            }
            ok = r->status == RF_PROBE_NA || r->value == want;
            break;
        }
        case RP_C_BITS:
            want = row->F;
            ok = r->status == RF_PROBE_NA ||
                 (r->status == RF_PROBE_OK ? r->value == want : r->status == RF_PROBE_BOUND && r->value <= want);
            break;
        case RP_ONE_SUM:
            /* the three terms in one chunk: one fused sum in every order */
            want = 1;
            ok = r->status == RF_PROBE_NA || row->L < 3 || r->value == want;
            break;
        default: continue;
        }
        if (!ok) {
            bad++;
            int n = snprintf(buf + o, len > o ? len - o : 0, "%s: %s: probe says %s, the row has %d\n", row->name,
                             p->feature, r->text, want);
            o += n > 0 ? (size_t)n : 0;
            if (o >= len)
                o = len;
        }
    }
    return bad;
}

int rf_run_row(void *ctx, const mf_case *cs, size_t n, uint64_t *out)
{
    const rf_row *r = ctx;
    for (size_t i = 0; i < n; i++)
        out[i] = rf_row_eval(r, &cs[i]);
    return 0;
}
