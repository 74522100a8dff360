/*
 * amd.c - the AMD families of shared/DOMAIN.md section 3, held exactly:
 * E-FDPA (CDNA1 f16/bf16), FTZ-Mul-Add (CDNA2 f16/bf16), TR-FDPA (CDNA3
 * xf32/f16/bf16) and GTR-FDPA (CDNA3 fp8/bf8).
 */
#include "slow_internal.h"

/* Exponent of zero products in TR/GTR-FDPA (DOMAIN 3, TR-FDPA step 1). */
#define TR_E_ZERO (-999)

/* Specials of a dot product as IEEE arithmetic would give them: NaN for a
 * NaN input, 0 x Inf, or Inf - Inf; else the infinity, if any.
 * @return SM_NAN, SM_INF (sign in *neg) or SM_FINITE. */
static int specials(const sm_val *a, const sm_val *b, int n, const sm_val *c, int *neg)
{
    int pos_inf = 0, neg_inf = 0;
    for (int k = 0; k < n; k++) {
        if (a[k].cls == SM_NAN || b[k].cls == SM_NAN)
            return SM_NAN;
        int inf = a[k].cls == SM_INF || b[k].cls == SM_INF;
        if (inf && (a[k].cls == SM_ZERO || b[k].cls == SM_ZERO))
            return SM_NAN;
        if (inf)
            *(a[k].neg ^ b[k].neg ? &neg_inf : &pos_inf) = 1;
    }
    if (c->cls == SM_NAN)
        return SM_NAN;
    if (c->cls == SM_INF)
        *(c->neg ? &neg_inf : &pos_inf) = 1;
    if (pos_inf && neg_inf)
        return SM_NAN;
    *neg = neg_inf;
    return pos_inf || neg_inf ? SM_INF : SM_FINITE;
}

static void decode_chunk(const mf_instr *in, const mf_case *cs, int k0, int n, sm_val *a, sm_val *b)
{
    for (int i = 0; i < n; i++) {
        a[i] = sm_decode(in->fa, cs->a[k0 + i]);
        b[i] = sm_decode(in->fb, cs->b[k0 + i]);
    }
}

/* E-FDPA: the exact sum of L products and c, rounded once to binary32 (RNE).
 * An exact zero is +0. */
static uint64_t e_fdpa_step(const mf_instr *in, const mf_case *cs, int k0, int n, uint64_t c)
{
    sm_val a[MF_KMAX], b[MF_KMAX];
    decode_chunk(in, cs, k0, n, a, b);
    sm_val vc = sm_decode(MF_FMT_F32, c);
    int neg, cls = specials(a, b, n, &vc, &neg);
    if (cls == SM_NAN)
        return sm_nan(MF_FMT_F32);
    if (cls == SM_INF)
        return sm_inf(MF_FMT_F32, neg);
    sm_num sum, p;
    sm_value(&sum, &vc);
    for (int i = 0; i < n; i++) {
        sm_product(&p, &a[i], &b[i]);
        sm_add(&sum, &p);
    }
    return sm_round_pack(MF_FMT_F32, &sum, 23, SM_RNE, 0);
}

/* FTZ-Mul-Add: a binary32 result that is subnormal becomes a zero
 * of its sign. */
static uint64_t flush_keep_sign(uint64_t x)
{
    return (x & 0x7F800000u) == 0 ? x & 0x80000000u : x;
}

/* FTZ-Mul-Add (DOMAIN 3): inputs flushed, products and sums in binary32. */
static uint64_t eval_ftz_mul_add(const mf_instr *in, const mf_case *cs)
{
    uint64_t p[MF_KMAX];
    int P = in->x;
    for (int k = 0; k < in->k; k++) {
        uint64_t x[2] = {cs->a[k], cs->b[k]};
        mf_format f[2] = {in->fa, in->fb};
        for (int j = 0; j < 2; j++) {
            sm_val v = sm_decode(f[j], x[j]);
            if (v.cls == SM_ZERO || (v.cls == SM_FINITE && v.sig < ((uint64_t)1 << v.p)))
                x[j] = 0;               /* subnormal (and zero) inputs become +0 */
        }
        /* the product in binary32: fma(a, b, -0) is exactly a*b rounded */
        p[k] = flush_keep_sign(sm_ieee_fma(MF_FMT_F32, x[0], f[0], x[1], 0x80000000u));
        (void)f;
    }
    uint64_t c = cs->c;
    if ((c & 0x7F800000u) == 0)
        c = 0;                          /* c subnormal (or zero): +0 */
    for (int k = 0; k < in->k; k += P) {
        uint64_t s = flush_keep_sign(sm_ieee_add(MF_FMT_F32, p[k], p[k + 1]));
        if (P == 4)
            s = flush_keep_sign(sm_ieee_add(
                MF_FMT_F32, s, flush_keep_sign(sm_ieee_add(MF_FMT_F32, p[k + 2], p[k + 3]))));
        c = flush_keep_sign(sm_ieee_add(MF_FMT_F32, c, s));
    }
    return c;
}

/* A truncated fused sum of the products idx[0..n) of a chunk (F fraction
 * bits relative to their largest exponent; zero products at TR_E_ZERO).
 * Finite products only.  Sets *e_max. */
static void trunc_products(const sm_val *a, const sm_val *b, const int *idx, int n, int F, sm_num *sum, int *e_max)
{
    sm_num p[MF_KMAX];
    int e[MF_KMAX];
    *e_max = TR_E_ZERO;
    for (int i = 0; i < n; i++) {
        int k = idx[i];
        sm_product(&p[i], &a[k], &b[k]);
        e[i] = sm_sign(&p[i]) ? a[k].exp + b[k].exp : TR_E_ZERO;
        if (i == 0 || e[i] > *e_max)
            *e_max = e[i];
    }
    sm_zero(sum);
    for (int i = 0; i < n; i++) {
        sm_round(&p[i], *e_max - F, SM_RZ);
        sm_add(sum, &p[i]);
    }
}

/* TR-FDPA and GTR-FDPA, one chunk (DOMAIN 3). */
static uint64_t tr_fdpa_step(const mf_instr *in, const mf_case *cs, int k0, int n, uint64_t c)
{
    sm_val a[MF_KMAX], b[MF_KMAX];
    decode_chunk(in, cs, k0, n, a, b);
    sm_val vc = sm_decode(MF_FMT_F32, c);
    sm_val no_c = {SM_ZERO, 0, 0, -126, 23};
    int neg, cls = specials(a, b, n, &no_c, &neg); /* the products alone */
    if (cls == SM_NAN)
        return sm_nan(MF_FMT_F32);
    int pos_inf = cls == SM_INF && !neg, neg_inf = cls == SM_INF && neg;
    /* step 1: a finite product of magnitude 2^128 or more is an infinity */
    for (int k = 0; k < n; k++) {
        sm_num p;
        sm_product(&p, &a[k], &b[k]);
        if (sm_sign(&p) && sm_ilog2(&p) >= 128)
            *(sm_sign(&p) < 0 ? &neg_inf : &pos_inf) = 1;
    }
    int c_special = vc.cls == SM_NAN || vc.cls == SM_INF;
    if (c_special && !pos_inf && !neg_inf && in->family == MF_GTR_FDPA) {
        /* A NaN or Inf c counts with exponent -1 (the peer model's frexp
           convention, which the shared vectors record), so GTR-FDPA drops it
           like any c below E - F - 1 once the products reach E > F. */
        int e0, e1, even[MF_KMAX], odd[MF_KMAX], ne = 0, no = 0;
        sm_num s0;
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0)
                even[ne++] = i;
            else
                odd[no++] = i;
        }
        trunc_products(a, b, even, ne, in->F, &s0, &e0);
        trunc_products(a, b, odd, no, in->F, &s0, &e1);
        if ((e0 > e1 ? e0 : e1) > in->F) {
            vc = no_c;
            c_special = 0;
        }
    }
    if (vc.cls == SM_NAN)
        return sm_nan(MF_FMT_F32);
    if (vc.cls == SM_INF)
        *(vc.neg ? &neg_inf : &pos_inf) = 1;
    if (pos_inf && neg_inf)
        return sm_nan(MF_FMT_F32);
    if (pos_inf || neg_inf)
        return sm_inf(MF_FMT_F32, neg_inf);
    int F = in->F, F2 = in->x;
    sm_num dot;
    int e_dot;
    int idx[MF_KMAX];
    if (in->family == MF_GTR_FDPA) {
        /* even- and odd-indexed products summed apart, then aligned to their
           common maximum exponent and rounded down at F bits */
        int ne = 0, no = 0, odd[MF_KMAX];
        for (int i = 0; i < n; i++) {
            if (i % 2 == 0)
                idx[ne++] = i;
            else
                odd[no++] = i;
        }
        sm_num s0, s1;
        int e0, e1;
        trunc_products(a, b, idx, ne, F, &s0, &e0);
        trunc_products(a, b, odd, no, F, &s1, &e1);
        e_dot = e0 > e1 ? e0 : e1;
        sm_round(&s0, e_dot - F, SM_RD);
        sm_round(&s1, e_dot - F, SM_RD);
        dot = s0;
        sm_add(&dot, &s1);
    } else {
        for (int i = 0; i < n; i++)
            idx[i] = i;
        trunc_products(a, b, idx, n, F, &dot, &e_dot);
    }
    /* step 3: align the product sum and c to E = max(e_dot, e_c), rounding
       both down; c's exponent is that of its leading bit (-126 when zero
       or subnormal) */
    int e_c = vc.exp;
    if (vc.cls == SM_ZERO)
        e_c = -126;
    int E = e_dot > e_c ? e_dot : e_c;
    sm_num vcx;
    sm_value(&vcx, &vc);
    sm_round(&dot, E - (F2 + 1), SM_RD);
    sm_round(&vcx, E - F, SM_RD);
    if (in->family == MF_GTR_FDPA && e_c < E - F - 1)
        sm_zero(&vcx);                  /* GTR: c far below E is dropped */
    sm_add(&dot, &vcx);
    /* step 4: normalize in the binary32 range, round down to F2 bits, then
       to nearest even at 23 bits */
    if (sm_sign(&dot) == 0)
        return 0;
    int e = sm_ilog2(&dot);
    if (e < -126)
        e = -126;
    sm_round(&dot, e - F2, SM_RD);
    return sm_round_pack(MF_FMT_F32, &dot, 23, SM_RNE, 0);
}

uint64_t sm_eval_amd(const mf_instr *in, const mf_case *cs)
{
    if (in->family == MF_FTZ_MUL_ADD)
        return eval_ftz_mul_add(in, cs);
    uint64_t c = cs->c;
    for (int k0 = 0; k0 < in->k; k0 += in->L) {
        int n = in->k - k0 < in->L ? in->k - k0 : in->L;
        c = in->family == MF_E_FDPA ? e_fdpa_step(in, cs, k0, n, c) : tr_fdpa_step(in, cs, k0, n, c);
    }
    return c;
}
